"""A real Prometheus (started by `halo up` from the same description as compose's) scrapes a short
real run through the services, and every panel of every Grafana dashboard whose service runs
returns data when asked through Prometheus's HTTP API."""

from __future__ import annotations

import asyncio
import json
import math
import os
import re
import signal
import time
from pathlib import Path

import grpc
import httpx
import psutil
import pytest

from halo.agent import actions as A
from halo.client.env import EnvClient, observation_options
from halo.client.trainer import TrainerClient
from halo.runs.spec import RunSpec
from halo.errors import Unavailable
from halo.v1 import policy_pb2, policy_pb2_grpc, reward_pb2, reward_pb2_grpc, trainer_pb2

from tests.chromium import chromium_browser_pids

from .conftest import REPO, UpStack

DASHBOARDS = sorted((REPO / "deploy" / "grafana" / "dashboards").glob("*.json"))
# Grafana's variables, as Grafana would set them for "last 10 minutes" at a 1 s scrape interval.
GRAFANA_VARS = {"$__rate_interval": "1m", "$__range": "10m", "$__interval": "5s"}
NO_SHOT = observation_options(screenshot=False)


def _page(obs, state_json: str = "") -> reward_pb2.PageState:
    return reward_pb2.PageState(url=obs.url, title=obs.title, axtree=obs.axtree, state_json=state_json)


async def _create(env: EnvClient, task_id: str, patience_s: float = 30.0):
    deadline = time.monotonic() + patience_s
    while True:  # right after a Chromium crash the pool may still be replacing the browser
        try:
            return await env.create_session(task_id, observation=NO_SHOT)
        except Unavailable:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.5)


async def _sample(gateway, goal: str, obs) -> None:
    """The policy gateway: the embedded policy answers; a route without its API key is an error."""
    policy_input = policy_pb2.PolicyInput(goal=goal, observation=obs)
    reply = await gateway.Sample(policy_pb2.SampleRequest(model="embedded", n=2, input=policy_input), timeout=120)
    assert len(reply.candidates) == 2 and all(c.valid for c in reply.candidates)
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await gateway.Sample(policy_pb2.SampleRequest(model="gpt", input=policy_input), timeout=60)
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION  # no OPENAI_API_KEY here


async def _episode(env: EnvClient, reward, gateway, task_id: str, solve: bool) -> bool:
    """One attempt: steps scored by the reward service (when it runs), then the final evaluation."""
    created = await _create(env, task_id)
    sid, obs = created.session_id, created.observation
    if gateway is not None:
        await _sample(gateway, "Click the Sign up button.", obs)
    if reward is not None:
        await reward.StartEpisode(reward_pb2.StartEpisodeRequest(episode_id=sid, task_id=task_id), timeout=30)
    button = next(e for e in obs.elements if e.name == "Sign up")
    plan = [A.ClickElement(button.bid) if solve else A.Noop(), A.ClickElement("99999")]  # the 2nd is an action error
    for index, action in enumerate(plan):
        stepped = await env.step(sid, action, observation=NO_SHOT)
        assert not stepped.env_failure
        if reward is not None:
            await reward.ScoreTransition(reward_pb2.ScoreTransitionRequest(
                episode_id=sid, step_index=index, action=A.action_to_proto(action, "test"), action_parsed=True,
                action_ok=stepped.action_ok, before=_page(obs), after=_page(stepped.observation),
            ), timeout=30)
        obs = stepped.observation
    state = await env.get_state(sid)
    success = None
    if reward is not None:
        result = await reward.Evaluate(
            reward_pb2.EvaluateRequest(episode_id=sid, task_id=task_id, state_json=state.state_json), timeout=60
        )
        success = result.success
        await reward.EndEpisode(reward_pb2.EndEpisodeRequest(episode_id=sid), timeout=30)
    await env.close_session(sid)
    return success


