"""Small builders of pages and transitions for the reward core's unit tests.

Pages are written the way the env service renders them (AXTree lines `[bid] role "name" ...`),
so the core sees in these tests exactly the text it sees in production.
"""

from __future__ import annotations

from typing import Any

from halo.agent import actions as A
from halo.tasks.registry import default_registry
from halo.reward.config import load_config
from halo.reward.pages import PageElement, PageSnapshot
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


def page(url: str = BASE + "/", *lines: str, state: dict[str, Any] | None = None, title: str = "",
         elements: tuple[PageElement, ...] = ()) -> PageSnapshot:
    return PageSnapshot(url=url, title=title, axtree="\n".join(lines), state=state, structured=elements)


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
