"""Groups of episodes rolled out concurrently, and the greedy held-out evaluation every trainer runs.

Shared by GRPO (a group = `group_size` attempts at one task from the same initial state) and by
every learner's held-out evaluation (`evaluate_greedy`): the rollout code of all apps lives here,
in halo.rollout, not in one trainer's module.
"""

from __future__ import annotations

import asyncio
import hashlib
from dataclasses import dataclass

from halo.client.env import EnvClient
from halo.client.reward import RewardClient
from halo.rollout.episode import Episode, RolloutConfig, run_episode
from halo.rollout.gateway import GatewayPolicy
from halo.rollout.retries import DEFAULT_EPISODE_RETRIES, with_env_retries


def sampling_seed(*parts: object) -> int:
    """A stable, non-zero 62-bit seed from its parts (Python's hash() is salted per process)."""
    digest = hashlib.blake2b(":".join(map(str, parts)).encode(), digest_size=8).digest()
    return (int.from_bytes(digest, "big") >> 2) or 1


async def rollout_groups(
    env: EnvClient, reward: RewardClient, policy, tasks: list[tuple[str, int]], group_size: int,
    config: RolloutConfig, concurrency: int, sampling_key: str = "", limit=None,
    episode_retries: int = DEFAULT_EPISODE_RETRIES,
) -> list[list[Episode]]:
    """One group per (task, seed): `group_size` episodes from the same initial state, run concurrently.

    With a `sampling_key`, episode i of group g samples from its own seed stream
    (`sampling_seed(key, g, i)`, for policies with `for_episode`), independent of scheduling.
    `limit` (an `async with` object) replaces the call's own `concurrency` semaphore: the
    asynchronous loop shares env slots between the steps in flight (halo.trainers.async_rollouts).
    An episode lost to an environment failure is rolled out again up to `episode_retries` times
    (rollout.retries: on an env fleet, on a replica that still serves).
    """
    limit = limit or asyncio.Semaphore(concurrency)

    async def one(task_id: str, seed: int, group: int, member: int) -> Episode:
        episode_policy = policy
        if sampling_key and hasattr(policy, "for_episode"):
            # low 20 bits cleared: room for 2^20 decisions before two streams could meet; bit 61 keeps it non-zero
            episode_policy = policy.for_episode(sampling_seed(sampling_key, group, member) & ~0xFFFFF | 1 << 61)
        async with limit:
            return await with_env_retries(lambda: run_episode(env, reward, episode_policy, task_id, seed, config),
                                          episode_retries)

    flat = await asyncio.gather(*(one(t, s, g, m) for g, (t, s) in enumerate(tasks) for m in range(group_size)))
    return [list(flat[i * group_size:(i + 1) * group_size]) for i in range(len(tasks))]


@dataclass(frozen=True)
class GreedyEval:
    """Success rates of a greedy evaluation, under both verdicts (docs/reference/graders.md)."""

    success_rate: float          # agisdk's verdict: comparable with REAL's numbers
    success_rate_strict: float   # agisdk's verdict AND HALO's strict checks

    def metrics(self, suffix: str = "") -> dict[str, float]:
        """The run's metrics: eval_success_rate[_suffix] and eval_success_rate_strict[_suffix]."""
        return {f"eval_success_rate{suffix}": self.success_rate, f"eval_success_rate_strict{suffix}": self.success_rate_strict}


async def evaluate_greedy(env, reward, policy_client, model, adapter, tasks: list[str], seeds: list[int],
                          config: RolloutConfig, concurrency: int) -> GreedyEval:
    """Success rates of the greedy (temperature 0) policy on the given tasks x seeds, episodes
    lost to the environment left out."""
    greedy = GatewayPolicy(policy_client, model, adapter, temperature=0.0)
    groups = await rollout_groups(env, reward, greedy, [(t, s) for t in tasks for s in seeds], 1, config, concurrency)
    kept = [g[0] for g in groups if not g[0].env_failure]
    if not kept:
        return GreedyEval(0.0, 0.0)
    return GreedyEval(sum(e.success for e in kept) / len(kept), sum(e.success_strict for e in kept) / len(kept))
