"""Time in GoCalendar: the store keeps UTC ISO strings like REAL's clone ("2024-07-18T02:00:00.000Z");
pages show and forms take local times in the user's zone (America/Los_Angeles), the way Google
Calendar writes them ("7:45pm", "10 – 10:30am", "Wednesday, July 17")."""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta, timezone

from halo.sites.gocalendar.data import TZ


def to_iso(moment: datetime) -> str:
    """An aware datetime -> the store's UTC string with milliseconds."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def from_iso(text: str) -> datetime:
    """The store's UTC string -> an aware local datetime."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(TZ)


def local(day: date, at: time = time(0, 0)) -> datetime:
    return datetime.combine(day, at, tzinfo=TZ)


def midnight_iso(day: date) -> str:
    """All-day items are stored at the local midnight of their (first or last) day."""
    return to_iso(local(day))


def parse_day(text: str) -> date:
    return date.fromisoformat(text)


_TIME = re.compile(r"^\s*(\d{1,2})(?:[:.](\d{2}))?\s*([ap])?\.?\s*m?\.?\s*$", re.IGNORECASE)


def parse_clock(text: str) -> time | None:
    """What people type in a time box: "7:45pm", "7:45 PM", "19:45", "7pm", "noon", "midnight"."""
    raw = (text or "").strip().lower()
    if raw == "noon":
        return time(12, 0)
    if raw == "midnight":
        return time(0, 0)
    m = _TIME.match(raw)
    if not m:
        return None
    hour, minute, half = int(m.group(1)), int(m.group(2) or 0), m.group(3)
    if minute > 59:
        return None
    if half:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if half == "p" else 0)
    elif hour > 23:
        return None
    return time(hour, minute)


def clock(at: time | datetime, always_minutes: bool = True) -> str:
    """7:45pm, 7:00pm (or 7pm with always_minutes=False)."""
    hour = at.hour % 12 or 12
    suffix = "am" if at.hour < 12 else "pm"
    if at.minute or always_minutes:
        return f"{hour}:{at.minute:02d}{suffix}"
    return f"{hour}{suffix}"


def time_range(start: datetime, end: datetime) -> str:
    """Google's compact range: "7 – 9pm", "10 – 10:30am", "11:30am – 12:30pm"."""
    same_half = (start.hour < 12) == (end.hour < 12) and start.date() == end.date()
    first = clock(start, always_minutes=False)
    if same_half:
        first = first[:-2]
    return f"{first} – {clock(end, always_minutes=False)}"


def long_day(day: date) -> str:
    return f"{day.strftime('%A')}, {day.strftime('%B')} {day.day}"


def short_day(day: date) -> str:
    return f"{day.strftime('%a')}, {day.strftime('%b')} {day.day}"


def week_start(day: date) -> date:
    """Weeks start on Sunday (Google Calendar's US default)."""
    return day - timedelta(days=(day.weekday() + 1) % 7)


def hour_label(hour: int) -> str:
    return f"{hour % 12 or 12} {'AM' if hour < 12 else 'PM'}"
