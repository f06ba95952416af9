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

class ActionFormat(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ACTION_FORMAT_UNSPECIFIED: _ClassVar[ActionFormat]
    ACTION_FORMAT_QWEN_COMPUTER_USE: _ClassVar[ActionFormat]
    ACTION_FORMAT_JSON: _ClassVar[ActionFormat]
    ACTION_FORMAT_BROWSERGYM: _ClassVar[ActionFormat]

class BackendKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    BACKEND_KIND_UNSPECIFIED: _ClassVar[BackendKind]
    BACKEND_KIND_VLLM: _ClassVar[BackendKind]
    BACKEND_KIND_OPENAI_COMPATIBLE: _ClassVar[BackendKind]
    BACKEND_KIND_TINKER: _ClassVar[BackendKind]
    BACKEND_KIND_EMBEDDED: _ClassVar[BackendKind]

class ParseErrorKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PARSE_ERROR_KIND_UNSPECIFIED: _ClassVar[ParseErrorKind]
    PARSE_ERROR_KIND_EMPTY: _ClassVar[ParseErrorKind]
    PARSE_ERROR_KIND_NO_ACTION: _ClassVar[ParseErrorKind]
    PARSE_ERROR_KIND_MALFORMED: _ClassVar[ParseErrorKind]
    PARSE_ERROR_KIND_UNKNOWN_ACTION: _ClassVar[ParseErrorKind]
    PARSE_ERROR_KIND_BAD_ARGUMENTS: _ClassVar[ParseErrorKind]
ACTION_FORMAT_UNSPECIFIED: ActionFormat
ACTION_FORMAT_QWEN_COMPUTER_USE: ActionFormat
ACTION_FORMAT_JSON: ActionFormat
ACTION_FORMAT_BROWSERGYM: ActionFormat
BACKEND_KIND_UNSPECIFIED: BackendKind
BACKEND_KIND_VLLM: BackendKind
BACKEND_KIND_OPENAI_COMPATIBLE: BackendKind
BACKEND_KIND_TINKER: BackendKind
BACKEND_KIND_EMBEDDED: BackendKind
PARSE_ERROR_KIND_UNSPECIFIED: ParseErrorKind
PARSE_ERROR_KIND_EMPTY: ParseErrorKind
PARSE_ERROR_KIND_NO_ACTION: ParseErrorKind
PARSE_ERROR_KIND_MALFORMED: ParseErrorKind
PARSE_ERROR_KIND_UNKNOWN_ACTION: ParseErrorKind
PARSE_ERROR_KIND_BAD_ARGUMENTS: ParseErrorKind

class HistoryStep(_message.Message):
    __slots__ = ("action", "error")
    ACTION_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    action: _common_pb2.Action
    error: str
    def __init__(self, action: _Optional[_Union[_common_pb2.Action, _Mapping]] = ..., error: _Optional[str] = ...) -> None: ...

class PromptOptions(_message.Message):
    __slots__ = ("history_steps", "max_axtree_chars", "skip_axtree", "skip_screenshot")
    HISTORY_STEPS_FIELD_NUMBER: _ClassVar[int]
    MAX_AXTREE_CHARS_FIELD_NUMBER: _ClassVar[int]
    SKIP_AXTREE_FIELD_NUMBER: _ClassVar[int]
    SKIP_SCREENSHOT_FIELD_NUMBER: _ClassVar[int]
    history_steps: int
    max_axtree_chars: int
    skip_axtree: bool
    skip_screenshot: bool
    def __init__(self, history_steps: _Optional[int] = ..., max_axtree_chars: _Optional[int] = ..., skip_axtree: _Optional[bool] = ..., skip_screenshot: _Optional[bool] = ...) -> None: ...

class PolicyInput(_message.Message):
    __slots__ = ("goal", "observation", "history")
    GOAL_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    HISTORY_FIELD_NUMBER: _ClassVar[int]
    goal: str
    observation: _common_pb2.Observation
    history: _containers.RepeatedCompositeFieldContainer[HistoryStep]
    def __init__(self, goal: _Optional[str] = ..., observation: _Optional[_Union[_common_pb2.Observation, _Mapping]] = ..., history: _Optional[_Iterable[_Union[HistoryStep, _Mapping]]] = ...) -> None: ...

class SampleRequest(_message.Message):
    __slots__ = ("model", "adapter", "input", "n", "temperature", "top_p", "max_tokens", "seed", "logprobs", "action_format", "prompt", "tokens", "output_regex")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    ADAPTER_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    N_FIELD_NUMBER: _ClassVar[int]
    TEMPERATURE_FIELD_NUMBER: _ClassVar[int]
    TOP_P_FIELD_NUMBER: _ClassVar[int]
    MAX_TOKENS_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    LOGPROBS_FIELD_NUMBER: _ClassVar[int]
    ACTION_FORMAT_FIELD_NUMBER: _ClassVar[int]
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_REGEX_FIELD_NUMBER: _ClassVar[int]
    model: str
    adapter: str
    input: PolicyInput
    n: int
    temperature: float
    top_p: float
    max_tokens: int
    seed: int
    logprobs: bool
    action_format: ActionFormat
    prompt: PromptOptions
    tokens: TokenPrompt
    output_regex: str
    def __init__(self, model: _Optional[str] = ..., adapter: _Optional[str] = ..., input: _Optional[_Union[PolicyInput, _Mapping]] = ..., n: _Optional[int] = ..., temperature: _Optional[float] = ..., top_p: _Optional[float] = ..., max_tokens: _Optional[int] = ..., seed: _Optional[int] = ..., logprobs: _Optional[bool] = ..., action_format: _Optional[_Union[ActionFormat, str]] = ..., prompt: _Optional[_Union[PromptOptions, _Mapping]] = ..., tokens: _Optional[_Union[TokenPrompt, _Mapping]] = ..., output_regex: _Optional[str] = ...) -> None: ...

class TokenPrompt(_message.Message):
    __slots__ = ("chunks", "stop_token_ids", "stop")
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    STOP_TOKEN_IDS_FIELD_NUMBER: _ClassVar[int]
    STOP_FIELD_NUMBER: _ClassVar[int]
    chunks: _containers.RepeatedCompositeFieldContainer[PromptChunk]
    stop_token_ids: _containers.RepeatedScalarFieldContainer[int]
    stop: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, chunks: _Optional[_Iterable[_Union[PromptChunk, _Mapping]]] = ..., stop_token_ids: _Optional[_Iterable[int]] = ..., stop: _Optional[_Iterable[str]] = ...) -> None: ...

