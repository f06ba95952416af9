"""StayNB's store: the applied search, wishlists, bookings and shares, shaped as REAL's clone keeps them.

- `search` is absent at /config and written whole by the first search, so every eval script finds
  the current search in `added.search` (applied destination, dates, guest counts, filters, and the
  recent searches).
- `booking` is present as `{isBooking, currentBooking, bookingDetails: {}, errors}`: Reserve sets
  isBooking / currentBooking, paying adds a confirmed booking under its code, a bad card fills
  `errors` (staynb-9/12/15 fail on any of these; staynb-5 on bookingDetails).
- `wishlist.wishlists` is present and empty (no seed wishlists): the heart creates a wishlist that
  holds its stays as a list (staynb-6 reads `added.wishlist.wishlists.*.stays` as a list).
- The clone's `removePopup` flag is never written (staynb-14 fails if it is false, and true would
  waive staynb-4's wifi check).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Any

from halo.sites.staynb.stays import GUEST_KINDS, TODAY, Destination, Filters, Stay

USER = {"name": "Jordan Lee", "email": "jordan.lee@example.com"}
SHARE_CONTACTS = ("Weekend Crew (group chat)", "Mom", "Alex Kim")
SERVICE_FEE = 0.14


@dataclass
class Query:
    """What the search bar and filters hold (the draft until Search applies it)."""

    where: str = ""
    checkin: dt.date | None = None
    checkout: dt.date | None = None
    guests: dict[str, int] = field(default_factory=lambda: {kind: 0 for kind, _ in GUEST_KINDS})
    filters: Filters = Filters()

    @property
    def guest_total(self) -> int:
        return self.guests["Adults"] + self.guests["Children"]

    def guests_label(self) -> str:
        n = self.guest_total
        text = f"{n} guest{'s' if n != 1 else ''}"
        if self.guests["Infants"]:
            text += f", {self.guests['Infants']} infant{'s' if self.guests['Infants'] != 1 else ''}"
        if self.guests["Pets"]:
            text += f", {self.guests['Pets']} pet{'s' if self.guests['Pets'] != 1 else ''}"
        return text

    @property
    def nights(self) -> int:
        return (self.checkout - self.checkin).days if self.checkin and self.checkout else 0


def pick_day(q: Query, day: dt.date) -> None:
    """The two-month picker: the first click sets check-in = check-out (a one-day search is valid),
    a later day sets check-out, an earlier day or a click after a complete range starts again."""
    if day < TODAY:
        return
    if q.checkin is None or q.checkin != q.checkout or day < q.checkin:
        q.checkin = q.checkout = day
    else:
        q.checkout = day


def step_guests(q: Query, kind: str, delta: int) -> None:
    if kind not in q.guests:
        return
    q.guests[kind] = max(0, min(16 if kind in ("Adults", "Children") else 5, q.guests[kind] + delta))
    if delta > 0 and kind != "Adults" and q.guests["Adults"] == 0:
        q.guests["Adults"] = 1                  # children, infants and pets come with an adult
    if kind == "Adults" and q.guests["Adults"] == 0 and any(q.guests[k] for k in ("Children", "Infants", "Pets")):
        q.guests["Adults"] = 1


def _iso(day: dt.date | None) -> str | None:
    return f"{day.isoformat()}T07:00:00.000Z" if day else None      # local midnight (PDT) as toISOString writes it


def initial_state() -> dict[str, Any]:
    return {
        "config": {},
        "booking": {"isBooking": False, "currentBooking": None, "bookingDetails": {},
                    "errors": {"cardNumber": "", "expiration": "", "cvv": "", "zipcode": ""}},
        "wishlist": {"wishlists": {}},
        "user": dict(USER),
    }


def apply_search(state: dict[str, Any], destination: Destination, q: Query) -> None:
    dates = {"startDate": _iso(q.checkin), "endDate": _iso(q.checkout)}
    recent = list(state.get("search", {}).get("recentSearches", []))
    entry = {"destination": destination.label, "dates": dates, "guests": q.guests_label()}
    if not recent or recent[-1] != entry:
        recent.append(entry)
    f = q.filters
    state["search"] = {
        "appliedDestination": destination.label,
        "appliedDates": dates,
        "appliedGuestCounts": dict(q.guests),
        "appliedFilters": {"amenities": list(f.amenities), "bedrooms": f.bedrooms, "beds": f.beds, "bathrooms": f.bathrooms,
                           "minPrice": f.min_price, "maxPrice": f.max_price},
        "recentSearches": recent[-5:],
    }


# --- wishlists -------------------------------------------------------------------------------------


def create_wishlist(state: dict[str, Any], name: str, stay: Stay) -> dict[str, Any]:
    wishlists = state["wishlist"]["wishlists"]
    wl_id = f"wl-{len(wishlists) + 1}"
    wishlists[wl_id] = {"id": wl_id, "name": name, "stays": [stay.as_store()]}
    return wishlists[wl_id]


def add_to_wishlist(state: dict[str, Any], wl_id: str, stay: Stay) -> dict[str, Any] | None:
    wishlist = state["wishlist"]["wishlists"].get(wl_id)
    if wishlist is None:
        return None
    if all(s["id"] != stay.id for s in wishlist["stays"]):
        wishlist["stays"].append(stay.as_store())
    return wishlist


def saved_ids(state: dict[str, Any]) -> set[str]:
    return {s["id"] for wl in state["wishlist"]["wishlists"].values() for s in wl["stays"]}


# --- booking ---------------------------------------------------------------------------------------


def price_breakdown(stay: Stay, nights: int) -> dict[str, int]:
    base = stay.price * max(1, nights)
    fee = round(base * SERVICE_FEE)
    return {"nightly": stay.price, "nights": max(1, nights), "base": base, "serviceFee": fee, "total": base + fee}


def reserve(state: dict[str, Any], stay: Stay, q: Query) -> dict[str, Any]:
    booking = state["booking"]
    booking["isBooking"] = True
    booking["currentBooking"] = {
        "stayId": stay.id, "title": stay.title, "location": stay.location, "checkIn": _iso(q.checkin),
        "checkOut": _iso(q.checkout), "guests": dict(q.guests), **price_breakdown(stay, q.nights)}
    return booking["currentBooking"]


def _luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        n = int(ch)
        if i % 2:
            n = n * 2 - 9 if n > 4 else n * 2
        total += n
    return total % 10 == 0


def card_errors(card: str, expiration: str, cvv: str, zipcode: str) -> dict[str, str]:
    errors = {"cardNumber": "", "expiration": "", "cvv": "", "zipcode": ""}
    digits = re.sub(r"[\s-]", "", card)
    if not digits.isdigit() or len(digits) != 16 or not _luhn_ok(digits):
        errors["cardNumber"] = "Check your card number."
    match = re.fullmatch(r"\s*(\d{1,2})\s*/\s*(\d{2})\s*", expiration)
    if not match or not 1 <= int(match.group(1)) <= 12:
        errors["expiration"] = "Enter the expiration date as MM/YY."
    elif (2000 + int(match.group(2)), int(match.group(1))) < (TODAY.year, TODAY.month):
        errors["expiration"] = "This card has expired."
    if not re.fullmatch(r"\d{3,4}", cvv.strip()):
        errors["cvv"] = "Check your CVV."
    if not re.fullmatch(r"\d{5}", zipcode.strip()):
        errors["zipcode"] = "Check your ZIP code."
    return errors


def pay(state: dict[str, Any], card: str, expiration: str, cvv: str, zipcode: str) -> str | None:
    """Confirm the current booking; None (and `booking.errors` filled) when the card is refused."""
    booking = state["booking"]
    errors = card_errors(card, expiration, cvv, zipcode)
    booking["errors"] = errors
    if any(errors.values()) or not booking["currentBooking"]:
        return None
    code = f"HM{48213 + len(booking['bookingDetails']) * 611:06d}"
    booking["bookingDetails"][code] = {**booking["currentBooking"], "confirmationCode": code, "status": "confirmed",
                                       "card": f"•••• {re.sub(r'[^0-9]', '', card)[-4:]}"}
    booking["isBooking"] = False
    booking["currentBooking"] = None
    return code


def share(state: dict[str, Any], stay: Stay, via: str, to: str) -> None:
    state.setdefault("shares", []).append({"stayId": stay.id, "title": stay.title, "via": via, "to": to})
