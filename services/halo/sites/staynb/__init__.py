"""StayNB: an Airbnb-like replica of REAL's StayNB clone (search bar with destination autocomplete,
a two-month date picker and guest steppers; a filters dialog with rooms and the six amenities;
stays with wishlists from the heart, Share, Reserve and card payment), served under /staynb/.

Everything is server-rendered: the search bar is one GET form whose buttons (a suggestion, a day,
a stepper, Search) submit it, so the draft lives in the URL and only Search (or the filters'
"Show places") writes the store. Data in `stays.py`, store rules in `trips.py`, oracles in
`oracles.py`.
"""

from __future__ import annotations

import datetime as dt
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from halo.sites.pages import BootingReplica, one_line, safe_back, to_int
from halo.sites.staynb import stays, trips
from halo.sites.staynb.oracles import ORACLES, WRONG_ATTEMPTS
from halo.sites.staynb.stays import AMENITIES, GUEST_KINDS, TODAY, Filters, Stay
from halo.sites.staynb.trips import Query

TASK_IDS = frozenset(f"staynb-{n}" for n in (1, 4, 5, 6, 9, 12, 13, 14, 15, 17, 19))
PANELS = ("where", "dates", "who", "filters")
_SHOWCASE = stays.by_title("Trastevere two-bedroom with terrace")
_ROME = "where=Rome%2C+Italy&checkin=2025-01-03&checkout=2025-01-05&adults=4"


def _day(raw: Any) -> dt.date | None:
    try:
        return dt.date.fromisoformat(str(raw))
    except ValueError:
        return None


def _month(day: dt.date) -> dt.date:
    return day.replace(day=1)


