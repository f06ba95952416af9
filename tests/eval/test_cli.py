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
    rc, out = await halo_eval("--mode", "embedded", "--tasks", "playground-signup", "--seeds", "0-1", "--max-actions", "2",
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
    assert "| site | success cli-a | success scripted | Δ success | strict cli-a | strict scripted |" in md
    assert "| playground-drag | – | 1/1 |" in md   # run by one side only
    assert Image.open(compare_dir / "compare.png").format == "PNG"

    (evals_dir / "cli-a" / "report.md").unlink()
    rc, out = await halo_eval("report", "cli-a", *root)
    assert rc == 0 and "| task | site | success | strict success |" in (evals_dir / "cli-a" / "report.md").read_text()

    rc, out = await halo_eval("list", *root)
    assert rc == 0 and "cli-a" in out and "scripted" in out and "strict success" in out

    rc, out = await halo_eval("compare", "cli-a", "nope", *root)
    assert rc == 2 and "no evaluation 'nope'" in out


async def test_cli_names_the_missing_api_key_and_keeps_no_empty_eval(targets, broken_gateway, evals_dir):
    gateway, _ = broken_gateway
    rc, out = await halo_eval("--mode", "gpt5_baseline", "--tasks", "playground-signup", "--eval-id", "nokey",
                              "--evals-dir", str(evals_dir), *services(targets, gateway))
    assert rc == 2, out
    assert "mode gpt5_baseline cannot sample from route 'gpt'" in out and "set OPENAI_API_KEY" in out, out
    assert not (evals_dir / "nokey").exists()


async def test_eval_runs_as_a_trainer_service_job(targets, tmp_path):
    import json
    from pathlib import Path

    import pytest

    from halo.client.trainer import TrainerClient
    from halo.errors import InvalidArgument
    from halo.runtime.server import start_service
    from halo.trainer.config import TrainerSettings
    from halo.cli.registry import resolve_trainer
    from halo.runs.spec import RunSpec
    from halo.trainer.server import build_service

    settings = TrainerSettings(port=0, metrics_port=-1, runs_dir=str(tmp_path), env_target=targets.env,
                               reward_target=targets.reward, gateway_target=targets.gateway)
    trainer = await start_service(build_service(settings, resolver=resolve_trainer), settings)
    try:
        rc, out = await halo_eval("--mode", "embedded", "--tasks", "playground-signup", "--seeds", "0-1", "--max-actions", "2",
                                  "--workers", "2", "--no-screenshots", "--submit", trainer.target)
        assert rc == 0, out
        assert "submitted eval run" in out and "playground-signup seed 1:" in out and "succeeded" in out, out
        [run_dir] = [p for p in tmp_path.iterdir() if p.is_dir()]
        assert len(list((run_dir / "eval" / "episodes").glob("*/episode.json"))) == 2
        assert "| playground | 2 |" in (run_dir / "eval" / "report.md").read_text()
        async with TrainerClient(trainer.target) as client:
            [run] = await client.list_runs()
            assert run.spec.mode == "embedded" and run.step == 1
            assert set(run.last_metrics) >= {"success_rate", "success_rate/playground", "action_validity", "episode_length"}
            [ckpt] = await client.list_checkpoints(run.run_id)
            summary = json.loads((Path(ckpt.path) / "summary.json").read_text())
            assert summary["metrics"]["episodes"] == 2 and summary["eval_dir"].endswith(f"{run.run_id}/eval")
            for bad, message in ((dict(mode="embedded", total_steps=20), "one step"), (dict(mode="gpt4", total_steps=1), "need a mode")):
                with pytest.raises(InvalidArgument, match=message):
                    await client.start_run(RunSpec(kind="eval", task_ids=["playground-signup"], **bad))
    finally:
        await trainer.stop(grace=1.0)
