"""Omnizon: an Amazon-like shop, replica of REAL's Omnizon clone (search, filters, product pages,
cart, Buy Now, checkout, order confirmation, order history).

Pages are server-rendered; every state change goes through a form an agent can operate. The
store (shop.py) is shaped after what agisdk's omnizon eval scripts read, and the catalog
(catalog.py) keeps the product ids those scripts hard-code.
"""

from __future__ import annotations

import math
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from halo.sites.omnizon import catalog, shop
from halo.sites.omnizon.attempts import ORACLES, WRONG_ATTEMPTS
from halo.sites.omnizon.catalog import CATEGORIES, PRICE_BANDS, PRODUCTS, SORT_OPTIONS, Filters, Product
from halo.sites.omnizon.images import product_svg
from halo.sites.replica import Replica

TASK_IDS = frozenset(f"omnizon-{n}" for n in (3, 9, 13, 15, 17, 24, 25, 28, 29, 30))
RESULTS_PER_PAGE = 24


def _money(value: float) -> str:
    return f"${value:,.2f}"


def _price_parts(value: float) -> tuple[str, str]:
    """("69", "99") for the big-dollars, small-cents price style."""
    dollars, cents = f"{value:,.2f}".split(".")
    return dollars, cents


def _float_or_none(raw: str | None) -> float | None:
    if raw is None or not raw.strip():
        return None
    try:
        value = float(raw)
    except ValueError:
        return None
    return value if math.isfinite(value) and value >= 0 else None


def _int(raw: Any, default: int) -> int:
    try:
        return int(str(raw))
    except (TypeError, ValueError):
        return default


def filters_from_query(request: Request) -> Filters:
    params = request.query_params
    category = params.get("category", "")
    sort = params.get("sort", "featured")
    return Filters(
        query=params.get("q", "").strip()[:200],
        category=category if category in catalog.CATEGORY_NAMES else "",
        brands=tuple(sorted(set(params.getlist("brand")))),
        min_price=_float_or_none(params.get("min")),
        max_price=_float_or_none(params.get("max")),
        min_rating=max(0, min(4, _int(params.get("rating"), 0))),
        sort=sort if sort in dict(SORT_OPTIONS) else "featured",
    )


def filters_query(f: Filters, page: int = 1) -> str:
    pairs: list[tuple[str, str]] = []
    if f.query:
        pairs.append(("q", f.query))
    if f.category:
        pairs.append(("category", f.category))
    pairs += [("brand", b) for b in f.brands]
    if f.min_price is not None:
        pairs.append(("min", f"{f.min_price:g}"))
    if f.max_price is not None:
        pairs.append(("max", f"{f.max_price:g}"))
    if f.min_rating:
        pairs.append(("rating", str(f.min_rating)))
    if f.sort != "featured":
        pairs.append(("sort", f.sort))
    if page > 1:
        pairs.append(("page", str(page)))
    return urlencode(pairs)


