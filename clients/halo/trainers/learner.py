"""The one step loop of the trainers: a `Learner` says what a step does, `run_steps` runs the steps.

    untrained evaluation   greedy success (evaluation seeds) before the first step (eval_every > 0, fresh run)
    for each step after the last checkpoint (a stop is honoured between steps):
        collect            the step's data through the services: tree searches (MCTS), or the step's
                           rollouts from GRPO's pipeline (`batches`: up to K steps rolled out ahead)
        learn              the update, and the new weights published where the next step samples
        evaluate           greedy success (evaluation seeds) every `eval_every` steps and at the last one
        complete           the step's metrics (+ step_s) and the learner's checkpoint: ctx.complete_step
    close                  whatever happened (the run's adapter leaves the gateway)

GRPO on the embedded policy (`grpo.GRPOLearner`), MCTS on the embedded policy
(`mcts.recipe.EmbeddedMCTSLearner`) and MCTS on Tinker (`mcts.tinker.TinkerMCTSLearner`) are
learners; GRPO on Tinker runs tinker-cookbook's own loop (`tinker_train`), GRPO on a local LoRA
its rollout pipeline's (`lora_learner`). `GatewayLearner` is what the three have in common: the
policy samples through the gateway under the run's adapter, and the held-out evaluation goes
through the same route.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from halo.client.env import EnvClient
from halo.client.policy import PolicyClient
from halo.client.reward import RewardClient
from halo.rollout.episode import RolloutConfig
from halo.rollout.groups import GreedyEval, evaluate_greedy
from halo.runs.context import RunContext, ServiceTargets
from halo.runs.spec import RunSpec

Batch = TypeVar("Batch")

SAMPLE_TIMEOUT_HINT = ("a backend that compiles or loads on its first samples (a JAX server on CPU) or a loaded "
                       "machine needs longer: halo train --sample-timeout-s S (extra.sample_timeout_s)")


def sample_gateway(services: ServiceTargets, spec: RunSpec, default_timeout_s: float) -> PolicyClient:
    """The trainer's client of the policy gateway: each call's deadline is the run's
    extra.sample_timeout_s (`halo train --sample-timeout-s`), else the backend's default; a call
    that outlives it says so and names that setting. The gateway route's own timeout and
    retries (its timeout_s) run inside this deadline."""
    return PolicyClient(services.gateway, token=services.token, tls_ca=services.tls_ca,
                        timeout_s=float(spec.extra.get("sample_timeout_s") or default_timeout_s),
                        deadline_hint=SAMPLE_TIMEOUT_HINT)


class Learner(ABC, Generic[Batch]):
    """What one training step of a trainer does; `run_steps` calls it in order."""

    async def collect(self, step: int) -> Batch | None:
        """The step's data. None when a stop came while collecting: the step is abandoned."""
        raise NotImplementedError(f"{type(self).__name__} collects nothing step by step (see batches)")

    async def batches(self, ctx: RunContext) -> AsyncIterator[tuple[int, Batch, float]]:
        """(step, its data, when it was asked for: perf_counter) for each step after the last
        checkpoint, until the last step or a stop. One `collect` after the other, unless a learner
        collects ahead (GRPO's asynchronous rollouts)."""
        for step in range(ctx.start_step + 1, ctx.spec.total_steps + 1):
            if ctx.stop_requested():
                return
            started = time.perf_counter()
            batch = await self.collect(step)
            if batch is None:
                return   # stopped while collecting: the last completed step stands
            yield step, batch, started

    @abstractmethod
    async def learn(self, step: int, batch: Batch) -> dict[str, float]:
        """Update on the batch, publish the new weights; the step's metrics."""

    @abstractmethod
    def checkpoint(self, step: int, batch: Batch) -> Callable[[Path], None]:
        """What writes the step's checkpoint into a folder (ctx.complete_step calls it)."""

    async def evaluate(self, version: int) -> GreedyEval:
        """Greedy success rates (agisdk's and strict) on the evaluation seeds (spec.eval_seeds()) of the weights after
        `version` updates (asked for only when the run evaluates)."""
        raise NotImplementedError(f"{type(self).__name__} has no greedy evaluation")

    async def close(self) -> None:
        """Called once the loop ends, however it ends."""


async def run_steps(ctx: RunContext, learner: Learner, eval_every: int = 0) -> None:
    """The run's steps from the last checkpoint on: the one step loop of every learner."""
    spec = ctx.spec
    baseline: dict[str, float] = {}
    try:
        if eval_every and ctx.start_step == 0:  # the untrained policy, on the same evaluation seeds
            untrained = await learner.evaluate(0)
            baseline = untrained.metrics("_untrained")
            ctx.log(f"untrained policy: greedy success {untrained.success_rate:.0%} "
                    f"(strict {untrained.success_rate_strict:.0%}) on the {len(spec.task_ids)} training task(s) "
                    f"x evaluation seeds {spec.eval_seeds()}")
        async for step, batch, started in learner.batches(ctx):
            metrics = await learner.learn(step, batch)
            if eval_every and (step % eval_every == 0 or step == spec.total_steps):
                metrics |= (await learner.evaluate(step)).metrics()
            metrics |= {"step_s": time.perf_counter() - started} | baseline
            baseline = {}  # recorded once, with the first step
            await ctx.complete_step(step, metrics, learner.checkpoint(step, batch))
    finally:
        await learner.close()


@dataclass
class GatewayRun:
    """The services a gateway-sampled run talks to, and how it evaluates."""

    env: EnvClient
    reward: RewardClient
    gateway: PolicyClient
    route: str                      # the gateway route the policy samples from
    adapter: str                    # the run's adapter on that route
    tasks: list[str]                # task ids (site names expanded)
    eval_seeds: list[int]           # held-out seeds of the greedy evaluation
    rollout_config: RolloutConfig   # the evaluation's episodes
    concurrency: int


class GatewayLearner(Learner[Batch]):
    """A learner whose policy samples through the gateway under the run's adapter."""

    def __init__(self, run: GatewayRun) -> None:
        self.run = run

    async def publish(self, *, weights: bytes = b"", path: str = "") -> None:
        """New weights (inline, or a path the route's backend loads) as the run's adapter."""
        await self.run.gateway.load_adapter(self.run.route, self.run.adapter, weights=weights, path=path)

    async def evaluate(self, version: int) -> GreedyEval:
        r = self.run
        return await evaluate_greedy(r.env, r.reward, r.gateway, r.route, r.adapter, r.tasks, r.eval_seeds,
                                     r.rollout_config, r.concurrency)

    async def close(self) -> None:
        try:
            await self.run.gateway.unload_adapter(self.run.route, self.run.adapter)
        except Exception:
            pass  # the gateway may be gone; its adapters die with it
