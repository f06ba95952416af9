"""Oracles: scripted solutions of replica tasks, written in the agent's own action vocabulary.

An oracle step is a `halo.agent.actions` action — the same types the env service executes and a
policy emits — in which page elements are named the way an agent sees them: a `Target` (ARIA
role and accessible name from the observation's element list) stands where the action takes a
bid, or a point (a Drag's ends). `resolve` swaps each Target for the live page's bid or element
centre at each step, and the action runs through the env service like any agent action. No
hidden endpoints, no goto to state-changing URLs.

    ORACLES = {"omnizon-3": [A.Fill(Target("searchbox", "Search"), "headphones"), A.KeyPress("Enter"),
                             A.ClickElement(Target("link", contains="Headphones")), ...]}
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from halo.agent import actions as A


class ElementLike(Protocol):
    """What oracles need of an element: halo.v1.Element satisfies it."""

    bid: str
    role: str
    name: str
    bbox: Any


@dataclass(frozen=True)
class Target:
    """An element by role and name: exact `name`, or a case-insensitive substring `contains`; `nth` match."""

    role: str | None = None
    name: str | None = None
    contains: str | None = None
    nth: int = 0

    def matches(self, el: ElementLike) -> bool:
        if self.role is not None and el.role != self.role:
            return False
        if self.name is not None and el.name != self.name:
            return False
        if self.contains is not None and self.contains.lower() not in el.name.lower():
            return False
        return True

    def find(self, elements: Sequence[ElementLike]) -> ElementLike:
        found = [el for el in elements if self.matches(el)]
        if len(found) <= self.nth:
            raise LookupError(f"oracle target {self} not on the page ({len(found)} matches)")
        return found[self.nth]


#: An agent action whose element fields (a bid, or a Drag's points) may hold a `Target`.
OracleStep = A.Action

#: Named wrong attempts of one task: label ("wrong date") -> steps that must score 0.
WrongAttempts = dict[str, list[OracleStep]]


def _centre(el: ElementLike) -> A.Point:
    box = el.bbox  # proto Element (halo.v1.Element.bbox)
    return A.Point(box.x + box.width / 2, box.y + box.height / 2)


def resolve(step: OracleStep, elements: Sequence[ElementLike]) -> A.Action:
    """The env action for one oracle step on the current page: every Target replaced by the
    matching element's bid (for bid fields) or centre point (for point fields)."""
    if not dataclasses.is_dataclass(step) or type(step) not in A.ACTION_KIND:
        raise TypeError(f"not an oracle step: {step!r}")
    changes: dict[str, Any] = {}
    for field in dataclasses.fields(step):
        value = getattr(step, field.name)
        if isinstance(value, Target):
            element = value.find(elements)
            changes[field.name] = element.bid if field.name == "bid" else _centre(element)
    return dataclasses.replace(step, **changes) if changes else step
