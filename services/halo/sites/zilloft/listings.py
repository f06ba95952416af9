"""Zilloft's listings, agents and places: deterministic data, plus search and filters over it.

Eleven cities in four states. Each city has four agents and a set of for-sale listings drawn
from a seeded generator (the same data on every machine and in every session), plus a few
hand-written listings that the REAL v2 zilloft goals are about (a 3 bed / 2 bath house in Long
Beach, a Los Angeles house under $350K, a Sacramento 4 bed house between $500K and $1.1M, a
Boston house under $1M, Bay Area houses under $1M with 3+ bedrooms, ...) and the look-alikes an
agent could pick by mistake (the 3 bed / 2 bath condo on Ocean Blvd, the $1.3M Sacramento house).

The eval scripts read the tour request's message ("I am interested in <address>.") for places and
words like "unit"/"apt"/"condo", so addresses follow Zillow's style: condos carry "UNIT"/"APT",
mobile homes "SPACE", and no street outside the Bay Area is named after a Bay Area city.
"""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import dataclass, field, replace
from functools import cached_property

from halo.sites.pages import Named

# --- home types -------------------------------------------------------------------------------


@dataclass(frozen=True)
class HomeType:
    id: str
    filter_label: str     # the Home type filter's checkbox
    noun: str             # "House for sale"
    fact: str             # "Single Family Residence" on the listing page


HOME_TYPES: tuple[HomeType, ...] = (
    HomeType("house", "Houses", "House", "Single Family Residence"),
    HomeType("townhome", "Townhomes", "Townhouse", "Townhouse"),
    HomeType("multi_family", "Multi-family", "Multi-family home", "Multi Family"),
    HomeType("condo", "Condos/Co-ops", "Condo", "Condominium"),
    HomeType("land", "Lots/Land", "Lot / Land", "Vacant Land"),
    HomeType("manufactured", "Manufactured", "Manufactured home", "Manufactured Home"),
)
HOME_TYPE_BY_ID = {t.id: t for t in HOME_TYPES}

# --- places -----------------------------------------------------------------------------------

STATE_NAMES = {"CA": "California", "MA": "Massachusetts", "WA": "Washington", "TX": "Texas"}


@dataclass(frozen=True)
class City:
    slug: str
    name: str
    state: str
    zips: tuple[str, ...]
    center: tuple[float, float]          # lat, lng
    median: int
    mix: tuple[tuple[str, float], ...]   # home type weights
    streets: tuple[str, ...]
    area_code: str
    regions: tuple[str, ...] = ()
    water: str = ""                      # which side of the static map is water: n/s/e/w, "" inland
    count: int = 18

    @property
    def label(self) -> str:
        return f"{self.name}, {self.state}"


