"""Oracles (UI-only solutions) and plausible wrong attempts for the 10 REAL v2 Zilloft tasks.

Targets name elements the way the AXTree shows them: the search box by its label, the filter bar's
panel buttons ("Price", "Beds & baths", "Home type", "More") and the controls inside the open panel,
result cards by the address link, the listing's "Request a tour" / "Contact agent" links and the
dialogs' fields. Each wrong attempt is a mistake an agent could make (the condo instead of the
house, a weekday instead of the weekend, 10 AM instead of 1 PM, a message instead of a tour) and
must score 0 with agisdk's eval script.
"""

from __future__ import annotations

from halo.agent import actions as A
from halo.sites.oracle import OracleStep, Target, WrongAttempts

SEARCH_BOX = Target("searchbox", contains="Enter an address")
APPLY = A.ClickElement(Target("button", "Apply"))
REQUEST_TOUR = A.ClickElement(Target("link", "Request a tour"))
CONTACT_AGENT = A.ClickElement(Target("link", "Contact agent"))
SEND_TOUR = A.ClickElement(Target("button", "Send tour request"))
SEND_MESSAGE = A.ClickElement(Target("button", "Send message"))


def search(place: str) -> list[OracleStep]:
    return [A.Fill(SEARCH_BOX, place), A.KeyPress("Enter")]


def price(low: int | None = None, high: int | None = None) -> list[OracleStep]:
    steps: list[OracleStep] = [A.ClickElement(Target("button", contains="Price"))]
    if low is not None:
        steps.append(A.Fill(Target("textbox", "Minimum price"), f"{low:,}"))
    if high is not None:
        steps.append(A.Fill(Target("textbox", "Maximum price"), f"{high:,}"))
    return steps + [APPLY]


def beds_baths(beds: str | None = None, baths: str | None = None, exact: bool = False) -> list[OracleStep]:
    steps: list[OracleStep] = [A.ClickElement(Target("button", contains="Beds & baths"))]
    if beds is not None:
        steps.append(A.ClickElement(Target("radio", f"Bedrooms: {beds}")))
    if exact:
        steps.append(A.ClickElement(Target("checkbox", "Use exact match")))
    if baths is not None:
        steps.append(A.ClickElement(Target("radio", f"Bathrooms: {baths}")))
    return steps + [APPLY]


def houses_only() -> list[OracleStep]:
    return [A.ClickElement(Target("button", contains="Home type")), A.ClickElement(Target("checkbox", "Houses")), APPLY]


def open_home(street: str) -> OracleStep:
    return A.ClickElement(Target("link", contains=street))


def tour(day: str, time: str) -> list[OracleStep]:
    """Request a tour from the open listing: a day ("July 20") and a time ("2:00 PM")."""
    return [REQUEST_TOUR, A.ClickElement(Target("radio", contains=day)), A.SelectOption(Target("combobox", "Time"), (time,)), SEND_TOUR]


def contact(day: str = "", time: str = "") -> list[OracleStep]:
    """Message the listing agent from the open listing, with a preferred tour day ("2024-07-19") and time."""
    steps: list[OracleStep] = [CONTACT_AGENT]
    if day:
        steps += [A.SelectOption(Target("combobox", "Preferred tour date"), (day,)), A.SelectOption(Target("combobox", "Preferred time"), (time,))]
    return steps + [SEND_MESSAGE]


LONG_BEACH_3_2 = [*search("Long Beach, CA"), *beds_baths("3+", "2+", exact=True)]
LA_UNDER_350K = [*search("Los Angeles, CA"), *price(high=350_000), *beds_baths("2+", "1+"), *houses_only()]
SACRAMENTO_4BD = [*search("Sacramento, CA"), *price(500_000, 1_100_000), *beds_baths("4+", "2+"), *houses_only()]
BOSTON_UNDER_1M = [*search("Boston, MA"), *price(high=1_000_000), *houses_only()]
BAY_AREA_3BD = [*search("San Francisco Bay Area"), *price(high=1_000_000), *beds_baths("3+"), *houses_only()]
SOCAL_UNDER_1M = [*search("Southern California"), *price(high=1_000_000), *houses_only()]
SEATTLE_OVER_1000 = [
    *search("Seattle, WA"), A.ClickElement(Target("button", contains="More")),
    A.SelectOption(Target("combobox", "Minimum square feet"), ("1000",)), APPLY, *houses_only(),
]
HIRE_MESSAGE = "Hi Priya, I'm looking to hire an agent to help me buy a home in San Jose. When could we talk?"


def find_agent(place: str, name: str) -> list[OracleStep]:
    return [A.ClickElement(Target("link", "Agent finder")), A.Fill(Target("textbox", contains="Location"), place), A.KeyPress("Enter"),
            A.ClickElement(Target("link", name))]


