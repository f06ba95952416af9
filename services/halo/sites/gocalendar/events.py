"""GoCalendar's store and every change made to it (create, edit, delete, undo, tasks), plus /finish's
`differences`.

Store slices (shaped after what agisdk's gocalendar eval scripts read):

    calendar.events         id -> event; an event is
                            {id, title, start, end, allDay, location, description, guests,
                             recurrence, exdates, calendarId, color, meetingId, organizer,
                             createdAt, updatedAt}
                            with start/end in UTC ("2024-07-18T02:00:00.000Z"). All-day events
                            run from the local midnight of their first day to that of their last
                            day (inclusive), so the dates read off the strings are the first and
                            last day (eval_gocalendar_13 reads `start[:10]`, `end[:10]`).
    calendar.myTasks        id -> task {id, title, start, allDay, description, completed, list, ...}
                            (eval_gocalendar_8 reads initialfinaldiff.added.calendar.myTasks)
    calendar.deletedEvents  the bin: deleted events, newest last (eval_gocalendar_23 also reads
                            initialfinaldiff.added.calendar.deletedEvents); Undo takes them back
    calendar.calendars      the sidebar's calendars
    ui.snackbar             {message, open, undo}: the last confirmation and what Undo reverts

`differences.events` is {added, updated, deleted}, each id -> the whole event (the scripts read
`title`, `start`, `end`, `location`, `allDay` off the values; deleted ones as they were).
"""

from __future__ import annotations

import copy
import hashlib
import re
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import Any

from halo.sites.gocalendar import recurrence
from halo.sites.gocalendar.clock import clock, from_iso, local, midnight_iso, parse_clock, parse_day, to_iso
from halo.sites.gocalendar.data import (
    CALENDARS, CONTACTS, EVENT_COLORS, FIRST_NEW_ID, NOW, SEED_EVENTS, SEED_TASKS, USER, Person, SeedEvent, SeedTask,
)

Event = dict[str, Any]
State = dict[str, Any]

NOW_ISO = to_iso(NOW)


class CalendarError(ValueError):
    """A user-facing problem with a request (shown on the page)."""


# --- the initial store ---------------------------------------------------------------------


def meeting_id(event_id: str) -> str:
    """A Meet code ("abc-defg-hij") derived from the id. eval_gocalendar_6 ignores one specific
    code ending in "gcx-svpg-dny" (a mislabelled sample), so no event may get that one."""
    salt = 0
    while True:
        digest = hashlib.sha1(f"{event_id}:{salt}".encode()).hexdigest()
        letters = "".join(chr(ord("a") + int(digest[i : i + 2], 16) % 26) for i in range(0, 20, 2))
        code = f"{letters[:3]}-{letters[3:7]}-{letters[7:10]}"
        if not code.endswith("gcx-svpg-dny"):
            return code
        salt += 1


def _contact(name: str) -> Person:
    return next(p for p in CONTACTS if p.name == name)


def guest_entry(person: Person) -> dict[str, str]:
    return {"name": person.name, "email": person.email, "status": "needsAction"}


def _seed_event(seed: SeedEvent) -> Event:
    first = parse_day(seed.day)
    if seed.start:
        start, end = to_iso(local(first, time.fromisoformat(seed.start))), to_iso(local(first, time.fromisoformat(seed.end)))
    else:
        start, end = midnight_iso(first), midnight_iso(parse_day(seed.last_day or seed.day))
    event_id = f"event-{seed.id}"
    guests = [dict(guest_entry(_contact(n)), status="accepted") for n in seed.guests]
    return {
        "id": event_id,
        "title": seed.title,
        "start": start,
        "end": end,
        "allDay": not seed.start,
        "location": seed.location,
        "description": seed.description,
        "guests": guests,
        "recurrence": seed.recurrence or None,
        "exdates": [],
        "calendarId": seed.calendar,
        "color": seed.color,
        "meetingId": meeting_id(event_id) if seed.calendar == "primary" else None,
        "organizer": USER.email if seed.calendar == "primary" else "",
        "createdAt": seed.created,
        "updatedAt": seed.created,
    }


