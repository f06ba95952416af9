"""Oracles (UI-only solutions) and plausible wrong attempts for the 14 REAL v2 UDriver tasks.

Targets name elements the way the AXTree shows them: the "Pickup location" and "Dropoff location"
fields (typing and Enter lists suggestions, buttons named by the place and its address), the ride
options ("Choose UdriverXL, $24.00"), the "Payment method" combobox, "Request <car>", the "Pickup
now" / "Schedule for later" controls with "Pickup date" / "Pickup time", and the Wallet page's
"Amount" / "Add funds" and "Set <method> as default". Each wrong attempt is a mistake an agent could
make (the route reversed, the wrong car, card instead of credits, a scheduled ride, the wrong time)
and must score 0 with agisdk's eval script.
"""

from __future__ import annotations

from halo.agent import actions as A
from halo.sites.oracle import OracleStep, Target, WrongAttempts

WALLET = A.ClickElement(Target("link", "Wallet"))
SCHEDULE = A.ClickElement(Target("button", "Schedule for later"))
SET_TIME = A.ClickElement(Target("button", "Set pickup time"))


def place(field: str, typed: str, choice: str) -> list[OracleStep]:
    """Type into "Pickup location" / "Dropoff location", Enter, pick the suggestion whose name holds `choice`."""
    return [A.Fill(Target("textbox", f"{field} location"), typed), A.KeyPress("Enter"),
            A.ClickElement(Target("button", contains=choice))]


def route(pickup: tuple[str, str], dropoff: tuple[str, str]) -> list[OracleStep]:
    return [*place("Pickup", *pickup), *place("Dropoff", *dropoff)]


def car(car_type: str) -> OracleStep:
    return A.ClickElement(Target("button", contains=f"Choose {car_type},"))


def pay(method: str) -> OracleStep:
    """The ride's payment: "wallet", "1" (the Visa card) or "cash"."""
    return A.SelectOption(Target("combobox", "Payment method"), (method,))


def request(car_type: str = "UdriverX") -> OracleStep:
    return A.ClickElement(Target("button", f"Request {car_type}"))


def book_scheduled(car_type: str = "UdriverX") -> OracleStep:
    """Book the ride set for later by `schedule` (the button that replaces "Request <car>")."""
    return A.ClickElement(Target("button", f"Schedule {car_type}"))


def schedule(day: str, time: str) -> list[OracleStep]:
    return [SCHEDULE, A.SelectOption(Target("combobox", "Pickup date"), (day,)),
            A.SelectOption(Target("combobox", "Pickup time"), (time,)), SET_TIME]


def top_up(amount: str) -> list[OracleStep]:
    return [WALLET, A.Fill(Target("spinbutton", "Amount"), amount), A.ClickElement(Target("button", "Add funds"))]


CASTRO = ("1001 Castro", "1001 Castro Street")
POST_APTS = ("1030 Post", "1030 Post Street Apartments")
CHESTNUT = ("1000 Chestnut", "1000 Chestnut St")
ROOFTOP = ("Rooftop 25", "Rooftop 25")
AAHA = ("Aaha", "Aaha Indian Cuisine")
CASA_LOMA = ("Casa Loma", "Casa Loma Hotel")
IRVING = ("22nd & Irving", "22nd & Irving")
SEVEN_ELEVEN = ("7-Eleven", "7-Eleven")
CHASE = ("Chase", "Chase Bank")
HOTEL = ("1 Hotel", "1 Hotel San Francisco")
CLUB_X = ("Club X", "Club X")
FOX = ("Fox Plaza", "Fox Plaza Apartments")
GOLDEN_GATE = ("Golden Gate Apartments", "Golden Gate Apartments")
BEALE = ("388 Beale", "388 Beale Street")
AMBER = ("Amber India", "Amber India Restaurant")
VAN_NESS = ("100 Van Ness", "100 Van Ness")
FREMONT = ("333 Fremont", "333 Fremont Apartments")
TURK = ("201 Turk", "201 Turk Street Apartments")
AI_CENTER = ("AI Electronics", "AI Electronics Center")
CLUB_26 = ("Club 26", "Club 26 Mix")

