"""Oracles (UI-only solutions) and plausible wrong attempts for the 11 REAL v2 DashDish tasks.

Targets name elements the way the AXTree shows them: store cards and dish names are links, the item
dialog has a Size radio group, a Quantity combobox and "Add to cart"; the header's cart link reads
"Cart, N items"; checkout has Delivery / Pickup, Standard / Express and "Tip N%" buttons and
"Place order". Each wrong attempt is a mistake an agent could make (two dishes over the budget, the
look-alike restaurant or dish, standard instead of express, delivery instead of pickup) and must
score 0 with agisdk's eval script.

Totals at the default 15% tip and standard delivery: subtotal x 1.3375 + $2.99 (see orders.py).
"""

from __future__ import annotations

from halo.agent import actions as A
from halo.sites.oracle import OracleStep, Target, WrongAttempts

SEARCH_BOX = Target("searchbox", "Search DashDish")
ADD_TO_CART = A.ClickElement(Target("button", "Add to cart"))
OPEN_CART = A.ClickElement(Target("link", contains="Cart,"))
CHECKOUT = A.ClickElement(Target("link", "Checkout"))
PLACE_ORDER = A.ClickElement(Target("button", "Place order"))
PICKUP = A.ClickElement(Target("button", "Pickup"))
EXPRESS = A.ClickElement(Target("button", contains="Express"))


def search(text: str) -> list[OracleStep]:
    return [A.Fill(SEARCH_BOX, text), A.KeyPress("Enter")]


def store(name: str) -> OracleStep:
    """Open a store from the home page's or the results' cards (the card's link starts with its name)."""
    return A.ClickElement(Target("link", contains=name))


def add(dish: str, size: str = "", quantity: int = 1) -> list[OracleStep]:
    """Open a dish on the current page (store menu or search results) and add it to the cart."""
    steps: list[OracleStep] = [A.ClickElement(Target("link", dish))]
    if size:
        steps.append(A.ClickElement(Target("radio", contains=size)))
    if quantity != 1:
        steps.append(A.SelectOption(Target("combobox", "Quantity"), (str(quantity),)))
    return steps + [ADD_TO_CART]


def checkout(*options: OracleStep) -> list[OracleStep]:
    return [OPEN_CART, CHECKOUT, *options, PLACE_ORDER]


WINGSTOP = store("Wingstop")

ORACLES: dict[str, list[OracleStep]] = {
    # noodles under $26: Dan Dan Noodles from the search results ($13.49 -> $21.03)
    "dashdish-1": [*search("noodles"), *add("Dan Dan Noodles"), *checkout()],
    # a medium Margherita pizza ($14.99 -> $23.04)
    "dashdish-3": [*search("pizza"), store("Tony's Pizzeria"), *add("Margherita Pizza", 'Medium 12"'), *checkout()],
    # a chicken sandwich under $25 ($9.99 -> $16.35)
    "dashdish-4": [*search("chicken sandwich"), *add("Crispy Chicken Sandwich"), *checkout()],
    # lemon pepper wings from Wingstop (not Wing Palace's)
    "dashdish-7": [WINGSTOP, *add("Lemon Pepper Wings", "10 pc"), *checkout()],
    # $20 worth from Taco Boys: a taco plate and a burrito ($24.48 -> $35.73)
    "dashdish-8": [store("Taco Boys"), *add("Three Taco Plate"), *add("Super Burrito"), *checkout()],
    # fries, total under $15 ($3.99 -> $8.33)
    "dashdish-10": [*search("fries"), *add("French Fries"), *checkout()],
    # a sub under $30 ($11.99 -> $19.03)
    "dashdish-11": [store("Primo Deli"), *add("Italian Sub"), *checkout()],
    # a rice meal under $30 ($12.49 -> $19.69)
    "dashdish-12": [*search("rice"), *add("Chicken Teriyaki Rice Bowl"), *checkout()],
    # two different Wingstop wings, one each, express delivery
    "dashdish-17": [WINGSTOP, *add("Lemon Pepper Wings", "10 pc"), *add("Garlic Parmesan Wings", "10 pc"), *checkout(EXPRESS)],
    # the Rotisserie Chicken Sandwich ($11.49 -> $18.36)
    "dashdish-24": [*search("rotisserie"), *add("Rotisserie Chicken Sandwich"), *checkout()],
    # a Wingstop pickup order under $35 ($12.99 -> $17.37, no delivery fee)
    "dashdish-26": [WINGSTOP, *add("Lemon Pepper Wings", "10 pc"), *checkout(PICKUP)],
}

