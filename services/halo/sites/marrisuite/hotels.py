"""MarriSuite's hotels and its store rules (search, results, reservations).

The store keeps hotel *ids* in its results, never names: a Santa Barbara search must not put
"Goleta" into the state that eval_marrisuite_8.py scans as text.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

TODAY = dt.date(2024, 7, 18)          # REAL v2's "today", a Thursday


@dataclass(frozen=True)
class City:
    name: str           # "Goleta"
    label: str          # "Goleta, California, USA" (what the search stores)


CITIES = (
    City("Goleta", "Goleta, California, USA"),
    City("Santa Barbara", "Santa Barbara, California, USA"),
    City("Ventura", "Ventura, California, USA"),
)


@dataclass(frozen=True)
class Hotel:
    id: str
    name: str
    city: str           # City.name
    brand: str
    stars: float
    rating: float
    reviews: int
    price: int          # per night, USD
    distance: str
    amenities: tuple[str, ...]
    about: str

    @property
    def address_city(self) -> City:
        return next(c for c in CITIES if c.name == self.city)


HOTELS = (
    Hotel("h-101", "The Ritz-Carlton Bacara, Santa Barbara", "Goleta", "The Ritz-Carlton", 5, 4.7, 2140, 895,
          "3.1 miles from Goleta center", ("Beachfront", "Spa", "Pool", "Free Wi-Fi"), "Oceanfront resort on 78 acres of the Gaviota coast."),
    Hotel("h-102", "Courtyard Santa Barbara Goleta", "Goleta", "Courtyard", 3, 4.4, 1312, 239,
          "0.8 miles from Goleta center", ("Free Wi-Fi", "Fitness center", "Pool"), "Near UC Santa Barbara and the Santa Barbara Airport."),
    Hotel("h-103", "Residence Inn Santa Barbara Goleta", "Goleta", "Residence Inn", 3, 4.5, 986, 259,
          "1.2 miles from Goleta center", ("Kitchen", "Free breakfast", "Free Wi-Fi"), "Suites with kitchens for longer stays."),
    Hotel("h-104", "Hotel Goleta Beach", "Goleta", "Autograph Collection", 4, 4.3, 640, 319,
          "0.4 miles from Goleta Beach", ("Beach access", "Restaurant", "Free Wi-Fi"), "Boutique rooms a short walk from the pier."),
    Hotel("h-105", "SpringHill Suites Goleta", "Goleta", "SpringHill Suites", 3, 4.2, 544, 209,
          "1.9 miles from Goleta center", ("Free breakfast", "Pool", "Parking"), "Spacious suites off Highway 101."),
    Hotel("h-106", "Fairfield Inn Goleta Old Town", "Goleta", "Fairfield Inn", 2, 4.0, 421, 179,
          "0.6 miles from Old Town Goleta", ("Free breakfast", "Free Wi-Fi"), "Simple rooms in Old Town."),
    Hotel("h-201", "Santa Barbara Marriott Downtown", "Santa Barbara", "Marriott", 4, 4.5, 1820, 389,
          "0.3 miles from State Street", ("Restaurant", "Pool", "Free Wi-Fi"), "Walk to State Street's shops and restaurants."),
    Hotel("h-202", "Kimpton Canary", "Santa Barbara", "Kimpton", 4, 4.6, 1190, 429,
          "0.2 miles from State Street", ("Rooftop pool", "Bar"), "Moorish-style rooms downtown."),
    Hotel("h-203", "Harbor View Inn", "Santa Barbara", "Independent", 4, 4.4, 870, 499,
          "0.1 miles from East Beach", ("Beachfront", "Pool"), "Across the street from the beach."),
    Hotel("h-204", "AC Santa Barbara", "Santa Barbara", "AC Hotels", 4, 4.3, 610, 349,
          "0.5 miles from the Funk Zone", ("Bar", "Fitness center"), "Modern rooms by the Funk Zone."),
    Hotel("h-301", "Courtyard Oxnard Ventura", "Ventura", "Courtyard", 3, 4.1, 702, 199,
          "2.4 miles from Ventura Pier", ("Pool", "Free Wi-Fi"), "Between Ventura and Oxnard."),
    Hotel("h-302", "Crowne Plaza Ventura Beach", "Ventura", "Crowne Plaza", 3, 4.0, 955, 269,
          "0.1 miles from Ventura Pier", ("Beachfront", "Restaurant"), "Every room faces the ocean."),
)
HOTEL_BY_ID = {h.id: h for h in HOTELS}
SORTS = (("recommended", "Recommended"), ("price_low", "Price: low to high"), ("price_high", "Price: high to low"),
         ("rating", "Guest rating"))
SORT_IDS = {s for s, _ in SORTS}
MAX_ROOMS, MAX_ADULTS = 5, 8


def resolve_city(text: str) -> City | None:
    """What people type in the destination box: "goleta", "Goleta, CA", the full label."""
    key = text.strip().lower()
    if not key:
        return None
    for city in CITIES:
        if key == city.label.lower() or key.split(",")[0].strip() == city.name.lower():
            return city
    matches = [c for c in CITIES if key in c.label.lower()]
    return matches[0] if len(matches) == 1 else None


def search_hotels(city: City, sort: str) -> list[Hotel]:
    found = [h for h in HOTELS if h.city == city.name]
    if sort == "price_low":
        found.sort(key=lambda h: h.price)
    elif sort == "price_high":
        found.sort(key=lambda h: -h.price)
    elif sort == "rating":
        found.sort(key=lambda h: -h.rating)
    return found


def summary(rooms: int, adults: int) -> str:
    return f"{rooms} Room{'s' if rooms != 1 else ''}, {adults} Adult{'s' if adults != 1 else ''}"


def initial_state() -> dict[str, Any]:
    # search, searchResults and reservations are written whole on first use (absent at /config)
    return {"config": {}, "user": {"name": "Jordan Lee", "memberLevel": "Silver Elite", "points": 18250}}


def apply_search(state: dict[str, Any], city: City, check_in: dt.date, check_out: dt.date, rooms: int, adults: int,
                 sort: str) -> list[Hotel]:
    found = search_hotels(city, sort)
    state["search"] = {"destination": city.label, "checkIn": check_in.isoformat(), "checkOut": check_out.isoformat(),
                       "rooms": rooms, "adults": adults, "summary": summary(rooms, adults)}
    state["searchResults"] = {"hotelIds": [h.id for h in found], "count": len(found), "sortBy": sort}
    return found


def book(state: dict[str, Any], hotel: Hotel, check_in: dt.date, check_out: dt.date, rooms: int, adults: int,
         guest: str) -> dict[str, Any]:
    reservations = state.setdefault("reservations", [])
    nights = max(1, (check_out - check_in).days)
    entry = {"hotelId": hotel.id, "status": "Reservation confirmed",
             "confirmationNumber": f"MS{74190 + len(reservations) * 37:07d}", "checkIn": check_in.isoformat(),
             "checkOut": check_out.isoformat(), "rooms": rooms, "adults": adults, "guest": guest,
             "total": hotel.price * nights * rooms}
    reservations.append(entry)
    return entry


def parse_day(raw: Any, default: dt.date) -> dt.date:
    try:
        return dt.date.fromisoformat(str(raw))
    except ValueError:
        return default


def next_weekend() -> tuple[dt.date, dt.date]:
    """Friday to Sunday of next week's weekend (from Thursday July 18: July 26-28)."""
    friday = TODAY + dt.timedelta(days=(4 - TODAY.weekday()) % 7 + 7)
    return friday, friday + dt.timedelta(days=2)
