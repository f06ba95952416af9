"""The three output syntaxes a policy can be prompted for, and how actions are written in each.

- QWEN_COMPUTER_USE: Qwen3-VL's native GUI-agent format, a `computer_use` function called inside
  `<tool_call>...</tool_call>` with coordinates on Qwen's relative 0..1000 grid (both axes).
- JSON: HALO's plain JSON object from the seeds, `{"action": "click", "bid": "12"}`, pixel
  coordinates of the 1280x720 viewport.
- BROWSERGYM: BrowserGym's Python-call strings, `click("12")`, `fill("3", "text")`.

Each syntax is one module of `halo.agent.syntax` (system prompt, writer, parser). `format_action`
writes any HALO action in a syntax (used for the history shown in prompts and for round-trip
tests); the parser (`halo.agent.parse`) reads all three back.
"""

from __future__ import annotations

import enum

from halo.agent import actions as A
from halo.agent.syntax import browsergym, halo_json, qwen
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


SYNTAXES = {
    ActionFormat.QWEN_COMPUTER_USE: qwen,
    ActionFormat.JSON: halo_json,
    ActionFormat.BROWSERGYM: browsergym,
}

SYSTEM_PROMPTS = {fmt: syntax.SYSTEM_PROMPT for fmt, syntax in SYNTAXES.items()}


def format_action(action: A.Action, fmt: ActionFormat, width: int = 1280, height: int = 720) -> str:
    """The text a model following `fmt` would write for `action` (viewport size for coordinates)."""
    return SYNTAXES[fmt].write(action, width, height)
