"""HALO's plain JSON syntax from the seeds: one object, `{"action": "click", "bid": "12"}`, pixel
coordinates of the 1280x720 viewport (or "space": "norm1000").

`SYSTEM_PROMPT` describes it, `write` writes an action in it, `parse` reads one back.
"""

from __future__ import annotations

import json
from typing import Any

from halo.agent import actions as A
from halo.agent.repair import find_balanced, strip_code_fence
from halo.agent.syntax.common import (
    ParseErrorKind, _bid, _button, _first, _has_prose_around, _Invalid, _load_object, _milliseconds, _norm_name,
    _num, _number, _options, _pair, _pixel_point, _px, _short, _text,
)
from halo.agent.syntax.qwen import _tool_call_arguments, computer_use_action

SYSTEM_PROMPT = (
    "You are a web agent that completes tasks in a browser (viewport 1280x720 pixels).\n"
    "Reply with exactly one JSON object, the next action, and nothing else. Actions:\n"
    '{"action": "click", "bid": "12"}            click an element by its id\n'
    '{"action": "click", "x": 640, "y": 360}     click at a pixel (also "double_click", "right_click")\n'
    '{"action": "fill", "bid": "3", "text": "…"} replace the value of an input\n'
    '{"action": "select_option", "bid": "7", "options": ["…"]}\n'
    '{"action": "hover", "bid": "12"}\n'
    '{"action": "type", "text": "…", "press_enter": false}\n'
    '{"action": "press", "key": "Enter"}          key or chord, e.g. "Control+A"\n'
    '{"action": "scroll", "dx": 0, "dy": 400}     positive dy scrolls down\n'
    '{"action": "drag", "from": [x, y], "to": [x, y]}\n'
    '{"action": "goto", "url": "…"}  {"action": "back"}  {"action": "forward"}\n'
    '{"action": "wait", "ms": 1000}  {"action": "noop"}\n'
    '{"action": "send_msg_to_user", "text": "…"} final answer to the user (ends the task)\n'
    '{"action": "report_infeasible", "reason": "…"}'
)

# ---------------------------------------------------------------------------------- writer

def _json_object(action: A.Action, width: int, height: int) -> dict:
    match action:
        case A.ClickElement(bid=bid, button=b, click_count=c):
            name = "double_click" if c == 2 else ("right_click" if b == A.MouseButton.RIGHT else "click")
            return {"action": name, "bid": bid}
        case A.ClickAt(point=p, button=b, click_count=c):
            name = "double_click" if c == 2 else ("right_click" if b == A.MouseButton.RIGHT else "click")
            x, y = _px(p, width, height)
            return {"action": name, "x": x, "y": y}
        case A.Fill(bid=bid, text=t):
            return {"action": "fill", "bid": bid, "text": t}
        case A.SelectOption(bid=bid, values=v):
            return {"action": "select_option", "bid": bid, "options": list(v)}
        case A.Hover(bid=bid):
            return {"action": "hover", "bid": bid}
        case A.HoverAt(point=p):
            x, y = _px(p, width, height)
            return {"action": "hover", "x": x, "y": y}
        case A.TypeText(text=t, press_enter=enter):
            return {"action": "type", "text": t, "press_enter": enter}
        case A.KeyPress(keys=k):
            return {"action": "press", "key": k}
        case A.Scroll(delta_x=dx, delta_y=dy):
            return {"action": "scroll", "dx": _num(dx), "dy": _num(dy)}
        case A.Drag(from_=start, to=end):
            return {"action": "drag", "from": list(_px(start, width, height)), "to": list(_px(end, width, height))}
        case A.Goto(url=u):
            return {"action": "goto", "url": u}
        case A.GoBack():
            return {"action": "back"}
        case A.GoForward():
            return {"action": "forward"}
        case A.Wait(milliseconds=ms):
            return {"action": "wait", "ms": ms}
        case A.SendMessage(text=t):
            return {"action": "send_msg_to_user", "text": t}
        case A.ReportInfeasible(reason=r):
            return {"action": "report_infeasible", "reason": r}
        case A.Noop():
            return {"action": "noop"}
    raise TypeError(f"cannot write {type(action).__name__}")


def write(action: A.Action, width: int, height: int) -> str:
    return json.dumps(_json_object(action, width, height), ensure_ascii=False)


# ---------------------------------------------------------------------------------- parser

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


def parse(text: str, repairs: list[str], width: int, height: int) -> A.Action:
    body, fenced = strip_code_fence(text)
    if fenced:
        repairs.append("code_fence")
    span = find_balanced(body, "{")
    if span is None:
        raise _Invalid(ParseErrorKind.NO_ACTION, "no JSON object found")
    if _has_prose_around(body, *span):
        repairs.append("surrounding_prose")
    return json_action(_load_object(body[span[0]:], repairs), repairs, width, height)
