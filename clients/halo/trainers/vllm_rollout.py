"""local_lora rollouts sampled through the policy gateway's vLLM route.

The cookbook's rollout loop (`do_group_rollout`) hands the policy an observation and records
`Transition(ob, ac)`; the learner later scores `ac` after `ob`. With vLLM the exact prompt is only
known after sampling: the gateway builds the chat prompt, vLLM renders it with the checkpoint's
chat template and expands each screenshot into as many `<|image_pad|>` tokens as its image
processor makes. So here:

- `GatewayBrowserEnv` (the REAL-task env of `tinker_env`) does not render its observation; it
  hands the policy a placeholder `ModelInput` and registers the `PolicyContext` it stands for;
- `GatewayPolicy` (a cookbook `TokenCompleter`) sends that context to the gateway (`Sample`,
  `logprobs=True`, the run's current adapter) and gets back vLLM's prompt token ids, the sampled
  token ids and their logprobs (processed: the distribution it sampled from). It rebuilds the
  prompt as a `ModelInput` from those ids (runs of image pads become `ImageChunk`s carrying the
  screenshot bytes the gateway sent, `expected_tokens` = vLLM's count) — no re-tokenising;
- after the group, `resolve()` puts those prompts into the transitions in place of the
  placeholders, so tinker-cookbook's `trajectory_to_data` builds datums of exactly what vLLM saw,
  with vLLM's logprobs as the importance ratio's `q`. Each transition records the adapter
  version it was sampled from (`logs["adapter"]`, `adapter_version`).

A failed sample (the route UNAVAILABLE after the gateway's retries, an unknown adapter, ...) is
not an environment failure: the rollout strategy would drop the trajectory and train on the rest,
so the policy keeps the first error and the trainer raises it after the batch (the run fails,
the last checkpoint untouched).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import tinker
from tinker_cookbook.completers import TokenCompleter, TokensWithLogprobs
from tinker_cookbook.rl.rollout_strategy import RolloutStrategy
from tinker_cookbook.rl.rollouts import do_group_rollout
from tinker_cookbook.rl.types import TrajectoryGroup

from halo.agent.context import PolicyContext, page_from_proto
from halo.agent.prompt import ImagePart, PromptOptions, build_prompt
from halo.trainers.tinker_env import HaloBrowserEnv, HaloBrowserGroupBuilder, _Services, renderer_for

IMAGE_FORMATS = {"image/jpeg": "jpeg", "image/png": "png"}


class SampleClock:
    """Wall time with at least one sample in flight, and tokens sampled: the step's `sample` share
    (the rest of the rollout's wall time is the environment's)."""

    def __init__(self) -> None:
        self.in_flight, self.busy_s, self.tokens, self.calls = 0, 0.0, 0, 0
        self._since = 0.0

    def enter(self) -> None:
        if self.in_flight == 0:
            self._since = time.perf_counter()
        self.in_flight += 1

    def exit(self, tokens: int) -> None:
        self.in_flight -= 1
        self.tokens += tokens
        self.calls += 1
        if self.in_flight == 0:
            self.busy_s += time.perf_counter() - self._since

    def reset(self) -> dict[str, float]:
        out = {"time/sample_s": self.busy_s, "sampled_tokens": float(self.tokens), "sample_calls": float(self.calls)}
        self.busy_s, self.tokens, self.calls = 0.0, 0, 0
        return out


class TimedCompleter(TokenCompleter):
    """Any TokenCompleter (the in-process sampler's), timed like GatewayPolicy."""

    def __init__(self, inner: TokenCompleter, clock: SampleClock) -> None:
        self.inner, self.clock = inner, clock

    async def __call__(self, model_input: tinker.ModelInput, stop, *, max_tokens: int | None = None) -> TokensWithLogprobs:
        self.clock.enter()
        tokens = 0
        try:
            out = await self.inner(model_input, stop, max_tokens=max_tokens)
            tokens = len(out.tokens)
            return out
        finally:
            self.clock.exit(tokens)


def prompt_from_token_ids(prompt_token_ids: Sequence[int], images: Sequence[ImagePart], image_token_id: int) -> tinker.ModelInput:
    """vLLM's prompt ids as a ModelInput: text chunks, and one ImageChunk per run of image pads
    (the screenshot's bytes, `expected_tokens` = the run's length, as vLLM expanded it)."""
    chunks: list[Any] = []
    text: list[int] = []
    runs = 0
    i, ids = 0, list(prompt_token_ids)
    while i < len(ids):
        if ids[i] != image_token_id:
            text.append(ids[i])
            i += 1
            continue
        j = i
        while j < len(ids) and ids[j] == image_token_id:
            j += 1
        if runs >= len(images):
            raise ValueError(f"vLLM's prompt has more image runs than the {len(images)} image(s) sent")
        if text:
            chunks.append(tinker.types.EncodedTextChunk(tokens=text))
            text = []
        image = images[runs]
        chunks.append(tinker.types.ImageChunk(data=image.data, format=IMAGE_FORMATS.get(image.mime, "png"), expected_tokens=j - i))
        runs += 1
        i = j
    if text:
        chunks.append(tinker.types.EncodedTextChunk(tokens=text))
    if runs != len(images):
        raise ValueError(f"vLLM's prompt has {runs} image run(s) for {len(images)} image(s) sent")
    return tinker.ModelInput(chunks=chunks)


@dataclass
class _Pending:
    context: PolicyContext
    resolved: tinker.ModelInput | None = None
    adapter: str = ""
    version: int = 0


@dataclass
class GatewayPolicy(TokenCompleter):
    """Samples each observation through a gateway route (vLLM) with the run's current adapter."""

    gateway: Any                              # halo.client.policy.PolicyClient
    route: str
    image_token_id: int
    options: PromptOptions
    max_tokens: int
    temperature: float = 1.0
    seed: int = 0
    adapter: str = ""                         # the adapter name on the route ("" = base model)
    output_regex: str = ""                    # every completion matches it (vLLM structured outputs); "" = free
    version: int = 0                          # the run step whose weights `adapter` holds
    clock: SampleClock = field(default_factory=SampleClock)
    failure: BaseException | None = None      # the first sampling error of the batch
    _pending: dict[int, _Pending] = field(default_factory=dict)
    _calls: int = 0

    def use(self, adapter: str, version: int) -> None:
        self.adapter, self.version = adapter, version

    def expect(self, ob: tinker.ModelInput, context: PolicyContext) -> None:
        self._pending[id(ob)] = _Pending(context)

    async def __call__(self, model_input: tinker.ModelInput, stop, *, max_tokens: int | None = None) -> TokensWithLogprobs:
        from halo.errors import FailedPrecondition, HaloError
        from halo.v1 import policy_pb2 as ppb

        pending = self._pending.get(id(model_input))
        if pending is None:
            raise RuntimeError("GatewayPolicy samples only observations of a GatewayBrowserEnv")
        self._calls += 1
        options = self.options
        self.clock.enter()
        tokens = 0
        try:
            response = await self.gateway.sample(
                # top_p 1: the learner scores the untruncated softmax(logits / T); the gateway pins
                # every other sampling field of a vLLM route to its neutral value
                self.route, input=pending.context, n=1, temperature=self.temperature, top_p=1.0,
                max_tokens=min(self.max_tokens, max_tokens or self.max_tokens),
                seed=(self.seed * 1_000_003 + self._calls) or 1, logprobs=True, adapter=self.adapter,
                action_format=options.action_format, output_regex=self.output_regex,
                prompt=ppb.PromptOptions(history_steps=options.history_steps, max_axtree_chars=options.max_axtree_chars,
                                         skip_axtree=not options.include_axtree,
                                         skip_screenshot=not options.include_screenshot),
            )
            candidate = response.candidates[0]
            tokens = len(candidate.token_ids)
        except HaloError as exc:
            self.failure = self.failure or exc
            raise
        finally:
            self.clock.exit(tokens)
        try:
            if response.adapter != self.adapter:   # the version metrics say what answered, not what was asked
                raise ValueError(f"asked for adapter {self.adapter!r}, the gateway sampled {response.adapter!r}")
            if not candidate.token_ids or len(candidate.logprobs) != len(candidate.token_ids) or not response.prompt_token_ids:
                raise ValueError("no token ids / logprobs in the answer: is it a vLLM route?")
            images = [p for m in build_prompt(pending.context, options).messages for p in m.parts if isinstance(p, ImagePart)]
            pending.resolved = prompt_from_token_ids(response.prompt_token_ids, images, self.image_token_id)
        except ValueError as exc:   # a misconfigured route, never an environment failure
            self.failure = self.failure or FailedPrecondition(f"route {self.route!r}: {exc}")
            raise self.failure from exc
        pending.adapter, pending.version = response.adapter, self.version
        stop_reason = "length" if candidate.finish_reason == "length" else "stop"
        return TokensWithLogprobs(tokens=list(candidate.token_ids), maybe_logprobs=list(candidate.logprobs), stop_reason=stop_reason)

    def resolve(self, groups: Sequence[TrajectoryGroup]) -> list[int]:
        """Put vLLM's prompts into the transitions (in place of the placeholders); the adapter
        version of every sampled transition, in order."""
        versions = []
        for group in groups:
            for trajectory in group.trajectories_G:
                for transition in trajectory.transitions:
                    pending = self._pending.get(id(transition.ob))
                    if pending is None or pending.resolved is None:
                        continue   # a synthetic transition (no sample was made for it)
                    transition.ob = pending.resolved
                    transition.logs = {**transition.logs, "adapter": pending.adapter, "adapter_version": pending.version}
                    versions.append(pending.version)
        return versions

    def clear(self) -> None:
        self._pending.clear()
        self.failure = None


class GatewayBrowserEnv(HaloBrowserEnv):
    """HaloBrowserEnv whose observations are sampled through the gateway (see the module doc)."""

    def __init__(self, *args: Any, policy: GatewayPolicy) -> None:
        super().__init__(*args)
        self.policy = policy

    async def _render(self) -> tinker.ModelInput:
        context = PolicyContext(goal=self.goal, page=page_from_proto(self._obs),
                                history=tuple(self.history[-self.config.history_steps:]))
        placeholder = tinker.ModelInput(chunks=[])   # a fresh object per observation: its identity is the key
        self.policy.expect(placeholder, context)
        return placeholder


class GatewayGroupBuilder(HaloBrowserGroupBuilder):
    """A HaloBrowserGroupBuilder whose envs sample through `policy` (local use only: not shipped to
    worker processes, it holds the policy)."""

    def __init__(self, builder: HaloBrowserGroupBuilder, policy: GatewayPolicy) -> None:
        super().__init__(builder.task_id, builder.seed, builder.group_size, builder.config)
        self.policy = policy

    async def make_envs(self):
        # as HaloBrowserGroupBuilder.make_envs, with the gateway's env (the renderer only decodes actions)
        if self._services is None:
            self._services = _Services(self.config)
        renderer = await asyncio.to_thread(renderer_for, self.config)
        envs = [GatewayBrowserEnv(self.task_id, self.seed, self.config, renderer, self._services, policy=self.policy)
                for _ in range(self.group_size)]
        self.envs += envs
        return envs


async def rollout_group(builder, policy: TokenCompleter, strategy: RolloutStrategy) -> TrajectoryGroup | None:
    """`do_group_rollout` with the cookbook's group-level error handling (None: the group is dropped)."""
    from tinker_cookbook.exceptions import AllTrajectoriesFailedError

    try:
        return await do_group_rollout(builder, policy, strategy=strategy)
    except AllTrajectoriesFailedError:
        return None
    except Exception:
        if isinstance(policy, GatewayPolicy) and policy.failure is not None:
            return None   # raised by the trainer after the batch
        if not strategy.catches_group_errors:
            raise
        return None


async def rollout_batch(builders, policy: TokenCompleter, strategy: RolloutStrategy) -> list[TrajectoryGroup | None]:
    return list(await asyncio.gather(*(rollout_group(b, policy, strategy) for b in builders)))
