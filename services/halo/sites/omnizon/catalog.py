"""Omnizon's product catalog: static, deterministic, shared by every session (like the real app's bundle).

Product ids are strings, as in the real Omnizon, and some are fixed by agisdk's eval scripts:
16 PS5 DualSense controller (omnizon-9, 24), 192/193 gaming devices (omnizon-9), 212/215 cooking
pots (omnizon-13, 25), 91 apron (omnizon-25), 114 pack of sports balls (omnizon-15), 167/170 neck
pillows (omnizon-17), 159 40-inch desk (omnizon-29). Ids from the v1 tasks keep their products
too (15 Marshall speaker, 21-23 phones, 22 Galaxy S24 Ultra, 51 espresso machine, 61 watch).

The catalog is chosen so that each task's goal has right answers and plausible wrong ones
(headphones on both sides of $24-$100, a PS5-controller charging dock next to the controller,
pot holders next to pots, a single basketball next to the ball pack, bed pillows next to neck
pillows, 32/55-inch desks next to the 40-inch one), and no unlisted product that the goal
would also describe (no second apron, no third pot, no third neck pillow).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Category:
    slug: str
    name: str


CATEGORIES: tuple[Category, ...] = (
    Category("electronics", "Electronics"),
    Category("video-games", "Video Games"),
    Category("home-kitchen", "Home & Kitchen"),
    Category("sports-outdoors", "Sports & Outdoors"),
    Category("furniture", "Furniture"),
    Category("bedding", "Bedding & Pillows"),
    Category("fashion", "Fashion"),
)
CATEGORY_NAMES: dict[str, str] = {c.slug: c.name for c in CATEGORIES}


@dataclass(frozen=True)
class Product:
    id: str
    title: str
    brand: str
    category: str                 # a Category.slug
    price: float
    rating: float                 # 1.0 .. 5.0
    reviews: int
    kind: str                     # picks the product picture (images.py)
    color: str                    # main colour of the picture
    keywords: tuple[str, ...] = ()
    list_price: float | None = None
    about: tuple[str, ...] = ()
    specs: tuple[tuple[str, str], ...] = ()
    search_text: str = field(default="", compare=False)

    @property
    def category_name(self) -> str:
        return CATEGORY_NAMES[self.category]

    @property
    def discount_percent(self) -> int:
        if not self.list_price or self.list_price <= self.price:
            return 0
        return round(100 * (1 - self.price / self.list_price))


def _p(id: str, title: str, brand: str, category: str, price: float, rating: float, reviews: int, kind: str,
       color: str, keywords: str = "", list_price: float | None = None, about: tuple[str, ...] = (),
       specs: tuple[tuple[str, str], ...] = ()) -> Product:
    words = tuple(keywords.split(",")) if keywords else ()
    text = " ".join([title, brand, CATEGORY_NAMES[category], kind, *words])
    return Product(id, title, brand, category, price, rating, reviews, kind, color, tuple(w.strip() for w in words),
                   list_price, about, specs, search_text=text)


# Catalog order is "Featured" order.
PRODUCTS: tuple[Product, ...] = (
    # --- Electronics: headphones (omnizon-3: some inside $24-$100, some outside) -----------------
    _p("5", "Sony WH-CH720N Noise Canceling Wireless Bluetooth Headphones, Black", "Sony", "electronics", 89.99, 4.4, 12873,
       "headphones", "#222", "over-ear,wireless,noise cancelling,bluetooth", 149.99,
       ("Lightweight design at 192 g for all-day comfort", "Dual Noise Sensor technology with Integrated Processor V1",
        "Up to 35 hours of battery life with quick charging", "Clear hands-free calling with built-in microphone"),
       (("Model", "WH-CH720N"), ("Form factor", "Over-ear"), ("Connectivity", "Bluetooth 5.2"), ("Battery life", "35 hours"))),
    _p("1", "Sony WH-1000XM5 Wireless Industry Leading Noise Canceling Headphones, Black", "Sony", "electronics", 349.99, 4.6, 18234,
       "headphones", "#111", "over-ear,wireless,noise cancelling,bluetooth", 399.99,
       ("Industry-leading noise cancellation with eight microphones", "Up to 30 hours of battery life",
        "Crystal clear hands-free calling", "Multipoint connection to two devices"),
       (("Model", "WH-1000XM5"), ("Form factor", "Over-ear"), ("Connectivity", "Bluetooth 5.2"))),
    _p("3", "Soundcore by Anker Q20i Hybrid Active Noise Cancelling Headphones, Wireless Over-Ear", "Soundcore", "electronics", 39.99, 4.5, 30412,
       "headphones", "#1d3557", "over-ear,wireless,noise cancelling,bluetooth", 59.99,
       ("Hybrid active noise cancelling reduces low-frequency noise", "Hi-Res audio with 40 mm dynamic drivers",
        "40 hours of playtime in ANC mode", "App control with 22 EQ presets")),
    _p("4", "JBL Tune 510BT Wireless On-Ear Headphones with Purebass Sound, Blue", "JBL", "electronics", 29.95, 4.5, 71220,
       "headphones", "#2563eb", "on-ear,wireless,bluetooth", 49.95,
       ("JBL Pure Bass sound", "Up to 40 hours of battery with speed charge", "Lightweight, foldable design")),
    _p("11", "Skullcandy Hesh Evo Over-Ear Wireless Headphones, True Black", "Skullcandy", "electronics", 59.99, 4.4, 9410,
       "headphones", "#3a3a3a", "over-ear,wireless,bluetooth", 99.99,
       ("36 hours of battery life", "Rapid charge: 10 minutes for 3 hours", "Built-in Tile finding technology")),
    _p("9", "Sennheiser HD 280 Pro Closed-Back Studio Monitor Headphones", "Sennheiser", "electronics", 99.95, 4.5, 22310,
       "headphones", "#444", "over-ear,wired,studio", None,
       ("Closed-back design for studio monitoring", "Up to 32 dB of passive noise attenuation", "Collapsible, rotating ear cups")),
    _p("7", "Beats Studio Pro Wireless Bluetooth Noise Cancelling Headphones, Deep Brown", "Beats", "electronics", 169.99, 4.4, 8120,
       "headphones", "#5b3a29", "over-ear,wireless,noise cancelling,bluetooth", 349.99,
       ("Personalized Spatial Audio with dynamic head tracking", "Up to 40 hours of battery life", "USB-C lossless audio")),
    _p("6", "Bose QuietComfort Ultra Wireless Noise Cancelling Headphones, White Smoke", "Bose", "electronics", 379.00, 4.4, 5602,
       "headphones", "#d9d4cc", "over-ear,wireless,noise cancelling,bluetooth", 429.00,
       ("World-class noise cancellation", "Immersive spatial audio", "Up to 24 hours of battery life")),
    _p("8", "Panasonic RP-HT161-K Full-Sized Lightweight Long-Corded Headphones, Black", "Panasonic", "electronics", 14.99, 4.3, 40211,
       "headphones", "#1a1a1a", "over-ear,wired", None,
       ("30 mm neodymium drivers", "Long 6.5 ft cord", "Lightweight design")),
    _p("12", "Kids Headphones with Microphone, 85dB Volume Limited Wired Headphones for School, Pink", "iClever", "electronics", 19.99, 4.5, 15332,
       "headphones", "#ec4899", "kids,wired,on-ear", 24.99,
       ("Volume limited to 85 dB to protect young ears", "Foldable and adjustable headband", "Built-in microphone for online classes")),
    _p("10", "JBL Vibe Beam True Wireless Deep Bass Sound Earbuds, Black", "JBL", "electronics", 39.95, 4.3, 15502,
       "earbuds", "#111", "earbuds,earphones,true wireless,bluetooth", 49.95,
       ("JBL Deep Bass sound", "Up to 32 hours of combined playback", "Water and dust resistant (IP54)")),
    _p("2", "Apple AirPods Pro (2nd Generation) Wireless Earbuds with USB-C Charging Case", "Apple", "electronics", 189.99, 4.7, 98231,
       "earbuds", "#f5f5f5", "earbuds,earphones,true wireless,bluetooth", 249.00,
       ("Up to 2x more Active Noise Cancellation", "Adaptive Audio and Conversation Awareness", "Personalized Spatial Audio")),
    # --- Electronics: speakers, phones, screens --------------------------------------------------
    _p("15", "Marshall Emberton II Portable Bluetooth Speaker, Black & Brass", "Marshall", "electronics", 129.99, 4.6, 4410,
       "speaker", "#2b2b2b", "portable,bluetooth,waterproof", 169.99,
       ("30+ hours of portable playtime", "IP67 dust and water resistant", "True Stereophonic multi-directional sound")),
    _p("14", "JBL Flip 6 Portable Waterproof Bluetooth Speaker, Red", "JBL", "electronics", 99.95, 4.7, 30112,
       "speaker", "#dc2626", "portable,bluetooth,waterproof", 129.95,
       ("Bold JBL Original Pro Sound", "12 hours of playtime", "IP67 waterproof and dustproof")),
    _p("13", "Bose SoundLink Flex Bluetooth Portable Speaker, Stone Blue", "Bose", "electronics", 119.00, 4.7, 21004,
       "speaker", "#4b6a88", "portable,bluetooth,waterproof", 149.00,
       ("PositionIQ technology for optimal sound", "Up to 12 hours of battery life", "Waterproof and floats")),
    _p("22", "SAMSUNG Galaxy S24 Ultra Cell Phone, 256GB, Titanium Gray, Unlocked Android Smartphone", "SAMSUNG", "electronics", 1119.99, 4.5, 3810,
       "phone", "#6b7280", "smartphone,cell phone,android,unlocked", 1299.99,
       ("200MP camera with 100x Space Zoom", "Built-in S Pen", "Titanium frame, 6.8-inch display"),
       (("Storage", "256 GB"), ("Display", "6.8 inches"), ("Camera", "200 MP"))),
    _p("24", "SAMSUNG Galaxy Z Fold 6 Cell Phone, 256GB, Silver Shadow, Unlocked Android Smartphone", "SAMSUNG", "electronics", 1899.99, 4.3, 911,
       "phone", "#c0c4cc", "smartphone,foldable,cell phone,android,unlocked", None,
       ("7.6-inch foldable main screen", "Galaxy AI built in", "Snapdragon 8 Gen 3 processor")),
    _p("21", "Apple iPhone 15, 128GB, Black - Unlocked (Renewed)", "Apple", "electronics", 589.00, 4.3, 6102,
       "phone", "#1f2937", "smartphone,cell phone,ios,unlocked,renewed", None,
       ("6.1-inch Super Retina XDR display", "48MP main camera", "USB-C connector")),
    _p("23", "Google Pixel 8a, 128GB, Obsidian, Unlocked Android Smartphone", "Google", "electronics", 399.00, 4.4, 2890,
       "phone", "#27272a", "smartphone,cell phone,android,unlocked", 499.00,
       ("Google AI built in", "Actua display up to 120Hz", "7 years of security updates")),
    _p("25", "KTC 24 inch 1500R Curved Gaming Monitor, 165Hz, 1ms, FHD 1080p", "KTC", "electronics", 119.99, 4.4, 3320,
       "monitor", "#111", "gaming monitor,curved,display,computer", 159.99,
       ("1500R curved VA panel", "165 Hz refresh rate with 1 ms response", "FreeSync and G-Sync compatible"),
       (("Screen size", "24 inches"), ("Resolution", "1920 x 1080"), ("Refresh rate", "165 Hz"))),
    _p("26", "Dell S2725H 27 Inch FHD IPS Monitor with Built-in Speakers, 100Hz", "Dell", "electronics", 149.99, 4.5, 1980,
       "monitor", "#e5e7eb", "monitor,display,computer", 179.99,
       ("27-inch Full HD IPS panel", "100 Hz refresh rate", "Dual 5 W speakers")),
    _p("20", "SAMSUNG 43-Inch Class Crystal UHD 4K Smart TV", "SAMSUNG", "electronics", 279.99, 4.5, 11230,
       "tv", "#111", "television,tv,4k,smart tv", 399.99,
       ("Crystal Processor 4K", "Smart TV with built-in streaming apps", "Slim, one-body design")),
    _p("27", "Apple MacBook Air 13-inch Laptop with M2 chip, 8GB RAM, 256GB SSD, Midnight", "Apple", "electronics", 799.00, 4.8, 7220,
       "laptop", "#1e293b", "laptop,notebook,computer", 999.00,
       ("Apple M2 chip", "Up to 18 hours of battery life", "13.6-inch Liquid Retina display")),
    _p("28", "ASUS TUF Gaming A15 Gaming Laptop, 15.6\" 144Hz, RTX 4050, 16GB RAM", "ASUS", "electronics", 899.99, 4.3, 2210,
       "laptop", "#374151", "gaming laptop,laptop,notebook,computer", 1099.99,
       ("NVIDIA GeForce RTX 4050", "15.6-inch 144 Hz display", "Military-grade durability")),
    _p("29", "Logitech MK270 Wireless Keyboard and Mouse Combo for Windows", "Logitech", "electronics", 27.99, 4.5, 89340,
       "keyboard", "#222", "keyboard,mouse,wireless,computer", 29.99,
       ("Reliable 2.4 GHz wireless connection", "Long battery life", "Full-size keyboard with 8 hotkeys")),
    _p("17", "Anker Portable Charger, 10000mAh Power Bank with USB-C", "Anker", "electronics", 21.99, 4.6, 61200,
       "battery", "#111", "power bank,charger,portable", 25.99,
       ("10,000 mAh capacity", "USB-C input and output", "Compact and lightweight")),
    _p("30", "SanDisk 128GB Extreme microSDXC UHS-I Memory Card with Adapter", "SanDisk", "electronics", 14.99, 4.8, 120340,
       "card", "#c81e1e", "memory card,micro sd,storage", 23.99,
       ("Up to 190 MB/s read speeds", "4K UHD video recording", "Waterproof and shock proof")),
    # --- Video Games (omnizon-9 and -24) ---------------------------------------------------------
    _p("16", "PlayStation DualSense Wireless Controller for PS5 – Midnight Black", "PlayStation", "video-games", 69.99, 4.7, 54210,
       "controller", "#1f2937", "ps5,playstation 5,controller,gamepad,gaming,wireless", 74.99,
       ("Haptic feedback and adaptive triggers", "Built-in microphone and headset jack", "Create button for capturing gameplay",
        "Compatible with PS5 consoles"),
       (("Platform", "PlayStation 5"), ("Connectivity", "Bluetooth, USB-C"), ("Color", "Midnight Black"))),
    _p("185", "Charging Station for PS5 Controller, Dual Fast Charging Dock with LED Indicator", "OIVO", "video-games", 19.99, 4.6, 28110,
       "dock", "#111", "ps5,playstation 5,controller,charger,charging station,gaming accessories", 25.99,
       ("Charges two DualSense controllers at once", "LED charging indicator", "Controllers not included")),
    _p("183", "Xbox Wireless Controller – Carbon Black", "Microsoft", "video-games", 59.99, 4.7, 70122,
       "controller", "#111827", "xbox,controller,gamepad,gaming,wireless", None,
       ("Textured grip on triggers and bumpers", "Bluetooth for Windows and mobile", "Share button")),
    _p("184", "Nintendo Switch Pro Controller", "Nintendo", "video-games", 69.99, 4.8, 41234,
       "controller", "#3f3f46", "nintendo switch,controller,gamepad,gaming,wireless", None,
       ("HD rumble and motion controls", "Built-in amiibo functionality", "Up to 40 hours of battery")),
    _p("193", "8BitDo Ultimate Bluetooth Controller with Charging Dock for Switch and PC", "8BitDo", "video-games", 69.99, 4.5, 12011,
       "controller", "#9ca3af", "controller,gamepad,gaming,wireless,pc", None,
       ("Hall effect joysticks", "Charging dock included", "Works with Switch, Windows and Steam Deck")),
    _p("192", "Logitech G305 LIGHTSPEED Wireless Gaming Mouse, Black", "Logitech G", "video-games", 39.99, 4.7, 62013,
       "mouse", "#111", "gaming mouse,mouse,gaming,wireless,pc", 49.99,
       ("HERO 12K sensor", "LIGHTSPEED wireless", "250 hours on one AA battery")),
    _p("194", "Logitech G502 HERO High Performance Wired Gaming Mouse", "Logitech G", "video-games", 44.99, 4.7, 88320,
       "mouse", "#1f2937", "gaming mouse,mouse,gaming,wired,pc", 59.99,
       ("HERO 25K sensor", "11 programmable buttons", "Adjustable weights")),
    _p("186", "Razer BlackShark V2 X Gaming Headset, 7.1 Surround Sound", "Razer", "video-games", 39.99, 4.4, 47210,
       "headphones", "#16a34a", "gaming headset,headset,gaming,wired,microphone", 59.99,
       ("Razer TriForce 50 mm drivers", "7.1 surround sound", "HyperClear cardioid microphone")),
    _p("187", "Corsair K55 RGB PRO Wired Gaming Keyboard", "Corsair", "video-games", 49.99, 4.5, 20119,
       "keyboard", "#111", "gaming keyboard,keyboard,gaming,rgb,pc", 59.99,
       ("Dynamic five-zone RGB backlighting", "Six dedicated macro keys", "IP42 dust and spill resistance")),
    _p("180", "PlayStation 5 Console – Slim Disc Edition", "PlayStation", "video-games", 499.99, 4.8, 12870,
       "console", "#f4f4f5", "ps5,playstation 5,console,gaming", None,
       ("Ultra-high speed SSD", "Ray tracing and 4K-TV gaming", "Includes a DualSense wireless controller")),
    _p("181", "Xbox Series X 1TB Console", "Microsoft", "video-games", 499.99, 4.8, 31200,
       "console", "#111", "xbox,console,gaming", None,
       ("12 teraflops of processing power", "True 4K gaming", "1 TB custom SSD")),
    _p("182", "Nintendo Switch – OLED Model with White Joy-Con", "Nintendo", "video-games", 349.99, 4.8, 51022,
       "handheld", "#f4f4f5", "nintendo switch,console,handheld,gaming", None,
       ("7-inch OLED screen", "Wide adjustable stand", "64 GB internal storage")),
    _p("195", "ASUS ROG Ally Handheld Gaming Console, Z1 Extreme, 512GB", "ASUS", "video-games", 649.99, 4.3, 3120,
       "handheld", "#f5f5f5", "handheld,gaming,console,pc", 699.99,
       ("AMD Ryzen Z1 Extreme", "7-inch 120 Hz display", "Windows 11")),
    _p("188", "Meta Quest 3S 128GB All-in-One VR Headset", "Meta", "video-games", 299.99, 4.6, 8820,
       "vr", "#f8fafc", "vr,virtual reality,headset,gaming", None,
       ("Mixed reality passthrough", "Touch Plus controllers included", "Thousands of games and apps")),
    _p("191", "Marvel's Spider-Man 2 – PlayStation 5", "PlayStation", "video-games", 49.99, 4.8, 9910,
       "game", "#b91c1c", "ps5,playstation 5,video game,gaming", 69.99,
       ("Play as Peter Parker and Miles Morales", "Explore an expanded Marvel's New York", "PS5 exclusive")),
    # --- Home & Kitchen (omnizon-13, 25, 28) -----------------------------------------------------
    _p("212", "Cuisinart Chef's Classic 8-Quart Stainless Steel Stockpot with Cover", "Cuisinart", "home-kitchen", 44.95, 4.7, 18210,
       "pot", "#b8bec6", "cooking pot,stock pot,soup pot,cookware,kitchen,cooking", 59.95,
       ("8-quart capacity for soups, stocks and pasta", "Mirror-finish stainless steel with an aluminum-encapsulated base",
        "Tight-fitting stainless steel cover", "Dishwasher safe; oven safe to 500°F"),
       (("Capacity", "8 quarts"), ("Material", "Stainless steel"), ("Lid", "Included"))),
    _p("215", "Lodge 6 Quart Enameled Cast Iron Dutch Oven Cooking Pot with Lid, Island Spice Red", "Lodge", "home-kitchen", 79.90, 4.7, 39022,
       "dutchoven", "#c2410c", "cooking pot,dutch oven,casserole,cookware,kitchen,cooking", 119.90,
       ("Enameled cast iron heats evenly and retains heat", "Broil, braise, bake or roast up to 500°F",
        "Tight-fitting lid locks in moisture", "6-quart capacity serves a party")),
    _p("213", "OXO Good Grips Silicone Pot Holders, Set of 2, Black", "OXO", "home-kitchen", 12.99, 4.7, 9120,
       "potholder", "#111", "pot holder,oven mitt,kitchen,cooking", None,
       ("Heat resistant up to 600°F", "Textured silicone for a secure grip", "Set of two")),
    _p("211", "T-fal Ultimate Hard Anodized Nonstick Fry Pan Set, 10 and 12 Inch", "T-fal", "home-kitchen", 34.99, 4.6, 34410,
       "pan", "#27272a", "frying pan,skillet,cookware,kitchen,cooking", 49.99,
       ("Titanium-reinforced nonstick coating", "Thermo-Spot heat indicator", "Oven safe to 400°F")),
    _p("210", "Lodge Pre-Seasoned Cast Iron Skillet, 12 Inch", "Lodge", "home-kitchen", 29.90, 4.7, 162300,
       "pan", "#1c1917", "skillet,frying pan,cast iron,cookware,kitchen,cooking", 43.90,
       ("Pre-seasoned with vegetable oil", "Use on stovetop, oven, grill or campfire", "Made in the USA")),
    _p("214", "Stainless Steel Whistling Tea Kettle, 2.5 Quart", "Mr. Coffee", "home-kitchen", 27.99, 4.5, 6620,
       "kettle", "#d4d4d8", "tea kettle,kettle,kitchen,stovetop", None,
       ("Loud whistle when water boils", "Cool-touch handle", "2.5-quart capacity")),
    _p("91", "Hudson Durable Goods Professional Grill Apron for Men & Women, Black with Tan Straps", "Hudson Durable Goods", "home-kitchen", 24.99, 4.6, 21540,
       "apron", "#1f2937", "apron,chef apron,kitchen,cooking,bbq,grill", 29.99,
       ("Heavy-duty canvas with adjustable cross-back straps", "Towel loop and two large pockets",
        "One size fits most", "Great for cooking, grilling and baking")),
    _p("218", "Stainless Steel Silverware Set, 20-Piece Flatware Set for 4, Mirror Polished, Dishwasher Safe", "LIANYU", "home-kitchen", 25.99, 4.7, 18220,
       "flatware", "#a1a1aa", "silverware,flatware,cutlery,spoons,forks,knives,utensils", 32.99,
       ("Service for 4: 4 dinner forks, 4 salad forks, 4 dinner knives, 4 dinner spoons and 4 teaspoons",
        "Premium stainless steel, rust resistant", "Mirror polished and dishwasher safe")),
    _p("219", "Oneida Flight 45-Piece Everyday Flatware Set, Service for 8", "Oneida", "home-kitchen", 69.99, 4.6, 7410,
       "flatware", "#d4d4d8", "silverware,flatware,cutlery,spoons,forks,knives,utensils", 89.99,
       ("Service for 8 plus 5 serving pieces", "18/0 stainless steel", "Dishwasher safe")),
    _p("220", "Steak Knives Set of 6, Serrated Stainless Steel Dinner Knives", "HENCKELS", "home-kitchen", 24.99, 4.6, 12330,
       "knives", "#52525b", "steak knives,knives,cutlery,kitchen", 34.99,
       ("Razor-sharp serrated blades", "Full tang, triple-riveted handles", "Set of 6")),
    _p("221", "Corelle 18-Piece Dinnerware Set, Service for 6, Winter Frost White", "Corelle", "home-kitchen", 59.99, 4.7, 25030,
       "plates", "#f4f4f5", "dinnerware,plates,bowls,dishes,kitchen", 74.99,
       ("Chip and break resistant", "Lightweight and stackable", "Microwave and dishwasher safe")),
    _p("217", "Umite Chef Kitchen Utensil Set, 33 Pieces, Silicone with Wooden Handles", "Umite Chef", "home-kitchen", 29.99, 4.6, 28110,
       "utensils", "#166534", "kitchen utensils,spatula,turner,cooking,kitchen", 39.99,
       ("Heat resistant silicone heads", "Natural wooden handles", "Holder included")),
    _p("216", "Glass Food Storage Containers with Lids, 10-Pack", "Pyrex", "home-kitchen", 32.99, 4.6, 40110,
       "containers", "#60a5fa", "food storage,containers,meal prep,kitchen", 42.99,
       ("Oven, microwave, freezer and dishwasher safe", "Snap-lock lids", "10 containers in assorted sizes")),
    _p("51", "Breville Bambino Automatic Espresso Machine, Brushed Stainless Steel", "Breville", "home-kitchen", 299.99, 4.5, 5210,
       "espresso", "#a1a1aa", "espresso machine,coffee,automatic,kitchen appliance", 349.95,
       ("3-second heat-up time", "Automatic steam wand for microfoam", "54 mm portafilter with 19 grams for full flavor")),
    _p("52", "De'Longhi Dedica Automatic Espresso Machine with Milk Frother", "De'Longhi", "home-kitchen", 399.95, 4.3, 10220,
       "espresso", "#e5e7eb", "espresso machine,coffee,automatic,kitchen appliance", None,
       ("15-bar professional pressure", "Slim 6-inch design", "Adjustable milk frother")),
    _p("55", "Keurig K-Mini Single Serve Coffee Maker, Black", "Keurig", "home-kitchen", 79.99, 4.5, 70330,
       "coffee", "#111", "coffee maker,coffee,kitchen appliance", 99.99,
       ("Brews any cup size from 6 to 12 oz", "Fits anywhere at less than 5 inches wide", "Cord storage")),
    _p("54", "Ninja Professional Plus Blender with Auto-iQ, 72 oz", "Ninja", "home-kitchen", 99.99, 4.7, 19050,
       "blender", "#52525b", "blender,smoothie,kitchen appliance", 129.99,
       ("1400 peak watts", "Three Auto-iQ programs", "72-oz total crushing pitcher")),
    _p("56", "COSORI Pro Air Fryer, 5 Qt, 9 One-Touch Functions", "COSORI", "home-kitchen", 89.99, 4.7, 56010,
       "airfryer", "#3f3f46", "air fryer,kitchen appliance,cooking", 119.99,
       ("Cooks with up to 85% less oil", "9 one-touch cooking functions", "Nonstick, dishwasher-safe basket")),
    _p("57", "Hamilton Beach 2-Slice Toaster with Extra-Wide Slots", "Hamilton Beach", "home-kitchen", 24.99, 4.4, 22110,
       "toaster", "#d4d4d8", "toaster,kitchen appliance,breakfast", None,
       ("Extra-wide slots for bagels", "Shade selector", "Auto shutoff")),
    # --- Sports & Outdoors (omnizon-15) ----------------------------------------------------------
    _p("114", "Sports Balls Variety Pack – Soccer Ball, Basketball, Football & Volleyball with Pump (Pack of 4)", "Franklin Sports", "sports-outdoors", 49.99, 4.6, 3220,
       "ballpack", "#f97316", "sports balls,balls,pack,soccer,basketball,football,volleyball,set", 64.99,
       ("Four official-size balls: soccer, basketball, football and volleyball", "Hand pump and needles included",
        "Durable rubber construction for indoor and outdoor play", "Ready for the new season")),
    _p("113", "Spalding NBA Street Outdoor Basketball, Size 7, 29.5\"", "Spalding", "sports-outdoors", 24.99, 4.7, 51200,
       "basketball", "#ea580c", "basketball,ball,sports,outdoor", 29.99,
       ("Official size and weight", "Durable rubber cover for outdoor play", "Deep channel design for grip")),
    _p("115", "Wilson NFL Super Grip Composite Football, Official Size", "Wilson", "sports-outdoors", 19.99, 4.7, 28220,
       "football", "#7c2d12", "football,ball,sports", 24.99,
       ("Composite leather cover", "Super Grip technology", "Official size")),
    _p("116", "adidas Unisex Starlancer Club Soccer Ball, Size 5", "adidas", "sports-outdoors", 22.00, 4.7, 13110,
       "soccer", "#fafafa", "soccer ball,ball,sports,football", None,
       ("Machine-stitched TPU cover", "Butyl bladder for best air retention", "Size 5")),
    _p("119", "Ball Pump with 5 Needles, Portable Hand Air Pump for Sports Balls", "Franklin Sports", "sports-outdoors", 7.99, 4.5, 9120,
       "pump", "#2563eb", "ball pump,pump,needles,sports balls,accessories", None,
       ("Dual-action pump", "Five inflation needles", "Works with basketballs, soccer balls and footballs")),
    _p("117", "Franklin Sports Pickleball Paddle Set with 2 Paddles and 4 Balls", "Franklin Sports", "sports-outdoors", 39.99, 4.5, 6420,
       "paddle", "#0ea5e9", "pickleball,paddle,sports", 49.99,
       ("Two USA Pickleball approved paddles", "Four outdoor balls", "Carry bag included")),
    _p("110", "Gaiam Essentials Thick Yoga Mat with Carrier Strap, 72\"L x 24\"W", "Gaiam", "sports-outdoors", 21.98, 4.6, 49210,
       "yogamat", "#7c3aed", "yoga mat,exercise,fitness", 29.98,
       ("10 mm thick for cushioning", "Non-slip ribbed texture", "Carrier strap included")),
    _p("111", "CAP Barbell Neoprene Dumbbell Pair, 5 lb", "CAP Barbell", "sports-outdoors", 19.99, 4.7, 38220,
       "dumbbell", "#2dd4bf", "dumbbells,weights,fitness,exercise", None,
       ("Neoprene coating for a comfortable grip", "Hexagon shape prevents rolling", "Sold as a pair")),
    _p("112", "Hydro Flask 32 oz Wide Mouth Water Bottle, Pacific", "Hydro Flask", "sports-outdoors", 44.95, 4.8, 22310,
       "bottle", "#0891b2", "water bottle,insulated,outdoor,hiking", None,
       ("TempShield insulation keeps drinks cold 24 hours", "Wide mouth fits ice cubes", "BPA-free")),
    _p("118", "Coleman Sundome 4-Person Camping Tent", "Coleman", "sports-outdoors", 89.99, 4.6, 30110,
       "tent", "#15803d", "tent,camping,outdoor", 109.99,
       ("Sets up in 10 minutes", "WeatherTec system keeps you dry", "Fits one queen-size airbed")),
    # --- Furniture (omnizon-29, 30) -------------------------------------------------------------
    _p("159", "40 Inch Computer Desk, Modern Simple Home Office Writing Desk with Storage Bag, Rustic Brown", "Coavas", "furniture", 79.99, 4.4, 6120,
       "desk", "#8b5a2b", "desk,computer desk,office desk,writing desk,table,home office,40 inch", 99.99,
       ("40\" W x 19.6\" D x 29.5\" H work surface", "Side storage bag and headphone hook", "Sturdy metal frame, easy assembly"),
       (("Width", "40 inches"), ("Depth", "19.6 inches"), ("Height", "29.5 inches"))),
    _p("158", "Small Computer Desk 32 Inch, Home Office Writing Desk for Small Spaces, White", "Coavas", "furniture", 59.99, 4.4, 4010,
       "desk", "#e7e5e4", "desk,computer desk,office desk,writing desk,table,home office,32 inch", 69.99,
       ("32\" W x 16\" D compact design", "Metal frame with adjustable feet", "Assembles in 10 minutes"),
       (("Width", "32 inches"),)),
    _p("160", "55 Inch L-Shaped Corner Computer Desk with Monitor Shelf, Black", "Bestier", "furniture", 109.99, 4.5, 8820,
       "desk", "#1c1917", "desk,computer desk,office desk,l-shaped,corner desk,home office,55 inch,gaming desk", 139.99,
       ("55\" + 55\" L-shaped work surface", "Movable monitor stand", "Reversible installation"),
       (("Width", "55 inches"),)),
    _p("161", "Electric Standing Desk, 48 x 24 Inches, Height Adjustable Sit Stand Desk", "FEZIBO", "furniture", 169.99, 4.5, 12010,
       "standingdesk", "#78716c", "desk,standing desk,office desk,height adjustable,home office,48 inch", 219.99,
       ("Height range 28\" to 46\"", "Three memory presets", "Whole-piece desktop")),
    _p("155", "Ergonomic Office Chair, Mesh Desk Chair with Lumbar Support and Adjustable Armrests", "Sweetcrispy", "furniture", 129.99, 4.4, 21030,
       "chair", "#1f2937", "office chair,desk chair,ergonomic,chair,home office,computer chair", 169.99,
       ("Breathable mesh back", "Adjustable lumbar support, height and armrests", "Supports up to 300 lb")),
    _p("156", "Staples Hyken Technical Mesh Task Chair, Black", "Staples", "furniture", 199.99, 4.5, 15120,
       "chair", "#111", "office chair,task chair,ergonomic,chair,home office", 239.99,
       ("Mesh back with adjustable headrest", "Tilt and lock mechanism", "Padded armrests")),
    _p("157", "GTRACING Gaming Chair with Footrest, Big and Tall Office Chair, Red", "GTRACING", "furniture", 139.99, 4.4, 33220,
       "chair", "#b91c1c", "gaming chair,office chair,chair,recliner", 179.99,
       ("Retractable footrest", "Reclines from 90 to 135 degrees", "Headrest and lumbar pillows")),
    _p("162", "5-Tier Bookshelf, Tall Bookcase with Open Shelves, Walnut", "HOOBRO", "furniture", 69.99, 4.5, 9010,
       "shelf", "#7c4a21", "bookshelf,bookcase,shelves,storage", None,
       ("Five open shelves", "Industrial metal frame", "Anti-tip kit included")),
    _p("163", "Queen Size Platform Bed Frame with Wooden Headboard, No Box Spring Needed, Walnut", "Zinus", "furniture", 189.99, 4.5, 24110,
       "bed", "#7c4a21", "bed frame,queen,platform bed,bed,bedroom,headboard", 249.99,
       ("Queen size: 64\" W x 84\" L", "Strong wood slats, no box spring needed", "Wooden headboard; tool-free assembly"),
       (("Size", "Queen"), ("Material", "Wood and steel"), ("Weight capacity", "700 lb"))),
    _p("164", "Full Size Metal Platform Bed Frame, 14 Inch, No Box Spring Needed", "Zinus", "furniture", 79.99, 4.6, 66210,
       "bed", "#27272a", "bed frame,full,metal bed,bed,bedroom", 99.99,
       ("Full size: 54\" W x 75\" L", "14 inches of under-bed storage", "Steel slat support")),
    _p("165", "King Size Upholstered Bed Frame with Tufted Headboard, Light Grey", "Allewie", "furniture", 279.99, 4.5, 10220,
       "bed", "#9ca3af", "bed frame,king,upholstered bed,bed,bedroom,headboard", 329.99,
       ("King size: 80\" W x 84\" L", "Button-tufted headboard", "Wood slat support")),
    _p("166", "Twin Bed Frame with Headboard for Kids, White Metal", "DHP", "furniture", 69.99, 4.4, 8110,
       "bed", "#f5f5f4", "bed frame,twin,kids bed,metal bed,bed,bedroom", None,
       ("Twin size: 39\" W x 75\" L", "Scrolled metal headboard", "Sturdy metal slats")),
    # --- Bedding & Pillows (omnizon-17) ----------------------------------------------------------
    _p("170", "Cervical Neck Pillow for Sleeping, Contour Memory Foam Orthopedic Pillow for Neck Pain Relief", "Elviros", "bedding", 45.99, 4.4, 24220,
       "contourpillow", "#f5f5f4", "neck pillow,cervical pillow,memory foam,orthopedic,pain relief,pillow", 59.99,
       ("Ergonomic contour supports the head, neck and shoulders", "Medium-firm memory foam for side and back sleepers",
        "Removable, washable cover", "Designed to relieve neck pain")),
    _p("167", "Travel Neck Pillow, 100% Pure Memory Foam Neck Pillow for Airplane, Navy", "napfun", "bedding", 24.99, 4.4, 30110,
       "neckpillow", "#1e3a8a", "neck pillow,travel pillow,memory foam,airplane,pillow", 29.99,
       ("Comfortable memory foam wraps around the neck", "Adjustable rope lock for a snug fit", "Packs into the included travel bag")),
    _p("168", "Bed Pillows Queen Size Set of 2, Cooling Hotel Quality Pillows for Sleeping", "Beckham Hotel Collection", "bedding", 39.99, 4.4, 140220,
       "pillow", "#ffffff", "bed pillows,pillow,queen,hotel,sleeping", 59.99,
       ("Gel fiber fill for hotel-quality comfort", "Cooling breathable cover", "Set of 2 queen pillows")),
    _p("169", "Lumbar Support Pillow for Office Chair, Memory Foam Back Cushion", "Everlasting Comfort", "bedding", 29.99, 4.5, 50330,
       "lumbarpillow", "#111827", "lumbar pillow,back cushion,memory foam,office chair,pillow", 39.99,
       ("Relieves lower back pain", "Adjustable strap fits most chairs", "Removable cover")),
    _p("171", "Queen Sheet Set, 4-Piece 1800 Thread Count Microfiber Bed Sheets, Grey", "Mellanni", "bedding", 29.99, 4.5, 270110,
       "sheets", "#9ca3af", "sheets,bed sheets,queen,bedding", 39.99,
       ("Flat sheet, fitted sheet and two pillowcases", "Brushed microfiber", "Deep pockets fit mattresses up to 16\"")),
    _p("172", "Weighted Blanket 15 lbs, 60\" x 80\", Grey", "YnM", "bedding", 49.99, 4.5, 61210,
       "blanket", "#6b7280", "weighted blanket,blanket,bedding", 69.99,
       ("Evenly distributed glass beads", "Breathable cotton", "Fits a queen or full bed")),
    # --- Fashion ---------------------------------------------------------------------------------
    _p("61", "Michael Kors Oversized Slim Runway Men's Watch, Gold-Tone Stainless Steel", "Michael Kors", "fashion", 179.00, 4.6, 9220,
       "watch", "#d4a017", "watch,men's watch,gold", 250.00,
       ("44 mm gold-tone case", "Three-hand quartz movement", "Water resistant to 50 m")),
    _p("60", "Casio Men's F-91W Classic Resin Digital Watch, Black", "Casio", "fashion", 18.99, 4.6, 121300,
       "watch", "#111", "watch,digital watch,men's watch", 22.95,
       ("Daily alarm and hourly time signal", "1/100-second stopwatch", "Battery life about 7 years")),
    _p("62", "Fossil Women's Riley Stainless Steel Multifunction Watch, Rose Gold", "Fossil", "fashion", 129.00, 4.6, 12200,
       "watch", "#e8b4a0", "watch,women's watch,rose gold", 175.00,
       ("38 mm case with crystal accents", "Multifunction movement", "Water resistant to 100 m")),
    _p("63", "JanSport SuperBreak One Backpack, Black", "JanSport", "fashion", 36.00, 4.8, 120440,
       "backpack", "#111", "backpack,school bag,bag", None,
       ("Spacious main compartment", "Front utility pocket", "Padded shoulder straps")),
    _p("64", "Ray-Ban RB2132 New Wayfarer Sunglasses, Black/Green", "Ray-Ban", "fashion", 163.00, 4.7, 8120,
       "sunglasses", "#111", "sunglasses,eyewear", None,
       ("Classic Wayfarer shape", "Crystal green lenses", "100% UV protection")),
    _p("65", "Hanes Men's EcoSmart Fleece Pullover Hoodie, Navy", "Hanes", "fashion", 15.00, 4.5, 180220,
       "hoodie", "#1e3a8a", "hoodie,sweatshirt,men's clothing", 22.00,
       ("Cotton/polyester fleece", "Double-needle stitching", "Front pouch pocket")),
)

PRODUCTS_BY_ID: dict[str, Product] = {p.id: p for p in PRODUCTS}
assert len(PRODUCTS_BY_ID) == len(PRODUCTS), "duplicate product id in the Omnizon catalog"
_FEATURED_RANK: dict[str, int] = {p.id: i for i, p in enumerate(PRODUCTS)}


def product(product_id: str) -> Product | None:
    return PRODUCTS_BY_ID.get(str(product_id))


# --- search --------------------------------------------------------------------------------------

_WORD = re.compile(r"[a-z0-9]+")


def stem(word: str) -> str:
    """Crude plural folding so "headphones" finds "Headphones" and "pots" finds "pot"."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("ches", "shes", "xes", "sses")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def tokens(text: str) -> list[str]:
    return [stem(w) for w in _WORD.findall(text.lower())]