WRONG_ATTEMPTS: dict[str, WrongAttempts] = {
    "dashdish-1": {
        "two noodle dishes, $41.08: over $26": [store("Golden Noodle Bar"), *add("Dan Dan Noodles"), *add("Beef Chow Mein"), *checkout()],
        "Green Curry: no noodles": [store("Bangkok Kitchen"), *add("Green Curry"), *checkout()],
    },
    "dashdish-3": {"a pizza and garlic knots, $31.05: over $30": [store("Tony's Pizzeria"), *add("Margherita Pizza", 'Medium 12"'),
                                                                   *add("Garlic Knots"), *checkout()]},
    "dashdish-4": {
        "two sandwiches, $29.71: over $25": [store("Cluck Shack"), *add("Crispy Chicken Sandwich", quantity=2), *checkout()],
        "chicken tenders are not a sandwich": [store("Cluck Shack"), *add("Chicken Tenders"), *checkout()],
    },
    "dashdish-7": {
        "Original Hot instead of Lemon Pepper": [WINGSTOP, *add("Original Hot Wings", "10 pc"), *checkout()],
        "Wing Palace's lemon pepper wings": [store("Wing Palace"), *add("Lemon Pepper Wings", "10 pc"), *checkout()],
    },
    "dashdish-8": {
        "one taco, $7.34": [store("Taco Boys"), *add("Al Pastor Taco"), *checkout()],
        "Taco Town instead of Taco Boys": [store("Taco Town"), *add("Taco Combo"), *add("Grilled Chicken Burrito"), *checkout()],
    },
    "dashdish-10": {
        "fries and a burger, $23.03": [store("Burger Barn"), *add("French Fries"), *add("Classic Burger"), *checkout()],
        "onion rings are not fries": [store("Burger Barn"), *add("Onion Rings"), *checkout()],
    },
    "dashdish-11": {"two subs, $35.06: over $30": [store("Primo Deli"), *add("Italian Sub", quantity=2), *checkout()]},
    "dashdish-12": {
        "a rice bowl with egg rolls (no rice in the rolls)": [store("Golden Noodle Bar"), *add("Chicken Teriyaki Rice Bowl"),
                                                             *add("Egg Rolls"), *checkout()],
        "two rice bowls, $36.40: over $30": [store("Golden Noodle Bar"), *add("Chicken Teriyaki Rice Bowl", quantity=2), *checkout()],
    },
    "dashdish-17": {
        "standard delivery": [WINGSTOP, *add("Lemon Pepper Wings", "10 pc"), *add("Garlic Parmesan Wings", "10 pc"), *checkout()],
        "one flavour twice": [WINGSTOP, *add("Lemon Pepper Wings", "10 pc", quantity=2), *checkout(EXPRESS)],
        "wings and corn": [WINGSTOP, *add("Lemon Pepper Wings", "10 pc"), *add("Cajun Fried Corn"), *checkout(EXPRESS)],
    },
    "dashdish-24": {
        "two sandwiches, $33.72: over $30": [store("Rotisserie House"), *add("Rotisserie Chicken Sandwich", quantity=2), *checkout()],
        "the Rotisserie Chicken Plate": [store("Rotisserie House"), *add("Rotisserie Chicken Plate"), *checkout()],
    },
    "dashdish-26": {
        "delivery instead of pickup": [WINGSTOP, *add("Lemon Pepper Wings", "10 pc"), *checkout()],
        "20 pc, $40.11: over $35": [WINGSTOP, *add("Lemon Pepper Wings", "20 pc"), *checkout(PICKUP)],
    },
}
