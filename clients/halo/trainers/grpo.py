"""Online GRPO over the HALO services: a pure client of env, reward and the policy gateway.

Each training step takes `groups_per_batch` tasks; for each, a group of `group_size` sessions
starts from the same initial state (same task, same seed) and rolls out concurrently, sampling
actions through the gateway and scoring transitions with the reward service. Advantages are
dr_grpo's `A_i = r_i − mean(r)` (std normalisation optional, `extra.normalize_std`). Episodes
that hit an environment failure are dropped from their group (and counted), never learned from
as a zero reward. When most of a step's episodes fail that way (the env service was killed or
restarted mid-step), the step's rollouts are thrown away, the trainer waits for the env service
to serve again and rolls the same batch out again (`extra.env_retries`, `extra.env_wait_s`):
an update is never computed from a batch the environment ruined. After the update, the new
weights are pushed to the gateway as the run's adapter, and the step is checkpointed.

Sampling is seeded per episode and per decision from the run's seed, the step, the group and the
episode's place in it: which action an episode samples does not depend on how the concurrent
rollouts happen to interleave on a busy machine, so a run is reproducible from its spec (and a
step rolled out again after an env failure draws the same actions).
"""

from __future__ import annotations

import asyncio
import collections
import random
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from halo.client.env import EnvClient
from halo.client.policy import PolicyClient
from halo.client.reward import RewardClient
from halo.trainers.advantages import EpisodeSummary, group_advantages, step_metrics
from halo.trainers.async_rollouts import AdapterVersions, AsyncSettings, Redone, RolloutPipeline, StepRollouts, admit
from halo.trainers.learner import GatewayLearner, GatewayRun, run_steps
from halo.runs.context import RunContext
from halo.rollout.episode import Episode, RolloutConfig
from halo.rollout.gateway import GatewayPolicy
from halo.rollout.priming import SessionPrimer
from halo.rollout.groups import GreedyEval, evaluate_greedy, rollout_groups, sampling_seed  # noqa: F401 (sampling_seed: GRPO's API)
from halo.rollout.retries import DEFAULT_EPISODE_RETRIES
from halo.rollout.tasks import expand_tasks

if TYPE_CHECKING:   # torch: imported by train_embedded only, when an embedded run starts
    from halo.trainers.embedded_learner import EmbeddedLearner, LossConfig

EMBEDDED_MODEL = "embedded"
#: `extra.prime_next_step`: hint the env (PrimeSessions) with step N+1's groups when step N's rollouts start
PRIME_NEXT_STEP = False


def summarize(e: Episode) -> EpisodeSummary:
    return EpisodeSummary(e.ret, e.success, e.length, e.valid_actions, e.tokens, e.env_failure, e.success_strict)


@dataclass(frozen=True)
class EnvRecovery:
    """How a step survives an env service that goes away mid-step."""

    max_failed_fraction: float = 0.5   # above this share of env-failed episodes, the step is rolled out again
    retries: int = 3                   # rollouts of one step thrown away before the run fails
    wait_s: float = 300.0              # how long to wait for the env service to serve again, per retry
    episode_retries: int = DEFAULT_EPISODE_RETRIES   # one episode's env-failed attempts rolled out again (on an env fleet: elsewhere)


class StepInterrupted(Exception):
    """A stop was requested while the step waited for the env service: the step is abandoned."""


async def wait_until_serving(env: EnvClient, wait_s: float, stop_requested=lambda: False) -> bool:
    """Poll the env service's gRPC health until it serves (True) or `wait_s` passes (False).

    Raises StepInterrupted when a stop is requested meanwhile (a stop must not wait minutes).
    """
    deadline = time.monotonic() + wait_s
    while True:
        if await env.healthy("halo.v1.EnvService", timeout_s=2.0):
            return True
        if stop_requested():
            raise StepInterrupted
        if time.monotonic() >= deadline:
            return False
        await asyncio.sleep(1.0)