def _add_months(month: dt.date, n: int) -> dt.date:
    index = month.year * 12 + month.month - 1 + n
    return dt.date(index // 12, index % 12 + 1, 1)


def _month_days(month: dt.date) -> list[dt.date]:
    days, day = [], month
    while day.month == month.month:
        days.append(day)
        day += dt.timedelta(days=1)
    return days


def query_from(params) -> Query:
    checkin, checkout = _day(params.get("checkin")), _day(params.get("checkout"))
    if checkin is None or checkin < TODAY:
        checkin = checkout = None
    elif checkout is None or checkout < checkin:
        checkout = checkin
    amenities = tuple(a for a in AMENITIES if a in set(params.getlist("amenities")))
    filters = Filters(amenities=amenities, bedrooms=to_int(params.get("bedrooms"), 0, 0, 3),
                      beds=to_int(params.get("beds"), 0, 0, 3), bathrooms=to_int(params.get("bathrooms"), 0, 0, 3),
                      min_price=to_int(params.get("minPrice"), 0, 0, 10_000), max_price=to_int(params.get("maxPrice"), 0, 0, 10_000))
    guests = {kind: to_int(params.get(kind.lower()), 0, 0, 16) for kind, _ in GUEST_KINDS}
    return Query(where=one_line(params.get("where"), 80), checkin=checkin, checkout=checkout, guests=guests, filters=filters)


def query_pairs(q: Query, with_filters: bool = True) -> list[tuple[str, str]]:
    """The query as URL pairs (blanks and defaults left out)."""
    pairs: list[tuple[str, str]] = []
    if q.where:
        pairs.append(("where", q.where))
    if q.checkin:
        pairs += [("checkin", q.checkin.isoformat()), ("checkout", (q.checkout or q.checkin).isoformat())]
    pairs += [(kind.lower(), str(n)) for kind, n in q.guests.items() if n]
    if with_filters:
        f = q.filters
        pairs += [("amenities", a) for a in f.amenities]
        pairs += [(k, str(v)) for k, v in (("bedrooms", f.bedrooms), ("beds", f.beds), ("bathrooms", f.bathrooms),
                                             ("minPrice", f.min_price), ("maxPrice", f.max_price)) if v]
    return pairs


class StayNB(BootingReplica):
    site_id = "staynb"
    title = "StayNB"
    task_ids = TASK_IDS
    oracles = ORACLES
    wrong_attempts = WRONG_ATTEMPTS
    showcase_pages = [
        ("home", "/"),
        ("dates", f"/?{_ROME}&open=dates&month=2025-01"),
        ("results", f"/s?{_ROME}&bedrooms=2&amenities=Wifi"),
        ("filters", f"/s?{_ROME}&open=filters"),
        ("stay", f"/rooms/{_SHOWCASE.id}?{_ROME}"),
    ]

    def __init__(self, store) -> None:
        super().__init__(store)
        self.templates.env.globals.update(
            amenities=AMENITIES, room_choices=stays.ROOM_CHOICES, guest_kinds=GUEST_KINDS, destinations=stays.DESTINATIONS,
            share_contacts=trips.SHARE_CONTACTS, today=TODAY, query_pairs=query_pairs, month_days=_month_days)

    def initial_state(self, task_id: str, seed: int) -> dict[str, Any]:
        return trips.initial_state()

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/", self.home),
            Route("/s", self.results),
            Route("/rooms/{stay_id}", self.stay_page),
            Route("/book/{stay_id}", self.book_page),
            Route("/wishlists", self.wishlists_page),
            Route("/trips", self.trips_page),
            Route("/reserve", self.reserve, methods=["POST"]),
            Route("/pay", self.pay, methods=["POST"]),
            Route("/wishlist/create", self.create_wishlist, methods=["POST"]),
            Route("/wishlist/add", self.add_to_wishlist, methods=["POST"]),
            Route("/share", self.share, methods=["POST"]),
        ]

    def link(self, path: str, q: Query, with_filters: bool = True, **extra: str) -> str:
        pairs = query_pairs(q, with_filters) + [(k, v) for k, v in extra.items() if v]
        return self.url(path) + (f"?{urlencode(pairs)}" if pairs else "")

    # --- the search bar --------------------------------------------------------------------------

    def _search_bar(self, request: Request) -> tuple[Query, str, str, Response | None]:
        """Apply the search bar's button (a suggestion, a day, a month arrow, a stepper, Search) to
        the draft: (query, open panel, message, redirect after a search)."""
        params = request.query_params
        q = query_from(params)
        panel = params.get("open", "")
        panel = panel if panel in PANELS else ""
        message = ""
        if "pickWhere" in params:
            q.where, panel = one_line(params["pickWhere"], 80), "dates"
        elif "pick" in params:
            day = _day(params["pick"])
            if day is not None:
                trips.pick_day(q, day)
            panel = "dates"
        elif "month" in params and panel != "filters":
            panel = "dates"
        elif "step" in params:
            kind, _, sign = str(params["step"]).partition(":")
            trips.step_guests(q, kind, 1 if sign == "+" else -1)
            panel = "who"
        elif "clearDates" in params:
            q.checkin = q.checkout = None
            panel = "dates"
        if "go" in params:
            destination = stays.resolve(q.where)
            if destination is not None:
                q.where = destination.label
                trips.apply_search(self.boot(request), destination, q)
                return q, "", "", self.see_other(self.link("/s", q).removeprefix(self.url("")))
            panel = "where"
            message = "Choose a destination from the list." if q.where else "Where are you going?"
        return q, panel, message, None

    def _bar_context(self, request: Request, q: Query, panel: str, message: str) -> dict[str, Any]:
        first = _month(q.checkin) if q.checkin else _month(TODAY)
        params = request.query_params
        asked = _day(f"{params.get('month') or params.get('shown', '')}-01")   # a month arrow, else the months shown
        if asked is not None:
            first = asked
        first = min(max(first, _month(TODAY)), stays.LAST_MONTH)
        months = [first, _add_months(first, 1)]
        return {"q": q, "panel": panel, "message": message, "months": months, "prev_month": _add_months(first, -1),
                "next_month": _add_months(first, 1), "can_prev": first > _month(TODAY), "can_next": first < stays.LAST_MONTH,
                "suggestions": stays.suggestions(q.where if panel == "where" and not message else ""),
                "saved": trips.saved_ids(self.boot(request))}

    async def home(self, request: Request) -> Response:
        q, panel, message, redirect = self._search_bar(request)
        if redirect is not None:
            return redirect
        featured = [stays.by_title(t) for t in ("Stone mas among the lavender", "Trastevere two-bedroom with terrace",
                                                 "Camps Bay villa", "Kitsilano house near the beach", "Haussmann flat near the Louvre",
                                                 "South Beach condo", "Lakeside chalet in Hallstatt", "Escazú hillside house")]
        return self.show(request, "staynb_home.html", action=self.url("/"), featured=featured, here="/",
                         **self._bar_context(request, q, panel, message))

    async def results(self, request: Request) -> Response:
        q, panel, message, redirect = self._search_bar(request)
        if redirect is not None:
            return redirect
        destination = stays.resolve(q.where)
        found = stays.find(destination, q.guest_total, q.filters)
        dialog, stay = self._dialog(request)
        here = self.link("/s", q).removeprefix(self.url(""))
        return self.show(request, "staynb_results.html", action=self.url("/s"), destination=destination, found=found,
                         dialog=dialog, dialog_stay=stay, here=here, notice=request.query_params.get("notice", ""),
                         **self._bar_context(request, q, panel, message))

    def _dialog(self, request: Request) -> tuple[str, Stay | None]:
        dialog = request.query_params.get("dialog", "")
        stay = stays.STAY_BY_ID.get(request.query_params.get("stay", ""))
        return (dialog, stay) if dialog in ("wishlist", "share") and stay is not None else ("", None)

    # --- stays, booking, wishlists -----------------------------------------------------------------

    def _missing(self, request: Request) -> Response:
        return self.show(request, "staynb_missing.html", status_code=404, q=Query(), here="/")

    async def stay_page(self, request: Request) -> Response:
        stay = stays.STAY_BY_ID.get(request.path_params["stay_id"])
        if stay is None:
            return self._missing(request)
        q = query_from(request.query_params)
        dialog, dialog_stay = self._dialog(request)
        here = self.link(f"/rooms/{stay.id}", q).removeprefix(self.url(""))
        return self.show(request, "staynb_stay.html", stay=stay, q=q, price=trips.price_breakdown(stay, q.nights),
                         dialog=dialog, dialog_stay=dialog_stay, here=here, notice=request.query_params.get("notice", ""),
                         saved=trips.saved_ids(self.boot(request)), error=request.query_params.get("error", ""))

    async def reserve(self, request: Request) -> Response:
        form = await request.form()
        stay = stays.STAY_BY_ID.get(str(form.get("stay", "")))
        if stay is None:
            return self.see_other("/")
        q = query_from(form)
        if q.checkin is None or q.nights < 1:
            return self.see_other(self.link(f"/rooms/{stay.id}", q, error="Add your check-in and check-out dates to reserve.")
                                  .removeprefix(self.url("")))
        if q.guest_total < 1:
            q.guests["Adults"] = 1
        trips.reserve(self.boot(request), stay, q)
        return self.see_other(f"/book/{stay.id}")

    async def book_page(self, request: Request, form: dict[str, str] | None = None) -> Response:
        stay = stays.STAY_BY_ID.get(request.path_params["stay_id"])
        state = self.boot(request)
        current = state["booking"]["currentBooking"]
        if stay is None or not current or current["stayId"] != stay.id:
            return self._missing(request)
        return self.show(request, "staynb_book.html", stay=stay, current=current, errors=state["booking"]["errors"],
                         form=form or {}, q=Query(), here=f"/book/{stay.id}")

    async def pay(self, request: Request) -> Response:
        form = await request.form()
        values = {k: one_line(form.get(k), 40) for k in ("cardNumber", "expiration", "cvv", "zipcode")}
        state = self.boot(request)
        current = state["booking"]["currentBooking"]
        if not current:
            return self.see_other("/trips")
        code = trips.pay(state, values["cardNumber"], values["expiration"], values["cvv"], values["zipcode"])
        if code is None:
            request.path_params["stay_id"] = current["stayId"]
            response = await self.book_page(request, form=values)
            response.status_code = 400
            return response
        return self.see_other(f"/trips?confirmed={code}")

    async def trips_page(self, request: Request) -> Response:
        state = self.boot(request)
        return self.show(request, "staynb_trips.html", q=Query(), here="/trips", confirmed=request.query_params.get("confirmed", ""),
                         bookings=list(reversed(state["booking"]["bookingDetails"].values())))

    async def wishlists_page(self, request: Request) -> Response:
        state = self.boot(request)
        return self.show(request, "staynb_wishlists.html", q=Query(), here="/wishlists",
                         wishlists=list(state["wishlist"]["wishlists"].values()))

    async def create_wishlist(self, request: Request) -> Response:
        form = await request.form()
        stay = stays.STAY_BY_ID.get(str(form.get("stay", "")))
        back = safe_back(form.get("back"))
        name = one_line(form.get("name"), 50)
        if stay is None:
            return self.see_other(back)
        if not name:
            return self.see_other(_with(back, dialog="wishlist", stay=stay.id, error="Give your wishlist a name."))
        trips.create_wishlist(self.boot(request), name, stay)
        return self.see_other(_with(back, notice=f"Saved to {name}"))

    async def add_to_wishlist(self, request: Request) -> Response:
        form = await request.form()
        stay = stays.STAY_BY_ID.get(str(form.get("stay", "")))
        back = safe_back(form.get("back"))
        wishlist = trips.add_to_wishlist(self.boot(request), str(form.get("wishlist", "")), stay) if stay else None
        return self.see_other(_with(back, notice=f"Saved to {wishlist['name']}") if wishlist else back)

    async def share(self, request: Request) -> Response:
        form = await request.form()
        stay = stays.STAY_BY_ID.get(str(form.get("stay", "")))
        back = safe_back(form.get("back"))
        via, to = str(form.get("via", "")), str(form.get("to", ""))
        if stay is None or via not in ("Messages", "Copy link") or (via == "Messages" and to not in trips.SHARE_CONTACTS):
            return self.see_other(back)
        trips.share(self.boot(request), stay, via, to if via == "Messages" else "")
        return self.see_other(_with(back, notice=f"Sent to {to}" if via == "Messages" else "Link copied"))


def _with(path: str, **extra: str) -> str:
    """`path` (with or without a query) plus `extra` query values."""
    joiner = "&" if "?" in path else "?"
    return path + joiner + urlencode(extra)


__all__ = ["StayNB", "TASK_IDS"]
