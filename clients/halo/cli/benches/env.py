"""`halo bench env`: the env service vs raw in-process Playwright vs agisdk's harness, same run.

N concurrent sessions each step through a fixed loop on the playground page (fill a field,
scroll down, scroll up, hover), observing after every step (screenshot + AXTree). The raw
floor does the same with Playwright directly on one Chromium, so the ratio shows what the
service (gRPC, sessions, bids, checks) costs. The agisdk mode runs the loop in agisdk's own
environment (BrowserGym's `BrowserEnv`, one process per environment, `halo.cli.benches.agisdk_harness`),
what a researcher gets from the REAL harness. Figures: aggregate steps/s, p50/p95 step latency,
PSS (proportional RSS) per session, each mode's steps/s over raw's, and for the service modes the
p50/p95 of each phase of a step inside the service (halo.env.timings.StepTimings). The sites
server runs in a process of its own, as deployed (`--sites-in-process`: on a thread of this one).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import socket
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import psutil
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from halo.agent import actions as A

console = Console()
TASK = "playground-name"


@dataclass
class BenchResult:
    mode: str                  # "service" | "raw" | "agisdk" | "service+state" | "service+getstate"
    sessions: int
    steps: int
    seconds: float
    p50_ms: float
    p95_ms: float
    pss_per_session_mb: float
    #: service modes: p50 and p95 ms of each phase inside the service (halo.env.timings.StepTimings)
    phases_ms: dict[str, tuple[float, float]] = field(default_factory=dict)
    rpc_mean_ms: float = 0.0   # service modes: mean step seen by the client minus mean step inside the service
    #: CPU ms per step of each kind of process (`tree_cpu_s`), over the level's steps
    cpu_ms_per_step: dict[str, float] = field(default_factory=dict)

    @property
    def steps_per_s(self) -> float:
        return self.steps / self.seconds


def tree_pss_mb() -> float:
    """Proportional set size of this process and its children (Chromium): shared pages are
    split between the processes that map them, so per-session growth is not double counted."""
    me = psutil.Process()
    total = 0
    for proc in [me, *me.children(recursive=True)]:
        try:
            total += proc.memory_full_info().pss
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            pass
    return total / 2**20


#: The kinds of process a level's CPU is counted by: this one (the env service, the gRPC clients and
#: the raw mode's Playwright client share it), Playwright's driver (Node), Chromium's browser, GPU
#: (compositing and screenshot readback) and renderer processes, and the sites server.
CPU_KINDS = ("bench", "driver", "browser", "gpu", "renderers", "chromium other", "sites")


def _cpu_kind(proc: psutil.Process, me: int) -> str:
    if proc.pid == me:
        return "bench"
    cmdline = proc.cmdline()
    joined = " ".join(cmdline)
    if "playwright" in joined and "driver" in joined and "node" in (cmdline[0] if cmdline else ""):
        return "driver"
    if "serve sites" in joined:   # `python -m halo.cli serve sites` (sites_process)
        return "sites"
    kind = next((arg.split("=", 1)[1] for arg in cmdline if arg.startswith("--type=")), "")
    if not kind:
        return "browser" if "chrom" in joined else "chromium other"
    return {"renderer": "renderers", "gpu-process": "gpu"}.get(kind, "chromium other")


def tree_cpu_s() -> dict[str, float]:
    """CPU seconds (user + system) used so far by this process and each kind of its descendants."""
    me = psutil.Process()
    totals = dict.fromkeys(CPU_KINDS, 0.0)
    for proc in [me, *me.children(recursive=True)]:
        try:
            times = proc.cpu_times()
            totals[_cpu_kind(proc, me.pid)] += times.user + times.system
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            pass
    return totals


def _cpu_per_step(before: dict[str, float], after: dict[str, float], steps: int) -> dict[str, float]:
    """CPU ms per step by kind between two `tree_cpu_s` readings (a process that ended meanwhile is
    not counted: none does during a level)."""
    return {kind: max(after[kind] - before[kind], 0.0) * 1e3 / max(steps, 1) for kind in CPU_KINDS}


def _percentile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1] if len(values) >= 2 else values[0]


def _loop_actions(name_bid: str, plan_bid: str) -> list[A.Action]:
    return [A.Fill(name_bid, "Ada"), A.Scroll(0, 300), A.Scroll(0, -300), A.Hover(plan_bid)]


async def _service_level(env, sessions: int, steps: int, image_format: str, progress, task_id,
                         mode: str = "service", manager=None) -> BenchResult:
    """`service`: Step only. `service+state`: Step with include_state, the reply carrying the site's
    state JSON the reward service needs (what an episode does). `service+getstate`: Step, then
    GetState for that state: the round trip an episode made per step before include_state."""
    from halo.client.env import observation_options

    opts = observation_options(image_format, 80)
    mem0 = tree_pss_mb()
    # the episode's cap is the level's length: `--actions` past the server's default must not end it
    created = [await env.create_session(TASK, observation=opts, max_steps=steps) for _ in range(sessions)]
    if manager is not None:
        # the warm contexts these creates took are opened again in the background: that belongs to
        # CreateSession (the create modes time it), not to the steps measured here
        await manager.warm.wait_full(timeout_s=60)
    latencies: list[float] = []
    first = len(manager.step_timings) if manager is not None else 0   # in process: the service's phases

    async def run(c) -> None:
        els = c.observation.elements
        name = next(e.bid for e in els if e.role == "textbox")
        plan = next(e.bid for e in els if e.role == "combobox")
        loop = _loop_actions(name, plan)
        for i in range(steps):
            t = time.perf_counter()
            r = await env.step(c.session_id, loop[i % len(loop)], observation=opts, include_state=mode == "service+state")
            if mode == "service+getstate":
                await env.get_state(c.session_id)
            latencies.append(time.perf_counter() - t)
            assert r.action_ok, r.action_error or f"environment failure: {r.env_failure_reason}"
            progress.advance(task_id)

    cpu0, start = tree_cpu_s(), time.perf_counter()
    await asyncio.gather(*(run(c) for c in created))
    seconds, cpu1 = time.perf_counter() - start, tree_cpu_s()
    mem1 = tree_pss_mb()
    timings = list(manager.step_timings)[first:] if manager is not None else []
    for c in created:
        await env.close_session(c.session_id)
    result = BenchResult(mode, sessions, len(latencies), seconds, _percentile(latencies, 50) * 1e3,
                         _percentile(latencies, 95) * 1e3, (mem1 - mem0) / sessions,
                         cpu_ms_per_step=_cpu_per_step(cpu0, cpu1, len(latencies)))
    if timings:
        from halo.env.timings import StepTimings

        for phase in StepTimings.PHASES:
            values = [getattr(t, f"{phase}_s") for t in timings]
            result.phases_ms[phase] = (_percentile(values, 50) * 1e3, _percentile(values, 95) * 1e3)
        # means add up where percentiles do not: gRPC, (de)serialisation and the client's own work
        result.rpc_mean_ms = (statistics.fmean(latencies) - statistics.fmean(t.total_s for t in timings)) * 1e3
    return result


def _cpu_table(results: list[BenchResult]) -> Table:
    table = Table(title="CPU ms per step by process (user + system; the env service, its gRPC client and raw's "
                        "Playwright client are the bench process)")
    for col in ("sessions", "mode", *CPU_KINDS, "total"):
        table.add_column(col, justify="right")
    for r in results:
        if r.cpu_ms_per_step:
            table.add_row(str(r.sessions), r.mode, *(f"{r.cpu_ms_per_step[k]:.1f}" for k in CPU_KINDS),
                          f"{sum(r.cpu_ms_per_step.values()):.1f}")
    return table


def _phase_table(results: list[BenchResult]) -> Table:
    from halo.env.timings import StepTimings

    table = Table(title="Step phases inside the env service, ms p50/p95 (rpc: mean client step - mean service step)")
    for col in ("sessions", "mode", *StepTimings.PHASES, "rpc"):
        table.add_column(col, justify="right")
    for r in results:
        if r.phases_ms:
            table.add_row(str(r.sessions), r.mode, *(f"{r.phases_ms[p][0]:.0f}/{r.phases_ms[p][1]:.0f}" for p in StepTimings.PHASES),
                          f"{r.rpc_mean_ms:.0f}")
    return table


async def _raw_level(browser, base_url: str, sessions: int, steps: int, image_format: str, progress, task_id) -> BenchResult:
    from halo.env.observe import _AXTREE_JS

    mem0 = tree_pss_mb()
    pages = []
    for _ in range(sessions):
        context = await browser.new_context(viewport={"width": 1280, "height": 720})
        page = await context.new_page()
        await page.goto(f"{base_url}/playground/")
        pages.append(page)
    latencies: list[float] = []

    async def observe(page) -> None:
        await page.evaluate(_AXTREE_JS, 400)
        if image_format == "jpeg":
            await page.screenshot(type="jpeg", quality=80)
        else:
            await page.screenshot(type="png")

    async def run(page) -> None:
        for i in range(steps):
            t = time.perf_counter()
            match i % 4:
                case 0:
                    await page.fill("#name", "Ada")
                case 1:
                    await page.mouse.move(640, 360)
                    await page.mouse.wheel(0, 300)
                case 2:
                    await page.mouse.move(640, 360)
                    await page.mouse.wheel(0, -300)
                case 3:
                    await page.hover("#plan")
            await observe(page)
            latencies.append(time.perf_counter() - t)
            progress.advance(task_id)

    cpu0, start = tree_cpu_s(), time.perf_counter()
    await asyncio.gather(*(run(p) for p in pages))
    seconds, cpu1 = time.perf_counter() - start, tree_cpu_s()
    mem1 = tree_pss_mb()
    for page in pages:
        await page.context.close()
    return BenchResult("raw", sessions, len(latencies), seconds, _percentile(latencies, 50) * 1e3,
                       _percentile(latencies, 95) * 1e3, (mem1 - mem0) / sessions,
                       cpu_ms_per_step=_cpu_per_step(cpu0, cpu1, len(latencies)))


async def _agisdk_level(base_url: str, sessions: int, steps: int, slow_mo_ms: int, browsers_path: str | None,
                        progress, task_id) -> BenchResult:
    from halo.cli.benches.agisdk_harness import HarnessWorkers, HarnessWorkerSpec, write_task_file
    from halo.tasks.registry import TaskRegistry

    folder = tempfile.mkdtemp(prefix="halo-bench-agisdk-")
    task_file = write_task_file(TaskRegistry.load().get(TASK).raw, f"{base_url}/playground/", folder)
    spec = HarnessWorkerSpec(task_file, f"{base_url}/playground/", steps, slow_mo_ms, browsers_path)
    # generous: every Playwright call of a step waits slow_mo, and N workers share the cores
    timeout_s = 120 + steps * (10 + 20 * slow_mo_ms / 1000) * sessions
    mem0 = tree_pss_mb()
    workers = HarnessWorkers([spec] * sessions)
    try:
        workers.wait_ready(timeout_s)
        start = time.perf_counter()
        runs = workers.run(timeout_s)
        seconds = time.perf_counter() - start
        mem1 = tree_pss_mb()  # every environment still open
    finally:
        workers.close()
        shutil.rmtree(folder, ignore_errors=True)
    latencies = [t for run in runs for t in run.latencies]
    progress.advance(task_id, len(latencies))
    return BenchResult("agisdk", sessions, len(latencies), seconds, _percentile(latencies, 50) * 1e3,
                       _percentile(latencies, 95) * 1e3, (mem1 - mem0) / sessions)


@dataclass
class CreateResult:
    mode: str                  # "create" (warm contexts as configured) | "create-cold" (none: every context on demand)
                               # | "create-primed" (warm contexts and sessions primed for the recurring task)
    sessions: int              # concurrent CreateSession calls per round
    creates: int
    p50_ms: float              # CreateSession as the client sees it (gRPC included)
    p95_ms: float
    phases_p50_ms: dict[str, float]   # inside the service (halo.env.session.CreateTimings)
    warm_share: float          # creates that began on a warm context
    primed_share: float = 0.0  # creates answered by a session prepared ahead
    service_p50_ms: float = 0.0   # the whole create inside the service (the rest of p50 is gRPC and the client)
    round_s: float = 0.0       # grpo modes: mean wall time of a round (its creates and its episodes' steps)


GRPO_MODES = ("create-grpo", "create-grpo-hinted")
CREATE_MODES = ("create-cold", "create", "create-primed", *GRPO_MODES)
#: grpo modes: the steps of each episode (Noop + observation), the page work during which the next round is primed
EPISODE_STEPS = 5


async def _create_level(env, manager, sessions: int, rounds: int, task: str, image_format: str, warm: int,
                        progress, task_id, primed: int = 0) -> CreateResult:
    """`rounds` bursts of `sessions` concurrent CreateSession calls (a GRPO step opens its group's
    sessions at once), each session closed before the next burst. Between bursts the warm pool (and
    the primed sessions, which start with the second burst: the task recurs) are given the time an
    episode would give them to refill."""
    from halo.client.env import observation_options

    opts = observation_options(image_format, 80)
    await manager.warm.resize(warm)
    manager.primed.resize(primed)
    first = len(manager.create_timings)
    latencies: list[float] = []

    async def one():
        t = time.perf_counter()
        created = await env.create_session(task, observation=opts)
        latencies.append(time.perf_counter() - t)
        progress.advance(task_id)
        return created

    for _ in range(rounds):
        deadline = time.monotonic() + 30
        while (manager.warm.ready < manager.warm.size
               or (manager.primed.key is not None and manager.primed.ready < manager.primed.size)) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        created = await asyncio.gather(*(one() for _ in range(sessions)))
        for c in created:
            await env.close_session(c.session_id)
    manager.primed.resize(0)
    mode = "create-primed" if primed else "create" if warm else "create-cold"
    return _create_result(mode, sessions, latencies, list(manager.create_timings)[first:])


async def _grpo_level(env, manager, sessions: int, rounds: int, task: str, image_format: str, warm: int,
                      progress, task_id, hinted: bool) -> CreateResult:
    """GRPO-like rounds: each round creates `sessions` sessions of a (task, seed) no create asked for
    before, all at once (a GRPO step's group), and runs EPISODE_STEPS steps in each before closing
    them (the episodes: no model calls). With `hinted`, each round first announces the next round's
    key (PrimeSessions, count `sessions`), as the GRPO trainer announces step N+1's groups when step
    N's rollouts start, so the env primes them while this round's episodes run (the pool has room
    for two rounds). The same seeds in both modes; each mode its own run id (its own keys)."""
    from halo.client.env import observation_options

    opts = observation_options(image_format, 80)
    await manager.warm.resize(warm)
    manager.primed.resize(0)   # no recurring key: only the hints prime
    first = len(manager.create_timings)
    latencies: list[float] = []
    run_id = "bench-hinted" if hinted else "bench-plain"
    started = time.perf_counter()

    async def episode(seed: int) -> None:
        t = time.perf_counter()
        created = await env.create_session(task, seed=seed, observation=opts, run_id=run_id)
        latencies.append(time.perf_counter() - t)
        progress.advance(task_id)
        for _ in range(EPISODE_STEPS):
            await env.step(created.session_id, A.Noop(), observation=opts)
        await env.close_session(created.session_id)

    for r in range(rounds):
        if hinted and r + 1 < rounds:
            await env.prime_sessions(task, sessions, seed=r + 1, observation=opts, run_id=run_id, ttl_s=120)
        await asyncio.gather(*(episode(r) for _ in range(sessions)))
    round_s = (time.perf_counter() - started) / rounds
    await asyncio.sleep(0.5)   # nothing hinted is left over (the last round announces none); let disposals finish
    return _create_result("create-grpo-hinted" if hinted else "create-grpo", sessions, latencies,
                          list(manager.create_timings)[first:], round_s)


def _create_result(mode: str, sessions: int, latencies: list[float], timings: list, round_s: float = 0.0) -> CreateResult:
    """A create mode's figures: the client's latencies and the service's CreateTimings of its creates."""
    from halo.env.session import CreateTimings

    phases = {p: _percentile([getattr(t, f"{p}_s") for t in timings], 50) * 1e3 for p in CreateTimings.PHASES}
    return CreateResult(mode, sessions, len(latencies), _percentile(latencies, 50) * 1e3,
                        _percentile(latencies, 95) * 1e3, phases, sum(t.warm for t in timings) / max(len(timings), 1),
                        sum(t.primed for t in timings) / max(len(timings), 1),
                        _percentile([t.total_s for t in timings], 50) * 1e3, round_s)


def _create_table(results: list[CreateResult], task: str, image_format: str) -> Table:
    from halo.env.session import CreateTimings

    table = Table(title=f"CreateSession ms: {task}, n concurrent, first observation {image_format} + AXTree; phases: p50 in the service")
    for col in ("n", "mode", "p50", "p95", "service", *CreateTimings.PHASES, "warm", "primed", "round s"):
        table.add_column(col, justify="right")
    for r in results:
        table.add_row(str(r.sessions), r.mode, f"{r.p50_ms:.0f}", f"{r.p95_ms:.0f}", f"{r.service_p50_ms:.0f}",
                      *(f"{r.phases_p50_ms[p]:.0f}" for p in CreateTimings.PHASES), f"{r.warm_share:.0%}",
                      f"{r.primed_share:.0%}", f"{r.round_s:.1f}" if r.round_s else "")
    return table


MODES = ("service", "raw", "agisdk", "service+state", "service+getstate", *CREATE_MODES)


@contextlib.asynccontextmanager
async def sites_process(timeout_s: float = 60.0):
    """`halo serve sites` in a process of its own, as deployed (state in memory); yields its URL.
    In process, the sites server would share this process's interpreter with the env service and
    the raw mode's client."""
    import httpx

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "halo.cli", "serve", "sites", "--port", str(port), "--data-dir", "",
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        async with httpx.AsyncClient(timeout=2.0) as http:
            deadline = time.monotonic() + timeout_s
            while True:
                with contextlib.suppress(httpx.HTTPError):
                    if (await http.get(f"{url}/__halo/health")).status_code == 200:
                        break
                if proc.returncode is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the sites server process did not answer on {url}")
                await asyncio.sleep(0.2)
        yield url
    finally:
        if proc.returncode is None:
            proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), 10)
            except TimeoutError:
                proc.kill()
                await proc.wait()


