"""GRPO on the real services (env + reward + gateway with the embedded policy, real Chromium)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from halo.trainers.advantages import EpisodeSummary, group_advantages, step_metrics


def test_dr_grpo_advantages_are_mean_centred():
    assert group_advantages([1.0, 0.0, 0.5, 0.5]) == [0.5, -0.5, 0.0, 0.0]
    normalized = group_advantages([1.0, 0.0], normalize_std=True)
    assert normalized[0] == pytest.approx(1.0, rel=1e-3) and normalized[1] == pytest.approx(-1.0, rel=1e-3)
    assert group_advantages([0.3, 0.3, 0.3]) == [0.0, 0.0, 0.0]


def test_env_failures_are_dropped_from_metrics_and_counted():
    ok = lambda r, s: EpisodeSummary(r, s, 3, 3, 0, False)  # noqa: E731
    failed = EpisodeSummary(0.0, False, 1, 0, 0, True)
    m = step_metrics([[ok(1.0, True), ok(0.0, False), failed], [ok(0.2, False), ok(0.2, False)]])
    assert m["episodes"] == 4 and m["env_failures"] == 1
    assert m["success_rate"] == 0.25 and m["mean_reward"] == pytest.approx(0.35)
    assert m["frac_reward_zero_std"] == 0.5   # the second group has no reward variance
    assert m["action_validity"] == 1.0 and m["episode_length"] == 3
    assert m["success_rate_strict"] == 0.0   # agisdk's successes are not strict ones unless the checks say so
    strict = step_metrics([[EpisodeSummary(1.0, True, 3, 3, 0, False, True), ok(1.0, True)]])
    assert strict["success_rate"] == 1.0 and strict["success_rate_strict"] == 0.5


@pytest.fixture(scope="module")
async def services():
    from halo.cli.stack import LocalStack

    # room for two steps' groups (8 each): the env primes the next step's sessions (PrimeSessions)
    # into the free slots while a step's episodes run
    async with LocalStack(env_overrides={"pool_size": 16, "acquire_timeout_s": 60}, with_reward=True, with_gateway=True) as stack:
        yield stack


async def greedy_success(stack, adapter: str, weights: bytes, task: str, seeds: list[int]) -> float:
    from halo.client.env import EnvClient
    from halo.client.policy import PolicyClient
    from halo.client.reward import RewardClient
    from halo.trainers.grpo import evaluate_greedy
    from halo.rollout.episode import RolloutConfig

    async with EnvClient(stack.env_target) as env, RewardClient(stack.reward_target) as reward, \
            PolicyClient(stack.gateway_target) as gateway:
        await gateway.load_adapter("embedded", adapter, weights=weights)
        rates = await evaluate_greedy(env, reward, gateway, "embedded", adapter, [task], seeds,
                                      RolloutConfig(max_steps=3, screenshots=False), concurrency=4)
    # a task without strict checks is strict-successful exactly when agisdk's verdict says so
    assert rates.success_rate_strict == rates.success_rate, rates
    return rates.success_rate


async def test_trained_policy_beats_the_untrained_one_on_held_out_seeds(services, tmp_path: Path):
    """A few GRPO steps on training layouts; greedy success measured on layouts never trained on."""
    from halo.trainer.jobs import JobManager
    from halo.trainer.store import RunState
    from halo.runs.context import ServiceTargets
    from halo.trainers.embedded_learner import EmbeddedLearner
    from halo.cli.registry import resolve_trainer
    from halo.runs.spec import RunSpec

    task = "playground-signup"
    held_out = [9001, 9002, 9003, 9004]
    untrained = EmbeddedLearner(3e-3, seed=0)
    before = await greedy_success(services, "untrained", untrained.weights(), task, held_out)

    jobs = JobManager(tmp_path, ServiceTargets(services.env_target, services.reward_target, services.gateway_target),
                      resolve_trainer, auto_resume=False)
    spec = RunSpec(task_ids=[task], total_steps=6, group_size=8, groups_per_batch=1, max_steps=3,
                   learning_rate=0.02, temperature=1.0, seed=0, extra={"update_epochs": 4})
    record = await jobs.start_run(spec)
    events = [e async for e in jobs.watch(record.run_id)]
    assert jobs.get(record.run_id).state is RunState.SUCCEEDED, events[-1]
    rows = jobs.store.metrics(record.run_id)
    assert [r["step"] for r in rows] == list(range(1, 7))
    assert all(r["env_failures"] == 0 and r["episodes"] == 8 for r in rows)
    assert all(0.9 <= r["action_validity"] <= 1.0 for r in rows), [r["action_validity"] for r in rows]

    trained = EmbeddedLearner(3e-3, seed=0)
    trained.load(Path(jobs.checkpoints(record.run_id)[-1].path))
    after = await greedy_success(services, "trained", trained.weights(), task, held_out)
    assert after > before, (before, after, [r["success_rate"] for r in rows])
    assert after >= 0.75


async def test_grpo_announces_the_next_steps_groups_and_their_sessions_start_primed(services, tmp_path: Path):
    """extra.prime_next_step: each step's rollouts announce the next step's group (PrimeSessions);
    the env's stats show that most sessions of steps 2..3 claimed a session primed for them (step 1
    was announced to nobody)."""
    from halo.trainer.jobs import JobManager
    from halo.trainer.store import RunState
    from halo.runs.context import ServiceTargets
    from halo.cli.registry import resolve_trainer
    from halo.runs.spec import RunSpec

    jobs = JobManager(tmp_path, ServiceTargets(services.env_target, services.reward_target, services.gateway_target),
                      resolve_trainer, auto_resume=False)
    spec = RunSpec(task_ids=["playground-signup"], total_steps=3, group_size=4, groups_per_batch=1, max_steps=2,
                   learning_rate=0.02, temperature=1.0, seed=3, extra={"prime_next_step": True})
    env_before = services.env_manager.stats()
    record = await jobs.start_run(spec)
    events = [e async for e in jobs.watch(record.run_id)]
    env_after = services.env_manager.stats()
    assert jobs.get(record.run_id).state is RunState.SUCCEEDED, events[-1]
    created = env_after["sessions_created"] - env_before["sessions_created"]
    primed = env_after["primed_starts"] - env_before["primed_starts"]
    assert created == 3 * 4 and primed > 2 * 4 / 2, str((primed, created, env_after))


async def test_seeded_rollouts_sample_the_same_actions_however_they_interleave(services):
    """Each episode draws from its own seed stream: 8 concurrent rollouts choose what 8 one-at-a-time rollouts
    choose (a run is reproducible on a busy machine), and another step's key draws differently."""
    from halo.client.env import EnvClient
    from halo.client.policy import PolicyClient
    from halo.client.reward import RewardClient
    from halo.trainers.embedded_learner import EmbeddedLearner
    from halo.rollout.gateway import GatewayPolicy
    from halo.trainers.grpo import rollout_groups
    from halo.rollout.episode import RolloutConfig

    config = RolloutConfig(max_steps=3, screenshots=False)
    async with EnvClient(services.env_target) as env, RewardClient(services.reward_target) as reward, \
            PolicyClient(services.gateway_target) as gateway:
        await gateway.load_adapter("embedded", "seeded", weights=EmbeddedLearner(3e-3, seed=0).weights())
        policy = GatewayPolicy(gateway, "embedded", "seeded", temperature=1.0)

        async def actions(concurrency: int, key: str) -> list[list[str]]:
            groups = await rollout_groups(env, reward, policy, [("playground-signup", 7)], 8, config, concurrency, key)
            assert not any(e.env_failure for e in groups[0])
            return [[repr(t.decision.action) for t in e.transitions] for e in groups[0]]

        together, one_by_one = await actions(8, "0:1"), await actions(1, "0:1")
        assert together == one_by_one
        assert len(set(map(tuple, together))) > 1          # the members of a group still explore differently
        assert await actions(8, "0:2") != together
