"""`halo bench leak`: many create/step/close cycles through the env service; does anything pile up?

Starts sites + env service in this process (like `halo bench env`), warms up, then runs the
measured cycles in five chunks with `concurrency` sessions at a time. Between chunks (nothing
open) it samples memory: USS (pages private to each process: what a leak grows, and unlike PSS
not moved by other programs on the machine that map the same Chromium binary), PSS and RSS of
this process and all its children (Playwright's driver, Chromium and its renderers). At the end
it counts what should be gone: open sessions in the pool, browser contexts and pages, Chromium
renderer processes (they host pages) beyond the idle count after warm-up, zombies, and site
sessions the sites server still holds. Browser-wide helper processes that Chromium starts on
its own schedule (e.g. its on-device-model utility, a few minutes after launch) are listed, not
counted as orphans: no session owns them.

The figure to watch is the memory growth from the end of the warm-up to the end (target < 10%);
the orphan counts must be 0.
"""

from __future__ import annotations

import asyncio
import gc
import json
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from halo.agent import actions as A

console = Console()

TARGET_GROWTH_PCT = 10.0
CHUNKS = 5


@dataclass
class MemSample:
    cycles: int                   # measured cycles done when sampled (0: right after the warm-up)
    rss_mb: float                 # this process + children, summed
    pss_mb: float | None          # same, proportional (None where the OS does not tell)
    chromium_processes: int       # all of them (browser, zygotes, utilities, GPU, renderers)
    uss_mb: float | None = None   # same, private pages only (None where the OS does not tell)


@dataclass
class LeakReport:
    task: str
    cycles: int
    concurrency: int
    warmup: int
    seconds: float                # the measured cycles only
    cycles_per_s: float
    failed_cycles: int
    errors: dict[str, int]        # exception type -> count (first message in error_example)
    error_example: str
    samples: list[MemSample]
    growth_metric: str            # "uss" or "rss": what growth_pct is computed on
    growth_pct: float
    rss_growth_pct: float
    pss_growth_pct: float | None
    uss_growth_pct: float | None
    target_pct: float
    # what is left once every cycle closed its session (all must be 0 but chromium_idle_processes)
    active_sessions: int
    open_contexts: int
    orphan_pages: int
    chromium_idle_processes: int  # after the warm-up, nothing open
    chromium_end_processes: int
    chromium_idle_by_type: dict[str, int]
    chromium_end_by_type: dict[str, int]
    orphan_processes: int         # renderers beyond the idle count
    new_browser_services: list[str]   # helper processes (not renderers) started since the warm-up
    zombie_processes: int
    site_sessions: int
    sessions_created: int = 0
    orphans: int = field(init=False)

    def __post_init__(self) -> None:
        self.orphans = self.active_sessions + self.open_contexts + self.orphan_pages + self.orphan_processes + self.site_sessions

    @property
    def ok(self) -> bool:
        return self.orphans == 0 and self.failed_cycles == 0

    @property
    def within_target(self) -> bool:
        return self.growth_pct < self.target_pct

    def to_json(self) -> dict[str, Any]:
        return asdict(self) | {"ok": self.ok, "within_target": self.within_target}


def _tree() -> list[psutil.Process]:
    me = psutil.Process()
    return [me, *me.children(recursive=True)]


def _memory() -> tuple[float, float | None, float | None]:
    rss, pss, uss, have_pss = 0, 0, 0, True
    for proc in _tree():
        try:
            if have_pss:
                try:
                    info = proc.memory_full_info()
                    rss += info.rss
                    pss += info.pss
                    uss += info.uss
                    continue
                except (AttributeError, psutil.AccessDenied):
                    have_pss = False
            rss += proc.memory_info().rss
        except psutil.NoSuchProcess:
            continue
    return rss / 2**20, (pss / 2**20 if have_pss else None), (uss / 2**20 if have_pss else None)


def chromium_mains() -> set[int]:
    """Main Chromium processes among this process's descendants (renderers and helpers carry --type=)."""
    pids = set()
    for proc in _tree()[1:]:
        try:
            if "chrom" in proc.name() and not any(a.startswith("--type=") for a in proc.cmdline()):
                pids.add(proc.pid)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return pids


def _kind(cmdline: list[str]) -> str:
    """"browser", "renderer", "zygote", "gpu-process", "utility:network.mojom.NetworkService", ..."""
    kind = next((a.split("=", 1)[1] for a in cmdline if a.startswith("--type=")), "browser")
    sub = next((a.split("=", 1)[1] for a in cmdline if a.startswith("--utility-sub-type=")), "")
    return f"{kind}:{sub}" if sub else kind


