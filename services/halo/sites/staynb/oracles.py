"""Oracles (UI-only solutions) and plausible wrong attempts for the 11 REAL v2 StayNB tasks.

An agent types a destination and picks the suggestion, pages the two-month picker with "Next
month" and clicks the days (one click for a one-night search), sets guests with the steppers,
searches, then opens Filters for rooms and amenities. The wrong attempts are the near misses the
scripts must reject: a day off, the neighbouring destination, a guest too many, a missing
amenity, a booking started where the goal only asks to look.
"""

from __future__ import annotations

import datetime as dt

from halo.agent import actions as A
from halo.sites.oracle import OracleStep, Target, WrongAttempts

SEARCH = A.ClickElement(Target("button", contains="Search"))
CARD = "4242 4242 4242 4242"


def where(typed: str, label: str) -> list[OracleStep]:
    return [A.Fill(Target("textbox", "Where"), typed), A.ClickElement(Target("option", label))]


def dates(first: str, last: str | None = None, pages: int = 0) -> list[OracleStep]:
    """`pages` clicks on "Next month" from July 2024, then the check-in day and (unless a one-day
    search) the check-out day."""
    def day(iso: str) -> OracleStep:
        return A.ClickElement(Target("button", f"{dt.date.fromisoformat(iso):%A, %B %-d, %Y}"))

    steps: list[OracleStep] = [A.ClickElement(Target("button", "Next month"))] * pages + [day(first)]
    return steps + ([day(last)] if last else [])


def who(adults: int = 0, children: int = 0) -> list[OracleStep]:
    steps: list[OracleStep] = [A.ClickElement(Target("button", contains="Who:"))]
    steps += [A.ClickElement(Target("button", "Increase Adults"))] * adults
    return steps + [A.ClickElement(Target("button", "Increase Children"))] * children


def filters(*amenities: str, bedrooms: str = "", beds: str = "") -> list[OracleStep]:
    steps: list[OracleStep] = [A.ClickElement(Target("link", contains="Filters"))]
    if bedrooms:
        steps.append(A.ClickElement(Target("radio", f"Bedrooms: {bedrooms}")))
    if beds:
        steps.append(A.ClickElement(Target("radio", f"Beds: {beds}")))
    steps += [A.ClickElement(Target("checkbox", a)) for a in amenities]
    return steps + [A.ClickElement(Target("button", "Show places"))]


def trip(place: list[OracleStep], days: list[OracleStep], guests: list[OracleStep]) -> list[OracleStep]:
    return [*place, *days, *guests, SEARCH]


def open_stay(title: str) -> OracleStep:
    return A.ClickElement(Target("link", title))


RESERVE = A.ClickElement(Target("button", "Reserve"))
PAY = [A.Fill(Target("textbox", "Card number"), CARD), A.Fill(Target("textbox", "Expiration"), "12/27"),
       A.Fill(Target("textbox", "CVV"), "123"), A.Fill(Target("textbox", "ZIP code"), "94103"),
       A.ClickElement(Target("button", "Confirm and pay"))]

AUSTRIA = where("Austria", "Austria")
SAN_FRANCISCO = where("San Francisco", "San Francisco, California, United States")
PARIS = where("Paris", "Paris, France")
CAPE_TOWN = where("Cape Town", "Cape Town, South Africa")
NEARBY = where("near", "Nearby")
DELHI = where("Delhi", "Delhi, India")
MIAMI = where("Miami", "Miami, Florida, United States")
ROME = where("Rome", "Rome, Italy")
SAN_JOSE_CR = where("San Jose", "San Jose, Costa Rica")
PROVENCE = where("Provence", "Provence, France")
VANCOUVER = where("Vancouver", "Vancouver, Canada")

PARIS_TRIP = trip(PARIS, dates("2024-10-15", "2024-10-19", pages=2), who(3))
CAPE_TOWN_TRIP = [*trip(CAPE_TOWN, dates("2024-10-01", "2024-10-06", pages=2), who(4)), *filters("Wifi", bedrooms="2", beds="2")]
DELHI_TRIP = trip(DELHI, dates("2024-09-07", "2024-09-09", pages=1), who(2))
ROME_TRIP = trip(ROME, dates("2025-01-03", "2025-01-05", pages=5), who(4))
VANCOUVER_TRIP = trip(VANCOUVER, dates("2024-11-15", "2024-11-18", pages=3), who(5))
SHARE_TO_GROUP = [open_stay("Kitsilano house near the beach"), A.ClickElement(Target("link", "Share")),
                  A.ClickElement(Target("button", "Send to Weekend Crew (group chat)"))]
NEARBY_AMENITIES = ("Pool", "Wifi", "Free parking", "Air conditioning")


def wishlist(title: str, name: str) -> list[OracleStep]:
    return [A.ClickElement(Target("link", f"Add {title} to wishlist")), A.Fill(Target("textbox", "Wishlist name"), name),
            A.ClickElement(Target("button", "Create"))]


