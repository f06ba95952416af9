"""Oracles: scripted solutions of replica tasks, made only of what an agent could do.

An oracle is a list of steps that name page elements the way an agent sees them (ARIA role and
accessible name from the observation's element list), resolved to bids on the live observation
at each step, and executed through the env service like any agent action. No hidden endpoints,
no goto to state-changing URLs.

    ORACLES = {"omnizon-3": [FillIn(Target("searchbox", "Search"), "headphones", enter=True),
                             Click(Target("link", contains="Headphones")), ...]}
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, Union

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


@dataclass(frozen=True)
class Click:
    target: Target


@dataclass(frozen=True)
class FillIn:
    target: Target
    text: str
    enter: bool = False   # press Enter afterwards (submits search boxes)


@dataclass(frozen=True)
class Choose:
    target: Target
    values: tuple[str, ...]


@dataclass(frozen=True)
class Press:
    keys: str


@dataclass(frozen=True)
class ScrollBy:
    delta_y: float


@dataclass(frozen=True)
class DragTo:
    """Drag one element onto another (mouse down at its centre, move, release at the target's centre)."""

    source: Target
    target: Target


@dataclass(frozen=True)
class Say:
    """Send the final message to the user (ends the episode)."""

    text: str


OracleStep = Union[Click, FillIn, Choose, Press, ScrollBy, DragTo, Say]


def _centre(el: ElementLike) -> A.Point:
    box = el.bbox  # proto Element (halo.v1.Element.bbox)
    return A.Point(box.x + box.width / 2, box.y + box.height / 2)


def resolve(step: OracleStep, elements: Sequence[ElementLike]) -> list[A.Action]:
    """The env actions for one oracle step on the current page."""
    match step:
        case Click(target=t):
            return [A.ClickElement(t.find(elements).bid)]
        case FillIn(target=t, text=text, enter=enter):
            bid = t.find(elements).bid
            return [A.Fill(bid, text), A.KeyPress("Enter")] if enter else [A.Fill(bid, text)]
        case Choose(target=t, values=values):
            return [A.SelectOption(t.find(elements).bid, values)]
        case Press(keys=keys):
            return [A.KeyPress(keys)]
        case ScrollBy(delta_y=dy):
            return [A.Scroll(0, dy)]
        case DragTo(source=source, target=target):
            return [A.Drag(_centre(source.find(elements)), _centre(target.find(elements)))]
        case Say(text=text):
            return [A.SendMessage(text)]
    raise TypeError(f"not an oracle step: {step!r}")