def chromium_processes(mains: set[int]) -> tuple[Counter[str], int]:
    """(processes by kind, zombies) of the Chromium trees rooted at `mains`."""
    kinds: Counter[str] = Counter()
    zombies = 0
    for pid in mains:
        try:
            root = psutil.Process(pid)
            procs = [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            continue
        for proc in procs:
            try:
                if proc.status() == psutil.STATUS_ZOMBIE:
                    zombies += 1
                    kinds["zombie"] += 1
                else:
                    kinds[_kind(proc.cmdline())] += 1
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
    return kinds, zombies


async def _settle(mains: set[int], idle_renderers: int | None, timeout_s: float = 30.0) -> None:
    """Give closed contexts' renderers time to exit (down to the idle count when known). On a loaded
    machine a renderer takes seconds to exit after its context closed; one still there after
    `timeout_s` is counted as left behind."""
    deadline = time.monotonic() + timeout_s
    last = -1
    while time.monotonic() < deadline:
        gc.collect()
        renderers = chromium_processes(mains)[0]["renderer"]
        if (idle_renderers is not None and renderers <= idle_renderers) or (idle_renderers is None and renderers == last):
            return
        last = renderers
        await asyncio.sleep(0.5)


async def run_leak_cycles(
    cycles: int = 1000, concurrency: int = 4, warmup: int = 40, task: str = "playground-signup",
    steps: int = 2, progress: Progress | None = None,
) -> LeakReport:
    from halo.client.env import EnvClient, observation_options
    from halo.cli.stack import LocalStack

    opts = observation_options("jpeg", 80)
    before = chromium_mains()
    overrides = {"pool_size": concurrency, "acquire_timeout_s": 120, "action_timeout_ms": 15000, "navigation_timeout_ms": 30000}
    async with LocalStack(env_overrides=overrides) as stack:
        mains = chromium_mains() - before
        manager = stack.env_manager
        errors: Counter[str] = Counter()
        example: list[str] = []

        async with EnvClient(stack.env_target, timeout_s=120) as env:
            async def cycle() -> None:
                created = await env.create_session(task, observation=opts, labels={"bench": "leak"})
                try:
                    button = next((e.bid for e in created.observation.elements if e.role == "button"), "")
                    for i in range(steps):
                        action = A.ClickElement(bid=button) if i == 0 and button else A.Scroll(0, 300 if i % 2 else -300)
                        result = await env.step(created.session_id, action, observation=opts)
                        if result.env_failure:
                            raise RuntimeError(f"environment failure: {result.env_failure_reason}")
                        if result.done:
                            break
                finally:
                    await env.close_session(created.session_id)

            async def run_phase(n: int, bar: Any) -> None:
                remaining, t0, finished = n, time.perf_counter(), 0

                async def worker() -> None:
                    nonlocal remaining, finished
                    while remaining > 0:
                        remaining -= 1
                        try:
                            await cycle()
                        except Exception as exc:  # counted and reported; the run goes on
                            errors[type(exc).__name__] += 1
                            if not example:
                                example.append(str(exc)[:300])
                        finished += 1
                        if progress is not None and bar is not None:
                            rate = finished / max(1e-9, time.perf_counter() - t0)
                            progress.update(bar, advance=1, rate=f"{rate:5.2f} cycles/s")

                await asyncio.gather(*(worker() for _ in range(min(concurrency, n))))

            async def sample(done: int, idle_renderers: int | None) -> MemSample:
                await _settle(mains, idle_renderers)
                rss, pss, uss = _memory()
                kinds = chromium_processes(mains)[0]
                return MemSample(done, round(rss, 1), None if pss is None else round(pss, 1), sum(kinds.values()),
                                 None if uss is None else round(uss, 1))

            warm_bar = progress.add_task("warm-up", total=warmup, rate="") if progress is not None else None
            await run_phase(warmup, warm_bar)
            samples = [await sample(0, None)]
            idle_kinds = chromium_processes(mains)[0]
            bar = progress.add_task("cycles", total=cycles, rate="") if progress is not None else None
            sizes = [cycles // CHUNKS + (1 if i < cycles % CHUNKS else 0) for i in range(CHUNKS)]
            done, measured = 0, 0.0
            for size in (n for n in sizes if n):
                t = time.perf_counter()
                await run_phase(size, bar)
                measured += time.perf_counter() - t   # memory sampling between chunks is not counted
                done += size
                samples.append(await sample(done, idle_kinds["renderer"]))
            stats = await env.pool_stats()

        # warm contexts (opened ahead for the next sessions, each with its blank first page) are the
        # pool's stock, not leftovers of the cycles: only the other contexts count
        await manager.warm.wait_full(30)
        warm = {id(context) for context in manager.warm.contexts()}
        leftover = [ctx for slot in manager.pool.slots if slot.alive for ctx in slot.browser.contexts if id(ctx) not in warm]
        open_contexts = len(leftover)
        pages = sum(len(ctx.pages) for ctx in leftover)
        await _settle(mains, idle_kinds["renderer"])   # the last cycles' renderers may still be exiting
        end_kinds, zombies = chromium_processes(mains)
        async with httpx.AsyncClient(timeout=10) as http:
            site_sessions = int((await http.get(f"{stack.sites.url}/__halo/health")).json().get("sessions", 0))

    first, last = samples[0], samples[-1]
    rss_growth = (last.rss_mb - first.rss_mb) / first.rss_mb * 100
    pss_growth = uss_growth = None
    if first.pss_mb and last.pss_mb is not None:
        pss_growth = (last.pss_mb - first.pss_mb) / first.pss_mb * 100
    if first.uss_mb and last.uss_mb is not None:
        uss_growth = (last.uss_mb - first.uss_mb) / first.uss_mb * 100
    failed = sum(errors.values())
    return LeakReport(
        task=task, cycles=cycles, concurrency=concurrency, warmup=warmup, seconds=round(measured, 2),
        cycles_per_s=round(cycles / measured, 2) if measured else 0.0, failed_cycles=failed, errors=dict(errors),
        error_example=example[0] if example else "", samples=samples,
        growth_metric="uss" if uss_growth is not None else "rss",
        growth_pct=round(uss_growth if uss_growth is not None else rss_growth, 2), rss_growth_pct=round(rss_growth, 2),
        pss_growth_pct=None if pss_growth is None else round(pss_growth, 2),
        uss_growth_pct=None if uss_growth is None else round(uss_growth, 2), target_pct=TARGET_GROWTH_PCT,
        active_sessions=stats.active_sessions, open_contexts=open_contexts, orphan_pages=pages,
        chromium_idle_processes=sum(idle_kinds.values()), chromium_end_processes=sum(end_kinds.values()),
        chromium_idle_by_type=dict(idle_kinds), chromium_end_by_type=dict(end_kinds),
        orphan_processes=max(0, end_kinds["renderer"] - idle_kinds["renderer"]),
        new_browser_services=sorted(k for k in end_kinds if k not in ("renderer", "zombie") and end_kinds[k] > idle_kinds[k]),
        zombie_processes=zombies, site_sessions=site_sessions,
        sessions_created=int(stats.sessions_created),
    )


def render(report: LeakReport) -> Table:
    title = (f"halo bench leak: {report.cycles} create/step/close cycles of {report.task}, "
             f"{report.concurrency} at a time (after {report.warmup} warm-up cycles)")
    table = Table(title=title, show_header=False)
    table.add_column("", justify="left")
    table.add_column("", justify="right")
    metric = report.growth_metric.upper()
    first, last = report.samples[0], report.samples[-1]
    table.add_row("cycles/s", f"{report.cycles_per_s:.2f}  ({report.seconds:.0f} s)")
    table.add_row("failed cycles", f"{report.failed_cycles}" + (f"  {report.errors}: {report.error_example}" if report.failed_cycles else ""))
    table.add_row("RSS after warm-up -> end", f"{first.rss_mb:.0f} MB -> {last.rss_mb:.0f} MB ({report.rss_growth_pct:+.1f}%)")
    if report.pss_growth_pct is not None:
        table.add_row("PSS after warm-up -> end", f"{first.pss_mb:.0f} MB -> {last.pss_mb:.0f} MB ({report.pss_growth_pct:+.1f}%)")
    if report.uss_growth_pct is not None:
        table.add_row("USS after warm-up -> end", f"{first.uss_mb:.0f} MB -> {last.uss_mb:.0f} MB ({report.uss_growth_pct:+.1f}%)")
        table.add_row("USS trend (MB, each 20%)", " ".join(f"{s.uss_mb:.0f}" for s in report.samples if s.uss_mb is not None))
    verdict = "within target" if report.within_target else "OVER TARGET"
    table.add_row(f"memory growth ({metric})", f"{report.growth_pct:+.1f}%  (target < {report.target_pct:g}%: {verdict})")
    table.add_row("open sessions (pool)", str(report.active_sessions))
    table.add_row("open contexts / orphan pages", f"{report.open_contexts} / {report.orphan_pages}")
    table.add_row("Chromium processes idle -> end", f"{report.chromium_idle_processes} -> {report.chromium_end_processes}")
    table.add_row("orphan renderers / zombies", f"{report.orphan_processes} / {report.zombie_processes}")
    if report.new_browser_services:
        table.add_row("browser helpers started meanwhile", ", ".join(report.new_browser_services))
    table.add_row("site sessions left", str(report.site_sessions))
    table.add_row("orphans in all", f"{report.orphans}  ({'OK' if report.ok else 'LEAK'})")
    return table


async def run_leak_bench(cycles: int, concurrency: int, warmup: int, task: str = "playground-signup", steps: int = 2,
                         json_path: str = "") -> int:
    from halo.runtime.logging import configure_logging

    configure_logging("warning")   # the progress bar and the table are the output
    columns = (TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[rate]}"),
               TimeElapsedColumn(), TimeRemainingColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        report = await run_leak_cycles(cycles, concurrency, warmup, task, steps, progress)
    console.print(render(report))
    if json_path:
        Path(json_path).write_text(json.dumps(report.to_json(), indent=2))
    return 0 if report.ok else 1