def _seed_task(seed: SeedTask) -> Event:
    day = parse_day(seed.day)
    start = to_iso(local(day, time.fromisoformat(seed.time))) if seed.time else midnight_iso(day)
    return {
        "id": f"task-{seed.id}",
        "title": seed.title,
        "start": start,
        "allDay": not seed.time,
        "description": seed.description,
        "completed": seed.completed,
        "list": "My Tasks",
        "createdAt": "2024-07-08T16:00:00.000Z",
        "updatedAt": "2024-07-08T16:00:00.000Z",
    }


def initial_state() -> State:
    return {
        "user": {"name": USER.name, "email": USER.email, "timeZone": "America/Los_Angeles"},
        "calendar": {
            "calendars": [{"id": cid, "name": name, "color": color} for cid, name, color, _ in CALENDARS],
            "events": {e["id"]: e for e in map(_seed_event, SEED_EVENTS)},
            "myTasks": {t["id"]: t for t in map(_seed_task, SEED_TASKS)},
            "deletedEvents": [],
        },
        "ui": {"snackbar": {"message": "", "open": False, "undo": None}},
    }


def differences(initial: State, state: State) -> dict[str, Any]:
    before, after = initial["calendar"]["events"], state["calendar"]["events"]
    return {
        "events": {
            "added": {eid: copy.deepcopy(ev) for eid, ev in after.items() if eid not in before},
            "updated": {eid: copy.deepcopy(ev) for eid, ev in after.items() if eid in before and before[eid] != ev},
            "deleted": {eid: copy.deepcopy(ev) for eid, ev in before.items() if eid not in after},
        }
    }


# --- the editor's form ---------------------------------------------------------------------


@dataclass
class EventForm:
    """What the event/task editor posts (all text, as typed)."""

    kind: str = "event"           # "event" | "task"
    title: str = ""
    start_date: str = ""
    start_time: str = ""
    end_date: str = ""
    end_time: str = ""
    all_day: bool = False
    repeat: str = ""              # a recurrence.REPEAT_CHOICES value, or "keep" (an existing custom rule)
    location: str = ""
    description: str = ""
    guests: str = ""              # "Priya Shah, nina.lopez@example.com"
    color: str = ""               # an EVENT_COLORS name, or "" (the calendar's colour)
    errors: list[str] = field(default_factory=list)

    @classmethod
    def from_event(cls, event: Event) -> "EventForm":
        start, end = from_iso(event["start"]), from_iso(event["end"])
        rule = event.get("recurrence") or ""
        choice = recurrence.choice_of(rule, start.date()) if rule else ""
        return cls(
            kind="event", title=event["title"], start_date=start.date().isoformat(), end_date=end.date().isoformat(),
            start_time=_clock_text(start), end_time=_clock_text(end), all_day=bool(event["allDay"]),
            repeat=choice if choice is not None else "keep", location=event["location"],
            description=event["description"], guests=", ".join(g["name"] or g["email"] for g in event["guests"]),
            color=event.get("color", ""),
        )

    @classmethod
    def from_task(cls, task: Event) -> "EventForm":
        start = from_iso(task["start"])
        return cls(kind="task", title=task["title"], start_date=start.date().isoformat(),
                   start_time="" if task["allDay"] else _clock_text(start), all_day=bool(task["allDay"]),
                   description=task["description"])

    @classmethod
    def new(cls, kind: str, day: date, at: time | None = None) -> "EventForm":
        """A fresh editor: Google proposes the next half hour for an hour (10:30am at the replica's 10:00am)."""
        start = local(day, at or time(10, 30))
        end = start + timedelta(hours=1)
        return cls(kind=kind, start_date=day.isoformat(), start_time=_clock_text(start),
                   end_date=end.date().isoformat(), end_time=_clock_text(end))


def _clock_text(moment: datetime) -> str:
    return clock(moment)


def resolve_guests(text: str) -> list[dict[str, str]]:
    """Comma-separated names, first or last names (when unique) or addresses -> guest entries."""
    guests: list[dict[str, str]] = []
    for raw in (part.strip() for part in re.split(r"[,;\n]", text or "")):
        if not raw:
            continue
        m = re.search(r"<([^>]+)>", raw)
        wanted = (m.group(1) if m else raw).strip().lower()
        found = [p for p in CONTACTS if wanted in (p.email.lower(), p.name.lower())]
        if not found:  # a first or last name on its own
            found = [p for p in CONTACTS if wanted in p.name.lower().split()]
        if len(found) == 1:
            person = found[0]
        elif "@" in wanted and re.fullmatch(r"[^@\s]+@[^@\s]+\.[a-z]{2,}", wanted):
            person = Person("", wanted)
        elif found:
            raise CalendarError(f'"{raw}" matches several contacts: {", ".join(p.name for p in found)}.')
        else:
            raise CalendarError(f'No contact or email address matches "{raw}".')
        if all(g["email"] != person.email for g in guests):
            guests.append(guest_entry(person))
    return guests


