"""UDriver's store (what /finish diffs) and the operations its pages perform on it.

Store slices, shaped after what agisdk's udriver eval scripts read (the diff's shape decides: a
slice absent at /config shows whole under initialfinaldiff.added, its lists still lists):

    config.udriver     {run_id, task_id, cars}: written on the first page (cars: multiplier and discount
                       per ride type; udriver-20 recomputes prices from it)
    user               PRESENT, without a wallet
    user.wallet        LAZY: written whole the first time a page shows the balance (Wallet page, ride
                       options) or when it changes: {balance, transactions, paymentMethods}
    ride               LAZY: created on the first place pick or payment choice: {pickupLocation,
                       dropoffLocation, pickupDate, pickupTime, when, selectedCar, calculatedPrice,
                       selectedPaymentMethod, trip (the latest booking), trips ("now" rides, completed at
                       once: the clone fast-forwards them), bookedTrips (scheduled rides)}

A wallet payment debits the balance and appends {description: "Trip to <destination>", type: "debit",
amount: -finalPrice}; it is refused when the price exceeds the balance. Card and cash payments write
no wallet transaction.
"""

from __future__ import annotations

import copy
from datetime import date, datetime, timedelta
from typing import Any

from halo.sites.udriver.places import CAR_BY_TYPE, DEFAULT_CAR, Place, cars_config, price

TODAY = date(2024, 7, 18)
NOW_TIME = "10:00 AM"            # REAL v2's clock: Thursday, July 18, 2024, 10:00 AM Pacific
SCHEDULE_DAYS = 7
START_BALANCE = 25.5
MAX_TOP_UP = 500

CARD = {"id": "1", "type": "credit", "last4": "4242", "brand": "Visa", "displayName": "Visa •••• 4242", "isDefault": False}
WALLET_METHOD = {"id": "wallet", "type": "wallet", "displayName": "UDriver Credits", "isDefault": True}
CASH = {"id": "cash", "type": "cash", "displayName": "Cash", "isDefault": False}

SEED_TRANSACTIONS = (
    {"id": "tx-1", "date": "2024-07-02", "description": "Trip to Ferry Building", "type": "debit", "amount": -12.4},
    {"id": "tx-2", "date": "2024-07-05", "description": "Referral credit", "type": "credit", "amount": 10.0},
    {"id": "tx-3", "date": "2024-07-09", "description": "Trip to Oracle Park", "type": "debit", "amount": -14.6},
    {"id": "tx-4", "date": "2024-07-12", "description": "Trip to Union Square", "type": "debit", "amount": -9.5},
)


class RideError(ValueError):
    """A request the page refuses (shown to the user, state unchanged)."""


def schedule_days() -> list[str]:
    return [f"{d.month}/{d.day}/{d.year}" for d in (TODAY + timedelta(days=i) for i in range(SCHEDULE_DAYS))]


