"""DashDish's store (what /finish diffs) and the operations its pages perform on it.

Store slices, shaped after what agisdk's dashdish eval scripts read:

    config.dashdish        {run_id, task_id}: written on the first page after /config (lands in added.config)
    cart.cartItems         [{id, name, description, restaurantName, price, quantity, size}]
    cart.checkoutDetails   {shipping: {shippingOption: Delivery|Pickup, deliveryOption: Standard|Express,
                            address}, payment, tipPercent, charges: {subtotal, deliveryFee, serviceFee, tax,
                            tip, totalAmount}}: the checkout page's choices, charges kept up with the cart
    cart.foodOrders        placed orders, appended (PRESENT as []: a new order shows under
                           initialfinaldiff.added.cart.foodOrders["<i>"] as a dict)

Fees: delivery $2.99 (Express adds $2.99), pickup free; service fee 10% and tax 8.75% of the
subtotal; tip 0/10/15/20% of the subtotal, 15% by default. Every amount is a number rounded to
cents.
"""

from __future__ import annotations

import copy
from datetime import datetime, timedelta
from typing import Any

from halo.sites.dashdish.menu import Dish, Restaurant

DELIVERY_FEE = 2.99
EXPRESS_FEE = 2.99
SERVICE_RATE = 0.10
TAX_RATE = 0.0875
TIP_CHOICES = (0, 10, 15, 20)
DEFAULT_TIP = 15
MAX_QUANTITY = 10
#: REAL v2's "now": Thursday, July 18, 2024, 10:00 AM Pacific (17:00 UTC).
CLOCK = datetime(2024, 7, 18, 17, 0, 0)
ADDRESS = "500 Howard St, San Francisco, CA 94105"
CARD = {"type": "card", "brand": "Visa", "last4": "4242", "displayName": "Visa •••• 4242"}


class CartError(ValueError):
    """A cart change the page refuses (shown to the user, state unchanged)."""


def _charges(items: list[dict[str, Any]], shipping: dict[str, str], tip_percent: int) -> dict[str, float]:
    subtotal = round(sum(i["price"] * i["quantity"] for i in items), 2)
    delivery = 0.0
    if shipping["shippingOption"] == "Delivery" and items:
        delivery = DELIVERY_FEE + (EXPRESS_FEE if shipping["deliveryOption"] == "Express" else 0.0)
    service, tax, tip = (round(subtotal * rate, 2) for rate in (SERVICE_RATE, TAX_RATE, tip_percent / 100))
    total = round(subtotal + delivery + service + tax + tip, 2)
    return {"subtotal": subtotal, "deliveryFee": round(delivery, 2), "serviceFee": service, "tax": tax, "tip": tip,
            "totalAmount": total}


def _fresh_checkout() -> dict[str, Any]:
    shipping = {"shippingOption": "Delivery", "deliveryOption": "Standard", "address": ADDRESS}
    return {"shipping": shipping, "payment": dict(CARD), "tipPercent": DEFAULT_TIP,
            "charges": _charges([], shipping, DEFAULT_TIP)}


def initial_state() -> dict[str, Any]:
    return {
        "config": {},
        "user": {"name": "Alex Morgan", "address": ADDRESS},
        "cart": {"cartItems": [], "checkoutDetails": _fresh_checkout(), "foodOrders": []},
    }


def boot(state: dict[str, Any], run_id: str, task_id: str) -> None:
    """The app reads its run configuration on its first page load (it lands in added.config)."""
    if "dashdish" not in state["config"]:
        state["config"]["dashdish"] = {"run_id": run_id, "task_id": task_id}


def _recharge(cart: dict[str, Any]) -> None:
    details = cart["checkoutDetails"]
    details["charges"] = _charges(cart["cartItems"], details["shipping"], details["tipPercent"])


def cart_restaurant(state: dict[str, Any]) -> str:
    items = state["cart"]["cartItems"]
    return items[0]["restaurantName"] if items else ""


