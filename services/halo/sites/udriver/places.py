"""UDriver's places (San Francisco pickup and drop-off points) and ride types.

REAL's UDriver eval scripts hard-code some place ids and identifiers (52 Amber India Restaurant,
129 "22nd & Irving", 201 Club X, 370 AI Electronics Center, 699 1 Hotel San Francisco, 717 100 Van
Ness, 723 Fox Plaza Apartments, 733 333 Fremont Apartments, 739 388 Beale Street); the rest are
found by name. Look-alikes (several 7-Elevens and Chase banks, Club 26 Mix next to Club X, a 1000
Van Ness and a 1030 Polk) make the autocomplete a choice.

A ride's price is (pickup.basePrice + destination.basePrice) x the car's multiplier, less its
discount. Base prices are calibrated so that the goals work out with the $25.50 of credits:
the default car (UdriverX) from Aaha to Casa Loma, from Club X to Fox Plaza and from 1 Hotel SF to
100 Van Ness costs at most $25.50, an XL from 388 Beale to Amber India is $24.00, and from Club X
to Fox Plaza the XL and Black cost more than the credits.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Place:
    id: int
    identifier: str
    name: str
    street: str
    zip_code: str
    base_price: float
    kind: str = "place"            # icon on the suggestion list

    @property
    def formatted_address(self) -> str:
        return f"{self.street}, San Francisco, CA {self.zip_code}"

    def as_store(self) -> dict:
        return {
            "id": self.id, "identifier": self.identifier, "name": self.name, "address": self.street,
            "formattedAddress": self.formatted_address,
            "addressComponents": {"street": self.street, "city": "San Francisco", "state": "CA",
                                  "zipCode": self.zip_code, "country": "USA"},
            "basePrice": self.base_price,
        }


P = Place
PLACES: tuple[Place, ...] = (
    P(52, "AMB", "Amber India Restaurant", "25 Yerba Buena Lane", "94103", 8.50, "restaurant"),
    P(129, "SPR", "22nd & Irving", "2101 Irving Street", "94122", 6.50, "corner"),
    P(201, "CLX", "Club X", "960 Folsom Street", "94107", 9.00, "venue"),
    P(370, "RF1", "AI Electronics Center", "1250 Mission Street", "94103", 7.00, "store"),
    P(699, "OHS", "1 Hotel San Francisco", "8 Mission Street", "94105", 7.00, "hotel"),
    P(717, "VNS", "100 Van Ness", "100 Van Ness Avenue", "94102", 8.00, "apartment"),
    P(723, "FOX", "Fox Plaza Apartments", "1390 Market Street", "94102", 11.00, "apartment"),
    P(733, "DLO", "333 Fremont Apartments", "333 Fremont Street", "94105", 6.75, "apartment"),
    P(739, "BEA", "388 Beale Street", "388 Beale Street", "94105", 7.50, "apartment"),
    P(801, "CAS", "1001 Castro Street", "1001 Castro Street", "94114", 8.00, "address"),
    P(802, "PST", "1030 Post Street Apartments", "1030 Post Street", "94109", 8.75, "apartment"),
    P(803, "CHS", "1000 Chestnut St", "1000 Chestnut Street", "94109", 7.25, "address"),
    P(804, "RFT", "Rooftop 25", "25 Lusk Street", "94107", 9.25, "venue"),
    P(805, "AHA", "Aaha Indian Cuisine", "1005 Taraval Street", "94116", 8.25, "restaurant"),
    P(806, "CLH", "Casa Loma Hotel", "610 Fillmore Street", "94117", 9.75, "hotel"),
    P(807, "GGA", "Golden Gate Apartments", "1500 Golden Gate Avenue", "94115", 7.75, "apartment"),
    P(808, "TRK", "201 Turk Street Apartments", "201 Turk Street", "94102", 7.00, "apartment"),
    P(809, "C26", "Club 26 Mix", "2600 Mission Street", "94110", 9.50, "venue"),
    P(810, "E11", "7-Eleven", "1401 Irving Street", "94122", 6.00, "store"),
    P(811, "E12", "7-Eleven", "860 Post Street", "94109", 6.25, "store"),
    P(812, "E13", "7-Eleven", "2300 Polk Street", "94109", 6.50, "store"),
    P(813, "CB1", "Chase Bank", "2200 Fillmore Street", "94115", 6.75, "bank"),
    P(814, "CB2", "Chase Bank", "1 Market Street", "94105", 7.00, "bank"),
    P(815, "CB3", "Chase Bank", "1801 Noriega Street", "94122", 6.50, "bank"),
    P(816, "WFB", "Wells Fargo Bank", "464 California Street", "94104", 7.00, "bank"),
    P(817, "SAF", "Safeway", "2350 Noriega Street", "94122", 6.75, "store"),
    P(818, "VN1", "1000 Van Ness", "1000 Van Ness Avenue", "94109", 8.25, "apartment"),
    P(819, "POL", "1030 Polk Street", "1030 Polk Street", "94109", 8.00, "address"),
    P(820, "GGP", "Golden Gate Park", "501 Stanyan Street", "94117", 7.50, "park"),
    P(821, "SFO", "San Francisco International Airport", "780 S Airport Boulevard", "94128", 22.00, "airport"),
    P(822, "FBL", "Ferry Building", "1 Ferry Building", "94111", 7.25, "landmark"),
    P(823, "ORP", "Oracle Park", "24 Willie Mays Plaza", "94107", 8.00, "landmark"),
    P(824, "UNS", "Union Square", "333 Post Street", "94108", 7.50, "landmark"),
    P(825, "CLT", "Coit Tower", "1 Telegraph Hill Boulevard", "94133", 8.50, "landmark"),
    P(826, "MSC", "Moscone Center", "747 Howard Street", "94103", 7.25, "venue"),
    P(827, "SRF", "Salesforce Tower", "415 Mission Street", "94105", 7.00, "landmark"),
    P(828, "AMK", "Amber Kitchen", "1410 Valencia Street", "94110", 8.00, "restaurant"),
    P(829, "FXT", "Fox Theater Apartments", "2215 Broadway", "94115", 9.00, "apartment"),
    P(830, "CCA", "Casa Loma Cafe", "3420 Geary Boulevard", "94118", 8.00, "restaurant"),
    P(831, "ROF", "Rooftop Lounge", "1 Fremont Street", "94105", 8.75, "venue"),
    P(832, "HOM", "Home", "500 Howard Street", "94105", 7.00, "home"),
)
PLACE_BY_ID = {p.id: p for p in PLACES}


def suggest(query: str, limit: int = 8) -> list[Place]:
    """Autocomplete: places whose name or street holds every word typed ("st"/"street" alike)."""
    def words(text: str) -> list[str]:
        out = []
        for w in text.lower().replace(",", " ").replace("&", " & ").split():
            out.append({"st": "street", "st.": "street", "ave": "avenue", "apts": "apartments", "apt": "apartments"}.get(w, w))
        return out

    wanted = words(query)
    if not wanted:
        return []
    found = []
    for p in PLACES:
        have = " ".join(words(f"{p.name} {p.street}"))
        if all(w in have for w in wanted):
            found.append(p)
    return found[:limit]


@dataclass(frozen=True)
class Car:
    type: str
    label: str
    seats: int
    multiplier: float
    discount: float
    blurb: str


CARS: tuple[Car, ...] = (
    Car("UdriverShare", "UdriverShare", 2, 0.8, 0.0, "Share the ride, save"),
    Car("UdriverX", "UdriverX", 4, 1.0, 0.1, "Affordable rides, all to yourself"),
    Car("UdriverXL", "UdriverXL", 6, 1.5, 0.0, "Affordable rides for groups up to 6"),
    Car("UdriverBlack", "UdriverBlack", 4, 2.2, 0.0, "Premium rides in luxury cars"),
)
CAR_BY_TYPE = {c.type: c for c in CARS}
DEFAULT_CAR = "UdriverX"


def cars_config() -> dict[str, dict[str, float]]:
    """`config.udriver.cars` as the app boots with it (udriver-20 recomputes prices from it)."""
    return {c.type: {"multiplier": c.multiplier, "discount": c.discount} for c in CARS}


def price(pickup: Place | dict, destination: Place | dict, car: Car) -> dict[str, float]:
    def base(p) -> float:
        return p.base_price if isinstance(p, Place) else float(p["basePrice"])

    before = (base(pickup) + base(destination)) * car.multiplier
    return {"priceWithoutDiscount": round(before, 2), "finalPrice": round(before * (1 - car.discount), 2)}
