"""`halo bench leak` on a small budget: the command runs end to end and its report says nothing is
left behind. (The memory growth and cycles/s are benchmark figures, not asserted here.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

CYCLES = 12


def test_halo_bench_leak_reports_no_orphans(tmp_path):
    out = tmp_path / "leak.json"
    halo = Path(sys.executable).parent / "halo"
    proc = subprocess.run(
        [str(halo), "bench", "leak", "--cycles", str(CYCLES), "--concurrency", "3", "--warmup", "3", "--json", str(out)],
        capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for line in ("cycles/s", "memory growth (USS)", "target < 10%", "open sessions (pool)", "orphan pages",
                 "Chromium processes idle -> end", "orphan renderers / zombies", "orphans in all"):
        assert line in proc.stdout, proc.stdout

    report = json.loads(out.read_text())
    assert report["cycles"] == CYCLES and report["concurrency"] == 3 and report["warmup"] == 3
    assert report["failed_cycles"] == 0 and report["errors"] == {}, report["error_example"]
    assert report["sessions_created"] == CYCLES + 3
    # memory: one idle sample after the warm-up, then one after each fifth of the cycles
    samples = report["samples"]
    assert [s["cycles"] for s in samples] == [0, 3, 6, 8, 10, 12]
    assert all(s["rss_mb"] > 0 and s["pss_mb"] > 0 and s["uss_mb"] > 0 and s["chromium_processes"] > 0 for s in samples)
    assert report["growth_metric"] == "uss" and isinstance(report["growth_pct"], float)
    assert report["target_pct"] == 10.0 and report["cycles_per_s"] > 0
    # nothing left behind
    assert report["active_sessions"] == 0
    assert report["open_contexts"] == 0 and report["orphan_pages"] == 0
    assert report["orphan_processes"] == 0   # (zombies are reported, not asserted: Chromium reaps its own)
    idle, end = report["chromium_idle_by_type"], report["chromium_end_by_type"]
    assert idle["browser"] == end["browser"] == 1 and end.get("renderer", 0) <= idle.get("renderer", 0)
    assert sum(end.values()) == report["chromium_end_processes"]
    assert report["site_sessions"] == 0
    assert report["orphans"] == 0 and report["ok"] is True


def test_halo_bench_leak_rejects_a_zero_budget():
    from halo.cli.main import main

    try:
        main(["bench", "leak", "--cycles", "0"])
    except SystemExit as exc:
        assert exc.code == 2
    else:
        raise AssertionError("--cycles 0 was accepted")
