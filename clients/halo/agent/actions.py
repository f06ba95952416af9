"""The action space as plain, typed Python objects, and their protobuf conversion.

The env core, the action parser, the gateway and the trainers all speak these dataclasses;
only the gRPC glue converts them to and from `halo.v1.Action`. Field names match the proto
fields one to one, so the conversion is mechanical.
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass
from typing import Union

from halo.v1 import common_pb2 as pb


class CoordinateSpace(enum.IntEnum):
    PIXELS = pb.COORDINATE_SPACE_PIXELS
    NORMALIZED_1000 = pb.COORDINATE_SPACE_NORMALIZED_1000


class MouseButton(enum.IntEnum):
    LEFT = pb.MOUSE_BUTTON_LEFT
    RIGHT = pb.MOUSE_BUTTON_RIGHT
    MIDDLE = pb.MOUSE_BUTTON_MIDDLE


@dataclass(frozen=True)
class Point:
    x: float
    y: float
    space: CoordinateSpace = CoordinateSpace.PIXELS

    def to_pixels(self, width: int, height: int) -> tuple[float, float]:
        if self.space == CoordinateSpace.NORMALIZED_1000:
            return self.x / 1000.0 * width, self.y / 1000.0 * height
        return self.x, self.y


@dataclass(frozen=True)
class ClickAt:
    point: Point
    button: MouseButton = MouseButton.LEFT
    click_count: int = 1


@dataclass(frozen=True)
class ClickElement:
    bid: str
    button: MouseButton = MouseButton.LEFT
    click_count: int = 1


@dataclass(frozen=True)
class Fill:
    bid: str
    text: str


@dataclass(frozen=True)
class SelectOption:
    bid: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class Hover:
    bid: str


@dataclass(frozen=True)
class HoverAt:
    point: Point


@dataclass(frozen=True)
class TypeText:
    text: str
    press_enter: bool = False


@dataclass(frozen=True)
class KeyPress:
    keys: str


@dataclass(frozen=True)
class Scroll:
    delta_x: float = 0.0
    delta_y: float = 0.0
    at: Point | None = None


@dataclass(frozen=True)
class Drag:
    from_: Point  # `from` is a Python keyword; the proto field is `from`
    to: Point


@dataclass(frozen=True)
class Goto:
    url: str


@dataclass(frozen=True)
class GoBack:
    pass


@dataclass(frozen=True)
class GoForward:
    pass


@dataclass(frozen=True)
class Wait:
    milliseconds: int = 1000


@dataclass(frozen=True)
class SendMessage:
    text: str


@dataclass(frozen=True)
class ReportInfeasible:
    reason: str = ""


@dataclass(frozen=True)
class Noop:
    pass


Action = Union[
    ClickAt, ClickElement, Fill, SelectOption, Hover, HoverAt, TypeText, KeyPress, Scroll, Drag,
    Goto, GoBack, GoForward, Wait, SendMessage, ReportInfeasible, Noop,
]

# proto oneof field name <-> dataclass
ACTION_TYPES: dict[str, type] = {
    "click_at": ClickAt,
    "click_element": ClickElement,
    "fill": Fill,
    "select_option": SelectOption,
    "hover": Hover,
    "hover_at": HoverAt,
    "type_text": TypeText,
    "key_press": KeyPress,
    "scroll": Scroll,
    "drag": Drag,
    "goto": Goto,
    "go_back": GoBack,
    "go_forward": GoForward,
    "wait": Wait,
    "send_message": SendMessage,
    "report_infeasible": ReportInfeasible,
    "noop": Noop,
}
ACTION_KIND: dict[type, str] = {cls: name for name, cls in ACTION_TYPES.items()}

# Actions that end the episode (REAL's convention: the message to the user is the answer).
TERMINAL_ACTIONS = (SendMessage, ReportInfeasible)


class ActionConversionError(ValueError):
    """A proto Action that cannot be understood (no kind set, bad enum values)."""


def kind_of(action: Action) -> str:
    return ACTION_KIND[type(action)]


def _proto_field(name: str) -> str:
    return "from" if name == "from_" else name


def _point_from_proto(msg: pb.Point) -> Point:
    space = msg.space or pb.COORDINATE_SPACE_PIXELS
    try:
        return Point(x=msg.x, y=msg.y, space=CoordinateSpace(space))
    except ValueError as exc:
        raise ActionConversionError(f"unknown coordinate space {space}") from exc


def action_from_proto(msg: pb.Action) -> Action:
    kind = msg.WhichOneof("kind")
    if kind is None:
        raise ActionConversionError("action has no kind set (one of: " + ", ".join(ACTION_TYPES) + ")")
    cls = ACTION_TYPES[kind]
    body = getattr(msg, kind)
    kwargs = {}
    for field in dataclasses.fields(cls):
        name = _proto_field(field.name)
        value = getattr(body, name)
        if field.type in ("Point", "Point | None"):
            if field.type == "Point | None" and not body.HasField(name):
                value = None
            else:
                value = _point_from_proto(value)
        elif field.name == "button":
            try:
                value = MouseButton(value or pb.MOUSE_BUTTON_LEFT)
            except ValueError as exc:
                raise ActionConversionError(f"unknown mouse button {value}") from exc
        elif field.name == "click_count":
            value = value or 1
        elif field.name == "values":
            value = tuple(value)
        kwargs[field.name] = value
    return cls(**kwargs)


def _point_to_proto(point: Point) -> pb.Point:
    return pb.Point(x=point.x, y=point.y, space=int(point.space))


def action_to_proto(action: Action, raw_text: str = "") -> pb.Action:
    kind = kind_of(action)
    body = {}
    for field in dataclasses.fields(action):
        value = getattr(action, field.name)
        if isinstance(value, Point):
            value = _point_to_proto(value)
        elif value is None:
            continue
        elif isinstance(value, enum.IntEnum):
            value = int(value)
        elif isinstance(value, tuple):
            value = list(value)
        body[_proto_field(field.name)] = value
    body_msg = getattr(pb, type(action).__name__)(**body)
    return pb.Action(raw_text=raw_text, **{kind: body_msg})


def describe(action: Action) -> str:
    """Short human-readable form, used in logs, prompts and loop detection."""
    args = ", ".join(
        f"{f.name.rstrip('_')}={getattr(action, f.name)!r}" for f in dataclasses.fields(action)
        if getattr(action, f.name) is not None
    )
    return f"{kind_of(action)}({args})"
