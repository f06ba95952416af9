"""Omnizon's store (the Redux-like state /finish diffs) and the operations the pages perform on it.

Store slices, shaped after what agisdk's omnizon eval scripts read from `initialfinaldiff`:

    router.location.pathname   app path without the /omnizon prefix ("/confirmation" after an order)
    filter.searchQuery         the submitted search; filter.searchInputValue the search box's text
    cart.items                 [{id, title, brand, price, quantity}]
    order.orders               list of placed orders, new ones appended (so the diff shows them under
                               added.order.orders["<index>"]), each {id, orderNumber, date, items, total, ...}
                               with item ids as strings and quantities and prices as numbers
    order.buyNow               the single item of a "Buy Now" checkout, None otherwise

Everything is deterministic: the shop's clock is fixed, order numbers derive from the order's index.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from halo.sites.omnizon.catalog import Filters, Product, product

#: The shop's "today": fixed, so delivery dates and order dates never depend on the machine's clock.
TODAY = date(2025, 7, 14)
ORDER_TIME = datetime(2025, 7, 14, 10, 0, 0)
MAX_QUANTITY = 30             # per cart line; the dropdowns offer 1-10 (more by adding again)
FREE_SHIPPING_MIN = 35.0
SMALL_ORDER_SHIPPING = 5.99
TAX_RATE = 0.0825


@dataclass(frozen=True)
class DeliveryOption:
    id: str
    label: str
    days: int
    price: float          # 0 = free (subject to the small-order fee for "standard")

    @property
    def arrives(self) -> date:
        return TODAY + timedelta(days=self.days)


DELIVERY_OPTIONS: tuple[DeliveryOption, ...] = (
    DeliveryOption("standard", "FREE Standard Delivery", 4, 0.0),
    DeliveryOption("two-day", "Two-Day Delivery", 2, 7.99),
    DeliveryOption("one-day", "One-Day Delivery", 1, 12.99),
)
DELIVERY_BY_ID = {d.id: d for d in DELIVERY_OPTIONS}


@dataclass(frozen=True)
class PaymentMethod:
    id: str
    label: str
    holder: str


PAYMENT_METHODS: tuple[PaymentMethod, ...] = (
    PaymentMethod("visa-4242", "Visa ending in 4242", "Alex Johnson"),
    PaymentMethod("mc-8810", "Mastercard ending in 8810", "Alex Johnson"),
)
PAYMENT_BY_ID = {p.id: p for p in PAYMENT_METHODS}

SHIPPING_ADDRESS: dict[str, str] = {
    "name": "Alex Johnson",
    "street": "410 Terry Ave N",
    "city": "Seattle",
    "state": "WA",
    "zip": "98109",
    "country": "United States",
}


def fmt_day(d: date) -> str:
    return f"{d:%A}, {d:%B} {d.day}"


def _item(p: Product, quantity: int) -> dict[str, Any]:
    return {"id": p.id, "title": p.title, "brand": p.brand, "price": p.price, "quantity": quantity}


def _seed_order(index: int, number: str, day: date, lines: list[tuple[str, int]]) -> dict[str, Any]:
    items = [_item(product(pid), qty) for pid, qty in lines]  # type: ignore[arg-type]
    subtotal = round(sum(i["price"] * i["quantity"] for i in items), 2)
    tax = round(subtotal * TAX_RATE, 2)
    return {
        "id": number, "orderNumber": number, "date": f"{day.isoformat()}T09:12:00",
        "items": items, "subtotal": subtotal, "shipping": 0.0, "tax": tax, "total": round(subtotal + tax, 2),
        "shippingAddress": dict(SHIPPING_ADDRESS), "paymentMethod": PAYMENT_METHODS[0].label,
        "deliveryOption": "standard", "deliveryDate": fmt_day(day + timedelta(days=3)), "status": "Delivered",
    }


#: Orders the account already has (the "Your Orders" page is not empty on day one).
_HISTORY = (
    ("113-2837461-9920417", date(2025, 6, 2), [("60", 1)]),
    ("114-5520183-3301862", date(2025, 6, 21), [("112", 1), ("63", 1)]),
)
HISTORY_COUNT = len(_HISTORY)


def initial_state() -> dict[str, Any]:
    return {
        "router": {"location": {"pathname": "/", "search": "", "hash": ""}},
        "user": {"name": "Alex Johnson", "email": "alex.johnson@example.com", "isLoggedIn": True},
        "filter": {
            "searchQuery": "", "searchInputValue": "", "category": "", "brands": [],
            "minPrice": None, "maxPrice": None, "minRating": 0, "sortBy": "featured",
        },
        "cart": {"items": []},
        "order": {
            "orders": [_seed_order(i, n, d, lines) for i, (n, d, lines) in enumerate(_HISTORY)],
            "buyNow": None,
        },
    }


# --- router and filter ----------------------------------------------------------------------------

def set_location(state: dict[str, Any], pathname: str, search: str = "") -> None:
    state["router"]["location"] = {"pathname": pathname, "search": search, "hash": ""}


def apply_filters(state: dict[str, Any], f: Filters) -> None:
    """The results page shows `f`: the store's filter slice follows it (the search box shows the query)."""
    state["filter"].update({
        "searchQuery": f.query, "searchInputValue": f.query, "category": f.category, "brands": list(f.brands),
        "minPrice": f.min_price, "maxPrice": f.max_price, "minRating": f.min_rating, "sortBy": f.sort,
    })


