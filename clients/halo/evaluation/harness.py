"""The evaluation loop: tasks x seeds over N concurrent workers, each episode through
`rollout.run_episode` (env + reward + policy), every episode saved as it ends.

Failures are kept apart from task outcomes:
- a policy route that cannot serve at all (unknown route, missing API key, adapter refused,
  backend down at the start) stops the eval before any episode, with the reason (`EvalAborted`);
- an environment failure (browser crash, pool exhausted) or a backend failure in the middle of
  an episode (timeout, backend went down) is saved as an infrastructure failure: it is not
  counted in success rates, and resuming the eval runs it again.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import io
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from halo.agent.context import PageElement, PageView, PolicyContext
from halo.client.env import EnvClient
from halo.client.policy import PolicyClient
from halo.client.reward import RewardClient
from halo.errors import DeadlineExceeded, HaloError, ResourceExhausted, Unavailable
from halo.evaluation.modes import ResolvedMode
from halo.evaluation.records import EvalSpec
from halo.evaluation.report import write_report
from halo.evaluation.store import EvalStore
from halo.rollout.episode import Decision, Episode, Policy, RolloutConfig, run_episode
from halo.rollout.gateway import GatewayPolicy
from halo.runs.context import ServiceTargets
from halo.v1 import common_pb2 as cpb

# backend errors that lose one episode but say nothing about the route's configuration
TRANSIENT = (Unavailable, DeadlineExceeded, ResourceExhausted)

EventFn = Callable[[str, dict[str, Any]], None]


class EvalAborted(RuntimeError):
    """The eval cannot run (bad mode/route/adapter/tasks): nothing about the policy was measured."""


class PolicyFailure(RuntimeError):
    """A backend failure while sampling (not a task failure)."""

    def __init__(self, error: HaloError, route: str) -> None:
        super().__init__(f"route {route!r}: {error}")
        self.error = error


def new_eval_id(mode: str) -> str:
    return f"{mode}-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"


@dataclass
class GatewayEvalPolicy:
    """Samples through the gateway (like GRPO's GatewayPolicy) and tells backend failures apart."""

    client: PolicyClient
    route: str
    adapter: str = ""
    temperature: float = 0.0

    async def decide(self, ctx: PolicyContext) -> Decision:
        try:
            return await GatewayPolicy(self.client, self.route, self.adapter, self.temperature).decide(ctx)
        except HaloError as exc:
            raise PolicyFailure(exc, self.route) from exc


def _probe_context() -> PolicyContext:
    """A one-button page (with a small screenshot, for vision models) to check a route before the eval."""
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (320, 180), "white").save(buf, "JPEG")
    button = PageElement(bid="1", role="button", name="OK", x=140, y=80, width=40, height=20)
    page = PageView(screenshot=buf.getvalue(), image_mime="image/jpeg", width=320, height=180,
                    axtree='[1] button "OK"', elements=(button,), url="http://127.0.0.1/", title="probe")
    return PolicyContext(goal="Click the OK button.", page=page)


async def prepare_gateway(client: PolicyClient, resolved: ResolvedMode, temperature: float) -> GatewayEvalPolicy:
    """Check the route, load the adapter, sample once: any configuration problem surfaces here, named."""
    routes = {r.name: r for r in await client.list_models()}
    where = f"mode {resolved.mode}"
    if resolved.route not in routes:
        raise EvalAborted(f"{where} needs gateway route {resolved.route!r}, which the gateway at {client.target} does not serve "
                          f"(routes: {', '.join(sorted(routes)) or 'none'}; see configs/gateway.yaml)")
    try:
        if resolved.weights:
            data = await asyncio.to_thread(open(resolved.weights, "rb").read)
            await client.load_adapter(resolved.route, resolved.adapter, weights=data)
        elif resolved.adapter_path:
            await client.load_adapter(resolved.route, resolved.adapter, path=resolved.adapter_path)
    except HaloError as exc:
        source = resolved.weights or resolved.adapter_path
        raise EvalAborted(f"{where}: route {resolved.route!r} cannot load adapter {source!r}: {exc}") from None
    policy = GatewayEvalPolicy(client, resolved.route, resolved.adapter, temperature)
    try:
        await policy.decide(_probe_context())
    except PolicyFailure as exc:
        raise EvalAborted(f"{where} cannot sample from route {resolved.route!r}: {exc.error}") from None
    return policy


async def expand_task_refs(env: EnvClient, refs: list[str]) -> list[cpb.Task]:
    """Task ids, site names (their replica tasks) or `all` (every REAL v2 task with a local replica)."""
    out: dict[str, cpb.Task] = {}
    for ref in refs:
        if ref == "all":
            found = await env.list_tasks(suite="real-v2", replica_only=True)
        else:
            site_tasks = await env.list_tasks(site=ref)
            if site_tasks:
                found = [t for t in site_tasks if t.replica_available]
                if not found:
                    raise EvalAborted(f"site {ref!r} has no local replica ({len(site_tasks)} tasks on the remote REAL site only)")
            else:
                try:
                    task = await env.get_task(ref)
                except HaloError as exc:
                    raise EvalAborted(f"unknown task or site {ref!r}: {exc}") from None
                if not task.replica_available:
                    raise EvalAborted(f"task {ref!r} has no local replica (site {task.site} is remote only)")
                found = [task]
        for t in found:
            out.setdefault(t.id, t)
    if not out:
        raise EvalAborted(f"no tasks match {refs}")
    return list(out.values())


