"""Chaos under a GRPO run, with real processes.

kill -9 of the env service mid-training: the step's episodes come back as environment failures,
the GRPO trainer waits for the env service to serve again, rolls the same batch out again, and the
run completes every step once, nothing lost or repeated, nothing learned from the broken rollouts.

kill -9 of the sites server (restarted on its data directory) and of a Chromium of the env
service during one run: every episode those faults touched is an environment failure (dropped,
or its step rolled out again), none is scored as the agent's failure, and the step metrics count
what was lost.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psutil
import pytest

from halo.agent import actions as A
from halo.client.env import EnvClient
from halo.v1 import common_pb2 as cpb
from halo.trainer.jobs import JobManager
from halo.trainer.store import RunRecord, RunState
from halo.runs.context import ServiceTargets
from halo.cli.registry import resolve_trainer
from halo.runs.spec import RunSpec
from tests.chromium import chromium_browser_pids, chromium_renderers


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServiceProcess:
    """A `halo serve ...` process of its own, on a fixed port, to kill -9 and start again."""

    proc: asyncio.subprocess.Process | None = None

    async def _spawn(self, *args: str) -> None:
        halo = str(Path(sys.executable).parent / "halo")
        self.proc = await asyncio.create_subprocess_exec(
            halo, "serve", *args, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
        )

    async def _until_ready(self, ready, what: str, patience_s: float = 60.0) -> None:
        assert self.proc is not None
        deadline = asyncio.get_running_loop().time() + patience_s
        while asyncio.get_running_loop().time() < deadline:
            if await ready():
                return
            if self.proc.returncode is not None:
                break
            await asyncio.sleep(0.1)
        self.proc.kill()
        raise AssertionError(f"{what} did not become healthy")

    async def kill(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        await self.proc.wait()

    async def stop(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
            await asyncio.wait_for(self.proc.wait(), 60)


@dataclass
class EnvServiceProcess(ServiceProcess):
    """`halo serve env`."""

    port: int
    sites_url: str

    async def start(self, patience_s: float = 60.0) -> None:
        await self._spawn("env", "--port", str(self.port), "--metrics-port", "-1", "--sites-url", self.sites_url,
                          "--pool-size", "8", "--acquire-timeout-s", "60", "--log-level", "warning")
        async with EnvClient(f"127.0.0.1:{self.port}") as client:
            await self._until_ready(lambda: client.healthy("halo.v1.EnvService", timeout_s=1), "the env service",
                                    patience_s)


@dataclass
class SitesProcess(ServiceProcess):
    """`halo serve sites` on a data directory: a restarted server serves open sessions where they were."""

    port: int
    data_dir: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        await self._spawn("sites", "--port", str(self.port), "--data-dir", str(self.data_dir))

        async def answers() -> bool:
            try:
                async with httpx.AsyncClient(timeout=1) as http:
                    return (await http.get(f"{self.url}/__halo/health")).status_code == 200
            except httpx.HTTPError:
                return False

        await self._until_ready(answers, "the sites server")


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


# ------------------------------------------------------------------ the sites server and a Chromium

#: What a fault of the sites server looks like to an agent whose episode it was not noticed in.
FAULT_SIGNS = ("chrome-error://", "net::ERR_", "ERR_CONNECTION")


@dataclass
class Recorded:
    """Every episode the run rolled out (kept, dropped, or in a rollout thrown away), and the state
    each evaluation was given: a spy on the trainer's own calls, the episodes themselves are real."""

    episodes: list = field(default_factory=list)
    evaluated: list[tuple[str, str]] = field(default_factory=list)   # (task, task of the state scored)


@pytest.fixture
def recorded(monkeypatch) -> Recorded:
    from halo.client.reward import RewardClient
    from halo.rollout import groups   # where GRPO's group rollouts call run_episode

    seen = Recorded()
    run_episode, evaluate = groups.run_episode, RewardClient.evaluate

    async def recording_run_episode(*args, **kwargs):
        episode = await run_episode(*args, **kwargs)
        seen.episodes.append(episode)
        return episode

    async def recording_evaluate(self, task_id, state_json, *args, **kwargs):
        seen.evaluated.append((task_id, json.loads(state_json).get("task_id", "") if state_json else ""))
        return await evaluate(self, task_id, state_json, *args, **kwargs)

    monkeypatch.setattr(groups, "run_episode", recording_run_episode)
    monkeypatch.setattr(RewardClient, "evaluate", recording_evaluate)
    return seen


