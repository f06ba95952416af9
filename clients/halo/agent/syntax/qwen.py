"""Qwen3-VL's native GUI-agent syntax: a `computer_use` function called inside
`<tool_call>...</tool_call>`, coordinates on Qwen's relative 0..1000 grid (both axes).

`SYSTEM_PROMPT` offers the tool, `write` writes an action in it, `parse` reads one back.
"""

from __future__ import annotations

import json
import re
from typing import Any

from halo.agent import actions as A
from halo.agent.repair import strip_code_fence
from halo.agent.syntax.common import (
    ParseErrorKind, _bid, _button, _click_count, _first, _Invalid, _load_object, _milliseconds, _norm, _norm_name,
    _norm_point, _num, _number, _options, _short, _text,
)

# Qwen3-VL's computer_use tool, described for a browser viewport; extra browser actions
# (goto/back/forward) and element-id actions are offered next to the pointer ones because the
# observation carries an AXTree with bids.
COMPUTER_USE_TOOL = {
    "type": "function",
    "function": {
        "name": "computer_use",
        "description": (
            "Use a mouse and keyboard to interact with a web browser, and take screenshots.\n"
            "* The screen's resolution is 1000x1000 (relative coordinates: x and y go from 0 to 1000 "
            "whatever the real size of the page).\n"
            "* Click on the centre of elements; do not click on their edges.\n"
            "* Elements of the accessibility tree can also be addressed by their id (bid)."
        ),
        "parameters": {
            "type": "object",
            "required": ["action"],
            "properties": {
                "action": {
                    "type": "string",
                    "enum": [
                        "key", "type", "mouse_move", "left_click", "left_click_drag", "right_click",
                        "middle_click", "double_click", "triple_click", "scroll", "hscroll", "wait",
                        "terminate", "answer", "click_element", "fill", "select_option", "hover_element",
                        "goto", "back", "forward",
                    ],
                    "description": (
                        "* `key`: press keys in order and release in reverse (e.g. [\"ctrl\", \"a\"]).\n"
                        "* `type`: type a string of text into the focused element.\n"
                        "* `mouse_move`: move the cursor to `coordinate`.\n"
                        "* `left_click` / `right_click` / `middle_click` / `double_click` / `triple_click`: click at `coordinate`.\n"
                        "* `left_click_drag`: drag from `start_coordinate` to `coordinate`.\n"
                        "* `scroll` / `hscroll`: scroll by `pixels` (positive: up / left; negative: down / right).\n"
                        "* `wait`: wait `time` seconds.\n"
                        "* `answer`: send the final answer `text` to the user (ends the task).\n"
                        "* `terminate`: end the task with `status` success or failure (failure = infeasible).\n"
                        "* `click_element` / `hover_element`: act on the element `bid`.\n"
                        "* `fill`: replace the value of element `bid` with `text`.\n"
                        "* `select_option`: choose `options` of the <select> element `bid`.\n"
                        "* `goto`: open `url`. `back` / `forward`: browser history."
                    ),
                },
                "coordinate": {"type": "array", "description": "(x, y) on the 0..1000 grid"},
                "start_coordinate": {"type": "array", "description": "drag start (x, y) on the 0..1000 grid"},
                "keys": {"type": "array", "description": "keys for `key`"},
                "text": {"type": "string", "description": "text for `type`, `fill`, `answer`"},
                "pixels": {"type": "number", "description": "scroll amount"},
                "time": {"type": "number", "description": "seconds for `wait`"},
                "status": {"type": "string", "enum": ["success", "failure"]},
                "bid": {"type": "string", "description": "element id from the accessibility tree"},
                "options": {"type": "array", "description": "option labels or values for `select_option`"},
                "url": {"type": "string", "description": "URL for `goto`"},
            },
        },
    },
}

SYSTEM_PROMPT = (
    "You are a web agent that completes tasks in a browser.\n\n"
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
    + json.dumps(COMPUTER_USE_TOOL)
    + "\n</tools>\n\nFor each function call, return a json object with function name and arguments "
    "within <tool_call></tool_call> XML tags:\n<tool_call>\n"
    '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>\n\n'
    "Call exactly one function per turn."
)

