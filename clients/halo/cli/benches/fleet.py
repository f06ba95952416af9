"""`halo bench env --replicas 1,2,3`: steps/s through one fleet target over 1, 2, 3 env replicas,
and the fleet client's routing overhead against a direct connection to one replica.

Each replica is a `halo serve env` process of its own (as pods would be), all on one sites server
in this process. Every level runs the same loop as `halo bench env` (fill, scroll, scroll, hover,
JPEG + AXTree after each step) with N sessions through `EnvClient("host:port,host:port,...")`.
The overhead is measured on one replica, direct (`EnvClient("host:port")`) and through the fleet
(`EnvClient("fleet://host:port")`), in alternating rounds so both see the same machine load; it
reports the medians of the rounds (goal: at most 5%). On a machine with fewer cores than replicas
need, more replicas add no throughput: the table shows what routing costs, not what nodes add.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import statistics
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from halo.cli.benches.env import _service_level

console = Console()


@dataclass
class FleetRow:
    label: str            # "fleet of 2", "direct", "fleet://one"
    replicas: int
    sessions: int
    steps_per_s: float
    p50_ms: float
    spread: dict[str, int]   # sessions placed per replica (fleet rows)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def _start_replica(sites_url: str, pool_size: int) -> tuple[asyncio.subprocess.Process, str]:
    from halo.client.env import EnvClient

    port = _free_port()
    halo = str(Path(sys.executable).parent / "halo")
    proc = await asyncio.create_subprocess_exec(
        halo, "serve", "env", "--port", str(port), "--metrics-port", "-1", "--sites-url", sites_url,
        "--pool-size", str(pool_size), "--log-level", "warning",
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
    target = f"127.0.0.1:{port}"
    async with EnvClient(target) as probe:
        for _ in range(1200):
            if await probe.healthy(timeout_s=1):
                return proc, target
            if proc.returncode is not None:
                break
            await asyncio.sleep(0.1)
    proc.kill()
    raise RuntimeError(f"env replica on {target} did not become healthy")


async def _measure(target: str, sessions: int, steps: int, progress, label: str) -> tuple[float, float, dict[str, int]]:
    from halo.client.env import EnvClient

    async with EnvClient(target, timeout_s=120) as env:
        task = progress.add_task(label, total=sessions * steps)
        result = await _service_level(env, sessions, steps, "jpeg", progress, task)
        spread = env.placements() if hasattr(env, "placements") else {}
    return result.steps_per_s, result.p50_ms, spread


async def run_fleet_bench(replicas: list[int], sessions: int, steps: int, rounds: int, json_path: str = "") -> int:
    from halo.sites.server import BackgroundSitesServer, SitesSettings

    sites = BackgroundSitesServer(SitesSettings(port=0, data_dir="")).start()
    procs: list[asyncio.subprocess.Process] = []
    rows: list[FleetRow] = []
    try:
        with console.status(f"starting {max(replicas)} env replica processes…"):
            started = await asyncio.gather(*(_start_replica(sites.url, sessions) for _ in range(max(replicas))))
        procs = [p for p, _ in started]
        targets = [t for _, t in started]
        with Progress(console=console, transient=True) as progress:
            await _measure(targets[0], 1, 4, progress, "warm-up")
            for n in replicas:
                fleet = ",".join(targets[:n]) if n > 1 else f"fleet://{targets[0]}"
                rate, p50, spread = await _measure(fleet, sessions, steps, progress, f"fleet of {n}")
                rows.append(FleetRow(f"fleet of {n}", n, sessions, rate, p50, spread))
                progress.console.print(f"fleet of {n}: {rate:.1f} steps/s, p50 {p50:.0f} ms, spread {spread}")
            direct, routed = [], []
            for r in range(rounds):   # alternating, so both paths see the same load
                direct.append(await _measure(targets[0], sessions, steps, progress, f"direct, round {r + 1}"))
                routed.append(await _measure(f"fleet://{targets[0]}", sessions, steps, progress, f"fleet, round {r + 1}"))
                progress.console.print(f"round {r + 1}: direct {direct[-1][0]:.1f}, fleet {routed[-1][0]:.1f} steps/s")
        d_rate = statistics.median(x[0] for x in direct)
        f_rate = statistics.median(x[0] for x in routed)
        d_p50 = statistics.median(x[1] for x in direct)
        f_p50 = statistics.median(x[1] for x in routed)
        rows += [FleetRow("direct (1 replica)", 1, sessions, d_rate, d_p50, {}),
                 FleetRow("fleet:// (1 replica)", 1, sessions, f_rate, f_p50, {})]
    finally:
        for proc in procs:
            if proc.returncode is None:
                proc.send_signal(signal.SIGTERM)
        for proc in procs:
            try:
                await asyncio.wait_for(proc.wait(), 30)
            except TimeoutError:
                proc.kill()
        sites.stop()

    table = Table(title=f"halo bench env --replicas ({sessions} sessions, {steps} steps each, {os.cpu_count()} cores)")
    for col in ("through", "replicas", "steps/s", "p50 ms", "sessions per replica"):
        table.add_column(col, justify="right")
    for row in rows:
        table.add_row(row.label, str(row.replicas), f"{row.steps_per_s:.1f}", f"{row.p50_ms:.0f}",
                      " / ".join(str(v) for v in row.spread.values()))
    console.print(table)
    overhead = (d_rate - f_rate) / d_rate * 100
    verdict = "within" if overhead <= 5 else "OVER"
    console.print(f"routing overhead (median of {rounds} alternating rounds, one replica): {overhead:+.1f}% steps/s, "
                  f"p50 {f_p50 - d_p50:+.1f} ms — {verdict} the 5% goal")
    if json_path:
        Path(json_path).write_text(json.dumps({"rows": [asdict(r) for r in rows], "overhead_pct": overhead}, indent=2))
    return 0 if overhead <= 5 else 1