async def _train(trainer: TrainerClient) -> str:
    """A tiny GRPO run of the embedded policy through env, reward and gateway; waits for its end."""
    run = await trainer.start_run(RunSpec(
        name="dashboards", task_ids=["playground-signup"], group_size=2, total_steps=2, max_steps=3, checkpoint_every=2,
    ))
    deadline = time.monotonic() + 240
    while (state := (await trainer.get_run(run.run_id)).state) in (
        trainer_pb2.RUN_STATE_PENDING, trainer_pb2.RUN_STATE_RUNNING,
    ):
        assert time.monotonic() < deadline, "the training run did not finish in 240 s"
        await asyncio.sleep(0.5)
    assert state == trainer_pb2.RUN_STATE_SUCCEEDED, trainer_pb2.RunState.Name(state)
    return run.run_id


def _kill_chromium(env_pid: int) -> int:
    browsers = chromium_browser_pids(psutil.Process(env_pid))   # zombies (exited helpers) are skipped
    for pid in browsers:
        os.kill(pid, signal.SIGKILL)
    return len(browsers)


async def _env_failure(env: EnvClient, env_pid: int) -> None:
    created = await _create(env, "playground-signup")
    assert _kill_chromium(env_pid) >= 1
    await asyncio.sleep(0.5)
    stepped = await env.step(created.session_id, A.Noop(), observation=NO_SHOT)
    assert stepped.env_failure  # an environment failure, not a task failure


async def _scraped_value(http: httpx.AsyncClient, prom: str, query: str) -> float | None:
    reply = (await http.get(f"{prom}/api/v1/query", params={"query": query})).json()
    result = reply["data"]["result"]
    return float(result[0]["value"][1]) if result else None


def _metrics_total(text: str, metric: str) -> float:
    return sum(float(m.group(1)) for m in re.finditer(rf"^{metric}(?:{{[^}}]*}})? (\S+)$", text, re.M))


async def _wait_until_scraped(http: httpx.AsyncClient, prom: str, stack: UpStack, checks: dict[str, str]) -> None:
    """Until Prometheus holds, for each (service -> counter), what the service's /metrics says now."""
    deadline = time.monotonic() + 60
    for service, metric in checks.items():
        entry = stack.state["services"][service]
        exposed = _metrics_total((await http.get(f"http://{entry['host']}:{entry['metrics_port']}/metrics")).text, metric)
        assert exposed > 0, f"{service} exposes no {metric}"
        while (await _scraped_value(http, prom, f"sum({metric})")) != exposed:
            assert time.monotonic() < deadline, f"Prometheus never scraped {metric} = {exposed} from {service}"
            await asyncio.sleep(0.3)


@pytest.fixture(scope="module")
def scraped_run(up_stack):
    """The short real run, in two phases with scrapes between them (rates need two samples)."""
    if "prometheus" not in up_stack.state["services"]:
        pytest.fail(f"halo up did not start Prometheus: {up_stack.state['skipped'].get('prometheus')} "
                    "(scripts/setup.sh installs Debian's prometheus package)")
    prom = up_stack.url("prometheus")
    running = set(up_stack.state["services"])
    outcomes: list[bool | None] = []
    runs: list[str] = []

    async def run() -> None:
        async with httpx.AsyncClient(timeout=10) as http, EnvClient(up_stack.target("env"), timeout_s=60) as env:
            channels = {n: grpc.aio.insecure_channel(up_stack.target(n)) for n in ("reward", "gateway") if n in running}
            reward = reward_pb2_grpc.RewardServiceStub(channels["reward"]) if "reward" in channels else None
            gateway = policy_pb2_grpc.PolicyGatewayServiceStub(channels["gateway"]) if "gateway" in channels else None
            checks = {"env": "halo_env_steps_total"}
            if reward is not None:
                checks["reward"] = "halo_reward_evaluations_total"
            if gateway is not None:
                checks["gateway"] = "halo_gateway_requests_total"
            try:
                for phase in range(2):
                    if phase == 1 and "trainer" in running:  # first: the rates below cover the last minute
                        async with TrainerClient(up_stack.target("trainer"), timeout_s=60) as trainer:
                            runs.append(await _train(trainer))
                        checks["trainer"] = "halo_train_step"
                    for solve in (True, False):
                        outcomes.append(await _episode(env, reward, gateway, "playground-signup", solve))
                    if phase == 0:
                        await _env_failure(env, up_stack.state["services"]["env"]["pid"])
                    # the env service refreshes its restarts gauge when asked for pool stats (as monitors do)
                    await env.pool_stats()
                    await _wait_until_scraped(http, prom, up_stack, checks)
                await asyncio.sleep(2.5)  # a few more samples after the last increase
            finally:
                for channel in channels.values():
                    await channel.close()

    asyncio.run(run())
    return {"prom": prom, "running": running, "outcomes": outcomes, "runs": runs}


