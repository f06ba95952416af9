"""Small builders of pages and transitions for the reward core's unit tests.

Pages are written the way the env service renders them (AXTree lines `[bid] role "name" ...`);
`page()` turns those lines into the elements the env sends beside that text (PageState.elements),
which is what the core reads.
"""

from __future__ import annotations

import re
from typing import Any

from halo.agent import actions as A
from halo.agent.context import PageElement
from halo.tasks.registry import default_registry
from halo.reward.config import load_config
from halo.reward.pages import PageSnapshot
from halo.reward.shaping import Breakdown, Episode, score_transition
from halo.reward.transition import Transition

BASE = "http://127.0.0.1:8100/playground"


def line(bid: int | str, role: str, name: str = "", value: str = "", *, depth: int = 0, focused: bool = False,
         offscreen: bool = False) -> str:
    parts = [f"{'  ' * depth}[{bid}] {role}"]
    if name:
        parts.append(f'"{name}"')
    if value:
        parts.append(f'value="{value}"')
    if focused:
        parts.append("focused")
    if offscreen:
        parts.append("(offscreen)")
    return " ".join(parts)


# `  [12] button "Add to Cart" value="x" focused (offscreen)` (observe.ElementInfo.line)
_AX_LINE = re.compile(r'^(?P<indent> *)\[(?P<bid>[^\]]*)\] (?P<role>\S+)(?P<rest>.*)$')
_AX_VALUE = re.compile(r' value="(?P<value>.*)"$')


def elements_of(lines: tuple[str, ...]) -> tuple[PageElement, ...]:
    """The elements an AXTree text describes, as the env sends them (no boxes: not interactive)."""
    out: list[PageElement] = []
    for text in lines:
        m = _AX_LINE.match(text)
        if not m:
            continue
        rest = m["rest"]
        visible = not rest.endswith(" (offscreen)")
        rest = rest.removesuffix(" (offscreen)")
        focused = rest.endswith(" focused")
        rest = rest.removesuffix(" focused")
        value = ""
        vm = _AX_VALUE.search(rest)
        if vm:
            value, rest = vm["value"], rest[: vm.start()]
        name = rest.strip()
        if len(name) >= 2 and name.startswith('"') and name.endswith('"'):
            name = name[1:-1]
        out.append(PageElement(bid=m["bid"], role=m["role"], name=name, value=value, focused=focused, visible=visible,
                               interactive=False, depth=len(m["indent"]) // 2))
    return tuple(out)


def page(url: str = BASE + "/", *lines: str, state: dict[str, Any] | None = None, title: str = "",
         elements: tuple[PageElement, ...] = ()) -> PageSnapshot:
    return PageSnapshot(url=url, title=title, axtree="\n".join(lines), state=state, elements=elements or elements_of(lines))


def diff(updated: dict[str, Any] | None = None, added: dict[str, Any] | None = None) -> dict[str, Any]:
    """A /finish JSON with this initialfinaldiff."""
    return {"initialfinaldiff": {"added": added or {}, "deleted": {}, "updated": updated or {}}, "differences": {}}


class EpisodeDriver:
    """Feeds transitions to one episode, keeping the current page, like a trainer does."""

    def __init__(self, task_id: str, first: PageSnapshot, overrides: dict[str, float] | None = None) -> None:
        task = default_registry().get(task_id)
        self.episode = Episode.open("ep", task, load_config(), overrides or {}, now=0.0)
        self.page = first
        self.step_index = 0

    def step(self, action: A.Action | None, after: PageSnapshot, *, ok: bool = True, parsed: bool | None = None,
             env_failure: bool = False) -> Breakdown:
        self.step_index += 1
        t = Transition(
            step_index=self.step_index, action=action, action_parsed=action is not None if parsed is None else parsed,
            action_ok=ok, before=self.page, after=after, env_failure=env_failure,
        )
        result = score_transition(self.episode, t)
        if not env_failure:
            self.page = after
        return result
