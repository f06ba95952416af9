"""OpenDining's restaurants, their opening hours and which tables are taken (deterministic).

Facts the REAL v2 scripts hard-code or the goals need: River View Cafe's id (opendining-12), the
Embarcadero keyword list of eval_opendining_7.py (no other restaurant's name, description or image
URL may contain one of those words: no "Bombay", no "marinated"), Evening Delight's 5 PM taken
today (opendining-20), Italian, American and breakfast places with the hours the goals ask for,
and decoys next to each (an Italian place closed at 3 PM, a 2.8★ breakfast place, a 3.2★ late
place, another cafe).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import uuid
from dataclasses import dataclass
from typing import Any

TODAY = dt.date(2024, 7, 18)                 # REAL v2's "today", Thursday
LAST_DAY = dt.date(2025, 12, 31)             # the date picker reaches September 2025 (opendining-12)
PARTY_SIZES = tuple(range(1, 21))
SLOT_MINUTES = 30
_NAMESPACE = uuid.UUID("4f0e7f5c-2b7a-4a39-9d0c-0d1a1f0e0d11")


def guests_label(n: int) -> str:
    return "1 person" if n == 1 else f"{n} people"


def time_label(minutes: int) -> str:
    """Minutes after midnight as the site writes times: "3:00 PM" (opendining-9 parses %I:%M %p)."""
    hour, minute = divmod(minutes, 60)
    return f"{(hour - 1) % 12 + 1}:{minute:02d} {'AM' if hour < 12 else 'PM'}"


def parse_time_label(text: str) -> int | None:
    try:
        parsed = dt.datetime.strptime(text.strip().upper(), "%I:%M %p")
    except ValueError:
        return None
    return parsed.hour * 60 + parsed.minute


def _hhmm(text: str) -> int:
    hour, minute = text.split(":")
    return int(hour) * 60 + int(minute)


@dataclass(frozen=True)
class Restaurant:
    id: str
    name: str
    food_type: str
    rating: float
    reviews: int
    price: str                # "$$"
    neighborhood: str
    description: str
    hours: tuple[tuple[int, int], ...]   # (open, last seating) in minutes
    max_party: int = 8

    @property
    def image_url(self) -> str:
        return f"/opendining/img/{self.id}.svg"

    def slots(self) -> list[int]:
        return [m for start, end in self.hours for m in range(start, end + 1, SLOT_MINUTES)]

    def as_store(self) -> dict[str, Any]:
        """The restaurant as a reservation records it (what the eval scripts read)."""
        return {"id": self.id, "name": self.name, "food_type": self.food_type, "rating": self.rating,
                "description": self.description, "imageUrl": self.image_url, "neighborhood": self.neighborhood}


def _r(name: str, food_type: str, rating: float, reviews: int, price: str, neighborhood: str, description: str,
       hours: str, max_party: int = 8, rid: str = "") -> Restaurant:
    spans = tuple((_hhmm(a), _hhmm(b)) for a, b in (span.split("-") for span in hours.split(",")))
    return Restaurant(rid or str(uuid.uuid5(_NAMESPACE, name)), name, food_type, rating, reviews, price, neighborhood,
                      description, spans, max_party)


ALL_DAY, LUNCH_DINNER, DINNER, BREAKFAST = "11:30-21:30", "11:30-14:00,17:00-21:30", "17:00-22:00", "07:00-11:00"
RESTAURANTS: tuple[Restaurant, ...] = (
    _r("River View Cafe", "Seafood", 4.3, 1284, "$$$", "Embarcadero",
       "Oysters, chowder and grilled fish with a view of the water from the Embarcadero promenade.", "11:00-21:30",
       max_party=12, rid="cd4f81d3-3c75-4c67-b47b-e7f013f6ae9d"),
    _r("Crowded Corner", "American", 3.9, 642, "$$", "Embarcadero",
       "A busy lunch counter by the Ferry Building: burgers, salads and milkshakes.", ALL_DAY),
    _r("Harbor Lights Grill", "Seafood", 4.0, 377, "$$$", "Embarcadero",
       "Grilled catch of the day and cocktails on the waterfront.", DINNER),
    _r("Trattoria Bella", "Italian", 4.5, 2210, "$$$", "North Beach",
       "Handmade pasta, wood-fired pizza and a long Italian wine list in the heart of North Beach.", ALL_DAY),
    _r("Nonna's Kitchen", "Italian", 4.2, 918, "$$", "North Beach",
       "Family recipes from Naples: lasagna, meatballs and tiramisu.", LUNCH_DINNER),
    _r("Osteria Verde", "Italian", 3.7, 455, "$$", "Hayes Valley", "Seasonal Italian plates and natural wines.", DINNER),
    _r("Le Petit Bistro", "French", 4.4, 1033, "$$$", "Hayes Valley",
       "Steak frites, onion soup and crème brûlée in a cozy Parisian room.", ALL_DAY),
    _r("Maison Rouge", "French", 3.9, 402, "$$$$", "Nob Hill", "A tasting menu of modern French cooking.", DINNER),
    _r("Liberty Grill", "American", 4.2, 1561, "$$", "SoMa",
       "Burgers, ribs and craft beer; big booths for groups.", ALL_DAY),
    _r("Route 66 Diner", "American", 3.4, 812, "$", "Castro", "All-American diner classics and milkshakes.", "08:00-21:00"),
    _r("Haight Street Supper Club", "American", 4.1, 690, "$$$", "Haight-Ashbury",
       "Dinner and live jazz in a restored Victorian on Haight Street.", "17:00-22:00", max_party=12),
    _r("Evening Delight", "Contemporary", 4.6, 1720, "$$$$", "Union Square",
       "A seasonal tasting menu with early and late seatings.", "16:00-21:30"),
    _r("Midnight Noodle Bar", "Chinese", 3.2, 388, "$", "Chinatown", "Hand-pulled noodles until late.", "12:00-23:00"),
    _r("Golden Lotus", "Chinese", 3.8, 920, "$$", "Chinatown", "Dim sum all day and Peking duck for the table.", "10:30-21:00"),
    _r("Sakura House", "Japanese", 4.4, 1403, "$$$", "Japantown", "Omakase sushi and a sake list.", LUNCH_DINNER),
    _r("Ramen Hoshi", "Japanese", 4.0, 1177, "$", "Japantown", "Rich tonkotsu ramen and gyoza.", "11:00-22:00"),
    _r("Izakaya Ren", "Japanese", 3.6, 310, "$$", "Richmond", "Small plates, skewers and Japanese whisky.", DINNER),
    _r("La Taqueria Azul", "Mexican", 4.1, 2450, "$", "Mission", "Mission-style burritos and tacos al pastor.", "10:00-22:00"),
    _r("Casa Oaxaca", "Mexican", 3.9, 604, "$$", "Mission", "Moles, tlayudas and mezcal.", "11:30-21:30"),
    _r("Cantina Roja", "Mexican", 3.3, 275, "$$", "Mission", "Margaritas and nachos for a crowd.", "12:00-22:00"),
    _r("Tandoori Nights", "Indian", 4.3, 988, "$$", "SoMa", "Tandoor-roasted meats, curries and fresh naan.", LUNCH_DINNER),
    _r("Spice Route", "Indian", 3.5, 341, "$$", "Richmond", "Southern Indian dosas and thalis.", "11:00-21:00"),
    _r("Thai Orchid", "Thai", 4.0, 733, "$$", "Castro", "Curries, noodles and mango sticky rice.", ALL_DAY),
    _r("Basil Leaf", "Thai", 3.1, 219, "$", "Haight-Ashbury", "Quick Thai lunches and takeout.", "11:00-21:00"),
    _r("Olive & Fig", "Mediterranean", 4.2, 566, "$$", "Castro", "Mezze, grilled lamb and Greek wines.", ALL_DAY),
    _r("Seoul Kitchen", "Korean", 4.1, 814, "$$", "Richmond", "Korean barbecue at the table and bibimbap.", "11:30-22:00"),
    _r("Prime Cut Steakhouse", "Steakhouse", 4.5, 1290, "$$$$", "Union Square", "Dry-aged steaks and classic sides.", DINNER),
    _r("Green Table", "Vegan", 3.8, 402, "$$", "Mission", "Plant-based comfort food and fresh juices.", ALL_DAY),
    _r("Sunrise Griddle", "Breakfast", 4.1, 1506, "$", "Castro", "Pancakes, omelettes and strong coffee from 7 AM.", BREAKFAST),
    _r("Early Bird Pancakes", "Breakfast", 2.8, 264, "$", "SoMa", "Stacks of pancakes, open early.", BREAKFAST),
    _r("Cafe Lumiere", "Cafe", 3.9, 480, "$", "Hayes Valley", "Coffee, pastries and light lunches.", "08:00-17:00"),
)
RESTAURANT_BY_ID = {r.id: r for r in RESTAURANTS}
CUISINES = tuple(sorted({r.food_type for r in RESTAURANTS}))
NEIGHBORHOODS = tuple(sorted({r.neighborhood for r in RESTAURANTS}))
RATING_FILTERS = (("", "Any rating"), ("3", "3+ stars"), ("3.5", "3.5+ stars"), ("4", "4+ stars"))
TOP_RATED_MIN = 3.5
OCCASIONS = ("None", "Birthday", "Anniversary", "Date night", "Business Meal", "Celebration")

#: Tables the scripts' goals need taken (opendining-20: 5 PM is booked, so "notify me").
_TAKEN = {("Evening Delight", TODAY, "5:00 PM"), ("Evening Delight", TODAY, "6:00 PM")}


def is_taken(r: Restaurant, day: dt.date, minutes: int) -> bool:
    """Today and tomorrow are busy: about one table time in six is taken (a fixed hash), plus `_TAKEN`."""
    label = time_label(minutes)
    if (r.name, day, label) in _TAKEN:
        return True
    if day - TODAY > dt.timedelta(days=1):
        return False
    digest = hashlib.sha256(f"{r.id}|{day}|{label}".encode()).digest()
    return digest[0] % 6 == 0


def slot_grid(r: Restaurant, day: dt.date, party: int) -> list[tuple[str, bool]]:
    """(time label, available) for each seating of the day (REAL's clone lists the whole day, today
    too); a party over the restaurant's limit gets no table."""
    if party > r.max_party or not TODAY <= day <= LAST_DAY:
        return []
    return [(time_label(m), not is_taken(r, day, m)) for m in r.slots()]


def find(query: str = "", cuisine: str = "", neighborhood: str = "", min_rating: float = 0.0) -> list[Restaurant]:
    words = query.lower().split()
    found = []
    for r in RESTAURANTS:
        text = f"{r.name} {r.food_type} {r.neighborhood} {r.description}".lower()
        if words and not all(w in text for w in words):
            continue
        if cuisine and r.food_type != cuisine:
            continue
        if neighborhood and r.neighborhood != neighborhood:
            continue
        if r.rating < min_rating:
            continue
        found.append(r)
    return found


def top_rated(limit: int = 8) -> list[Restaurant]:
    """The "Top rated" row: 3.5★ and up, most talked about (reviews) first."""
    return sorted((r for r in RESTAURANTS if r.rating >= TOP_RATED_MIN), key=lambda r: (-r.rating, -r.reviews))[:limit]


def by_name(name: str) -> Restaurant:
    return next(r for r in RESTAURANTS if r.name == name)