def schedule_times() -> list[str]:
    """Pickup times every 15 minutes from 6:00 AM to 11:45 PM."""
    out = []
    for minutes in range(6 * 60, 24 * 60, 15):
        t = datetime(2024, 1, 1, minutes // 60, minutes % 60)
        out.append(t.strftime("%I:%M %p").lstrip("0"))
    return out


def _after_now(time: str) -> bool:
    return datetime.strptime(time, "%I:%M %p").time() > datetime.strptime(NOW_TIME, "%I:%M %p").time()


def first_later_time() -> str:
    """The time picker's preselected slot: the first one after "now" today."""
    return next(t for t in schedule_times() if _after_now(t))


def initial_state() -> dict[str, Any]:
    return {
        "config": {},
        "user": {"id": "u-1042", "name": "Jamie Chen", "email": "jamie.chen@example.com", "phone": "(415) 555-0147",
                 "rating": 4.92},
    }


def boot(state: dict[str, Any], run_id: str, task_id: str) -> None:
    if "udriver" not in state["config"]:
        state["config"]["udriver"] = {"run_id": run_id, "task_id": task_id, "cars": cars_config()}


def wallet(state: dict[str, Any]) -> dict[str, Any]:
    """The wallet, written to the store the first time it is shown."""
    user = state["user"]
    if "wallet" not in user:
        user["wallet"] = {"balance": START_BALANCE, "transactions": copy.deepcopy(list(SEED_TRANSACTIONS)),
                          "paymentMethods": [dict(CARD), dict(WALLET_METHOD), dict(CASH)]}
    return user["wallet"]


def _method_ref(method: dict[str, Any]) -> dict[str, Any]:
    return {k: method[k] for k in ("id", "type", "displayName")}


def default_method(state: dict[str, Any]) -> dict[str, Any]:
    methods = state["user"]["wallet"]["paymentMethods"] if "wallet" in state["user"] else [CARD, WALLET_METHOD, CASH]
    return _method_ref(next((m for m in methods if m.get("isDefault")), WALLET_METHOD))


def ride(state: dict[str, Any]) -> dict[str, Any]:
    """The ride being planned, created on the first pick."""
    if "ride" not in state:
        state["ride"] = {
            "pickupLocation": None, "dropoffLocation": None, "pickupDate": schedule_days()[0], "pickupTime": NOW_TIME,
            "when": "now", "selectedCar": DEFAULT_CAR, "calculatedPrice": None,
            "selectedPaymentMethod": default_method(state), "trip": None, "trips": [], "bookedTrips": [],
        }
    return state["ride"]


def _reprice(r: dict[str, Any]) -> None:
    if r["pickupLocation"] and r["dropoffLocation"]:
        r["calculatedPrice"] = price(r["pickupLocation"], r["dropoffLocation"], CAR_BY_TYPE[r["selectedCar"]])
    else:
        r["calculatedPrice"] = None


def set_place(state: dict[str, Any], which: str, place: Place) -> None:
    r = ride(state)
    r["pickupLocation" if which == "pickup" else "dropoffLocation"] = place.as_store()
    _reprice(r)


def swap_places(state: dict[str, Any]) -> None:
    r = ride(state)
    r["pickupLocation"], r["dropoffLocation"] = r["dropoffLocation"], r["pickupLocation"]
    _reprice(r)


def choose_car(state: dict[str, Any], car_type: str) -> None:
    if car_type not in CAR_BY_TYPE:
        raise RideError(f"unknown ride type {car_type!r}")
    r = ride(state)
    r["selectedCar"] = car_type
    _reprice(r)


def set_when(state: dict[str, Any], when: str, day: str = "", time: str = "") -> None:
    r = ride(state)
    if when == "now":
        r.update(when="now", pickupDate=schedule_days()[0], pickupTime=NOW_TIME)
        return
    if day not in schedule_days():
        raise RideError("choose a pickup day in the next week")
    if time not in schedule_times():
        raise RideError("choose a pickup time")
    if day == schedule_days()[0] and not _after_now(time):
        raise RideError(f"a pickup today must be after {NOW_TIME}")
    r.update(when="scheduled", pickupDate=day, pickupTime=time)


def choose_payment(state: dict[str, Any], method_id: str) -> None:
    methods = wallet(state)["paymentMethods"]
    method = next((m for m in methods if m["id"] == method_id), None)
    if method is None:
        raise RideError("unknown payment method")
    ride(state)["selectedPaymentMethod"] = _method_ref(method)


def set_default(state: dict[str, Any], method_id: str) -> None:
    """Wallet page's "Set as default": the method becomes the default and the ride's payment."""
    methods = wallet(state)["paymentMethods"]
    if not any(m["id"] == method_id for m in methods):
        raise RideError("unknown payment method")
    for m in methods:
        m["isDefault"] = m["id"] == method_id
    choose_payment(state, method_id)


def top_up(state: dict[str, Any], amount: float, method_id: str) -> None:
    w = wallet(state)
    method = next((m for m in w["paymentMethods"] if m["id"] == method_id), None)
    if method is None or method["type"] != "credit":
        raise RideError("add funds with a card")
    if not 0 < amount <= MAX_TOP_UP:
        raise RideError(f"enter an amount between $1 and ${MAX_TOP_UP}")
    w["balance"] = round(w["balance"] + amount, 2)
    w["transactions"].append({"id": f"tx-{len(w['transactions']) + 1}", "date": TODAY.isoformat(),
                              "description": "Wallet Top-up", "type": "credit", "amount": float(amount)})


def request_ride(state: dict[str, Any]) -> dict[str, Any]:
    """Book the planned ride: a "now" ride is completed at once, a scheduled one waits in bookedTrips."""
    r = ride(state)
    if not (r["pickupLocation"] and r["dropoffLocation"]):
        raise RideError("choose a pickup and a destination")
    if r["pickupLocation"]["id"] == r["dropoffLocation"]["id"]:
        raise RideError("pickup and destination are the same place")
    car = CAR_BY_TYPE[r["selectedCar"]]
    prices = price(r["pickupLocation"], r["dropoffLocation"], car)
    method = r["selectedPaymentMethod"]
    number = len(r["trips"]) + len(r["bookedTrips"]) + 1
    trip = {
        "id": f"trip-{TODAY:%Y%m%d}-{number}",
        "status": "completed" if r["when"] == "now" else "scheduled",
        "pickup": copy.deepcopy(r["pickupLocation"]), "destination": copy.deepcopy(r["dropoffLocation"]),
        "car": {"type": car.type, **prices}, "paymentMethod": dict(method),
        "date": r["pickupDate"], "time": r["pickupTime"],
    }
    if method["type"] == "wallet":
        w = wallet(state)
        if prices["finalPrice"] > w["balance"] + 1e-9:
            raise RideError(f"Not enough UDriver Credits: this {car.type} costs ${prices['finalPrice']:.2f}, "
                            f"your balance is ${w['balance']:.2f}")
        w["balance"] = round(w["balance"] - prices["finalPrice"], 2)
        w["transactions"].append({"id": f"tx-{len(w['transactions']) + 1}", "date": TODAY.isoformat(),
                                  "description": f"Trip to {r['dropoffLocation']['name']}", "type": "debit",
                                  "amount": -prices["finalPrice"]})
    (r["trips"] if trip["status"] == "completed" else r["bookedTrips"]).append(trip)
    r["trip"] = copy.deepcopy(trip)
    return trip


def find_trip(state: dict[str, Any], trip_id: str) -> dict[str, Any] | None:
    r = state.get("ride") or {}
    return next((t for t in [*r.get("trips", []), *r.get("bookedTrips", [])] if t["id"] == trip_id), None)