_PRODUCT_TOKENS: dict[str, frozenset[str]] = {p.id: frozenset(tokens(p.search_text)) for p in PRODUCTS}
_TITLE_TOKENS: dict[str, frozenset[str]] = {p.id: frozenset(tokens(p.title)) for p in PRODUCTS}


def search(query: str) -> list[Product]:
    """Products for a search box query, best first.

    Every query word must match (title, brand, department or keywords); when nothing matches
    all words, products matching any word are shown (like a real shop, which rarely shows nothing).
    """
    words = tokens(query)
    if not words:
        return list(PRODUCTS)

    def title_hits(p: Product) -> int:
        return sum(w in _TITLE_TOKENS[p.id] for w in words)

    exact = [p for p in PRODUCTS if all(w in _PRODUCT_TOKENS[p.id] for w in words)]
    if exact:
        return sorted(exact, key=lambda p: (-title_hits(p), _FEATURED_RANK[p.id]))
    partial = [p for p in PRODUCTS if any(w in _PRODUCT_TOKENS[p.id] for w in words)]
    return sorted(partial, key=lambda p: (-sum(w in _PRODUCT_TOKENS[p.id] for w in words), -title_hits(p), _FEATURED_RANK[p.id]))


@dataclass(frozen=True)
class PriceBand:
    label: str
    min_price: float | None
    max_price: float | None