class PromptChunk(_message.Message):
    __slots__ = ("tokens", "image", "image_format", "image_tokens")
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    IMAGE_FIELD_NUMBER: _ClassVar[int]
    IMAGE_FORMAT_FIELD_NUMBER: _ClassVar[int]
    IMAGE_TOKENS_FIELD_NUMBER: _ClassVar[int]
    tokens: _containers.RepeatedScalarFieldContainer[int]
    image: bytes
    image_format: str
    image_tokens: int
    def __init__(self, tokens: _Optional[_Iterable[int]] = ..., image: _Optional[bytes] = ..., image_format: _Optional[str] = ..., image_tokens: _Optional[int] = ...) -> None: ...

class Candidate(_message.Message):
    __slots__ = ("text", "action", "valid", "parse_error", "repaired", "token_ids", "logprobs", "finish_reason", "parse_error_kind", "parsed_format")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    VALID_FIELD_NUMBER: _ClassVar[int]
    PARSE_ERROR_FIELD_NUMBER: _ClassVar[int]
    REPAIRED_FIELD_NUMBER: _ClassVar[int]
    TOKEN_IDS_FIELD_NUMBER: _ClassVar[int]
    LOGPROBS_FIELD_NUMBER: _ClassVar[int]
    FINISH_REASON_FIELD_NUMBER: _ClassVar[int]
    PARSE_ERROR_KIND_FIELD_NUMBER: _ClassVar[int]
    PARSED_FORMAT_FIELD_NUMBER: _ClassVar[int]
    text: str
    action: _common_pb2.Action
    valid: bool
    parse_error: str
    repaired: bool
    token_ids: _containers.RepeatedScalarFieldContainer[int]
    logprobs: _containers.RepeatedScalarFieldContainer[float]
    finish_reason: str
    parse_error_kind: ParseErrorKind
    parsed_format: ActionFormat
    def __init__(self, text: _Optional[str] = ..., action: _Optional[_Union[_common_pb2.Action, _Mapping]] = ..., valid: _Optional[bool] = ..., parse_error: _Optional[str] = ..., repaired: _Optional[bool] = ..., token_ids: _Optional[_Iterable[int]] = ..., logprobs: _Optional[_Iterable[float]] = ..., finish_reason: _Optional[str] = ..., parse_error_kind: _Optional[_Union[ParseErrorKind, str]] = ..., parsed_format: _Optional[_Union[ActionFormat, str]] = ...) -> None: ...

