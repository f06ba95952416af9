"""Asynchronous GRPO's scheduling parts (halo.trainers.async_rollouts) on their own: which step may
start when, who gets an env slot first, the staleness rule, the adapter versions kept loaded.
The runs on the real services are in test_async_grpo.py."""

from __future__ import annotations

import asyncio

import pytest

from halo.rollout.episode import Episode
from halo.trainers.async_rollouts import (AdapterVersions, AsyncSettings, PrioritySlots, Redone, RolloutPipeline,
                                          StepRollouts, admit)


def episodes(version: int | None, n: int = 2, failed: int = 0) -> list[Episode]:
    group = [Episode("t", 0, weight_version=version) for _ in range(n)]
    for e in group[:failed]:
        e.env_failure = True
    return group


def test_settings_refuse_what_they_cannot_mean():
    assert AsyncSettings.from_extra({}) == AsyncSettings(0, "drop")
    assert AsyncSettings.from_extra({"max_staleness": 2, "stale_rule": "correct"}) == AsyncSettings(2, "correct")
    with pytest.raises(ValueError, match="max_staleness"):
        AsyncSettings.from_extra({"max_staleness": -1})
    with pytest.raises(ValueError, match="stale_rule"):
        AsyncSettings.from_extra({"stale_rule": "ignore"})


def test_a_group_more_than_k_versions_behind_is_dropped_or_kept_as_corrected():
    rolled = StepRollouts(step=6, version=3, groups=[episodes(4), episodes(2, failed=1), episodes(3)])
    # learner at version 5 (it updates step 6): staleness 1, 3, 2
    dropped = admit(rolled, learner_version=5, settings=AsyncSettings(2, "drop"))
    assert [g[0].weight_version for g in dropped.groups] == [4, 3]
    assert dropped.stale_dropped == 1 and dropped.stale_corrected == 0   # the env failure is not counted
    assert sorted(dropped.staleness) == [1, 1, 2, 2]
    assert max(dropped.staleness) <= 2                 # nothing older than K is used as it is
    corrected = admit(rolled, learner_version=5, settings=AsyncSettings(2, "correct"))
    assert len(corrected.groups) == 3 and corrected.stale_dropped == 0 and corrected.stale_corrected == 1
    on_policy = admit(StepRollouts(1, 0, [episodes(0)]), learner_version=0, settings=AsyncSettings(0))
    assert on_policy.staleness == [0, 0] and on_policy.stale_dropped == 0


async def test_env_slots_go_to_the_oldest_step_first():
    slots = PrioritySlots(1)
    order: list[int] = []
    await slots.acquire(0)

    async def wants(step: int) -> None:
        async with slots.for_step(step):
            order.append(step)

    waiting = [asyncio.create_task(wants(s)) for s in (5, 3, 4)]
    await asyncio.sleep(0.01)
    slots.release()
    await asyncio.gather(*waiting)
    assert order == [3, 4, 5]


async def test_a_cancelled_waiter_neither_keeps_nor_loses_a_slot():
    slots = PrioritySlots(1)
    await slots.acquire(0)
    waiter = asyncio.create_task(slots.acquire(1))
    await asyncio.sleep(0.01)
    waiter.cancel()
    await asyncio.gather(waiter, return_exceptions=True)
    slots.release()
    await asyncio.wait_for(slots.acquire(2), 1)   # the slot came back


@pytest.mark.parametrize("k", [0, 1, 2])
async def test_step_m_starts_only_once_the_learner_holds_version_m_minus_1_minus_k(k):
    version = 0
    started: dict[int, int] = {}   # step -> learner version when its rollouts started

    async def roll(step, sampled_version, limit):
        started[step] = version
        async with limit:
            await asyncio.sleep(0.01)
        return [episodes(sampled_version)], Redone()

    pipeline = RolloutPipeline(AsyncSettings(k), 1, 6, roll, lambda: version, slots=2)
    try:
        for step in range(1, 7):
            pipeline.start(step - 1)
            rolled = await pipeline.take(step)
            assert rolled.version == started[step] and all(e.weight_version == rolled.version for e in rolled.groups[0])
            await asyncio.sleep(0.02)     # the update: later steps may run now
            version = step
            if k:
                pipeline.start(step)
        assert all(started[m] >= m - 1 - k for m in started), started
        if k:   # and they did start as early as allowed, not later
            assert any(started[m] < m - 1 for m in started), started
        else:
            assert all(started[m] == m - 1 for m in started), started
    finally:
        await pipeline.close()


async def test_adapter_versions_keep_the_k_plus_1_newest_and_never_reload_a_name():
    loads, unloads = [], []

    async def load(name, version):
        loads.append(name)

    async def unload(name):
        unloads.append(name)

    versions = AdapterVersions(load, unload, "r1", max_staleness=2)
    for v in range(5):
        await versions.publish(v)
    assert loads == [f"run-r1-v{v}" for v in range(5)] and len(set(loads)) == 5
    assert unloads == ["run-r1-v0", "run-r1-v1"] and versions.loaded == [2, 3, 4]
    await versions.unload_all()
    assert unloads[2:] == ["run-r1-v2", "run-r1-v3", "run-r1-v4"]
    sync = AdapterVersions(load, unload, "r2", max_staleness=0)
    await sync.publish(0), await sync.publish(1)
    assert loads[-2:] == ["run-r2", "run-r2"] and sync.loaded == [1]   # K=0: one name, as before