# Playwright key names <-> the short names Qwen3-VL was trained with.
QWEN_KEY_NAMES = {
    "ctrl": "Control", "control": "Control", "alt": "Alt", "shift": "Shift", "cmd": "Meta", "meta": "Meta",
    "super": "Meta", "win": "Meta", "enter": "Enter", "return": "Enter", "esc": "Escape", "escape": "Escape",
    "tab": "Tab", "backspace": "Backspace", "delete": "Delete", "del": "Delete", "space": "Space",
    "up": "ArrowUp", "down": "ArrowDown", "left": "ArrowLeft", "right": "ArrowRight",
    "arrowup": "ArrowUp", "arrowdown": "ArrowDown", "arrowleft": "ArrowLeft", "arrowright": "ArrowRight",
    "pageup": "PageUp", "pagedown": "PageDown", "page_up": "PageUp", "page_down": "PageDown",
    "home": "Home", "end": "End", "insert": "Insert",
}
_PLAYWRIGHT_TO_QWEN = {"Control": "ctrl", "Alt": "alt", "Shift": "shift", "Meta": "cmd", "Enter": "enter",
                       "Escape": "esc", "ArrowUp": "up", "ArrowDown": "down", "ArrowLeft": "left",
                       "ArrowRight": "right", "PageUp": "pageup", "PageDown": "pagedown"}


def qwen_keys_to_playwright(keys: list[str]) -> str:
    out = []
    for key in keys:
        name = QWEN_KEY_NAMES.get(key.lower().replace(" ", ""))
        if name is None:
            name = key.upper() if len(key) == 1 and out else (key if len(key) == 1 else key[:1].upper() + key[1:])
        out.append(name)
    return "+".join(out)


def playwright_keys_to_qwen(chord: str) -> list[str]:
    return [_PLAYWRIGHT_TO_QWEN.get(k, k.lower()) for k in chord.split("+") if k]


# ---------------------------------------------------------------------------------- writer

_CLICK_NAMES = {(A.MouseButton.LEFT, 1): "left_click", (A.MouseButton.LEFT, 2): "double_click",
                (A.MouseButton.LEFT, 3): "triple_click", (A.MouseButton.RIGHT, 1): "right_click",
                (A.MouseButton.MIDDLE, 1): "middle_click"}


def arguments(action: A.Action, width: int, height: int) -> dict:
    match action:
        case A.ClickAt(point=p, button=b, click_count=c):
            return {"action": _CLICK_NAMES.get((b, c), "left_click"), "coordinate": _norm(p, width, height)}
        case A.HoverAt(point=p):
            return {"action": "mouse_move", "coordinate": _norm(p, width, height)}
        case A.Drag(from_=start, to=end):
            return {"action": "left_click_drag", "start_coordinate": _norm(start, width, height),
                    "coordinate": _norm(end, width, height)}
        case A.TypeText(text=t, press_enter=enter):
            return {"action": "type", "text": t + ("\n" if enter else "")}
        case A.KeyPress(keys=k):
            return {"action": "key", "keys": playwright_keys_to_qwen(k)}
        case A.Scroll(delta_x=dx, delta_y=dy, at=at):
            args = {"action": "hscroll", "pixels": _num(-dx)} if dx and not dy else {"action": "scroll", "pixels": _num(-dy)}
            if at is not None:
                args["coordinate"] = _norm(at, width, height)
            return args
        case A.Wait(milliseconds=ms):
            return {"action": "wait", "time": _num(ms / 1000)}
        case A.SendMessage(text=t):
            return {"action": "answer", "text": t}
        case A.ReportInfeasible(reason=r):
            return {"action": "terminate", "status": "failure", **({"text": r} if r else {})}
        case A.ClickElement(bid=bid, button=b, click_count=c):
            args = {"action": "click_element", "bid": bid}
            if b != A.MouseButton.LEFT:
                args["button"] = b.name.lower()
            if c != 1:
                args["click_count"] = c
            return args
        case A.Fill(bid=bid, text=t):
            return {"action": "fill", "bid": bid, "text": t}
        case A.SelectOption(bid=bid, values=v):
            return {"action": "select_option", "bid": bid, "options": list(v)}
        case A.Hover(bid=bid):
            return {"action": "hover_element", "bid": bid}
        case A.Goto(url=u):
            return {"action": "goto", "url": u}
        case A.GoBack():
            return {"action": "back"}
        case A.GoForward():
            return {"action": "forward"}
        case A.Noop():
            return {"action": "wait", "time": 0}
    raise TypeError(f"cannot write {type(action).__name__}")


def write(action: A.Action, width: int, height: int) -> str:
    payload = {"name": "computer_use", "arguments": arguments(action, width, height)}
    return f"<tool_call>\n{json.dumps(payload, ensure_ascii=False)}\n</tool_call>"


# ---------------------------------------------------------------------------------- parser

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


def parse(text: str, repairs: list[str], width: int, height: int) -> A.Action:
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
