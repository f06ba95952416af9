"""Zilloft: a Zillow-like replica of REAL's Zilloft clone (search by place, price / beds / baths /
home type / size filters, listing pages with photos, save homes, request a tour, contact an
agent, agent finder), served under /zilloft/.

Pages are server-rendered; every state change is a form an agent can operate (the filter bar's
panels, the heart buttons, the tour and contact dialogs, the agent finder's contact form). The
store and its rules live in `homes.py`, the data in `listings.py`, the drawings in `images.py`,
the oracles in `oracles.py`.
"""

from __future__ import annotations

import math
from typing import Any
from urllib.parse import parse_qsl, urlencode

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from halo.sites.replica import Replica
from halo.sites.store import SiteSession
from halo.sites.zilloft import homes, images, listings
from halo.sites.zilloft.homes import FormError
from halo.sites.zilloft.listings import (
    BATH_CHOICES, BED_CHOICES, HOME_TYPE_BY_ID, HOME_TYPES, PRICE_SUGGESTIONS, SORT_IDS, SORTS, SQFT_CHOICES,
    SUGGESTED_PLACES, Filters, Listing,
)
from halo.sites.zilloft.oracles import ORACLES, WRONG_ATTEMPTS

TASK_IDS = frozenset(f"zilloft-{n}" for n in (2, 3, 5, 6, 9, 10, 14, 15, 22, 23))
RESULTS_PER_PAGE = 24
_SHOWCASE_HOME = listings.find_by_street("2715 Humboldt Ave")


def _int(raw: Any) -> int | None:
    try:
        return int(str(raw).replace(",", ""))
    except (TypeError, ValueError):
        return None


def _float(raw: Any) -> float | None:
    try:
        value = float(str(raw))
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def _safe_back(value: Any, default: str = "/") -> str:
    """A site-relative path to return to (never another origin)."""
    text = str(value or "")
    if not text.startswith("/") or text.startswith("//") or "\\" in text:
        return default
    return text


def filters_from_params(params) -> Filters:
    """The results page's filters from its query (unknown values are dropped, min/max put in order)."""
    lo, hi = listings.parse_money(params.get("minPrice")), listings.parse_money(params.get("maxPrice"))
    if lo is not None and hi is not None and lo > hi:
        lo, hi = hi, lo
    beds = _int(params.get("beds"))
    beds = beds if beds in BED_CHOICES else None
    baths = _float(params.get("baths"))
    baths = baths if baths in BATH_CHOICES else None
    types = tuple(t.id for t in HOME_TYPES if t.id in set(params.getlist("homeType")))
    if len(types) == len(HOME_TYPES):
        types = ()                                   # every type ticked is no filter at all
    min_sqft, max_sqft = _int(params.get("minSqft")), _int(params.get("maxSqft"))
    min_sqft = min_sqft if min_sqft and min_sqft > 0 else None
    max_sqft = max_sqft if max_sqft and max_sqft > 0 else None
    if min_sqft is not None and max_sqft is not None and min_sqft > max_sqft:
        min_sqft, max_sqft = max_sqft, min_sqft
    sort = params.get("sort", "featured")
    return Filters(
        query=" ".join(params.get("q", "").split())[:120], min_price=lo, max_price=hi, min_beds=beds,
        exact_beds=beds is not None and params.get("exact") in ("1", "on", "true"), min_baths=baths,
        home_types=types, min_sqft=min_sqft, max_sqft=max_sqft, sort=sort if sort in SORT_IDS else "featured",
    )


def filter_pairs(f: Filters, page: int = 1) -> list[tuple[str, str]]:
    """The canonical query of a results page (what its URL shows; blanks left out)."""
    pairs: list[tuple[str, str]] = []
    if f.query:
        pairs.append(("q", f.query))
    if f.min_price is not None:
        pairs.append(("minPrice", str(f.min_price)))
    if f.max_price is not None:
        pairs.append(("maxPrice", str(f.max_price)))
    if f.min_beds is not None:
        pairs.append(("beds", str(f.min_beds)))
        if f.exact_beds:
            pairs.append(("exact", "1"))
    if f.min_baths is not None:
        pairs.append(("baths", f"{f.min_baths:g}"))
    pairs += [("homeType", t) for t in f.home_types]
    if f.min_sqft is not None:
        pairs.append(("minSqft", str(f.min_sqft)))
    if f.max_sqft is not None:
        pairs.append(("maxSqft", str(f.max_sqft)))
    if f.sort != "featured":
        pairs.append(("sort", f.sort))
    if page > 1:
        pairs.append(("page", str(page)))
    return pairs