async def run_env_bench(levels: list[int], steps: int, image_format: str, json_path: str = "",
                        modes: tuple[str, ...] = MODES, agisdk_slow_mo_ms: int | None = None,
                        create_rounds: int = 5, create_task: str = "gomail-1", warm_contexts: int = 8,
                        sites_in_process: bool = False) -> int:
    from playwright.async_api import async_playwright

    from halo.cli.benches.agisdk_harness import AGISDK_SLOW_MO_MS, playwright_browser_links
    from halo.client.env import EnvClient
    from halo.env.browsers import CHROMIUM_ARGS, find_chromium
    from halo.cli.stack import LocalStack

    slow_mo = AGISDK_SLOW_MO_MS if agisdk_slow_mo_ms is None else agisdk_slow_mo_ms
    chromium = find_chromium()
    browsers_path = playwright_browser_links(chromium) if chromium and "agisdk" in modes else None
    results: list[BenchResult] = []
    creates: list[CreateResult] = []
    try:
        # the grpo modes' hints prime the next round while a round runs: room for two rounds
        pool_size = max(levels) * (2 if set(GRPO_MODES) & set(modes) else 1)
        async with contextlib.AsyncExitStack() as own:
            sites_url = "" if sites_in_process else await own.enter_async_context(sites_process())
            stack = await own.enter_async_context(LocalStack(
                env_overrides={"pool_size": pool_size, "browsers": 1, "warm_contexts": warm_contexts},
                sites_url=sites_url))
            async with EnvClient(stack.env_target) as env, async_playwright() as pw:
                browser = await pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
                with Progress(console=console, transient=True) as progress:
                    # warm the in-process paths up (first page loads, JIT, caches) before measuring;
                    # agisdk's workers are fresh processes every level, as its harness starts them
                    warm = progress.add_task("warm-up", total=8)
                    await _service_level(env, 1, 4, image_format, progress, warm)
                    await _raw_level(browser, stack.sites_url, 1, 4, image_format, progress, warm)
                    for n in levels:
                        for mode in modes:
                            if mode in CREATE_MODES:
                                task = progress.add_task(f"{n} session(s): {mode}", total=n * create_rounds)
                                warm = 0 if mode == "create-cold" else min(warm_contexts, max(levels))
                                if mode in GRPO_MODES:
                                    creates.append(await _grpo_level(env, stack.env_manager, n, create_rounds, create_task,
                                                                     image_format, warm, progress, task,
                                                                     hinted=mode == "create-grpo-hinted"))
                                    continue
                                primed = max(levels) if mode == "create-primed" else 0
                                creates.append(await _create_level(env, stack.env_manager, n, create_rounds, create_task,
                                                                   image_format, warm, progress, task, primed))
                                continue
                            task = progress.add_task(f"{n} session(s): {mode}", total=n * steps)
                            if mode.startswith("service"):
                                results.append(await _service_level(env, n, steps, image_format, progress, task, mode,
                                                                  stack.env_manager))
                            elif mode == "raw":
                                results.append(await _raw_level(browser, stack.sites_url, n, steps, image_format, progress, task))
                            else:
                                results.append(await _agisdk_level(stack.sites_url, n, steps, slow_mo, browsers_path,
                                                                   progress, task))
                await browser.close()
    finally:
        if browsers_path:
            shutil.rmtree(browsers_path, ignore_errors=True)

    if creates:
        console.print(_create_table(creates, create_task, image_format))
    step_modes = tuple(m for m in modes if m not in CREATE_MODES)
    by_key = {(r.mode, r.sessions): r for r in results}
    if not step_modes:
        _write_json(json_path, results, creates)
        return 0
    title = f"halo bench env ({steps} steps/session, {image_format} screenshots + AXTree every step"
    if "agisdk" in modes:
        title += f"; agisdk: its own observation, slow_mo {slow_mo} ms"
    table = Table(title=title + ")")
    for col in ("sessions", "mode", "steps/s", "p50 ms", "p95 ms", "PSS/session MB", "÷ raw"):
        table.add_column(col, justify="right")
    for n in levels:
        raw = by_key.get(("raw", n))
        for mode in step_modes:
            r = by_key[(mode, n)]
            ratio = f"{r.steps_per_s / raw.steps_per_s:.2f}" if raw and r is not raw else ""
            table.add_row(str(n), r.mode, f"{r.steps_per_s:.1f}", f"{r.p50_ms:.0f}", f"{r.p95_ms:.0f}",
                          f"{r.pss_per_session_mb:.0f}", ratio)
    console.print(table)
    if any(r.phases_ms for r in results):
        console.print(_phase_table(results), width=max(console.width, 140))
    if any(r.cpu_ms_per_step for r in results):
        console.print(_cpu_table(results), width=max(console.width, 140))
    _write_json(json_path, results, creates)
    return 0


def _write_json(json_path: str, results: list[BenchResult], creates: list[CreateResult]) -> None:
    if json_path:
        rows = [asdict(r) | {"steps_per_s": r.steps_per_s} for r in results] + [asdict(c) for c in creates]
        Path(json_path).write_text(json.dumps(rows, indent=2))
