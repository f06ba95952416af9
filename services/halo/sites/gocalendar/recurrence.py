"""Repeating events: the RRULE subset Google Calendar's "Does not repeat" menu writes, its labels, and
which days a rule falls on.

Rules are stored on the event like Google's API does (`"RRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR"`),
with skipped days in `exdates` (local dates) and "this and following" deletions as `UNTIL`.
"""

from __future__ import annotations

from datetime import date, timedelta

WEEKDAY_CODES = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
_WEEKDAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_ORDINALS = {1: "first", 2: "second", 3: "third", 4: "fourth", -1: "last"}

#: the editor's Repeat menu, in Google's order (values of the <select>)
REPEAT_CHOICES = ("", "daily", "weekly", "monthly", "yearly", "weekdays")


def _nth_weekday(day: date) -> int:
    """3 for the third Friday of its month, -1 when it is the last one and a fifth."""
    n = (day.day - 1) // 7 + 1
    return -1 if n == 5 else n


def rule_for(choice: str, start: date) -> str:
    """The RRULE a Repeat choice writes for an event starting on `start` ("" for no repetition)."""
    code = WEEKDAY_CODES[start.weekday()]
    match choice:
        case "":
            return ""
        case "daily":
            return "RRULE:FREQ=DAILY"
        case "weekly":
            return f"RRULE:FREQ=WEEKLY;BYDAY={code}"
        case "monthly":
            return f"RRULE:FREQ=MONTHLY;BYDAY={_nth_weekday(start)}{code}"
        case "yearly":
            return "RRULE:FREQ=YEARLY"
        case "weekdays":
            return "RRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR"
    raise ValueError(f"unknown repeat choice {choice!r}")


def choice_label(choice: str, start: date) -> str:
    """The menu text for a choice, as Google words it for that start date."""
    match choice:
        case "":
            return "Does not repeat"
        case "daily":
            return "Daily"
        case "weekly":
            return f"Weekly on {_WEEKDAY_NAMES[start.weekday()]}"
        case "monthly":
            return f"Monthly on the {_ORDINALS[_nth_weekday(start)]} {_WEEKDAY_NAMES[start.weekday()]}"
        case "yearly":
            return f"Annually on {start.strftime('%B')} {start.day}"
        case "weekdays":
            return "Every weekday (Monday to Friday)"
    raise ValueError(f"unknown repeat choice {choice!r}")


def choice_of(rule: str, start: date) -> str | None:
    """The Repeat choice that writes `rule` for this start date (None: a rule the menu cannot write)."""
    base = without_until(rule)
    for choice in REPEAT_CHOICES:
        if rule_for(choice, start) == base:
            return choice
    return None


def parse(rule: str) -> dict[str, str]:
    body = rule.removeprefix("RRULE:")
    return dict(part.split("=", 1) for part in body.split(";") if "=" in part)


def without_until(rule: str) -> str:
    if not rule:
        return ""
    parts = {k: v for k, v in parse(rule).items() if k != "UNTIL"}
    return "RRULE:" + ";".join(f"{k}={v}" for k, v in parts.items())


def with_until(rule: str, last: date) -> str:
    return f"{without_until(rule)};UNTIL={last.strftime('%Y%m%d')}"


def until(rule: str) -> date | None:
    raw = parse(rule).get("UNTIL")
    return date(int(raw[:4]), int(raw[4:6]), int(raw[6:8])) if raw else None


def falls_on(rule: str, start: date, day: date, exdates: list[str] | tuple[str, ...] = ()) -> bool:
    """Whether an event starting on `start` with this rule has an occurrence starting on `day`."""
    if not rule:
        return day == start
    if day < start or day.isoformat() in exdates:
        return False
    last = until(rule)
    if last is not None and day > last:
        return False
    parts = parse(rule)
    interval = int(parts.get("INTERVAL", "1"))
    freq = parts.get("FREQ", "")
    byday = [code for code in parts.get("BYDAY", "").split(",") if code]
    if freq == "DAILY":
        return (day - start).days % interval == 0
    if freq == "WEEKLY":
        codes = byday or [WEEKDAY_CODES[start.weekday()]]
        weeks = ((day - timedelta(days=day.weekday())) - (start - timedelta(days=start.weekday()))).days // 7
        return WEEKDAY_CODES[day.weekday()] in codes and weeks % interval == 0
    if freq == "MONTHLY":
        months = (day.year - start.year) * 12 + day.month - start.month
        if months % interval:
            return False
        if byday:
            for code in byday:
                nth, weekday = int(code[:-2] or "0"), code[-2:]
                if WEEKDAY_CODES[day.weekday()] != weekday:
                    continue
                if nth == 0:
                    return True
                if nth > 0 and (day.day - 1) // 7 + 1 == nth:
                    return True
                if nth == -1 and (day + timedelta(days=7)).month != day.month:
                    return True
            return False
        return day.day == int(parts.get("BYMONTHDAY", start.day))
    if freq == "YEARLY":
        return (day.month, day.day) == (start.month, start.day) and (day.year - start.year) % interval == 0
    return day == start


def describe(rule: str, start: date) -> str:
    """The event card's line: "Weekly on Saturday", "Every weekday (Monday to Friday)", "Monthly on day 1"."""
    if not rule:
        return ""
    choice = choice_of(rule, start)
    parts = parse(rule)
    if choice:
        text = choice_label(choice, start)
    elif parts.get("FREQ") == "MONTHLY" and "BYMONTHDAY" in parts:
        text = f"Monthly on day {parts['BYMONTHDAY']}"
    elif parts.get("FREQ") == "WEEKLY" and parts.get("BYDAY"):
        names = [_WEEKDAY_NAMES[WEEKDAY_CODES.index(c)] for c in parts["BYDAY"].split(",") if c in WEEKDAY_CODES]
        text = "Weekly on " + ", ".join(names)
    else:
        text = parts.get("FREQ", "Custom").capitalize()
    last = until(rule)
    if last is not None:
        text += f", until {last.strftime('%B')} {last.day}, {last.year}"
    return text
