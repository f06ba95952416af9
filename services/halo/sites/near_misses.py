"""Near misses for the grader audit (`halo tasks audit`, docs/reference/graders.md).

A near miss is what a careful reviewer writes from the goal alone: the wrong item, the wrong
count, the wrong date or time, a text that contradicts the goal, half of a multi-part request.
Each is a list of UI actions in the oracles' vocabulary (halo.sites.oracle), run through the env
service like any attempt, and its label starts with its kind. A replica's `wrong_attempts` are
near misses too, written with the replica and each verified to score 0 by agisdk's script; these
are the audit's own, and agisdk's script may accept them: the audit says which it accepts, and
HALO's strict checks (configs/strict_checks.yaml) must reject every one it accepts.

The audit runs both sets: every labelled near miss of a task must score 0 under strict success.
"""

from __future__ import annotations

from halo.agent import actions as A
from halo.sites.dashdish.oracles import EXPRESS, PICKUP, WINGSTOP, checkout, store
from halo.sites.dashdish.oracles import add as dish
from halo.sites.gocalendar.oracles import WEEKDAYS, delete_chip, new_event, new_task
from halo.sites.gomail.oracles import ORACLES as GOMAIL
from halo.sites.gomail.oracles import ARCHIVE, DELETE, OLD_SUBJECTS, SELECT_PAGE, TODAY_SUBJECTS, compose, open_row, reply_to, \
    select_row, snooze_results_until, trash_search_results
from halo.sites.networkin import oracles as networkin
from halo.sites.networkin.oracles import post
from halo.sites.omnizon.attempts import ADD_TO_CART, BUY_NOW, PLACE_ORDER, PROCEED, open_product
from halo.sites.omnizon.attempts import search as shop_search
from halo.sites.oracle import OracleStep, Target
from halo.sites.opendining.oracles import AMERICAN, ITALIAN, book, find
from halo.sites.oracle import WrongAttempts
from halo.sites.staynb.oracles import AUSTRIA, CAPE_TOWN, DELHI, MIAMI, NEARBY_AMENITIES, PARIS, PROVENCE, ROME, SAN_FRANCISCO, \
    VANCOUVER_TRIP, dates, filters, trip, who, wishlist
from halo.sites.staynb.oracles import SEARCH as STAY_SEARCH
from halo.sites.udriver import oracles as ud
from halo.sites.udriver.oracles import AAHA, AI_CENTER, AMBER, BEALE, CASA_LOMA, CASTRO, CHASE, CHESTNUT, CLUB_26, CLUB_X, FOX, FREMONT, \
    GOLDEN_GATE, HOTEL, IRVING, POST_APTS, ROOFTOP, SEVEN_ELEVEN, TURK, VAN_NESS, car, pay, request, route
from halo.sites.opendining.oracles import ORACLES as OPENDINING
from halo.sites.topwork import oracles as topwork
from halo.sites.topwork.oracles import remove
from halo.sites.zilloft.oracles import BAY_AREA_3BD, BOSTON_UNDER_1M, LA_UNDER_350K, LONG_BEACH_3_2, SACRAMENTO_4BD, SEND_MESSAGE, contact, \
    beds_baths, find_agent, houses_only, open_home, price, tour
from halo.sites.zilloft.oracles import search as homes_search

TOMORROW = "2024-07-19"   # the replicas' today is 2024-07-18

def twice(steps: list[OracleStep], *back: OracleStep) -> list[OracleStep]:
    """The same request done twice (two emails, two events), `back` leading from the first one's
    confirmation to where the steps start: the goal asks for one."""
    return [*steps, *back, *steps]


def scheduled(day: str, time: str, car_type: str = "UdriverX") -> list[OracleStep]:
    """A UDriver ride scheduled for `day` at `time` and booked (the goal asks for one now)."""
    return [*ud.schedule(day, time), ud.book_scheduled(car_type)]


def quantity(n: int) -> OracleStep:
    """Omnizon's product page quantity, before Buy Now or Add to Cart."""
    return A.SelectOption(Target("combobox", "Quantity"), (str(n),))


def buy_now(query: str, title_part: str, n: int = 1) -> list[OracleStep]:
    return [*shop_search(query), open_product(title_part), *([quantity(n)] if n != 1 else []), BUY_NOW, PLACE_ORDER]


def to_cart(query: str, title_part: str, n: int = 1) -> list[OracleStep]:
    return [*shop_search(query), open_product(title_part), *([quantity(n)] if n != 1 else []), ADD_TO_CART]


#: GoMail's compose tasks: (to, subject, how the email contradicts the request, its body)
EMAIL_DENIALS: dict[str, tuple[str, str, str, str]] = {
    "gomail-4": ("Alexa Richardson", "Files", "no need to hear about the files",
        "Hi Alexa,\n\nNo need to let me know when the files come in.\n\nSam"),
    "gomail-7": ("Ashley Campbell", "Team dinner", "says she is not coming",
        "Hi Ashley,\n\nI know you are not coming to the team dinner on Friday.\n\nSam"),
    "gomail-8": ("Kevin Moore", "Atlas project", "the project details are not needed",
        "Hi Kevin,\n\nI don't need the project details for Atlas anymore.\n\nSam"),
    "gomail-9": ("Barbara Thomas", "Project plan", "not going over the project plan",
        "Hi Barbara,\n\nLet's not go over the project plan this week.\n\nSam"),
    "gomail-12": ("Charles", "New clients?", "tells him he has found no new clients",
        "Hi Charles,\n\nI know you have not found any new clients lately.\n\nSam"),
    "gomail-13": ("Carol Adams", "Meeting time change", "the meeting is not moved",
        "Hi Carol,\n\nNo time change for the meeting: it is not moved to 8:30 AM.\n\nSam"),
    "gomail-15": ("Danielle Harris", "System update launched", "the update has not been launched",
        "Hi Danielle,\n\nThe new system update has not been launched yet.\n\nSam"),
    "gomail-18": ("brian.king@example.com", "Meeting notes", "no need for the meeting notes",
        "Hi Brian,\n\nNo need to send me the meeting notes.\n\nSam"),
    "gomail-19": ("Angela White", "FTA dates", "does not ask, says there is no need to tell",
        "Hi Angela,\n\nI know when you go on FTA, no need to tell me.\n\nSam"),
}


