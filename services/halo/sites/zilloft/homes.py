"""Zilloft's store (what /finish diffs) and the operations the pages perform on it.

Store slices, shaped after what agisdk's zilloft eval scripts read:

    config.zilloft              {run_id, task_id}: written when the app first loads after /config, so it
                                shows under initialfinaldiff.added (zilloft-3 requires a non-empty run_id there)
    router.location             the page the app shows ({pathname, search}, without the /zilloft prefix)
    search.usersSearchTerm      the place typed in the search box; search.region what it resolved to
    search.filters              minPrice / maxPrice / minBeds / maxBeds (= minBeds with "Use exact match") /
                                minBaths / homeTypes / minSqft / maxSqft / sortBy, None when not set
    favorites                   savedHomes (zpids), savedSearches
    tourRequests.requestTourList   [{id, createdAt, zpid, home, requestTourData: {tourType, options: [{date, time}],
                                     formValues: {name, email, phone, message}}}]
    tourRequests.contactAgentList  [{id, createdAt, zpid, home, agent, contactAgentData: {formValues: {...},
                                     selectedDate: {date, time} | None, reason}}]

`differences` (the other half of /finish) lists the requests added in this session under
`requestTours.added` and `contactAgents.added`, keyed "0", "1", ... (agisdk's v1 zilloft tasks query
`differences.requestTours.added."0".requestTourData.formValues.name`).

Dates are plain "YYYY-MM-DD" days and times "1:00 PM"; `createdAt` is an ISO timestamp on the
site's fixed clock (Thursday, July 18, 2024: "tomorrow" is July 19, as in REAL's Zilloft), and it
comes first in each request because zilloft-14 takes "today" from the first timestamp it meets.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from halo.sites.zilloft.listings import Agent, Filters, Listing, Place

#: The site's "today" (REAL's Zilloft was recorded on Thursday, July 18, 2024).
TODAY = date(2024, 7, 18)
CLOCK = datetime(2024, 7, 18, 17, 0, 0)        # 10:00 AM in California, in UTC
TOUR_DAYS = 7                                  # tours can be booked from tomorrow for a week
TOUR_TIMES: tuple[str, ...] = tuple(
    f"{(h - 1) % 12 + 1}:{m:02d} {'AM' if h < 12 else 'PM'}" for h in range(9, 19) for m in (0, 30)
) + ("7:00 PM",)
USER = {"name": "Jordan Rivera", "email": "jordan.rivera@example.com", "phone": "(415) 555-0182"}
_IDS = uuid.UUID("6f1c2a4e-9b1d-4c55-8e7a-2f4d0c9b7a10")


@dataclass(frozen=True)
class TourDay:
    iso: str          # "2024-07-19"
    weekday: str      # "Fri"
    month: str        # "Jul"
    day: int
    long: str         # "Friday, July 19"
    tomorrow: bool


def tour_days() -> list[TourDay]:
    days = []
    for offset in range(1, TOUR_DAYS + 1):
        d = TODAY + timedelta(days=offset)
        days.append(TourDay(d.isoformat(), f"{d:%a}", f"{d:%b}", d.day, f"{d:%A}, {d:%B} {d.day}", offset == 1))
    return days


TOUR_DAY_BY_ISO = {d.iso: d for d in tour_days()}


def day_label(iso: str) -> str:
    d = date.fromisoformat(iso)
    return f"{d:%a}, {d:%b} {d.day}"


def default_message(l: Listing) -> str:
    return f"I am interested in {l.address}."


def initial_state() -> dict[str, Any]:
    return {
        "config": {},
        "router": {"location": {"pathname": "/", "search": "", "hash": ""}},
        "user": {"isLoggedIn": True, **USER},
        "search": {
            "usersSearchTerm": "",
            "region": None,
            "filters": {
                "minPrice": None, "maxPrice": None, "minBeds": None, "maxBeds": None, "minBaths": None,
                "homeTypes": [], "minSqft": None, "maxSqft": None, "sortBy": "featured",
            },
        },
        "favorites": {"savedHomes": [], "savedSearches": []},
        "tourRequests": {"requestTourList": [], "contactAgentList": []},
    }


# --- app boot, router, search -------------------------------------------------------------------

def boot(state: dict[str, Any], run_id: str, task_id: str) -> None:
    """The app reads its run configuration on its first page load (REAL's Zilloft keeps it in the store)."""
    if "zilloft" not in state["config"]:
        state["config"]["zilloft"] = {"run_id": run_id, "task_id": task_id}


def set_location(state: dict[str, Any], pathname: str, search: str = "") -> None:
    state["router"]["location"] = {"pathname": pathname, "search": search, "hash": ""}


def apply_search(state: dict[str, Any], place: Place | None, f: Filters) -> None:
    """The results page shows `f` for the typed place: the store's search slice follows it."""
    search = state["search"]
    search["usersSearchTerm"] = f.query
    search["region"] = place.as_store() if place is not None else None
    search["filters"] = {
        "minPrice": f.min_price, "maxPrice": f.max_price, "minBeds": f.min_beds, "maxBeds": f.max_beds,
        "minBaths": (int(f.min_baths) if f.min_baths is not None and f.min_baths.is_integer() else f.min_baths),
        "homeTypes": list(f.home_types), "minSqft": f.min_sqft, "maxSqft": f.max_sqft, "sortBy": f.sort,
    }


# --- favorites ------------------------------------------------------------------------------------

def is_saved(state: dict[str, Any], zpid: str) -> bool:
    return zpid in state["favorites"]["savedHomes"]


def toggle_saved(state: dict[str, Any], zpid: str) -> bool:
    """Save or unsave a home; True when it is saved afterwards."""
    saved = state["favorites"]["savedHomes"]
    if zpid in saved:
        saved.remove(zpid)
        return False
    saved.append(zpid)
    return True


def save_search(state: dict[str, Any], name: str, query: str) -> bool:
    searches = state["favorites"]["savedSearches"]
    if any(s["query"] == query for s in searches):
        return False
    searches.append({"name": name, "query": query, "createdAt": _timestamp(len(searches))})
    return True


# --- tour requests and agent messages -------------------------------------------------------------

class FormError(ValueError):
    """A request the form refuses, with one message per field."""

    def __init__(self, errors: dict[str, str]) -> None:
        super().__init__("; ".join(errors.values()))
        self.errors = errors


_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$", re.I)


def _check_contact(values: dict[str, str], errors: dict[str, str], need_message: bool = False) -> dict[str, str]:
    name, email, phone, message = (values.get(k, "").strip() for k in ("name", "email", "phone", "message"))
    if not name:
        errors["name"] = "Enter your name"
    if not _EMAIL.match(email):
        errors["email"] = "Enter a valid email address"
    if len(re.sub(r"\D", "", phone)) < 10:
        errors["phone"] = "Enter a 10-digit phone number"
    if need_message and not message:
        errors["message"] = "Write a message"
    return {"name": name, "email": email, "phone": phone, "message": message}


def _timestamp(index: int) -> str:
    return (CLOCK + timedelta(minutes=3 * index)).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _new_id(kind: str, index: int, key: str) -> str:
    return str(uuid.uuid5(_IDS, f"{kind}:{index}:{key}"))


def _request_count(state: dict[str, Any]) -> int:
    requests = state["tourRequests"]
    return len(requests["requestTourList"]) + len(requests["contactAgentList"])


def request_tour(state: dict[str, Any], l: Listing, day: str, time: str, tour_type: str, values: dict[str, str]) -> dict[str, Any]:
    errors: dict[str, str] = {}
    if day not in TOUR_DAY_BY_ISO:
        errors["date"] = "Select a date"
    if time not in TOUR_TIMES:
        errors["time"] = "Select a time"
    form = _check_contact(values, errors)
    if not form["message"]:
        form["message"] = default_message(l)
    if errors:
        raise FormError(errors)
    index = _request_count(state)
    entry = {
        "id": _new_id("tour", index, l.zpid),
        "createdAt": _timestamp(index),
        "zpid": l.zpid,
        "home": l.summary(),
        "requestTourData": {
            "tourType": "Video chat" if tour_type == "video" else "In person",
            "options": [{"date": day, "time": time}],
            "formValues": form,
        },
    }
    state["tourRequests"]["requestTourList"].append(entry)
    return entry


def contact_agent(state: dict[str, Any], agent: Agent, values: dict[str, str], *, l: Listing | None = None,
                  day: str = "", time: str = "", reason: str = "") -> dict[str, Any]:
    """A message to an agent, from a listing (optionally with a preferred tour time) or from the agent finder."""
    errors: dict[str, str] = {}
    if bool(day) != bool(time):
        errors["date" if not day else "time"] = "Pick both a tour date and a time, or neither"
    elif day and day not in TOUR_DAY_BY_ISO:
        errors["date"] = "Select a date"
    elif time and time not in TOUR_TIMES:
        errors["time"] = "Select a time"
    form = _check_contact(values, errors, need_message=l is None)
    if l is not None and not form["message"]:
        form["message"] = default_message(l)
    if errors:
        raise FormError(errors)
    index = _request_count(state)
    entry = {
        "id": _new_id("contact", index, l.zpid if l else agent.id),
        "createdAt": _timestamp(index),
        "zpid": l.zpid if l else None,
        "home": l.summary() if l else None,
        "agent": {"id": agent.id, "name": agent.name, "brokerage": agent.brokerage, "phone": agent.phone},
        "contactAgentData": {
            "formValues": form,
            "selectedDate": {"date": day, "time": time} if day else None,
            "reason": reason or ("Question about a listing" if l else "Hiring an agent"),
        },
    }
    state["tourRequests"]["contactAgentList"].append(entry)
    return entry


def new_entries(initial: dict[str, Any], state: dict[str, Any], key: str) -> list[dict[str, Any]]:
    return state["tourRequests"][key][len(initial["tourRequests"][key]):]


def differences(initial: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    def section(key: str) -> dict[str, Any]:
        return {"added": {str(i): e for i, e in enumerate(new_entries(initial, state, key))}, "updated": {}, "deleted": {}}

    return {"requestTours": section("requestTourList"), "contactAgents": section("contactAgentList")}

