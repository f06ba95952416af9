import datetime

from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class RunKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RUN_KIND_UNSPECIFIED: _ClassVar[RunKind]
    RUN_KIND_GRPO: _ClassVar[RunKind]
    RUN_KIND_MCTS: _ClassVar[RunKind]
    RUN_KIND_EVAL: _ClassVar[RunKind]

class TrainBackend(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TRAIN_BACKEND_UNSPECIFIED: _ClassVar[TrainBackend]
    TRAIN_BACKEND_EMBEDDED: _ClassVar[TrainBackend]
    TRAIN_BACKEND_TINKER: _ClassVar[TrainBackend]
    TRAIN_BACKEND_LOCAL_LORA: _ClassVar[TrainBackend]

class LossFunction(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    LOSS_FUNCTION_UNSPECIFIED: _ClassVar[LossFunction]
    LOSS_FUNCTION_IMPORTANCE_SAMPLING: _ClassVar[LossFunction]
    LOSS_FUNCTION_PPO: _ClassVar[LossFunction]
    LOSS_FUNCTION_CISPO: _ClassVar[LossFunction]
    LOSS_FUNCTION_DRO: _ClassVar[LossFunction]

class RunState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RUN_STATE_UNSPECIFIED: _ClassVar[RunState]
    RUN_STATE_PENDING: _ClassVar[RunState]
    RUN_STATE_RUNNING: _ClassVar[RunState]
    RUN_STATE_STOPPING: _ClassVar[RunState]
    RUN_STATE_STOPPED: _ClassVar[RunState]
    RUN_STATE_SUCCEEDED: _ClassVar[RunState]
    RUN_STATE_FAILED: _ClassVar[RunState]
    RUN_STATE_INTERRUPTED: _ClassVar[RunState]
RUN_KIND_UNSPECIFIED: RunKind
RUN_KIND_GRPO: RunKind
RUN_KIND_MCTS: RunKind
RUN_KIND_EVAL: RunKind
TRAIN_BACKEND_UNSPECIFIED: TrainBackend
TRAIN_BACKEND_EMBEDDED: TrainBackend
TRAIN_BACKEND_TINKER: TrainBackend
TRAIN_BACKEND_LOCAL_LORA: TrainBackend
LOSS_FUNCTION_UNSPECIFIED: LossFunction
LOSS_FUNCTION_IMPORTANCE_SAMPLING: LossFunction
LOSS_FUNCTION_PPO: LossFunction
LOSS_FUNCTION_CISPO: LossFunction
LOSS_FUNCTION_DRO: LossFunction
RUN_STATE_UNSPECIFIED: RunState
RUN_STATE_PENDING: RunState
RUN_STATE_RUNNING: RunState
RUN_STATE_STOPPING: RunState
RUN_STATE_STOPPED: RunState
RUN_STATE_SUCCEEDED: RunState
RUN_STATE_FAILED: RunState
RUN_STATE_INTERRUPTED: RunState

class RunSpec(_message.Message):
    __slots__ = ("name", "kind", "backend", "mode", "model", "task_ids", "group_size", "groups_per_batch", "total_steps", "learning_rate", "lora_rank", "temperature", "max_tokens", "max_steps", "loss_fn", "seed", "reward_overrides", "checkpoint_every", "extra")
    class RewardOverridesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    BACKEND_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    TASK_IDS_FIELD_NUMBER: _ClassVar[int]
    GROUP_SIZE_FIELD_NUMBER: _ClassVar[int]
    GROUPS_PER_BATCH_FIELD_NUMBER: _ClassVar[int]
    TOTAL_STEPS_FIELD_NUMBER: _ClassVar[int]
    LEARNING_RATE_FIELD_NUMBER: _ClassVar[int]
    LORA_RANK_FIELD_NUMBER: _ClassVar[int]
    TEMPERATURE_FIELD_NUMBER: _ClassVar[int]
    MAX_TOKENS_FIELD_NUMBER: _ClassVar[int]
    MAX_STEPS_FIELD_NUMBER: _ClassVar[int]
    LOSS_FN_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    REWARD_OVERRIDES_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_EVERY_FIELD_NUMBER: _ClassVar[int]
    EXTRA_FIELD_NUMBER: _ClassVar[int]
    name: str
    kind: RunKind
    backend: TrainBackend
    mode: str
    model: str
    task_ids: _containers.RepeatedScalarFieldContainer[str]
    group_size: int
    groups_per_batch: int
    total_steps: int
    learning_rate: float
    lora_rank: int
    temperature: float
    max_tokens: int
    max_steps: int
    loss_fn: LossFunction
    seed: int
    reward_overrides: _containers.ScalarMap[str, float]
    checkpoint_every: int
    extra: _struct_pb2.Struct
    def __init__(self, name: _Optional[str] = ..., kind: _Optional[_Union[RunKind, str]] = ..., backend: _Optional[_Union[TrainBackend, str]] = ..., mode: _Optional[str] = ..., model: _Optional[str] = ..., task_ids: _Optional[_Iterable[str]] = ..., group_size: _Optional[int] = ..., groups_per_batch: _Optional[int] = ..., total_steps: _Optional[int] = ..., learning_rate: _Optional[float] = ..., lora_rank: _Optional[int] = ..., temperature: _Optional[float] = ..., max_tokens: _Optional[int] = ..., max_steps: _Optional[int] = ..., loss_fn: _Optional[_Union[LossFunction, str]] = ..., seed: _Optional[int] = ..., reward_overrides: _Optional[_Mapping[str, float]] = ..., checkpoint_every: _Optional[int] = ..., extra: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class Run(_message.Message):
    __slots__ = ("run_id", "spec", "state", "step", "created_at", "updated_at", "last_metrics", "error", "last_checkpoint_id", "output_dir")
    class LastMetricsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    SPEC_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    LAST_METRICS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    LAST_CHECKPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_DIR_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    spec: RunSpec
    state: RunState
    step: int
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    last_metrics: _containers.ScalarMap[str, float]
    error: str
    last_checkpoint_id: str
    output_dir: str
    def __init__(self, run_id: _Optional[str] = ..., spec: _Optional[_Union[RunSpec, _Mapping]] = ..., state: _Optional[_Union[RunState, str]] = ..., step: _Optional[int] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., last_metrics: _Optional[_Mapping[str, float]] = ..., error: _Optional[str] = ..., last_checkpoint_id: _Optional[str] = ..., output_dir: _Optional[str] = ...) -> None: ...

class StartRunRequest(_message.Message):
    __slots__ = ("spec",)
    SPEC_FIELD_NUMBER: _ClassVar[int]
    spec: RunSpec
    def __init__(self, spec: _Optional[_Union[RunSpec, _Mapping]] = ...) -> None: ...

class GetRunRequest(_message.Message):
    __slots__ = ("run_id",)
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    def __init__(self, run_id: _Optional[str] = ...) -> None: ...

class ListRunsRequest(_message.Message):
    __slots__ = ("kind", "limit")
    KIND_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    kind: RunKind
    limit: int
    def __init__(self, kind: _Optional[_Union[RunKind, str]] = ..., limit: _Optional[int] = ...) -> None: ...

class ListRunsResponse(_message.Message):
    __slots__ = ("runs",)
    RUNS_FIELD_NUMBER: _ClassVar[int]
    runs: _containers.RepeatedCompositeFieldContainer[Run]
    def __init__(self, runs: _Optional[_Iterable[_Union[Run, _Mapping]]] = ...) -> None: ...

class StopRunRequest(_message.Message):
    __slots__ = ("run_id",)
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    def __init__(self, run_id: _Optional[str] = ...) -> None: ...

class ResumeRunRequest(_message.Message):
    __slots__ = ("run_id", "total_steps")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    TOTAL_STEPS_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    total_steps: int
    def __init__(self, run_id: _Optional[str] = ..., total_steps: _Optional[int] = ...) -> None: ...

class WatchRunRequest(_message.Message):
    __slots__ = ("run_id", "after_sequence")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    AFTER_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    after_sequence: int
    def __init__(self, run_id: _Optional[str] = ..., after_sequence: _Optional[int] = ...) -> None: ...

class StepMetrics(_message.Message):
    __slots__ = ("step", "values")
    class ValuesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    STEP_FIELD_NUMBER: _ClassVar[int]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    step: int
    values: _containers.ScalarMap[str, float]
    def __init__(self, step: _Optional[int] = ..., values: _Optional[_Mapping[str, float]] = ...) -> None: ...

class StateChange(_message.Message):
    __slots__ = ("state", "message")
    STATE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    state: RunState
    message: str
    def __init__(self, state: _Optional[_Union[RunState, str]] = ..., message: _Optional[str] = ...) -> None: ...

class LogLine(_message.Message):
    __slots__ = ("level", "message")
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    level: str
    message: str
    def __init__(self, level: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...

class Checkpoint(_message.Message):
    __slots__ = ("checkpoint_id", "run_id", "step", "path", "created_at", "metrics")
    class MetricsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    CHECKPOINT_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    METRICS_FIELD_NUMBER: _ClassVar[int]
    checkpoint_id: str
    run_id: str
    step: int
    path: str
    created_at: _timestamp_pb2.Timestamp
    metrics: _containers.ScalarMap[str, float]
    def __init__(self, checkpoint_id: _Optional[str] = ..., run_id: _Optional[str] = ..., step: _Optional[int] = ..., path: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., metrics: _Optional[_Mapping[str, float]] = ...) -> None: ...

class RunEvent(_message.Message):
    __slots__ = ("run_id", "sequence", "time", "metrics", "state_change", "log", "checkpoint")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    METRICS_FIELD_NUMBER: _ClassVar[int]
    STATE_CHANGE_FIELD_NUMBER: _ClassVar[int]
    LOG_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    sequence: int
    time: _timestamp_pb2.Timestamp
    metrics: StepMetrics
    state_change: StateChange
    log: LogLine
    checkpoint: Checkpoint
    def __init__(self, run_id: _Optional[str] = ..., sequence: _Optional[int] = ..., time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., metrics: _Optional[_Union[StepMetrics, _Mapping]] = ..., state_change: _Optional[_Union[StateChange, _Mapping]] = ..., log: _Optional[_Union[LogLine, _Mapping]] = ..., checkpoint: _Optional[_Union[Checkpoint, _Mapping]] = ...) -> None: ...

class ListCheckpointsRequest(_message.Message):
    __slots__ = ("run_id",)
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    def __init__(self, run_id: _Optional[str] = ...) -> None: ...

class ListCheckpointsResponse(_message.Message):
    __slots__ = ("checkpoints",)
    CHECKPOINTS_FIELD_NUMBER: _ClassVar[int]
    checkpoints: _containers.RepeatedCompositeFieldContainer[Checkpoint]
    def __init__(self, checkpoints: _Optional[_Iterable[_Union[Checkpoint, _Mapping]]] = ...) -> None: ...
