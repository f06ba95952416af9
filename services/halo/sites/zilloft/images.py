"""Pictures drawn as SVG: listing photos (an exterior per home type and four rooms), agent portraits
and the static map beside the results.

The policy sees pixels, so listings need recognisable pictures (a condo tower is not a bungalow) and
the replica must run offline: nothing to download, nothing to license. Every drawing derives from
the listing's `style` number, so a home looks the same on every page and in every session.
"""

from __future__ import annotations

import random
from html import escape

from halo.sites.zilloft.listings import Agent, Listing, short_money

_BODY = ("#f4e9d8", "#dfe7ef", "#c9d6c3", "#e8d3c4", "#f5f5f0", "#d9c8a9", "#b8c7d9", "#e6d1b8", "#cfd8dc", "#f0e0c8",
         "#a7b8a0", "#d7ccc8", "#9fb4c7", "#e9dcc9")
_ROOF = ("#5d4037", "#455a64", "#6d4c41", "#37474f", "#8d6e63", "#a0522d", "#4e5b62", "#7b5e57")
_DOOR = ("#8e1b1b", "#1a3a6e", "#2e6b3a", "#4e342e", "#263238", "#c28b14", "#5b3f8c")
_WALL = ("#f3efe7", "#e9eef2", "#f1e8dc", "#e7ece3", "#f4f1ea", "#ece4da", "#e3e8ee")
_SOFA = ("#5c6b73", "#8c6f56", "#3f5e5a", "#a3573c", "#6b6f80", "#c9b79c", "#2f4858")
_FLOOR = ("#c8a27a", "#b08a62", "#d6b894", "#a47b55", "#cfc4b6")
_SKIN = ("#f1c7a5", "#d9a27a", "#a8714f", "#7a4e33", "#e8b896", "#c68e63")
_BG = ("#dbe9ff", "#e3f4ea", "#fde9d9", "#efe3fb", "#e0f2f1", "#fff3cd")

_SVG_OPEN = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 400 300" width="400" height="300">'


def _rng(l: Listing, salt: str) -> random.Random:
    return random.Random(f"{l.zpid}:{l.style}:{salt}")


def _window(x: float, y: float, w: float, h: float, trim: str = "#ffffff") -> str:
    return (f'<rect x="{x}" y="{y}" width="{w}" height="{h}" fill="{trim}"/>'
            f'<rect x="{x + 3}" y="{y + 3}" width="{w - 6}" height="{h - 6}" fill="#9cc3e0"/>'
            f'<path d="M{x + 3} {y + 3} L{x + w * .55} {y + 3} L{x + 3} {y + h * .6} Z" fill="#cfe4f3" opacity=".7"/>'
            f'<line x1="{x + w / 2}" y1="{y + 3}" x2="{x + w / 2}" y2="{y + h - 3}" stroke="{trim}" stroke-width="2"/>'
            f'<line x1="{x + 3}" y1="{y + h / 2}" x2="{x + w - 3}" y2="{y + h / 2}" stroke="{trim}" stroke-width="2"/>')


def _tree(x: float, base: float, size: float, palm: bool = False) -> str:
    if palm:
        top = base - size * 2.3
        fronds = "".join(
            f'<path d="M{x} {top} q{dx * size * .5} {-size * .35} {dx * size} {size * .25}" stroke="#2f7d32" stroke-width="6" fill="none" stroke-linecap="round"/>'
            for dx in (-1.2, -.7, .7, 1.2))
        return f'<path d="M{x - 3} {base} Q{x + 6} {(base + top) / 2} {x} {top}" stroke="#8d6e4a" stroke-width="7" fill="none"/>{fronds}'
    return (f'<rect x="{x - 4}" y="{base - size * .8}" width="8" height="{size * .8}" fill="#6d4c33"/>'
            f'<circle cx="{x}" cy="{base - size * 1.15}" r="{size * .62}" fill="#4f8a3c"/>'
            f'<circle cx="{x - size * .35}" cy="{base - size * .9}" r="{size * .45}" fill="#5f9e47"/>'
            f'<circle cx="{x + size * .38}" cy="{base - size * .95}" r="{size * .42}" fill="#47803a"/>')


