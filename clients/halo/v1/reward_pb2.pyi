import datetime

from google.protobuf import duration_pb2 as _duration_pb2
from halo.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class StartEpisodeRequest(_message.Message):
    __slots__ = ("episode_id", "task_id", "overrides", "initial")
    class OverridesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    EPISODE_ID_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    OVERRIDES_FIELD_NUMBER: _ClassVar[int]
    INITIAL_FIELD_NUMBER: _ClassVar[int]
    episode_id: str
    task_id: str
    overrides: _containers.ScalarMap[str, float]
    initial: PageState
    def __init__(self, episode_id: _Optional[str] = ..., task_id: _Optional[str] = ..., overrides: _Optional[_Mapping[str, float]] = ..., initial: _Optional[_Union[PageState, _Mapping]] = ...) -> None: ...

class StartEpisodeResponse(_message.Message):
    __slots__ = ("episode_id", "site", "milestones")
    EPISODE_ID_FIELD_NUMBER: _ClassVar[int]
    SITE_FIELD_NUMBER: _ClassVar[int]
    MILESTONES_FIELD_NUMBER: _ClassVar[int]
    episode_id: str
    site: str
    milestones: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, episode_id: _Optional[str] = ..., site: _Optional[str] = ..., milestones: _Optional[_Iterable[str]] = ...) -> None: ...

class PageState(_message.Message):
    __slots__ = ("url", "title", "axtree", "state_json", "elements")
    URL_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    AXTREE_FIELD_NUMBER: _ClassVar[int]
    STATE_JSON_FIELD_NUMBER: _ClassVar[int]
    ELEMENTS_FIELD_NUMBER: _ClassVar[int]
    url: str
    title: str
    axtree: str
    state_json: str
    elements: _containers.RepeatedCompositeFieldContainer[_common_pb2.Element]
    def __init__(self, url: _Optional[str] = ..., title: _Optional[str] = ..., axtree: _Optional[str] = ..., state_json: _Optional[str] = ..., elements: _Optional[_Iterable[_Union[_common_pb2.Element, _Mapping]]] = ...) -> None: ...

class ScoreTransitionRequest(_message.Message):
    __slots__ = ("episode_id", "step_index", "action", "action_parsed", "action_ok", "before", "after", "done", "env_failure")
    EPISODE_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_INDEX_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    ACTION_PARSED_FIELD_NUMBER: _ClassVar[int]
    ACTION_OK_FIELD_NUMBER: _ClassVar[int]
    BEFORE_FIELD_NUMBER: _ClassVar[int]
    AFTER_FIELD_NUMBER: _ClassVar[int]
    DONE_FIELD_NUMBER: _ClassVar[int]
    ENV_FAILURE_FIELD_NUMBER: _ClassVar[int]
    episode_id: str
    step_index: int
    action: _common_pb2.Action
    action_parsed: bool
    action_ok: bool
    before: PageState
    after: PageState
    done: bool
    env_failure: bool
    def __init__(self, episode_id: _Optional[str] = ..., step_index: _Optional[int] = ..., action: _Optional[_Union[_common_pb2.Action, _Mapping]] = ..., action_parsed: _Optional[bool] = ..., action_ok: _Optional[bool] = ..., before: _Optional[_Union[PageState, _Mapping]] = ..., after: _Optional[_Union[PageState, _Mapping]] = ..., done: _Optional[bool] = ..., env_failure: _Optional[bool] = ...) -> None: ...

class RewardComponent(_message.Message):
    __slots__ = ("name", "value", "detail")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    name: str
    value: float
    detail: str
    def __init__(self, name: _Optional[str] = ..., value: _Optional[float] = ..., detail: _Optional[str] = ...) -> None: ...

class RewardBreakdown(_message.Message):
    __slots__ = ("total", "components", "env_failure", "episode_return")
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    COMPONENTS_FIELD_NUMBER: _ClassVar[int]
    ENV_FAILURE_FIELD_NUMBER: _ClassVar[int]
    EPISODE_RETURN_FIELD_NUMBER: _ClassVar[int]
    total: float
    components: _containers.RepeatedCompositeFieldContainer[RewardComponent]
    env_failure: bool
    episode_return: float
    def __init__(self, total: _Optional[float] = ..., components: _Optional[_Iterable[_Union[RewardComponent, _Mapping]]] = ..., env_failure: _Optional[bool] = ..., episode_return: _Optional[float] = ...) -> None: ...

