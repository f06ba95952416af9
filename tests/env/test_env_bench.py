"""`halo bench env` on a small budget: the three modes (HALO's env service, raw Playwright, agisdk's own
BrowserEnv in worker processes) run the same loop on the replica in one run, and a failing agisdk
worker is reported, not hung on. (Throughput and memory are benchmark figures, not asserted here.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

STEPS = 4


def test_halo_bench_env_runs_service_raw_and_agisdk_side_by_side(tmp_path):
    out = tmp_path / "env.json"
    halo = Path(sys.executable).parent / "halo"
    proc = subprocess.run(
        [str(halo), "bench", "env", "--sessions", "1", "--actions", str(STEPS), "--agisdk-slow-mo", "0", "--json", str(out)],
        capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "slow_mo 0 ms" in proc.stdout and "÷ raw" in proc.stdout, proc.stdout

    results = {r["mode"]: r for r in json.loads(out.read_text())}
    assert set(results) == {"service", "raw", "agisdk"}
    for r in results.values():
        assert r["sessions"] == 1 and r["steps"] == STEPS, r
        assert r["steps_per_s"] > 0 and 0 < r["p50_ms"] <= r["p95_ms"], r
    # the service's steps, phase by phase, from inside the service (its StepTimings)
    assert "Step phases inside the env service" in proc.stdout, proc.stdout
    phases = results["service"]["phases_ms"]
    assert set(phases) == {"action", "settle", "axtree", "screenshot", "observe", "state", "total"}, phases
    assert all(0 < p50 <= p95 for name, (p50, p95) in phases.items() if name != "state"), phases
    assert phases["state"] == [0, 0]   # no include_state in this mode
    # each step inside the service is part of the same step as the client saw it
    assert phases["observe"][0] <= phases["total"][0] <= results["service"]["p50_ms"], (phases, results["service"])
    # the CPU each kind of process spent per step, for the service and the raw floor (agisdk's
    # workers are processes of their own, not counted by kind)
    from halo.cli.benches.env import CPU_KINDS

    assert "CPU ms per step by process" in proc.stdout, proc.stdout
    for mode in ("service", "raw"):
        cpu = results[mode]["cpu_ms_per_step"]
        assert set(cpu) == set(CPU_KINDS), cpu
        assert all(cpu[kind] > 0 for kind in ("bench", "driver", "browser", "renderers")), (mode, cpu)
    assert results["agisdk"]["cpu_ms_per_step"] == {}
    # agisdk's environment is a Python process with a Playwright driver and two Chromiums (task +
    # chat window); a session of the service or the raw floor is one browser context
    assert results["agisdk"]["pss_per_session_mb"] > results["raw"]["pss_per_session_mb"]
    assert results["agisdk"]["pss_per_session_mb"] > results["service"]["pss_per_session_mb"]


def test_a_level_longer_than_the_servers_episode_cap_runs_to_its_end(tmp_path):
    """`--actions` past the env's default episode length (70 steps) is the level's length, not an
    episode that ends under the bench."""
    out = tmp_path / "long.json"
    halo = Path(sys.executable).parent / "halo"
    proc = subprocess.run([str(halo), "bench", "env", "--sessions", "1", "--actions", "72", "--modes", "service",
                           "--json", str(out)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [r["steps"] for r in json.loads(out.read_text())] == [72]


def test_a_failing_agisdk_worker_is_an_error_not_a_hang(tmp_path):
    from halo.cli.benches.agisdk_harness import HarnessError, HarnessWorkers, HarnessWorkerSpec, playwright_browser_links, write_task_file
    from halo.env.browsers import find_chromium
    from halo.tasks.registry import TaskRegistry

    dead_site = "http://127.0.0.1:9/playground/"   # discard port: nothing answers
    task_file = write_task_file(TaskRegistry.load().get("playground-name").raw, dead_site, str(tmp_path))
    chromium = find_chromium()
    links = playwright_browser_links(chromium, str(tmp_path / "browsers")) if chromium else None
    spec = HarnessWorkerSpec(task_file, dead_site, STEPS, 0, links)
    workers = HarnessWorkers([spec])
    try:
        with pytest.raises(HarnessError, match="ERR_CONNECTION_REFUSED|net::"):
            workers.wait_ready(timeout_s=120)
    finally:
        workers.close(timeout_s=30)
    assert workers.alive == 0


def test_halo_bench_env_rejects_unknown_modes():
    from halo.cli.main import main

    with pytest.raises(SystemExit) as exc:
        main(["bench", "env", "--modes", "service,selenium"])
    assert exc.value.code == 2


def test_halo_bench_env_times_create_sessions_cold_warm_and_primed(tmp_path):
    """The create modes: bursts of concurrent CreateSession without warm contexts, then with them
    (every create of the warm mode takes one), then with sessions primed for the recurring task
    (after the first burst), and the phases inside the service; then GRPO-like rounds of fresh
    (task, seed) pairs, without and with each round announcing the next (PrimeSessions)."""
    out = tmp_path / "create.json"
    halo = Path(sys.executable).parent / "halo"
    proc = subprocess.run(
        [str(halo), "bench", "env", "--sessions", "2", "--modes",
         "create-cold,create,create-primed,create-grpo,create-grpo-hinted", "--create-rounds", "3",
         "--create-task", "playground-signup", "--json", str(out)],
        capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "CreateSession ms" in proc.stdout, proc.stdout
    results = {r["mode"]: r for r in json.loads(out.read_text())}
    assert set(results) == {"create-cold", "create", "create-primed", "create-grpo", "create-grpo-hinted"}
    assert results["create-cold"]["warm_share"] == 0 and results["create"]["warm_share"] == 1
    assert results["create"]["primed_share"] == 0 and results["create-primed"]["primed_share"] > 0
    # a fresh (task, seed) per round: never primed unless announced; the first round never is
    assert results["create-grpo"]["primed_share"] == 0 and 0 < results["create-grpo-hinted"]["primed_share"] <= 4 / 6
    assert results["create-grpo"]["round_s"] > 0 and results["create-grpo-hinted"]["round_s"] > 0
    for r in results.values():
        assert r["creates"] == 6 and 0 < r["p50_ms"] <= r["p95_ms"], r
        assert 0 <= r["service_p50_ms"] <= r["p95_ms"], r
        assert set(r["phases_p50_ms"]) == {"slot", "context", "config", "navigate", "observe"}, r
