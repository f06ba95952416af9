"""DashDish's restaurants and menus: the seed every task shares.

The eval scripts match dishes by words in a cart line's name, description and restaurant name
(noodle, pizza, sandwich/sub, lemon+pepper+wing, rice keywords, fries...), so the menus hold the
dishes the goals ask for next to look-alikes that must not match (Wing Palace's lemon pepper wings,
Taco Town, a Rotisserie Chicken Plate, a Green Curry without noodles, onion rings, egg rolls).
Descriptions are written so that a word a script looks for appears only where it is meant to
(`tests/sites/test_dashdish.py` checks them against the scripts' own keyword lists).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Size:
    label: str          # "10 pc"
    price: float


@dataclass(frozen=True)
class Dish:
    id: str
    name: str
    description: str
    price: float                          # the smallest size's price
    sizes: tuple[Size, ...] = ()          # empty: one size ("Regular")
    popular: bool = False

    def size(self, label: str) -> Size | None:
        if not self.sizes:
            return Size("Regular", self.price) if label in ("", "Regular") else None
        return next((s for s in self.sizes if s.label == label), None)

    @property
    def size_choices(self) -> tuple[Size, ...]:
        return self.sizes or (Size("Regular", self.price),)


@dataclass(frozen=True)
class Restaurant:
    id: str
    name: str
    cuisine: str
    rating: float
    reviews: int
    minutes: str                          # "20-30 min"
    distance: str                         # "0.8 mi"
    color: str                            # banner colour
    sections: tuple[tuple[str, tuple[Dish, ...]], ...]

    @property
    def dishes(self) -> tuple[Dish, ...]:
        return tuple(d for _, dishes in self.sections for d in dishes)

    def dish(self, dish_id: str) -> Dish | None:
        return next((d for d in self.dishes if d.id == dish_id), None)


def _wings(prefix: str, flavours: list[tuple[str, str]], small: float, large: float) -> tuple[Dish, ...]:
    return tuple(
        Dish(f"{prefix}-{name.lower().replace(' ', '-')}", f"{name} Wings", text, small,
             (Size("10 pc", small), Size("20 pc", large)), popular=i < 2)
        for i, (name, text) in enumerate(flavours)
    )


RESTAURANTS: tuple[Restaurant, ...] = (
    Restaurant("wingstop", "Wingstop", "Chicken", 4.6, 3120, "20-30 min", "0.9 mi", "#006938", (
        ("Classic Wings", _wings("ws", [
            ("Lemon Pepper", "Bone-in wings tossed in zesty lemon pepper dry rub"),
            ("Original Hot", "Bone-in wings in our classic cayenne hot sauce"),
            ("Garlic Parmesan", "Bone-in wings in a creamy garlic and parmesan sauce"),
            ("Mango Habanero", "Bone-in wings in sweet mango and fiery habanero sauce"),
        ], 12.99, 29.99)),
        ("Sides", (
            Dish("ws-seasoned-fries", "Seasoned Fries", "Fresh-cut fries with our signature seasoning", 3.99, popular=True),
            Dish("ws-cajun-corn", "Cajun Fried Corn", "Fried corn on the cob with Cajun seasoning", 3.49),
            Dish("ws-veggie-sticks", "Veggie Sticks", "Carrot and celery with ranch dip", 1.99),
        )),
    )),
    Restaurant("wing-palace", "Wing Palace", "Chicken", 4.2, 884, "25-40 min", "2.4 mi", "#8a1c1c", (
        ("Wings", _wings("wp", [
            ("Lemon Pepper", "Crispy wings with lemon pepper seasoning"),
            ("Buffalo", "Crispy wings in tangy buffalo sauce"),
            ("Honey BBQ", "Crispy wings glazed with honey barbecue sauce"),
        ], 11.49, 24.99)),
        ("Sides", (
            Dish("wp-onion-rings", "Onion Rings", "Beer-battered onion rings with dipping sauce", 4.49),
            Dish("wp-coleslaw", "Coleslaw", "Creamy house slaw", 2.49),
        )),
    )),
    Restaurant("taco-boys", "Taco Boys", "Mexican", 4.7, 1510, "15-25 min", "0.6 mi", "#d35400", (
        ("Tacos", (
            Dish("tb-al-pastor", "Al Pastor Taco", "Marinated pork, pineapple, onion and cilantro", 3.25, popular=True),
            Dish("tb-carne-asada", "Carne Asada Taco", "Grilled steak, onion and cilantro", 3.75),
            Dish("tb-taco-plate", "Three Taco Plate", "Three tacos of your choice with beans", 11.99, popular=True),
        )),
        ("Burritos", (
            Dish("tb-super-burrito", "Super Burrito", "Steak, beans, cheese, sour cream and guacamole", 12.49),
            Dish("tb-veggie-burrito", "Veggie Burrito", "Grilled vegetables, black beans and salsa", 10.49),
        )),
        ("Extras", (
            Dish("tb-chips-guac", "Chips & Guacamole", "Tortilla chips with fresh guacamole", 5.49),
            Dish("tb-horchata", "Horchata", "Cinnamon sweet drink", 3.49),
        )),
    )),
    Restaurant("taco-town", "Taco Town", "Mexican", 4.1, 402, "20-35 min", "3.1 mi", "#7d3c98", (
        ("Tacos", (
            Dish("tt-fish-taco", "Baja Fish Taco", "Battered fish, cabbage and chipotle crema", 4.25),
            Dish("tt-taco-combo", "Taco Combo", "Four tacos with beans and a drink", 14.99, popular=True),
        )),
        ("Burritos", (
            Dish("tt-chicken-burrito", "Grilled Chicken Burrito", "Chicken, beans, cheese and salsa", 11.99),
        )),
    )),
    Restaurant("tonys-pizzeria", "Tony's Pizzeria", "Pizza", 4.5, 2210, "25-35 min", "1.2 mi", "#c0392b", (
        ("Pizzas", (
            Dish("tp-margherita", "Margherita Pizza", "Tomato, fresh mozzarella and basil", 14.99,
                 (Size("Medium 12\"", 14.99), Size("Large 16\"", 19.99)), popular=True),
            Dish("tp-pepperoni", "Pepperoni Pizza", "Tomato, mozzarella and pepperoni", 15.99,
                 (Size("Medium 12\"", 15.99), Size("Large 16\"", 21.99))),
        )),
        ("Sides", (
            Dish("tp-garlic-knots", "Garlic Knots", "Six knots with garlic butter and marinara", 5.99),
            Dish("tp-caesar", "Caesar Salad", "Romaine, croutons and parmesan", 8.49),
        )),
    )),
    Restaurant("golden-noodle", "Golden Noodle Bar", "Chinese", 4.6, 1830, "20-30 min", "1.0 mi", "#b9770e", (
        ("Noodles", (
            Dish("gn-dan-dan", "Dan Dan Noodles", "Wheat noodles, spicy pork and Sichuan pepper", 13.49, popular=True),
            Dish("gn-beef-chow-mein", "Beef Chow Mein", "Stir-fried egg noodles with beef and vegetables", 14.99),
        )),
        ("Rice", (
            Dish("gn-fried-rice", "Vegetable Fried Rice", "Wok-fried rice with egg and vegetables", 10.99),
            Dish("gn-teriyaki-bowl", "Chicken Teriyaki Rice Bowl", "Grilled teriyaki chicken over steamed jasmine rice", 12.49, popular=True),
        )),
        ("Starters", (
            Dish("gn-egg-rolls", "Egg Rolls", "Two crispy pork and cabbage rolls", 5.49),
            Dish("gn-dumplings", "Pork Dumplings", "Six steamed dumplings with chili oil", 7.99),
        )),
    )),
    Restaurant("bangkok-kitchen", "Bangkok Kitchen", "Thai", 4.4, 960, "25-40 min", "1.7 mi", "#117864", (
        ("Curries", (
            Dish("bk-green-curry", "Green Curry", "Coconut green curry with chicken, bamboo and Thai basil", 15.49, popular=True),
            Dish("bk-massaman", "Massaman Curry", "Beef, potato and peanuts in a mild curry", 16.49),
        )),
        ("Wok", (
            Dish("bk-pad-see-ew", "Pad See Ew Noodles", "Wide noodles stir-fried with broccoli and egg", 14.49),
            Dish("bk-spring-rolls", "Spring Rolls", "Crispy vegetable rolls with sweet chili sauce", 6.49),
        )),
    )),
    Restaurant("cluck-shack", "Cluck Shack", "Chicken", 4.5, 1344, "15-25 min", "0.7 mi", "#f39c12", (
        ("Chicken", (
            Dish("cs-crispy-sandwich", "Crispy Chicken Sandwich", "Buttermilk fried chicken, pickles and mayo on a brioche bun", 9.99, popular=True),
            Dish("cs-tenders", "Chicken Tenders", "Four hand-breaded tenders with honey mustard", 10.49, popular=True),
            Dish("cs-nuggets", "Chicken Nuggets", "Ten bite-size nuggets with two dips", 8.49),
        )),
        ("Sides", (
            Dish("cs-mac", "Mac & Cheese", "Baked three-cheese macaroni", 4.29),
            Dish("cs-biscuit", "Honey Butter Biscuit", "Warm biscuit with honey butter", 2.49),
        )),
    )),
    Restaurant("primo-deli", "Primo Deli", "Deli", 4.6, 1122, "15-25 min", "0.5 mi", "#1f618d", (
        ("Subs", (
            Dish("pd-italian-sub", "Italian Sub", "Salami, capicola, provolone and peppers on a 12-inch roll", 11.99, popular=True),
            Dish("pd-turkey-hoagie", "Turkey Hoagie", "Roast turkey, lettuce, tomato and mayo", 10.99),
            Dish("pd-meatball-hero", "Meatball Hero", "Meatballs, marinara and melted mozzarella", 12.49),
        )),
        ("Other", (
            Dish("pd-cobb", "Cobb Salad", "Chicken, bacon, egg, avocado and blue cheese", 11.49),
            Dish("pd-chips", "Kettle Chips", "Sea salt kettle-cooked chips", 1.99),
            Dish("pd-cookie", "Chocolate Chip Cookie", "Baked fresh daily", 2.29),
        )),
    )),
    Restaurant("burger-barn", "Burger Barn", "Burgers", 4.3, 2045, "20-30 min", "1.4 mi", "#6e2c00", (
        ("Burgers", (
            Dish("bb-classic", "Classic Burger", "Quarter-pound patty, lettuce, tomato and onion", 10.99, popular=True),
            Dish("bb-bacon", "Bacon Cheeseburger", "Cheddar, bacon and smoky sauce", 12.99),
        )),
        ("Sides", (
            Dish("bb-fries", "French Fries", "Crispy golden fries with sea salt", 3.99, popular=True),
            Dish("bb-onion-rings", "Onion Rings", "Thick-cut, beer-battered rings", 4.99),
            Dish("bb-shake", "Vanilla Shake", "Hand-spun vanilla milkshake", 5.49),
        )),
    )),
    Restaurant("rotisserie-house", "Rotisserie House", "American", 4.5, 870, "20-30 min", "1.1 mi", "#7b241c", (
        ("Mains", (
            Dish("rh-sandwich", "Rotisserie Chicken Sandwich", "Pulled rotisserie chicken, slaw and garlic aioli on ciabatta", 11.49, popular=True),
            Dish("rh-plate", "Rotisserie Chicken Plate", "Quarter chicken with two sides and cornbread", 13.99, popular=True),
            Dish("rh-half", "Half Rotisserie Chicken", "Half a chicken, herb-roasted", 12.99),
        )),
        ("Sides", (
            Dish("rh-potatoes", "Roasted Potatoes", "Herb-roasted baby potatoes", 3.99),
            Dish("rh-greens", "Garden Greens", "Mixed greens with lemon vinaigrette", 4.49),
        )),
    )),
    Restaurant("sakura-kitchen", "Sakura Kitchen", "Japanese", 4.7, 1288, "25-35 min", "1.9 mi", "#a93226", (
        ("Bowls", (
            Dish("sb-salmon-don", "Salmon Donburi", "Seared salmon and pickles over sushi rice", 15.99, popular=True),
            Dish("sb-katsu", "Chicken Katsu Curry", "Panko chicken with Japanese curry and white rice", 14.49),
        )),
        ("Small plates", (
            Dish("sb-edamame", "Edamame", "Steamed soybeans with sea salt", 4.49),
            Dish("sb-miso", "Miso Soup", "Tofu, wakame and scallion", 3.29),
        )),
    )),
)

RESTAURANT_BY_ID = {r.id: r for r in RESTAURANTS}
CUISINES: tuple[str, ...] = tuple(sorted({r.cuisine for r in RESTAURANTS}))


def find_dish(dish_id: str) -> tuple[Restaurant, Dish] | None:
    for r in RESTAURANTS:
        d = r.dish(dish_id)
        if d is not None:
            return r, d
    return None


def _forms(word: str) -> set[str]:
    """A word and its singular ("sandwiches" -> "sandwich", "wings" -> "wing"), so plural and singular meet."""
    if word.endswith(("ches", "shes", "sses", "xes")):
        return {word, word[:-2]}
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return {word, word[:-1]}
    return {word}


def _words(text: str) -> list[set[str]]:
    return [_forms(w) for w in re.findall(r"[a-z0-9]+", text.lower())]


def search(query: str) -> tuple[list[Restaurant], list[tuple[Restaurant, Dish]]]:
    """Restaurants whose name, cuisine or a dish name, and dishes whose name or description, hold every word typed
    (whole words, plural or singular: "fries" finds fries, not fried corn)."""
    wanted = _words(query)
    if not wanted:
        return [], []

    def hit(text: str) -> bool:
        have = _words(text)
        return all(any(w & h for h in have) for w in wanted)

    stores = [r for r in RESTAURANTS if hit(f"{r.name} {r.cuisine}") or any(hit(d.name) for d in r.dishes)]
    dishes = [(r, d) for r in RESTAURANTS for d in r.dishes if hit(f"{d.name} {d.description}")]
    return stores, dishes
