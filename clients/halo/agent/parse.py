"""Model output -> HALO action, for all three output syntaxes, with safe repairs and typed errors.

    parsed = parse_action(text, ActionFormat.QWEN_COMPUTER_USE)
    if parsed.valid: env.step(parsed.action) else: reward the invalid action (parsed.error.kind)

The expected syntax is tried first; when it finds no action syntax at all, the other two are
tried (a model prompted for JSON that answers `click("12")` still produced a well-formed action;
`parsed.format` says which syntax matched). Whatever cannot be repaired safely is an error, never
a guess: validity is a training signal.
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import json
import math
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from halo.agent import actions as A
from halo.agent.formats import ActionFormat, qwen_keys_to_playwright
from halo.agent.repair import close_brackets, find_balanced, loads_lenient, strip_code_fence
from halo.v1 import policy_pb2 as ppb


class ParseErrorKind(enum.IntEnum):
    EMPTY = ppb.PARSE_ERROR_KIND_EMPTY
    NO_ACTION = ppb.PARSE_ERROR_KIND_NO_ACTION
    MALFORMED = ppb.PARSE_ERROR_KIND_MALFORMED
    UNKNOWN_ACTION = ppb.PARSE_ERROR_KIND_UNKNOWN_ACTION
    BAD_ARGUMENTS = ppb.PARSE_ERROR_KIND_BAD_ARGUMENTS


@dataclass(frozen=True)
class ParseError:
    kind: ParseErrorKind
    message: str

    def __str__(self) -> str:
        return f"{self.kind.name.lower()}: {self.message}"


@dataclass(frozen=True)
class ParsedAction:
    action: A.Action | None
    error: ParseError | None = None
    format: ActionFormat | None = None
    repairs: tuple[str, ...] = ()

    @property
    def valid(self) -> bool:
        return self.action is not None

    @property
    def repaired(self) -> bool:
        return bool(self.repairs)


class _Invalid(Exception):
    def __init__(self, kind: ParseErrorKind, message: str) -> None:
        super().__init__(message)
        self.kind = kind


# ---------------------------------------------------------------------------- argument helpers

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
    if count not in range(1, A.MAX_CLICK_COUNT + 1):
        raise _Invalid(ParseErrorKind.BAD_ARGUMENTS, f"click_count must be 1 to {A.MAX_CLICK_COUNT}, got {_short(value)}")
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


# ------------------------------------------------------------------ Qwen3-VL computer_use

_QWEN_CLICKS = {"left_click": (A.MouseButton.LEFT, 1), "click": (A.MouseButton.LEFT, 1),
                "double_click": (A.MouseButton.LEFT, 2), "triple_click": (A.MouseButton.LEFT, 3),
                "right_click": (A.MouseButton.RIGHT, 1), "middle_click": (A.MouseButton.MIDDLE, 1)}


def computer_use_action(args: dict[str, Any], repairs: list[str]) -> A.Action:
    """The `arguments` of a computer_use call -> action (coordinates on the 0..1000 grid)."""
    name = _norm_name(_first(args, "action"))
    if name in _QWEN_CLICKS:
        button, count = _QWEN_CLICKS[name]
        if "coordinate" not in args and "bid" in args:
            return A.ClickElement(_bid(args["bid"], repairs), button, count)
        return A.ClickAt(_norm_point(_first(args, "coordinate")), button, count)
    match name:
        case "mouse_move":
            return A.HoverAt(_norm_point(_first(args, "coordinate")))
        case "left_click_drag":
            return A.Drag(_norm_point(_first(args, "start_coordinate"), "start_coordinate"), _norm_point(_first(args, "coordinate")))
        case "type":
            text = _text(_first(args, "text"), "text")
            return A.TypeText(text[:-1], press_enter=True) if text.endswith("\n") else A.TypeText(text)
        case "key":
            keys = _first(args, "keys", "key")
            if isinstance(keys, str):
                keys = [k for k in re.split(r"[+\s]+", keys) if k]
            if not isinstance(keys, list) or not keys or not all(isinstance(k, str) for k in keys):
                raise _Invalid(ParseErrorKind.BAD_ARGUMENTS, f"keys must be a list of key names, got {_short(keys)}")
            return A.KeyPress(qwen_keys_to_playwright(keys))
        case "scroll" | "hscroll":
            pixels = _number(_first(args, "pixels"), "pixels")
            at = _norm_point(args["coordinate"]) if args.get("coordinate") is not None else None
            # Qwen: positive pixels scroll up (or left); HALO: positive deltas scroll down (right).
            return A.Scroll(delta_x=-pixels, at=at) if name == "hscroll" else A.Scroll(delta_y=-pixels, at=at)
        case "wait":
            ms = _milliseconds(args.get("time", 1), "time", scale=1000)
            return A.Noop() if ms == 0 else A.Wait(ms)
        case "answer":
            return A.SendMessage(_text(_first(args, "text"), "text"))
        case "terminate":
            status = str(args.get("status", "success")).lower()
            text = args.get("text") or ""
            if status == "failure":
                return A.ReportInfeasible(_text(text, "text"))
            if status != "success":
                raise _Invalid(ParseErrorKind.BAD_ARGUMENTS, f"terminate status must be success or failure, got {_short(status)}")
            return A.SendMessage(_text(text, "text") or "Task completed.")
        case "click_element":
            count = _click_count(args.get("click_count", 1))
            return A.ClickElement(_bid(_first(args, "bid"), repairs), _button(args.get("button")), count)
        case "fill":
            return A.Fill(_bid(_first(args, "bid"), repairs), _text(_first(args, "text", "value"), "text"))
        case "select_option":
            return A.SelectOption(_bid(_first(args, "bid"), repairs), _options(_first(args, "options", "option", "values")))
        case "hover_element":
            return A.Hover(_bid(_first(args, "bid"), repairs))
        case "goto":
            return A.Goto(_text(_first(args, "url"), "url"))
        case "back":
            return A.GoBack()
        case "forward":
            return A.GoForward()
    raise _Invalid(ParseErrorKind.UNKNOWN_ACTION, f"unknown computer_use action {_short(name)}")


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


def _tool_call_arguments(obj: Any) -> dict[str, Any]:
    if not isinstance(obj, dict) or "name" not in obj:
        raise _Invalid(ParseErrorKind.MALFORMED, 'a tool call needs {"name": ..., "arguments": {...}}')
    if obj["name"] != "computer_use":
        raise _Invalid(ParseErrorKind.UNKNOWN_ACTION, f"unknown function {_short(obj['name'])} (only computer_use)")
    args = obj.get("arguments", {})
    if isinstance(args, str):  # OpenAI-style tool calls carry arguments as a JSON string
        try:
            args = json.loads(args)
        except (ValueError, RecursionError):  # JSONDecodeError, integers over Python's digit limit, deep nesting
            raise _Invalid(ParseErrorKind.MALFORMED, "arguments is not a JSON object") from None
    if not isinstance(args, dict):
        raise _Invalid(ParseErrorKind.BAD_ARGUMENTS, "arguments must be an object")
    return args


def _parse_qwen(text: str, repairs: list[str], width: int, height: int) -> A.Action:
    start = text.find("<tool_call>")
    if start < 0:
        if '"computer_use"' not in text and "'computer_use'" not in text:
            raise _Invalid(ParseErrorKind.NO_ACTION, "no <tool_call> found")
        body, fenced = strip_code_fence(text)
        if fenced:
            repairs.append("code_fence")
        repairs.append("missing_tool_call_tags")
    else:
        body = text[start + len("<tool_call>"):]
        end = body.find("</tool_call>")
        if end < 0:
            repairs.append("missing_close_tag")
        else:
            body = body[:end]
        if "```" in body:
            body, _ = strip_code_fence(body)
            repairs.append("code_fence")
    return computer_use_action(_tool_call_arguments(_load_object(body, repairs)), repairs)


# --------------------------------------------------------------------------- HALO JSON

_JSON_ALIASES = {
    "click": "click", "left_click": "click", "tap": "click", "click_element": "click",
    "double_click": "double_click", "dblclick": "double_click", "right_click": "right_click",
    "fill": "fill", "input": "fill", "fill_text": "fill", "type_into": "fill",
    "type": "type", "type_text": "type", "keyboard_type": "type",
    "press": "press", "key": "press", "key_press": "press", "keypress": "press", "keyboard_press": "press",
    "press_key": "press", "hotkey": "press",
    "scroll": "scroll", "drag": "drag", "drag_and_drop": "drag",
    "goto": "goto", "go_to": "goto", "navigate": "goto", "open_url": "goto", "visit": "goto",
    "back": "back", "go_back": "back", "forward": "forward", "go_forward": "forward",
    "wait": "wait", "sleep": "wait",
    "send_msg_to_user": "send", "send_message": "send", "message": "send", "answer": "send", "respond": "send",
    "reply": "send", "report_infeasible": "infeasible", "infeasible": "infeasible",
    "select_option": "select", "select": "select", "hover": "hover", "mouse_move": "hover",
    "noop": "noop", "no_op": "noop", "none": "noop", "do_nothing": "noop",
}
_SCROLL_DIRECTIONS = {"down": (0, 1), "up": (0, -1), "right": (1, 0), "left": (-1, 0)}


def _json_point(args: dict[str, Any], width: int, height: int) -> A.Point | None:
    space = str(args.get("space", ""))
    if "coordinate" in args:
        x, y = _pair(args["coordinate"], "coordinate")
        return _pixel_point(x, y, width, height, space)
    if "x" in args or "y" in args:
        return _pixel_point(_first(args, "x"), _first(args, "y"), width, height, space)
    return None


def json_action(obj: Any, repairs: list[str], width: int = 1280, height: int = 720) -> A.Action:
    """A HALO JSON action object -> action (pixel coordinates unless "space": "norm1000")."""
    if not isinstance(obj, dict):
        raise _Invalid(ParseErrorKind.MALFORMED, f"expected a JSON object, got {type(obj).__name__}")
    if obj.get("name") == "computer_use" and "arguments" in obj:
        return computer_use_action(_tool_call_arguments(obj), repairs)
    raw_name = _norm_name(_first(obj, "action", "type", "name"))
    name = _JSON_ALIASES.get(raw_name)
    if name is None:
        raise _Invalid(ParseErrorKind.UNKNOWN_ACTION, f"unknown action {_short(raw_name)}")
    text_of = lambda: _text(_first(obj, "text", "value", "message", "content", "answer"), "text")  # noqa: E731
    if name in ("click", "double_click", "right_click"):
        button = A.MouseButton.RIGHT if name == "right_click" else _button(obj.get("button"))
        count = 2 if name == "double_click" else 1
        if obj.get("bid") is not None:
            return A.ClickElement(_bid(obj["bid"], repairs), button, count)
        point = _json_point(obj, width, height)
        if point is None:
            raise _Invalid(ParseErrorKind.BAD_ARGUMENTS, "click needs a bid or x/y")
        return A.ClickAt(point, button, count)
    match name:
        case "fill":
            return A.Fill(_bid(_first(obj, "bid"), repairs), text_of())
        case "type":
            if obj.get("bid") is not None:
                return A.Fill(_bid(obj["bid"], repairs), text_of())
            return A.TypeText(text_of(), press_enter=bool(obj.get("press_enter", False)))
        case "press":
            keys = _first(obj, "key", "keys")
            if isinstance(keys, list) and keys and all(isinstance(k, str) for k in keys):
                keys = "+".join(keys)
            return A.KeyPress(_text(keys, "key"))
        case "scroll":
            if "direction" in obj:
                direction = str(obj["direction"]).lower()
                if direction not in _SCROLL_DIRECTIONS:
                    raise _Invalid(ParseErrorKind.BAD_ARGUMENTS, f"unknown scroll direction {_short(direction)}")
                amount = _number(obj.get("amount", 500), "amount")
                sx, sy = _SCROLL_DIRECTIONS[direction]
                return A.Scroll(delta_x=sx * amount, delta_y=sy * amount)
            return A.Scroll(delta_x=_number(obj.get("dx", obj.get("delta_x", 0)), "dx"),
                            delta_y=_number(obj.get("dy", obj.get("delta_y", 0)), "dy"))
        case "drag":
            fx, fy = _pair(_first(obj, "from", "start"), "from")
            tx, ty = _pair(_first(obj, "to", "end"), "to")
            return A.Drag(_pixel_point(fx, fy, width, height), _pixel_point(tx, ty, width, height))
        case "goto":
            return A.Goto(_text(_first(obj, "url"), "url"))
        case "back":
            return A.GoBack()
        case "forward":
            return A.GoForward()
        case "wait":
            if "seconds" in obj:
                return A.Wait(_milliseconds(obj["seconds"], "seconds", scale=1000))
            return A.Wait(_milliseconds(obj.get("ms", obj.get("milliseconds", 1000)), "ms"))
        case "send":
            return A.SendMessage(text_of())
        case "infeasible":
            return A.ReportInfeasible(_text(obj.get("reason", obj.get("text", "")), "reason"))
        case "select":
            return A.SelectOption(_bid(_first(obj, "bid"), repairs), _options(_first(obj, "options", "values", "option", "value")))
        case "hover":
            if obj.get("bid") is not None:
                return A.Hover(_bid(obj["bid"], repairs))
            point = _json_point(obj, width, height)
            if point is None:
                raise _Invalid(ParseErrorKind.BAD_ARGUMENTS, "hover needs a bid or x/y")
            return A.HoverAt(point)
        case "noop":
            return A.Noop()
    raise AssertionError(name)


def _has_prose_around(text: str, start: int, end: int) -> bool:
    return bool(text[:start].strip() or text[end:].strip())


def _parse_json(text: str, repairs: list[str], width: int, height: int) -> A.Action:
    body, fenced = strip_code_fence(text)
    if fenced:
        repairs.append("code_fence")
    span = find_balanced(body, "{")
    if span is None:
        raise _Invalid(ParseErrorKind.NO_ACTION, "no JSON object found")
    if _has_prose_around(body, *span):
        repairs.append("surrounding_prose")
    return json_action(_load_object(body[span[0]:], repairs), repairs, width, height)


# ------------------------------------------------------------------------------ BrowserGym

def _bg_click(args, kw, r, w, h):
    return A.ClickElement(_bid(args[0], r), _button(args[1] if len(args) > 1 else kw.get("button")))


def _bg_mouse_click(args, kw, r, w, h, count=1):
    button = _button(args[2] if len(args) > 2 else kw.get("button"))
    return A.ClickAt(_pixel_point(args[0], args[1], w, h), button, count)


def _bg_noop(args, kw, r, w, h):
    ms = args[0] if args else kw.get("wait_ms")
    return A.Noop() if ms is None else A.Wait(_milliseconds(ms, "wait_ms"))


_BG_CALLS: dict[str, tuple[int, Callable[..., A.Action]]] = {
    # name: (required positional args, builder(args, kwargs, repairs, width, height))
    "click": (1, _bg_click),
    "dblclick": (1, lambda a, k, r, w, h: A.ClickElement(_bid(a[0], r), _button(a[1] if len(a) > 1 else k.get("button")), 2)),
    "hover": (1, lambda a, k, r, w, h: A.Hover(_bid(a[0], r))),
    "focus": (1, lambda a, k, r, w, h: A.ClickElement(_bid(a[0], r))),
    "fill": (2, lambda a, k, r, w, h: A.Fill(_bid(a[0], r), _text(a[1], "value"))),
    "clear": (1, lambda a, k, r, w, h: A.Fill(_bid(a[0], r), "")),
    "select_option": (2, lambda a, k, r, w, h: A.SelectOption(_bid(a[0], r), _options(a[1]))),
    "press": (2, lambda a, k, r, w, h: A.KeyPress(_text(a[1], "key_comb"))),
    "keyboard_press": (1, lambda a, k, r, w, h: A.KeyPress(_text(a[0], "key"))),
    "keyboard_type": (1, lambda a, k, r, w, h: (A.TypeText(a[0][:-1], True) if _text(a[0], "text").endswith("\n") else A.TypeText(a[0]))),
    "keyboard_insert_text": (1, lambda a, k, r, w, h: A.TypeText(_text(a[0], "text"))),
    "scroll": (2, lambda a, k, r, w, h: A.Scroll(_number(a[0], "delta_x"), _number(a[1], "delta_y"))),
    "mouse_click": (2, _bg_mouse_click),
    "mouse_dblclick": (2, lambda a, k, r, w, h: _bg_mouse_click(a, k, r, w, h, count=2)),
    "mouse_move": (2, lambda a, k, r, w, h: A.HoverAt(_pixel_point(a[0], a[1], w, h))),
    "mouse_drag_and_drop": (4, lambda a, k, r, w, h: A.Drag(_pixel_point(a[0], a[1], w, h), _pixel_point(a[2], a[3], w, h))),
    "goto": (1, lambda a, k, r, w, h: A.Goto(_text(a[0], "url"))),
    "go_back": (0, lambda a, k, r, w, h: A.GoBack()),
    "go_forward": (0, lambda a, k, r, w, h: A.GoForward()),
    "noop": (0, _bg_noop),
    "send_msg_to_user": (1, lambda a, k, r, w, h: A.SendMessage(_text(a[0], "text"))),
    "report_infeasible": (1, lambda a, k, r, w, h: A.ReportInfeasible(_text(a[0], "reason"))),
}
# BrowserGym actions HALO's action space does not have (tabs, uploads, raw mouse up/down).
_BG_UNSUPPORTED = {"new_tab", "tab_close", "tab_focus", "upload_file", "mouse_down", "mouse_up",
                   "mouse_upload_file", "drag_and_drop", "keyboard_down", "keyboard_up"}
_BG_CALL_START = re.compile(r"\b([a-z_]+)\s*\(")


def _parse_browsergym(text: str, repairs: list[str], width: int, height: int) -> A.Action:
    body, fenced = strip_code_fence(text)
    if fenced:
        repairs.append("code_fence")
    for match in _BG_CALL_START.finditer(body):
        name = match.group(1)
        if name in _BG_UNSUPPORTED:
            raise _Invalid(ParseErrorKind.UNKNOWN_ACTION, f"BrowserGym action {_short(name)} is not in HALO's action space")
        if name in _BG_CALLS:
            break
    else:
        raise _Invalid(ParseErrorKind.NO_ACTION, "no BrowserGym call found")
    span = find_balanced(body, "(", match.end() - 1)
    if span is None:  # a closer that does not match, e.g. click("1", ])
        raise _Invalid(ParseErrorKind.MALFORMED, f"{name}(...) has unbalanced brackets")
    call, closed = close_brackets(body[match.start():span[1]])
    if closed:
        repairs.append("closed_brackets")
    if _has_prose_around(body, match.start(), span[1]):
        repairs.append("surrounding_prose")
    try:
        with warnings.catch_warnings():  # model output must not print SyntaxWarnings (invalid escapes) to the log
            warnings.simplefilter("ignore")
            node = ast.parse(call.strip(), mode="eval").body
        if not isinstance(node, ast.Call):
            raise ValueError("not a call")
        args = [ast.literal_eval(a) for a in node.args]
        kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg}
    except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError) as exc:
        # TypeError: an unhashable set member or dict key, e.g. click({1, []})
        raise _Invalid(ParseErrorKind.MALFORMED, f"{name}(...) is not a call with literal arguments: {exc}") from None
    required, build = _BG_CALLS[name]
    if len(args) < required:
        raise _Invalid(ParseErrorKind.BAD_ARGUMENTS, f"{name} needs {required} positional arguments, got {len(args)}")
    return build(args, kwargs, repairs, width, height)


def _check_strings(action: A.Action) -> A.Action:
    """Every string must be valid Unicode: a JSON escape like "\\ud800" decodes to a lone surrogate,
    which protobuf (UTF-8) cannot carry."""
    for f in dataclasses.fields(action):
        value = getattr(action, f.name)
        for text in value if isinstance(value, tuple) else (value,):
            if isinstance(text, str):
                try:
                    text.encode("utf-8")
                except UnicodeEncodeError:
                    raise _Invalid(ParseErrorKind.BAD_ARGUMENTS, f"{f.name.rstrip('_')} is not valid Unicode (lone surrogate)") from None
    return action


_PARSERS = {
    ActionFormat.QWEN_COMPUTER_USE: _parse_qwen,
    ActionFormat.JSON: _parse_json,
    ActionFormat.BROWSERGYM: _parse_browsergym,
}


def parse_action(
    text: str, expected: ActionFormat = ActionFormat.QWEN_COMPUTER_USE, width: int = 1280, height: int = 720,
) -> ParsedAction:
    """Parse one completion. Never raises: failures come back as `ParsedAction.error`."""
    if not text or not text.strip():
        return ParsedAction(None, ParseError(ParseErrorKind.EMPTY, "the completion is empty"))
    order = [expected, *[f for f in _PARSERS if f != expected]]
    first_error: ParseError | None = None
    for fmt in order:
        repairs: list[str] = []
        try:
            action = _check_strings(_PARSERS[fmt](text, repairs, width, height))
        except _Invalid as exc:
            error = ParseError(exc.kind, str(exc))
            if exc.kind != ParseErrorKind.NO_ACTION:
                return ParsedAction(None, error, fmt, tuple(repairs))
            first_error = first_error or error
            continue
        return ParsedAction(action, None, fmt, tuple(dict.fromkeys(repairs)))
    assert first_error is not None
    return ParsedAction(None, ParseError(ParseErrorKind.NO_ACTION, f"no action found in any known syntax ({first_error.message})"))