def _scene(l: Listing, body: str) -> str:
    """Sky, lawn, street and trees around a building drawing."""
    rng = _rng(l, "scene")
    warm = rng.random() < .3
    sky = ("#fbd3a5", "#fde9cf") if warm else ("#7fb6e8", "#d6ebfb")
    palm = "socal" in l.city_obj.regions
    trees = ""
    for x in rng.sample((28, 52, 352, 372, 330), 2):
        trees += _tree(x, 228, rng.uniform(26, 36), palm and rng.random() < .6)
    return (
        f'{_SVG_OPEN}<defs><linearGradient id="sky" x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="{sky[0]}"/>'
        f'<stop offset="1" stop-color="{sky[1]}"/></linearGradient></defs>'
        f'<rect width="400" height="300" fill="url(#sky)"/>'
        f'<ellipse cx="{rng.randint(60, 340)}" cy="{rng.randint(30, 60)}" rx="46" ry="12" fill="#fff" opacity=".75"/>'
        f'<path d="M0 200 Q100 {rng.randint(170, 190)} 200 195 T400 {rng.randint(180, 195)} V230 H0 Z" fill="#9cb98a" opacity=".7"/>'
        f'<rect y="226" width="400" height="52" fill="#7fb069"/>'
        f'<rect y="262" width="400" height="8" fill="#d9d6cf"/><rect y="270" width="400" height="30" fill="#8e8e8e"/>'
        f'<line x1="0" y1="286" x2="400" y2="286" stroke="#f5f5f5" stroke-width="2" stroke-dasharray="18 14"/>'
        f'{trees}{body}</svg>'
    )


def _house(l: Listing, rng: random.Random) -> str:
    body, roof, door = rng.choice(_BODY), rng.choice(_ROOF), rng.choice(_DOOR)
    two_story = l.beds >= 4 or (l.beds == 3 and rng.random() < .45)
    left, right, base = 96.0, 300.0, 228.0
    height = 120.0 if two_story else 78.0
    top = base - height
    garage = rng.random() < .65
    parts = []
    if garage:
        parts.append(f'<polygon points="306,262 360,262 350,{base} 312,{base}" fill="#bdbdbd"/>')
        parts.append(f'<rect x="300" y="{base - 62}" width="64" height="62" fill="{body}" stroke="#00000022"/>')
        parts.append(f'<polygon points="296,{base - 62} 332,{base - 88} 368,{base - 62}" fill="{roof}"/>')
        parts.append(f'<rect x="310" y="{base - 48}" width="44" height="48" fill="#eeeeee"/>')
        parts += [f'<line x1="310" y1="{base - 48 + k * 12}" x2="354" y2="{base - 48 + k * 12}" stroke="#c7c7c7" stroke-width="2"/>' for k in range(1, 4)]
    parts.append(f'<rect x="{left}" y="{top}" width="{right - left}" height="{height}" fill="{body}" stroke="#00000022"/>')
    if rng.random() < .5:   # gable
        parts.append(f'<polygon points="{left - 12},{top + 2} {(left + right) / 2},{top - 58} {right + 12},{top + 2}" fill="{roof}"/>')
    else:                   # hip
        parts.append(f'<polygon points="{left - 12},{top + 2} {left + 40},{top - 40} {right - 40},{top - 40} {right + 12},{top + 2}" fill="{roof}"/>')
    if rng.random() < .4:
        parts.append(f'<rect x="{right - 50}" y="{top - 56}" width="16" height="36" fill="#8d5a45"/>')
    door_x = rng.choice((left + 30, (left + right) / 2 - 14, right - 64))
    parts.append(f'<rect x="{door_x - 8}" y="{base - 6}" width="44" height="6" fill="#cfcac0"/>')
    parts.append(f'<rect x="{door_x}" y="{base - 50}" width="28" height="50" fill="{door}"/><circle cx="{door_x + 22}" cy="{base - 25}" r="2" fill="#f5d76e"/>')
    slots = [x for x in (left + 14, left + 70, right - 112, right - 56) if abs(x - door_x) > 40 and abs(x + 40 - door_x) > 8]
    for x in slots[:3]:
        parts.append(_window(x, base - 58, 40, 34))
        parts.append(f'<rect x="{x - 2}" y="{base - 22}" width="44" height="5" fill="#ffffff"/>')
    if two_story:
        for x in (left + 20, (left + right) / 2 - 20, right - 60):
            parts.append(_window(x, top + 16, 40, 34))
    parts.append(f'<rect x="{left - 6}" y="{base - 10}" width="{right - left + 12}" height="10" fill="#5c8a4a"/>')
    return "".join(parts)