def price_label(f: Filters) -> str:
    lo, hi = f.min_price, f.max_price
    if lo is not None and hi is not None:
        return f"{listings.short_money(lo)} - {listings.short_money(hi)}"
    if hi is not None:
        return f"Up to {listings.short_money(hi)}"
    if lo is not None:
        return f"{listings.short_money(lo)}+"
    return ""


def beds_baths_label(f: Filters) -> str:
    parts = []
    if f.min_beds is not None:
        parts.append(f"{f.min_beds} bd" if f.exact_beds else f"{f.min_beds}+ bd")
    if f.min_baths is not None:
        parts.append(f"{f.min_baths:g}+ ba")
    return ", ".join(parts)


def home_type_label(f: Filters) -> str:
    if not f.home_types:
        return ""
    if len(f.home_types) == 1:
        return HOME_TYPE_BY_ID[f.home_types[0]].filter_label
    return f"Home type ({len(f.home_types)})"


def facts_line(l: Listing) -> str:
    if l.home_type == "land":
        return f"{l.lot_sqft:,} sqft lot"
    beds = "Studio" if l.beds == 0 else (f"{l.beds} bd" if l.beds == 1 else f"{l.beds} bds")
    return f"{beds} | {l.baths:g} ba | {l.sqft:,} sqft"


