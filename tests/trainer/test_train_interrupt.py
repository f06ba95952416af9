"""Ctrl-C on a local `halo train`: the run ends at once, keeps its completed steps and their curves,
says how to continue, and the command exits 130 without a traceback; `halo train --resume` then
goes on from the last checkpoint, no step lost or repeated (real services, Chromium)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

HALO = str(Path(sys.executable).parent / "halo")


def _metrics(runs: Path) -> list[dict]:
    files = list(runs.glob("*/metrics.jsonl"))
    return [json.loads(line) for line in files[0].read_text().splitlines()] if files else []


def _interrupt_after(args: list[str], runs: Path, steps: int) -> str:
    """Run `halo train ARGS`, send SIGINT (what Ctrl-C sends) once `steps` steps are in metrics.jsonl."""
    # SIGINT as a terminal delivers it: a shell that starts a job in the background without job
    # control (`make test &`, nohup) makes it ignore SIGINT, its children inherit that, and Python
    # then keeps ignoring it, rightly; the child is given the default disposition back.
    proc = subprocess.Popen([HALO, "train", *args, "--runs-dir", str(runs)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env={**os.environ, "COLUMNS": "200"},
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 300
        while len(_metrics(runs)) < steps:
            assert proc.poll() is None, proc.stdout.read()
            assert time.monotonic() < deadline, f"step {steps} not completed in 300 s"
            time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        try:
            out, _ = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:   # say where it waits: halo prints its stacks on SIGUSR1
            proc.send_signal(signal.SIGUSR1)
            time.sleep(3)
            proc.kill()
            out, _ = proc.communicate(timeout=30)
            raise AssertionError(f"halo train did not end within 120 s of Ctrl-C; its output and stacks:\n{out[-12000:]}")
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, out
    assert "Traceback" not in out, out
    return out


def test_ctrl_c_keeps_the_completed_steps_and_resume_goes_on_from_them(tmp_path: Path):
    runs = tmp_path / "runs"
    out = _interrupt_after(["--tasks", "playground-signup", "--steps", "50", "--group-size", "2", "--groups-per-batch", "1",
                            "--max-actions", "2", "--eval-every", "0"], runs, steps=1)
    (run_dir,) = runs.iterdir()
    resume = f"halo train --resume {run_dir.name} --runs-dir {runs}"
    assert f"interrupted: run {run_dir.name} keeps its" in out and resume in out, out
    record = json.loads((run_dir / "run.json").read_text())
    completed = len(_metrics(runs))
    assert record["state"] == "interrupted" and record["step"] == completed and 1 <= completed < 50, record
    assert (run_dir / "curves.png").stat().st_size > 0
    assert (run_dir / "checkpoints" / f"step-{completed:06d}").is_dir()

    _interrupt_after(resume.split()[2:], runs, steps=completed + 1)      # the printed command, run as is
    steps = [row["step"] for row in _metrics(runs)]
    assert steps == list(range(1, len(steps) + 1)) and len(steps) > completed, steps   # none lost, none repeated
    assert json.loads((run_dir / "run.json").read_text())["state"] == "interrupted"