#: Kinds of near miss (the audit table groups by them); each label below starts with its kind.
KINDS = ("wrong item", "wrong count", "wrong date", "contradicting text", "half of the request")

NEAR_MISSES: dict[str, WrongAttempts] = {
    "networkin-13": {
        "contradicting text: a post saying there was no summer internship":
            post("No summer internship for me this year: I did not get one."),
    },
    "networkin-19": {
        "contradicting text: the AGI Inc internship is not finished":
            post("My internship at AGI Inc is not finished yet, two more months to go."),
        "contradicting text: starting, not finishing, the AGI Inc internship":
            post("Starting my internship at AGI Inc today!"),
    },
    # OpenDining: one table asked for, booked twice
    **{task: {"wrong count: the table booked twice": twice(OPENDINING[task], A.ClickElement(Target("link", "OpenDining home")))}
       for task in ("opendining-1", "opendining-6", "opendining-12")},
    "networkin-26": {
        "contradicting text: tells him no advice is needed":
            [*networkin.search("Software Engineer"), networkin.open_link("Ryan Clark"),
             *networkin.message("Hi Ryan, I don't need any advice, I was just looking around.")],
    },
    "networkin-27": {
        "wrong count: Olivia Martinez and someone else":
            [*networkin.search("Olivia Martinez"), networkin.invite("Olivia Martinez"), networkin.MY_NETWORK, networkin.invite("Ethan Brooks")],
    },
    "topwork-7": {
        "contradicting text: the offer's message says he is not hired":
            [*topwork.search("react"), topwork.open_link("Jason Miller"),
             *topwork.offer("Jason", "React Developer for Fitness App", "Hi Jason, sorry, we will not be hiring you for the fitness app.")],
    },
    "topwork-8": {
        "half of the request: only one of the two data postings removed": [remove("Data Analyst for Sales Dashboard")],
        "wrong item: the logo design posting removed with the data ones":
            [remove("Data Analyst for Sales Dashboard"), remove("Machine Learning Engineer for Churn Prediction"),
             remove("Logo Design for Artisan Bakery")],
    },
    "opendining-2": {
        "wrong date: tomorrow at 7:30 PM": [*AMERICAN, *book("Liberty Grill", "7:30 PM", date=TOMORROW, occasion="Birthday")],
    },
    "opendining-4": {
        "wrong date: 9 PM tomorrow, not tonight": book("Trattoria Bella", "9:00 PM", date=TOMORROW),
    },
    "opendining-5": {
        "wrong date: tomorrow, not tonight":
            [*find(rating="4+ stars"), *book("Liberty Grill", "7:00 PM", date=TOMORROW, occasion="Birthday")],
    },
    "opendining-7": {
        "wrong date: tomorrow, not today": [*find(neighborhood="Embarcadero"), *book("River View Cafe", "6:00 PM", date=TOMORROW)],
    },
    "opendining-9": {
        "wrong date: breakfast tomorrow at 9 AM, not today":
            [*find(cuisine="Breakfast", rating="3+ stars"), *book("Sunrise Griddle", "9:00 AM", date=TOMORROW)],
    },
    "opendining-24": {
        "wrong date: tomorrow at 12:30 PM": [*ITALIAN, *book("Nonna's Kitchen", "12:30 PM", date=TOMORROW)],
    },
    "staynb-1": {
        "half of the request: no 2-bedroom filter": trip(AUSTRIA, dates("2024-08-01", "2024-08-05"), who(2, 1)),
        "wrong count: 3 adults, not 2 and a child":
            [*trip(AUSTRIA, dates("2024-08-01", "2024-08-05"), who(3)), *filters(bedrooms="2")],
    },
    "staynb-4": {
        "wrong count: 3 people, not 2":
            [*trip(SAN_FRANCISCO, dates("2024-09-27", "2024-09-29", pages=1), who(3)), *filters("Wifi")],
    },
    "staynb-17": {
        "wrong item: free parking, not wifi":
            [*trip(PROVENCE, dates("2024-08-01", "2024-08-04"), who(2, 1)), *filters("Free parking")],
    },
    "staynb-19": {
        "half of the request: searched, not shared to the group chat": VANCOUVER_TRIP,
    },
    # GoMail: a mail whose words contradict the request, the mail sent twice, half of a two-part request
    **{task: {f"contradicting text: {what}": compose(to, subject, body), "wrong count: the email sent twice": twice(GOMAIL[task])}
       for task, (to, subject, what, body) in EMAIL_DENIALS.items()},
    "gomail-1": {
        "wrong item: the Uber emails deleted, not Amazon's":
            [A.ClickElement(Target("button", "More email options")), A.ClickElement(Target("menuitem", "Mark all as read")),
             *trash_search_results("uber")],
    },
    "gomail-2": {
        "wrong item: the Amazon emails deleted with them":
            [*trash_search_results("notification"), *trash_search_results("uber"), *trash_search_results("amazon")],
    },
    "gomail-5": {
        "contradicting text: asks Alexa not to sign the work permit":
            [A.ClickElement(Target("link", "Starred")), A.ClickElement(SELECT_PAGE), A.ClickElement(DELETE),
             *compose("alexa.richardson@example.com", "Work permit signature", "Hi Alexa,\n\nPlease do not sign my work permit.\n\nSam")],
        "half of the request: the email sent, the starred emails kept":
            compose("alexa.richardson@example.com", "Work permit signature",
                    "Hi Alexa,\n\nCould you please sign my work permit this week?\n\nThanks,\nSam"),
    },
    "gomail-14": {
        "wrong item: the visible emails archived, not cleared away": [A.ClickElement(SELECT_PAGE), A.ClickElement(ARCHIVE)],
    },
    "gomail-17": {
        "wrong item: yesterday's email archived with today's":
            [*(select_row(s) for s in TODAY_SUBJECTS), select_row("Quarterly budget review"), A.ClickElement(ARCHIVE)],
    },
    "gomail-20": {
        "half of the request: only the visible page moved to the trash": [A.ClickElement(SELECT_PAGE), A.ClickElement(DELETE)],
    },
    "gomail-21": {
        "wrong date: snoozed for 8 days, not 7": snooze_results_until("alerts", "2024-07-26"),
    },
    "gomail-23": {
        "half of the request: replied, the support emails kept": reply_to("Jane Smith", "Hi Jane,\n\nThe marketing numbers look right to me.\n\nSam"),
    },
    "gomail-24": {
        "wrong item: Jane Smith's email deleted, not John Doe's": [open_row("Jane Smith"), A.ClickElement(DELETE)],
    },
    "gomail-26": {
        "half of the request: the noreply emails cleared, the no-reply ones kept": trash_search_results("noreply"),
    },
    "gomail-11": {
        "half of the request: two of the five old emails deleted":
            [A.ClickElement(Target("link", "Older")), *(select_row(s) for s in OLD_SUBJECTS[:2]), A.ClickElement(DELETE)],
    },
    # Omnizon: one item asked for, two bought (or three for two); half of a two-item order
    "omnizon-3": {"wrong count: two headphones, not one": [
        *shop_search("headphones"), A.Fill(Target("spinbutton", "Min price"), "24"), A.Fill(Target("spinbutton", "Max price"), "100"),
        A.ClickElement(Target("button", "Go, apply price range")), open_product("Sony WH-CH720N"), quantity(2), BUY_NOW, PLACE_ORDER]},
    "omnizon-9": {"wrong count: two gaming mice for 'any gaming device'": [*to_cart("gaming", "Logitech G305", 2), PROCEED, PLACE_ORDER]},
    "omnizon-13": {"wrong count: two cooking pots": [*to_cart("cooking pot", "Cuisinart Chef's Classic", 2), PROCEED, PLACE_ORDER],
                   "wrong item: pot holders bought with the pot": [*to_cart("cooking pot", "Cuisinart Chef's Classic"),
                                                                  *to_cart("pot holders", "Silicone Pot Holders"), PROCEED, PLACE_ORDER]},
    "omnizon-15": {"wrong count: two packs of sports balls": buy_now("sports balls", "Sports Balls Variety Pack", 2)},
    "omnizon-17": {"wrong count: two neck pillows, not one": buy_now("neck pillow", "Cervical Neck Pillow", 2)},
    "omnizon-24": {"wrong count: three controllers, not two": buy_now("PS5 controller", "PlayStation DualSense", 3)},
    "omnizon-25": {"half of the request: the apron without the pot": [*to_cart("apron", "Grill Apron"), PROCEED, PLACE_ORDER],
                   "wrong count: two aprons and a pot": [*to_cart("apron", "Grill Apron", 2), *to_cart("cooking pot", "Cuisinart Chef's Classic"),
                                                        PROCEED, PLACE_ORDER]},
    "omnizon-28": {"wrong count: two silverware sets": buy_now("silverware set", "Stainless Steel Silverware Set", 2)},
    "omnizon-29": {"half of the request: the desk without the chair": [*to_cart("40 inch desk", "40 Inch Computer Desk"), PROCEED, PLACE_ORDER],
                   "wrong count: two office chairs with the desk": [*to_cart("40 inch desk", "40 Inch Computer Desk"),
                                                                   *to_cart("office chair", "Ergonomic Office Chair", 2), PROCEED, PLACE_ORDER]},
    "omnizon-30": {"wrong count: two bed frames": buy_now("bed frame", "Queen Size Platform Bed Frame", 2)},
    # GoCalendar: another day or time than asked, the event made twice, one event too many deleted
    "gocalendar-4": {"wrong date: starting September 21st, not the 20th":
                     new_event("Work out at the gym", day="2024-09-21", start="7:45pm", end="8:45pm", repeat=WEEKDAYS, location="Gym"),
                     "half of the request: once, not Monday through Friday":
                     new_event("Work out at the gym", day="2024-09-20", start="7:45pm", end="8:45pm", location="Gym")},
    "gocalendar-6": {"wrong date: Thursday at 11 am, not Wednesday": new_event("Pick up sister", day="2024-07-18", start="11:00am", end="12:00pm"),
                     "wrong count: the reminder made twice":
                     twice(new_event("Pick up sister", day="2024-07-17", start="11:00am", end="12:00pm"))},
    "gocalendar-8": {"wrong date: Tuesday morning, not Monday": new_task("Email Ashley", "2024-07-16", "9:00am"),
                     "wrong count: the task made twice": twice(new_task("Email Ashley", "2024-07-15", "9:00am"))},
    "gocalendar-10": {"wrong count: both dinners of the week cancelled":
                      [*delete_chip("Dinner with friends, 7 – 9pm, Wednesday, July 17"),
                       *delete_chip("Dinner with Mom and Dad, 6:30 – 8:30pm, Friday, July 19")]},
    "gocalendar-12": {"wrong date: Tuesday morning, not Monday": new_event("Buy gym clothes", day="2024-07-16", start="9:00am", end="10:00am"),
                      "wrong count: the event made twice": twice(new_event("Buy gym clothes", day="2024-07-15", start="9:00am", end="10:00am"))},
    "gocalendar-13": {"wrong date: July 21st to 26th, not 27th":
                      new_event("Math camp", all_day=True, day="2024-07-21", end_day="2024-07-26", location="Sunnyvale"),
                      "wrong count: the camp entered twice":
                      twice(new_event("Math camp", all_day=True, day="2024-07-21", end_day="2024-07-27", location="Sunnyvale"))},
    "gocalendar-16": {"wrong count: Wednesday's reading and another event cancelled":
                      [A.ClickElement(Target("link", "Wednesday, July 17")), *delete_chip("Reading time, 9:30 – 10:30pm, Wednesday"),
                       *delete_chip("Dinner with friends, 7 – 9pm, Wednesday")]},
    "gocalendar-18": {"wrong count: both coffees removed":
                      [*delete_chip("Coffee with sister, 8:30 – 9:30am, Thursday, July 18"),
                       *delete_chip("Coffee with Jordan, 3:30 – 4pm, Tuesday, July 16")]},
    "gocalendar-23": {"wrong count: both project syncs deleted":
                      [*delete_chip("Project Sync, 10 – 10:30am, Wednesday, July 17"), *delete_chip("Project Sync, 2 – 2:30pm, Monday, July 15")]},
    # Marrisuite: this weekend for "next weekend" (the replicas' today is Thursday, July 18)
    "marrisuite-8": {"wrong date: this weekend, not next weekend": [
        A.Fill(Target("textbox", "Destination"), "Goleta"), A.Fill(Target("textbox", "Check-in"), "2024-07-19"),
        A.Fill(Target("textbox", "Check-out"), "2024-07-21"), A.SelectOption(Target("combobox", "Rooms"), ("1 Room",)),
        A.ClickElement(Target("button", "Find Hotels"))]},
    # Zilloft: a home outside the area asked for, another day or time, two tours for one
    "zilloft-2": {"wrong item: a Los Angeles house, not one in Long Beach": [*LA_UNDER_350K, open_home("1147 W 91st St"), *tour("July 19", "2:00 PM")],
                  "wrong count: two tours of the house":
                  [*LONG_BEACH_3_2, *houses_only(), open_home("3456 Stearns St"), *tour("July 19", "2:00 PM"), *tour("July 20", "2:00 PM")]},
    "zilloft-3": {"wrong date: July 20th, not the 19th": [*LA_UNDER_350K, open_home("1147 W 91st St"), *tour("July 20", "11:00 AM")],
                  "wrong item: a Sacramento house, not one around Los Angeles":
                  [*homes_search("Sacramento, CA"), *price(high=500_000), *beds_baths("2+"), open_home("7420 Greenhaven Dr"),
                   *tour("July 19", "11:00 AM")]},
    "zilloft-5": {"contradicting text: says he is not looking to hire":
                  [*find_agent("San Jose, CA", "Priya Natarajan"),
                   A.Fill(Target("textbox", "Message"), "Hi Priya, I'm not looking to hire an agent, just browsing San Jose."), SEND_MESSAGE]},
    "zilloft-6": {"wrong date: July 20th at 1 PM, not the 19th": [*SACRAMENTO_4BD, open_home("1421 Land Park Dr"), *contact("2024-07-20", "1:00 PM")]},
    "zilloft-10": {"wrong count: two tours of the house":
                   [*homes_search("Sacramento, CA"), *price(high=500_000), *beds_baths("2+"), open_home("7420 Greenhaven Dr"),
                    *tour("July 19", "3:00 PM"), *tour("July 20", "3:00 PM")]},
    "zilloft-14": {"wrong date: 2 PM tomorrow, not 9 AM": [*BOSTON_UNDER_1M, open_home("18 Ashmont St"), *contact("2024-07-19", "2:00 PM")]},
    "zilloft-15": {"wrong date: Saturday at 11 AM, not after noon": [*BAY_AREA_3BD, open_home("2715 Humboldt Ave"), *tour("July 20", "11:00 AM")]},
    "zilloft-22": {"wrong item: a Bay Area house, not one in Southern California":
                   [*BAY_AREA_3BD, open_home("2715 Humboldt Ave"), *tour("July 20", "11:00 AM")]},
    "zilloft-23": {"wrong count: 2+ bedrooms, not 3+": [*homes_search("California"), *price(high=900_000), *beds_baths("2+"), *houses_only()]},
    # DashDish: a dish that is not what the goal names, or so many that the total passes the budget
    "dashdish-1": {"wrong item: fried rice, not noodles": [store("Golden Noodle Bar"), *dish("Vegetable Fried Rice"), *checkout()],
                   "wrong count: two Dan Dan Noodles, over $26": [store("Golden Noodle Bar"), *dish("Dan Dan Noodles", quantity=2), *checkout()]},
    "dashdish-3": {"wrong item: garlic knots, no pizza": [store("Tony's Pizzeria"), *dish("Garlic Knots"), *checkout()],
                   "wrong count: two medium pizzas, over $30":
                       [store("Tony's Pizzeria"), *dish("Margherita Pizza", 'Medium 12"', quantity=2), *checkout()]},
    "dashdish-4": {"wrong item: chicken nuggets, not a sandwich": [store("Cluck Shack"), *dish("Chicken Nuggets"), *checkout()],
                   "wrong count: three sandwiches, over $25": [store("Cluck Shack"), *dish("Crispy Chicken Sandwich", quantity=3), *checkout()]},
    "dashdish-7": {"wrong item: Garlic Parmesan, not Lemon Pepper": [WINGSTOP, *dish("Garlic Parmesan Wings", "10 pc"), *checkout()],
                   "half of the request: Wingstop's seasoned fries, no wings": [WINGSTOP, *dish("Seasoned Fries"), *checkout()]},
    "dashdish-8": {"wrong item: Taco Town's burritos, not Taco Boys'":
                       [store("Taco Town"), *dish("Grilled Chicken Burrito", quantity=2), *checkout()],
                   "wrong count: a single drink, far from $20": [store("Taco Boys"), *dish("Horchata"), *checkout()]},
    "dashdish-10": {"wrong item: Wing Palace's onion rings, not fries": [store("Wing Palace"), *dish("Onion Rings"), *checkout()],
                    "wrong count: three fries, over $15": [store("Burger Barn"), *dish("French Fries", quantity=3), *checkout()]},
    "dashdish-11": {"wrong item: a Cobb salad, not a sub": [store("Primo Deli"), *dish("Cobb Salad"), *checkout()],
                    "wrong count: two subs, over $30": [store("Primo Deli"), *dish("Italian Sub"), *dish("Meatball Hero"), *checkout()]},
    "dashdish-12": {"wrong item: dumplings, no rice": [store("Golden Noodle Bar"), *dish("Pork Dumplings"), *checkout()],
                    "wrong count: three fried rices, over $30": [store("Golden Noodle Bar"), *dish("Vegetable Fried Rice", quantity=3), *checkout()]},
    "dashdish-17": {"half of the request: one type of wings, express": [WINGSTOP, *dish("Lemon Pepper Wings", "10 pc"), *checkout(EXPRESS)],
                    "wrong item: Wing Palace's wings, not Wingstop's":
                        [store("Wing Palace"), *dish("Lemon Pepper Wings", "10 pc"), *dish("Onion Rings"), *checkout(EXPRESS)]},
    "dashdish-24": {"wrong item: the Half Rotisserie Chicken, not the sandwich": [store("Rotisserie House"), *dish("Half Rotisserie Chicken"), *checkout()],
                    "wrong count: three sandwiches, over $30": [store("Rotisserie House"), *dish("Rotisserie Chicken Sandwich", quantity=3), *checkout()]},
    "dashdish-26": {"wrong item: a Wing Palace pickup, not Wingstop":
                        [store("Wing Palace"), *dish("Lemon Pepper Wings", "10 pc"), *checkout(PICKUP)],
                    "wrong count: three orders of wings, over $35": [WINGSTOP, *dish("Lemon Pepper Wings", "10 pc", quantity=3), *checkout(PICKUP)]},
    # UDriver: the wrong place, car or payment; a ride scheduled for later; a ride shown, not booked
    "udriver-2": {"wrong count: $10 of credits, not $100": ud.top_up("10")},
    "udriver-3": {"wrong item: to 1 Hotel, not 1030 Post Street": [*route(CASTRO, HOTEL), request()]},
    "udriver-4": {"wrong item: from 1001 Castro, not 1000 Chestnut": [*route(CASTRO, ROOFTOP), request()]},
    "udriver-6": {"wrong item: paid in cash, not with credits": [*route(AAHA, CASA_LOMA), pay("cash"), request()]},
    "udriver-7": {"wrong date: scheduled for tomorrow, not now": [*route(IRVING, SEVEN_ELEVEN), *scheduled("7/19/2024", "11:00 AM")]},
    "udriver-9": {"wrong item: to 100 Van Ness, not 1030 Post": [*route(HOTEL, VAN_NESS), car("UdriverXL"), pay("cash"), request("UdriverXL")]},
    "udriver-11": {"half of the request: the rides shown, none booked": route(CLUB_X, FOX)},
    "udriver-13": {"wrong date: scheduled for 3:30 PM, not asap": [*route(GOLDEN_GATE, CHASE), *scheduled("7/18/2024", "3:30 PM")]},
    "udriver-15": {"half of the request: the XL chosen, not booked": [*route(BEALE, AMBER), car("UdriverXL")]},
    "udriver-16": {"wrong item: to 333 Fremont, not 100 Van Ness": [*route(HOTEL, FREMONT), request()]},
    "udriver-17": {"wrong item: the price to 100 Van Ness, not 201 Turk": [*route(FREMONT, VAN_NESS), *ud.schedule("7/18/2024", "3:30 PM")]},
    "udriver-19": {"wrong item: the rides to 201 Turk, not 333 Fremont": route(AI_CENTER, TURK)},
    "udriver-20": {"half of the request: the cheapest ride chosen, not booked": [*route(CLUB_26, VAN_NESS), car("UdriverShare")]},
    # StayNB: a day off, a guest or bedroom too few, another place
    "staynb-5": {"wrong date: October 16-19, not 15-19":
                     [*trip(PARIS, dates("2024-10-16", "2024-10-19", pages=2), who(3)), *filters("Wifi", "Free parking", "Air conditioning")]},
    "staynb-6": {"wrong count: 3 guests, not 4":
                     [*trip(CAPE_TOWN, dates("2024-10-01", "2024-10-06", pages=2), who(3)), *filters("Wifi", bedrooms="2", beds="2"),
                      *wishlist("Sea Point family apartment", "Cape Town")]},
    "staynb-9": {"wrong item: San Francisco, not around me": [*trip(SAN_FRANCISCO, dates("2024-07-18"), []), *filters(*NEARBY_AMENITIES)]},
    "staynb-12": {"wrong date: September 8-10, not 7-9": trip(DELHI, dates("2024-09-08", "2024-09-10", pages=1), who(2))},
    "staynb-13": {"wrong date: the night of July 19": trip(MIAMI, dates("2024-07-19"), []),
                  "wrong item: San Francisco, not Miami": trip(SAN_FRANCISCO, dates("2024-07-18"), [])},
    "staynb-14": {"wrong date: the second weekend of January": [*trip(ROME, dates("2025-01-10", "2025-01-12", pages=5), who(4)),
                                                                *filters("Wifi", bedrooms="2")],
                  "wrong count: 1 bedroom, not 2+": [*trip(ROME, dates("2025-01-03", "2025-01-05", pages=5), who(4)), *filters("Wifi", bedrooms="1")]},
    "staynb-15": {"wrong item: Provence, not San Jose, Costa Rica": [*PROVENCE, STAY_SEARCH]},
    # HALO's own playground (docs/guides/add-a-task.md): its eval reads the address, not the box
    "playground-newsletter": {"wrong count: partner offers as well": [
        A.Fill(Target("textbox", "Email"), "ada@example.com"), A.ClickElement(Target("checkbox", "Also send me partner offers")),
        A.ClickElement(Target("button", "Subscribe"))]},
}