@dataclass
class EvalOutcome:
    spec: EvalSpec
    episodes: list[dict[str, Any]] = field(default_factory=list)   # every saved episode of the eval
    ran: int = 0                      # episodes run by this call
    skipped: int = 0                  # already saved (resume)


async def run_eval(
    spec: EvalSpec, store: EvalStore, *, targets: ServiceTargets, resolved: ResolvedMode | None = None,
    policy: Policy | None = None, on_event: EventFn | None = None,
    stop: Callable[[], bool] | None = None,
) -> EvalOutcome:
    """Run (or resume) an evaluation and write its report. `policy` replaces the gateway policy (tests, scripted
    agents); once `stop()` is true no new episode starts (those running finish and are saved). The services are
    the caller's: `halo eval` without --env starts them in its own process (halo.cli.eval.local_services)."""
    if not targets.env:
        raise EvalAborted("no env service to evaluate on (targets.env is empty)")
    emit = on_event or (lambda kind, payload: None)
    resolved = resolved or ResolvedMode(spec.mode, spec.route, spec.adapter, spec.adapter_path, spec.weights)
    services = targets
    async with EnvClient(services.env, token=services.token, tls_ca=services.tls_ca) as env, \
            RewardClient(services.reward, token=services.token, tls_ca=services.tls_ca) as reward:
        tasks = await expand_task_refs(env, spec.task_ids or spec.tasks)
        by_id = {t.id: t for t in tasks}
        if not spec.task_ids:
            spec.task_ids = list(by_id)
        store.save_spec(spec)
        async with contextlib.AsyncExitStack() as stack:
            if policy is None:
                gateway = await stack.enter_async_context(PolicyClient(services.gateway, token=services.token, tls_ca=services.tls_ca,
                                                                           timeout_s=300))
                if resolved.adapter_path:
                    # a name of this eval's own (a resume reuses it): a vLLM route takes one set of weights
                    # per name, so two evals of one mode with other folders never share one; unloaded at the end
                    resolved = dataclasses.replace(resolved, adapter=f"{resolved.adapter}-{spec.eval_id}")
                    stack.push_async_callback(_unload_quietly, gateway, resolved.route, resolved.adapter)
                emit("log", {"message": f"checking route {resolved.route!r}" + (f" with adapter {resolved.adapter!r}" if resolved.adapter else "")})
                policy = await prepare_gateway(gateway, resolved, spec.temperature)
            return await _run_episodes(spec, store, env, reward, policy, by_id, emit, stop or (lambda: False))


async def _unload_quietly(client: PolicyClient, route: str, adapter: str) -> None:
    try:
        await client.unload_adapter(route, adapter)
    except HaloError:
        pass   # the gateway or its engine may be gone; the adapter goes with it


async def _run_episodes(spec: EvalSpec, store: EvalStore, env: EnvClient, reward: RewardClient, policy: Policy,
                        tasks: dict[str, cpb.Task], emit: EventFn, stop: Callable[[], bool]) -> EvalOutcome:
    done = store.completed(spec.eval_id)
    planned = [(t, s) for t in spec.task_ids for s in spec.seeds]
    pending = [p for p in planned if p not in done]
    outcome = EvalOutcome(spec, skipped=len(planned) - len(pending))
    emit("planned", {"total": len(planned), "done": outcome.skipped, "pending": len(pending)})
    config = RolloutConfig(max_steps=spec.max_steps, screenshots=spec.screenshots, image_format="jpeg",
                           reward_overrides=spec.reward_overrides, run_id=spec.eval_id)
    limit = asyncio.Semaphore(max(1, spec.workers))
    fatal: list[BaseException] = []

    async def one(task_id: str, seed: int) -> None:
        async with limit:
            if fatal or stop():
                return
            started = time.time()
            error = ""
            try:
                episode = await run_episode(env, reward, policy, task_id, seed, config)
            except PolicyFailure as exc:
                if not isinstance(exc.error, TRANSIENT):
                    fatal.append(exc)
                    raise
                episode, error = Episode(task_id, seed), f"policy backend failure: {exc}"
            except HaloError as exc:   # env / reward service: an infrastructure failure, not the task's
                episode, error = Episode(task_id, seed), f"service failure: {exc}"
            summary = await asyncio.to_thread(store.save_episode, spec.eval_id, episode, tasks.get(task_id),
                                              mode=spec.mode, error=error, started_at=started)
            outcome.ran += 1
            emit("episode", summary)

    jobs = [asyncio.create_task(one(t, s)) for t, s in pending]
    try:
        await asyncio.gather(*jobs)
    except PolicyFailure as exc:
        for j in jobs:
            j.cancel()
        await asyncio.gather(*jobs, return_exceptions=True)
        raise EvalAborted(f"mode {spec.mode}: sampling failed on route {spec.route!r}: {exc.error}") from None
    finally:
        outcome.episodes = store.episodes(spec.eval_id)
        if outcome.episodes:
            await asyncio.to_thread(write_report, store, spec.eval_id)
    return outcome
