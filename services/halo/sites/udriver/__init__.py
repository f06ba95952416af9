"""UDriver: an Uber-like replica of REAL's UDriver clone (pickup and destination autocomplete,
now or scheduled rides, ride options with prices, payment choice, the wallet with its credits,
top-ups and default payment method, trips), served under /udriver/.

Pages are server-rendered and every change is a form post answered with a redirect. The store and
its rules live in `rides.py`, the places and ride types in `places.py`, the oracles in `oracles.py`.
"""

from __future__ import annotations

import math
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from halo.sites.replica import Replica
from halo.sites.udriver import places, rides
from halo.sites.udriver.oracles import ORACLES, WRONG_ATTEMPTS
from halo.sites.udriver.places import CARS, PLACE_BY_ID
from halo.sites.udriver.rides import RideError

TASK_IDS = frozenset(f"udriver-{n}" for n in (2, 3, 4, 6, 7, 9, 11, 13, 14, 15, 16, 17, 19, 20))


def _money(value: float) -> str:
    return f"${value:,.2f}"


def _query(raw: Any) -> str:
    return " ".join(str(raw or "").split())[:80]


class UDriver(Replica):
    site_id = "udriver"
    title = "UDriver"
    task_ids = TASK_IDS
    oracles = ORACLES
    wrong_attempts = WRONG_ATTEMPTS
    showcase_pages = [
        ("home", "/?pickup_q=1+Hotel"),
        ("options", "/?demo=1"),
        ("wallet", "/wallet"),
    ]

    def __init__(self, store) -> None:
        super().__init__(store)
        env = self.templates.env
        env.filters["money"] = _money
        env.globals.update(cars=CARS, schedule_days=rides.schedule_days(), schedule_times=rides.schedule_times(),
                           first_later_time=rides.first_later_time())

    # --- REAL contract -------------------------------------------------------------------------

    def initial_state(self, task_id: str, seed: int) -> dict[str, Any]:
        # One city for every task: the goals differ, the places and the wallet do not.
        return rides.initial_state()

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/", self.home),
            Route("/trips", self.trips_page),
            Route("/trips/{trip_id}", self.trip_page),
            Route("/wallet", self.wallet_page),
            Route("/api/ride/place", self.pick_place, methods=["POST"]),
            Route("/api/ride/swap", self.swap, methods=["POST"]),
            Route("/api/ride/car", self.choose_car, methods=["POST"]),
            Route("/api/ride/when", self.set_when, methods=["POST"]),
            Route("/api/ride/payment", self.choose_payment, methods=["POST"]),
            Route("/api/ride/request", self.request_ride, methods=["POST"]),
            Route("/api/wallet/default", self.set_default, methods=["POST"]),
            Route("/api/wallet/topup", self.top_up, methods=["POST"]),
        ]

    # --- helpers -------------------------------------------------------------------------------

    def _show(self, request: Request, template: str, status_code: int = 200, **context: Any) -> Response:
        session = self.session(request)
        rides.boot(session.state, session.run_id, session.task_id)
        response = self.render(request, template, ride=session.state.get("ride"), here=request.url.path,
                               error=request.query_params.get("error", "")[:300], **context)
        response.status_code = status_code
        return response

    def _redirect(self, path: str, error: str = "") -> Response:
        if error:
            path += ("&" if "?" in path else "?") + urlencode({"error": error})
        return RedirectResponse(self.url(path), status_code=303)

    async def _act(self, request: Request, change, back: str = "/") -> Response:
        """Apply a form's change to this session's store; a refused change comes back as the page's error."""
        form = await request.form()
        try:
            result = change(self.session(request).state, form)
        except RideError as exc:
            return self._redirect(back, str(exc))
        return self._redirect(result if isinstance(result, str) else back)

    # --- pages ---------------------------------------------------------------------------------

    async def home(self, request: Request) -> Response:
        session = self.session(request)
        state = session.state
        if session.run_id == "shots" and request.query_params.get("demo") == "1" and "ride" not in state:
            # `halo sites shots` only: the showcase of ride options needs a route
            rides.set_place(state, "pickup", PLACE_BY_ID[699])
            rides.set_place(state, "dropoff", PLACE_BY_ID[717])
        pickup_q, dropoff_q = _query(request.query_params.get("pickup_q")), _query(request.query_params.get("dropoff_q"))
        r = state.get("ride")
        options = []
        balance = None
        if r and r["pickupLocation"] and r["dropoffLocation"]:
            # the ride options panel shows the credits: the wallet is written to the store here (udriver-19)
            balance = rides.wallet(state)["balance"]
            for car in CARS:
                prices = places.price(r["pickupLocation"], r["dropoffLocation"], car)
                options.append((car, prices, prices["finalPrice"] <= balance + 1e-9))
        return self._show(
            request, "udriver_home.html", pickup_q=pickup_q, dropoff_q=dropoff_q,
            pickup_suggestions=places.suggest(pickup_q) if pickup_q else [],
            dropoff_suggestions=places.suggest(dropoff_q) if dropoff_q else [],
            options=options, balance=balance,
            methods=rides.wallet(state)["paymentMethods"] if options else [],
            schedule=request.query_params.get("schedule") == "1" or (r is not None and r["when"] == "scheduled"),
        )

    async def trips_page(self, request: Request) -> Response:
        r = self.session(request).state.get("ride") or {}
        return self._show(request, "udriver_trips.html", completed=list(reversed(r.get("trips", []))),
                          scheduled=list(reversed(r.get("bookedTrips", []))))

    async def trip_page(self, request: Request) -> Response:
        trip = rides.find_trip(self.session(request).state, request.path_params["trip_id"])
        if trip is None:
            return self._show(request, "udriver_trips.html", status_code=404, completed=[], scheduled=[], missing=True)
        return self._show(request, "udriver_trip.html", trip=trip, booked=request.query_params.get("booked") == "1")

    async def wallet_page(self, request: Request) -> Response:
        w = rides.wallet(self.session(request).state)
        return self._show(request, "udriver_wallet.html", wallet=w, transactions=list(reversed(w["transactions"])),
                          added=request.query_params.get("added", "")[:20])

    # --- actions (forms) -----------------------------------------------------------------------

    async def pick_place(self, request: Request) -> Response:
        def change(state, form):
            try:
                place = PLACE_BY_ID[int(str(form.get("place", "")))]
            except (KeyError, ValueError):
                raise RideError("choose a place from the list") from None
            rides.set_place(state, "dropoff" if form.get("which") == "dropoff" else "pickup", place)
        return await self._act(request, change)

    async def swap(self, request: Request) -> Response:
        return await self._act(request, lambda state, form: rides.swap_places(state))

    async def choose_car(self, request: Request) -> Response:
        return await self._act(request, lambda state, form: rides.choose_car(state, str(form.get("car", ""))))

    async def set_when(self, request: Request) -> Response:
        def change(state, form):
            rides.set_when(state, "now" if form.get("when") == "now" else "scheduled", str(form.get("day", "")),
                           str(form.get("time", "")))
        return await self._act(request, change, back="/?schedule=1")

    async def choose_payment(self, request: Request) -> Response:
        return await self._act(request, lambda state, form: rides.choose_payment(state, str(form.get("method", ""))))

    async def request_ride(self, request: Request) -> Response:
        def change(state, form):
            return f"/trips/{rides.request_ride(state)['id']}?booked=1"
        return await self._act(request, change)

    async def set_default(self, request: Request) -> Response:
        return await self._act(request, lambda state, form: rides.set_default(state, str(form.get("method", ""))),
                               back="/wallet")

    async def top_up(self, request: Request) -> Response:
        def change(state, form):
            try:
                amount = float(str(form.get("amount", "")).replace("$", "").replace(",", "").strip())
            except ValueError:
                raise RideError("enter an amount in dollars") from None
            if not math.isfinite(amount) or round(amount, 2) != amount:
                raise RideError("enter an amount in dollars and cents")
            rides.top_up(state, amount, str(form.get("method", "")))
            return f"/wallet?added={amount:g}"
        return await self._act(request, change, back="/wallet")


__all__ = ["UDriver", "TASK_IDS"]