def _condo(l: Listing, rng: random.Random) -> str:
    body = rng.choice(("#d6d3cc", "#c9d3dc", "#e4ddd0", "#b9c2c9", "#e9e4da"))
    floors = rng.randint(5, 7)
    left, right, base = 110.0, 290.0, 228.0
    top = base - floors * 26 - 10
    parts = [f'<rect x="{left}" y="{top}" width="{right - left}" height="{base - top}" fill="{body}" stroke="#00000026"/>',
             f'<rect x="{left - 6}" y="{top - 8}" width="{right - left + 12}" height="10" fill="#7d8a94"/>']
    for f in range(floors):
        y = top + 14 + f * 26
        for k in range(4):
            x = left + 12 + k * 42
            parts.append(f'<rect x="{x}" y="{y}" width="32" height="16" fill="#8fb5d1"/><rect x="{x}" y="{y}" width="14" height="16" fill="#b7d2e6"/>')
        parts.append(f'<rect x="{left + 4}" y="{y + 16}" width="{right - left - 8}" height="3" fill="#ffffff" opacity=".8"/>')
    parts.append(f'<rect x="{(left + right) / 2 - 22}" y="{base - 30}" width="44" height="30" fill="#37474f"/>')
    parts.append(f'<rect x="{(left + right) / 2 - 30}" y="{base - 36}" width="60" height="6" fill="#263238"/>')
    return "".join(parts)


def _townhomes(l: Listing, rng: random.Random) -> str:
    parts = []
    base = 228.0
    for k in range(3):
        x = 80 + k * 80
        body = rng.choice(_BODY)
        parts.append(f'<rect x="{x}" y="{base - 118}" width="80" height="118" fill="{body}" stroke="#00000026"/>')
        parts.append(f'<polygon points="{x - 4},{base - 116} {x + 40},{base - 150} {x + 84},{base - 116}" fill="{rng.choice(_ROOF)}"/>')
        parts.append(_window(x + 20, base - 104, 40, 30))
        parts.append(_window(x + 8, base - 56, 28, 30))
        parts.append(f'<rect x="{x + 46}" y="{base - 46}" width="24" height="46" fill="{rng.choice(_DOOR)}"/>')
    return "".join(parts)


def _multi(l: Listing, rng: random.Random) -> str:
    body, roof = rng.choice(_BODY), rng.choice(_ROOF)
    base, left, right = 228.0, 76.0, 324.0
    parts = [f'<rect x="{left}" y="{base - 124}" width="{right - left}" height="124" fill="{body}" stroke="#00000026"/>',
             f'<polygon points="{left - 10},{base - 122} {left + 30},{base - 160} {right - 30},{base - 160} {right + 10},{base - 122}" fill="{roof}"/>']
    for x in (left + 16, left + 72, right - 116, right - 60):
        parts.append(_window(x, base - 110, 40, 32))
    for x in (left + 16, right - 56):
        parts.append(_window(x, base - 62, 40, 32))
    for x in (left + 88, right - 118):
        parts.append(f'<rect x="{x}" y="{base - 50}" width="30" height="50" fill="{rng.choice(_DOOR)}"/>')
    return "".join(parts)


def _manufactured(l: Listing, rng: random.Random) -> str:
    body = rng.choice(_BODY)
    base, left, right = 228.0, 60.0, 340.0
    parts = [f'<rect x="{left}" y="{base - 70}" width="{right - left}" height="58" fill="{body}" stroke="#00000026"/>',
             f'<polygon points="{left - 6},{base - 70} {(left + right) / 2},{base - 88} {right + 6},{base - 70}" fill="{rng.choice(_ROOF)}"/>',
             f'<rect x="{left}" y="{base - 12}" width="{right - left}" height="12" fill="#9e9e9e"/>']
    parts += [f'<line x1="{x}" y1="{base - 12}" x2="{x}" y2="{base}" stroke="#7d7d7d"/>' for x in range(int(left) + 10, int(right), 12)]
    for x in (left + 20, left + 80, right - 120, right - 60):
        parts.append(_window(x, base - 58, 38, 26))
    parts.append(f'<rect x="{left + 140}" y="{base - 60}" width="24" height="48" fill="{rng.choice(_DOOR)}"/>')
    parts.append(f'<rect x="{left + 132}" y="{base - 12}" width="40" height="6" fill="#bcaaa4"/><rect x="{left + 136}" y="{base - 6}" width="32" height="6" fill="#a1887f"/>')
    return "".join(parts)