async def rollout_step(
    env: EnvClient, reward: RewardClient, policy, batch: list[tuple[str, int]], group_size: int,
    config: RolloutConfig, concurrency: int, recovery: EnvRecovery, ctx: RunContext, step: int,
    sampling_key: str = "", limit=None,
) -> tuple[list[list[Episode]], Redone]:
    """The step's groups, rolled out again while too many episodes hit environment failures.

    Returns the groups and what was thrown away: rollouts of this step, and the episode attempts
    in them (their env retries included). Raises RuntimeError
    when the env service does not come back or the step keeps failing: the run then fails with
    its completed steps checkpointed, and a resume continues from there. Raises StepInterrupted
    when the run is asked to stop while it waits.
    """
    thrown_away = 0   # episode attempts in the rollouts thrown away, retries included
    for attempt in range(recovery.retries + 1):
        groups = await rollout_groups(env, reward, policy, batch, group_size, config, concurrency, sampling_key,
                                      limit, recovery.episode_retries)
        episodes = [e for g in groups for e in g]
        failed = [e for e in episodes if e.env_failure]
        if len(failed) <= recovery.max_failed_fraction * len(episodes):
            return groups, Redone(attempt, thrown_away)
        thrown_away += sum(1 + e.env_retries for e in episodes)
        reason = collections.Counter(e.env_failure_reason.splitlines()[0] for e in failed).most_common(1)[0][0]
        summary = f"step {step}: {len(failed)}/{len(episodes)} episodes hit environment failures ({reason})"
        if attempt == recovery.retries:
            break
        ctx.log(f"{summary}; waiting for the env service, then rolling the step out again", "warning")
        if not await wait_until_serving(env, recovery.wait_s, ctx.stop_requested):
            raise RuntimeError(f"{summary}; the env service at {env.target} did not serve again within "
                               f"{recovery.wait_s:g}s. Resume the run once it does.")
    raise RuntimeError(f"{summary} in {recovery.retries + 1} rollouts of the step. Resume the run once the "
                       "environment is healthy.")


def batch_for_step(tasks: list[str], groups_per_batch: int, seed: int, step: int) -> list[tuple[str, int]]:
    """The (task, seed) groups of a training step, the same after a resume.

    Tasks are dealt from a reshuffled deck rather than drawn independently: with 4 tasks and 4
    groups every step sees each task once, so a step's success rate measures the policy, not
    which tasks the dice picked.
    """
    out: list[tuple[str, int]] = []
    for j in range(groups_per_batch):
        i = (step - 1) * groups_per_batch + j
        deck = random.Random(f"{seed}:deck:{i // len(tasks)}").sample(tasks, len(tasks))
        out.append((deck[i % len(tasks)], random.Random(f"{seed}:{step}:{j}").randrange(1_000)))
    return out


class GRPOLearner(GatewayLearner[StepRollouts]):
    """GRPO on the embedded policy: each step's groups come from the rollout pipeline (up to K
    steps rolled out ahead, `async_rollouts`), dr_grpo advantages over the admitted groups,
    clipped passes on the trainer's copy of the scoring head, the new head published as the next
    adapter version."""

    def __init__(self, ctx: RunContext, run: GatewayRun, learner: EmbeddedLearner, loss: LossConfig, update_epochs: int,
                 settings: AsyncSettings, versions: AdapterVersions, pipeline: RolloutPipeline) -> None:
        super().__init__(run)
        self.ctx, self.learner, self.loss, self.update_epochs = ctx, learner, loss, update_epochs
        self.settings, self.versions, self.pipeline = settings, versions, pipeline

    async def batches(self, ctx: RunContext):
        try:
            async for rolled in self.pipeline.steps(ctx.stop_requested):
                yield rolled.step, rolled, rolled.asked_at
        except StepInterrupted:
            return   # stopped while the env service was down: the last completed step stands

    async def learn(self, step: int, batch: StepRollouts) -> dict[str, float]:
        rollout_s = time.perf_counter() - batch.asked_at
        admitted = admit(batch, step - 1, self.settings)
        update_started = time.time()
        episodes, advantages = [], []
        for group in admitted.groups:
            kept = [e for e in group if not e.env_failure]
            episodes += kept
            advantages += group_advantages([e.ret for e in kept], bool(self.ctx.spec.extra.get("normalize_std", False)))
        for _ in range(self.update_epochs):  # several passes over one batch: the ratio term keeps them honest
            update = await asyncio.to_thread(self.learner.update, episodes, advantages, self.loss)
        await self.versions.publish(step)
        update_finished = time.time()
        if self.settings.max_staleness:
            self.pipeline.start(learner_version=step)   # the next step K ahead starts now
        metrics = step_metrics([[summarize(e) for e in g] for g in admitted.groups]) | update
        metrics |= self.pipeline.metrics(batch, admitted, update_started, update_finished)
        return metrics | {"rollout_s": rollout_s, "rollouts_redone": float(batch.redone.rollouts),
                          # every episode attempt in those (retries included): counted, never learned from
                          "attempts_redone": float(batch.redone.attempts),
                          # attempts lost to env failures and rolled out again (env_failures: dropped in the end)
                          "env_retries": float(sum(e.env_retries for g in admitted.groups for e in g))}

    async def evaluate(self, version: int) -> GreedyEval:
        r = self.run
        return await evaluate_greedy(r.env, r.reward, r.gateway, r.route, self.versions.name(version), r.tasks,
                                     r.eval_seeds, r.rollout_config, r.concurrency)

    def checkpoint(self, step: int, batch: StepRollouts):
        return self.learner.save

    async def close(self) -> None:
        await self.pipeline.close()
        await self.versions.unload_all()