PRICE_BANDS: tuple[PriceBand, ...] = (
    PriceBand("Under $25", None, 25),
    PriceBand("$25 to $50", 25, 50),
    PriceBand("$50 to $100", 50, 100),
    PriceBand("$100 to $200", 100, 200),
    PriceBand("$200 & Above", 200, None),
)

SORT_OPTIONS: tuple[tuple[str, str], ...] = (
    ("featured", "Featured"),
    ("price-asc", "Price: Low to High"),
    ("price-desc", "Price: High to Low"),
    ("rating", "Avg. Customer Review"),
    ("reviews", "Most Reviews"),
)


@dataclass(frozen=True)
class Filters:
    """What the results page shows: the query plus the sidebar's refinements."""

    query: str = ""
    category: str = ""
    brands: tuple[str, ...] = ()
    min_price: float | None = None
    max_price: float | None = None
    min_rating: int = 0
    sort: str = "featured"


def refine(products: list[Product], f: Filters) -> list[Product]:
    out = [
        p for p in products
        if (not f.category or p.category == f.category)
        and (not f.brands or p.brand in f.brands)
        and (f.min_price is None or p.price >= f.min_price)
        and (f.max_price is None or p.price <= f.max_price)
        and p.rating >= f.min_rating
    ]
    if f.sort == "price-asc":
        out.sort(key=lambda p: p.price)
    elif f.sort == "price-desc":
        out.sort(key=lambda p: -p.price)
    elif f.sort == "rating":
        out.sort(key=lambda p: -p.rating)
    elif f.sort == "reviews":
        out.sort(key=lambda p: -p.reviews)
    return out


def results(f: Filters) -> tuple[list[Product], list[Product]]:
    """(matches of the query and category before the sidebar's refinements, the refined, sorted results)."""
    base = search(f.query)
    if f.category:
        base = [p for p in base if p.category == f.category]
    return base, refine(base, Filters(brands=f.brands, min_price=f.min_price, max_price=f.max_price,
                                      min_rating=f.min_rating, sort=f.sort))
