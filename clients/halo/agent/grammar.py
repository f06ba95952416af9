"""Regular expressions of the actions a policy may write, for samplers that constrain their output
(vLLM's structured outputs: SampleRequest.output_regex).

- `action_regex(fmt)`: the grammar of one output syntax, every action HALO's writer
  (`halo.agent.formats.format_action`) can produce in it, with the writer's exact spacing and
  key order. Qwen3-VL's computer_use syntax only (the one the VLM trainers prompt for).
- `choice_regex(fmt, actions)`: exactly these actions, written in `fmt` (a fixed action menu).

The expressions use the subset of regex syntax that Python's `re`, xgrammar, llguidance and
outlines agree on (literals, classes, alternation, `*` / `+` / `?` / `{m,n}`; no look-around, no
backreferences), so a test can check them with `re.fullmatch` and vLLM can compile them.
"""

from __future__ import annotations

from collections.abc import Iterable

from halo.agent import actions as A
from halo.agent.formats import ActionFormat, format_action

_SPECIAL = set(".^$*+?{}[]\\|()/")


def escape(text: str) -> str:
    """`text` as a regex literal (newlines and tabs as their escapes, specials backslashed)."""
    out = []
    for ch in text:
        if ch in _SPECIAL:
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        else:
            out.append(ch)
    return "".join(out)


#: a JSON string: any character but a quote, a backslash or a control character, or an escape
_STRING = r'"([^"\\\n\r\t]|\\["\\/bfnrt])*"'
_INT = r"-?(0|[1-9][0-9]{0,5})"
_NUMBER = _INT + r"(\.[0-9]{1,3})?"
_GRID = r"(1000|[1-9][0-9]{0,2}|0)"               # Qwen's 0..1000 grid (the writer rounds to integers)
_POINT = rf"\[{_GRID}, {_GRID}\]"
_BID = r'"[0-9A-Za-z_-]{1,16}"'


def _strings() -> str:
    return rf"\[{_STRING}(, {_STRING})*\]"


def _qwen_arguments() -> list[str]:
    """The `arguments` object of each computer_use action, as `halo.agent.syntax.qwen.arguments` writes it."""
    return [
        rf'"(left_click|right_click|middle_click|double_click|triple_click|mouse_move)", "coordinate": {_POINT}',
        rf'"left_click_drag", "start_coordinate": {_POINT}, "coordinate": {_POINT}',
        rf'"(type|answer)", "text": {_STRING}',
        rf'"key", "keys": {_strings()}',
        rf'"(scroll|hscroll)", "pixels": {_NUMBER}(, "coordinate": {_POINT})?',
        rf'"wait", "time": {_NUMBER}',
        rf'"terminate", "status": "failure"(, "text": {_STRING})?',
        rf'"(click_element|hover_element)", "bid": {_BID}',
        rf'"fill", "bid": {_BID}, "text": {_STRING}',
        rf'"select_option", "bid": {_BID}, "options": {_strings()}',
        rf'"goto", "url": {_STRING}',
        r'"(back|forward)"',
    ]


def action_regex(fmt: ActionFormat = ActionFormat.QWEN_COMPUTER_USE) -> str:
    """The grammar of `fmt`'s actions as one regex (the whole completion must match it)."""
    if fmt != ActionFormat.QWEN_COMPUTER_USE:
        raise ValueError(f"no action grammar for {fmt.name} (only QWEN_COMPUTER_USE; use choice_regex for a fixed menu)")
    head = escape('<tool_call>\n{"name": "computer_use", "arguments": {"action": ')
    tail = escape("}}\n</tool_call>")
    return head + "(" + "|".join(_qwen_arguments()) + ")" + tail


def choice_regex(fmt: ActionFormat, actions: Iterable[A.Action], width: int = 1280, height: int = 720) -> str:
    """Exactly one of `actions`, written in `fmt` (coordinates for a width x height viewport)."""
    texts = list(dict.fromkeys(format_action(a, fmt, width, height) for a in actions))
    if not texts:
        raise ValueError("choice_regex needs at least one action")
    return "(" + "|".join(escape(t) for t in texts) + ")"