def _land(l: Listing, rng: random.Random) -> str:
    parts = ['<rect x="40" y="222" width="320" height="40" fill="#a9c47f"/>']
    for _ in range(9):
        x, y = rng.randint(60, 340), rng.randint(226, 255)
        parts.append(f'<ellipse cx="{x}" cy="{y}" rx="{rng.randint(8, 18)}" ry="6" fill="#8aa862"/>')
    parts += [f'<rect x="{x}" y="212" width="4" height="24" fill="#8d6e4a"/>' for x in range(44, 360, 40)]
    parts.append('<line x1="44" y1="218" x2="360" y2="218" stroke="#8d6e4a" stroke-width="2"/>')
    parts.append('<rect x="196" y="170" width="5" height="70" fill="#5d4037"/><rect x="166" y="160" width="66" height="34" fill="#fff" stroke="#d4145a" stroke-width="3"/>'
                 '<text x="199" y="182" font-family="Arial" font-size="12" font-weight="bold" fill="#d4145a" text-anchor="middle">FOR SALE</text>')
    return "".join(parts)


_EXTERIORS = {"house": _house, "condo": _condo, "townhome": _townhomes, "multi_family": _multi,
              "manufactured": _manufactured, "land": _land}


def exterior_svg(l: Listing) -> str:
    return _scene(l, _EXTERIORS[l.home_type](l, _rng(l, "building")))


def _room(wall: str, floor: str, inner: str, window_x: int = 250) -> str:
    return (f'{_SVG_OPEN}<rect width="400" height="300" fill="{wall}"/>'
            f'<polygon points="0,220 400,220 400,300 0,300" fill="{floor}"/>'
            f'<line x1="0" y1="220" x2="400" y2="220" stroke="#00000022" stroke-width="3"/>'
            f'<rect x="{window_x}" y="50" width="110" height="100" fill="#ffffff"/><rect x="{window_x + 6}" y="56" width="98" height="88" fill="#a9d2f0"/>'
            f'<path d="M{window_x + 6} 120 Q{window_x + 40} 100 {window_x + 104} 118 V144 H{window_x + 6} Z" fill="#8fbf7a"/>'
            f'<line x1="{window_x + 55}" y1="56" x2="{window_x + 55}" y2="144" stroke="#fff" stroke-width="4"/>{inner}</svg>')