def fault_signs(episode) -> list[str]:
    """Traces of an infrastructure fault in an episode that was scored as the agent's own."""
    texts = [t.context.page.url for t in episode.transitions] + [t.action_error for t in episode.transitions]
    if episode.final_page is not None:
        texts.append(episode.final_page.url)
    return [text for text in texts if any(sign in text for sign in FAULT_SIGNS)]


@pytest.mark.timeout(900)   # three processes and Chromium: minutes on a loaded 2-core machine
async def test_sites_server_and_a_chromium_killed_mid_training_are_env_failures_never_task_failures(
        services, recorded: Recorded, tmp_path: Path):
    sites = SitesProcess(free_port(), tmp_path / "sites")
    await sites.start()
    try:
        async with env_service(sites.url) as env, EnvClient(f"127.0.0.1:{env.port}") as probe:
            targets = ServiceTargets(f"127.0.0.1:{env.port}", services.reward_target, services.gateway_target)
            jobs = JobManager(tmp_path / "runs", targets, resolve_trainer, auto_resume=False)
            record = await jobs.start_run(spec(4, group_size=4, seed=11, env_wait_s=120))

            async def mid_rollout_of_step(step: int) -> None:
                """Once `step - 1` steps are done and episodes of `step` are open in the env."""
                while jobs.get(record.run_id).step < step - 1 or (await probe.pool_stats()).active_sessions == 0:
                    assert jobs.get(record.run_id).state is RunState.RUNNING, jobs.get(record.run_id).error
                    await asyncio.sleep(0.05)

            await asyncio.wait_for(mid_rollout_of_step(2), 300)
            await sites.kill()                      # mid-episode: pages, /config and /finish all refused
            await asyncio.sleep(3)
            await sites.start()                     # same port, same data directory
            await asyncio.wait_for(mid_rollout_of_step(3), 300)
            browsers = chromium_browser_pids(psutil.Process(env.proc.pid))
            assert len(browsers) == 1, f"the env service should run one Chromium, found {sorted(browsers)}"
            os.kill(browsers.pop(), signal.SIGKILL)  # every context on it dies with it

            await asyncio.wait_for(finish(jobs, record.run_id), 600)
            final = jobs.get(record.run_id)
            stats = await probe.pool_stats()
    finally:
        await sites.stop()

    assert final.state is RunState.SUCCEEDED, final.error
    rows = jobs.store.metrics(record.run_id)
    assert [r["step"] for r in rows] == [1, 2, 3, 4]             # the run finished, no step lost or repeated
    assert stats.browser_restarts == 1
    episodes = recorded.episodes
    lost = [e for e in episodes if e.env_failure]
    scored = [e for e in episodes if not e.env_failure]
    # both faults cost episodes, and each of those is an environment failure
    assert any("sites server" in e.env_failure_reason or "did not answer" in e.env_failure_reason
               or "/config" in e.env_failure_reason or "/finish" in e.env_failure_reason for e in lost), \
        [e.env_failure_reason for e in lost]
    assert any(word in e.env_failure_reason for e in lost for word in ("browser", "closed", "crashed")), \
        [e.env_failure_reason for e in lost]
    # no episode scored as the agent's own carries a trace of either fault ...
    assert [fault_signs(e) for e in scored if fault_signs(e)] == []
    # ... and every evaluation scored the session's own state, never a fresh default one
    assert recorded.evaluated and all(task == state_task for task, state_task in recorded.evaluated), recorded.evaluated
    # the metrics account for every episode attempt: learned from, dropped as an env failure, lost
    # and rolled out again (env_retries), or in a rollout of the step that was thrown away
    assert sum(r["episodes"] + r["env_failures"] + r["env_retries"] + r["attempts_redone"] for r in rows) \
        == len(episodes)
    # each fault shows in the metrics: episodes dropped, retried one by one, or a step's rollout redone
    assert sum(r["env_failures"] + r["env_retries"] + r["rollouts_redone"] for r in rows) >= 2
    print("\nchaos: per step (episodes learned from, env_failures, env_retries, rollouts_redone):",
          [(r["step"], r["episodes"], r["env_failures"], r["env_retries"], r["rollouts_redone"]) for r in rows])
    print(f"chaos: {len(episodes)} episodes rolled out, {len(lost)} lost to infrastructure "
          f"({sum(r['env_failures'] for r in rows):g} dropped from kept rollouts, "
          f"{sum(r['env_retries'] for r in rows):g} retried one by one, "
          f"{sum(r['rollouts_redone'] for r in rows):g} rollouts redone), "
          f"{sum(r['episodes'] for r in rows):g} learned from, 0 with a fault trace; reasons: "
          + "; ".join(sorted({e.env_failure_reason.splitlines()[0][:90] for e in lost})))


