"""Tinker rollouts through the policy gateway (`halo train --backend tinker --tinker-sampling gateway`).

tinker-cookbook's RL loop samples each observation with `TinkerTokenCompleter(sampling_client)`,
straight from Tinker's SDK. In gateway mode the same loop samples through the gateway's `Sample`
instead, so every training sample passes the gateway's limits, retries, metrics and raw-text
decoding like every other backend's:

- `GatewayTokenCompleter` is the cookbook's `TokenCompleter` over `halo.client.policy`: it sends
  the prompt the env rendered (token ids, image chunks as bytes) and the renderer's stop tokens
  as `SampleRequest.tokens`, with `logprobs=True`, and returns the sampled token ids and their
  logprobs. The gateway's tinker route samples them as they are (no re-rendering), so the datum
  the cookbook builds is exactly what was sampled.
- The route samples the run's *current* weights: each iteration's sampler weights are saved to a
  `tinker://` path (`save_weights_for_sampler`, a short TTL; a periodic checkpoint's sampler path
  on checkpoint steps) and loaded into the route with `LoadAdapter(path=...)` under
  `run-<run_id>-s<iteration>`, the one before that unloaded (`GatewaySampling`).

The cookbook has no hook for its policy, so two of its names are wrapped, once per process, and
dispatch on the run through a ContextVar that `train_tinker` sets for the task running the
cookbook's `main()` (the tasks it starts inherit it; other runs in the process, and direct mode,
see the cookbook's own functions unchanged):
- `rl.train.save_checkpoint_and_get_sampling_client`: the same checkpoint cadence, but the
  sampler weights always get a `tinker://` path, recorded for the sampling client it returns;
- `TinkerTokenCompleter` as `rl.rollouts` and `rl.metric_util` name it: a `GatewayTokenCompleter`
  for a sampling client whose path is recorded.
The cookbook's async mode (`--max-staleness`) creates its first sampler elsewhere; it keeps
direct sampling (refused in gateway mode, see `tinker_train.sampling_mode_for`).
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from dataclasses import dataclass, field
from typing import Any

import tinker
from tinker_cookbook.completers import TokenCompleter, TokensWithLogprobs

from halo.client.policy import PolicyClient
from halo.errors import FailedPrecondition
from halo.v1 import policy_pb2 as ppb

SAMPLER_TTL_S = 3600   # Tinker's shortest TTL: a per-iteration sampler is read only during its iteration
KEEP_LOADED = 2        # the iteration being sampled and the one before (its last rollouts may still run)

_ACTIVE: contextvars.ContextVar["GatewaySampling | None"] = contextvars.ContextVar("halo_tinker_gateway", default=None)
_ORIGINALS: dict[str, Any] = {}


def token_prompt(model_input: tinker.ModelInput, stop: Any) -> ppb.TokenPrompt:
    """A cookbook ModelInput and StopCondition as the gateway's TokenPrompt."""
    chunks = []
    for chunk in model_input.chunks:
        if isinstance(chunk, tinker.types.EncodedTextChunk):
            chunks.append(ppb.PromptChunk(tokens=list(chunk.tokens)))
        elif isinstance(chunk, tinker.types.ImageChunk):
            chunks.append(ppb.PromptChunk(image=chunk.data, image_format=chunk.format, image_tokens=chunk.expected_tokens or 0))
        else:
            raise ValueError(f"cannot send a {type(chunk).__name__} to the gateway")
    stops = list(stop or [])
    ints = [s for s in stops if isinstance(s, int)]
    return ppb.TokenPrompt(chunks=chunks, stop_token_ids=ints, stop=[s for s in stops if isinstance(s, str)])


@dataclass
class SampleTimes:
    """Per-sample wall time seen by the trainer (the step's `sample/...` metrics)."""

    calls: int = 0
    seconds: float = 0.0
    tokens: int = 0

    def add(self, seconds: float, tokens: int) -> None:
        self.calls, self.seconds, self.tokens = self.calls + 1, self.seconds + seconds, self.tokens + tokens

    def take(self) -> dict[str, float]:
        out = {"sample/calls": float(self.calls), "sample/tokens": float(self.tokens),
               "sample/mean_s": self.seconds / self.calls if self.calls else 0.0}
        self.calls, self.seconds, self.tokens = 0, 0.0, 0
        return out


@dataclass
class GatewayTokenCompleter(TokenCompleter):
    """The cookbook's TokenCompleter over the gateway: token ids in, token ids + logprobs out."""

    gateway: PolicyClient
    route: str
    adapter: Any                      # async () -> the adapter name on the route ("" = its default)
    max_tokens: int
    temperature: float = 1.0
    times: SampleTimes = field(default_factory=SampleTimes)

    async def __call__(self, model_input: tinker.ModelInput, stop: Any, *, max_tokens: int | None = None) -> TokensWithLogprobs:
        started = time.perf_counter()
        adapter = await self.adapter()
        response = await self.gateway.sample(
            self.route, tokens=token_prompt(model_input, stop), n=1, temperature=self.temperature,
            max_tokens=min(self.max_tokens, max_tokens or self.max_tokens), logprobs=True, adapter=adapter,
        )
        candidate = response.candidates[0]
        if len(candidate.logprobs) != len(candidate.token_ids):
            raise FailedPrecondition(f"route {self.route!r} answered without a logprob per token: is it a tinker route?")
        self.times.add(time.perf_counter() - started, len(candidate.token_ids))
        stop_reason = "length" if candidate.finish_reason == "length" else "stop"
        return TokensWithLogprobs(tokens=list(candidate.token_ids), maybe_logprobs=list(candidate.logprobs), stop_reason=stop_reason)


