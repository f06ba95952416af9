"""One transition (before page, action, after page) and what its action did, in plain Python."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

from halo.agent import actions as A
from halo.agent.context import PageElement
from halo.reward.pages import PageSnapshot

#: The env's viewport; coordinate actions in Qwen's 0..1000 space are scaled to it.
VIEWPORT = (1280, 720)
#: Coordinate clicks that hit no known element are compared on this pixel grid for loop detection,
#: so a model that clicks (500, 300) and then (502, 301) is seen to repeat itself.
CLICK_GRID_PX = 8


@dataclass(frozen=True, eq=False)
class Transition:
    step_index: int
    action: A.Action | None          # None when the model output did not parse
    action_parsed: bool
    action_ok: bool
    before: PageSnapshot
    after: PageSnapshot
    done: bool = False
    env_failure: bool = False

    @property
    def valid(self) -> bool:
        return self.action_parsed and self.action is not None and self.action_ok

    @cached_property
    def facts(self) -> "ActionFacts | None":
        return ActionFacts.of(self.action, self.before) if self.action is not None else None


@dataclass(frozen=True)
class ActionFacts:
    """What an action did, resolved on the page it was taken on."""

    kind: str                       # proto oneof name: click_element, fill, ...
    target: PageElement | None      # the element acted on (bid, point under the cursor, or focus)
    text: str                       # text filled / typed / selected
    signature: str                  # identity for loop detection

    @classmethod
    def of(cls, action: A.Action, page: PageSnapshot) -> "ActionFacts":
        kind = A.kind_of(action)
        target: PageElement | None = None
        point: tuple[float, float] | None = None
        bid = getattr(action, "bid", None)
        if bid is not None:
            target = page.element(bid)
        elif isinstance(action, (A.ClickAt, A.HoverAt)):
            x, y = action.point.to_pixels(*VIEWPORT)
            if math.isfinite(x) and math.isfinite(y):   # NaN/inf is on no page (the env made it an action error)
                point = (x, y)
                target = page.element_at(x, y)
        elif isinstance(action, A.TypeText):
            target = page.focused_element()
        text = {
            A.Fill: lambda a: a.text, A.TypeText: lambda a: a.text, A.SelectOption: lambda a: " ".join(a.values),
            A.SendMessage: lambda a: a.text, A.Goto: lambda a: a.url, A.KeyPress: lambda a: a.keys,
        }.get(type(action), lambda a: "")(action)
        return cls(kind, target, text, _signature(action, kind, target, point))


def _signature(action: A.Action, kind: str, target: PageElement | None, point: tuple[float, float] | None) -> str:
    clicks = f"b{int(action.button)}x{action.click_count}" if isinstance(action, (A.ClickAt, A.ClickElement)) else ""
    # The same element is the same action whether it was named by bid or hit by coordinates.
    if target is not None and isinstance(action, (A.ClickAt, A.ClickElement, A.Hover, A.HoverAt)):
        verb = "hover" if isinstance(action, (A.Hover, A.HoverAt)) else "click"
        return f"{verb}({target.bid}|{target.role}|{target.name}|{clicks})"
    if point is not None:
        gx, gy = (round(c / CLICK_GRID_PX) for c in point)
        return f"{kind}@{gx},{gy}|{clicks}"
    return A.describe(action)
