"""Oracle solutions and plausible-but-wrong attempts of the omnizon tasks, made of UI steps only.

Each wrong attempt is a mistake an agent could plausibly make (the wrong price band, the charging
dock instead of the controller, one controller instead of two, stopping at checkout) and must
score 0 with agisdk's eval script, while the oracle must score 1.
"""

from __future__ import annotations

from halo.agent import actions as A
from halo.sites.oracle import OracleStep, Target, WrongAttempts

SEARCH_BOX = Target("searchbox", "Search Omnizon")
BUY_NOW = A.ClickElement(Target("button", "Buy Now"))
ADD_TO_CART = A.ClickElement(Target("button", "Add to Cart"))
PROCEED = A.ClickElement(Target("button", "Proceed to checkout"))
PLACE_ORDER = A.ClickElement(Target("button", "Place your order"))


def search(text: str) -> list[OracleStep]:
    return [A.Fill(SEARCH_BOX, text), A.KeyPress("Enter")]


def open_product(title_part: str) -> OracleStep:
    return A.ClickElement(Target("link", contains=title_part))


def buy_now(query: str, title_part: str) -> list[OracleStep]:
    return [*search(query), open_product(title_part), BUY_NOW, PLACE_ORDER]


ORACLES: dict[str, list[OracleStep]] = {
    # headphones above $24 and below $100: search, narrow the price range, buy one inside it
    "omnizon-3": [
        *search("headphones"),
        A.Fill(Target("spinbutton", "Min price"), "24"),
        A.Fill(Target("spinbutton", "Max price"), "100"),
        A.ClickElement(Target("button", "Go, apply price range")),
        open_product("Sony WH-CH720N"),
        BUY_NOW,
        PLACE_ORDER,
    ],
    # any gaming device under $100, through the cart
    "omnizon-9": [
        *search("gaming"),
        A.SelectOption(Target("combobox", "Sort by"), ("price-asc",)),
        open_product("Logitech G305"),
        ADD_TO_CART,
        PROCEED,
        PLACE_ORDER,
    ],
    "omnizon-13": [*search("cooking pot"), open_product("Cuisinart Chef's Classic"), ADD_TO_CART, PROCEED, PLACE_ORDER],
    "omnizon-15": buy_now("sports balls", "Sports Balls Variety Pack"),
    "omnizon-17": buy_now("neck pillow", "Cervical Neck Pillow"),
    "omnizon-24": [
        *search("PS5 controller"),
        open_product("PlayStation DualSense"),
        A.SelectOption(Target("combobox", "Quantity"), ("2",)),
        BUY_NOW,
        PLACE_ORDER,
    ],
    # an apron and a pot in one order
    "omnizon-25": [
        *search("apron"), open_product("Grill Apron"), ADD_TO_CART,
        *search("cooking pot"), open_product("Cuisinart Chef's Classic"), ADD_TO_CART,
        PROCEED, PLACE_ORDER,
    ],
    "omnizon-28": buy_now("silverware set", "Stainless Steel Silverware Set"),
    # a 40-inch desk and an office chair in one order
    "omnizon-29": [
        *search("40 inch desk"), open_product("40 Inch Computer Desk"), ADD_TO_CART,
        *search("office chair"), open_product("Ergonomic Office Chair"), ADD_TO_CART,
        PROCEED, PLACE_ORDER,
    ],
    "omnizon-30": buy_now("bed frame", "Queen Size Platform Bed Frame"),
}

WRONG_ATTEMPTS: dict[str, WrongAttempts] = {
    "omnizon-3": {'$349.99: above the range': buy_now("headphones", "Sony WH-1000XM5")},
    "omnizon-9": {'a gaming device, but $499.99': buy_now("gaming", "PlayStation 5 Console")},
    "omnizon-13": {'pot holders, not a pot': buy_now("cooking pot", "Silicone Pot Holders")},
    "omnizon-15": {'one basketball, not a pack': buy_now("sports balls", "Spalding NBA Street")},
    "omnizon-17": {'bed pillows, not a neck pillow': buy_now("pillow", "Bed Pillows Queen Size")},
    "omnizon-24": {'one controller instead of two': buy_now("PS5 controller", "PlayStation DualSense")},
    "omnizon-25": {'an apron and a frying pan': [

        *search("apron"), open_product("Grill Apron"), ADD_TO_CART,
        *search("frying pan"), open_product("T-fal Ultimate"), ADD_TO_CART,
        PROCEED, PLACE_ORDER,
    ]},
    "omnizon-28": {'knives, not a silverware set': buy_now("steak knives", "Steak Knives Set of 6")},
    "omnizon-29": {'the 55-inch desk': [

        *search("desk"), open_product("55 Inch L-Shaped"), ADD_TO_CART,
        *search("office chair"), open_product("Ergonomic Office Chair"), ADD_TO_CART,
        PROCEED, PLACE_ORDER,
    ]},
    "omnizon-30": {'stops at checkout: no order': [

        *search("bed frame"), open_product("Queen Size Platform Bed Frame"), ADD_TO_CART, PROCEED,
    ]},
}