def room_svg(l: Listing, n: int) -> str:
    """Photo n (1-4) of the gallery: living room, kitchen, bedroom, backyard."""
    rng = _rng(l, f"room{n}")
    wall, floor, sofa = rng.choice(_WALL), rng.choice(_FLOOR), rng.choice(_SOFA)
    if l.home_type == "land":
        return exterior_svg(l)
    if n == 1:   # living room
        inner = (f'<rect x="60" y="196" width="250" height="40" rx="6" fill="#00000018"/>'
                 f'<rect x="40" y="150" width="180" height="60" rx="14" fill="{sofa}"/><rect x="30" y="160" width="24" height="60" rx="8" fill="{sofa}"/>'
                 f'<rect x="206" y="160" width="24" height="60" rx="8" fill="{sofa}"/><rect x="56" y="140" width="70" height="34" rx="10" fill="{sofa}" opacity=".85"/>'
                 f'<rect x="130" y="140" width="70" height="34" rx="10" fill="{sofa}" opacity=".85"/>'
                 f'<rect x="90" y="236" width="120" height="12" rx="3" fill="#6d4c41"/><rect x="98" y="248" width="6" height="18" fill="#5d4037"/><rect x="196" y="248" width="6" height="18" fill="#5d4037"/>'
                 f'<rect x="70" y="60" width="90" height="60" fill="#fff" stroke="#8d6e63" stroke-width="4"/><path d="M76 112 L100 84 L120 104 L136 90 L154 112 Z" fill="{rng.choice(_BODY)}"/>'
                 f'<rect x="372" y="150" width="6" height="80" fill="#555"/><path d="M360 150 H390 L382 126 H368 Z" fill="#f3e5ab"/>')
    elif n == 2:   # kitchen
        cab = rng.choice(("#ffffff", "#dfe6e9", "#2f4858", "#6b8f71", "#c9b79c"))
        inner = (f'<rect x="0" y="40" width="240" height="60" fill="{cab}" stroke="#00000022"/>'
                 + "".join(f'<line x1="{x}" y1="40" x2="{x}" y2="100" stroke="#00000022"/>' for x in range(60, 240, 60))
                 + f'<rect x="0" y="150" width="400" height="70" fill="{cab}" stroke="#00000022"/><rect x="0" y="144" width="400" height="8" fill="#e0ded8"/>'
                 f'<rect x="110" y="196" width="200" height="60" fill="{cab}" stroke="#00000033"/><rect x="104" y="190" width="212" height="8" fill="#efece6"/>'
                 f'<circle cx="150" cy="74" r="0" fill="none"/><line x1="160" y1="0" x2="160" y2="120" stroke="#333"/><path d="M148 120 H172 L166 134 H154 Z" fill="#f0c36d"/>'
                 f'<line x1="260" y1="0" x2="260" y2="120" stroke="#333"/><path d="M248 120 H272 L266 134 H254 Z" fill="#f0c36d"/>'
                 f'<rect x="130" y="258" width="8" height="30" fill="#333"/><rect x="280" y="258" width="8" height="30" fill="#333"/>')
    elif n == 3:   # bedroom
        bed = rng.choice(("#ffffff", "#e8eaf6", "#f1f8e9", "#fff8e1"))
        inner = (f'<rect x="70" y="120" width="200" height="70" rx="6" fill="{sofa}"/>'
                 f'<rect x="60" y="180" width="220" height="60" rx="6" fill="{bed}" stroke="#00000022"/>'
                 f'<rect x="60" y="214" width="220" height="26" fill="{rng.choice(_SOFA)}" opacity=".8"/>'
                 f'<rect x="84" y="160" width="70" height="26" rx="10" fill="#fff" stroke="#00000018"/><rect x="186" y="160" width="70" height="26" rx="10" fill="#fff" stroke="#00000018"/>'
                 f'<rect x="14" y="180" width="40" height="50" fill="#8d6e63"/><rect x="286" y="180" width="40" height="50" fill="#8d6e63"/>'
                 f'<path d="M24 180 H44 L40 160 H28 Z" fill="#f3e5ab"/>')
    else:          # backyard
        return (f'{_SVG_OPEN}<rect width="400" height="300" fill="#bfe0f7"/>'
                f'<rect y="120" width="400" height="80" fill="{rng.choice(("#a1887f", "#b0bec5", "#d7ccc8"))}"/>'
                + "".join(f'<rect x="{x}" y="120" width="16" height="80" fill="#8d6e63" opacity=".25"/>' for x in range(0, 400, 32))
                + f'<rect y="196" width="400" height="104" fill="#7fb069"/><rect x="40" y="216" width="200" height="70" fill="#cfc6b8"/>'
                f'<rect x="70" y="236" width="40" height="26" fill="{sofa}"/><rect x="150" y="236" width="40" height="26" fill="{sofa}"/>'
                f'<circle cx="130" cy="236" r="18" fill="#ffffff" stroke="#999"/>{_tree(320, 250, 38, "socal" in l.city_obj.regions)}</svg>')
    return _room(wall, floor, inner, window_x=rng.choice((250, 270)))


PHOTO_COUNT = 5


def photo_svg(l: Listing, n: int) -> str:
    return exterior_svg(l) if n == 0 else room_svg(l, n)


def agent_svg(agent: Agent) -> str:
    rng = random.Random(f"agent:{agent.id}")
    bg, skin = rng.choice(_BG), rng.choice(_SKIN)
    hair = rng.choice(("#2b1d14", "#4a3426", "#1c1c1c", "#a0703c", "#d9b26f", "#6b4a2f"))
    shirt = rng.choice(("#1f4e79", "#37474f", "#7b1fa2", "#2e7d32", "#b23c17", "#455a64", "#ad1457"))
    long_hair = rng.random() < .5
    hair_shape = (f'<path d="M62 92 Q60 40 100 38 Q140 40 138 92 L138 120 Q130 84 100 80 Q70 84 62 120 Z" fill="{hair}"/>' if long_hair
                  else f'<path d="M66 78 Q66 40 100 40 Q134 40 134 78 Q122 60 100 60 Q78 60 66 78 Z" fill="{hair}"/>')
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 200 200" width="200" height="200">'
            f'<rect width="200" height="200" fill="{bg}"/>'
            f'<path d="M30 200 Q34 140 100 136 Q166 140 170 200 Z" fill="{shirt}"/>'
            f'<rect x="88" y="112" width="24" height="30" fill="{skin}"/>'
            f'<ellipse cx="100" cy="88" rx="34" ry="40" fill="{skin}"/>{hair_shape}'
            f'<circle cx="88" cy="90" r="3" fill="#333"/><circle cx="112" cy="90" r="3" fill="#333"/>'
            f'<path d="M90 108 Q100 116 110 108" stroke="#8d4b3b" stroke-width="3" fill="none" stroke-linecap="round"/></svg>')