ORACLES: dict[str, list[OracleStep]] = {
    # $100 of credits with the card on file
    "udriver-2": top_up("100"),
    # 1001 Castro Street -> 1030 Post Street Apartments, now (credits, the default)
    "udriver-3": [*route(CASTRO, POST_APTS), request()],
    # 1000 Chestnut -> Rooftop 25: the rides are shown, one is booked
    "udriver-4": [*route(CHESTNUT, ROOFTOP), request()],
    # Aaha -> Casa Loma Hotel on credits (UdriverX $16.20 of $25.50)
    "udriver-6": [*route(AAHA, CASA_LOMA), request()],
    # 22nd & Irving -> the 7-Eleven on Irving Street
    "udriver-7": [*route(IRVING, SEVEN_ELEVEN), request()],
    # an XL from 1 Hotel SF to 1030 Post, now, paid in cash
    "udriver-9": [*route(HOTEL, POST_APTS), car("UdriverXL"), pay("cash"), request("UdriverXL")],
    # Club X -> Fox Plaza on credits: the UdriverX ($18.00) fits the $25.50, the XL ($30.00) does not
    "udriver-11": [*route(CLUB_X, FOX), request()],
    # an UdriverX from Golden Gate Apartments to a Chase bank, now
    "udriver-13": [*route(GOLDEN_GATE, CHASE), request()],
    # the Visa on file becomes the default payment
    "udriver-14": [WALLET, A.ClickElement(Target("button", "Set Visa •••• 4242 as default"))],
    # XL from 388 Beale to Amber India ($24.00 on credits)
    "udriver-15": [*route(BEALE, AMBER), car("UdriverXL"), request("UdriverXL")],
    # 1 Hotel SF -> 100 Van Ness on credits
    "udriver-16": [*route(HOTEL, VAN_NESS), request()],
    # the price 333 Fremont -> 201 Turk, picked up today at 3:30 PM (shown, not booked)
    "udriver-17": [*route(FREMONT, TURK), *schedule("7/18/2024", "3:30 PM")],
    # the rides AI Electronics Center -> 333 Fremont and the credits next to them
    "udriver-19": [*route(AI_CENTER, FREMONT)],
    # the cheapest ride, Club 26 Mix -> 100 Van Ness: UdriverShare
    "udriver-20": [*route(CLUB_26, VAN_NESS), car("UdriverShare"), request("UdriverShare")],
}

WRONG_ATTEMPTS: dict[str, WrongAttempts] = {
    "udriver-2": {"$50 instead of $100": top_up("50"), "$100 twice": [*top_up("100"), *top_up("100")[1:]]},
    "udriver-3": {"reversed": [*route(POST_APTS, CASTRO), request()], "not booked": route(CASTRO, POST_APTS)},
    "udriver-4": {"not booked": route(CHESTNUT, ROOFTOP), "reversed": [*route(ROOFTOP, CHESTNUT), request()]},
    "udriver-6": {"paid by card": [*route(AAHA, CASA_LOMA), pay("1"), request()],
                  "reversed": [*route(CASA_LOMA, AAHA), request()]},
    "udriver-7": {"reversed": [*route(SEVEN_ELEVEN, IRVING), request()],
                  "to a Chase bank": [*route(IRVING, CHASE), request()]},
    "udriver-9": {"UdriverX": [*route(HOTEL, POST_APTS), pay("cash"), request()],
                  "card instead of cash": [*route(HOTEL, POST_APTS), car("UdriverXL"), pay("1"), request("UdriverXL")],
                  "scheduled for later": [*route(HOTEL, POST_APTS), car("UdriverXL"), pay("cash"), *schedule("7/18/2024", "11:00 AM"),
                                          book_scheduled("UdriverXL")]},
    "udriver-11": {"paid by card": [*route(CLUB_X, FOX), pay("1"), request()],
                   "XL by card": [*route(CLUB_X, FOX), car("UdriverXL"), pay("1"), request("UdriverXL")]},
    "udriver-13": {"UdriverXL": [*route(GOLDEN_GATE, CHASE), car("UdriverXL"), request("UdriverXL")],
                   "reversed": [*route(CHASE, GOLDEN_GATE), request()]},
    "udriver-14": {"cash as default": [WALLET, A.ClickElement(Target("button", "Set Cash as default"))]},
    "udriver-15": {"UdriverX": [*route(BEALE, AMBER), request()],
                   "reversed": [*route(AMBER, BEALE), car("UdriverXL"), request("UdriverXL")]},
    "udriver-16": {"paid by card": [*route(HOTEL, VAN_NESS), pay("1"), request()], "not booked": route(HOTEL, VAN_NESS)},
    "udriver-17": {"3:00 PM": [*route(FREMONT, TURK), *schedule("7/18/2024", "3:00 PM")],
                   "July 19": [*route(FREMONT, TURK), *schedule("7/19/2024", "3:30 PM")]},
    "udriver-19": {"reversed": route(FREMONT, AI_CENTER)},
    "udriver-20": {"UdriverX instead of UdriverShare": [*route(CLUB_26, VAN_NESS), request()]},
}