def _parse_date(text: str, what: str) -> date:
    try:
        return parse_day(text.strip())
    except ValueError:
        raise CalendarError(f"Enter a valid {what} (YYYY-MM-DD).") from None


def _parse_time(text: str, what: str) -> time:
    parsed = parse_clock(text)
    if parsed is None:
        raise CalendarError(f'Enter a valid {what}, like "7:45pm".')
    return parsed


def _event_fields(form: EventForm, existing: Event | None) -> Event:
    title = " ".join(form.title.split())[:200]
    first = _parse_date(form.start_date, "start date")
    if form.all_day:
        last = _parse_date(form.end_date, "end date") if form.end_date.strip() else first
        if last < first:
            raise CalendarError("The end date must not be before the start date.")
        start, end = midnight_iso(first), midnight_iso(last)
    else:
        begin = local(first, _parse_time(form.start_time, "start time"))
        last = _parse_date(form.end_date, "end date") if form.end_date.strip() else first
        finish = local(last, _parse_time(form.end_time, "end time"))
        if finish <= begin:
            raise CalendarError("The event must end after it starts.")
        start, end = to_iso(begin), to_iso(finish)
    if form.repeat == "keep" and existing is not None and existing.get("recurrence"):
        rule = existing["recurrence"]
    elif form.repeat in recurrence.REPEAT_CHOICES:
        rule = recurrence.rule_for(form.repeat, first)
    else:
        raise CalendarError("Choose how the event repeats.")
    if form.color and form.color not in EVENT_COLORS:
        raise CalendarError(f"Unknown colour {form.color!r}.")
    guests = resolve_guests(form.guests)
    if existing is not None:  # keep the answers of guests who stay invited
        answered = {g["email"]: g["status"] for g in existing["guests"]}
        guests = [dict(g, status=answered.get(g["email"], g["status"])) for g in guests]
    same_rule = existing is not None and rule == (existing.get("recurrence") or "")
    return {
        "title": title, "start": start, "end": end, "allDay": form.all_day,
        "location": " ".join(form.location.split())[:300], "description": form.description.strip()[:4000],
        "guests": guests, "recurrence": rule or None,
        "exdates": list(existing.get("exdates", [])) if same_rule and existing is not None else [],
        "color": form.color,
    }


def _task_fields(form: EventForm) -> Event:
    day = _parse_date(form.start_date, "date")
    if form.all_day or not form.start_time.strip():
        start, all_day = midnight_iso(day), True
    else:
        start, all_day = to_iso(local(day, _parse_time(form.start_time, "time"))), False
    return {"title": " ".join(form.title.split())[:200], "start": start, "allDay": all_day,
            "description": form.description.strip()[:4000]}


# --- changing the store --------------------------------------------------------------------


def notify(state: State, message: str, undo: dict[str, Any] | None = None) -> None:
    state["ui"]["snackbar"] = {"message": message, "open": True, "undo": undo}


def _next_id(state: State, prefix: str) -> str:
    cal = state["calendar"]
    ids = [*cal["events"], *cal["myTasks"], *(e["id"] for e in cal["deletedEvents"])]
    numbers = [int(m.group(1)) for i in ids if (m := re.search(r"-(\d+)$", i))]
    return f"{prefix}-{max([FIRST_NEW_ID - 1, *numbers]) + 1}"


def create(state: State, form: EventForm) -> Event:
    """A new event or task from the editor; returns it."""
    if form.kind == "task":
        task_id = _next_id(state, "task")
        task = {"id": task_id, **_task_fields(form), "completed": False, "list": "My Tasks",
                "createdAt": NOW_ISO, "updatedAt": NOW_ISO}
        state["calendar"]["myTasks"][task_id] = task
        notify(state, "Task created")
        return task
    event_id = _next_id(state, "event")
    event = {"id": event_id, **_event_fields(form, None), "calendarId": "primary", "meetingId": meeting_id(event_id),
             "organizer": USER.email, "createdAt": NOW_ISO, "updatedAt": NOW_ISO}
    order = ["id", "title", "start", "end", "allDay", "location", "description", "guests", "recurrence", "exdates",
             "calendarId", "color", "meetingId", "organizer", "createdAt", "updatedAt"]
    event = {key: event[key] for key in order}
    state["calendar"]["events"][event_id] = event
    notify(state, "Event saved")
    return event