# --- the static map beside the results ---------------------------------------------------------------

def map_svg(listings: list[Listing], width: int = 620, height: int = 720, water: str = "") -> str:
    """A static street map with a price pin per listing (decorative: the list beside it is what acts)."""
    rng = random.Random(f"map:{len(listings)}:{listings[0].zpid if listings else ''}:{water}")
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="100%" height="100%" preserveAspectRatio="xMidYMin slice" aria-hidden="true" focusable="false">',
             f'<rect width="{width}" height="{height}" fill="#f2efe9"/>']
    for _ in range(5):
        x, y = rng.randint(0, width - 120), rng.randint(0, height - 90)
        parts.append(f'<rect x="{x}" y="{y}" width="{rng.randint(60, 140)}" height="{rng.randint(40, 90)}" rx="14" fill="#cde6c3"/>')
    for x in range(rng.randint(10, 40), width, 46):
        parts.append(f'<line x1="{x}" y1="0" x2="{x + rng.randint(-20, 20)}" y2="{height}" stroke="#ffffff" stroke-width="5"/>')
    for y in range(rng.randint(10, 40), height, 42):
        parts.append(f'<line x1="0" y1="{y}" x2="{width}" y2="{y + rng.randint(-16, 16)}" stroke="#ffffff" stroke-width="5"/>')
    parts.append(f'<path d="M0 {height * .7} C{width * .3} {height * .55} {width * .55} {height * .8} {width} {height * .35}" stroke="#f6cf65" stroke-width="9" fill="none"/>')
    parts.append(f'<path d="M{width * .35} 0 C{width * .4} {height * .3} {width * .25} {height * .6} {width * .3} {height}" stroke="#fde293" stroke-width="7" fill="none"/>')
    if water == "w":
        parts.append(f'<path d="M0 0 H{width * .16} C{width * .22} {height * .3} {width * .1} {height * .6} {width * .18} {height} H0 Z" fill="#aad3df"/>')
    elif water == "e":
        parts.append(f'<path d="M{width} 0 H{width * .8} C{width * .74} {height * .4} {width * .9} {height * .7} {width * .82} {height} H{width} Z" fill="#aad3df"/>')
    elif water == "s":
        parts.append(f'<path d="M0 {height} V{height * .74} C{width * .3} {height * .68} {width * .7} {height * .8} {width} {height * .7} V{height} Z" fill="#aad3df"/>')
    elif water == "n":
        parts.append(f'<path d="M0 0 V{height * .14} C{width * .3} {height * .2} {width * .7} {height * .1} {width} {height * .18} V0 Z" fill="#aad3df"/>')
    if listings:
        lats = [l.lat for l in listings]
        lngs = [l.lng for l in listings]
        lat0, lat1, lng0, lng1 = min(lats), max(lats), min(lngs), max(lngs)
        span_lat, span_lng = max(lat1 - lat0, 0.02), max(lng1 - lng0, 0.02)
        for l in listings[:60]:
            # pins stay inside what a 1280x720 window shows of the map before scrolling
            x = 60 + (l.lng - lng0) / span_lng * (width - 120)
            y = 40 + (lat1 - l.lat) / span_lat * (height - 220)
            label = short_money(l.price)
            w = 10 + 7 * len(label)
            parts.append(f'<g transform="translate({x:.0f},{y:.0f})"><rect x="{-w / 2:.0f}" y="-11" width="{w}" height="20" rx="10" fill="#d4145a" stroke="#fff" stroke-width="1.5"/>'
                         f'<text x="0" y="4" font-family="Arial" font-size="11" font-weight="bold" fill="#fff" text-anchor="middle">{escape(label)}</text></g>')
    parts.append(f'<text x="{width - 8}" y="{height - 8}" font-family="Arial" font-size="10" fill="#777" text-anchor="end">Map data &#169; Zilloft</text>')
    parts.append("</svg>")
    return "".join(parts)
