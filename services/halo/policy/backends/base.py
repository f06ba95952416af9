"""What every backend implements, and the retry policy they share.

A backend turns a built prompt (or, for the embedded policy, the context itself) into raw
completions. Parsing, candidate validity, routing, adapters' versions and concurrency limits
live in the gateway core, so every backend gets them the same way.
"""

from __future__ import annotations

import abc
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, wait_exponential

from halo.agent.actions import Action
from halo.agent.context import PolicyContext
from halo.agent.prompt import Prompt
from halo.policy.config import RouteConfig
from halo.runtime.errors import DeadlineExceeded, FailedPrecondition, HaloError, Unavailable
from halo.v1 import policy_pb2 as ppb

T = TypeVar("T")


@dataclass(frozen=True)
class SampleParams:
    n: int = 1
    temperature: float = 1.0
    top_p: float = 1.0
    max_tokens: int = 300
    seed: int = 0
    logprobs: bool = False
    output_regex: str = ""    # the completion must match it (vLLM structured outputs); "" = free


@dataclass
class Completion:
    text: str
    finish_reason: str = "stop"
    token_ids: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    action: Action | None = None  # set by backends that choose actions directly (embedded); the gateway
                                  # then writes `text` once, in the syntax the caller asked for


@dataclass(frozen=True)
class PromptChunk:
    """Text token ids, or one image the model expands to `image_tokens` tokens."""

    tokens: tuple[int, ...] = ()
    image: bytes = b""
    image_format: str = ""
    image_tokens: int = 0


@dataclass(frozen=True)
class TokenPrompt:
    """A prompt the caller rendered to tokens itself (SampleRequest.tokens), sampled as is."""

    chunks: tuple[PromptChunk, ...]
    stop_token_ids: tuple[int, ...] = ()
    stop: tuple[str, ...] = ()

    @property
    def length(self) -> int:
        return sum(len(c.tokens) + c.image_tokens for c in self.chunks)


@dataclass
class BackendResult:
    completions: list[Completion]
    prompt_tokens: int = 0
    completion_tokens: int = 0
    prompt_token_ids: list[int] = field(default_factory=list)


class TransientBackendError(Exception):
    """A failure worth retrying (connection refused, timeout, 5xx, 429)."""

    def __init__(self, message: str, *, timeout: bool = False) -> None:
        super().__init__(message)
        self.timeout = timeout


class Backend(abc.ABC):
    kind: int = ppb.BACKEND_KIND_UNSPECIFIED
    #: the backend chooses actions itself (no text to parse, no prompt to build)
    chooses_actions: bool = False
    #: the backend honours SampleParams.output_regex (structured outputs)
    constrains_output: bool = False
    #: the backend may answer a prompt from results cached under the adapter's name (vLLM's prefix
    #: cache): the gateway then loads a name again only with the weights first loaded under it
    #: (halo.policy.adapter_names); otherwise LoadAdapter under a loaded name replaces its weights
    caches_prompts_by_adapter_name: bool = False

    def __init__(self, route: RouteConfig) -> None:
        self.route = route

    async def start(self) -> None:
        """Load what the backend needs before serving (models, clients). Default: nothing."""

    @abc.abstractmethod
    async def sample(self, prompt: Prompt | None, ctx: PolicyContext | None, params: SampleParams,
                     adapter: str | None) -> BackendResult:
        """n completions for one prompt (`adapter`: a loaded adapter's name, None = base model)."""

    async def sample_tokens(self, prompt: TokenPrompt, params: SampleParams, adapter: str | None) -> BackendResult:
        """n completions for a prompt already rendered to tokens (backends that sample token ids)."""
        raise FailedPrecondition(f"route {self.route.name!r} ({self.route.backend}) samples prompts it builds itself, "
                                 "not token prompts (SampleRequest.tokens needs a tinker route)")

    async def score_actions(self, ctx: PolicyContext, actions: list[Action], adapter: str | None) -> list[float] | None:
        """Native critique (embedded policy); None: use a critic prompt instead."""
        return None

    async def load_adapter(self, name: str, path: str, weights: bytes) -> None:
        raise FailedPrecondition(f"route {self.route.name!r} ({self.route.backend}) does not take adapters")

    async def unload_adapter(self, name: str) -> None:
        raise FailedPrecondition(f"route {self.route.name!r} ({self.route.backend}) does not take adapters")

    async def healthy(self) -> bool:
        return True

    def endpoint(self) -> str:
        """Where the backend answers (ListModels' `endpoint`): the route's URL(s)."""
        return self.route.endpoint

    async def close(self) -> None:
        pass

    async def with_retries(self, what: str, call: Callable[[], Awaitable[T]]) -> T:
        """Run `call`, retrying TransientBackendError with exponential backoff.

        After the last attempt: DEADLINE_EXCEEDED if it timed out, UNAVAILABLE otherwise.
        HaloErrors (NotFound, InvalidArgument, ...) are not retried.
        """
        route = self.route
        last: TransientBackendError | None = None
        try:
            async for attempt in AsyncRetrying(
                retry=retry_if_exception(lambda e: isinstance(e, TransientBackendError)),
                stop=stop_after_attempt(route.retries + 1),
                wait=wait_exponential(multiplier=route.backoff_s, max=route.max_backoff_s),
                reraise=True,
            ):
                with attempt:
                    return await call()
        except TransientBackendError as exc:
            last = exc
        except HaloError:
            raise
        assert last is not None
        tries = route.retries + 1
        if last.timeout:
            raise DeadlineExceeded(
                f"route {route.name!r}: {what} timed out after {tries} attempt(s) of {route.timeout_s:g}s: {last}"
            )
        raise Unavailable(f"route {route.name!r} ({route.backend} at {route.endpoint or route.model_name}) "
                          f"is unavailable after {tries} attempt(s): {last}")
