"""DashDish: a DoorDash-like replica of REAL's DashDish clone (search and cuisine chips, store
menus, an item dialog with size and quantity, cart, checkout with delivery / pickup, standard /
express, tips and fees, order confirmation and history), served under /dashdish/.

Pages are server-rendered and every change is a form post answered with a redirect. The store and
its rules live in `orders.py`, the restaurants in `menu.py`, the oracles in `oracles.py`.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from halo.sites.dashdish import menu, orders
from halo.sites.dashdish.menu import CUISINES, RESTAURANT_BY_ID, RESTAURANTS
from halo.sites.dashdish.oracles import ORACLES, WRONG_ATTEMPTS
from halo.sites.dashdish.orders import CartError
from halo.sites.replica import Replica
from halo.sites.store import SiteSession

TASK_IDS = frozenset(f"dashdish-{n}" for n in (1, 3, 4, 7, 8, 10, 11, 12, 17, 24, 26))


def _money(value: float) -> str:
    return f"${value:,.2f}"


def _int(raw: Any, default: int) -> int:
    try:
        return int(str(raw))
    except (TypeError, ValueError):
        return default


class DashDish(Replica):
    site_id = "dashdish"
    title = "DashDish"
    task_ids = TASK_IDS
    oracles = ORACLES
    wrong_attempts = WRONG_ATTEMPTS
    showcase_pages = [
        ("home", "/"),
        ("store", "/store/wingstop"),
        ("item", "/store/wingstop?item=ws-lemon-pepper"),
        ("checkout", "/checkout?demo=1"),
    ]

    def __init__(self, store) -> None:
        super().__init__(store)
        env = self.templates.env
        env.filters["money"] = _money
        env.globals.update(cuisines=CUISINES, tip_choices=orders.TIP_CHOICES, max_quantity=orders.MAX_QUANTITY)

    # --- REAL contract -------------------------------------------------------------------------

    def initial_state(self, task_id: str, seed: int) -> dict[str, Any]:
        # One town of restaurants for every task: the goals differ, the menus do not.
        return orders.initial_state()

    def differences(self, session: SiteSession) -> dict[str, Any]:
        return orders.differences(session.initial, session.state)

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/", self.home),
            Route("/search", self.search_page),
            Route("/store/{store_id}", self.store_page),
            Route("/cart", self.cart_page),
            Route("/checkout", self.checkout_page),
            Route("/orders", self.orders_page),
            Route("/orders/{order_id}", self.order_page),
            Route("/api/cart/add", self.add_to_cart, methods=["POST"]),
            Route("/api/cart/update", self.update_cart, methods=["POST"]),
            Route("/api/checkout/options", self.checkout_options, methods=["POST"]),
            Route("/api/checkout/place", self.place_order, methods=["POST"]),
        ]

    # --- helpers -------------------------------------------------------------------------------

    def _show(self, request: Request, template: str, status_code: int = 200, **context: Any) -> Response:
        session = self.session(request)
        orders.boot(session.state, session.run_id, session.task_id)
        cart = session.state["cart"]
        response = self.render(request, template, cart=cart, cart_count=sum(i["quantity"] for i in cart["cartItems"]),
                               query=context.pop("query", ""), **context)
        response.status_code = status_code
        return response

    def _redirect(self, path: str) -> Response:
        return RedirectResponse(self.url(path), status_code=303)

    # --- pages ---------------------------------------------------------------------------------

    async def home(self, request: Request) -> Response:
        return self._show(request, "dashdish_home.html", restaurants=RESTAURANTS,
                          popular=[(r, d) for r in RESTAURANTS for d in r.dishes if d.popular][:8])

    async def search_page(self, request: Request) -> Response:
        query = " ".join(request.query_params.get("q", "").split())[:100]
        cuisine = request.query_params.get("cuisine", "")
        if cuisine in CUISINES:
            stores, dishes = [r for r in RESTAURANTS if r.cuisine == cuisine], []
        else:
            cuisine = ""
            stores, dishes = menu.search(query)
        return self._show(request, "dashdish_search.html", query=query, cuisine=cuisine, stores=stores, dishes=dishes)

    async def store_page(self, request: Request) -> Response:
        restaurant = RESTAURANT_BY_ID.get(request.path_params["store_id"])
        if restaurant is None:
            return self._show(request, "dashdish_not_found.html", status_code=404, what="store")
        item = restaurant.dish(request.query_params.get("item", ""))
        return self._show(request, "dashdish_store.html", r=restaurant, item=item,
                          error=request.query_params.get("error", "")[:200],
                          added=request.query_params.get("added", "") == "1",
                          new_cart=request.query_params.get("new_cart", "") == "1")

    async def cart_page(self, request: Request) -> Response:
        return self._show(request, "dashdish_cart.html", error=request.query_params.get("error", "")[:200])

    async def checkout_page(self, request: Request) -> Response:
        session = self.session(request)
        state = session.state
        if session.run_id == "shots" and request.query_params.get("demo") == "1" and not state["cart"]["cartItems"]:
            # `halo sites shots` only: the showcase checkout needs a cart (its fresh session has none)
            restaurant = RESTAURANT_BY_ID["wingstop"]
            orders.add_item(state, restaurant, restaurant.dishes[0], "10 pc", 1)
        cart = state["cart"]
        name = orders.cart_restaurant(state)
        restaurant = next((r for r in RESTAURANTS if r.name == name), None)
        eta = orders.eta(restaurant.minutes if restaurant else "30-40 min", cart["checkoutDetails"]["shipping"])
        return self._show(request, "dashdish_checkout.html", eta=eta, restaurant=restaurant,
                          error=request.query_params.get("error", "")[:200])

    async def orders_page(self, request: Request) -> Response:
        placed = list(reversed(self.session(request).state["cart"]["foodOrders"]))
        return self._show(request, "dashdish_orders.html", placed=placed)

    async def order_page(self, request: Request) -> Response:
        order_id = request.path_params["order_id"]
        order = next((o for o in self.session(request).state["cart"]["foodOrders"] if o["orderId"] == order_id), None)
        if order is None:
            return self._show(request, "dashdish_not_found.html", status_code=404, what="order")
        return self._show(request, "dashdish_order.html", order=order)

    # --- actions (forms) -----------------------------------------------------------------------

    async def add_to_cart(self, request: Request) -> Response:
        form = await request.form()
        found = menu.find_dish(str(form.get("dish", "")))
        if found is None:
            return self._redirect("/")
        restaurant, dish = found
        try:
            replaced = orders.add_item(self.session(request).state, restaurant, dish, str(form.get("size", "")),
                                       _int(form.get("quantity"), 1))
        except CartError as exc:
            return self._redirect(f"/store/{restaurant.id}?" + urlencode({"item": dish.id, "error": str(exc)}))
        return self._redirect(f"/store/{restaurant.id}?added=1" + ("&new_cart=1" if replaced else ""))

    async def update_cart(self, request: Request) -> Response:
        form = await request.form()
        quantity = 0 if form.get("remove") else _int(form.get("quantity"), -1)
        try:
            orders.set_quantity(self.session(request).state, str(form.get("line", "")), quantity)
        except CartError as exc:
            return self._redirect("/cart?" + urlencode({"error": str(exc)}))
        return self._redirect("/cart")

    async def checkout_options(self, request: Request) -> Response:
        form = await request.form()
        tip = form.get("tip")
        orders.set_options(self.session(request).state, shipping_option=form.get("shippingOption"),
                           delivery_option=form.get("deliveryOption"),
                           tip_percent=_int(tip, -1) if tip is not None else None)
        return self._redirect("/checkout")

    async def place_order(self, request: Request) -> Response:
        try:
            order = orders.place_order(self.session(request).state)
        except CartError as exc:
            return self._redirect("/checkout?" + urlencode({"error": str(exc)}))
        return self._redirect(f"/orders/{order['orderId']}?placed=1")


__all__ = ["DashDish", "TASK_IDS"]