CITIES: tuple[City, ...] = (
    City("san-francisco", "San Francisco", "CA", ("94110", "94112", "94114", "94116", "94122", "94124", "94131", "94134"),
         (37.7549, -122.4394), 1_350_000, (("house", .45), ("condo", .35), ("townhome", .08), ("multi_family", .1), ("land", .02)),
         ("Valencia St", "Noe St", "Castro St", "Judah St", "Irving St", "Taraval St", "Ocean Ave", "Geneva Ave",
          "Silver Ave", "Folsom St", "Shotwell St", "Cortland Ave", "Anza St", "Clement St", "Rivera St", "Vicente St"),
         "415", ("bay-area", "norcal"), water="w"),
    City("oakland", "Oakland", "CA", ("94602", "94605", "94606", "94609", "94610", "94611", "94619"),
         (37.8044, -122.2712), 850_000, (("house", .65), ("condo", .15), ("townhome", .08), ("multi_family", .1), ("land", .02)),
         ("MacArthur Blvd", "Fruitvale Ave", "Lakeshore Ave", "Park Blvd", "Telegraph Ave", "Foothill Blvd", "Redwood Rd",
          "Mountain Blvd", "Trestle Glen Rd", "Grand Ave", "Excelsior Ave", "Maple Ave", "Bancroft Ave", "Skyline Blvd"),
         "510", ("bay-area", "norcal"), water="w"),
    City("san-jose", "San Jose", "CA", ("95112", "95116", "95118", "95123", "95124", "95125", "95126", "95127"),
         (37.3382, -121.8863), 1_250_000, (("house", .6), ("condo", .15), ("townhome", .15), ("multi_family", .05), ("manufactured", .05)),
         ("Meridian Ave", "Lincoln Ave", "Story Rd", "Tully Rd", "Blossom Hill Rd", "Camden Ave", "Hamilton Ave",
          "Curtner Ave", "Minnesota Ave", "Bird Ave", "Alum Rock Ave", "Branham Ln", "Cottle Rd", "Naglee Ave"),
         "408", ("bay-area", "norcal")),
    City("sacramento", "Sacramento", "CA", ("95816", "95818", "95819", "95820", "95822", "95825", "95831", "95835"),
         (38.5816, -121.4944), 520_000, (("house", .75), ("condo", .05), ("townhome", .07), ("multi_family", .08), ("manufactured", .03), ("land", .02)),
         ("Freeport Blvd", "Riverside Blvd", "Folsom Blvd", "J St", "Arden Way", "Del Paso Blvd", "Florin Rd",
          "Elvas Ave", "Sutterville Rd", "Northgate Blvd", "Castro Way", "Fruitridge Rd", "H St", "Meadowview Rd"),
         "916", ("norcal",)),
    City("los-angeles", "Los Angeles", "CA", ("90019", "90026", "90034", "90042", "90044", "90065", "91331", "91405"),
         (34.0522, -118.2437), 1_050_000, (("house", .55), ("condo", .25), ("townhome", .07), ("multi_family", .1), ("manufactured", .03)),
         ("S Figueroa St", "York Blvd", "Venice Blvd", "Sunset Blvd", "Fountain Ave", "W Pico Blvd", "S Vermont Ave",
          "Van Nuys Blvd", "N Avenue 50", "Eagle Rock Blvd", "Echo Park Ave", "W Adams Blvd", "Sherman Way", "Glendale Blvd"),
         "213", ("socal",), water="w"),
    City("long-beach", "Long Beach", "CA", ("90802", "90803", "90804", "90805", "90806", "90807", "90808", "90815"),
         (33.7701, -118.1937), 800_000, (("house", .55), ("condo", .28), ("townhome", .07), ("multi_family", .07), ("manufactured", .03)),
         ("E 7th St", "Termino Ave", "Ximeno Ave", "E Anaheim St", "N Studebaker Rd", "E Carson St", "Orange Ave",
          "Cherry Ave", "E Wardlow Rd", "Pacific Ave", "Atlantic Ave", "Lime Ave", "E Broadway", "Los Coyotes Diagonal"),
         "562", ("socal",), water="s"),
    City("san-diego", "San Diego", "CA", ("92101", "92103", "92104", "92105", "92114", "92115", "92117"),
         (32.7157, -117.1611), 900_000, (("house", .55), ("condo", .25), ("townhome", .1), ("multi_family", .07), ("manufactured", .03)),
         ("Adams Ave", "El Cajon Blvd", "University Ave", "Euclid Ave", "Imperial Ave", "Clairemont Dr", "Genesee Ave",
          "Texas St", "Felton St", "Kansas St", "Grape St", "Mission Gorge Rd", "Balboa Ave", "Cable St"),
         "619", ("socal",), water="w"),
    City("boston", "Boston", "MA", ("02108", "02116", "02124", "02125", "02127", "02130", "02131", "02132", "02136"),
         (42.3601, -71.0589), 850_000, (("house", .3), ("condo", .5), ("multi_family", .15), ("townhome", .05)),
         ("Beacon St", "Adams St", "Centre St", "Washington St", "Dorchester Ave", "Savin Hill Ave", "Poplar St",
          "Walworth St", "Metropolitan Ave", "Hyde Park Ave", "Commonwealth Ave", "Tremont St", "Marlborough St", "Bowdoin St"),
         "617", (), water="e"),
    City("cambridge", "Cambridge", "MA", ("02138", "02139", "02140"),
         (42.3736, -71.1097), 1_200_000, (("house", .3), ("condo", .5), ("multi_family", .15), ("townhome", .05)),
         ("Brattle St", "Huron Ave", "Massachusetts Ave", "Hampshire St", "Cambridge St", "Magazine St", "Harvard St",
          "Inman St", "Putnam Ave", "Garden St", "Walden St", "Sherman St"),
         "617", (), water="s", count=12),
    City("seattle", "Seattle", "WA", ("98103", "98107", "98115", "98118", "98122"),
         (47.6062, -122.3321), 900_000, (("house", .6), ("condo", .2), ("townhome", .15), ("multi_family", .05)),
         ("NE 65th St", "Greenwood Ave N", "NW Market St", "Rainier Ave S", "E Union St", "Stone Way N",
          "Beacon Ave S", "NE Ravenna Blvd", "S Othello St", "24th Ave NW", "Dayton Ave N", "E Cherry St"),
         "206", (), water="w"),
    City("austin", "Austin", "TX", ("78702", "78704", "78745", "78751", "78757"),
         (30.2672, -97.7431), 560_000, (("house", .65), ("condo", .15), ("townhome", .1), ("multi_family", .05), ("land", .05)),
         ("E 12th St", "S 1st St", "W Slaughter Ln", "Burnet Rd", "Airport Blvd", "Manor Rd", "S Congress Ave",
          "Cherrywood Rd", "Avenue F", "Shoal Creek Blvd", "Bluebonnet Ln", "S Lamar Blvd"),
         "512", ()),
)
CITY_BY_SLUG = {c.slug: c for c in CITIES}