def _query(prom: str, expr: str) -> list[dict]:
    for var, value in GRAFANA_VARS.items():
        expr = expr.replace(var, value)
    reply = httpx.get(f"{prom}/api/v1/query", params={"query": expr}, timeout=10).json()
    assert reply["status"] == "success", (expr, reply)
    return reply["data"]["result"]


@pytest.mark.parametrize("path", DASHBOARDS, ids=[p.stem for p in DASHBOARDS])
def test_every_panel_returns_data(scraped_run, path: Path):
    board = json.loads(path.read_text())
    service = next(t.split(":", 1)[1] for t in board["tags"] if t.startswith("service:"))
    if service not in scraped_run["running"]:
        pytest.skip(f"{service} does not run here yet (`halo serve {service}` unavailable): its dashboard is not exercised")
    empty = []
    for panel in board["panels"]:
        for target in panel["targets"]:
            result = _query(scraped_run["prom"], target["expr"])
            values = [float(r["value"][1]) for r in result]
            # a breakdown may hold NaN for a label seen once (no rate yet): Grafana leaves a gap there
            if not any(math.isfinite(v) for v in values):
                empty.append(f"{panel['title']}: {target['expr']} -> {values}")
    assert not empty, "panels without data:\n" + "\n".join(empty)


def test_env_panels_show_the_run(scraped_run):
    prom = scraped_run["prom"]
    steps = {r["metric"]["outcome"]: float(r["value"][1])
             for r in _query(prom, "sum by (outcome) (rate(halo_env_steps_total[$__rate_interval]))")}
    assert steps.get("ok", 0) > 0 and steps.get("error", 0) > 0, steps  # the click on a missing bid
    failures = _query(prom, "sum by (reason) (halo_env_failures_total)")
    assert sum(float(r["value"][1]) for r in failures) >= 1  # the Chromium we killed
    assert float(_query(prom, "sum(halo_env_browser_restarts)")[0]["value"][1]) >= 1
    p95 = float(_query(prom, "histogram_quantile(0.95, sum by (le) (rate(halo_env_step_seconds_bucket[$__rate_interval])))")[0]["value"][1])
    assert 0 < p95 < 10


def test_reward_panels_show_the_run(scraped_run):
    if "reward" not in scraped_run["running"]:
        pytest.skip("the reward service does not run here")
    assert scraped_run["outcomes"] == [True, False, True, False]  # REAL's evaluator: solved vs no-op
    rates = _query(scraped_run["prom"], 'sum by (site) (increase(halo_reward_evaluations_total{outcome="success"}[$__range])) / '
                                        'sum by (site) (increase(halo_reward_evaluations_total{outcome=~"success|failure"}[$__range]))')
    assert [r["metric"]["site"] for r in rates] == ["playground"]
    assert 0 < float(rates[0]["value"][1]) < 1  # our attempts: half solved (a training run may add its own)


def test_training_panels_show_the_run(scraped_run):
    if "trainer" not in scraped_run["running"]:
        pytest.skip("the trainer service does not run here")
    (run_id,) = scraped_run["runs"]
    steps = {r["metric"]["run"]: float(r["value"][1]) for r in _query(scraped_run["prom"], "max by (run) (halo_train_step)")}
    assert steps == {run_id: 2.0}
    validity = _query(scraped_run["prom"], 'max by (run) (halo_train_metric{metric="action_validity"})')
    assert 0 < float(validity[0]["value"][1]) <= 1
