"""The trainer service's job machinery: durable runs, watch streams, stop/resume, crash recovery.

The trainer here is a small deterministic counting trainer defined by the test (the job machinery
is trainer-agnostic); GRPO itself is exercised in test_grpo.py.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from halo.errors import FailedPrecondition, InvalidArgument, NotFound
from halo.runtime.server import start_service
from halo.trainer.config import TrainerSettings
from halo.trainer.jobs import JobManager
from halo.trainer.server import build_service
from halo.trainer.store import RunState
from halo.runs.context import RunContext, ServiceTargets
from halo.runs.spec import RunSpec

TARGETS = ServiceTargets(env="unused:1")


def counting_trainer(step_delay: float = 0.05, fail_at: int | None = None):
    """Counts steps; its 'weights' are the running total, saved in and restored from checkpoints."""

    async def train(ctx: RunContext) -> None:
        total = 0
        if ctx.last_checkpoint is not None:
            total = json.loads((ctx.last_checkpoint / "weights.json").read_text())["total"]
        for step in range(ctx.start_step + 1, ctx.spec.total_steps + 1):
            if ctx.stop_requested():
                return
            await asyncio.sleep(step_delay)
            if fail_at == step:
                raise RuntimeError("boom")
            total += step
            weights = {"total": total}
            await ctx.complete_step(step, {"mean_reward": float(step)}, lambda d: (d / "weights.json").write_text(json.dumps(weights)))

    return lambda spec: train


def spec(steps: int = 5, **kw) -> RunSpec:
    return RunSpec(task_ids=["playground-signup"], total_steps=steps, **kw)


async def wait_state(jobs: JobManager, run_id: str, *states: RunState, timeout: float = 10) -> None:
    async def poll():
        while jobs.get(run_id).state not in states:
            await asyncio.sleep(0.02)

    await asyncio.wait_for(poll(), timeout)


async def test_run_completes_with_checkpoints_metrics_and_events(tmp_path: Path):
    jobs = JobManager(tmp_path, TARGETS, counting_trainer())
    record = await jobs.start_run(spec(4))
    await wait_state(jobs, record.run_id, RunState.SUCCEEDED)
    assert jobs.get(record.run_id).step == 4
    assert [c.step for c in jobs.checkpoints(record.run_id)] == [1, 2, 3, 4]
    assert [r["step"] for r in jobs.store.metrics(record.run_id)] == [1, 2, 3, 4]
    events = [e async for e in jobs.watch(record.run_id)]
    assert [e["sequence"] for e in events] == list(range(1, len(events) + 1))
    assert events[0]["type"] == "state" and events[-1]["state"] == "succeeded"
    assert sum(e["type"] == "metrics" for e in events) == 4
    replay = [e async for e in jobs.watch(record.run_id, after_sequence=events[-3]["sequence"])]
    assert replay == events[-2:]


async def test_stop_then_resume_loses_and_repeats_nothing(tmp_path: Path):
    jobs = JobManager(tmp_path, TARGETS, counting_trainer(step_delay=0.1))
    record = await jobs.start_run(spec(8))
    while jobs.get(record.run_id).step < 2:
        await asyncio.sleep(0.02)
    await jobs.stop(record.run_id)
    await wait_state(jobs, record.run_id, RunState.STOPPED)
    stopped_at = jobs.get(record.run_id).step
    assert 2 <= stopped_at < 8
    with pytest.raises(FailedPrecondition):
        await jobs.stop(record.run_id)
    await jobs.resume(record.run_id)
    await wait_state(jobs, record.run_id, RunState.SUCCEEDED)
    assert [r["step"] for r in jobs.store.metrics(record.run_id)] == list(range(1, 9))
    final = jobs.checkpoints(record.run_id)[-1]
    assert json.loads((Path(final.path) / "weights.json").read_text())["total"] == sum(range(1, 9))
    with pytest.raises(FailedPrecondition, match="already finished"):
        await jobs.resume(record.run_id)


async def test_service_restart_resumes_interrupted_runs_from_the_last_checkpoint(tmp_path: Path):
    first = JobManager(tmp_path, TARGETS, counting_trainer(step_delay=0.1))
    record = await first.start_run(spec(6))
    while first.get(record.run_id).step < 3:
        await asyncio.sleep(0.02)
    first._runs[record.run_id].task.cancel()  # the process "dies": no graceful stop, state stays running on disk
    await asyncio.sleep(0.05)
    on_disk = first.store.load(record.run_id)
    # simulate the crash leaving a step's metrics written but its checkpoint missing
    first.store.append_metrics(record.run_id, on_disk.step + 1, {"mean_reward": -1.0})

    second = JobManager(tmp_path, TARGETS, counting_trainer(step_delay=0.01), auto_resume=True)
    await second.start()
    await wait_state(second, record.run_id, RunState.SUCCEEDED)
    assert [r["step"] for r in second.store.metrics(record.run_id)] == [1, 2, 3, 4, 5, 6]
    assert all(r["mean_reward"] == r["step"] for r in second.store.metrics(record.run_id))
    states = [e["state"] for e in second.store.events(record.run_id) if e["type"] == "state"]
    assert "interrupted" in states and states[-1] == "succeeded"


async def test_failing_run_is_failed_and_the_service_lives_on(tmp_path: Path):
    jobs = JobManager(tmp_path, TARGETS, counting_trainer(fail_at=2))
    record = await jobs.start_run(spec(4))
    await wait_state(jobs, record.run_id, RunState.FAILED)
    assert "boom" in jobs.get(record.run_id).error and jobs.get(record.run_id).step == 1
    with pytest.raises(NotFound):
        jobs.get("nope")
    with pytest.raises(InvalidArgument, match="task_ids"):
        await jobs.start_run(RunSpec(task_ids=[]))


async def test_trainer_service_over_grpc_watch_and_list(tmp_path: Path):
    from halo.client.trainer import TrainerClient

    settings = TrainerSettings(port=0, metrics_port=-1, runs_dir=str(tmp_path))
    running = await start_service(build_service(settings, resolver=counting_trainer(step_delay=0.02)), settings)
    try:
        async with TrainerClient(running.target) as client:
            run = await client.start_run(spec(3, name="grpc-run"))
            events = [e async for e in client.watch(run.run_id)]
            kinds = [e.WhichOneof("event") for e in events]
            assert kinds.count("metrics") == 3 and kinds.count("checkpoint") == 3
            assert events[-1].state_change.message.startswith("finished")
            done = await client.get_run(run.run_id)
            assert done.step == 3 and done.spec.name == "grpc-run" and done.last_metrics["mean_reward"] == 3.0
            assert [c.step for c in await client.list_checkpoints(run.run_id)] == [1, 2, 3]
            assert [r.run_id for r in await client.list_runs()] == [run.run_id]
            with pytest.raises(NotFound):
                await client.get_run("missing")
    finally:
        await running.stop(grace=1)


async def test_graceful_service_shutdown_interrupts_runs_and_the_next_start_resumes(tmp_path: Path):
    jobs = JobManager(tmp_path, TARGETS, counting_trainer(step_delay=0.1))
    record = await jobs.start_run(spec(5))
    while jobs.get(record.run_id).step < 1:
        await asyncio.sleep(0.02)
    await jobs.close()
    assert jobs.store.load(record.run_id).state is RunState.INTERRUPTED
    again = JobManager(tmp_path, TARGETS, counting_trainer(step_delay=0.01))
    await again.start()
    await wait_state(again, record.run_id, RunState.SUCCEEDED)
    assert [r["step"] for r in again.store.metrics(record.run_id)] == [1, 2, 3, 4, 5]
