from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class CoordinateSpace(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    COORDINATE_SPACE_UNSPECIFIED: _ClassVar[CoordinateSpace]
    COORDINATE_SPACE_PIXELS: _ClassVar[CoordinateSpace]
    COORDINATE_SPACE_NORMALIZED_1000: _ClassVar[CoordinateSpace]

class MouseButton(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MOUSE_BUTTON_UNSPECIFIED: _ClassVar[MouseButton]
    MOUSE_BUTTON_LEFT: _ClassVar[MouseButton]
    MOUSE_BUTTON_RIGHT: _ClassVar[MouseButton]
    MOUSE_BUTTON_MIDDLE: _ClassVar[MouseButton]

class ImageFormat(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    IMAGE_FORMAT_UNSPECIFIED: _ClassVar[ImageFormat]
    IMAGE_FORMAT_PNG: _ClassVar[ImageFormat]
    IMAGE_FORMAT_JPEG: _ClassVar[ImageFormat]

class SiteSource(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SITE_SOURCE_UNSPECIFIED: _ClassVar[SiteSource]
    SITE_SOURCE_REPLICA: _ClassVar[SiteSource]
    SITE_SOURCE_REMOTE: _ClassVar[SiteSource]

class EvalKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EVAL_KIND_UNSPECIFIED: _ClassVar[EvalKind]
    EVAL_KIND_SCRIPT: _ClassVar[EvalKind]
    EVAL_KIND_JMESPATH: _ClassVar[EvalKind]
    EVAL_KIND_LLM_JUDGE: _ClassVar[EvalKind]
COORDINATE_SPACE_UNSPECIFIED: CoordinateSpace
COORDINATE_SPACE_PIXELS: CoordinateSpace
COORDINATE_SPACE_NORMALIZED_1000: CoordinateSpace
MOUSE_BUTTON_UNSPECIFIED: MouseButton
MOUSE_BUTTON_LEFT: MouseButton
MOUSE_BUTTON_RIGHT: MouseButton
MOUSE_BUTTON_MIDDLE: MouseButton
IMAGE_FORMAT_UNSPECIFIED: ImageFormat
IMAGE_FORMAT_PNG: ImageFormat
IMAGE_FORMAT_JPEG: ImageFormat
SITE_SOURCE_UNSPECIFIED: SiteSource
SITE_SOURCE_REPLICA: SiteSource
SITE_SOURCE_REMOTE: SiteSource
EVAL_KIND_UNSPECIFIED: EvalKind
EVAL_KIND_SCRIPT: EvalKind
EVAL_KIND_JMESPATH: EvalKind
EVAL_KIND_LLM_JUDGE: EvalKind

class Point(_message.Message):
    __slots__ = ("x", "y", "space")
    X_FIELD_NUMBER: _ClassVar[int]
    Y_FIELD_NUMBER: _ClassVar[int]
    SPACE_FIELD_NUMBER: _ClassVar[int]
    x: float
    y: float
    space: CoordinateSpace
    def __init__(self, x: _Optional[float] = ..., y: _Optional[float] = ..., space: _Optional[_Union[CoordinateSpace, str]] = ...) -> None: ...

class ClickAt(_message.Message):
    __slots__ = ("point", "button", "click_count")
    POINT_FIELD_NUMBER: _ClassVar[int]
    BUTTON_FIELD_NUMBER: _ClassVar[int]
    CLICK_COUNT_FIELD_NUMBER: _ClassVar[int]
    point: Point
    button: MouseButton
    click_count: int
    def __init__(self, point: _Optional[_Union[Point, _Mapping]] = ..., button: _Optional[_Union[MouseButton, str]] = ..., click_count: _Optional[int] = ...) -> None: ...

class ClickElement(_message.Message):
    __slots__ = ("bid", "button", "click_count")
    BID_FIELD_NUMBER: _ClassVar[int]
    BUTTON_FIELD_NUMBER: _ClassVar[int]
    CLICK_COUNT_FIELD_NUMBER: _ClassVar[int]
    bid: str
    button: MouseButton
    click_count: int
    def __init__(self, bid: _Optional[str] = ..., button: _Optional[_Union[MouseButton, str]] = ..., click_count: _Optional[int] = ...) -> None: ...

class Fill(_message.Message):
    __slots__ = ("bid", "text")
    BID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    bid: str
    text: str
    def __init__(self, bid: _Optional[str] = ..., text: _Optional[str] = ...) -> None: ...

class SelectOption(_message.Message):
    __slots__ = ("bid", "values")
    BID_FIELD_NUMBER: _ClassVar[int]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    bid: str
    values: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, bid: _Optional[str] = ..., values: _Optional[_Iterable[str]] = ...) -> None: ...

class Hover(_message.Message):
    __slots__ = ("bid",)
    BID_FIELD_NUMBER: _ClassVar[int]
    bid: str
    def __init__(self, bid: _Optional[str] = ...) -> None: ...

class HoverAt(_message.Message):
    __slots__ = ("point",)
    POINT_FIELD_NUMBER: _ClassVar[int]
    point: Point
    def __init__(self, point: _Optional[_Union[Point, _Mapping]] = ...) -> None: ...

class TypeText(_message.Message):
    __slots__ = ("text", "press_enter")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    PRESS_ENTER_FIELD_NUMBER: _ClassVar[int]
    text: str
    press_enter: bool
    def __init__(self, text: _Optional[str] = ..., press_enter: _Optional[bool] = ...) -> None: ...

class KeyPress(_message.Message):
    __slots__ = ("keys",)
    KEYS_FIELD_NUMBER: _ClassVar[int]
    keys: str
    def __init__(self, keys: _Optional[str] = ...) -> None: ...

class Scroll(_message.Message):
    __slots__ = ("delta_x", "delta_y", "at")
    DELTA_X_FIELD_NUMBER: _ClassVar[int]
    DELTA_Y_FIELD_NUMBER: _ClassVar[int]
    AT_FIELD_NUMBER: _ClassVar[int]
    delta_x: float
    delta_y: float
    at: Point
    def __init__(self, delta_x: _Optional[float] = ..., delta_y: _Optional[float] = ..., at: _Optional[_Union[Point, _Mapping]] = ...) -> None: ...

class Drag(_message.Message):
    __slots__ = ("to",)
    FROM_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    to: Point
    def __init__(self, to: _Optional[_Union[Point, _Mapping]] = ..., **kwargs) -> None: ...

class Goto(_message.Message):
    __slots__ = ("url",)
    URL_FIELD_NUMBER: _ClassVar[int]
    url: str
    def __init__(self, url: _Optional[str] = ...) -> None: ...

class GoBack(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GoForward(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Wait(_message.Message):
    __slots__ = ("milliseconds",)
    MILLISECONDS_FIELD_NUMBER: _ClassVar[int]
    milliseconds: int
    def __init__(self, milliseconds: _Optional[int] = ...) -> None: ...

class SendMessage(_message.Message):
    __slots__ = ("text",)
    TEXT_FIELD_NUMBER: _ClassVar[int]
    text: str
    def __init__(self, text: _Optional[str] = ...) -> None: ...

class ReportInfeasible(_message.Message):
    __slots__ = ("reason",)
    REASON_FIELD_NUMBER: _ClassVar[int]
    reason: str
    def __init__(self, reason: _Optional[str] = ...) -> None: ...

class Noop(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Action(_message.Message):
    __slots__ = ("click_at", "click_element", "fill", "select_option", "hover", "hover_at", "type_text", "key_press", "scroll", "drag", "goto", "go_back", "go_forward", "wait", "send_message", "report_infeasible", "noop", "raw_text")
    CLICK_AT_FIELD_NUMBER: _ClassVar[int]
    CLICK_ELEMENT_FIELD_NUMBER: _ClassVar[int]
    FILL_FIELD_NUMBER: _ClassVar[int]
    SELECT_OPTION_FIELD_NUMBER: _ClassVar[int]
    HOVER_FIELD_NUMBER: _ClassVar[int]
    HOVER_AT_FIELD_NUMBER: _ClassVar[int]
    TYPE_TEXT_FIELD_NUMBER: _ClassVar[int]
    KEY_PRESS_FIELD_NUMBER: _ClassVar[int]
    SCROLL_FIELD_NUMBER: _ClassVar[int]
    DRAG_FIELD_NUMBER: _ClassVar[int]
    GOTO_FIELD_NUMBER: _ClassVar[int]
    GO_BACK_FIELD_NUMBER: _ClassVar[int]
    GO_FORWARD_FIELD_NUMBER: _ClassVar[int]
    WAIT_FIELD_NUMBER: _ClassVar[int]
    SEND_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    REPORT_INFEASIBLE_FIELD_NUMBER: _ClassVar[int]
    NOOP_FIELD_NUMBER: _ClassVar[int]
    RAW_TEXT_FIELD_NUMBER: _ClassVar[int]
    click_at: ClickAt
    click_element: ClickElement
    fill: Fill
    select_option: SelectOption
    hover: Hover
    hover_at: HoverAt
    type_text: TypeText
    key_press: KeyPress
    scroll: Scroll
    drag: Drag
    goto: Goto
    go_back: GoBack
    go_forward: GoForward
    wait: Wait
    send_message: SendMessage
    report_infeasible: ReportInfeasible
    noop: Noop
    raw_text: str
    def __init__(self, click_at: _Optional[_Union[ClickAt, _Mapping]] = ..., click_element: _Optional[_Union[ClickElement, _Mapping]] = ..., fill: _Optional[_Union[Fill, _Mapping]] = ..., select_option: _Optional[_Union[SelectOption, _Mapping]] = ..., hover: _Optional[_Union[Hover, _Mapping]] = ..., hover_at: _Optional[_Union[HoverAt, _Mapping]] = ..., type_text: _Optional[_Union[TypeText, _Mapping]] = ..., key_press: _Optional[_Union[KeyPress, _Mapping]] = ..., scroll: _Optional[_Union[Scroll, _Mapping]] = ..., drag: _Optional[_Union[Drag, _Mapping]] = ..., goto: _Optional[_Union[Goto, _Mapping]] = ..., go_back: _Optional[_Union[GoBack, _Mapping]] = ..., go_forward: _Optional[_Union[GoForward, _Mapping]] = ..., wait: _Optional[_Union[Wait, _Mapping]] = ..., send_message: _Optional[_Union[SendMessage, _Mapping]] = ..., report_infeasible: _Optional[_Union[ReportInfeasible, _Mapping]] = ..., noop: _Optional[_Union[Noop, _Mapping]] = ..., raw_text: _Optional[str] = ...) -> None: ...

class ObservationOptions(_message.Message):
    __slots__ = ("image_format", "jpeg_quality", "skip_screenshot", "skip_axtree")
    IMAGE_FORMAT_FIELD_NUMBER: _ClassVar[int]
    JPEG_QUALITY_FIELD_NUMBER: _ClassVar[int]
    SKIP_SCREENSHOT_FIELD_NUMBER: _ClassVar[int]
    SKIP_AXTREE_FIELD_NUMBER: _ClassVar[int]
    image_format: ImageFormat
    jpeg_quality: int
    skip_screenshot: bool
    skip_axtree: bool
    def __init__(self, image_format: _Optional[_Union[ImageFormat, str]] = ..., jpeg_quality: _Optional[int] = ..., skip_screenshot: _Optional[bool] = ..., skip_axtree: _Optional[bool] = ...) -> None: ...

class BoundingBox(_message.Message):
    __slots__ = ("x", "y", "width", "height")
    X_FIELD_NUMBER: _ClassVar[int]
    Y_FIELD_NUMBER: _ClassVar[int]
    WIDTH_FIELD_NUMBER: _ClassVar[int]
    HEIGHT_FIELD_NUMBER: _ClassVar[int]
    x: float
    y: float
    width: float
    height: float
    def __init__(self, x: _Optional[float] = ..., y: _Optional[float] = ..., width: _Optional[float] = ..., height: _Optional[float] = ...) -> None: ...

class Element(_message.Message):
    __slots__ = ("bid", "role", "name", "value", "bbox", "visible", "interactive", "focused", "depth", "states")
    BID_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    BBOX_FIELD_NUMBER: _ClassVar[int]
    VISIBLE_FIELD_NUMBER: _ClassVar[int]
    INTERACTIVE_FIELD_NUMBER: _ClassVar[int]
    FOCUSED_FIELD_NUMBER: _ClassVar[int]
    DEPTH_FIELD_NUMBER: _ClassVar[int]
    STATES_FIELD_NUMBER: _ClassVar[int]
    bid: str
    role: str
    name: str
    value: str
    bbox: BoundingBox
    visible: bool
    interactive: bool
    focused: bool
    depth: int
    states: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, bid: _Optional[str] = ..., role: _Optional[str] = ..., name: _Optional[str] = ..., value: _Optional[str] = ..., bbox: _Optional[_Union[BoundingBox, _Mapping]] = ..., visible: _Optional[bool] = ..., interactive: _Optional[bool] = ..., focused: _Optional[bool] = ..., depth: _Optional[int] = ..., states: _Optional[_Iterable[str]] = ...) -> None: ...

class Tab(_message.Message):
    __slots__ = ("url", "title", "active")
    URL_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_FIELD_NUMBER: _ClassVar[int]
    url: str
    title: str
    active: bool
    def __init__(self, url: _Optional[str] = ..., title: _Optional[str] = ..., active: _Optional[bool] = ...) -> None: ...

class Observation(_message.Message):
    __slots__ = ("screenshot", "image_format", "width", "height", "axtree", "elements", "url", "title", "tabs", "last_action_error", "step_index", "goal")
    SCREENSHOT_FIELD_NUMBER: _ClassVar[int]
    IMAGE_FORMAT_FIELD_NUMBER: _ClassVar[int]
    WIDTH_FIELD_NUMBER: _ClassVar[int]
    HEIGHT_FIELD_NUMBER: _ClassVar[int]
    AXTREE_FIELD_NUMBER: _ClassVar[int]
    ELEMENTS_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    TABS_FIELD_NUMBER: _ClassVar[int]
    LAST_ACTION_ERROR_FIELD_NUMBER: _ClassVar[int]
    STEP_INDEX_FIELD_NUMBER: _ClassVar[int]
    GOAL_FIELD_NUMBER: _ClassVar[int]
    screenshot: bytes
    image_format: ImageFormat
    width: int
    height: int
    axtree: str
    elements: _containers.RepeatedCompositeFieldContainer[Element]
    url: str
    title: str
    tabs: _containers.RepeatedCompositeFieldContainer[Tab]
    last_action_error: str
    step_index: int
    goal: str
    def __init__(self, screenshot: _Optional[bytes] = ..., image_format: _Optional[_Union[ImageFormat, str]] = ..., width: _Optional[int] = ..., height: _Optional[int] = ..., axtree: _Optional[str] = ..., elements: _Optional[_Iterable[_Union[Element, _Mapping]]] = ..., url: _Optional[str] = ..., title: _Optional[str] = ..., tabs: _Optional[_Iterable[_Union[Tab, _Mapping]]] = ..., last_action_error: _Optional[str] = ..., step_index: _Optional[int] = ..., goal: _Optional[str] = ...) -> None: ...

class Task(_message.Message):
    __slots__ = ("id", "site", "goal", "remote_url", "difficulty", "challenge_type", "possible", "eval_kinds", "replica_available", "scorable", "notes", "suite")
    ID_FIELD_NUMBER: _ClassVar[int]
    SITE_FIELD_NUMBER: _ClassVar[int]
    GOAL_FIELD_NUMBER: _ClassVar[int]
    REMOTE_URL_FIELD_NUMBER: _ClassVar[int]
    DIFFICULTY_FIELD_NUMBER: _ClassVar[int]
    CHALLENGE_TYPE_FIELD_NUMBER: _ClassVar[int]
    POSSIBLE_FIELD_NUMBER: _ClassVar[int]
    EVAL_KINDS_FIELD_NUMBER: _ClassVar[int]
    REPLICA_AVAILABLE_FIELD_NUMBER: _ClassVar[int]
    SCORABLE_FIELD_NUMBER: _ClassVar[int]
    NOTES_FIELD_NUMBER: _ClassVar[int]
    SUITE_FIELD_NUMBER: _ClassVar[int]
    id: str
    site: str
    goal: str
    remote_url: str
    difficulty: str
    challenge_type: str
    possible: bool
    eval_kinds: _containers.RepeatedScalarFieldContainer[EvalKind]
    replica_available: bool
    scorable: bool
    notes: str
    suite: str
    def __init__(self, id: _Optional[str] = ..., site: _Optional[str] = ..., goal: _Optional[str] = ..., remote_url: _Optional[str] = ..., difficulty: _Optional[str] = ..., challenge_type: _Optional[str] = ..., possible: _Optional[bool] = ..., eval_kinds: _Optional[_Iterable[_Union[EvalKind, str]]] = ..., replica_available: _Optional[bool] = ..., scorable: _Optional[bool] = ..., notes: _Optional[str] = ..., suite: _Optional[str] = ...) -> None: ...
