"""Oracles (UI-only solutions) and plausible wrong attempts for the 11 REAL v2 OpenDining tasks.

An agent finds a restaurant (the search form's cuisine / neighbourhood / rating selects, or the
home page's "Top rated" row), sets the party size and date on its page when the goal needs
another than 2 people today, picks a table time, then chooses the occasion and completes the
reservation; a taken time offers "Notify me". Each wrong attempt is a near miss the goal rules
out (another hour, cuisine, rating, party size, day or occasion) and must score 0.
"""

from __future__ import annotations

from halo.agent import actions as A
from halo.sites.oracle import OracleStep, Target, WrongAttempts


def find(cuisine: str = "", neighborhood: str = "", rating: str = "", q: str = "") -> list[OracleStep]:
    steps: list[OracleStep] = []
    if q:
        steps.append(A.Fill(Target("textbox", "Search restaurants"), q))
    if cuisine:
        steps.append(A.SelectOption(Target("combobox", "Cuisine"), (cuisine,)))
    if neighborhood:
        steps.append(A.SelectOption(Target("combobox", "Neighborhood"), (neighborhood,)))
    if rating:
        steps.append(A.SelectOption(Target("combobox", "Rating"), (rating,)))
    return steps + [A.ClickElement(Target("button", "Let's go"))]


def book(restaurant: str, time: str, party: str = "", date: str = "", occasion: str = "") -> list[OracleStep]:
    """From a page listing `restaurant`: open it, set party / date if given, pick `time`, complete."""
    steps: list[OracleStep] = [A.ClickElement(Target("link", restaurant))]
    if party or date:
        if party:
            steps.append(A.SelectOption(Target("combobox", "Party size"), (party,)))
        if date:
            steps.append(A.Fill(Target("textbox", "Date"), date))
        steps.append(A.ClickElement(Target("button", "Find a table")))
    steps.append(A.ClickElement(Target("link", time)))
    if occasion:
        steps.append(A.SelectOption(Target("combobox", "Occasion"), (occasion,)))
    return steps + [A.ClickElement(Target("button", "Complete reservation"))]


ITALIAN, AMERICAN = find(cuisine="Italian"), find(cuisine="American")
RIVER_VIEW_SEP_29 = dict(party="5 people", date="2025-09-29")
HAIGHT_SEP_22 = [*find(neighborhood="Haight-Ashbury")]
EVENING_DELIGHT = [*find(q="Evening Delight"), A.ClickElement(Target("link", "Evening Delight"))]

ORACLES: dict[str, list[OracleStep]] = {
    # an Italian restaurant today at 3 PM
    "opendining-1": [*ITALIAN, *book("Trattoria Bella", "3:00 PM")],
    # an American place between 7 and 8 PM today, 2 people, a birthday
    "opendining-2": [*AMERICAN, *book("Liberty Grill", "7:30 PM", occasion="Birthday")],
    # one of the top rated restaurants (the home page's row) at 9 PM tonight
    "opendining-4": book("Trattoria Bella", "9:00 PM"),
    # 4+ stars, tonight, 2 people, a birthday
    "opendining-5": [*find(rating="4+ stars"), *book("Liberty Grill", "7:00 PM", occasion="Birthday")],
    # any restaurant at 1:30 PM today
    "opendining-6": [*find(q="dim sum"), *book("Golden Lotus", "1:30 PM")],
    # a restaurant in the Embarcadero today, over 3 stars
    "opendining-7": [*find(neighborhood="Embarcadero"), *book("River View Cafe", "6:00 PM")],
    # breakfast between 7 and 10 AM, 3+ stars
    "opendining-9": [*find(cuisine="Breakfast", rating="3+ stars"), *book("Sunrise Griddle", "8:30 AM")],
    # River View Cafe, 5 people, September 29, 2025 at 3 PM
    "opendining-12": [*find(q="River View"), *book("River View Cafe", "3:00 PM", **RIVER_VIEW_SEP_29)],
    # Haight-Ashbury, 8-10 PM on September 22, 6 people, a business meal
    "opendining-17": [*HAIGHT_SEP_22, *book("Haight Street Supper Club", "8:30 PM", party="6 people", date="2024-09-22",
                                             occasion="Business Meal")],
    # Evening Delight at exactly 5 PM: taken, so "Notify me"
    "opendining-20": [*EVENING_DELIGHT, A.ClickElement(Target("button", "Notify me at 5:00 PM"))],
    # an Italian restaurant at 12:30 PM today
    "opendining-24": [*ITALIAN, *book("Nonna's Kitchen", "12:30 PM")],
}

