import datetime

from google.protobuf import duration_pb2 as _duration_pb2
from halo.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Termination(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TERMINATION_UNSPECIFIED: _ClassVar[Termination]
    TERMINATION_MESSAGE_SENT: _ClassVar[Termination]
    TERMINATION_INFEASIBLE: _ClassVar[Termination]
    TERMINATION_MAX_STEPS: _ClassVar[Termination]
    TERMINATION_ENV_FAILURE: _ClassVar[Termination]
TERMINATION_UNSPECIFIED: Termination
TERMINATION_MESSAGE_SENT: Termination
TERMINATION_INFEASIBLE: Termination
TERMINATION_MAX_STEPS: Termination
TERMINATION_ENV_FAILURE: Termination

class ListTasksRequest(_message.Message):
    __slots__ = ("site", "replica_only", "suite")
    SITE_FIELD_NUMBER: _ClassVar[int]
    REPLICA_ONLY_FIELD_NUMBER: _ClassVar[int]
    SUITE_FIELD_NUMBER: _ClassVar[int]
    site: str
    replica_only: bool
    suite: str
    def __init__(self, site: _Optional[str] = ..., replica_only: _Optional[bool] = ..., suite: _Optional[str] = ...) -> None: ...

class ListTasksResponse(_message.Message):
    __slots__ = ("tasks",)
    TASKS_FIELD_NUMBER: _ClassVar[int]
    tasks: _containers.RepeatedCompositeFieldContainer[_common_pb2.Task]
    def __init__(self, tasks: _Optional[_Iterable[_Union[_common_pb2.Task, _Mapping]]] = ...) -> None: ...

class GetTaskRequest(_message.Message):
    __slots__ = ("task_id",)
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    def __init__(self, task_id: _Optional[str] = ...) -> None: ...

class CreateSessionRequest(_message.Message):
    __slots__ = ("task_id", "seed", "source", "observation", "max_steps", "run_id", "labels", "include_state")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    MAX_STEPS_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_STATE_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    seed: int
    source: _common_pb2.SiteSource
    observation: _common_pb2.ObservationOptions
    max_steps: int
    run_id: str
    labels: _containers.ScalarMap[str, str]
    include_state: bool
    def __init__(self, task_id: _Optional[str] = ..., seed: _Optional[int] = ..., source: _Optional[_Union[_common_pb2.SiteSource, str]] = ..., observation: _Optional[_Union[_common_pb2.ObservationOptions, _Mapping]] = ..., max_steps: _Optional[int] = ..., run_id: _Optional[str] = ..., labels: _Optional[_Mapping[str, str]] = ..., include_state: _Optional[bool] = ...) -> None: ...

class CreateSessionResponse(_message.Message):
    __slots__ = ("session_id", "task", "observation", "state_json")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    TASK_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    STATE_JSON_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    task: _common_pb2.Task
    observation: _common_pb2.Observation
    state_json: str
    def __init__(self, session_id: _Optional[str] = ..., task: _Optional[_Union[_common_pb2.Task, _Mapping]] = ..., observation: _Optional[_Union[_common_pb2.Observation, _Mapping]] = ..., state_json: _Optional[str] = ...) -> None: ...

class StepRequest(_message.Message):
    __slots__ = ("session_id", "action", "observation", "include_state")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_STATE_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    action: _common_pb2.Action
    observation: _common_pb2.ObservationOptions
    include_state: bool
    def __init__(self, session_id: _Optional[str] = ..., action: _Optional[_Union[_common_pb2.Action, _Mapping]] = ..., observation: _Optional[_Union[_common_pb2.ObservationOptions, _Mapping]] = ..., include_state: _Optional[bool] = ...) -> None: ...

class StepResponse(_message.Message):
    __slots__ = ("observation", "action_ok", "action_error", "done", "termination", "env_failure", "env_failure_reason", "action_duration", "observation_duration", "state_json", "final_message")
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    ACTION_OK_FIELD_NUMBER: _ClassVar[int]
    ACTION_ERROR_FIELD_NUMBER: _ClassVar[int]
    DONE_FIELD_NUMBER: _ClassVar[int]
    TERMINATION_FIELD_NUMBER: _ClassVar[int]
    ENV_FAILURE_FIELD_NUMBER: _ClassVar[int]
    ENV_FAILURE_REASON_FIELD_NUMBER: _ClassVar[int]
    ACTION_DURATION_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_DURATION_FIELD_NUMBER: _ClassVar[int]
    STATE_JSON_FIELD_NUMBER: _ClassVar[int]
    FINAL_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    observation: _common_pb2.Observation
    action_ok: bool
    action_error: str
    done: bool
    termination: Termination
    env_failure: bool
    env_failure_reason: str
    action_duration: _duration_pb2.Duration
    observation_duration: _duration_pb2.Duration
    state_json: str
    final_message: str
    def __init__(self, observation: _Optional[_Union[_common_pb2.Observation, _Mapping]] = ..., action_ok: _Optional[bool] = ..., action_error: _Optional[str] = ..., done: _Optional[bool] = ..., termination: _Optional[_Union[Termination, str]] = ..., env_failure: _Optional[bool] = ..., env_failure_reason: _Optional[str] = ..., action_duration: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., observation_duration: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., state_json: _Optional[str] = ..., final_message: _Optional[str] = ...) -> None: ...

class GetObservationRequest(_message.Message):
    __slots__ = ("session_id", "observation")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    observation: _common_pb2.ObservationOptions
    def __init__(self, session_id: _Optional[str] = ..., observation: _Optional[_Union[_common_pb2.ObservationOptions, _Mapping]] = ...) -> None: ...

class GetStateRequest(_message.Message):
    __slots__ = ("session_id",)
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    def __init__(self, session_id: _Optional[str] = ...) -> None: ...

class GetStateResponse(_message.Message):
    __slots__ = ("state_json", "final_message", "done", "termination", "step_index", "task_id", "source")
    STATE_JSON_FIELD_NUMBER: _ClassVar[int]
    FINAL_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    DONE_FIELD_NUMBER: _ClassVar[int]
    TERMINATION_FIELD_NUMBER: _ClassVar[int]
    STEP_INDEX_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    state_json: str
    final_message: str
    done: bool
    termination: Termination
    step_index: int
    task_id: str
    source: _common_pb2.SiteSource
    def __init__(self, state_json: _Optional[str] = ..., final_message: _Optional[str] = ..., done: _Optional[bool] = ..., termination: _Optional[_Union[Termination, str]] = ..., step_index: _Optional[int] = ..., task_id: _Optional[str] = ..., source: _Optional[_Union[_common_pb2.SiteSource, str]] = ...) -> None: ...

class SnapshotRequest(_message.Message):
    __slots__ = ("session_id",)
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    def __init__(self, session_id: _Optional[str] = ...) -> None: ...

class SnapshotResponse(_message.Message):
    __slots__ = ("snapshot_id", "url", "step_index")
    SNAPSHOT_ID_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    STEP_INDEX_FIELD_NUMBER: _ClassVar[int]
    snapshot_id: str
    url: str
    step_index: int
    def __init__(self, snapshot_id: _Optional[str] = ..., url: _Optional[str] = ..., step_index: _Optional[int] = ...) -> None: ...

class RestoreRequest(_message.Message):
    __slots__ = ("session_id", "snapshot_id", "observation")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_ID_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    snapshot_id: str
    observation: _common_pb2.ObservationOptions
    def __init__(self, session_id: _Optional[str] = ..., snapshot_id: _Optional[str] = ..., observation: _Optional[_Union[_common_pb2.ObservationOptions, _Mapping]] = ...) -> None: ...

class RestoreResponse(_message.Message):
    __slots__ = ("observation",)
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    observation: _common_pb2.Observation
    def __init__(self, observation: _Optional[_Union[_common_pb2.Observation, _Mapping]] = ...) -> None: ...

class CloseSessionRequest(_message.Message):
    __slots__ = ("session_id",)
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    def __init__(self, session_id: _Optional[str] = ...) -> None: ...

class CloseSessionResponse(_message.Message):
    __slots__ = ("was_open",)
    WAS_OPEN_FIELD_NUMBER: _ClassVar[int]
    was_open: bool
    def __init__(self, was_open: _Optional[bool] = ...) -> None: ...

class GetPoolStatsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListSessionsRequest(_message.Message):
    __slots__ = ("run_id", "labels", "limit")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    labels: _containers.ScalarMap[str, str]
    limit: int
    def __init__(self, run_id: _Optional[str] = ..., labels: _Optional[_Mapping[str, str]] = ..., limit: _Optional[int] = ...) -> None: ...

class SessionInfo(_message.Message):
    __slots__ = ("session_id", "task_id", "run_id", "labels", "step_index", "idle_s")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    STEP_INDEX_FIELD_NUMBER: _ClassVar[int]
    IDLE_S_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    task_id: str
    run_id: str
    labels: _containers.ScalarMap[str, str]
    step_index: int
    idle_s: float
    def __init__(self, session_id: _Optional[str] = ..., task_id: _Optional[str] = ..., run_id: _Optional[str] = ..., labels: _Optional[_Mapping[str, str]] = ..., step_index: _Optional[int] = ..., idle_s: _Optional[float] = ...) -> None: ...

class ListSessionsResponse(_message.Message):
    __slots__ = ("sessions", "total")
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    sessions: _containers.RepeatedCompositeFieldContainer[SessionInfo]
    total: int
    def __init__(self, sessions: _Optional[_Iterable[_Union[SessionInfo, _Mapping]]] = ..., total: _Optional[int] = ...) -> None: ...

class KeepAliveRequest(_message.Message):
    __slots__ = ("session_ids",)
    SESSION_IDS_FIELD_NUMBER: _ClassVar[int]
    session_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, session_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class KeepAliveResponse(_message.Message):
    __slots__ = ("alive", "unknown")
    ALIVE_FIELD_NUMBER: _ClassVar[int]
    UNKNOWN_FIELD_NUMBER: _ClassVar[int]
    alive: int
    unknown: int
    def __init__(self, alive: _Optional[int] = ..., unknown: _Optional[int] = ...) -> None: ...

class PoolStats(_message.Message):
    __slots__ = ("capacity", "active_sessions", "browsers", "sessions_created", "sessions_reaped", "browser_restarts", "env_failures", "warm_contexts", "warm_starts", "cold_starts", "primed_sessions", "primed_starts", "primed_unclaimed")
    CAPACITY_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_SESSIONS_FIELD_NUMBER: _ClassVar[int]
    BROWSERS_FIELD_NUMBER: _ClassVar[int]
    SESSIONS_CREATED_FIELD_NUMBER: _ClassVar[int]
    SESSIONS_REAPED_FIELD_NUMBER: _ClassVar[int]
    BROWSER_RESTARTS_FIELD_NUMBER: _ClassVar[int]
    ENV_FAILURES_FIELD_NUMBER: _ClassVar[int]
    WARM_CONTEXTS_FIELD_NUMBER: _ClassVar[int]
    WARM_STARTS_FIELD_NUMBER: _ClassVar[int]
    COLD_STARTS_FIELD_NUMBER: _ClassVar[int]
    PRIMED_SESSIONS_FIELD_NUMBER: _ClassVar[int]
    PRIMED_STARTS_FIELD_NUMBER: _ClassVar[int]
    PRIMED_UNCLAIMED_FIELD_NUMBER: _ClassVar[int]
    capacity: int
    active_sessions: int
    browsers: int
    sessions_created: int
    sessions_reaped: int
    browser_restarts: int
    env_failures: int
    warm_contexts: int
    warm_starts: int
    cold_starts: int
    primed_sessions: int
    primed_starts: int
    primed_unclaimed: int
    def __init__(self, capacity: _Optional[int] = ..., active_sessions: _Optional[int] = ..., browsers: _Optional[int] = ..., sessions_created: _Optional[int] = ..., sessions_reaped: _Optional[int] = ..., browser_restarts: _Optional[int] = ..., env_failures: _Optional[int] = ..., warm_contexts: _Optional[int] = ..., warm_starts: _Optional[int] = ..., cold_starts: _Optional[int] = ..., primed_sessions: _Optional[int] = ..., primed_starts: _Optional[int] = ..., primed_unclaimed: _Optional[int] = ...) -> None: ...

class PrimeSessionsRequest(_message.Message):
    __slots__ = ("task_id", "seed", "source", "observation", "run_id", "count", "ttl")
    TASK_ID_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    TTL_FIELD_NUMBER: _ClassVar[int]
    task_id: str
    seed: int
    source: _common_pb2.SiteSource
    observation: _common_pb2.ObservationOptions
    run_id: str
    count: int
    ttl: _duration_pb2.Duration
    def __init__(self, task_id: _Optional[str] = ..., seed: _Optional[int] = ..., source: _Optional[_Union[_common_pb2.SiteSource, str]] = ..., observation: _Optional[_Union[_common_pb2.ObservationOptions, _Mapping]] = ..., run_id: _Optional[str] = ..., count: _Optional[int] = ..., ttl: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class PrimeSessionsResponse(_message.Message):
    __slots__ = ("accepted",)
    ACCEPTED_FIELD_NUMBER: _ClassVar[int]
    accepted: int
    def __init__(self, accepted: _Optional[int] = ...) -> None: ...
