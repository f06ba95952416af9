"""What a policy sees for one decision, as plain typed objects (no protobuf past the edges).

The gateway converts `halo.v1.PolicyInput` into a `PolicyContext`; trainers and the Tinker env
build one straight from an env observation. Prompt building, the embedded policy and the
critic all read this one type.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from halo.agent.actions import Action, action_from_proto, action_to_proto
from halo.v1 import common_pb2 as cpb
from halo.v1 import policy_pb2 as ppb

DEFAULT_HISTORY_STEPS = 5  # seeds: "screenshot + goal + last 5 actions" keeps a step at ~3-5K tokens


@dataclass(frozen=True)
class PageElement:
    """One element of the page as the env observed it (halo.v1.Element), addressed by its bid.

    The one element type: the policy reads it (prompt, embedded policy) and so does the reward
    service (novelty and loop keys, milestones, the element under a coordinate click).
    """

    bid: str
    role: str
    name: str = ""
    value: str = ""
    x: float = 0.0
    y: float = 0.0
    width: float = 0.0
    height: float = 0.0
    visible: bool = True
    interactive: bool = True
    focused: bool = False
    depth: int = 0                      # nesting depth in the flattened tree
    states: tuple[str, ...] = ()        # true ARIA states: "pressed", "checked", "selected", "expanded"

    @property
    def label(self) -> str:
        """How milestone `target` regexes see an element: role "name"."""
        return f'{self.role} "{self.name}"'

    @property
    def area(self) -> float:
        return self.width * self.height

    def contains(self, x: float, y: float) -> bool:
        return self.x <= x <= self.x + self.width and self.y <= y <= self.y + self.height


def element_to_proto(e: PageElement) -> cpb.Element:
    return cpb.Element(
        bid=e.bid, role=e.role, name=e.name, value=e.value, bbox=cpb.BoundingBox(x=e.x, y=e.y, width=e.width, height=e.height),
        visible=e.visible, interactive=e.interactive, focused=e.focused, depth=e.depth, states=e.states,
    )


def element_from_proto(e: cpb.Element) -> PageElement:
    return PageElement(
        bid=e.bid, role=e.role, name=e.name, value=e.value, x=e.bbox.x, y=e.bbox.y, width=e.bbox.width,
        height=e.bbox.height, visible=e.visible, interactive=e.interactive, focused=e.focused, depth=e.depth,
        states=tuple(e.states),
    )


@dataclass(frozen=True)
class PageView:
    """The observation part of a decision: screenshot, AXTree text, elements, URL."""

    screenshot: bytes = b""
    image_mime: str = "image/png"
    width: int = 1280
    height: int = 720
    axtree: str = ""
    elements: tuple[PageElement, ...] = ()
    url: str = ""
    title: str = ""
    last_action_error: str = ""
    step_index: int = 0
    #: the env's Observation this view was read from (page_from_proto): context_to_proto sends it on
    #: as it is instead of building the same message again, element by element
    message: cpb.Observation | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class PastStep:
    action: Action
    error: str = ""
    raw_text: str = ""
    #: the action's proto as it went to the env (raw text included), sent on again in later prompts'
    #: history instead of being converted once more
    message: cpb.Action | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class PolicyContext:
    goal: str
    page: PageView
    history: tuple[PastStep, ...] = field(default_factory=tuple)

    def recent_history(self, steps: int = DEFAULT_HISTORY_STEPS) -> tuple[PastStep, ...]:
        return self.history[-steps:] if steps > 0 else ()


def page_from_proto(obs: cpb.Observation) -> PageView:
    return PageView(
        screenshot=obs.screenshot,
        image_mime="image/jpeg" if obs.image_format == cpb.IMAGE_FORMAT_JPEG else "image/png",
        width=obs.width or 1280, height=obs.height or 720, axtree=obs.axtree,
        elements=tuple(element_from_proto(e) for e in obs.elements),
        url=obs.url, title=obs.title, last_action_error=obs.last_action_error, step_index=obs.step_index,
        message=obs,
    )


def context_from_proto(msg: ppb.PolicyInput) -> PolicyContext:
    """PolicyInput -> PolicyContext. Raises ActionConversionError for a malformed history action."""
    history = tuple(
        PastStep(action=action_from_proto(h.action), error=h.error, raw_text=h.action.raw_text)
        for h in msg.history if h.HasField("action")
    )
    return PolicyContext(goal=msg.goal or msg.observation.goal, page=page_from_proto(msg.observation), history=history)


def context_to_proto(ctx: PolicyContext) -> ppb.PolicyInput:
    page = ctx.page
    obs = page.message if page.message is not None else cpb.Observation(
        screenshot=page.screenshot,
        image_format=cpb.IMAGE_FORMAT_JPEG if page.image_mime == "image/jpeg" else cpb.IMAGE_FORMAT_PNG,
        width=page.width, height=page.height, axtree=page.axtree, url=page.url, title=page.title,
        last_action_error=page.last_action_error, step_index=page.step_index, goal=ctx.goal,
        elements=[element_to_proto(e) for e in page.elements],
    )
    return ppb.PolicyInput(
        goal=ctx.goal, observation=obs,
        history=[ppb.HistoryStep(action=h.message if h.message is not None else action_to_proto(h.action, h.raw_text), error=h.error)
                 for h in ctx.history],
    )