class Zilloft(Replica):
    site_id = "zilloft"
    title = "Zilloft"
    task_ids = TASK_IDS
    oracles = ORACLES
    wrong_attempts = WRONG_ATTEMPTS
    showcase_pages = [
        ("home", "/"),
        ("search", "/homes?q=Los+Angeles%2C+CA"),
        ("filters", "/homes?q=San+Francisco+Bay+Area&maxPrice=1000000&beds=3&homeType=house"),
        ("listing", _SHOWCASE_HOME.path),
        ("tour", _SHOWCASE_HOME.path + "?dialog=tour"),
        ("contact", _SHOWCASE_HOME.path + "?dialog=contact"),
        ("agents", "/agents?location=San+Jose%2C+CA"),
    ]

    def __init__(self, store) -> None:
        super().__init__(store)
        env = self.templates.env
        env.filters.update(money=listings.money, short_money=listings.short_money, baths=listings.baths_text,
                           facts=facts_line, day_label=homes.day_label)
        env.globals.update(home_types=HOME_TYPES, bed_choices=BED_CHOICES, bath_choices=BATH_CHOICES,
                           sqft_choices=SQFT_CHOICES, price_suggestions=PRICE_SUGGESTIONS, sorts=SORTS,
                           user=homes.USER, home_type_by_id=HOME_TYPE_BY_ID, agent_by_id=listings.AGENT_BY_ID,
                           listing_by_zpid=listings.LISTING_BY_ZPID)

    # --- REAL contract -------------------------------------------------------------------------

    def initial_state(self, task_id: str, seed: int) -> dict[str, Any]:
        # One market for every task: the goals differ, the listings do not.
        return homes.initial_state()

    def differences(self, session: SiteSession) -> dict[str, Any]:
        return homes.differences(session.initial, session.state)

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/", self.home),
            Route("/homes", self.results),
            Route("/homedetails/{slug}/{zpid}_zpid/", self.listing_page),
            Route("/homedetails/{slug}/{zpid}_zpid", self.listing_page),
            Route("/agents", self.agent_finder),
            Route("/agents/{agent_id}", self.agent_page),
            Route("/saved", self.saved_page),
            Route("/tours", self.tours_page),
            Route("/api/save", self.save_home, methods=["POST"]),
            Route("/api/save-search", self.save_search, methods=["POST"]),
            Route("/api/tour", self.request_tour, methods=["POST"]),
            Route("/api/contact", self.contact_listing_agent, methods=["POST"]),
            Route("/api/agents/{agent_id}/contact", self.contact_agent, methods=["POST"]),
            Route("/img/agent/{agent_id}.svg", self.agent_image),
            Route("/img/{zpid}/{n}.svg", self.photo),
        ]

    # --- helpers -------------------------------------------------------------------------------

    def _state(self, request: Request) -> dict[str, Any]:
        return self.session(request).state

    def _show(self, request: Request, pathname: str, template: str, status_code: int = 200, **context: Any) -> Response:
        """Render a page and record it as the app's location (the app boots on its first page)."""
        session = self.session(request)
        state = session.state
        homes.boot(state, session.run_id, session.task_id)
        homes.set_location(state, pathname, f"?{request.url.query}" if request.url.query else "")
        here = pathname + (f"?{request.url.query}" if request.url.query else "")
        response = self.render(request, template, here=here, saved=set(state["favorites"]["savedHomes"]),
                               request_count=len(state["tourRequests"]["requestTourList"]) + len(state["tourRequests"]["contactAgentList"]),
                               **context)
        response.status_code = status_code
        return response

    def _redirect(self, path: str) -> Response:
        return RedirectResponse(self.url(path), status_code=303)

    def results_url(self, f: Filters, page: int = 1, **changes: Any) -> str:
        fields = {**f.__dict__, **changes}
        query = urlencode(filter_pairs(Filters(**fields), page))
        return self.url("/homes") + (f"?{query}" if query else "")

    def _not_found(self, request: Request, what: str) -> Response:
        return self._show(request, request.url.path.removeprefix(f"/{self.site_id}") or "/", "zilloft_not_found.html",
                          status_code=404, what=what)

    # --- pages ---------------------------------------------------------------------------------

    async def home(self, request: Request) -> Response:
        featured = [l for l in listings.search(listings.resolve_place("California"), Filters()) if l.home_type != "land"][:8]
        return self._show(request, "/", "zilloft_home.html", featured=featured, places=SUGGESTED_PLACES)

    async def results(self, request: Request) -> Response:
        params = request.query_params
        f = filters_from_params(params)
        page = max(1, _int(params.get("page")) or 1)
        canonical = filter_pairs(f, page)
        asked = [pair for pair in parse_qsl(request.url.query, keep_blank_values=True) if pair != ("saved", "1")]
        if asked != canonical:
            return RedirectResponse(self.results_url(f, page), status_code=303)
        place = listings.resolve_place(f.query)
        homes.apply_search(self._state(request), place, f)
        found = listings.search(place, f) if place is not None else []
        pages = max(1, math.ceil(len(found) / RESULTS_PER_PAGE))
        page = min(page, pages)
        start = (page - 1) * RESULTS_PER_PAGE
        shown = found[start:start + RESULTS_PER_PAGE]
        water = ""
        if place is not None and len(place.cities) == 1:
            water = listings.CITY_BY_SLUG[next(iter(place.cities))].water
        heading = "Real Estate & Homes For Sale" if place is None or place.kind == "all" else f"{place.name.replace(',', '')} Real Estate & Homes For Sale"
        return self._show(
            request, "/homes", "zilloft_search.html", f=f, place=place, results=shown, total=len(found), page=page,
            pages=pages, first=start + 1, heading=heading, map_svg=images.map_svg(found, water=water),
            price_label=price_label(f), beds_baths_label=beds_baths_label(f), home_type_label=home_type_label(f),
            places=SUGGESTED_PLACES,
        )

    async def listing_page(self, request: Request) -> Response:
        l = listings.listing(request.path_params["zpid"])
        if l is None:
            return self._not_found(request, "home")
        dialog = request.query_params.get("dialog", "")
        sent = request.query_params.get("sent", "")
        return self._listing(request, l, dialog=dialog if dialog in ("tour", "contact") else "", sent=sent)

    def _listing(self, request: Request, l: Listing, *, dialog: str = "", sent: str = "", form: dict | None = None,
                 errors: dict | None = None) -> Response:
        state = self._state(request)
        search = state["search"]
        back_url = ""
        if search["region"] is not None or search["usersSearchTerm"]:
            stored = search["filters"]
            back = Filters(query=search["usersSearchTerm"], min_price=stored["minPrice"], max_price=stored["maxPrice"],
                           min_beds=stored["minBeds"], exact_beds=stored["maxBeds"] is not None, min_baths=stored["minBaths"],
                           home_types=tuple(stored["homeTypes"]), min_sqft=stored["minSqft"], max_sqft=stored["maxSqft"],
                           sort=stored["sortBy"])
            back_url = self.results_url(back)
        nearby = [n for n in listings.LISTINGS if n.city == l.city and n.zpid != l.zpid and n.home_type != "land"]
        nearby = sorted(nearby, key=lambda n: abs(n.price - l.price))[:4]
        last = None
        if sent == "tour" and state["tourRequests"]["requestTourList"]:
            last = state["tourRequests"]["requestTourList"][-1]
        elif sent == "contact" and state["tourRequests"]["contactAgentList"]:
            last = state["tourRequests"]["contactAgentList"][-1]
        if last is not None and last["zpid"] != l.zpid:
            last = None
        defaults = {**homes.USER, "message": homes.default_message(l), "date": "", "time": "", "tour_type": "in_person"}
        return self._show(
            request, l.path, "zilloft_listing.html", l=l, dialog=dialog, sent=sent if last else "", last=last,
            form={**defaults, **(form or {})}, errors=errors or {}, tour_days=homes.tour_days(), tour_times=homes.TOUR_TIMES,
            back_url=back_url, nearby=nearby, photos=range(images.PHOTO_COUNT),
        )

    async def agent_finder(self, request: Request) -> Response:
        location = " ".join(request.query_params.get("location", "").split())[:120]
        name = " ".join(request.query_params.get("name", "").split())[:80].lower()
        place = listings.resolve_place(location) if location else None
        found: list[listings.Agent] = []
        if location and place is not None:
            if place.kind == "all":
                found = list(listings.AGENTS)
            elif place.kind in ("zip", "address"):
                cities = {l.city for l in listings.LISTINGS if place.contains(l)}
                found = [a for a in listings.AGENTS if a.city in cities]
            else:
                found = [a for a in listings.AGENTS if a.city in place.cities]
        elif not location:
            found = list(listings.AGENTS) if name else []
        if name:
            found = [a for a in found if name in a.name.lower()]
        found.sort(key=lambda a: (-a.sales_12mo, a.name))
        return self._show(request, "/agents", "zilloft_agents.html", location=location, name=name, place=place,
                          agents=found, searched=bool(location or name), places=SUGGESTED_PLACES)

    async def agent_page(self, request: Request) -> Response:
        agent = listings.AGENT_BY_ID.get(request.path_params["agent_id"])
        if agent is None:
            return self._not_found(request, "agent")
        return self._agent(request, agent, sent=request.query_params.get("sent") == "1")

    def _agent(self, request: Request, agent: listings.Agent, *, sent: bool = False, form: dict | None = None,
               errors: dict | None = None) -> Response:
        active = [l for l in listings.LISTINGS if l.agent_id == agent.id]
        defaults = {**homes.USER, "message": "", "reason": "buy"}
        return self._show(request, f"/agents/{agent.id}", "zilloft_agent.html", agent=agent, active=active, sent=sent,
                          form={**defaults, **(form or {})}, errors=errors or {})

    async def saved_page(self, request: Request) -> Response:
        state = self._state(request)
        saved = [listings.listing(z) for z in reversed(state["favorites"]["savedHomes"])]
        return self._show(request, "/saved", "zilloft_saved.html", homes_saved=[l for l in saved if l],
                          searches=state["favorites"]["savedSearches"])

    async def tours_page(self, request: Request) -> Response:
        requests = self._state(request)["tourRequests"]
        return self._show(request, "/tours", "zilloft_tours.html", tours=list(reversed(requests["requestTourList"])),
                          contacts=list(reversed(requests["contactAgentList"])))

    async def photo(self, request: Request) -> Response:
        l = listings.listing(request.path_params["zpid"])
        n = _int(request.path_params["n"])
        if l is None or n is None or not 0 <= n < images.PHOTO_COUNT:
            return Response("unknown photo", status_code=404, media_type="text/plain")
        return Response(images.photo_svg(l, n), media_type="image/svg+xml", headers={"Cache-Control": "max-age=3600"})

    async def agent_image(self, request: Request) -> Response:
        agent = listings.AGENT_BY_ID.get(request.path_params["agent_id"])
        if agent is None:
            return Response("unknown agent", status_code=404, media_type="text/plain")
        return Response(images.agent_svg(agent), media_type="image/svg+xml", headers={"Cache-Control": "max-age=3600"})

    # --- actions (forms) -----------------------------------------------------------------------

    @staticmethod
    def _contact_values(form: FormData) -> dict[str, str]:
        return {k: str(form.get(k, "")) for k in ("name", "email", "phone", "message")}

    async def save_home(self, request: Request) -> Response:
        form = await request.form()
        l = listings.listing(str(form.get("zpid", "")))
        back = _safe_back(form.get("back"))
        if l is not None:
            homes.toggle_saved(self._state(request), l.zpid)
        return self._redirect(back)

    async def save_search(self, request: Request) -> Response:
        form = await request.form()
        f = filters_from_params(form)
        place = listings.resolve_place(f.query)
        if place is not None:
            labels = [place.name, price_label(f), beds_baths_label(f), home_type_label(f)]
            if f.min_sqft or f.max_sqft:
                labels.append(f"{f.min_sqft or 0:,}+ sqft" if not f.max_sqft else f"{f.min_sqft or 0:,}-{f.max_sqft:,} sqft")
            homes.save_search(self._state(request), " · ".join(x for x in labels if x), urlencode(filter_pairs(f)))
        return RedirectResponse(self.results_url(f) + ("&" if filter_pairs(f) else "?") + "saved=1", status_code=303)

    async def request_tour(self, request: Request) -> Response:
        form = await request.form()
        l = listings.listing(str(form.get("zpid", "")))
        if l is None:
            return self._redirect("/")
        values = self._contact_values(form)
        day, time, tour_type = str(form.get("date", "")), str(form.get("time", "")), str(form.get("tour_type", "in_person"))
        try:
            homes.request_tour(self._state(request), l, day, time, "video" if tour_type == "video" else "in_person", values)
        except FormError as exc:
            return self._listing(request, l, dialog="tour", form={**values, "date": day, "time": time, "tour_type": tour_type},
                                 errors=exc.errors)
        return self._redirect(l.path + "?sent=tour")

    async def contact_listing_agent(self, request: Request) -> Response:
        form = await request.form()
        l = listings.listing(str(form.get("zpid", "")))
        if l is None:
            return self._redirect("/")
        values = self._contact_values(form)
        day, time = str(form.get("date", "")), str(form.get("time", ""))
        try:
            homes.contact_agent(self._state(request), l.agent, values, l=l, day=day, time=time)
        except FormError as exc:
            return self._listing(request, l, dialog="contact", form={**values, "date": day, "time": time}, errors=exc.errors)
        return self._redirect(l.path + "?sent=contact")

    async def contact_agent(self, request: Request) -> Response:
        agent = listings.AGENT_BY_ID.get(request.path_params["agent_id"])
        if agent is None:
            return self._redirect("/agents")
        form = await request.form()
        values = self._contact_values(form)
        reason = {"buy": "Buying a home", "sell": "Selling a home", "both": "Buying and selling"}.get(str(form.get("reason", "")), "Buying a home")
        try:
            homes.contact_agent(self._state(request), agent, values, reason=reason)
        except FormError as exc:
            return self._agent(request, agent, form={**values, "reason": str(form.get("reason", "buy"))}, errors=exc.errors)
        return self._redirect(f"/agents/{agent.id}?sent=1")


__all__ = ["Zilloft", "TASK_IDS"]