ORACLES: dict[str, list[OracleStep]] = {
    # a 3 bed / 2 bath house in Long Beach: exact 3 beds, 2+ baths, houses only, then a tour
    "zilloft-2": [*LONG_BEACH_3_2, *houses_only(), open_home("3456 Stearns St"), *tour("July 19", "2:00 PM")],
    # a Los Angeles house under $350K with 2+ beds / 1+ bath, toured on July 19
    "zilloft-3": [*LA_UNDER_350K, open_home("1147 W 91st St"), *tour("July 19", "11:00 AM")],
    # an agent in San Jose to hire: the agent finder, then a message to one of them
    "zilloft-5": [*find_agent("San Jose, CA", "Priya Natarajan"), A.Fill(Target("textbox", "Message"), HIRE_MESSAGE),
                  SEND_MESSAGE],
    # the agent of a 4+ bed / 2+ bath Sacramento house in $500K-$1.1M, tour on July 19 at 1 PM
    "zilloft-6": [*SACRAMENTO_4BD, open_home("1421 Land Park Dr"), *contact("2024-07-19", "1:00 PM")],
    # a house over 1,000 sq ft (the script wants a tour request for it)
    "zilloft-9": [*SEATTLE_OVER_1000, open_home("6512 Phinney Ave N"), *tour("July 20", "10:00 AM")],
    # under $500K with 2+ bedrooms, and a tour
    "zilloft-10": [*search("Sacramento, CA"), *price(high=500_000), *beds_baths("2+"), open_home("7420 Greenhaven Dr"),
                   *tour("July 19", "3:00 PM")],
    # Boston houses under $1M, then the agent of one, tour tomorrow (July 19) at 9 AM
    "zilloft-14": [*BOSTON_UNDER_1M, open_home("18 Ashmont St"), *contact("2024-07-19", "9:00 AM")],
    # a Bay Area home under $1M with 3+ bedrooms, toured on the weekend after noon
    "zilloft-15": [*BAY_AREA_3BD, open_home("2715 Humboldt Ave"), *tour("July 20", "2:00 PM")],
    # Southern California houses under $1M, at least one tour
    "zilloft-22": [*SOCAL_UNDER_1M, open_home("4127 Utah St"), *tour("July 20", "11:00 AM")],
    # California houses under $900K with 3+ bedrooms: the filtered results are the answer
    "zilloft-23": [*search("California"), *price(high=900_000), *beds_baths("3+"), *houses_only()],
}

WRONG_ATTEMPTS: dict[str, WrongAttempts] = {
    "zilloft-2": {'no Home type filter: the 3 bed / 2 bath condo on Ocean Blvd (an apartment, not a house)': [*LONG_BEACH_3_2, open_home("455 E Ocean Blvd UNIT 1203"), *tour("July 19", "2:00 PM")]},
    "zilloft-3": {'messages the agent about July 19 instead of requesting the tour': [*LA_UNDER_350K, open_home("1147 W 91st St"), *contact("2024-07-19", "11:00 AM")]},
    "zilloft-5": {'requests a tour of a San Jose home instead of contacting an agent': [*search("San Jose, CA"), open_home("1834 Willow St"), *tour("July 19", "4:00 PM")]},
    "zilloft-6": {'the right house, but a 10 AM tour': [*SACRAMENTO_4BD, open_home("1421 Land Park Dr"), *contact("2024-07-19", "10:00 AM")]},
    "zilloft-9": {'finds the house and saves it, but books no tour': [*SEATTLE_OVER_1000, open_home("6512 Phinney Ave N"), A.ClickElement(Target("button", "Save")),
                  A.SendMessage("6512 Phinney Ave N, Seattle, WA 98103 is a 1,720 sq ft house for $925,000.")]},
    "zilloft-10": {'no price filter: tours a $649K house': [*search("Sacramento, CA"), *beds_baths("2+"), open_home("5561 Carlson Dr"), *tour("July 19", "3:00 PM")]},
    "zilloft-14": {'the day after tomorrow': [*BOSTON_UNDER_1M, open_home("18 Ashmont St"), *contact("2024-07-20", "9:00 AM")]},
    "zilloft-15": {'Friday is not the weekend': [*BAY_AREA_3BD, open_home("2715 Humboldt Ave"), *tour("July 19", "2:00 PM")]},
    "zilloft-22": {'a message to the agent instead of a tour': [*SOCAL_UNDER_1M, open_home("4127 Utah St"), *contact("2024-07-20", "11:00 AM")]},
    "zilloft-23": {'$1M instead of $900K': [*search("California"), *price(high=1_000_000), *beds_baths("3+"), *houses_only()]},
}
