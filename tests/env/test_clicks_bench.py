"""`halo bench clicks` on a small budget: the command runs end to end and reports each kind of
click. (Its latencies are benchmark figures, in docs/benchmarks.md, not asserted here.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def test_halo_bench_clicks_reports_each_kind_of_click(tmp_path):
    out = tmp_path / "clicks.json"
    halo = Path(sys.executable).parent / "halo"
    proc = subprocess.run([str(halo), "bench", "clicks", "--clicks", "2", "--pages", "1", "--json", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(out.read_text())
    assert list(report["rows"]) == ["select: Playwright's click (popup)", "select: the env's click", "button: the env's click"]
    assert all(row["clicks"] == 2 and 0 < row["p50_ms"] <= row["max_ms"] for row in report["rows"].values())


def test_halo_bench_clicks_rejects_a_zero_budget():
    halo = Path(sys.executable).parent / "halo"
    proc = subprocess.run([str(halo), "bench", "clicks", "--pages", "0"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "must be at least 1" in proc.stderr
