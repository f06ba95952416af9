"""Oracles (UI-only solutions) and plausible wrong attempts for the 10 REAL v2 GoCalendar tasks.

Targets name elements the way the AXTree shows them: the Create menu and the editor's labelled
fields ("Add title", "Start date", "Start time", "Repeat", ...), event chips by
"<title>, <time>, <weekday>, <month> <day>", the event card's "Delete event"/"Edit event".
"""

from __future__ import annotations

from halo.sites.oracle import Choose, Click, FillIn, OracleStep, Target

SAVE = Target("button", "Save")
DELETE = Target("button", "Delete event")


def new_event(title: str, *, day: str = "", start: str = "", end: str = "", end_day: str = "", all_day: bool = False,
              repeat: str = "", location: str = "") -> list[OracleStep]:
    """Create > Event, fill the editor (the end date follows the start date by itself), Save."""
    steps: list[OracleStep] = [Click(Target("button", "Create")), Click(Target("menuitem", "Event")),
                               FillIn(Target("textbox", "Add title"), title)]
    if all_day:
        steps.append(Click(Target("checkbox", "All day")))
    if day:
        steps.append(FillIn(Target("textbox", "Start date"), day))
    if start:
        steps.append(FillIn(Target("textbox", "Start time"), start))
    if end:
        steps.append(FillIn(Target("textbox", "End time"), end))
    if end_day:
        steps.append(FillIn(Target("textbox", "End date"), end_day))
    if repeat:
        steps.append(Choose(Target("combobox", "Repeat"), (repeat,)))
    if location:
        steps.append(FillIn(Target("textbox", "Add location"), location))
    return [*steps, Click(SAVE)]


def new_task(title: str, day: str, at: str) -> list[OracleStep]:
    return [Click(Target("button", "Create")), Click(Target("menuitem", "Task")),
            FillIn(Target("textbox", "Add title"), title), FillIn(Target("textbox", "Date"), day),
            FillIn(Target("textbox", "Time"), at), Click(SAVE)]


def open_chip(name: str) -> OracleStep:
    return Click(Target("button", contains=name))


def delete_chip(name: str) -> list[OracleStep]:
    return [open_chip(name), Click(DELETE)]


def search_and_delete(text: str, name: str) -> list[OracleStep]:
    return [Click(Target("button", "Search events")), FillIn(Target("searchbox", "Search"), text, enter=True),
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
    "gocalendar-16": [Click(Target("link", "Wednesday, July 17")), *delete_chip("Reading time, 9:30 – 10:30pm, Wednesday")],
    # through search
    "gocalendar-18": search_and_delete("coffee", "Coffee with sister, 8:30 – 9:30am, Thursday, July 18"),
    "gocalendar-23": delete_chip("Project Sync, 10 – 10:30am, Wednesday, July 17"),
}

WRONG_ATTEMPTS: dict[str, list[OracleStep]] = {
    # 7:45 in the morning instead of the evening
    "gocalendar-4": new_event("Work out at the gym", day="2024-09-20", start="7:45am", end="8:45am", repeat=WEEKDAYS,
                              location="Gym"),
    # 11 at night
    "gocalendar-6": new_event("Pick up sister", day="2024-07-17", start="11:00pm", end="11:30pm"),
    # Monday evening, not morning
    "gocalendar-8": new_task("Email Ashley", "2024-07-15", "6:00pm"),
    # the other dinner of the week
    "gocalendar-10": delete_chip("Dinner with Mom and Dad, 6:30 – 8:30pm, Friday, July 19"),
    # the morning (unscorable either way: the script is empty)
    "gocalendar-11": new_event("Basketball game", start="7:00am", end="9:00am", location="San Francisco"),
    # a near-synonym that misses "gym"
    "gocalendar-12": new_event("Buy workout clothes", day="2024-07-15", start="9:00am", end="10:00am"),
    # forgets where the camp is
    "gocalendar-13": new_event("Math camp", all_day=True, day="2024-07-21", end_day="2024-07-27"),
    # moves Wednesday's reading earlier instead of cancelling it
    "gocalendar-16": [open_chip("Reading time, 9:30 – 10:30pm, Wednesday"), Click(Target("link", "Edit event")),
                      FillIn(Target("textbox", "Start time"), "8:30pm"), FillIn(Target("textbox", "End time"), "9:30pm"),
                      Click(SAVE)],
    # the coffee with a friend
    "gocalendar-18": search_and_delete("coffee", "Coffee with Jordan, 3:30 – 4pm, Tuesday, July 16"),
    # Monday's project sync
    "gocalendar-23": delete_chip("Project Sync, 2 – 2:30pm, Monday, July 15"),
}
