"""The bounds of every action's inputs: the one place that says how large, how many and how far.

An action outside its bounds is malformed input, never something to try: the env service refuses
it with INVALID_ARGUMENT before the browser sees it (the session stays open and usable), and the
action parser refuses it as a BAD_ARGUMENTS parse error, so a policy's parsed action is always
within bounds. Every action within bounds finishes far inside the env's timeouts on an idle
machine, so an action that still runs out of time (the stalled-action rule: an environment
failure) says the machine or the browser was slow, never that the input was too large.

What the page decides (an unknown element id, a point outside this viewport, a refused URL, an
empty key or option list) is not a bound: it comes back to the agent as the step's action error.
The table of bounds is in docs/reference/env.md ("Bounds of an action's inputs").
"""

from __future__ import annotations

import math

from halo.agent import actions as A

#: Longest value one `fill` sets: a long message or post body is a few thousand characters. The
#: fill itself is fast (a megabyte in half a second), but every later keystroke into a field is
#: slower the longer its value: typing 1,024 characters into a replica's text field took 4 s empty,
#: 12-15 s holding 16 KiB and 23 s holding 64 KiB on 2 cores, against a 25 s step budget.
MAX_FILL_CHARS = 8_192
#: Longest text one `type_text` types. Every character is a key down / press / up the page handles,
#: so the step budget grows with the text (the env's ExecLimits.type_key_allowance_ms): typing the
#: longest into a field holding MAX_FILL_CHARS took 2 to 13 s (the slowest at a load of 22) on 2
#: cores, against its 40 s budget. `fill` sets longer values at once.
MAX_TYPE_CHARS = 512
#: Longest `key_press`: one key or chord in Playwright syntax ("Control+Shift+ArrowDown" is 23).
MAX_KEYS_CHARS = 64
#: Longest element id: ids are the decimal numbers of the observation's elements.
MAX_BID_CHARS = 32
#: Most options one `select_option` chooses (a multiple <select>), and the longest one's text.
MAX_SELECT_VALUES = 100
MAX_OPTION_CHARS = 1_024
#: Most clicks one action asks for: single, double, triple (select a paragraph); 0 means 1. More
#: is no gesture a person makes, and hundreds would hold the browser for seconds.
MAX_CLICK_COUNT = 3
#: Largest pixel coordinate: no viewport is wider or taller (Chromium's largest texture). Whether
#: a point inside this bound is inside the session's viewport is the page's to say.
MAX_PIXEL_COORDINATE = 16_384.0
#: The normalized space's grid (Qwen3-VL's 0..1000 on both axes).
MAX_NORMALIZED_COORDINATE = 1000.0
#: Largest scroll per axis, in pixels: far beyond any page's length, and far below what wedges
#: Chromium's input pipeline (a wheel of ~1e308 px leaves every later event of the page unanswered).
MAX_SCROLL_PX = 1_000_000.0
#: Longest `wait` one action may ask for; the env waits at most its configured `max_wait_ms`
#: (5 s by default) of it.
MAX_WAIT_MS = 60_000
#: Longest URL a `goto` may ask for (browsers accept megabytes; no site page needs more, and the
#: URL comes back in every observation).
MAX_URL_CHARS = 8_192
#: Longest final answer (`send_message` text, `report_infeasible` reason): it comes back in GetState.
MAX_MESSAGE_CHARS = 20_000


class ActionOutOfBounds(ValueError):
    """An action input outside its bounds; the message names the field, its size and the bound."""


def _text(field: str, value: str, limit: int) -> None:
    if len(value) > limit:
        raise ActionOutOfBounds(f"{field} is {len(value):,} characters; at most {limit:,}")


def _number(field: str, value: float, low: float, high: float) -> None:
    if not (math.isfinite(value) and low <= value <= high):
        raise ActionOutOfBounds(f"{field} is {value:g}; it must be a finite number from {low:g} to {high:g}")


def _point(field: str, point: A.Point) -> None:
    high = MAX_NORMALIZED_COORDINATE if point.space == A.CoordinateSpace.NORMALIZED_1000 else MAX_PIXEL_COORDINATE
    _number(f"{field}.x", point.x, 0.0, high)
    _number(f"{field}.y", point.y, 0.0, high)


def _clicks(field: str, count: int) -> None:
    if not 0 <= count <= MAX_CLICK_COUNT:
        raise ActionOutOfBounds(f"{field} is {count}; it must be 1 to {MAX_CLICK_COUNT} (0 means 1)")


def check(action: A.Action) -> None:
    """Raise ActionOutOfBounds when an input of `action` is outside its bound (see the constants)."""
    kind = A.kind_of(action)
    match action:
        case A.ClickAt(point=point, click_count=count):
            _point(f"{kind}.point", point)
            _clicks(f"{kind}.click_count", count)
        case A.ClickElement(bid=bid, click_count=count):
            _text(f"{kind}.bid", bid, MAX_BID_CHARS)
            _clicks(f"{kind}.click_count", count)
        case A.Fill(bid=bid, text=text):
            _text(f"{kind}.bid", bid, MAX_BID_CHARS)
            _text(f"{kind}.text", text, MAX_FILL_CHARS)
        case A.SelectOption(bid=bid, values=values):
            _text(f"{kind}.bid", bid, MAX_BID_CHARS)
            if len(values) > MAX_SELECT_VALUES:
                raise ActionOutOfBounds(f"{kind}.values has {len(values):,} values; at most {MAX_SELECT_VALUES}")
            for i, value in enumerate(values):
                _text(f"{kind}.values[{i}]", value, MAX_OPTION_CHARS)
        case A.Hover(bid=bid):
            _text(f"{kind}.bid", bid, MAX_BID_CHARS)
        case A.HoverAt(point=point):
            _point(f"{kind}.point", point)
        case A.TypeText(text=text):
            _text(f"{kind}.text", text, MAX_TYPE_CHARS)
        case A.KeyPress(keys=keys):
            _text(f"{kind}.keys", keys, MAX_KEYS_CHARS)
        case A.Scroll(delta_x=dx, delta_y=dy, at=at):
            _number(f"{kind}.delta_x", dx, -MAX_SCROLL_PX, MAX_SCROLL_PX)
            _number(f"{kind}.delta_y", dy, -MAX_SCROLL_PX, MAX_SCROLL_PX)
            if at is not None:
                _point(f"{kind}.at", at)
        case A.Drag(from_=start, to=end):
            _point(f"{kind}.from", start)
            _point(f"{kind}.to", end)
        case A.Goto(url=url):
            _text(f"{kind}.url", url, MAX_URL_CHARS)
        case A.Wait(milliseconds=ms):
            _number(f"{kind}.milliseconds", ms, 0, MAX_WAIT_MS)
        case A.SendMessage(text=text):
            _text(f"{kind}.text", text, MAX_MESSAGE_CHARS)
        case A.ReportInfeasible(reason=reason):
            _text(f"{kind}.reason", reason, MAX_MESSAGE_CHARS)
