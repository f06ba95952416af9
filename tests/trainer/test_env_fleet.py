"""A GRPO run over an env fleet of real processes: three `halo serve env` processes on one
sites server behind one fleet target. The run spreads its sessions over all three; kill -9 of one
mid-run loses only that replica's rollouts (counted, rolled out again elsewhere, never learned from
as a reward) and no completed step; a fourth replica started meanwhile takes new sessions."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest

from halo.cli.registry import resolve_trainer
from halo.client.env import EnvClient
from halo.runs.context import ServiceTargets
from halo.trainer.jobs import JobManager
from halo.trainer.store import RunState

from .test_env_service_chaos import EnvServiceProcess, finish, free_port, spec


#: a Chromium and a Python service starting while a GRPO run and other replicas share the cores:
#: seconds on an idle machine, much longer on a busy one; the test is about routing, not start time
START_PATIENCE_S = 240.0


@pytest.fixture(scope="module")
async def services():
    """One sites server, reward and gateway in this process; the env replicas are processes of their own."""
    from halo.cli.stack import LocalStack
    from halo.sites.server import BackgroundSitesServer, SitesSettings

    sites = BackgroundSitesServer(SitesSettings(port=0, data_dir="")).start()
    try:
        async with LocalStack(with_env=False, with_reward=True, with_gateway=True) as stack:
            stack.sites = sites
            yield stack
    finally:
        sites.stop()


async def created_on(replica: EnvServiceProcess) -> int:
    async with EnvClient(f"127.0.0.1:{replica.port}") as direct:
        return (await direct.pool_stats()).sessions_created


async def wait_for(condition, timeout_s: float, what: str) -> None:
    deadline = asyncio.get_running_loop().time() + timeout_s
    while not await condition():
        assert asyncio.get_running_loop().time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


@pytest.mark.timeout(900)   # four env processes and a GRPO run: minutes on a loaded 2-core machine, ~1 min idle
async def test_a_grpo_run_spreads_over_the_fleet_survives_a_killed_replica_and_takes_a_new_one(
        services, tmp_path: Path, monkeypatch):
    monkeypatch.setenv("HALO_FLEET_REFRESH_S", "1")   # the trainer's fleet client looks again every second
    replicas = [EnvServiceProcess(free_port(), services.sites.url) for _ in range(4)]
    for replica in replicas[:3]:   # one after the other: three Chromiums starting at once crawl on 2 cores
        await replica.start(START_PATIENCE_S)
    try:
        # the fourth is in the list from the start, and nothing listens there yet
        target = ",".join(f"127.0.0.1:{r.port}" for r in replicas)
        jobs = JobManager(tmp_path, ServiceTargets(target, services.reward_target, services.gateway_target),
                          resolve_trainer, auto_resume=False)
        steps = 8
        record = await jobs.start_run(spec(steps, group_size=6, seed=3))

        async def step_done(n: int):
            async def check() -> bool:
                run = jobs.get(record.run_id)
                assert run.state is RunState.RUNNING or run.step >= n, run.error
                return run.step >= n
            return check

        await wait_for(await step_done(1), 240, "step 1")
        # step 1's six sessions went two to each replica (least loaded first), none to the absent
        # fourth; step 2's may already be opening (a replica whose episodes ended first takes more of
        # them), so the spread is read as: every replica took its share, none ran ahead by a group
        created = [await created_on(r) for r in replicas[:3]]
        assert min(created) >= 2 and max(created) - min(created) <= 2, created

        victim = replicas[1]

        async def victim_busy() -> bool:
            # a session that has stepped: the trainer holds it (one still being created would fail over
            # to another replica, losing nothing)
            async with EnvClient(f"127.0.0.1:{victim.port}") as direct:
                return any(s.step_index >= 1 for s in (await direct.list_sessions()).sessions)

        await wait_for(victim_busy, 120, "a stepped session on the victim replica")
        os.kill(victim.proc.pid, signal.SIGSTOP)              # frozen at once: its open sessions cannot finish
        await victim.kill()                                   # then kill -9, sessions open
        await replicas[3].start(START_PATIENCE_S)             # a new replica, already in the target

        async def fourth_took_one() -> bool:
            assert jobs.get(record.run_id).state is RunState.RUNNING, "the run ended before the fourth replica served"
            return await created_on(replicas[3]) > 0

        await wait_for(fourth_took_one, 300, "a session on the fourth replica")   # within a refresh (1 s) + a step
        # What was to be seen has been seen: the run stops after the step in flight (the steps left
        # would only repeat it), and everything it completed must be there.
        await jobs.stop(record.run_id)
        await finish(jobs, record.run_id)
        final = jobs.get(record.run_id)
        assert final.state is RunState.STOPPED and 2 <= final.step < steps, (final.state, final.step, final.error)
        rows = jobs.store.metrics(record.run_id)
        assert [r["step"] for r in rows] == list(range(1, final.step + 1))     # no completed step lost
        assert [c.step for c in jobs.checkpoints(record.run_id)] == list(range(1, final.step + 1))
        lost = sum(r["env_retries"] + r["env_failures"] for r in rows)
        assert lost >= 1, rows                                                 # the killed rollouts, counted
        assert all(r["episodes"] + r["env_failures"] == 6 for r in rows)      # the retried ones replaced them
        assert sum(r["rollouts_redone"] for r in rows) == 0                   # no step rolled out again
    finally:
        await asyncio.gather(*(r.stop() for r in replicas), return_exceptions=True)