ORACLES: dict[str, list[OracleStep]] = {
    # Austria, August 1-5, two adults and a 3-year-old, 2 bedrooms
    "staynb-1": [*trip(AUSTRIA, dates("2024-08-01", "2024-08-05"), who(2, 1)), *filters(bedrooms="2")],
    # San Francisco with wifi, September 27-29, 2 people
    "staynb-4": [*trip(SAN_FRANCISCO, dates("2024-09-27", "2024-09-29", pages=1), who(2)), *filters("Wifi")],
    # Paris with wifi, parking and AC, October 15-19, 3 adults (show, do not book)
    "staynb-5": [*PARIS_TRIP, *filters("Wifi", "Free parking", "Air conditioning")],
    # Cape Town, 4 guests, October 1-6, 2+ bedrooms and beds, wifi; one of them in a new wishlist
    "staynb-6": [*CAPE_TOWN_TRIP, *wishlist("Sea Point family apartment", "Cape Town")],
    # around me tonight (one night: a single click on today), pool, wifi, free parking, AC
    "staynb-9": [*trip(NEARBY, dates("2024-07-18"), []), *filters(*NEARBY_AMENITIES)],
    # Delhi for 2 guests, September 7-9 (show, do not book)
    "staynb-12": DELHI_TRIP,
    # Miami for the night of July 18 (check-in = check-out)
    "staynb-13": trip(MIAMI, dates("2024-07-18"), []),
    # Rome, the first weekend of January, 2+ bedrooms, wifi, 4 guests
    "staynb-14": [*ROME_TRIP, *filters("Wifi", bedrooms="2")],
    # just show San Jose, Costa Rica
    "staynb-15": [*SAN_JOSE_CR, SEARCH],
    # Provence, 2 adults and 1 child, August 1-4, wifi
    "staynb-17": [*trip(PROVENCE, dates("2024-08-01", "2024-08-04"), who(2, 1)), *filters("Wifi")],
    # Vancouver, November 15-18, 5 people, shared to the group chat
    "staynb-19": [*VANCOUVER_TRIP, *SHARE_TO_GROUP],
}

WRONG_ATTEMPTS: dict[str, WrongAttempts] = {
    "staynb-1": {
        "August 1-6": trip(AUSTRIA, dates("2024-08-01", "2024-08-06"), who(2, 1)),
        "Vienna instead of all of Austria": trip(where("Vienna", "Vienna, Austria"), dates("2024-08-01", "2024-08-05"), who(2, 1)),
    },
    "staynb-4": {
        "free parking instead of wifi": [*trip(SAN_FRANCISCO, dates("2024-09-27", "2024-09-29", pages=1), who(2)), *filters("Free parking")],
        "no wifi filter": trip(SAN_FRANCISCO, dates("2024-09-27", "2024-09-29", pages=1), who(2)),
        "September 26-29": [*trip(SAN_FRANCISCO, dates("2024-09-26", "2024-09-29", pages=1), who(2)), *filters("Wifi")],
    },
    "staynb-5": {
        "no air conditioning filter": [*PARIS_TRIP, *filters("Wifi", "Free parking")],
        "books a stay instead of showing places": [*PARIS_TRIP, *filters("Wifi", "Free parking", "Air conditioning"),
                                                   open_stay("Marais two-bedroom"), RESERVE, *PAY],
    },
    "staynb-6": {
        "wishlists the 1-bed studio": [*trip(CAPE_TOWN, dates("2024-10-01", "2024-10-06", pages=2), who(4)), *filters("Wifi"),
                                       *wishlist("Bo-Kaap studio loft", "Cape Town")],
        "searches but saves nothing": CAPE_TOWN_TRIP,
    },
    "staynb-9": {
        "July 18-19 instead of tonight only": [*trip(NEARBY, dates("2024-07-18", "2024-07-19"), []), *filters(*NEARBY_AMENITIES)],
        "no free parking": [*trip(NEARBY, dates("2024-07-18"), []), *filters("Pool", "Wifi", "Air conditioning")],
        "a 1+ bedroom filter too": [*trip(NEARBY, dates("2024-07-18"), []), *filters(*NEARBY_AMENITIES, bedrooms="1")],
    },
    "staynb-12": {
        "starts a booking": [*DELHI_TRIP, open_stay("Hauz Khas apartment"), RESERVE],
        "1 adult and 1 child": trip(DELHI, dates("2024-09-07", "2024-09-09", pages=1), who(1, 1)),
    },
    "staynb-13": {
        "July 18-19 (the natural reading)": trip(MIAMI, dates("2024-07-18", "2024-07-19"), []),
    },
    "staynb-14": {
        "January 4-6": [*trip(ROME, dates("2025-01-04", "2025-01-06", pages=5), who(4)), *filters("Wifi", bedrooms="2")],
        "1+ bedrooms": [*ROME_TRIP, *filters("Wifi", bedrooms="1")],
    },
    "staynb-15": {
        "San Jose, California": [*where("San Jose", "San Jose, California, United States"), SEARCH],
        "starts a booking": [*trip(SAN_JOSE_CR, dates("2024-08-01", "2024-08-03"), who(2)), open_stay("Escazú hillside house"), RESERVE],
    },
    "staynb-17": {
        "3 adults instead of 2 and a child": [*trip(PROVENCE, dates("2024-08-01", "2024-08-04"), who(3)), *filters("Wifi")],
        "no wifi filter": trip(PROVENCE, dates("2024-08-01", "2024-08-04"), who(2, 1)),
    },
    "staynb-19": {
        "4 guests instead of 5": [*trip(VANCOUVER, dates("2024-11-15", "2024-11-18", pages=3), who(4)), *SHARE_TO_GROUP],
    },
}