class Usage(_message.Message):
    __slots__ = ("prompt_tokens", "completion_tokens")
    PROMPT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    COMPLETION_TOKENS_FIELD_NUMBER: _ClassVar[int]
    prompt_tokens: int
    completion_tokens: int
    def __init__(self, prompt_tokens: _Optional[int] = ..., completion_tokens: _Optional[int] = ...) -> None: ...

class SampleResponse(_message.Message):
    __slots__ = ("candidates", "model", "backend", "adapter", "usage", "latency", "prompt_token_ids", "adapter_version")
    CANDIDATES_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    BACKEND_FIELD_NUMBER: _ClassVar[int]
    ADAPTER_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    LATENCY_FIELD_NUMBER: _ClassVar[int]
    PROMPT_TOKEN_IDS_FIELD_NUMBER: _ClassVar[int]
    ADAPTER_VERSION_FIELD_NUMBER: _ClassVar[int]
    candidates: _containers.RepeatedCompositeFieldContainer[Candidate]
    model: str
    backend: BackendKind
    adapter: str
    usage: Usage
    latency: _duration_pb2.Duration
    prompt_token_ids: _containers.RepeatedScalarFieldContainer[int]
    adapter_version: int
    def __init__(self, candidates: _Optional[_Iterable[_Union[Candidate, _Mapping]]] = ..., model: _Optional[str] = ..., backend: _Optional[_Union[BackendKind, str]] = ..., adapter: _Optional[str] = ..., usage: _Optional[_Union[Usage, _Mapping]] = ..., latency: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., prompt_token_ids: _Optional[_Iterable[int]] = ..., adapter_version: _Optional[int] = ...) -> None: ...

class CritiqueRequest(_message.Message):
    __slots__ = ("model", "input", "candidates")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    CANDIDATES_FIELD_NUMBER: _ClassVar[int]
    model: str
    input: PolicyInput
    candidates: _containers.RepeatedCompositeFieldContainer[_common_pb2.Action]
    def __init__(self, model: _Optional[str] = ..., input: _Optional[_Union[PolicyInput, _Mapping]] = ..., candidates: _Optional[_Iterable[_Union[_common_pb2.Action, _Mapping]]] = ...) -> None: ...

class CritiqueResponse(_message.Message):
    __slots__ = ("scores", "rationale", "model", "parsed")
    SCORES_FIELD_NUMBER: _ClassVar[int]
    RATIONALE_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    PARSED_FIELD_NUMBER: _ClassVar[int]
    scores: _containers.RepeatedScalarFieldContainer[float]
    rationale: str
    model: str
    parsed: bool
    def __init__(self, scores: _Optional[_Iterable[float]] = ..., rationale: _Optional[str] = ..., model: _Optional[str] = ..., parsed: _Optional[bool] = ...) -> None: ...