REGIONS: dict[str, tuple[str, tuple[str, ...]]] = {
    # region id -> (display name, words people type for it)
    "bay-area": ("San Francisco Bay Area, CA", ("bay area", "sf bay area", "san francisco bay area", "the bay area", "bay area ca")),
    "socal": ("Southern California", ("southern california", "socal", "so cal", "southern ca", "south california")),
    "norcal": ("Northern California", ("northern california", "norcal", "nor cal", "northern ca")),
}

# --- agents -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Agent(Named):
    id: str
    name: str
    brokerage: str
    city: str            # city slug
    phone: str
    rating: float
    reviews: int
    sales_12mo: int
    price_low: int
    price_high: int
    years: int
    license: str
    bio: str
    specialties: tuple[str, ...]

    @property
    def city_label(self) -> str:
        return CITY_BY_SLUG[self.city].label


BROKERAGES = ("Compass", "Coldwell Banker Realty", "Keller Williams Realty", "Redfin", "Berkshire Hathaway HomeServices",
              "eXp Realty", "Sotheby's International Realty", "RE/MAX Gold", "Century 21 Masters", "Intero Real Estate Services")
_FIRST = ("Maria", "James", "Aisha", "Daniel", "Sofia", "Kevin", "Hannah", "Luis", "Grace", "Omar", "Rachel", "Tom",
          "Mei", "Andre", "Nora", "Samuel", "Leah", "Victor", "Chloe", "Ben", "Isabel", "Raj", "Emma", "Carlos",
          "Julia", "Marcus", "Tessa", "Hiro", "Olivia", "Derek", "Yasmin", "Paul", "Lena", "Mateo", "Ruth", "Kwame",
          "Ivy", "Felix", "Amara", "Noah")
_LAST = ("Gomez", "Whitaker", "Rahman", "Brooks", "Lindqvist", "Tran", "Mercer", "Alvarez", "Kim", "Haddad", "Stein",
         "O'Brien", "Zhang", "Dubois", "Castillo", "Adeyemi", "Novak", "Ferreira", "Walsh", "Sato", "Moreno", "Patel",
         "Larsen", "Reyes", "Schultz", "Bennett", "Ortiz", "Yamada", "Fischer", "Grant", "Nasser", "Kowalski",
         "Romero", "Hughes", "Ibarra", "Mensah", "Holt", "Varga", "Osei", "Quinn")
_SPECIALTIES = ("Buyer's agent", "Listing agent", "Relocation", "First-time buyers", "Luxury homes", "Investment property",
                "Condos", "New construction", "Short sales", "Downsizing")

#: San Jose's agents are named in the zilloft-5 oracle (an agent to hire in San Jose).
_HAND_AGENTS = {
    "san-jose": (
        ("Priya Natarajan", "Intero Real Estate Services", 4.9, 127, 64, 650_000, 2_400_000, 14),
        ("Marcus Chen", "Compass", 4.8, 89, 41, 800_000, 3_100_000, 9),
        ("Elena Ruiz", "Coldwell Banker Realty", 5.0, 52, 23, 500_000, 1_800_000, 6),
        ("David Okafor", "Keller Williams Realty", 4.7, 64, 37, 550_000, 1_900_000, 11),
    ),
}