# --- cart ---------------------------------------------------------------------------------------

def clamp_quantity(quantity: int) -> int:
    return max(1, min(MAX_QUANTITY, quantity))


def cart_add(state: dict[str, Any], p: Product, quantity: int) -> None:
    items = state["cart"]["items"]
    for line in items:
        if line["id"] == p.id:
            line["quantity"] = clamp_quantity(line["quantity"] + quantity)
            return
    items.append(_item(p, clamp_quantity(quantity)))


def cart_set_quantity(state: dict[str, Any], product_id: str, quantity: int) -> bool:
    for line in state["cart"]["items"]:
        if line["id"] == product_id:
            line["quantity"] = clamp_quantity(quantity)
            return True
    return False


def cart_remove(state: dict[str, Any], product_id: str) -> bool:
    items = state["cart"]["items"]
    kept = [line for line in items if line["id"] != product_id]
    state["cart"]["items"] = kept
    return len(kept) != len(items)


def cart_count(state: dict[str, Any]) -> int:
    return sum(line["quantity"] for line in state["cart"]["items"])


# --- checkout -------------------------------------------------------------------------------------

def start_buy_now(state: dict[str, Any], p: Product, quantity: int) -> None:
    state["order"]["buyNow"] = _item(p, clamp_quantity(quantity))


def start_cart_checkout(state: dict[str, Any]) -> None:
    state["order"]["buyNow"] = None


def checkout_items(state: dict[str, Any]) -> list[dict[str, Any]]:
    """What "Place your order" would buy: the Buy Now item, or else the cart."""
    buy_now = state["order"]["buyNow"]
    return [buy_now] if buy_now else list(state["cart"]["items"])


@dataclass(frozen=True)
class Summary:
    items: int
    subtotal: float
    shipping: float
    tax: float

    @property
    def before_tax(self) -> float:
        return round(self.subtotal + self.shipping, 2)

    @property
    def total(self) -> float:
        return round(self.subtotal + self.shipping + self.tax, 2)


def summarize(items: list[dict[str, Any]], delivery: DeliveryOption) -> Summary:
    subtotal = round(sum(i["price"] * i["quantity"] for i in items), 2)
    shipping = delivery.price
    if delivery.id == "standard" and 0 < subtotal < FREE_SHIPPING_MIN:
        shipping = SMALL_ORDER_SHIPPING
    tax = round((subtotal + shipping) * TAX_RATE, 2)
    return Summary(sum(i["quantity"] for i in items), subtotal, round(shipping, 2), tax)


class CheckoutError(ValueError):
    pass


def order_number(index: int) -> str:
    return f"112-{(4810273 + index * 104729) % 10_000_000:07d}-{(6620581 + index * 7919) % 10_000_000:07d}"


def place_order(state: dict[str, Any], payment_id: str, delivery_id: str) -> dict[str, Any]:
    items = checkout_items(state)
    if not items:
        raise CheckoutError("there is nothing to order: the cart is empty")
    payment = PAYMENT_BY_ID.get(payment_id)
    if payment is None:
        raise CheckoutError(f"unknown payment method {payment_id!r}")
    delivery = DELIVERY_BY_ID.get(delivery_id)
    if delivery is None:
        raise CheckoutError(f"unknown delivery option {delivery_id!r}")
    orders = state["order"]["orders"]
    index = len(orders)
    summary = summarize(items, delivery)
    number = order_number(index)
    placed_at = ORDER_TIME + timedelta(minutes=index)
    order = {
        "id": number, "orderNumber": number, "date": placed_at.isoformat(),
        "items": [dict(i) for i in items], "subtotal": summary.subtotal, "shipping": summary.shipping,
        "tax": summary.tax, "total": summary.total, "shippingAddress": dict(SHIPPING_ADDRESS),
        "paymentMethod": payment.label, "deliveryOption": delivery.id, "deliveryDate": fmt_day(delivery.arrives),
        "status": "Ordered",
    }
    orders.append(order)
    if state["order"]["buyNow"]:
        state["order"]["buyNow"] = None    # a Buy Now order leaves the cart alone
    else:
        state["cart"]["items"] = []
    return order


def new_orders(state: dict[str, Any]) -> list[dict[str, Any]]:
    """Orders placed in this session (after the account's history)."""
    return state["order"]["orders"][HISTORY_COUNT:]