async def train_embedded(ctx: RunContext) -> None:
    # Lazy: torch and the sentence encoder load only for the embedded backend's run.
    from halo.trainers.embedded_learner import DEFAULT_LR, EmbeddedLearner, LossConfig

    spec = ctx.spec
    extra = spec.extra
    lr = spec.learning_rate if spec.learning_rate > 1e-5 else DEFAULT_LR  # 1e-6 is LoRA's default, not the head's
    learner = await asyncio.to_thread(EmbeddedLearner, lr, spec.seed, None, float(extra.get("relevance_prior", 0.0)))
    if ctx.last_checkpoint is not None:
        learner.load(ctx.last_checkpoint)
    loss = LossConfig(loss_fn=spec.loss_fn, temperature=spec.temperature, entropy_coef=float(extra.get("entropy_coef", 0.0)))
    config = RolloutConfig(max_steps=spec.max_steps, screenshots=False, reward_overrides=spec.reward_overrides, run_id=ctx.run_id)
    concurrency = int(extra.get("concurrency", spec.group_size))
    recovery = EnvRecovery(retries=int(extra.get("env_retries", EnvRecovery.retries)),
                           wait_s=float(extra.get("env_wait_s", EnvRecovery.wait_s)),
                           episode_retries=int(extra.get("episode_retries", EnvRecovery.episode_retries)))
    settings = AsyncSettings.from_extra(extra)
    services = ctx.services
    async with EnvClient(services.env, token=services.token, tls_ca=services.tls_ca) as env, \
            RewardClient(services.reward, token=services.token, tls_ca=services.tls_ca) as reward, \
            PolicyClient(services.gateway, token=services.token, tls_ca=services.tls_ca) as gateway:
        tasks = await expand_tasks(env, spec.task_ids)

        async def load(name: str, version: int) -> None:
            await gateway.load_adapter(spec.model, name, weights=learner.weights())

        async def unload(name: str) -> None:
            await gateway.unload_adapter(spec.model, name)

        async def roll_step(step: int, version: int, limit) -> tuple[list[list[Episode]], Redone]:
            policy = GatewayPolicy(gateway, spec.model, versions.name(version), spec.temperature)
            batch = batch_for_step(tasks, spec.groups_per_batch, spec.seed, step)
            groups, redone = await rollout_step(env, reward, policy, batch, spec.group_size, config, concurrency,
                                                recovery, ctx, step, f"{spec.seed}:{step}", limit)
            for episode in (e for g in groups for e in g):
                episode.weight_version = version
            return groups, redone

        # the next step's groups are known now: the env prepares their sessions while this step runs
        primer = SessionPrimer(env, config, enabled=bool(extra.get("prime_next_step", PRIME_NEXT_STEP)))
        last_rollout_s = 0.0

        async def roll(step: int, version: int, limit) -> tuple[list[list[Episode]], Redone]:
            nonlocal last_rollout_s
            if step < spec.total_steps:
                primer.announce(batch_for_step(tasks, spec.groups_per_batch, spec.seed, step + 1), spec.group_size,
                                primer.ttl_for(last_rollout_s))
            started = time.monotonic()
            try:
                return await roll_step(step, version, limit)
            finally:
                last_rollout_s = time.monotonic() - started

        versions = AdapterVersions(load, unload, ctx.run_id, settings.max_staleness)
        await versions.publish(ctx.start_step)
        pipeline = RolloutPipeline(settings, ctx.start_step + 1, spec.total_steps, roll, lambda: versions.newest, concurrency)
        run = GatewayRun(env, reward, gateway, spec.model, versions.name(ctx.start_step), tasks,
                         spec.eval_seeds(), config, concurrency)
        ctx.log(settings.describe())
        grpo = GRPOLearner(ctx, run, learner, loss, max(1, int(extra.get("update_epochs", 1))), settings, versions, pipeline)
        try:
            await run_steps(ctx, grpo, int(extra.get("eval_every", 0)))
        finally:
            await primer.close()