def update(state: State, item_id: str, form: EventForm) -> Event:
    cal = state["calendar"]
    if item_id in cal["myTasks"]:
        task = cal["myTasks"][item_id]
        changed = _task_fields(form)
        if any(task[k] != v for k, v in changed.items()):
            task.update(changed, updatedAt=NOW_ISO)
        notify(state, "Task saved")
        return task
    event = get_event(state, item_id)
    if event["calendarId"] != "primary":
        raise CalendarError("Events from this calendar can't be changed.")
    changed = _event_fields(form, event)
    if any(event[k] != v for k, v in changed.items()):
        event.update(changed, updatedAt=NOW_ISO)
    notify(state, "Event saved")
    return event


def get_event(state: State, event_id: str) -> Event:
    event = state["calendar"]["events"].get(event_id)
    if event is None:
        raise CalendarError("This event no longer exists.")
    return event


def delete_event(state: State, event_id: str, scope: str = "all", on: str = "") -> None:
    """Delete an event; for a repeating one, `scope` is "this" (the occurrence on `on`), "following" or "all"."""
    event = get_event(state, event_id)
    if event["calendarId"] != "primary":
        raise CalendarError("Events from this calendar can't be deleted.")
    rule = event.get("recurrence") or ""
    first_day = from_iso(event["start"]).date()
    if rule and scope in ("this", "following"):
        try:
            day = parse_day(on)
        except ValueError:
            raise CalendarError("Choose which occurrence to delete.") from None
        if not recurrence.falls_on(rule, first_day, day, event["exdates"]):
            raise CalendarError("The event does not occur on that day.")
        touched = event["updatedAt"]
        if scope == "this":
            event["exdates"] = [*event["exdates"], day.isoformat()]
            event["updatedAt"] = NOW_ISO
            notify(state, "Event deleted", {"id": event_id, "scope": "this", "on": day.isoformat(), "updatedAt": touched})
            return
        if day > first_day:
            event["recurrence"] = recurrence.with_until(rule, day - timedelta(days=1))
            event["updatedAt"] = NOW_ISO
            notify(state, "Events deleted", {"id": event_id, "scope": "following", "recurrence": rule, "updatedAt": touched})
            return
    elif scope not in ("all", "this", "following"):
        raise CalendarError(f"Unknown scope {scope!r}.")
    del state["calendar"]["events"][event_id]
    state["calendar"]["deletedEvents"].append(event)
    notify(state, "Events deleted" if rule else "Event deleted", {"id": event_id, "scope": "all"})


def undo(state: State) -> None:
    """Revert the deletion the snackbar offered to undo."""
    info = state["ui"]["snackbar"].get("undo")
    if not info:
        raise CalendarError("Nothing to undo.")
    cal = state["calendar"]
    event_id = info["id"]
    if info["scope"] == "all":
        binned = [e for e in cal["deletedEvents"] if e["id"] == event_id]
        if not binned:
            raise CalendarError("Nothing to undo.")
        cal["deletedEvents"] = [e for e in cal["deletedEvents"] if e["id"] != event_id]
        cal["events"][event_id] = binned[-1]
    else:
        event = get_event(state, event_id)
        if info["scope"] == "this":
            event["exdates"] = [d for d in event["exdates"] if d != info["on"]]
        else:
            event["recurrence"] = info["recurrence"]
        event["updatedAt"] = info["updatedAt"]
    notify(state, "Action undone")


def toggle_task(state: State, task_id: str) -> Event:
    task = state["calendar"]["myTasks"].get(task_id)
    if task is None:
        raise CalendarError("This task no longer exists.")
    task["completed"] = not task["completed"]
    task["updatedAt"] = NOW_ISO
    notify(state, "Task completed" if task["completed"] else "Task marked incomplete")
    return task


def delete_task(state: State, task_id: str) -> None:
    if state["calendar"]["myTasks"].pop(task_id, None) is None:
        raise CalendarError("This task no longer exists.")
    notify(state, "Task deleted")


# --- reading the store: occurrences in a range ---------------------------------------------