class JudgeRequest(_message.Message):
    __slots__ = ("model", "answer", "rubric", "question")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    ANSWER_FIELD_NUMBER: _ClassVar[int]
    RUBRIC_FIELD_NUMBER: _ClassVar[int]
    QUESTION_FIELD_NUMBER: _ClassVar[int]
    model: str
    answer: str
    rubric: str
    question: str
    def __init__(self, model: _Optional[str] = ..., answer: _Optional[str] = ..., rubric: _Optional[str] = ..., question: _Optional[str] = ...) -> None: ...

class JudgeResponse(_message.Message):
    __slots__ = ("passed", "score", "rationale", "model", "parsed")
    PASSED_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    RATIONALE_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    PARSED_FIELD_NUMBER: _ClassVar[int]
    passed: bool
    score: float
    rationale: str
    model: str
    parsed: bool
    def __init__(self, passed: _Optional[bool] = ..., score: _Optional[float] = ..., rationale: _Optional[str] = ..., model: _Optional[str] = ..., parsed: _Optional[bool] = ...) -> None: ...

class LoadAdapterRequest(_message.Message):
    __slots__ = ("model", "name", "path", "weights", "make_default")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    WEIGHTS_FIELD_NUMBER: _ClassVar[int]
    MAKE_DEFAULT_FIELD_NUMBER: _ClassVar[int]
    model: str
    name: str
    path: str
    weights: bytes
    make_default: bool
    def __init__(self, model: _Optional[str] = ..., name: _Optional[str] = ..., path: _Optional[str] = ..., weights: _Optional[bytes] = ..., make_default: _Optional[bool] = ...) -> None: ...

class LoadAdapterResponse(_message.Message):
    __slots__ = ("name", "version")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    name: str
    version: int
    def __init__(self, name: _Optional[str] = ..., version: _Optional[int] = ...) -> None: ...

class UnloadAdapterRequest(_message.Message):
    __slots__ = ("model", "name")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    model: str
    name: str
    def __init__(self, model: _Optional[str] = ..., name: _Optional[str] = ...) -> None: ...

class UnloadAdapterResponse(_message.Message):
    __slots__ = ("was_loaded",)
    WAS_LOADED_FIELD_NUMBER: _ClassVar[int]
    was_loaded: bool
    def __init__(self, was_loaded: _Optional[bool] = ...) -> None: ...

class ListModelsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ModelRoute(_message.Message):
    __slots__ = ("name", "backend", "base_model", "endpoint", "adapters", "default_action_format", "max_concurrency", "healthy", "default_adapter")
    NAME_FIELD_NUMBER: _ClassVar[int]
    BACKEND_FIELD_NUMBER: _ClassVar[int]
    BASE_MODEL_FIELD_NUMBER: _ClassVar[int]
    ENDPOINT_FIELD_NUMBER: _ClassVar[int]
    ADAPTERS_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_ACTION_FORMAT_FIELD_NUMBER: _ClassVar[int]
    MAX_CONCURRENCY_FIELD_NUMBER: _ClassVar[int]
    HEALTHY_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_ADAPTER_FIELD_NUMBER: _ClassVar[int]
    name: str
    backend: BackendKind
    base_model: str
    endpoint: str
    adapters: _containers.RepeatedScalarFieldContainer[str]
    default_action_format: ActionFormat
    max_concurrency: int
    healthy: bool
    default_adapter: str
    def __init__(self, name: _Optional[str] = ..., backend: _Optional[_Union[BackendKind, str]] = ..., base_model: _Optional[str] = ..., endpoint: _Optional[str] = ..., adapters: _Optional[_Iterable[str]] = ..., default_action_format: _Optional[_Union[ActionFormat, str]] = ..., max_concurrency: _Optional[int] = ..., healthy: _Optional[bool] = ..., default_adapter: _Optional[str] = ...) -> None: ...

class ListModelsResponse(_message.Message):
    __slots__ = ("models",)
    MODELS_FIELD_NUMBER: _ClassVar[int]
    models: _containers.RepeatedCompositeFieldContainer[ModelRoute]
    def __init__(self, models: _Optional[_Iterable[_Union[ModelRoute, _Mapping]]] = ...) -> None: ...
