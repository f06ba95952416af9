"""OpenDining's store: reservations and "notify me" requests, shaped as REAL's clone keeps them.

`booking` is present at /config as `{bookingDetails: []}` only: the first reservation *adds* the
top-level fields (index, date, time, guests, loading, bookingCompleted), so they land in
`added.booking`, and each reservation is appended to `bookingDetails` (a dict keyed "0", "1"...
in the diff, the form scripts 7, 9, 12, 17 and 24 read). `config.open_dining.error_booking` is
written only when a booking fails (opendining-1 fails if it is true).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from halo.sites.opendining.restaurants import OCCASIONS, Restaurant, guests_label, slot_grid

CONFIG_KEY = "open_dining"
USER = {"name": "Jordan Lee", "phone": "(415) 555-0142", "email": "jordan.lee@example.com"}


class BookingError(ValueError):
    """A reservation the restaurant cannot take (slot gone, party too large, day out of range)."""


def initial_state() -> dict[str, Any]:
    return {"config": {}, "booking": {"bookingDetails": []}, "notification": {"notifications": []}, "user": dict(USER)}


def iso_day(day: dt.date) -> str:
    return f"{day.isoformat()}T07:00:00.000Z"       # local midnight (PDT) as the browser's toISOString writes it


def reserve(state: dict[str, Any], r: Restaurant, day: dt.date, time: str, party: int, occasion: str,
            special_request: str) -> dict[str, Any]:
    if dict(slot_grid(r, day, party)).get(time) is not True:
        state["config"].setdefault(CONFIG_KEY, {})["error_booking"] = True
        raise BookingError(f"{r.name} has no table for {guests_label(party)} at {time} on {day:%B %-d, %Y}.")
    booking = state["booking"]
    detail = {"restaurant": r.as_store(), "date": iso_day(day), "time": time, "guests": guests_label(party),
              "optionals": {"occasion": occasion if occasion in OCCASIONS and occasion != "None" else "",
                            "specialRequest": special_request}}
    booking.update({"index": r.id, "date": detail["date"], "time": time, "guests": detail["guests"], "loading": False,
                    "bookingCompleted": True})
    booking["bookingDetails"].append(detail)
    return detail


def notify(state: dict[str, Any], r: Restaurant, day: dt.date, time: str, party: int) -> dict[str, Any]:
    entry = {"restaurantId": r.id, "restaurantName": r.name, "date": iso_day(day), "time": time,
             "guests": guests_label(party)}
    notifications = state["notification"]["notifications"]
    if entry not in notifications:
        notifications.append(entry)
    return entry