def _build_agents() -> tuple[Agent, ...]:
    agents: list[Agent] = []
    used = 0
    for ci, city in enumerate(CITIES):
        rng = random.Random(f"zilloft-agents:{city.slug}")
        hand = _HAND_AGENTS.get(city.slug)
        for k in range(4):
            if hand:
                name, brokerage, rating, reviews, sales, low, high, years = hand[k]
            else:
                name = f"{_FIRST[used % len(_FIRST)]} {_LAST[(used * 7 + 3) % len(_LAST)]}"
                used += 1
                brokerage = BROKERAGES[(ci * 3 + k * 5) % (len(BROKERAGES) - 1)]
                rating = round(rng.uniform(4.5, 5.0), 1)
                reviews = rng.randint(12, 160)
                sales = rng.randint(8, 70)
                low = int(city.median * rng.uniform(.35, .6)) // 50_000 * 50_000
                high = int(city.median * rng.uniform(1.8, 3.5)) // 100_000 * 100_000
                years = rng.randint(3, 25)
            specialties = tuple(rng.sample(_SPECIALTIES, 3))
            first = name.split()[0]
            bio = (f"{first} has helped buyers and sellers in {city.label} for {years} years. "
                   f"Known for {specialties[0].lower()} and {specialties[1].lower()} work, {first} answers every "
                   f"message the same day and tours homes seven days a week.")
            agents.append(Agent(
                id=f"{city.slug}-{k + 1}", name=name, brokerage=brokerage, city=city.slug,
                phone=f"({city.area_code}) 555-{rng.randint(100, 199):04d}", rating=rating, reviews=reviews,
                sales_12mo=sales, price_low=low, price_high=high, years=years,
                license=(f"DRE #0{rng.randint(1_000_000, 2_199_999)}" if city.state == "CA" else f"Lic. #{rng.randint(100_000, 999_999)}"),
                bio=bio, specialties=specialties,
            ))
    return tuple(agents)


AGENTS: tuple[Agent, ...] = _build_agents()
AGENT_BY_ID = {a.id: a for a in AGENTS}


def agents_in(city_slug: str) -> list[Agent]:
    return [a for a in AGENTS if a.city == city_slug]


# --- listings ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Listing:
    zpid: str
    street: str               # "1147 W 91st St", with "UNIT 4B" / "APT 2" / "SPACE 12" where it has one
    city: str                 # city slug
    zipcode: str
    home_type: str
    price: int
    beds: int
    baths: float
    sqft: int | None          # None for land
    lot_sqft: int | None      # None for condos
    year_built: int | None
    days_on: int
    agent_id: str
    lat: float
    lng: float
    hoa: int
    style: int                # picks the drawing's colours and shape
    features: tuple[str, ...] = field(default=())

    @property
    def city_obj(self) -> City:
        return CITY_BY_SLUG[self.city]

    @property
    def city_name(self) -> str:
        return self.city_obj.name

    @property
    def state(self) -> str:
        return self.city_obj.state

    @property
    def address(self) -> str:
        return f"{self.street}, {self.city_name}, {self.state} {self.zipcode}"

    @property
    def slug(self) -> str:
        return re.sub(r"[^A-Za-z0-9]+", "-", f"{self.street} {self.city_name} {self.state} {self.zipcode}").strip("-")

    @property
    def path(self) -> str:
        return f"/homedetails/{self.slug}/{self.zpid}_zpid/"

    @property
    def type(self) -> HomeType:
        return HOME_TYPE_BY_ID[self.home_type]

    @property
    def agent(self) -> Agent:
        return AGENT_BY_ID[self.agent_id]

    @cached_property
    def zestimate(self) -> int:
        factor = 0.96 + (int(self.zpid) % 90) / 1000
        return int(round(self.price * factor, -2))

    @property
    def price_per_sqft(self) -> int | None:
        return round(self.price / self.sqft) if self.sqft else None

    @property
    def monthly_payment(self) -> int:
        """Principal and interest at 6.5 % over 30 years with 20 % down, plus tax, insurance and HOA."""
        loan = self.price * 0.8
        r = 0.065 / 12
        principal = loan * r / (1 - (1 + r) ** -360)
        return int(round(principal + self.price * 0.011 / 12 + 120 + self.hoa, -1))

    def summary(self) -> dict:
        """The home as the tour requests and agent messages in the store describe it."""
        return {
            "zpid": self.zpid, "address": self.address, "streetAddress": self.street, "city": self.city_name,
            "state": self.state, "zipcode": self.zipcode, "price": self.price, "beds": self.beds,
            "baths": self.baths, "sqft": self.sqft, "homeType": self.type.noun,
        }


