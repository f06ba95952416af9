"""Ctrl-C on a local `halo train`: the run ends at once, keeps its completed steps and their curves,
says how to continue, and the command exits 130 without a traceback (real services, Chromium)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path


def test_ctrl_c_keeps_the_completed_steps_and_says_how_to_resume(tmp_path: Path):
    runs = tmp_path / "runs"
    proc = subprocess.Popen(
        [str(Path(sys.executable).parent / "halo"), "train", "--tasks", "playground-signup", "--steps", "50",
         "--group-size", "2", "--groups-per-batch", "1", "--max-steps", "2", "--eval-every", "0", "--runs-dir", str(runs)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env={**os.environ, "COLUMNS": "200"})
    try:
        deadline = time.monotonic() + 300
        while not any(runs.glob("*/metrics.jsonl")) or not next(runs.glob("*/metrics.jsonl")).read_text().strip():
            assert proc.poll() is None, proc.stdout.read()
            assert time.monotonic() < deadline, "no step completed in 300 s"
            time.sleep(0.5)
        proc.send_signal(signal.SIGINT)      # what Ctrl-C sends to the foreground process
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    (run_dir,) = runs.iterdir()
    record = json.loads((run_dir / "run.json").read_text())
    assert proc.returncode == 130, out
    assert "Traceback" not in out, out
    assert f"interrupted: run {run_dir.name} keeps its" in out and f"halo train --resume {run_dir.name} --runs-dir {runs}" in out, out
    assert record["state"] == "interrupted", record
    completed = len((run_dir / "metrics.jsonl").read_text().splitlines())
    assert 1 <= completed < 50 and record["step"] == completed
    assert (run_dir / "curves.png").stat().st_size > 0
    assert (run_dir / "checkpoints" / f"step-{completed:06d}").is_dir()