class EvaluateRequest(_message.Message):
    __slots__ = ("episode_id", "task_id", "state_json", "final_message", "env_failure")
    EPISODE_ID_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_JSON_FIELD_NUMBER: _ClassVar[int]
    FINAL_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    ENV_FAILURE_FIELD_NUMBER: _ClassVar[int]
    episode_id: str
    task_id: str
    state_json: str
    final_message: str
    env_failure: bool
    def __init__(self, episode_id: _Optional[str] = ..., task_id: _Optional[str] = ..., state_json: _Optional[str] = ..., final_message: _Optional[str] = ..., env_failure: _Optional[bool] = ...) -> None: ...

class EvalDetail(_message.Message):
    __slots__ = ("index", "kind", "passed", "description", "output", "error")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    PASSED_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    index: int
    kind: _common_pb2.EvalKind
    passed: bool
    description: str
    output: str
    error: str
    def __init__(self, index: _Optional[int] = ..., kind: _Optional[_Union[_common_pb2.EvalKind, str]] = ..., passed: _Optional[bool] = ..., description: _Optional[str] = ..., output: _Optional[str] = ..., error: _Optional[str] = ...) -> None: ...

class EvaluationResult(_message.Message):
    __slots__ = ("task_id", "success", "score", "details", "env_failure", "scorable", "duration", "success_bonus", "success_strict", "strict_failed")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    SUCCESS_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    DETAILS_FIELD_NUMBER: _ClassVar[int]
    ENV_FAILURE_FIELD_NUMBER: _ClassVar[int]
    SCORABLE_FIELD_NUMBER: _ClassVar[int]
    DURATION_FIELD_NUMBER: _ClassVar[int]
    SUCCESS_BONUS_FIELD_NUMBER: _ClassVar[int]
    SUCCESS_STRICT_FIELD_NUMBER: _ClassVar[int]
    STRICT_FAILED_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    success: bool
    score: float
    details: _containers.RepeatedCompositeFieldContainer[EvalDetail]
    env_failure: bool
    scorable: bool
    duration: _duration_pb2.Duration
    success_bonus: float
    success_strict: bool
    strict_failed: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, task_id: _Optional[str] = ..., success: _Optional[bool] = ..., score: _Optional[float] = ..., details: _Optional[_Iterable[_Union[EvalDetail, _Mapping]]] = ..., env_failure: _Optional[bool] = ..., scorable: _Optional[bool] = ..., duration: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., success_bonus: _Optional[float] = ..., success_strict: _Optional[bool] = ..., strict_failed: _Optional[_Iterable[str]] = ...) -> None: ...

class EndEpisodeRequest(_message.Message):
    __slots__ = ("episode_id",)
    EPISODE_ID_FIELD_NUMBER: _ClassVar[int]
    episode_id: str
    def __init__(self, episode_id: _Optional[str] = ...) -> None: ...

class EndEpisodeResponse(_message.Message):
    __slots__ = ("was_open", "episode_return", "transitions", "milestones_paid")
    WAS_OPEN_FIELD_NUMBER: _ClassVar[int]
    EPISODE_RETURN_FIELD_NUMBER: _ClassVar[int]
    TRANSITIONS_FIELD_NUMBER: _ClassVar[int]
    MILESTONES_PAID_FIELD_NUMBER: _ClassVar[int]
    was_open: bool
    episode_return: float
    transitions: int
    milestones_paid: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, was_open: _Optional[bool] = ..., episode_return: _Optional[float] = ..., transitions: _Optional[int] = ..., milestones_paid: _Optional[_Iterable[str]] = ...) -> None: ...

class GetRewardConfigRequest(_message.Message):
    __slots__ = ("episode_id",)
    EPISODE_ID_FIELD_NUMBER: _ClassVar[int]
    episode_id: str
    def __init__(self, episode_id: _Optional[str] = ...) -> None: ...

class RewardConfig(_message.Message):
    __slots__ = ("weights", "yaml")
    class WeightsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    WEIGHTS_FIELD_NUMBER: _ClassVar[int]
    YAML_FIELD_NUMBER: _ClassVar[int]
    weights: _containers.ScalarMap[str, float]
    yaml: str
    def __init__(self, weights: _Optional[_Mapping[str, float]] = ..., yaml: _Optional[str] = ...) -> None: ...
