"""MarriSuite: a Marriott-like hotel search (destination, dates, rooms and guests), results with
sorting, hotel pages and booking, served under /marrisuite/. REAL v2 has one task on it
(marrisuite-8: show available hotels in Goleta next weekend). Data and store rules are in
`hotels.py`, the oracle and its wrong attempts in `oracles.py`.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from halo.sites.marrisuite import hotels
from halo.sites.marrisuite.oracles import ORACLES, WRONG_ATTEMPTS
from halo.sites.pages import BootingReplica, one_line, to_int

TASK_IDS = frozenset({"marrisuite-8"})


class MarriSuite(BootingReplica):
    site_id = "marrisuite"
    title = "MarriSuite"
    task_ids = TASK_IDS
    oracles = ORACLES
    wrong_attempts = WRONG_ATTEMPTS
    showcase_pages = [
        ("home", "/"),
        ("results", "/search?destination=Goleta%2C+California%2C+USA&checkIn=2024-07-26&checkOut=2024-07-28&rooms=1&adults=1"),
        ("hotel", "/hotel/h-104?checkIn=2024-07-26&checkOut=2024-07-28&rooms=1&adults=1"),
    ]

    def __init__(self, store) -> None:
        super().__init__(store)
        self.templates.env.globals.update(cities=hotels.CITIES, sorts=hotels.SORTS, max_rooms=hotels.MAX_ROOMS,
                                          max_adults=hotels.MAX_ADULTS, summary=hotels.summary)

    def initial_state(self, task_id: str, seed: int) -> dict[str, Any]:
        return hotels.initial_state()

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/", self.home),
            Route("/search", self.results),
            Route("/hotel/{hotel_id}", self.hotel_page),
            Route("/book", self.book, methods=["POST"]),
            Route("/reservations", self.reservations),
        ]

    @staticmethod
    def _trip(params) -> dict[str, Any]:
        """Dates, rooms and adults from a query or form (defaults: next weekend, 1 room, 1 adult)."""
        start, end = hotels.next_weekend()
        check_in = hotels.parse_day(params.get("checkIn"), start)
        check_out = hotels.parse_day(params.get("checkOut"), end if check_in == start else check_in + dt.timedelta(days=1))
        if check_in < hotels.TODAY:
            check_in = hotels.TODAY
        if check_out <= check_in:
            check_out = check_in + dt.timedelta(days=1)
        return {"check_in": check_in, "check_out": check_out,
                "rooms": to_int(params.get("rooms"), 1, 1, hotels.MAX_ROOMS),
                "adults": to_int(params.get("adults"), 1, 1, hotels.MAX_ADULTS)}

    @staticmethod
    def trip_query(trip: dict[str, Any]) -> str:
        return (f"checkIn={trip['check_in'].isoformat()}&checkOut={trip['check_out'].isoformat()}"
                f"&rooms={trip['rooms']}&adults={trip['adults']}")

    async def home(self, request: Request) -> Response:
        return self.show(request, "marrisuite_home.html", trip=self._trip(request.query_params), destination="")

    async def results(self, request: Request) -> Response:
        params = request.query_params
        destination = one_line(params.get("destination"))
        trip = self._trip(params)
        sort = params.get("sort", "recommended")
        sort = sort if sort in hotels.SORT_IDS else "recommended"
        city = hotels.resolve_city(destination)
        found: list[hotels.Hotel] = []
        if city is not None:
            found = hotels.apply_search(self.boot(request), city, trip["check_in"], trip["check_out"], trip["rooms"],
                                        trip["adults"], sort)
            destination = city.label
        nights = (trip["check_out"] - trip["check_in"]).days
        return self.show(request, "marrisuite_results.html", trip=trip, destination=destination, city=city,
                         found=found, sort=sort, nights=nights, query=self.trip_query(trip))

    async def hotel_page(self, request: Request) -> Response:
        hotel = hotels.HOTEL_BY_ID.get(request.path_params["hotel_id"])
        if hotel is None:
            return self.show(request, "marrisuite_home.html", status_code=404, trip=self._trip({}), destination="",
                             missing="That hotel is not on MarriSuite.")
        trip = self._trip(request.query_params)
        nights = (trip["check_out"] - trip["check_in"]).days
        return self.show(request, "marrisuite_hotel.html", hotel=hotel, trip=trip, nights=nights,
                         total=hotel.price * nights * trip["rooms"], query=self.trip_query(trip))

    async def book(self, request: Request) -> Response:
        form = await request.form()
        hotel = hotels.HOTEL_BY_ID.get(str(form.get("hotel", "")))
        if hotel is None:
            return self.see_other("/")
        trip = self._trip(form)
        state = self.boot(request)
        hotels.book(state, hotel, trip["check_in"], trip["check_out"], trip["rooms"], trip["adults"], state["user"]["name"])
        return self.see_other("/reservations?new=1")

    async def reservations(self, request: Request) -> Response:
        state = self.boot(request)
        booked = [(r, hotels.HOTEL_BY_ID[r["hotelId"]]) for r in reversed(state.get("reservations", []))]
        return self.show(request, "marrisuite_reservations.html", booked=booked, new=request.query_params.get("new") == "1")


__all__ = ["MarriSuite", "TASK_IDS"]