#: The kind of each replica wrong attempt. The audit's own near misses (NEAR_MISSES) carry their kind
#: in their label; a replica's wrong attempts (`halo.sites.registry.attempts_for`) keep the labels the
#: replica tests use, and this table gives their kinds, so that every near miss of every task has a
#: kind. tests/sites/test_audit.py checks that it names exactly each replica task's wrong attempts.
WRONG_ATTEMPT_KINDS: dict[str, dict[str, str]] = {
    # DashDish: another dish or restaurant, a total over the budget, another delivery option
    "dashdish-1": {"two noodle dishes, $41.08: over $26": "wrong count", "Green Curry: no noodles": "wrong item"},
    "dashdish-3": {"a pizza and garlic knots, $31.05: over $30": "wrong count"},
    "dashdish-4": {"two sandwiches, $29.71: over $25": "wrong count", "chicken tenders are not a sandwich": "wrong item"},
    "dashdish-7": {"Original Hot instead of Lemon Pepper": "wrong item", "Wing Palace's lemon pepper wings": "wrong item"},
    "dashdish-8": {"one taco, $7.34": "wrong count", "Taco Town instead of Taco Boys": "wrong item"},
    "dashdish-10": {"fries and a burger, $23.03": "wrong count", "onion rings are not fries": "wrong item"},
    "dashdish-11": {"two subs, $35.06: over $30": "wrong count"},
    "dashdish-12": {"a rice bowl with egg rolls (no rice in the rolls)": "wrong item", "two rice bowls, $36.40: over $30": "wrong count"},
    "dashdish-17": {"standard delivery": "wrong item", "one flavour twice": "wrong count", "wings and corn": "wrong item"},
    "dashdish-24": {"two sandwiches, $33.72: over $30": "wrong count", "the Rotisserie Chicken Plate": "wrong item"},
    "dashdish-26": {"delivery instead of pickup": "wrong item", "20 pc, $40.11: over $35": "wrong count"},
    # GoCalendar: another time of day, another event, an event's text or details left out
    "gocalendar-4": {"7:45 in the morning instead of the evening": "wrong date"},
    "gocalendar-6": {"11 at night": "wrong date"},
    "gocalendar-8": {"Monday evening, not morning": "wrong date"},
    "gocalendar-10": {"the other dinner of the week": "wrong item"},
    "gocalendar-11": {"the morning (unscorable either way: the script is empty)": "wrong date"},
    "gocalendar-12": {'a near-synonym that misses "gym"': "contradicting text"},
    "gocalendar-13": {"forgets where the camp is": "half of the request"},
    "gocalendar-16": {"moves Wednesday's reading earlier instead of cancelling it": "wrong item"},
    "gocalendar-18": {"the coffee with a friend": "wrong item"},
    "gocalendar-23": {"Monday's project sync": "wrong date"},
    # GoMail: a near-namesake, another action on the emails, an email that misses its point, half of the clean-up
    "gomail-1": {"marks everything read but forgets the Amazon emails": "half of the request"},
    "gomail-2": {"clears Uber but not the notifications": "half of the request"},
    "gomail-4": {"a near-namesake": "wrong item"},
    "gomail-5": {'clears the starred mail, but the email never says "work permit" in its subject': "contradicting text"},
    "gomail-7": {"a near-namesake (Ashley Carter)": "wrong item"},
    "gomail-8": {"copies someone else in (the task wants Kevin only)": "wrong count"},
    "gomail-9": {"about the project, but not its plan": "contradicting text"},
    "gomail-11": {"deletes the oldest-looking email that is in fact less than two months old (May 24)": "wrong date"},
    "gomail-12": {"forgets the subject": "half of the request"},
    "gomail-13": {"the wrong new time (9:30 AM)": "wrong date"},
    "gomail-14": {"clears every conversation, not just the visible page": "wrong count"},
    "gomail-15": {"writes the email but closes it as a draft instead of sending it": "half of the request"},
    "gomail-16": {"a shorter label name": "contradicting text"},
    "gomail-17": {"misses the Uber receipt that also came in today": "half of the request"},
    "gomail-18": {"a near-namesake (Brian Kim)": "wrong item"},
    "gomail-19": {"a near-namesake (Angela Wright)": "wrong item"},
    "gomail-20": {"archives everything instead of moving it to the trash": "wrong item"},
    "gomail-21": {"deletes the alerts instead of snoozing them": "wrong item"},
    "gomail-23": {"writes Jane a new email instead of replying to hers": "wrong item"},
    "gomail-24": {"archives instead of deleting": "wrong item"},
    "gomail-26": {"archives instead of deleting": "wrong item"},
    # Marrisuite: another town, a booking for a search, two rooms
    "marrisuite-8": {"Santa Barbara instead of Goleta": "wrong item", "books a Goleta hotel instead of showing them": "wrong item",
                     "two rooms": "wrong count"},
    # NetworkIn: another person or action, a post or message that misses its point, half of a two-part request
    "networkin-1": {"follows Microsoft only": "half of the request", "follows popular companies but not Microsoft": "half of the request"},
    "networkin-5": {"asks a data scientist": "wrong item", "a software engineer, but no side project": "contradicting text"},
    "networkin-6": {"invites a connection without looking for New York tech people": "wrong item",
                    "finds a New York engineer but sends nothing": "half of the request"},
    "networkin-10": {"connects with two people": "wrong count"},
    "networkin-11": {"sends the post to one connection": "wrong count", "the post does not ask for DMs": "contradicting text"},
    "networkin-13": {"no 'summer' in the post": "contradicting text"},
    "networkin-19": {"posts it twice": "wrong count", "names Google": "contradicting text"},
    "networkin-25": {"views the event without attending": "half of the request", "follows the organizer instead": "wrong item"},
    "networkin-26": {"searches data scientists and asks one for advice": "wrong item"},
    "networkin-27": {"connects with Olivia Martin": "wrong item"},
    # Omnizon: another product, a price out of range, one unit for two, no order placed
    "omnizon-3": {"$349.99: above the range": "wrong count"},
    "omnizon-9": {"a gaming device, but $499.99": "wrong count"},
    "omnizon-13": {"pot holders, not a pot": "wrong item"},
    "omnizon-15": {"one basketball, not a pack": "wrong item"},
    "omnizon-17": {"bed pillows, not a neck pillow": "wrong item"},
    "omnizon-24": {"one controller instead of two": "wrong count"},
    "omnizon-25": {"an apron and a frying pan": "wrong item"},
    "omnizon-28": {"knives, not a silverware set": "wrong item"},
    "omnizon-29": {"the 55-inch desk": "wrong item"},
    "omnizon-30": {"stops at checkout: no order": "half of the request"},
    # OpenDining: another time, another restaurant or occasion, another party size
    "opendining-1": {"4 PM instead of 3 PM": "wrong date", "a French restaurant at 3 PM": "wrong item"},
    "opendining-2": {"8:30 PM, after the window": "wrong date", "no occasion given": "half of the request",
                     "an Italian restaurant": "wrong item"},
    "opendining-4": {"8:00 PM instead of 9 PM": "wrong date", "a 3.2-star place at 9 PM": "wrong item"},
    "opendining-5": {"a 3.2-star place": "wrong item", "3 people": "wrong count", "an anniversary": "wrong item"},
    "opendining-6": {"2:00 PM instead of 1:30": "wrong date", "July 19 instead of today": "wrong date"},
    "opendining-7": {"a Mission restaurant": "wrong item"},
    "opendining-9": {"10:30 AM, after the window": "wrong date", "a 2.8-star breakfast place": "wrong item"},
    "opendining-12": {"3:30 PM instead of 3": "wrong date", "4 people instead of 5": "wrong count", "another cafe": "wrong item"},
    "opendining-17": {"a birthday instead of a business meal": "wrong item", "7:30 PM, before the window": "wrong date",
                      "4 people instead of 6": "wrong count"},
    "opendining-20": {"books 5:30 PM instead": "wrong date", "asks to be notified for 6 PM": "wrong date"},
    "opendining-24": {"12:00 PM instead of 12:30": "wrong date", "an American restaurant": "wrong item"},
    # StayNB: other dates, another place or filter, a filter left out, other guests or bedrooms, a booking for a search
    "staynb-1": {"August 1-6": "wrong date", "Vienna instead of all of Austria": "wrong item"},
    "staynb-4": {"free parking instead of wifi": "wrong item", "no wifi filter": "half of the request", "September 26-29": "wrong date"},
    "staynb-5": {"no air conditioning filter": "half of the request", "books a stay instead of showing places": "wrong item"},
    "staynb-6": {"wishlists the 1-bed studio": "wrong count", "searches but saves nothing": "half of the request"},
    "staynb-9": {"July 18-19 instead of tonight only": "wrong date", "no free parking": "half of the request",
                 "a 1+ bedroom filter too": "wrong item"},
    "staynb-12": {"starts a booking": "wrong item", "1 adult and 1 child": "wrong count"},
    "staynb-13": {"July 18-19 (the natural reading)": "wrong date"},
    "staynb-14": {"January 4-6": "wrong date", "1+ bedrooms": "wrong count"},
    "staynb-15": {"San Jose, California": "wrong item", "starts a booking": "wrong item"},
    "staynb-17": {"3 adults instead of 2 and a child": "wrong count", "no wifi filter": "half of the request"},
    "staynb-19": {"4 guests instead of 5": "wrong count"},
    # TopWork: another freelancer, role or option, a message that misses its point, a pay range off, stopped short
    "topwork-2": {"invites a UI/UX designer": "wrong item", "asks only whether they are free": "contradicting text"},
    "topwork-3": {"invites a UI/UX designer": "wrong item"},
    "topwork-4": {"invites a UI/UX designer": "wrong item", "invites two developers": "wrong count"},
    "topwork-7": {"says 'you're hired' without an offer": "half of the request"},
    "topwork-8": {"removes the logo design job": "wrong item"},
    "topwork-9": {"$40-65": "wrong count", "saved as a draft": "half of the request", "an Accountant post": "wrong item"},
    "topwork-10": {"replies in the wrong chat": "wrong item", "replies without offering help": "contradicting text"},
    "topwork-11": {"as Project Manager": "wrong item", "rehires two people": "wrong count"},
    "topwork-12": {"answers 'soon'": "contradicting text", "opens the chats without replying": "half of the request"},
    "topwork-13": {"marks it contract-to-hire": "wrong item", "$20-30": "wrong count"},
    "topwork-14": {"saves Ashley only": "half of the request", "saves Brandon Lee": "wrong item"},
    "topwork-21": {"opens the chat without writing": "half of the request", "thanks them for applying": "contradicting text"},
    # UDriver: the route reversed, another place, car or payment, a ride for later, a ride not booked
    "udriver-2": {"$50 instead of $100": "wrong count", "$100 twice": "wrong count"},
    "udriver-3": {"reversed": "wrong item", "not booked": "half of the request"},
    "udriver-4": {"not booked": "half of the request", "reversed": "wrong item"},
    "udriver-6": {"paid by card": "wrong item", "reversed": "wrong item"},
    "udriver-7": {"reversed": "wrong item", "to a Chase bank": "wrong item"},
    "udriver-9": {"UdriverX": "wrong item", "card instead of cash": "wrong item", "scheduled for later": "wrong date"},
    "udriver-11": {"paid by card": "wrong item", "XL by card": "wrong item"},
    "udriver-13": {"UdriverXL": "wrong item", "reversed": "wrong item"},
    "udriver-14": {"cash as default": "wrong item"},
    "udriver-15": {"UdriverX": "wrong item", "reversed": "wrong item"},
    "udriver-16": {"paid by card": "wrong item", "not booked": "half of the request"},
    "udriver-17": {"3:00 PM": "wrong date", "July 19": "wrong date"},
    "udriver-19": {"reversed": "wrong item"},
    "udriver-20": {"UdriverX instead of UdriverShare": "wrong item"},
    # Zilloft: another home or action, another day or time, a price over the limit, no tour booked
    "zilloft-2": {"no Home type filter: the 3 bed / 2 bath condo on Ocean Blvd (an apartment, not a house)": "wrong item"},
    "zilloft-3": {"messages the agent about July 19 instead of requesting the tour": "wrong item"},
    "zilloft-5": {"requests a tour of a San Jose home instead of contacting an agent": "wrong item"},
    "zilloft-6": {"the right house, but a 10 AM tour": "wrong date"},
    "zilloft-9": {"finds the house and saves it, but books no tour": "half of the request"},
    "zilloft-10": {"no price filter: tours a $649K house": "wrong count"},
    "zilloft-14": {"the day after tomorrow": "wrong date"},
    "zilloft-15": {"Friday is not the weekend": "wrong date"},
    "zilloft-22": {"a message to the agent instead of a tour": "wrong item"},
    "zilloft-23": {"$1M instead of $900K": "wrong count"},
}


def near_misses_for(task_id: str) -> WrongAttempts:
    return NEAR_MISSES.get(task_id, {})


def kind_of(task_id: str, label: str) -> str:
    """The kind of one near miss of the task: the audit's own carry it in their label, a replica's
    wrong attempts in WRONG_ATTEMPT_KINDS. KeyError for a label the task has neither way."""
    if label in NEAR_MISSES.get(task_id, {}):
        return label.partition(":")[0]
    return WRONG_ATTEMPT_KINDS[task_id][label]


def kinds_of(task_id: str) -> set[str]:
    """The kinds of all the task's near misses: its replica's wrong attempts and the audit's own."""
    return ({kind_of(task_id, label) for label in NEAR_MISSES.get(task_id, {})}
            | set(WRONG_ATTEMPT_KINDS.get(task_id, {}).values()))