def add_item(state: dict[str, Any], restaurant: Restaurant, dish: Dish, size_label: str, quantity: int) -> bool:
    """Add a dish to the cart; a dish from another restaurant starts a new cart (True when it did)."""
    size = dish.size(size_label)
    if size is None:
        raise CartError(f"choose a size for {dish.name}")
    if not 1 <= quantity <= MAX_QUANTITY:
        raise CartError(f"quantity must be between 1 and {MAX_QUANTITY}")
    cart = state["cart"]
    replaced = bool(cart["cartItems"]) and cart_restaurant(state) != restaurant.name
    if replaced:
        cart["cartItems"] = []
    line_id = f"{dish.id}:{size.label}"
    line = next((i for i in cart["cartItems"] if i["id"] == line_id), None)
    if line is not None:
        line["quantity"] = min(MAX_QUANTITY, line["quantity"] + quantity)
    else:
        cart["cartItems"].append({"id": line_id, "name": dish.name, "description": dish.description,
                                  "restaurantName": restaurant.name, "price": size.price, "quantity": quantity,
                                  "size": size.label})
    _recharge(cart)
    return replaced


def set_quantity(state: dict[str, Any], line_id: str, quantity: int) -> None:
    """A line's new quantity; 0 removes it."""
    cart = state["cart"]
    if not 0 <= quantity <= MAX_QUANTITY:
        raise CartError(f"quantity must be between 0 and {MAX_QUANTITY}")
    if quantity == 0:
        cart["cartItems"] = [i for i in cart["cartItems"] if i["id"] != line_id]
    else:
        for line in cart["cartItems"]:
            if line["id"] == line_id:
                line["quantity"] = quantity
    _recharge(cart)


def set_options(state: dict[str, Any], shipping_option: str | None = None, delivery_option: str | None = None,
                tip_percent: int | None = None) -> None:
    details = state["cart"]["checkoutDetails"]
    if shipping_option in ("Delivery", "Pickup"):
        details["shipping"]["shippingOption"] = shipping_option
    if delivery_option in ("Standard", "Express"):
        details["shipping"]["deliveryOption"] = delivery_option
    if tip_percent in TIP_CHOICES:
        details["tipPercent"] = tip_percent
    _recharge(state["cart"])


def place_order(state: dict[str, Any]) -> dict[str, Any]:
    """Turn the cart into an order (appended to foodOrders) and empty the cart."""
    cart = state["cart"]
    if not cart["cartItems"]:
        raise CartError("your cart is empty")
    number = len(cart["foodOrders"]) + 1
    placed = CLOCK + timedelta(minutes=number)
    details = copy.deepcopy(cart["checkoutDetails"])
    order = {
        "orderId": f"DD-{placed:%y%m%d}-{1000 + number}",
        "cartItems": copy.deepcopy(cart["cartItems"]),
        "checkoutDetails": {"shipping": details["shipping"], "payment": details["payment"], "charges": details["charges"]},
        "createdAt": placed.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
        "status": "Placed",
    }
    cart["foodOrders"].append(order)
    cart["cartItems"] = []
    _recharge(cart)
    return order


def differences(initial: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    """/finish `differences`: the orders placed in this session, keyed "0", "1", ..."""
    before = {o["orderId"] for o in initial["cart"]["foodOrders"]}
    added = [o for o in state["cart"]["foodOrders"] if o["orderId"] not in before]
    return {"foodOrders": {"added": {str(i): o for i, o in enumerate(added)}}}


def eta(restaurant_minutes: str, shipping: dict[str, str]) -> str:
    """The checkout's arrival estimate."""
    if shipping["shippingOption"] == "Pickup":
        return "Ready for pickup in 15-20 min"
    if shipping["deliveryOption"] == "Express":
        return "Express: 15-20 min"
    return f"Standard: {restaurant_minutes}"
