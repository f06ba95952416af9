"""What the three action syntaxes share: the parse errors, the argument checks, the number writers.

Each syntax module (qwen, halo_json, browsergym) writes actions with `_num`/`_norm`/`_px` and reads
arguments back with the checks here; a check that fails raises `_Invalid` with its error kind,
which `halo.agent.parse.parse_action` turns into a `ParseError`.
"""

from __future__ import annotations

import enum
import math
import re
from typing import Any

from halo.agent import actions as A
from halo.agent.bounds import MAX_CLICK_COUNT
from halo.agent.repair import close_brackets, find_balanced, loads_lenient
from halo.v1 import policy_pb2 as ppb


class ParseErrorKind(enum.IntEnum):
    EMPTY = ppb.PARSE_ERROR_KIND_EMPTY
    NO_ACTION = ppb.PARSE_ERROR_KIND_NO_ACTION
    MALFORMED = ppb.PARSE_ERROR_KIND_MALFORMED
    UNKNOWN_ACTION = ppb.PARSE_ERROR_KIND_UNKNOWN_ACTION
    BAD_ARGUMENTS = ppb.PARSE_ERROR_KIND_BAD_ARGUMENTS


class _Invalid(Exception):
    def __init__(self, kind: ParseErrorKind, message: str) -> None:
        super().__init__(message)
        self.kind = kind


# ------------------------------------------------------------------------ argument helpers

def _bid(value: Any, repairs: list[str]) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise _Invalid(ParseErrorKind.BAD_ARGUMENTS, f"bid must be a string, got {_short(value)}")
    try:
        bid = str(value).strip()
    except ValueError:  # an int over Python's digit limit
        raise _Invalid(ParseErrorKind.BAD_ARGUMENTS, "bid must be a string, got a number too large to print") from None
    if bid.startswith("[") and bid.endswith("]"):  # copied from the AXTree's "[12]" notation
        bid = bid[1:-1].strip()
        repairs.append("bid_brackets")
    if not bid:
        raise _Invalid(ParseErrorKind.BAD_ARGUMENTS, "empty bid")
    return bid


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _Invalid(ParseErrorKind.BAD_ARGUMENTS, f"{what} must be a number, got {_short(value)}")
    try:
        number = float(value)
    except OverflowError:  # an int too large for a float
        number = math.inf
    if not math.isfinite(number):
        raise _Invalid(ParseErrorKind.BAD_ARGUMENTS, f"{what} must be a finite number, got {_short(value)}")
    return number


_UINT32_MAX = 2**32 - 1


def _milliseconds(value: Any, what: str, scale: float = 1.0) -> int:
    """A wait time (`value` * `scale` ms) as the proto's uint32 milliseconds."""
    ms = _number(value, what) * scale
    if not 0 <= ms <= _UINT32_MAX:  # also false for an overflow to inf
        raise _Invalid(ParseErrorKind.BAD_ARGUMENTS, f"{what} must be between 0 and {_UINT32_MAX} ms, got {_short(value)}")
    return round(ms)


def _click_count(value: Any) -> int:
    count = _number(value, "click_count")
    if count not in range(1, MAX_CLICK_COUNT + 1):
        raise _Invalid(ParseErrorKind.BAD_ARGUMENTS, f"click_count must be 1 to {MAX_CLICK_COUNT}, got {_short(value)}")
    return int(count)


def _short(value: Any, limit: int = 80) -> str:
    """repr() for error messages, cut (a huge number or string must not make a huge message)."""
    try:
        text = repr(value)
    except ValueError:  # an int over Python's digit limit (a hex literal in a BrowserGym call)
        return "a number too large to print"
    return text if len(text) <= limit else text[:limit] + "..."


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise _Invalid(ParseErrorKind.BAD_ARGUMENTS, f"{what} must be a string, got {_short(value)}")
    return value


def _pair(value: Any, what: str) -> tuple[float, float]:
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise _Invalid(ParseErrorKind.BAD_ARGUMENTS, f"{what} must be [x, y], got {_short(value)}")
    return _number(value[0], what), _number(value[1], what)


def _norm_point(value: Any, what: str = "coordinate") -> A.Point:
    x, y = _pair(value, what)
    if not (0 <= x <= 1000 and 0 <= y <= 1000):
        raise _Invalid(ParseErrorKind.BAD_ARGUMENTS, f"{what} {_short(value)} is outside the 0..1000 grid")
    return A.Point(x, y, A.CoordinateSpace.NORMALIZED_1000)


def _pixel_point(x: Any, y: Any, width: int, height: int, space: str = "") -> A.Point:
    px, py = _number(x, "x"), _number(y, "y")
    if space.lower() in ("norm1000", "normalized", "normalized_1000", "relative"):
        return _norm_point([px, py])
    if not (0 <= px <= width and 0 <= py <= height):
        raise _Invalid(ParseErrorKind.BAD_ARGUMENTS, f"point ({px:g}, {py:g}) is outside the {width}x{height} viewport")
    return A.Point(px, py, A.CoordinateSpace.PIXELS)


def _button(value: Any) -> A.MouseButton:
    try:
        return A.MouseButton[str(value or "left").upper()]
    except (KeyError, ValueError):  # ValueError: str() of an int over Python's digit limit
        raise _Invalid(ParseErrorKind.BAD_ARGUMENTS, f"unknown mouse button {_short(value)}") from None


def _options(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise _Invalid(ParseErrorKind.BAD_ARGUMENTS, f"options must be a string or a list of strings, got {_short(value)}")


def _first(args: dict[str, Any], *names: str) -> Any:
    for name in names:
        if name in args and args[name] is not None:
            return args[name]
    raise _Invalid(ParseErrorKind.BAD_ARGUMENTS, f"missing argument {names[0]!r}")


def _norm_name(name: Any) -> str:
    if not isinstance(name, str):
        raise _Invalid(ParseErrorKind.BAD_ARGUMENTS, f"action name must be a string, got {_short(name)}")
    return re.sub(r"[\s\-]+", "_", name.strip().lower())


def _load_object(fragment: str, repairs: list[str]) -> Any:
    span = find_balanced(fragment, "{")
    if span is None:
        raise _Invalid(ParseErrorKind.NO_ACTION, "no JSON object found")
    body = fragment[span[0]:span[1]]
    body, closed = close_brackets(body)
    if closed:
        repairs.append("closed_brackets")
    try:
        value, fixes = loads_lenient(body)
    except ValueError as exc:
        raise _Invalid(ParseErrorKind.MALFORMED, str(exc)) from None
    repairs.extend(fixes)
    return value


def _has_prose_around(text: str, start: int, end: int) -> bool:
    return bool(text[:start].strip() or text[end:].strip())


# -------------------------------------------------------------------------- number writers

def _num(value: float, digits: int = 2) -> float | int:
    # NaN and infinities are written as they are (a history may hold an action the env rejected)
    if not math.isfinite(value):
        return value
    value = round(value, digits)
    return int(value) if float(value).is_integer() else value


def _norm(point: A.Point, width: int, height: int) -> list[float | int]:
    if point.space == A.CoordinateSpace.NORMALIZED_1000:
        return [_num(point.x), _num(point.y)]
    return [_num(point.x / width * 1000, 0), _num(point.y / height * 1000, 0)]


def _px(point: A.Point, width: int, height: int) -> tuple[float | int, float | int]:
    x, y = point.to_pixels(width, height)
    return _num(x, 1), _num(y, 1)
