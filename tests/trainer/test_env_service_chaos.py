"""kill -9 of the env service mid-training: the step's episodes come back as environment failures,
the GRPO trainer waits for the env service to serve again, rolls the same batch out again, and the
run completes every step once, nothing lost or repeated, nothing learned from the broken rollouts."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
from pathlib import Path

import pytest

from halo.client.env import EnvClient
from halo.trainer.jobs import JobManager
from halo.trainer.store import RunState
from halo.trainers.context import ServiceTargets
from halo.trainers.registry import resolve_trainer
from halo.trainers.spec import RunSpec


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def start_env_service(port: int, sites_url: str) -> asyncio.subprocess.Process:
    halo = str(Path(sys.executable).parent / "halo")
    proc = await asyncio.create_subprocess_exec(
        halo, "serve", "env", "--port", str(port), "--metrics-port", "-1", "--sites-url", sites_url,
        "--pool-size", "8", "--acquire-timeout-s", "60", "--log-level", "warning",
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )
    async with EnvClient(f"127.0.0.1:{port}") as client:
        for _ in range(600):
            if await client.healthy("halo.v1.EnvService", timeout_s=1):
                return proc
            if proc.returncode is not None:
                break
            await asyncio.sleep(0.1)
    proc.kill()
    raise AssertionError("the env service did not become healthy")


def job_manager(runs_dir: Path, env_port: int, stack) -> JobManager:
    targets = ServiceTargets(f"127.0.0.1:{env_port}", stack.reward_target, stack.gateway_target)
    return JobManager(runs_dir, targets, resolve_trainer, auto_resume=False)


async def wait_for_step(jobs: JobManager, run_id: str, step: int) -> None:
    while jobs.get(run_id).step < step:
        assert jobs.get(run_id).state is RunState.RUNNING, jobs.get(run_id).error
        await asyncio.sleep(0.05)


async def stop_service(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.wait(), 60)


@pytest.fixture(scope="module")
async def services():
    """Sites, reward and gateway in this process; the env service is a process of its own, to kill."""
    from halo.runtime.local import LocalStack

    async with LocalStack(with_reward=True, with_gateway=True) as stack:
        yield stack


async def test_env_service_killed_mid_training_the_step_is_rolled_out_again(services, tmp_path: Path):
    port = free_port()
    env_proc = await start_env_service(port, services.sites.url)
    try:
        jobs = job_manager(tmp_path, port, services)
        spec = RunSpec(task_ids=["playground-signup"], total_steps=4, group_size=4, groups_per_batch=1, max_steps=3,
                       learning_rate=0.02, seed=5, extra={"env_wait_s": 120})
        record = await jobs.start_run(spec)

        await asyncio.wait_for(wait_for_step(jobs, record.run_id, 1), 300)
        await asyncio.sleep(0.5)          # step 2's episodes are under way
        os.kill(env_proc.pid, signal.SIGKILL)
        await env_proc.wait()
        await asyncio.sleep(3)            # the trainer meets the dead service and starts waiting
        assert jobs.get(record.run_id).state is RunState.RUNNING
        env_proc = await start_env_service(port, services.sites.url)   # same address, fresh pool, no sessions

        events = [e async for e in jobs.watch(record.run_id)]
        final = jobs.get(record.run_id)
        assert final.state is RunState.SUCCEEDED, final.error
        rows = jobs.store.metrics(record.run_id)
        assert [r["step"] for r in rows] == [1, 2, 3, 4]                 # nothing lost, nothing repeated
        assert [c.step for c in jobs.checkpoints(record.run_id)] == [1, 2, 3, 4]
        assert sum(r["rollouts_redone"] for r in rows) >= 1
        # what was learned from: complete groups of real episodes only
        assert all(r["episodes"] + r["env_failures"] == 4 and r["env_failures"] <= 2 for r in rows)
        warnings = [e["message"] for e in events if e["type"] == "log" and "environment failures" in e["message"]]
        assert warnings and "env service" in warnings[0] and "rolling the step out again" in warnings[0]
    finally:
        await stop_service(env_proc)


async def test_an_env_service_that_stays_down_fails_the_run_clearly_and_resume_finishes_it(services, tmp_path: Path):
    port = free_port()
    env_proc = await start_env_service(port, services.sites.url)
    try:
        jobs = job_manager(tmp_path, port, services)
        spec = RunSpec(task_ids=["playground-signup"], total_steps=3, group_size=2, groups_per_batch=1, max_steps=2,
                       learning_rate=0.02, seed=1, extra={"env_wait_s": 2, "env_retries": 1})
        record = await jobs.start_run(spec)
        await asyncio.wait_for(wait_for_step(jobs, record.run_id, 1), 300)
        os.kill(env_proc.pid, signal.SIGKILL)
        await env_proc.wait()
        [e async for e in jobs.watch(record.run_id)]
        failed = jobs.get(record.run_id)
        assert failed.state is RunState.FAILED and 1 <= failed.step < 3, failed
        assert "environment failures" in failed.error and "did not serve again within 2s" in failed.error, failed.error
        assert "Resume the run" in failed.error

        env_proc = await start_env_service(port, services.sites.url)
        await jobs.resume(record.run_id)
        [e async for e in jobs.watch(record.run_id)]
        final = jobs.get(record.run_id)
        assert final.state is RunState.SUCCEEDED, final.error
        assert [r["step"] for r in jobs.store.metrics(record.run_id)] == [1, 2, 3]
    finally:
        await stop_service(env_proc)


async def test_a_stop_while_waiting_for_the_env_service_takes_effect_at_once(services, tmp_path: Path):
    port = free_port()
    env_proc = await start_env_service(port, services.sites.url)
    try:
        jobs = job_manager(tmp_path, port, services)
        spec = RunSpec(task_ids=["playground-signup"], total_steps=3, group_size=2, groups_per_batch=1, max_steps=2,
                       learning_rate=0.02, seed=2, extra={"env_wait_s": 600})
        record = await jobs.start_run(spec)
        await asyncio.wait_for(wait_for_step(jobs, record.run_id, 1), 300)
        os.kill(env_proc.pid, signal.SIGKILL)
        await env_proc.wait()

        async def stop_once_waiting() -> list[dict]:
            seen = []
            async for event in jobs.watch(record.run_id):
                seen.append(event)
                if event["type"] == "log" and "waiting for the env service" in event["message"]:
                    await jobs.stop(record.run_id)
            return seen

        await asyncio.wait_for(stop_once_waiting(), 120)   # not the 600 s the run would wait
        stopped = jobs.get(record.run_id)
        assert stopped.state is RunState.STOPPED and 1 <= stopped.step < 3, stopped

        env_proc = await start_env_service(port, services.sites.url)
        await jobs.resume(record.run_id)
        [e async for e in jobs.watch(record.run_id)]
        assert jobs.get(record.run_id).state is RunState.SUCCEEDED, jobs.get(record.run_id).error
        assert [r["step"] for r in jobs.store.metrics(record.run_id)] == [1, 2, 3]
    finally:
        await stop_service(env_proc)
