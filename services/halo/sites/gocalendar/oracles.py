"""Oracles (UI-only solutions) and plausible wrong attempts for the 10 REAL v2 GoCalendar tasks.

Targets name elements the way the AXTree shows them: the Create menu and the editor's labelled
fields ("Add title", "Start date", "Start time", "Repeat", ...), event chips by
"<title>, <time>, <weekday>, <month> <day>", the event card's "Delete event"/"Edit event".
"""

from __future__ import annotations

from halo.agent import actions as A
from halo.sites.oracle import OracleStep, Target, WrongAttempts

SAVE = Target("button", "Save")
DELETE = Target("button", "Delete event")


def new_event(title: str, *, day: str = "", start: str = "", end: str = "", end_day: str = "", all_day: bool = False,
              repeat: str = "", location: str = "") -> list[OracleStep]:
    """Create > Event, fill the editor (the end date follows the start date by itself), Save."""
    steps: list[OracleStep] = [A.ClickElement(Target("button", "Create")), A.ClickElement(Target("menuitem", "Event")),
                               A.Fill(Target("textbox", "Add title"), title)]
    if all_day:
        steps.append(A.ClickElement(Target("checkbox", "All day")))
    if day:
        steps.append(A.Fill(Target("textbox", "Start date"), day))
    if start:
        steps.append(A.Fill(Target("textbox", "Start time"), start))
    if end:
        steps.append(A.Fill(Target("textbox", "End time"), end))
    if end_day:
        steps.append(A.Fill(Target("textbox", "End date"), end_day))
    if repeat:
        steps.append(A.SelectOption(Target("combobox", "Repeat"), (repeat,)))
    if location:
        steps.append(A.Fill(Target("textbox", "Add location"), location))
    return [*steps, A.ClickElement(SAVE)]


def new_task(title: str, day: str, at: str) -> list[OracleStep]:
    return [A.ClickElement(Target("button", "Create")), A.ClickElement(Target("menuitem", "Task")),
            A.Fill(Target("textbox", "Add title"), title), A.Fill(Target("textbox", "Date"), day),
            A.Fill(Target("textbox", "Time"), at), A.ClickElement(SAVE)]


def open_chip(name: str) -> OracleStep:
    return A.ClickElement(Target("button", contains=name))


def delete_chip(name: str) -> list[OracleStep]:
    return [open_chip(name), A.ClickElement(DELETE)]


def search_and_delete(text: str, name: str) -> list[OracleStep]:
    return [A.ClickElement(Target("button", "Search events")), A.Fill(Target("searchbox", "Search"), text), A.KeyPress("Enter"),
            *delete_chip(name)]


WEEKDAYS = "Every weekday (Monday to Friday)"

ORACLES: dict[str, list[OracleStep]] = {
    "gocalendar-4": new_event("Work out at the gym", day="2024-09-20", start="7:45pm", end="8:45pm", repeat=WEEKDAYS,
                              location="Gym"),
    "gocalendar-6": new_event("Pick up sister", day="2024-07-17", start="11:00am", end="12:00pm"),
    "gocalendar-8": new_task("Email Ashley", "2024-07-15", "9:00am"),
    "gocalendar-10": delete_chip("Dinner with friends, 7 – 9pm, Wednesday, July 17"),
    # agisdk's eval_gocalendar_11.py is empty: this solves the goal, but nothing can score it
    "gocalendar-11": new_event("Basketball game", start="7:00pm", end="9:00pm", location="San Francisco"),
    "gocalendar-12": new_event("Buy gym clothes", day="2024-07-15", start="9:00am", end="10:00am"),
    "gocalendar-13": new_event("Math camp", all_day=True, day="2024-07-21", end_day="2024-07-27", location="Sunnyvale"),
    # through the day view: the week header's date opens it
    "gocalendar-16": [A.ClickElement(Target("link", "Wednesday, July 17")), *delete_chip("Reading time, 9:30 – 10:30pm, Wednesday")],
    # through search
    "gocalendar-18": search_and_delete("coffee", "Coffee with sister, 8:30 – 9:30am, Thursday, July 18"),
    "gocalendar-23": delete_chip("Project Sync, 10 – 10:30am, Wednesday, July 17"),
}

WRONG_ATTEMPTS: dict[str, WrongAttempts] = {
    "gocalendar-4": {'7:45 in the morning instead of the evening': new_event("Work out at the gym", day="2024-09-20", start="7:45am", end="8:45am", repeat=WEEKDAYS,
                              location="Gym")},
    "gocalendar-6": {'11 at night': new_event("Pick up sister", day="2024-07-17", start="11:00pm", end="11:30pm")},
    "gocalendar-8": {'Monday evening, not morning': new_task("Email Ashley", "2024-07-15", "6:00pm")},
    "gocalendar-10": {'the other dinner of the week': delete_chip("Dinner with Mom and Dad, 6:30 – 8:30pm, Friday, July 19")},
    "gocalendar-11": {'the morning (unscorable either way: the script is empty)': new_event("Basketball game", start="7:00am", end="9:00am", location="San Francisco")},
    "gocalendar-12": {'a near-synonym that misses "gym"': new_event("Buy workout clothes", day="2024-07-15", start="9:00am", end="10:00am")},
    "gocalendar-13": {'forgets where the camp is': new_event("Math camp", all_day=True, day="2024-07-21", end_day="2024-07-27")},
    "gocalendar-16": {"moves Wednesday's reading earlier instead of cancelling it": [open_chip("Reading time, 9:30 – 10:30pm, Wednesday"), A.ClickElement(Target("link", "Edit event")),
                      A.Fill(Target("textbox", "Start time"), "8:30pm"), A.Fill(Target("textbox", "End time"), "9:30pm"),
                      A.ClickElement(SAVE)]},
    "gocalendar-18": {'the coffee with a friend': search_and_delete("coffee", "Coffee with Jordan, 3:30 – 4pm, Tuesday, July 16")},
    "gocalendar-23": {"Monday's project sync": delete_chip("Project Sync, 2 – 2:30pm, Monday, July 15")},
}
