"""BrowserGym's syntax: Python-call strings, `click("12")`, `fill("3", "text")`, pixel coordinates.

`SYSTEM_PROMPT` lists the calls, `write` writes an action as one, `parse` reads one back.
"""

from __future__ import annotations

import ast
import json
import re
import warnings
from collections.abc import Callable

from halo.agent import actions as A
from halo.agent.repair import close_brackets, find_balanced, strip_code_fence
from halo.agent.syntax.common import (
    ParseErrorKind, _bid, _button, _has_prose_around, _Invalid, _milliseconds, _num, _number, _options, _pixel_point,
    _px, _short, _text,
)

SYSTEM_PROMPT = (
    "You are a web agent that completes tasks in a browser (viewport 1280x720 pixels).\n"
    "Reply with exactly one action, a Python-style call, and nothing else. Actions:\n"
    'click("12")  dblclick("12")  hover("12")  fill("3", "text")  select_option("7", ["a", "b"])\n'
    'press("3", "Enter")  keyboard_press("Control+A")  keyboard_type("text")\n'
    "scroll(0, 400)  mouse_click(640, 360)  mouse_dblclick(x, y)  mouse_move(x, y)\n"
    "mouse_drag_and_drop(x1, y1, x2, y2)  goto(\"url\")  go_back()  go_forward()  noop(1000)\n"
    'send_msg_to_user("final answer")  report_infeasible("reason")'
)

# ---------------------------------------------------------------------------------- writer

def _call(name: str, *args: object) -> str:
    return f"{name}({', '.join(json.dumps(a, ensure_ascii=False) for a in args)})"


def write(action: A.Action, width: int, height: int) -> str:
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


# ---------------------------------------------------------------------------------- parser

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


def parse(text: str, repairs: list[str], width: int, height: int) -> A.Action:
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
