"""Near misses for the grader audit (`halo tasks audit`, docs/reference/graders.md).

A near miss is what a careful reviewer writes from the goal alone: the wrong item, the wrong
count, the wrong date or time, a text that contradicts the goal, half of a multi-part request.
Each is a list of UI actions in the oracles' vocabulary (halo.sites.oracle), run through the env
service like any attempt. Unlike a replica's `wrong_attempts` (near misses that agisdk's script
already rejects, each verified to score 0), these are the ones the audit found agisdk *accepts*:
they stay here as the audit's record and as the cases HALO's strict checks
(configs/strict_checks.yaml) must reject.

The audit runs both sets: every labelled near miss of a task must score 0 under strict success.
"""

from __future__ import annotations

from halo.sites.networkin.oracles import post
from halo.sites.opendining.oracles import AMERICAN, ITALIAN, book, find
from halo.sites.oracle import WrongAttempts
from halo.sites.staynb.oracles import AUSTRIA, PROVENCE, SAN_FRANCISCO, VANCOUVER_TRIP, dates, filters, trip, who
from halo.sites.topwork.oracles import remove

TOMORROW = "2024-07-19"   # the replicas' today is 2024-07-18

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
}


def near_misses_for(task_id: str) -> WrongAttempts:
    return NEAR_MISSES.get(task_id, {})