async def test_creates_right_after_the_renderers_are_killed_never_get_a_dead_page(services):
    """kill -9 of every renderer (what an OOM killer does to a loaded machine): the warm contexts'
    and primed sessions' pages are dead, and creates that come at once, before or after the crash
    events arrive, get live pages (a fresh context in their place), never `Page crashed`."""
    async with env_service(services.sites.url) as env, EnvClient(f"127.0.0.1:{env.port}", timeout_s=120) as client:
        text = cpb.ObservationOptions(skip_screenshot=True)
        stats = await client.pool_stats()
        deadline = asyncio.get_running_loop().time() + 60
        while stats.warm_contexts < 2:   # the warm pool has filled: its pages are what dies
            assert asyncio.get_running_loop().time() < deadline, stats
            await asyncio.sleep(0.2)
            stats = await client.pool_stats()
        await client.prime_sessions("playground-signup", count=1, ttl_s=120, observation=text)
        deadline = asyncio.get_running_loop().time() + 60
        while (await client.pool_stats()).primed_sessions < 1:
            assert asyncio.get_running_loop().time() < deadline, "the hinted session was not primed"
            await asyncio.sleep(0.2)
        renderers = chromium_renderers(psutil.Process(env.proc.pid))
        assert len(renderers) >= 3, renderers   # two warm pages and a primed one, at least
        for proc in renderers:
            proc.kill()
        created = [await client.create_session(task_id, observation=text)
                   for task_id in ("playground-signup", "gomail-13", "omnizon-3")]
        for session in created:
            stepped = await client.step(session.session_id, A.Noop(), observation=text)
            assert not stepped.env_failure and stepped.observation.axtree, stepped
            assert await client.close_session(session.session_id)


async def test_an_env_service_gone_after_the_last_reply_keeps_the_episode_whole(services):
    """kill -9 of the env service between an episode's last reply and its CloseSession: the
    episode is complete (stepped to its end and evaluated), so it comes back as it is, neither an
    environment failure nor an error that ends the run; the dead service's sessions are its own."""
    from halo.client.reward import RewardClient
    from halo.rollout.episode import Decision, RolloutConfig, run_episode

    class KilledBeforeClose(EnvClient):
        """The real client; the service dies right before the close (where a kill can land)."""

        async def close_session(self, session_id: str) -> bool:
            await env.kill()
            return await super().close_session(session_id)

    class Answers:
        async def decide(self, ctx) -> Decision:
            action = A.SendMessage("done")
            return Decision(action, raw_text=A.describe(action))

    async with env_service(services.sites.url) as env:
        async with KilledBeforeClose(f"127.0.0.1:{env.port}") as client, RewardClient(services.reward_target) as reward:
            episode = await run_episode(client, reward, Answers(), "playground-signup", 0,
                                        RolloutConfig(max_steps=3, screenshots=False))
        assert env.proc.returncode is not None   # the service did die before the close
        assert not episode.env_failure, episode.env_failure_reason
        assert episode.length == 1 and episode.scorable and "evaluate_s" in episode.timings, episode