_FEATURES = ("Updated kitchen with quartz counters", "Hardwood floors throughout", "Private backyard with patio",
             "Two-car garage", "New roof (2021)", "Solar panels (owned)", "Central air conditioning", "In-unit laundry",
             "Walk-in closet in the primary suite", "Open floor plan", "Fireplace in the living room",
             "Drought-tolerant landscaping", "Bonus room / home office", "Fresh interior paint", "Double-pane windows",
             "Close to parks and schools", "EV charger in the garage", "Skylights", "Detached ADU potential",
             "Covered front porch")


def _pick_type(rng: random.Random, mix: tuple[tuple[str, float], ...]) -> str:
    roll = rng.random() * sum(w for _, w in mix)
    for type_id, weight in mix:
        roll -= weight
        if roll <= 0:
            return type_id
    return mix[-1][0]


_TYPE_PRICE = {"house": 1.0, "condo": .72, "townhome": .88, "multi_family": 1.25, "manufactured": .3, "land": .4}


def _nice_price(value: float) -> int:
    step = 5_000 if value < 2_000_000 else 25_000
    price = int(round(value / step)) * step
    return price - 1_000 if price % 10_000 == 0 and price < 2_000_000 else price


def _generate_city(city: City, agents: list[Agent]) -> list[Listing]:
    rng = random.Random(f"zilloft-listings:{city.slug}")
    listings: list[Listing] = []
    numbers: set[str] = set()
    for i in range(city.count):
        home_type = _pick_type(rng, city.mix)
        if home_type == "house":
            beds = rng.choice((2, 3, 3, 3, 4, 4, 5))
            baths = float(max(1, beds - rng.choice((0, 1, 1, 2))))
            sqft = beds * 390 + rng.randint(250, 900)
        elif home_type == "condo":
            beds = rng.choice((0, 1, 1, 2, 2, 2, 3))
            baths = float(max(1, min(beds, rng.choice((1, 2)))))
            sqft = 420 + beds * 340 + rng.randint(0, 250)
        elif home_type == "townhome":
            beds = rng.choice((2, 3, 3, 4))
            baths = beds - rng.choice((0.5, 1.0))
            sqft = beds * 420 + rng.randint(150, 500)
        elif home_type == "multi_family":
            beds = rng.choice((4, 5, 6, 8))
            baths = float(beds // 2 + rng.choice((0, 1)))
            sqft = beds * 380 + rng.randint(300, 900)
        elif home_type == "manufactured":
            beds = rng.choice((1, 2, 2, 3))
            baths = float(max(1, beds - 1))
            sqft = 640 + beds * 230 + rng.randint(0, 200)
        else:  # land
            beds, baths, sqft = 0, 0.0, None
        ref = 1500 if sqft else 1
        size_factor = (sqft / ref) ** 0.75 if sqft else 1.0
        price = _nice_price(city.median * _TYPE_PRICE[home_type] * size_factor * rng.uniform(0.78, 1.28))
        street_name = city.streets[i % len(city.streets)]
        while True:
            number = str(rng.randint(1, 99) * (rng.choice((1, 10, 10, 100))) + rng.randint(0, 9))
            if f"{number} {street_name}" not in numbers:
                break
        numbers.add(f"{number} {street_name}")
        street = f"{number} {street_name}"
        if home_type == "condo":
            street += rng.choice((f" UNIT {rng.randint(1, 24)}{rng.choice('ABCD')}", f" APT {rng.randint(101, 1408)}", f" UNIT {rng.randint(2, 40)}"))
        elif home_type == "townhome" and rng.random() < .5:
            street += f" UNIT {rng.randint(1, 12)}"
        elif home_type == "manufactured":
            street += f" SPACE {rng.randint(1, 180)}"
        lot = None if home_type in ("condo",) else (rng.randint(2_400, 9_500) if home_type != "land" else rng.randint(4_000, 22_000))
        hoa = rng.choice((250, 320, 410, 480, 560, 690)) if home_type in ("condo", "townhome") else (rng.choice((0, 0, 95, 140)) if home_type == "manufactured" else 0)
        features = tuple(rng.sample(_FEATURES, 4)) if home_type != "land" else ("Utilities at the street", "Flat, buildable lot")
        listings.append(Listing(
            zpid=str(rng.randint(10_000_000, 99_999_999)), street=street, city=city.slug,
            zipcode=city.zips[rng.randrange(len(city.zips))], home_type=home_type, price=price, beds=beds, baths=baths,
            sqft=sqft, lot_sqft=lot, year_built=rng.randint(1905, 2022) if home_type != "land" else None,
            days_on=rng.randint(1, 95), agent_id=agents[i % len(agents)].id,
            lat=round(city.center[0] + rng.uniform(-0.055, 0.055), 5), lng=round(city.center[1] + rng.uniform(-0.07, 0.07), 5),
            hoa=hoa, style=rng.randrange(1_000), features=features,
        ))
    return listings


def _hand(zpid: str, street: str, city: str, zipcode: str, home_type: str, price: int, beds: int, baths: float,
          sqft: int | None, year: int, days: int, agent: int, style: int, lot: int | None = 5_000, hoa: int = 0,
          dlat: float = 0.0, dlng: float = 0.0, features: tuple[str, ...] = ()) -> Listing:
    c = CITY_BY_SLUG[city]
    return Listing(zpid, street, city, zipcode, home_type, price, beds, baths, sqft, lot, year, days, f"{city}-{agent}",
                   round(c.center[0] + dlat, 5), round(c.center[1] + dlng, 5), hoa, style,
                   features or ("Updated kitchen with quartz counters", "Hardwood floors throughout",
                                "Private backyard with patio", "Close to parks and schools"))


#: Listings the goals are about (and their look-alikes); the oracles name them by address.
HAND_LISTINGS: tuple[Listing, ...] = (
    # zilloft-2: a 3 bed / 2 bath house in Long Beach, and the 3 bed / 2 bath condo an agent could pick instead
    _hand("20841176", "3456 Stearns St", "long-beach", "90815", "house", 989_000, 3, 2.0, 1_480, 1953, 6, 1, 11, dlat=.012, dlng=.05),
    _hand("20831542", "455 E Ocean Blvd UNIT 1203", "long-beach", "90802", "condo", 1_095_000, 3, 2.0, 1_610, 2006, 12, 2, 12,
          lot=None, hoa=690, dlat=-.008, dlng=-.004),
    # zilloft-3: a Los Angeles house under $350K with 2 beds and a bath
    _hand("20969011", "1147 W 91st St", "los-angeles", "90044", "house", 339_000, 2, 1.0, 880, 1924, 21, 1, 21, lot=4_500,
          dlat=-.09, dlng=-.04),
    # zilloft-6 / zilloft-10: Sacramento houses (4 bed in the $500K-$1.1M range; 3 bed under $500K; look-alikes above)
    _hand("25731904", "1421 Land Park Dr", "sacramento", "95818", "house", 879_000, 4, 3.0, 2_350, 1938, 9, 1, 31, lot=7_800,
          dlat=-.03, dlng=-.01),
    _hand("25766630", "2950 Fair Oaks Blvd", "sacramento", "95825", "house", 1_295_000, 5, 3.5, 3_420, 1962, 33, 2, 32, lot=12_600,
          dlat=.02, dlng=.05),
    _hand("25718842", "7420 Greenhaven Dr", "sacramento", "95831", "house", 459_000, 3, 2.0, 1_320, 1974, 4, 3, 33, lot=6_100,
          dlat=-.06, dlng=-.03),
    _hand("25750219", "5561 Carlson Dr", "sacramento", "95819", "house", 649_000, 3, 2.0, 1_540, 1951, 15, 4, 34, lot=6_500,
          dlat=.01, dlng=.04),
    # zilloft-14: a Boston house under $1M
    _hand("59184033", "18 Ashmont St", "boston", "02124", "house", 849_000, 4, 2.0, 2_010, 1910, 7, 1, 41, lot=4_200,
          dlat=-.06, dlng=.0),
    _hand("59120871", "77 Centre St", "boston", "02130", "house", 1_349_000, 4, 3.0, 2_480, 1895, 19, 2, 42, lot=5_900,
          dlat=-.045, dlng=-.05),
    # zilloft-15: Bay Area houses under $1M with 3+ bedrooms
    _hand("24337790", "2715 Humboldt Ave", "oakland", "94602", "house", 895_000, 3, 2.0, 1_540, 1927, 5, 1, 51, lot=4_600,
          dlat=.005, dlng=.03),
    _hand("19640355", "1834 Willow St", "san-jose", "95125", "house", 998_000, 3, 2.0, 1_390, 1948, 11, 2, 52, lot=5_800,
          dlat=-.02, dlng=-.01),
    _hand("15064593", "1 Wright St", "san-francisco", "94110", "house", 849_000, 3, 1.0, 1_100, 1900, 26, 3, 53, lot=1_700,
          dlat=-.007, dlng=.02),
    # zilloft-22: a Southern California house under $1M
    _hand("16872240", "4127 Utah St", "san-diego", "92104", "house", 879_000, 3, 2.0, 1_350, 1926, 8, 1, 61, lot=3_500,
          dlat=.03, dlng=.03),
    # zilloft-9: a Seattle house over 1,000 sq ft, and a smaller one
    _hand("48827319", "6512 Phinney Ave N", "seattle", "98103", "house", 925_000, 3, 2.0, 1_720, 1925, 10, 1, 71, lot=4_000,
          dlat=.07, dlng=-.02),
    _hand("48870014", "8815 24th Ave NW", "seattle", "98107", "house", 689_000, 2, 1.0, 860, 1944, 3, 2, 72, lot=3_100,
          dlat=.085, dlng=-.06),
)


def _build_listings() -> tuple[Listing, ...]:
    listings: list[Listing] = []
    for city in CITIES:
        listings += _generate_city(city, agents_in(city.slug))
    listings += HAND_LISTINGS
    by_zpid: dict[str, Listing] = {}
    for listing in listings:
        zpid = listing.zpid
        while zpid in by_zpid:  # generated ids never clash with the hand-written ones
            zpid = str(int(zpid) + 1)
        by_zpid[zpid] = listing if zpid == listing.zpid else replace(listing, zpid=zpid)
    return tuple(by_zpid.values())


LISTINGS: tuple[Listing, ...] = _build_listings()
LISTING_BY_ZPID = {l.zpid: l for l in LISTINGS}


def listing(zpid: str) -> Listing | None:
    return LISTING_BY_ZPID.get(zpid)


def find_by_street(street: str) -> Listing:
    """The listing at this street address (tests and oracles name homes this way)."""
    [found] = [l for l in LISTINGS if l.street == street]
    return found


# --- places people type -------------------------------------------------------------------------


@dataclass(frozen=True)
class Place:
    name: str                            # "Boston, MA", "California", "Southern California", "90044"
    kind: str                            # all | region | state | city | zip | address
    cities: frozenset[str] = frozenset()
    zipcode: str = ""
    street: str = ""

    def contains(self, l: Listing) -> bool:
        if self.kind == "all":
            return True
        if self.kind == "zip":
            return l.zipcode == self.zipcode
        if self.kind == "address":
            return self.street in l.address.lower()
        return l.city in self.cities

    def as_store(self) -> dict:
        return {"name": self.name, "type": self.kind}


ALL_HOMES = Place("Homes", "all")


def _norm(text: str) -> str:
    text = text.lower().replace(".", " ").replace("#", " ")
    text = re.sub(r"[^a-z0-9, ]+", " ", text)
    text = re.sub(r"\s*,\s*", ", ", text)
    text = re.sub(r"\s+", " ", text).strip(" ,")
    return re.sub(r",? (usa|united states)$", "", text)


def resolve_place(text: str) -> Place | None:
    """What a search box entry means: a region, a state, a city, a ZIP code or a street address."""
    q = _norm(text)
    if not q:
        return ALL_HOMES
    plain = q.replace(",", "")
    for region_id, (name, words) in REGIONS.items():
        if q in words or plain in words:
            return Place(name, "region", frozenset(c.slug for c in CITIES if region_id in c.regions))
    for abbr, state_name in STATE_NAMES.items():
        if plain in (abbr.lower(), state_name.lower(), f"{state_name.lower()} state"):
            return Place(state_name, "state", frozenset(c.slug for c in CITIES if c.state == abbr))
    for city in CITIES:
        name = city.name.lower()
        state_name = STATE_NAMES[city.state].lower()
        if plain in (name, f"{name} {city.state.lower()}", f"{name} {state_name}"):
            return Place(city.label, "city", frozenset({city.slug}))
    if re.fullmatch(r"\d{5}", plain) and any(l.zipcode == plain for l in LISTINGS):
        city = next(l.city_obj for l in LISTINGS if l.zipcode == plain)
        return Place(f"{city.name}, {city.state} {plain}", "zip", zipcode=plain)
    if len(q) >= 4:
        matches = [l for l in LISTINGS if q in l.address.lower() or plain in l.address.lower().replace(",", "")]
        if matches:
            key = q if any(q in l.address.lower() for l in matches) else plain
            return Place(matches[0].address if len(matches) == 1 else text.strip(), "address", street=key)
    return None


SUGGESTED_PLACES = tuple(c.label for c in CITIES) + ("California", "Southern California", "San Francisco Bay Area, CA")

# --- filters --------------------------------------------------------------------------------------

SORTS: tuple[tuple[str, str], ...] = (
    ("featured", "Homes for You"),
    ("newest", "Newest"),
    ("highest", "Price (High to Low)"),
    ("lowest", "Price (Low to High)"),
    ("largest", "Square Feet"),
)
SORT_IDS = {s for s, _ in SORTS}
BED_CHOICES = (1, 2, 3, 4, 5)
BATH_CHOICES = (1.0, 1.5, 2.0, 3.0, 4.0)
SQFT_CHOICES = (500, 750, 1_000, 1_250, 1_500, 1_750, 2_000, 2_250, 2_500, 3_000, 4_000, 5_000)
PRICE_SUGGESTIONS = (100_000, 200_000, 300_000, 350_000, 400_000, 500_000, 600_000, 700_000, 750_000, 800_000, 900_000,
                     1_000_000, 1_100_000, 1_250_000, 1_500_000, 2_000_000, 3_000_000, 5_000_000)


@dataclass(frozen=True)
class Filters:
    query: str = ""
    min_price: int | None = None
    max_price: int | None = None
    min_beds: int | None = None
    exact_beds: bool = False
    min_baths: float | None = None
    home_types: tuple[str, ...] = ()
    min_sqft: int | None = None
    max_sqft: int | None = None
    sort: str = "featured"

    @property
    def max_beds(self) -> int | None:
        return self.min_beds if self.exact_beds and self.min_beds is not None else None

    def matches(self, l: Listing) -> bool:
        if self.min_price is not None and l.price < self.min_price:
            return False
        if self.max_price is not None and l.price > self.max_price:
            return False
        if self.min_beds is not None and (l.beds < self.min_beds or (self.exact_beds and l.beds != self.min_beds)):
            return False
        if self.min_baths is not None and l.baths < self.min_baths:
            return False
        if self.home_types and l.home_type not in self.home_types:
            return False
        if self.min_sqft is not None and (l.sqft is None or l.sqft < self.min_sqft):
            return False
        if self.max_sqft is not None and (l.sqft is None or l.sqft > self.max_sqft):
            return False
        return True


def _featured_key(l: Listing) -> str:
    return hashlib.md5(f"featured:{l.zpid}".encode()).hexdigest()


def sort_listings(listings: list[Listing], sort: str) -> list[Listing]:
    if sort == "newest":
        return sorted(listings, key=lambda l: (l.days_on, l.zpid))
    if sort == "highest":
        return sorted(listings, key=lambda l: (-l.price, l.zpid))
    if sort == "lowest":
        return sorted(listings, key=lambda l: (l.price, l.zpid))
    if sort == "largest":
        return sorted(listings, key=lambda l: (-(l.sqft or 0), l.zpid))
    return sorted(listings, key=_featured_key)


def search(place: Place, f: Filters) -> list[Listing]:
    return sort_listings([l for l in LISTINGS if place.contains(l) and f.matches(l)], f.sort)


# --- parsing what people type ----------------------------------------------------------------------

_MONEY = re.compile(r"^\$?\s*([0-9][0-9,]*(?:\.[0-9]+)?)\s*(k|m|mm|million|thousand)?$")


def parse_money(text: str | None) -> int | None:
    """ "$500,000", "500k", "1.1M", "1100000" -> dollars; None when blank or not a price."""
    if text is None:
        return None
    s = text.strip().lower().replace(" ", "").replace("usd", "")
    if not s or s in ("nomin", "nomax", "any"):
        return None
    m = _MONEY.match(s)
    if not m:
        return None
    try:
        value = float(m.group(1).replace(",", ""))
    except ValueError:
        return None
    unit = m.group(2)
    if unit == "k" or unit == "thousand":
        value *= 1_000
    elif unit in ("m", "mm", "million"):
        value *= 1_000_000
    if value < 0 or value > 1e9:
        return None
    return int(round(value))


def money(value: int | float) -> str:
    return f"${value:,.0f}"


def short_money(value: int) -> str:
    """$895K, $1.1M, $1.25M."""
    if value >= 1_000_000:
        text = f"{value / 1_000_000:.2f}".rstrip("0").rstrip(".")
        return f"${text}M"
    if value >= 1_000:
        return f"${value / 1_000:.0f}K"
    return f"${value}"


def baths_text(value: float) -> str:
    return f"{value:g}"