@dataclass(frozen=True)
class Occurrence:
    """One appearance of an event (or task) on the calendar."""

    item: Event
    kind: str                 # "event" | "task"
    start: datetime           # local
    end: datetime             # local (all-day: midnight of the last day)
    all_day: bool
    on: date                  # the day it starts (the key of `exdates`)

    @property
    def first_day(self) -> date:
        return self.start.date()

    @property
    def last_day(self) -> date:
        """The last day it covers (an event ending at midnight does not cover the next day)."""
        if self.all_day:
            return self.end.date()
        return (self.end - timedelta(microseconds=1)).date() if self.end > self.start else self.start.date()

    def covers(self, day: date) -> bool:
        return self.first_day <= day <= self.last_day

    @property
    def multi_day(self) -> bool:
        return self.all_day or self.last_day > self.first_day and (self.end - self.start) >= timedelta(hours=24)


def _event_occurrences(event: Event, first: date, last: date) -> list[Occurrence]:
    start, end = from_iso(event["start"]), from_iso(event["end"])
    rule = event.get("recurrence") or ""
    all_day = bool(event["allDay"])
    span_days = (end.date() - start.date()).days
    if not rule:
        occ = Occurrence(event, "event", start, end, all_day, start.date())
        return [occ] if occ.first_day <= last and occ.last_day >= first else []
    out = []
    day = first - timedelta(days=span_days)
    while day <= last:
        if recurrence.falls_on(rule, start.date(), day, event.get("exdates", [])):
            begin = local(day, start.timetz().replace(tzinfo=None))
            finish = begin + (end - start) if not all_day else local(day + timedelta(days=span_days))
            occ = Occurrence(event, "event", begin, finish, all_day, day)
            if occ.last_day >= first:
                out.append(occ)
        day += timedelta(days=1)
    return out


def _task_occurrence(task: Event) -> Occurrence:
    start = from_iso(task["start"])
    end = start if task["allDay"] else start + timedelta(minutes=30)
    return Occurrence(task, "task", start, end, bool(task["allDay"]), start.date())


def occurrences(state: State, first: date, last: date) -> list[Occurrence]:
    """Everything on the calendar between two days (inclusive), in display order."""
    cal = state["calendar"]
    found = [occ for event in cal["events"].values() for occ in _event_occurrences(event, first, last)]
    found += [occ for occ in map(_task_occurrence, cal["myTasks"].values()) if occ.first_day <= last and occ.last_day >= first]
    return sorted(found, key=lambda o: (not o.all_day, o.start, -(o.end - o.start).total_seconds(), o.item["title"]))


def find_occurrence(state: State, item_id: str, on: str) -> Occurrence | None:
    cal = state["calendar"]
    if item_id in cal["myTasks"]:
        return _task_occurrence(cal["myTasks"][item_id])
    event = cal["events"].get(item_id)
    if event is None:
        return None
    try:
        day = parse_day(on)
    except ValueError:
        day = from_iso(event["start"]).date()
    for occ in _event_occurrences(event, day, day):
        if occ.on == day:
            return occ
    found = _event_occurrences(event, from_iso(event["start"]).date(), from_iso(event["start"]).date())
    return found[0] if found else None


def search(state: State, text: str, around: date) -> list[Occurrence]:
    """Events and tasks whose title, location, description or guests contain every word; a repeating
    event shows its next occurrence on or after `around` (within a year), else its first."""
    words = [w.lower() for w in text.split()]
    if not words:
        return []
    cal = state["calendar"]
    hits: list[Occurrence] = []
    for item in [*cal["events"].values(), *cal["myTasks"].values()]:
        haystack = " ".join([item["title"], item.get("location", ""), item.get("description", ""),
                             *(f"{g['name']} {g['email']}" for g in item.get("guests", []))]).lower()
        if not all(w in haystack for w in words):
            continue
        if item["id"] in cal["myTasks"]:
            hits.append(_task_occurrence(item))
            continue
        if item.get("recurrence"):
            upcoming = _event_occurrences(item, around, around + timedelta(days=366))
            hits.append(upcoming[0] if upcoming else _event_occurrences(item, from_iso(item["start"]).date(), from_iso(item["start"]).date())[0])
        else:
            hits.extend(_event_occurrences(item, date.min, date.max))
    return sorted(hits, key=lambda o: o.start)