class Omnizon(Replica):
    site_id = "omnizon"
    title = "Omnizon"
    task_ids = TASK_IDS
    oracles = ORACLES
    wrong_attempts = WRONG_ATTEMPTS
    showcase_pages = [
        ("home", "/"),
        ("search", "/search?q=headphones"),
        ("product", "/product/5"),
        ("cart", "/cart"),
        ("orders", "/orders"),
    ]

    def __init__(self, store) -> None:
        super().__init__(store)
        env = self.templates.env
        env.filters["money"] = _money
        env.globals.update(price_parts=_price_parts, categories=CATEGORIES, fmt_day=shop.fmt_day,
                           standard_day=shop.fmt_day(shop.DELIVERY_OPTIONS[0].arrives))

    def initial_state(self, task_id: str, seed: int) -> dict[str, Any]:
        # Every task starts from the same shop (the goal, not the store, differs between tasks).
        return shop.initial_state()

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/", self.home),
            Route("/search", self.search),
            Route("/product/{product_id}", self.product_page),
            Route("/cart", self.cart_page),
            Route("/cart/add", self.cart_add, methods=["POST"]),
            Route("/cart/update", self.cart_update, methods=["POST"]),
            Route("/cart/delete", self.cart_delete, methods=["POST"]),
            Route("/buy-now", self.buy_now, methods=["POST"]),
            Route("/checkout/start", self.checkout_start, methods=["POST"]),
            Route("/checkout", self.checkout_page),
            Route("/checkout/place", self.place_order, methods=["POST"]),
            Route("/confirmation", self.confirmation),
            Route("/orders", self.orders_page),
            Route("/img/{product_id}.svg", self.image),
        ]

    # --- helpers --------------------------------------------------------------------------------

    def _state(self, request: Request) -> dict[str, Any]:
        return self.session(request).state

    def _show(self, request: Request, pathname: str, template: str, **context: Any) -> Response:
        """Render a page and record it as the app's router location (the eval scripts read it)."""
        state = self._state(request)
        shop.set_location(state, pathname, f"?{request.url.query}" if request.url.query else "")
        return self.render(request, template, cart_count=shop.cart_count(state), **context)

    def _redirect(self, path: str) -> Response:
        return RedirectResponse(self.url(path), status_code=303)

    def _not_found(self, request: Request, what: str) -> Response:
        response = self._show(request, request.url.path.removeprefix(f"/{self.site_id}") or "/", "omnizon_not_found.html", what=what)
        response.status_code = 404
        return response

    def search_url(self, f: Filters, page: int = 1, **changes: Any) -> str:
        fields = {**f.__dict__, **changes}
        query = filters_query(Filters(**fields), page)
        return self.url("/search") + (f"?{query}" if query else "")

    def brand_url(self, f: Filters, brand: str) -> str:
        """The results with `brand` ticked or unticked in the Brands filter."""
        brands = set(f.brands) ^ {brand}
        return self.search_url(f, brands=tuple(sorted(brands)))

    def current_filters(self, state: dict[str, Any]) -> Filters:
        flt = state["filter"]
        return Filters(flt["searchQuery"], flt["category"], tuple(flt["brands"]), flt["minPrice"], flt["maxPrice"],
                       flt["minRating"], flt["sortBy"])

    # --- pages ----------------------------------------------------------------------------------

    async def home(self, request: Request) -> Response:
        by_category = {c.slug: [p for p in PRODUCTS if p.category == c.slug] for c in CATEGORIES}
        deals = sorted((p for p in PRODUCTS if p.discount_percent >= 30), key=lambda p: -p.discount_percent)[:7]
        return self._show(request, "/", "omnizon_home.html", by_category=by_category, deals=deals)

    async def search(self, request: Request) -> Response:
        f = filters_from_query(request)
        shop.apply_filters(self._state(request), f)
        matched, shown = catalog.results(f)
        pages = max(1, math.ceil(len(shown) / RESULTS_PER_PAGE))
        page = max(1, min(pages, _int(request.query_params.get("page"), 1)))
        start = (page - 1) * RESULTS_PER_PAGE
        brands = sorted({p.brand for p in matched})[:12]
        return self._show(
            request, "/search", "omnizon_search.html", f=f, results=shown[start:start + RESULTS_PER_PAGE],
            total=len(shown), first=start + 1, page=page, pages=pages, brands=brands, price_bands=PRICE_BANDS,
            sort_options=SORT_OPTIONS, category_name=catalog.CATEGORY_NAMES.get(f.category, ""),
            departments=[c for c in CATEGORIES if any(p.category == c.slug for p in catalog.search(f.query))],
        )

    async def product_page(self, request: Request) -> Response:
        p = catalog.product(request.path_params["product_id"])
        if p is None:
            return self._not_found(request, "product")
        state = self._state(request)
        # same kind of product first (other bed frames for a bed frame), then the rest of its department
        related = sorted((q for q in PRODUCTS if q.category == p.category and q.id != p.id), key=lambda q: q.kind != p.kind)[:6]
        back = self.current_filters(state)
        back_url = self.search_url(back) if (back.query or back.category) else ""
        return self._show(request, f"/product/{p.id}", "omnizon_product.html", p=p, related=related,
                          back_url=back_url, delivery=shop.DELIVERY_OPTIONS, free_min=shop.FREE_SHIPPING_MIN)

    async def cart_page(self, request: Request) -> Response:
        state = self._state(request)
        items = state["cart"]["items"]
        added = catalog.product(request.query_params.get("added", ""))
        subtotal = round(sum(i["price"] * i["quantity"] for i in items), 2)
        return self._show(request, "/cart", "omnizon_cart.html", items=items, subtotal=subtotal, added=added)

    async def checkout_page(self, request: Request) -> Response:
        state = self._state(request)
        items = shop.checkout_items(state)
        if not items:
            return self._redirect("/cart")
        delivery_id = request.query_params.get("delivery", "standard")
        delivery = shop.DELIVERY_BY_ID.get(delivery_id, shop.DELIVERY_OPTIONS[0])
        summaries = {d.id: shop.summarize(items, d) for d in shop.DELIVERY_OPTIONS}
        return self._show(request, "/checkout", "omnizon_checkout.html", items=items, delivery=delivery,
                          delivery_options=shop.DELIVERY_OPTIONS, payments=shop.PAYMENT_METHODS,
                          address=shop.SHIPPING_ADDRESS, summaries=summaries, summary=summaries[delivery.id],
                          products=catalog.PRODUCTS_BY_ID, error=request.query_params.get("error", ""))

    async def confirmation(self, request: Request) -> Response:
        placed = shop.new_orders(self._state(request))
        return self._show(request, "/confirmation", "omnizon_confirmation.html", order=placed[-1] if placed else None,
                          products=catalog.PRODUCTS_BY_ID)

    async def orders_page(self, request: Request) -> Response:
        orders = list(reversed(self._state(request)["order"]["orders"]))
        return self._show(request, "/orders", "omnizon_orders.html", orders=orders, products=catalog.PRODUCTS_BY_ID)

    async def image(self, request: Request) -> Response:
        p = catalog.product(request.path_params["product_id"])
        if p is None:
            return Response("unknown product", status_code=404, media_type="text/plain")
        return Response(product_svg(p), media_type="image/svg+xml", headers={"Cache-Control": "max-age=3600"})

    # --- actions (forms) ------------------------------------------------------------------------

    async def _form_product(self, request: Request) -> tuple[Product | None, int]:
        form = await request.form()
        return catalog.product(str(form.get("product_id", ""))), _int(form.get("quantity"), 1)

    async def cart_add(self, request: Request) -> Response:
        p, quantity = await self._form_product(request)
        if p is None:
            return HTMLResponse("<p>unknown product</p>", status_code=400)
        shop.cart_add(self._state(request), p, quantity)
        return self._redirect(f"/cart?added={p.id}")

    async def cart_update(self, request: Request) -> Response:
        p, quantity = await self._form_product(request)
        if p is None:
            return HTMLResponse("<p>unknown product</p>", status_code=400)
        shop.cart_set_quantity(self._state(request), p.id, quantity)
        return self._redirect("/cart")

    async def cart_delete(self, request: Request) -> Response:
        p, _ = await self._form_product(request)
        if p is not None:
            shop.cart_remove(self._state(request), p.id)
        return self._redirect("/cart")

    async def buy_now(self, request: Request) -> Response:
        p, quantity = await self._form_product(request)
        if p is None:
            return HTMLResponse("<p>unknown product</p>", status_code=400)
        shop.start_buy_now(self._state(request), p, quantity)
        return self._redirect("/checkout")

    async def checkout_start(self, request: Request) -> Response:
        shop.start_cart_checkout(self._state(request))
        return self._redirect("/checkout")

    async def place_order(self, request: Request) -> Response:
        form = await request.form()
        try:
            shop.place_order(self._state(request), str(form.get("payment", "")), str(form.get("delivery", "")))
        except shop.CheckoutError as exc:
            return self._redirect("/checkout?" + urlencode({"error": str(exc)}))
        return self._redirect("/confirmation")
