"""Asynchronous GRPO (`max_staleness` K) on the real services: env + reward + gateway with the
embedded policy, real Chromium, the trainer service as a real process for the kill -9."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from pathlib import Path

import pytest

from halo.runs.spec import RunSpec
from tests.trainer.test_trainer_service_crash import free_port, start_trainer


@pytest.fixture(scope="module")
async def services():
    from halo.cli.stack import LocalStack

    async with LocalStack(env_overrides={"pool_size": 8, "acquire_timeout_s": 60}, with_reward=True, with_gateway=True) as stack:
        yield stack


def spec(k: int, steps: int, **extra) -> RunSpec:
    return RunSpec(task_ids=["playground-signup", "playground-name"], total_steps=steps, group_size=4,
                   groups_per_batch=2, max_steps=3, learning_rate=0.02, temperature=1.0, seed=5,
                   extra={"update_epochs": 4, "concurrency": 4, "max_staleness": k} | extra)


@pytest.mark.timeout(900)
async def test_k1_overlaps_rollouts_with_updates_and_uses_nothing_staler_than_k(services, tmp_path: Path):
    from halo.cli.registry import resolve_trainer
    from halo.runs.context import ServiceTargets
    from halo.trainer.jobs import JobManager
    from halo.trainer.store import RunState

    jobs = JobManager(tmp_path, ServiceTargets(services.env_target, services.reward_target, services.gateway_target),
                      resolve_trainer, auto_resume=False)
    record = await jobs.start_run(spec(1, 4))
    events = [e async for e in jobs.watch(record.run_id)]
    assert jobs.get(record.run_id).state is RunState.SUCCEEDED, events[-1]
    rows = jobs.store.metrics(record.run_id)
    assert [r["step"] for r in rows] == [1, 2, 3, 4]
    for r in rows:
        assert r["episodes"] + r["env_failures"] == 8          # every episode of the step, once
        # (sampled at most K=1 versions behind, nothing dropped as stale: the launch rule guarantees
        # both, so they are not asserted; the overlap below is what the async mode must achieve)
    for before, r in zip(rows, rows[1:]):
        # step N's rollouts started before step N-1's update was done: they ran during it ...
        assert r["async/rollout_start"] < before["async/update_end"], (before, r)
        # ... so the learner never waited for a whole step of rollouts
        assert r["async/learner_idle_s"] < r["async/rollout_end"] - r["async/rollout_start"], r
    assert any(r["async/version"] == r["step"] - 2 for r in rows[1:])   # some step did sample one version behind


@pytest.mark.timeout(900)
async def test_kill_9_mid_run_in_async_mode_resumes_losing_and_repeating_nothing(services, tmp_path: Path):
    from halo.client.trainer import TrainerClient
    from halo.v1 import trainer_pb2 as pb

    port, runs = free_port(), tmp_path / "runs"
    proc = await start_trainer(port, runs, services)
    try:
        async with TrainerClient(f"127.0.0.1:{port}") as client:
            run_id = (await client.start_run(spec(2, 4, eval_every=0))).run_id
        state = runs / run_id / "run.json"
        deadline = time.monotonic() + 420
        while not (state.exists() and json.loads(state.read_text())["step"] >= 2):
            assert time.monotonic() < deadline, "the run did not reach step 2"
            await asyncio.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)      # steps 3 and 4 are rolling out (K=2) when it dies
        await proc.wait()
        killed_at, killed_time = json.loads(state.read_text())["step"], time.time()
        assert 2 <= killed_at < 4

        proc = await start_trainer(port, runs, services)   # auto-resume
        async with TrainerClient(f"127.0.0.1:{port}") as client:
            _ = [e async for e in client.watch(run_id)]
            final = await client.get_run(run_id)
            checkpoints = await client.list_checkpoints(run_id)
        assert final.state == pb.RUN_STATE_SUCCEEDED, final.error
        assert [c.step for c in checkpoints] == [1, 2, 3, 4]
        rows = [json.loads(line) for line in (runs / run_id / "metrics.jsonl").read_text().splitlines()]
        assert [r["step"] for r in rows] == [1, 2, 3, 4]     # no step lost, none recorded twice
        for r in rows:
            m = r["metrics"] if "metrics" in r else r
            assert m["episodes"] + m["env_failures"] == 8      # each episode counted once
            if r["step"] > killed_at:
                # rolled out again after the resume, from the checkpoint's weights or newer: the
                # rollouts in flight at the kill were not used
                assert m["async/rollout_start"] > killed_time and m["async/version"] >= killed_at, m
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
            await asyncio.wait_for(proc.wait(), 30)
