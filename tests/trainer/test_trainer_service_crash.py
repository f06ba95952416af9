"""kill -9 of the trainer service mid-run: the restarted service resumes the GRPO run from its last
checkpoint, and no completed step is lost or repeated."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sys
from pathlib import Path

import pytest

from halo.client.trainer import TrainerClient
from halo.runs.spec import RunSpec
from halo.v1 import trainer_pb2 as pb


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def start_trainer(port: int, runs_dir: Path, stack) -> asyncio.subprocess.Process:
    halo = str(Path(sys.executable).parent / "halo")
    proc = await asyncio.create_subprocess_exec(
        halo, "serve", "trainer", "--port", str(port), "--metrics-port", "-1", "--runs-dir", str(runs_dir),
        "--env-target", stack.env_target, "--reward-target", stack.reward_target,
        "--gateway-target", stack.gateway_target, "--log-level", "warning",
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )
    client = TrainerClient(f"127.0.0.1:{port}")
    try:
        for _ in range(300):
            if await client.healthy(timeout_s=1):
                return proc
            await asyncio.sleep(0.1)
    finally:
        await client.close()
    proc.kill()
    raise AssertionError("trainer service did not become healthy")


@pytest.fixture(scope="module")
async def services():
    from halo.cli.stack import LocalStack

    async with LocalStack(env_overrides={"pool_size": 8, "acquire_timeout_s": 60}, with_reward=True, with_gateway=True) as stack:
        yield stack


async def test_kill_9_mid_run_then_restart_resumes_without_losing_or_repeating_steps(services, tmp_path: Path):
    port = free_port()
    spec = RunSpec(task_ids=["playground-signup"], total_steps=5, group_size=4, groups_per_batch=1, max_steps=3,
                   learning_rate=0.02, seed=3)
    proc = await start_trainer(port, tmp_path, services)
    try:
        async with TrainerClient(f"127.0.0.1:{port}") as client:
            run = await client.start_run(spec)
            while (await client.get_run(run.run_id)).step < 2:
                await asyncio.sleep(0.2)
        os.kill(proc.pid, signal.SIGKILL)
        await proc.wait()
        killed_at = json.loads((tmp_path / run.run_id / "run.json").read_text())["step"]
        assert 2 <= killed_at < 5

        proc = await start_trainer(port, tmp_path, services)  # auto-resume on start
        async with TrainerClient(f"127.0.0.1:{port}") as client:
            events = [e async for e in client.watch(run.run_id)]
            final = await client.get_run(run.run_id)
            checkpoints = await client.list_checkpoints(run.run_id)
        assert final.state == pb.RUN_STATE_SUCCEEDED, final.error
        assert final.step == 5
        assert [c.step for c in checkpoints] == [1, 2, 3, 4, 5]
        steps = [json.loads(line)["step"] for line in (tmp_path / run.run_id / "metrics.jsonl").read_text().splitlines()]
        assert steps == [1, 2, 3, 4, 5]  # nothing lost, nothing repeated
        states = [pb.RunState.Name(e.state_change.state) for e in events if e.WhichOneof("event") == "state_change"]
        assert "RUN_STATE_INTERRUPTED" in states and states[-1] == "RUN_STATE_SUCCEEDED"
        resumed = [e.state_change.message for e in events if e.WhichOneof("event") == "state_change" and "resuming" in e.state_change.message]
        assert resumed and f"step-{killed_at:06d}" in resumed[-1]
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
            await asyncio.wait_for(proc.wait(), 30)