WRONG_ATTEMPTS: dict[str, WrongAttempts] = {
    "opendining-1": {
        "4 PM instead of 3 PM": [*ITALIAN, *book("Trattoria Bella", "4:00 PM")],
        "a French restaurant at 3 PM": [*find(cuisine="French"), *book("Le Petit Bistro", "3:00 PM")],
    },
    "opendining-2": {
        "8:30 PM, after the window": [*AMERICAN, *book("Liberty Grill", "8:30 PM", occasion="Birthday")],
        "no occasion given": [*AMERICAN, *book("Liberty Grill", "7:30 PM")],
        "an Italian restaurant": [*ITALIAN, *book("Trattoria Bella", "7:30 PM", occasion="Birthday")],
    },
    "opendining-4": {
        "8:00 PM instead of 9 PM": book("Trattoria Bella", "8:00 PM"),
        "a 3.2-star place at 9 PM": [*find(q="Midnight Noodle"), *book("Midnight Noodle Bar", "9:00 PM")],
    },
    "opendining-5": {
        "a 3.2-star place": [*find(q="Midnight Noodle"), *book("Midnight Noodle Bar", "7:00 PM", occasion="Birthday")],
        "3 people": [*find(rating="4+ stars"), *book("Liberty Grill", "7:00 PM", party="3 people", occasion="Birthday")],
        "an anniversary": [*find(rating="4+ stars"), *book("Liberty Grill", "7:00 PM", occasion="Anniversary")],
    },
    "opendining-6": {
        "2:00 PM instead of 1:30": [*find(q="dim sum"), *book("Golden Lotus", "2:00 PM")],
        "July 19 instead of today": [*find(q="dim sum"), *book("Golden Lotus", "1:30 PM", date="2024-07-19")],
    },
    "opendining-7": {
        "a Mission restaurant": [*find(neighborhood="Mission"), *book("La Taqueria Azul", "6:00 PM")],
    },
    "opendining-9": {
        "10:30 AM, after the window": [*find(cuisine="Breakfast", rating="3+ stars"), *book("Sunrise Griddle", "10:30 AM")],
        "a 2.8-star breakfast place": [*find(cuisine="Breakfast"), *book("Early Bird Pancakes", "8:00 AM")],
    },
    "opendining-12": {
        "3:30 PM instead of 3": [*find(q="River View"), *book("River View Cafe", "3:30 PM", **RIVER_VIEW_SEP_29)],
        "4 people instead of 5": [*find(q="River View"), *book("River View Cafe", "3:00 PM", party="4 people", date="2025-09-29")],
        "another cafe": [*find(cuisine="Cafe"), *book("Cafe Lumiere", "3:00 PM", **RIVER_VIEW_SEP_29)],
    },
    "opendining-17": {
        "a birthday instead of a business meal": [*HAIGHT_SEP_22, *book("Haight Street Supper Club", "8:30 PM", party="6 people",
                                                                          date="2024-09-22", occasion="Birthday")],
        "7:30 PM, before the window": [*HAIGHT_SEP_22, *book("Haight Street Supper Club", "7:30 PM", party="6 people",
                                                               date="2024-09-22", occasion="Business Meal")],
        "4 people instead of 6": [*HAIGHT_SEP_22, *book("Haight Street Supper Club", "8:30 PM", party="4 people",
                                                          date="2024-09-22", occasion="Business Meal")],
    },
    "opendining-20": {
        "books 5:30 PM instead": [*EVENING_DELIGHT, A.ClickElement(Target("link", "5:30 PM")),
                                  A.ClickElement(Target("button", "Complete reservation"))],
        "asks to be notified for 6 PM": [*EVENING_DELIGHT, A.ClickElement(Target("button", "Notify me at 6:00 PM"))],
    },
    "opendining-24": {
        "12:00 PM instead of 12:30": [*ITALIAN, *book("Nonna's Kitchen", "12:00 PM")],
        "an American restaurant": [*AMERICAN, *book("Liberty Grill", "12:30 PM")],
    },
}
