"""OpenDining: an OpenTable-like replica of REAL's OpenDining clone (search by name, cuisine,
neighbourhood and rating; a "Top rated" row; restaurant pages with party size, date and the day's
table times; a reservation form with the occasion; "Notify me" for a taken time), served under
/opendining/. Data in `restaurants.py`, store rules in `reservations.py`, oracles in `oracles.py`.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from halo.sites.opendining import reservations, restaurants
from halo.sites.opendining.oracles import ORACLES, WRONG_ATTEMPTS
from halo.sites.opendining.restaurants import TODAY, Restaurant
from halo.sites.pages import BootingReplica, one_line, to_int

TASK_IDS = frozenset(f"opendining-{n}" for n in (1, 2, 4, 5, 6, 7, 9, 12, 17, 20, 24))
_SHOWCASE = restaurants.by_name("Trattoria Bella")


def _day(raw: Any) -> dt.date:
    try:
        day = dt.date.fromisoformat(str(raw))
    except ValueError:
        return TODAY
    return min(max(day, TODAY), restaurants.LAST_DAY)


def _rating(raw: Any) -> float:
    try:
        return float(raw) if str(raw) in {value for value, _ in restaurants.RATING_FILTERS if value} else 0.0
    except ValueError:
        return 0.0


class OpenDining(BootingReplica):
    site_id = "opendining"
    title = "OpenDining"
    config_key = reservations.CONFIG_KEY
    task_ids = TASK_IDS
    oracles = ORACLES
    wrong_attempts = WRONG_ATTEMPTS
    showcase_pages = [
        ("home", "/"),
        ("search", "/search?cuisine=Italian"),
        ("restaurant", f"/restaurant/{_SHOWCASE.id}?party=2&date=2024-07-18"),
        ("reserve", f"/reserve/{_SHOWCASE.id}?party=2&date=2024-07-18&time=7%3A00+PM"),
    ]

    def __init__(self, store) -> None:
        super().__init__(store)
        self.templates.env.globals.update(
            cuisines=restaurants.CUISINES, neighborhoods=restaurants.NEIGHBORHOODS, rating_filters=restaurants.RATING_FILTERS,
            party_sizes=restaurants.PARTY_SIZES, guests_label=restaurants.guests_label, occasions=restaurants.OCCASIONS,
            today=TODAY, last_day=restaurants.LAST_DAY, user=reservations.USER)
        self.templates.env.filters["stars"] = lambda rating: "★" * int(rating + 0.5) + "☆" * (5 - int(rating + 0.5))

    def initial_state(self, task_id: str, seed: int) -> dict[str, Any]:
        return reservations.initial_state()

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/", self.home),
            Route("/search", self.search),
            Route("/restaurant/{rid}", self.restaurant_page),
            Route("/reserve/{rid}", self.reserve_page),
            Route("/reserve", self.reserve, methods=["POST"]),
            Route("/notify", self.notify, methods=["POST"]),
            Route("/reservations", self.reservations_page),
            Route("/img/{rid}.svg", self.image),
        ]

    def restaurant_url(self, r: Restaurant, party: int, day: dt.date, **extra: str) -> str:
        return self.url(f"/restaurant/{r.id}") + "?" + urlencode({"party": party, "date": day.isoformat(), **extra})

    def reserve_url(self, r: Restaurant, party: int, day: dt.date, time: str) -> str:
        return self.url(f"/reserve/{r.id}") + "?" + urlencode({"party": party, "date": day.isoformat(), "time": time})

    def _missing(self, request: Request) -> Response:
        return self.show(request, "opendining_search.html", status_code=404, found=[], filters={}, heading="Restaurant not found")

    # --- pages -----------------------------------------------------------------------------------

    async def home(self, request: Request) -> Response:
        return self.show(request, "opendining_home.html", top=restaurants.top_rated(), filters={},
                         nearby=[r for r in restaurants.RESTAURANTS if r.rating < restaurants.TOP_RATED_MIN][:4])

    async def search(self, request: Request) -> Response:
        params = request.query_params
        filters = {"q": one_line(params.get("q"), 80), "cuisine": params.get("cuisine", ""),
                   "neighborhood": params.get("neighborhood", ""), "rating": params.get("rating", "")}
        if filters["cuisine"] not in restaurants.CUISINES:
            filters["cuisine"] = ""
        if filters["neighborhood"] not in restaurants.NEIGHBORHOODS:
            filters["neighborhood"] = ""
        min_rating = _rating(filters["rating"])
        filters["rating"] = str(filters["rating"]) if min_rating else ""
        found = restaurants.find(filters["q"], filters["cuisine"], filters["neighborhood"], min_rating)
        parts = [p for p in (filters["cuisine"], filters["neighborhood"] and f"in {filters['neighborhood']}") if p]
        heading = f"{len(found)} restaurant{'s' if len(found) != 1 else ''}" + (f" · {' '.join(parts)}" if parts else "")
        return self.show(request, "opendining_search.html", found=found, filters=filters, heading=heading)

    async def restaurant_page(self, request: Request) -> Response:
        r = restaurants.RESTAURANT_BY_ID.get(request.path_params["rid"])
        if r is None:
            return self._missing(request)
        params = request.query_params
        party = to_int(params.get("party"), 2, 1, restaurants.PARTY_SIZES[-1])
        day = _day(params.get("date", TODAY.isoformat()))
        notified = params.get("notified", "")
        return self.show(request, "opendining_restaurant.html", r=r, party=party, day=day,
                         slots=restaurants.slot_grid(r, day, party), notified=notified)

    async def reserve_page(self, request: Request, error: str = "", form: dict[str, str] | None = None) -> Response:
        r = restaurants.RESTAURANT_BY_ID.get(request.path_params["rid"])
        if r is None:
            return self._missing(request)
        party, day, time = self._table(form or request.query_params)
        available = dict(restaurants.slot_grid(r, day, party)).get(time) is True
        return self.show(request, "opendining_reserve.html", status_code=409 if error else 200, r=r, party=party, day=day,
                         time=time, available=available, error=error, form=form or {})

    async def reservations_page(self, request: Request) -> Response:
        state = self.boot(request)
        return self.show(request, "opendining_reservations.html", new=request.query_params.get("new") == "1",
                         details=list(reversed(state["booking"]["bookingDetails"])),
                         notifications=list(reversed(state["notification"]["notifications"])))

    async def image(self, request: Request) -> Response:
        r = restaurants.RESTAURANT_BY_ID.get(request.path_params["rid"])
        if r is None:
            return Response("unknown restaurant", status_code=404, media_type="text/plain")
        return Response(_plate_svg(r), media_type="image/svg+xml", headers={"Cache-Control": "max-age=3600"})

    # --- forms -----------------------------------------------------------------------------------

    @staticmethod
    def _table(values) -> tuple[int, dt.date, str]:
        """Party size, day and time from a restaurant page's query or a table form."""
        party = to_int(values.get("party"), 2, 1, restaurants.PARTY_SIZES[-1])
        return party, _day(values.get("date", TODAY.isoformat())), str(values.get("time", ""))

    async def reserve(self, request: Request) -> Response:
        form = await request.form()
        r = restaurants.RESTAURANT_BY_ID.get(str(form.get("restaurant", "")))
        if r is None:
            return self.see_other("/")
        party, day, time = self._table(form)
        occasion = str(form.get("occasion", "None"))
        request_text = one_line(form.get("specialRequest"), 500)
        try:
            reservations.reserve(self.boot(request), r, day, time, party, occasion, request_text)
        except reservations.BookingError as exc:
            request.path_params["rid"] = r.id
            values = {"party": str(party), "date": day.isoformat(), "time": time, "occasion": occasion,
                      "specialRequest": request_text}
            return await self.reserve_page(request, error=str(exc), form=values)
        return self.see_other("/reservations?new=1")

    async def notify(self, request: Request) -> Response:
        form = await request.form()
        r = restaurants.RESTAURANT_BY_ID.get(str(form.get("restaurant", "")))
        if r is None:
            return self.see_other("/")
        party, day, time = self._table(form)
        if dict(restaurants.slot_grid(r, day, party)).get(time) is False:     # only a taken time can be watched
            reservations.notify(self.boot(request), r, day, time, party)
        return self.see_other(self.restaurant_url(r, party, day, notified=time).removeprefix(f"/{self.site_id}"))


def _plate_svg(r: Restaurant) -> str:
    """A restaurant's picture: a plate on a table in colours drawn from its id."""
    h = hashlib.sha256(r.id.encode()).digest()
    table, plate, food = (f"hsl({h[i] * 360 // 256},{40 + h[i + 1] % 30}%,{35 + h[i + 2] % 30}%)" for i in (0, 3, 6))
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 320 200" width="320" height="200">'
            f'<rect width="320" height="200" fill="{table}"/><circle cx="160" cy="100" r="78" fill="#f4f1ea"/>'
            f'<circle cx="160" cy="100" r="60" fill="{plate}" opacity=".35"/><circle cx="150" cy="92" r="30" fill="{food}"/>'
            f'<circle cx="182" cy="112" r="18" fill="{food}" opacity=".8"/></svg>')


__all__ = ["OpenDining", "TASK_IDS"]
