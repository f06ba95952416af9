"""kill -9 of the env service mid-training: the step's episodes come back as environment failures,
the GRPO trainer waits for the env service to serve again, rolls the same batch out again, and the
run completes every step once, nothing lost or repeated, nothing learned from the broken rollouts."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from halo.client.env import EnvClient
from halo.trainer.jobs import JobManager
from halo.trainer.store import RunRecord, RunState
from halo.runs.context import ServiceTargets
from halo.cli.registry import resolve_trainer
from halo.runs.spec import RunSpec


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class EnvServiceProcess:
    """`halo serve env` as a process of its own, on a fixed port, to kill -9 and start again."""

    port: int
    sites_url: str
    proc: asyncio.subprocess.Process | None = None

    async def start(self, patience_s: float = 60.0) -> None:
        halo = str(Path(sys.executable).parent / "halo")
        self.proc = await asyncio.create_subprocess_exec(
            halo, "serve", "env", "--port", str(self.port), "--metrics-port", "-1", "--sites-url", self.sites_url,
            "--pool-size", "8", "--acquire-timeout-s", "60", "--log-level", "warning",
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
        )
        async with EnvClient(f"127.0.0.1:{self.port}") as client:
            deadline = asyncio.get_running_loop().time() + patience_s
            while asyncio.get_running_loop().time() < deadline:
                if await client.healthy("halo.v1.EnvService", timeout_s=1):
                    return
                if self.proc.returncode is not None:
                    break
                await asyncio.sleep(0.1)
        self.proc.kill()
        raise AssertionError("the env service did not become healthy")

    async def kill(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        await self.proc.wait()

    async def stop(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
            await asyncio.wait_for(self.proc.wait(), 60)


@asynccontextmanager
async def env_service(sites_url: str) -> AsyncIterator[EnvServiceProcess]:
    service = EnvServiceProcess(free_port(), sites_url)
    await service.start()
    try:
        yield service
    finally:
        await service.stop()


async def train_then_kill_env(env: EnvServiceProcess, stack, runs_dir: Path, spec: RunSpec) -> tuple[JobManager, RunRecord]:
    """Start a GRPO run against `env`; kill -9 the env service once the run's first step is done."""
    targets = ServiceTargets(f"127.0.0.1:{env.port}", stack.reward_target, stack.gateway_target)
    jobs = JobManager(runs_dir, targets, resolve_trainer, auto_resume=False)
    record = await jobs.start_run(spec)

    async def first_step_done() -> None:
        while jobs.get(record.run_id).step < 1:
            assert jobs.get(record.run_id).state is RunState.RUNNING, jobs.get(record.run_id).error
            await asyncio.sleep(0.05)

    await asyncio.wait_for(first_step_done(), 300)
    await env.kill()
    return jobs, record


async def finish(jobs: JobManager, run_id: str) -> list[dict]:
    """The run's events until it ends."""
    return [e async for e in jobs.watch(run_id)]


def spec(steps: int, group_size: int, seed: int, **extra) -> RunSpec:
    return RunSpec(task_ids=["playground-signup"], total_steps=steps, group_size=group_size, groups_per_batch=1,
                   max_steps=3, learning_rate=0.02, seed=seed, extra=extra)


@pytest.fixture(scope="module")
async def services():
    """Sites, reward and gateway in this process; the env service is a process of its own, to kill."""
    from halo.cli.stack import LocalStack

    async with LocalStack(with_reward=True, with_gateway=True) as stack:
        yield stack


async def test_env_service_killed_mid_training_the_step_is_rolled_out_again(services, tmp_path: Path):
    async with env_service(services.sites.url) as env:
        jobs, record = await train_then_kill_env(env, services, tmp_path, spec(4, group_size=4, seed=5, env_wait_s=120))
        await asyncio.sleep(3)            # the trainer meets the dead service and starts waiting
        assert jobs.get(record.run_id).state is RunState.RUNNING
        await env.start()                 # same address, fresh pool, no sessions

        events = await finish(jobs, record.run_id)
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


async def test_an_env_service_that_stays_down_fails_the_run_clearly_and_resume_finishes_it(services, tmp_path: Path):
    async with env_service(services.sites.url) as env:
        jobs, record = await train_then_kill_env(env, services, tmp_path,
                                                 spec(3, group_size=2, seed=1, env_wait_s=2, env_retries=1))
        await finish(jobs, record.run_id)
        failed = jobs.get(record.run_id)
        assert failed.state is RunState.FAILED and 1 <= failed.step < 3, failed
        assert "environment failures" in failed.error and "did not serve again within 2s" in failed.error, failed.error
        assert "Resume the run" in failed.error

        await env.start()
        await jobs.resume(record.run_id)
        await finish(jobs, record.run_id)
        assert jobs.get(record.run_id).state is RunState.SUCCEEDED, jobs.get(record.run_id).error
        assert [r["step"] for r in jobs.store.metrics(record.run_id)] == [1, 2, 3]


async def test_a_stop_while_waiting_for_the_env_service_takes_effect_at_once(services, tmp_path: Path):
    async with env_service(services.sites.url) as env:
        jobs, record = await train_then_kill_env(env, services, tmp_path, spec(3, group_size=2, seed=2, env_wait_s=600))

        async def stop_once_waiting() -> None:
            async for event in jobs.watch(record.run_id):
                if event["type"] == "log" and "waiting for the env service" in event["message"]:
                    await jobs.stop(record.run_id)

        await asyncio.wait_for(stop_once_waiting(), 120)   # not the 600 s the run would wait
        stopped = jobs.get(record.run_id)
        assert stopped.state is RunState.STOPPED and 1 <= stopped.step < 3, stopped

        await env.start()
        await jobs.resume(record.run_id)
        await finish(jobs, record.run_id)
        assert jobs.get(record.run_id).state is RunState.SUCCEEDED, jobs.get(record.run_id).error
        assert [r["step"] for r in jobs.store.metrics(record.run_id)] == [1, 2, 3]
