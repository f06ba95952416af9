"""`halo eval` as a user runs it (a subprocess), against the services of this test session."""

from __future__ import annotations

import asyncio
import os
import sys

from PIL import Image


async def halo_eval(*args: str, timeout: float = 400) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "halo.cli", "eval", *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        env={**os.environ, "COLUMNS": "250"},   # rich wraps at the terminal width
    )
    out, _ = await asyncio.wait_for(proc.communicate(), timeout)
    return proc.returncode, out.decode()


def services(targets, gateway: str = "") -> list[str]:
    return ["--env", targets.env, "--reward", targets.reward, "--gateway", gateway or targets.gateway]


async def test_cli_evaluates_resumes_reports_lists_and_compares(targets, scripted_eval, evals_dir):
    root = ["--evals-dir", str(evals_dir)]
    rc, out = await halo_eval("--mode", "embedded", "--tasks", "playground-signup", "--seeds", "0-1", "--max-steps", "2",
                              "--workers", "2", "--no-screenshots", "--eval-id", "cli-a", *root, *services(targets))
    assert rc == 0, out
    assert "cli-a: success per site" in out and "playground-signup seed 1" in out and "viewer:" in out
    assert len(list((evals_dir / "cli-a" / "episodes").glob("*/episode.json"))) == 2

    rc, out = await halo_eval("--mode", "embedded", "--tasks", "playground-signup", "--eval-id", "cli-a", *root, *services(targets))
    assert rc == 2 and "--resume cli-a" in out

    rc, out = await halo_eval("--resume", "cli-a", *root, *services(targets))
    assert rc == 0 and "2 episodes already saved, 0 to run" in out, out

    rc, out = await halo_eval("compare", "cli-a", "scripted", *root)
    assert rc == 0, out
    assert "cli-a (embedded) vs scripted (embedded)" in out and "playground" in out
    compare_dir = evals_dir / "compare-cli-a-vs-scripted"
    md = (compare_dir / "compare.md").read_text()
    assert "| site | success cli-a | success scripted | Δ success |" in md
    assert "| playground-drag | – | 1/1 |" in md   # run by one side only
    assert Image.open(compare_dir / "compare.png").format == "PNG"

    (evals_dir / "cli-a" / "report.md").unlink()
    rc, out = await halo_eval("report", "cli-a", *root)
    assert rc == 0 and (evals_dir / "cli-a" / "report.md").is_file()

    rc, out = await halo_eval("list", *root)
    assert rc == 0 and "cli-a" in out and "scripted" in out

    rc, out = await halo_eval("compare", "cli-a", "nope", *root)
    assert rc == 2 and "no evaluation 'nope'" in out


async def test_cli_names_the_missing_api_key_and_keeps_no_empty_eval(targets, broken_gateway, evals_dir):
    gateway, _ = broken_gateway
    rc, out = await halo_eval("--mode", "gpt5_baseline", "--tasks", "playground-signup", "--eval-id", "nokey",
                              "--evals-dir", str(evals_dir), *services(targets, gateway))
    assert rc == 2, out
    assert "mode gpt5_baseline cannot sample from route 'gpt'" in out and "set OPENAI_API_KEY" in out, out
    assert not (evals_dir / "nokey").exists()