class GatewaySampling:
    """One run's sampling through a gateway route: the sampler paths of the cookbook's sampling
    clients, and the adapters those paths are loaded under."""

    def __init__(self, gateway: PolicyClient, route: str, run_id: str, ttl_s: int | None = SAMPLER_TTL_S) -> None:
        self.gateway, self.route, self.prefix, self.ttl_s = gateway, route, f"run-{run_id}", ttl_s
        self.times = SampleTimes()
        # id(sampling client) -> (the client, kept alive so its id stays its own; tinker:// path; adapter name)
        self._paths: dict[int, tuple[Any, str, str]] = {}
        self._loads: dict[str, asyncio.Task] = {}      # adapter name -> its LoadAdapter
        self._loaded: list[str] = []

    def record(self, client: Any, path: str, iteration: int) -> None:
        self._paths[id(client)] = (client, path, f"{self.prefix}-s{iteration}")
        for old in list(self._paths)[:-(KEEP_LOADED + 1)]:
            del self._paths[old]

    def completer(self, sampling_client: Any, max_tokens: int, temperature: float = 1.0) -> GatewayTokenCompleter:
        try:
            _, path, name = self._paths[id(sampling_client)]
        except KeyError:
            raise FailedPrecondition("gateway sampling: this sampling client has no recorded tinker:// path "
                                     "(created outside save_checkpoint_and_get_sampling_client)") from None

        async def adapter() -> str:
            await self._load(name, path)
            return name

        return GatewayTokenCompleter(self.gateway, self.route, adapter, max_tokens, temperature, self.times)

    async def _load(self, name: str, path: str) -> None:
        """LoadAdapter once per sampler (concurrent first samples share the one call)."""
        task = self._loads.get(name)
        if task is None:
            task = self._loads[name] = asyncio.ensure_future(self.gateway.load_adapter(self.route, name, path=path))
            # a failed load is forgotten (the next sample tries again); a waiter's cancellation never cancels it
            task.add_done_callback(lambda t: self._loads.pop(name, None) if t.cancelled() or t.exception() else None)
            await asyncio.shield(task)
            self._loaded.append(name)
            for old in self._loaded[:-KEEP_LOADED]:
                self._loaded.remove(old)
                self._loads.pop(old, None)
                await self.gateway.unload_adapter(self.route, old)
        else:
            await asyncio.shield(task)

    async def close(self) -> None:
        for name in self._loaded:
            try:
                await self.gateway.unload_adapter(self.route, name)
            except Exception:
                pass   # the gateway may be gone; its adapters die with it
        self._loaded.clear()


async def save_sampler_weights(training_client: Any, name: str, ttl_seconds: int | None) -> str:
    """Save the current weights for sampling under `name`; their tinker:// path."""
    future = await training_client.save_weights_for_sampler_async(name, ttl_seconds=ttl_seconds)
    return (await future.result_async()).path


async def _save_checkpoint_and_get_sampling_client(training_client: Any, checkpoint_mgr: Any, i_batch: int,
                                                   start_batch: int = 0) -> tuple[Any, dict[str, Any]]:
    active = _ACTIVE.get()
    if active is None:
        return await _ORIGINALS["save"](training_client, checkpoint_mgr, i_batch, start_batch)
    # the cookbook's cadence: a periodic checkpoint (state + sampler) when due, else sampler
    # weights only; here those always get a tinker:// path (the cookbook's are ephemeral)
    if i_batch > start_batch and checkpoint_mgr.should_save_periodic(i_batch):
        paths = await checkpoint_mgr.save_periodic_async(step=i_batch, loop_state={"batch": i_batch})
        path = paths["sampler_path"]
    else:
        path = await save_sampler_weights(training_client, f"halo-sampler-{i_batch:06d}", active.ttl_s)
    client = training_client.create_sampling_client(path)   # as the cookbook does (the SDK's future of the client
    active.record(client, path, i_batch)                    # stands in for it); evaluators and KL still use it
    return client, {}


def _token_completer(sampling_client: Any, max_tokens: int, temperature: float = 1.0, **kwargs: Any) -> TokenCompleter:
    active = _ACTIVE.get()
    if active is None:
        return _ORIGINALS["completer"](sampling_client, max_tokens=max_tokens, temperature=temperature, **kwargs)
    return active.completer(sampling_client, max_tokens, temperature)


def install() -> None:
    """Wrap the cookbook's two names (idempotent); they dispatch on the run's ContextVar."""
    if _ORIGINALS:
        return
    from tinker_cookbook.completers import TinkerTokenCompleter
    from tinker_cookbook.rl import metric_util, rollouts
    from tinker_cookbook.rl import train as rl_train

    _ORIGINALS["save"] = rl_train.save_checkpoint_and_get_sampling_client
    _ORIGINALS["completer"] = TinkerTokenCompleter
    rl_train.save_checkpoint_and_get_sampling_client = _save_checkpoint_and_get_sampling_client
    rollouts.TinkerTokenCompleter = _token_completer
    metric_util.TinkerTokenCompleter = _token_completer


def activate(sampling: GatewaySampling) -> contextvars.Token:
    """Route this task's (and its children's) cookbook sampling through `sampling`."""
    install()
    return _ACTIVE.set(sampling)


def deactivate(token: contextvars.Token) -> None:
    _ACTIVE.reset(token)
