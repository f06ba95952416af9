"""The three output syntaxes a policy can be prompted for, and how actions are written in each.

- QWEN_COMPUTER_USE: Qwen3-VL's native GUI-agent format, a `computer_use` function called inside
  `<tool_call>...</tool_call>` with coordinates on Qwen's relative 0..1000 grid (both axes).
- JSON: HALO's plain JSON object from the seeds, `{"action": "click", "bid": "12"}`, pixel
  coordinates of the 1280x720 viewport.
- BROWSERGYM: BrowserGym's Python-call strings, `click("12")`, `fill("3", "text")`.

`format_action` writes any HALO action in a syntax (used for the history shown in prompts and
for round-trip tests); the parser (`halo.agent.parse`) reads all three back.
"""

from __future__ import annotations

import enum
import json
import math

from halo.agent import actions as A
from halo.v1 import policy_pb2 as ppb


class ActionFormat(enum.IntEnum):
    QWEN_COMPUTER_USE = ppb.ACTION_FORMAT_QWEN_COMPUTER_USE
    JSON = ppb.ACTION_FORMAT_JSON
    BROWSERGYM = ppb.ACTION_FORMAT_BROWSERGYM

    @classmethod
    def from_name(cls, name: str) -> "ActionFormat":
        aliases = {"qwen": cls.QWEN_COMPUTER_USE, "qwen_computer_use": cls.QWEN_COMPUTER_USE,
                   "computer_use": cls.QWEN_COMPUTER_USE, "json": cls.JSON, "browsergym": cls.BROWSERGYM}
        try:
            return aliases[name.lower()]
        except KeyError:
            raise ValueError(f"unknown action format {name!r} (one of: {', '.join(aliases)})") from None


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

_QWEN_SYSTEM = (
    "You are a web agent that completes tasks in a browser.\n\n"
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
    + json.dumps(COMPUTER_USE_TOOL)
    + "\n</tools>\n\nFor each function call, return a json object with function name and arguments "
    "within <tool_call></tool_call> XML tags:\n<tool_call>\n"
    '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>\n\n'
    "Call exactly one function per turn."
)

_JSON_SYSTEM = (
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

_BROWSERGYM_SYSTEM = (
    "You are a web agent that completes tasks in a browser (viewport 1280x720 pixels).\n"
    "Reply with exactly one action, a Python-style call, and nothing else. Actions:\n"
    'click("12")  dblclick("12")  hover("12")  fill("3", "text")  select_option("7", ["a", "b"])\n'
    'press("3", "Enter")  keyboard_press("Control+A")  keyboard_type("text")\n'
    "scroll(0, 400)  mouse_click(640, 360)  mouse_dblclick(x, y)  mouse_move(x, y)\n"
    "mouse_drag_and_drop(x1, y1, x2, y2)  goto(\"url\")  go_back()  go_forward()  noop(1000)\n"
    'send_msg_to_user("final answer")  report_infeasible("reason")'
)

SYSTEM_PROMPTS = {
    ActionFormat.QWEN_COMPUTER_USE: _QWEN_SYSTEM,
    ActionFormat.JSON: _JSON_SYSTEM,
    ActionFormat.BROWSERGYM: _BROWSERGYM_SYSTEM,
}

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


# --------------------------------------------------------------------------------- writers

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


_CLICK_NAMES = {(A.MouseButton.LEFT, 1): "left_click", (A.MouseButton.LEFT, 2): "double_click",
                (A.MouseButton.LEFT, 3): "triple_click", (A.MouseButton.RIGHT, 1): "right_click",
                (A.MouseButton.MIDDLE, 1): "middle_click"}


def _qwen_arguments(action: A.Action, width: int, height: int) -> dict:
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


def _call(name: str, *args: object) -> str:
    return f"{name}({', '.join(json.dumps(a, ensure_ascii=False) for a in args)})"


def _browsergym_call(action: A.Action, width: int, height: int) -> str:
    match action:
        case A.ClickElement(bid=bid, button=b, click_count=c):
            if c == 2:
                return _call("dblclick", bid)
            return _call("click", bid) if b == A.MouseButton.LEFT else _call("click", bid, b.name.lower())
        case A.ClickAt(point=p, button=b, click_count=c):
            x, y = _px(p, width, height)
            if c == 2:
                return _call("mouse_dblclick", x, y)
            return _call("mouse_click", x, y) if b == A.MouseButton.LEFT else _call("mouse_click", x, y, b.name.lower())
        case A.Fill(bid=bid, text=t):
            return _call("fill", bid, t)
        case A.SelectOption(bid=bid, values=v):
            return _call("select_option", bid, v[0] if len(v) == 1 else list(v))
        case A.Hover(bid=bid):
            return _call("hover", bid)
        case A.HoverAt(point=p):
            return _call("mouse_move", *_px(p, width, height))
        case A.TypeText(text=t, press_enter=enter):
            return _call("keyboard_type", t + ("\n" if enter else ""))
        case A.KeyPress(keys=k):
            return _call("keyboard_press", k)
        case A.Scroll(delta_x=dx, delta_y=dy):
            return _call("scroll", _num(dx), _num(dy))
        case A.Drag(from_=start, to=end):
            return _call("mouse_drag_and_drop", *_px(start, width, height), *_px(end, width, height))
        case A.Goto(url=u):
            return _call("goto", u)
        case A.GoBack():
            return _call("go_back")
        case A.GoForward():
            return _call("go_forward")
        case A.Wait(milliseconds=ms):
            return _call("noop", ms)
        case A.SendMessage(text=t):
            return _call("send_msg_to_user", t)
        case A.ReportInfeasible(reason=r):
            return _call("report_infeasible", r)
        case A.Noop():
            return _call("noop")
    raise TypeError(f"cannot write {type(action).__name__}")


def format_action(action: A.Action, fmt: ActionFormat, width: int = 1280, height: int = 720) -> str:
    """The text a model following `fmt` would write for `action` (viewport size for coordinates)."""
    if fmt == ActionFormat.QWEN_COMPUTER_USE:
        payload = {"name": "computer_use", "arguments": _qwen_arguments(action, width, height)}
        return f"<tool_call>\n{json.dumps(payload, ensure_ascii=False)}\n</tool_call>"
    if fmt == ActionFormat.JSON:
        return json.dumps(_json_object(action, width, height), ensure_ascii=False)
    return _browsergym_call(action, width, height)
