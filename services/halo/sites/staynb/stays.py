"""StayNB's destinations and stays (deterministic seed data).

Labels are the ones the REAL v2 scripts compare (exactly: "Austria", "Paris, France", "Rome, Italy",
"Provence, France", "San Jose, Costa Rica"; by substring: Delhi, Cape Town, Miami, Vancouver),
with decoys next to them ("Vienna, Austria", "San Jose, California, United States", "Vancouver,
Washington, United States"). San Francisco is "San Francisco, California, United States", never
", USA" (that string waives staynb-4's wifi check). Amenity labels are exactly Airbnb's six.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass
from typing import Any

TODAY = dt.date(2024, 7, 18)                 # REAL v2's "today", Thursday
LAST_MONTH = dt.date(2025, 12, 1)            # the date picker reaches January 2025 (staynb-14) and beyond
AMENITIES = ("Wifi", "Free parking", "Air conditioning", "Pool", "Kitchen", "Washer")
ROOM_CHOICES = ((0, "Any"), (1, "1"), (2, "2"), (3, "3+"))
GUEST_KINDS = (("Adults", "Ages 13 or above"), ("Children", "Ages 2–12"), ("Infants", "Under 2"), ("Pets", "Bringing a service animal?"))
MAX_GUESTS = 16


@dataclass(frozen=True)
class Destination:
    label: str
    tag: str            # the place tag a stay must carry to be found
    hint: str           # the suggestion's second line


DESTINATIONS = (
    Destination("Nearby", "nearby", "Find places close to you"),
    Destination("Austria", "austria", "Country"),
    Destination("Vienna, Austria", "vienna", "City in Austria"),
    Destination("Paris, France", "paris", "City in France"),
    Destination("Provence, France", "provence", "Region in France"),
    Destination("Rome, Italy", "rome", "City in Italy"),
    Destination("San Jose, Costa Rica", "san-jose-cr", "City in Costa Rica"),
    Destination("San Jose, California, United States", "san-jose-ca", "City in California"),
    Destination("Delhi, India", "delhi", "City in India"),
    Destination("Cape Town, South Africa", "cape-town", "City in South Africa"),
    Destination("Miami, Florida, United States", "miami", "City in Florida"),
    Destination("Vancouver, Canada", "vancouver-bc", "City in British Columbia"),
    Destination("Vancouver, Washington, United States", "vancouver-wa", "City in Washington"),
    Destination("San Francisco, California, United States", "san-francisco", "City in California"),
)
DESTINATION_BY_LABEL = {d.label: d for d in DESTINATIONS}


def suggestions(text: str) -> list[Destination]:
    """Autocomplete: destinations whose label contains every typed word (all of them for no text)."""
    words = text.lower().replace(",", " ").split()
    return [d for d in DESTINATIONS if all(w in d.label.lower() for w in words)]


def resolve(text: str) -> Destination | None:
    """A typed destination: its exact label, or the only suggestion that matches."""
    key = " ".join(text.split()).lower()
    for d in DESTINATIONS:
        if d.label.lower() == key:
            return d
    found = suggestions(text)
    return found[0] if len(found) == 1 and text.strip() else None


@dataclass(frozen=True)
class Stay:
    id: str
    title: str
    kind: str
    location: str       # "Vienna, Austria"
    tags: frozenset[str]
    bedrooms: int
    beds: int
    bathrooms: int
    guests: int
    amenities: tuple[str, ...]
    price: int          # per night, USD
    rating: float
    reviews: int
    host: str

    def as_store(self) -> dict[str, Any]:
        """A stay as a wishlist keeps it (staynb-6 reads rooms.bedrooms / rooms.beds)."""
        return {"id": self.id, "title": self.title, "location": self.location, "price": self.price,
                "rooms": {"bedrooms": self.bedrooms, "beds": self.beds, "bathrooms": self.bathrooms, "guests": self.guests},
                "amenities": list(self.amenities), "rating": self.rating}


# (location, tags, titles): each place gets its named stays plus generated ones
_PLACES = (
    ("Vienna, Austria", {"austria", "vienna"}, ["Altbau flat by the Naschmarkt", "Ringstrasse studio with balcony", "Family home in Döbling"]),
    ("Salzburg, Austria", {"austria"}, ["Old Town loft under the fortress", "Alpine view apartment in Salzburg"]),
    ("Hallstatt, Austria", {"austria"}, ["Lakeside chalet in Hallstatt", "Cozy cabin above Hallstatt"]),
    ("Innsbruck, Austria", {"austria"}, ["Ski apartment in Innsbruck"]),
    ("Paris, France", {"paris"}, ["Haussmann flat near the Louvre", "Montmartre studio with a view", "Marais two-bedroom",
                                   "Saint-Germain family apartment", "Loft by Canal Saint-Martin", "Latin Quarter hideaway"]),
    ("Provence, France", {"provence"}, ["Stone mas among the lavender", "Village house in Gordes", "Aix-en-Provence townhouse",
                                         "Farmhouse with olive grove", "Luberon cottage"]),
    ("Rome, Italy", {"rome"}, ["Trastevere two-bedroom with terrace", "Apartment by the Pantheon", "Monti loft",
                               "Family flat near the Vatican", "Studio in Testaccio", "Villa Borghese garden flat"]),
    ("San Jose, Costa Rica", {"san-jose-cr"}, ["Escazú hillside house", "Barrio Amón apartment", "Santa Ana casita with garden",
                                               "Downtown San José studio"]),
    ("San Jose, California", {"san-jose-ca", "nearby"}, ["Willow Glen bungalow", "Downtown San Jose condo", "Rose Garden cottage"]),
    ("Delhi, India", {"delhi"}, ["Hauz Khas apartment", "Greater Kailash guest suite", "Haveli room in Old Delhi",
                                 "Vasant Vihar family flat", "Lodhi Colony studio"]),
    ("Cape Town, South Africa", {"cape-town"}, ["Sea Point family apartment", "Bo-Kaap studio loft", "Camps Bay villa",
                                                "Gardens cottage under Table Mountain", "Green Point flat", "Constantia wine-farm cottage"]),
    ("Miami, Florida", {"miami"}, ["South Beach condo", "Wynwood loft", "Coconut Grove bungalow", "Brickell high-rise studio",
                                   "Little Havana casita"]),
    ("Vancouver, Canada", {"vancouver-bc"}, ["Kitsilano house near the beach", "Yaletown loft", "Gastown heritage flat",
                                             "Mount Pleasant townhouse", "West End apartment"]),
    ("Vancouver, Washington", {"vancouver-wa"}, ["Uptown Village flat", "Columbia River cottage"]),
    ("San Francisco, California", {"san-francisco", "nearby"}, ["Victorian flat in the Mission", "Nob Hill studio",
                                                                "Noe Valley family home", "Hayes Valley loft", "Sunset cottage"]),
    ("Sausalito, California", {"nearby"}, ["Houseboat in Sausalito", "Sausalito hillside home"]),
    ("Mill Valley, California", {"nearby"}, ["Mill Valley retreat with pool", "Redwood cabin in Mill Valley"]),
    ("Half Moon Bay, California", {"nearby"}, ["Coastal cottage in Half Moon Bay"]),
)
_KINDS = ("Entire rental unit", "Entire home", "Entire condo", "Entire loft", "Entire villa", "Entire cottage")
_HOSTS = ("Anna", "Lukas", "Camille", "Marco", "Priya", "Thabo", "Sofia", "Daniel", "Mei", "Carlos", "Olivia", "Jonas")

#: stays whose facts a goal depends on: title -> (bedrooms, beds, bathrooms, guests, amenities, price)
_FIXED: dict[str, tuple[int, int, int, int, tuple[str, ...], int]] = {
    "Sea Point family apartment": (2, 3, 2, 6, ("Wifi", "Kitchen", "Washer"), 145),           # staynb-6
    "Bo-Kaap studio loft": (1, 1, 1, 4, ("Wifi", "Kitchen"), 68),                               # its 1-bed decoy
    "Trastevere two-bedroom with terrace": (2, 2, 1, 5, ("Wifi", "Kitchen", "Air conditioning"), 188),   # staynb-14
    "Mill Valley retreat with pool": (3, 3, 2, 6, ("Pool", "Wifi", "Free parking", "Air conditioning", "Kitchen"), 420),  # staynb-9
    "Marais two-bedroom": (2, 2, 1, 4, ("Wifi", "Free parking", "Air conditioning", "Kitchen"), 260),   # staynb-5
    "Kitsilano house near the beach": (3, 4, 2, 7, ("Wifi", "Free parking", "Kitchen", "Washer"), 310),   # staynb-19
    "Stone mas among the lavender": (3, 4, 2, 6, ("Wifi", "Pool", "Free parking", "Kitchen"), 290),     # staynb-17
}


def _generate() -> tuple[Stay, ...]:
    stays: list[Stay] = []
    for location, tags, titles in _PLACES:
        rng = random.Random(location)
        for n, title in enumerate(titles):
            if title in _FIXED:
                bedrooms, beds, bathrooms, guests, amenities, price = _FIXED[title]
            else:
                bedrooms = rng.choice((1, 1, 2, 2, 3, 4))
                beds = bedrooms + rng.choice((0, 0, 1, 2))
                bathrooms = max(1, bedrooms - rng.choice((0, 1, 1)))
                guests = min(MAX_GUESTS, beds * 2)
                amenities = tuple(a for a in AMENITIES if rng.random() < (0.85 if a == "Wifi" else 0.4))
                price = rng.randrange(60, 400, 5)
            kind = "Private room" if title.startswith("Haveli room") else _KINDS[(n + len(location)) % len(_KINDS)]
            if kind == "Private room":
                bedrooms, beds, guests = 1, 1, 2
            stays.append(Stay(
                id=str(40_100 + len(stays) * 7), title=title, kind=kind, location=location, tags=frozenset(tags),
                bedrooms=bedrooms, beds=beds, bathrooms=bathrooms, guests=guests, amenities=amenities, price=price,
                rating=round(rng.uniform(4.2, 4.99), 2), reviews=rng.randrange(8, 420), host=rng.choice(_HOSTS)))
    return tuple(stays)


STAYS = _generate()
STAY_BY_ID = {s.id: s for s in STAYS}


def by_title(title: str) -> Stay:
    return next(s for s in STAYS if s.title == title)


@dataclass(frozen=True)
class Filters:
    amenities: tuple[str, ...] = ()
    bedrooms: int = 0
    beds: int = 0
    bathrooms: int = 0
    min_price: int = 0
    max_price: int = 0          # 0: no maximum


def find(destination: Destination | None, guests: int, f: Filters) -> list[Stay]:
    if destination is None:
        return []
    found = []
    for s in STAYS:
        if destination.tag not in s.tags or s.guests < guests:
            continue
        if s.bedrooms < f.bedrooms or s.beds < f.beds or s.bathrooms < f.bathrooms:
            continue
        if not set(f.amenities) <= set(s.amenities):
            continue
        if s.price < f.min_price or (f.max_price and s.price > f.max_price):
            continue
        found.append(s)
    return found
