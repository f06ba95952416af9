"""The embedded local policy as a gateway backend (halo.embedded.policy does the work).

Weights are handled like LoRA adapters: the base head (seeded init, or `weights_path`) serves
when no adapter is named; LoadAdapter(weights=<safetensors bytes>) installs a head under a
name, swapped atomically (a Sample in flight keeps the head it started with). Encoding and
scoring run in a worker thread so the event loop keeps serving.
"""

from __future__ import annotations

import asyncio
import stat
from pathlib import Path

from halo.agent.actions import Action
from halo.agent.context import PolicyContext
from halo.embedded.policy import EmbeddedPolicy, ScoringHead, WeightsError, head_from_bytes, shared_encoder
from halo.agent.prompt import Prompt
from halo.policy.backends.base import Backend, BackendResult, Completion, SampleParams
from halo.runtime.errors import FailedPrecondition, InvalidArgument, NotFound
from halo.v1 import policy_pb2 as ppb

MAX_WEIGHTS_FILE_BYTES = 512 * 1024 * 1024  # a scoring head is kilobytes; refuse to slurp anything huge


def read_weights_file(path: str) -> bytes:
    """The bytes of a weights file named by a client: a regular file of sane size, or a clear error
    (never an unhandled OSError, never an endless read of /dev/zero or a FIFO)."""
    try:
        info = Path(path).stat()
    except FileNotFoundError:
        raise NotFound(f"adapter path {path!r} does not exist") from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
        raise InvalidArgument(f"adapter path {path!r} cannot be read: {getattr(exc, 'strerror', None) or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        raise InvalidArgument(f"adapter path {path!r} is not a regular file (the embedded route loads one safetensors file)")
    if info.st_size > MAX_WEIGHTS_FILE_BYTES:
        raise InvalidArgument(f"adapter path {path!r} holds {info.st_size} bytes, more than any embedded head ({MAX_WEIGHTS_FILE_BYTES})")
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise InvalidArgument(f"adapter path {path!r} cannot be read: {exc.strerror or exc}") from None


class EmbeddedBackend(Backend):
    kind = ppb.BACKEND_KIND_EMBEDDED
    chooses_actions = True

    def __init__(self, route) -> None:
        super().__init__(route)
        self.policy: EmbeddedPolicy | None = None
        self.base_head: ScoringHead | None = None
        self.heads: dict[str, ScoringHead] = {}

    async def start(self) -> None:
        options = self.route.embedded

        def load() -> tuple[EmbeddedPolicy, ScoringHead]:
            encoder = shared_encoder(options.encoder_path)
            if options.weights_path:
                head = head_from_bytes(Path(options.weights_path).read_bytes())
            else:
                head = ScoringHead(hidden=options.hidden, seed=options.init_seed).eval()
            return EmbeddedPolicy(encoder, options.max_candidates), head

        self.policy, self.base_head = await asyncio.to_thread(load)

    def _head(self, adapter: str | None) -> ScoringHead:
        if self.policy is None or self.base_head is None:
            raise FailedPrecondition(f"route {self.route.name!r}: the embedded policy is not loaded yet")
        if adapter is None:
            return self.base_head
        try:
            return self.heads[adapter]
        except KeyError:
            raise NotFound(f"route {self.route.name!r} has no adapter {adapter!r} (loaded: {sorted(self.heads)})") from None

    async def sample(self, prompt: Prompt | None, ctx: PolicyContext | None, params: SampleParams,
                     adapter: str | None) -> BackendResult:
        assert ctx is not None
        head = self._head(adapter)
        policy = self.policy
        assert policy is not None
        features, samples = await asyncio.to_thread(policy.sample, head, ctx, params.n, params.temperature, params.seed)
        completions = [
            # no text: the gateway writes the chosen action once, in the caller's syntax
            Completion(text="", finish_reason="stop", token_ids=[s.index], logprobs=[s.logprob], action=s.action)
            for s in samples
        ]
        return BackendResult(completions=completions, prompt_tokens=len(features.candidates), completion_tokens=len(samples))

    async def score_actions(self, ctx: PolicyContext, actions: list[Action], adapter: str | None) -> list[float] | None:
        head = self._head(adapter)
        assert self.policy is not None
        probabilities = await asyncio.to_thread(self.policy.score, head, ctx, actions)
        known = [p for p in probabilities if p is not None]
        top = max(known) if known else 1.0
        # relative to the policy's favourite candidate, so scores spread over [0, 1]; actions the
        # policy cannot take score 0
        return [0.0 if p is None else p / top for p in probabilities]

    async def load_adapter(self, name: str, path: str, weights: bytes) -> None:
        if not weights and not path:
            raise InvalidArgument("LoadAdapter on the embedded route needs `weights` (safetensors bytes) or `path`")
        data = weights or await asyncio.to_thread(read_weights_file, path)
        try:
            head = await asyncio.to_thread(head_from_bytes, data)
        except WeightsError as exc:
            raise InvalidArgument(f"adapter {name!r}: {exc}") from None
        self.heads[name] = head  # one assignment: requests already running keep their head

    async def unload_adapter(self, name: str) -> None:
        self.heads.pop(name, None)
