"""Runs on a trainer service, managed from the command line: `halo runs list|follow|stop` and
`halo train --resume RUN_ID [--submit HOST:PORT]`, which keeps the run's stored spec.

One trainer service on loopback for the module, hosting the counting trainer of test_jobs.py (the
job machinery and the CLI do not depend on what a step trains; test_grpo.py runs GRPO itself).
The commands run as the user runs them, `halo.cli.main.main`, each in a thread of its own with
its own event loop, beside the service's.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from halo.cli.main import main
from halo.runs.spec import RunSpec
from halo.runtime.server import start_service
from halo.trainer.config import TrainerSettings
from halo.trainer.server import build_service
from halo.trainer.store import RunRecord, RunState, RunStore
from tests.trainer.test_jobs import counting_trainer

STEP_S = 0.25   # long enough for `halo runs stop` to find a 4-step run running


@pytest.fixture(scope="module")
async def trainer(tmp_path_factory):
    settings = TrainerSettings(port=0, metrics_port=-1, runs_dir=str(tmp_path_factory.mktemp("runs")))
    running = await start_service(build_service(settings, resolver=counting_trainer(step_delay=STEP_S)), settings)
    yield running.target
    await running.stop(grace=1)


async def halo(capsys, *argv: str) -> tuple[int, str, str]:
    """`halo ARGV...`: exit code, stdout, stderr."""
    code = await asyncio.to_thread(main, list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_id_in(out: str) -> str:
    return next(line.split("run ")[1].split()[0] for line in out.splitlines() if "run " in line)


async def test_a_submitted_run_is_listed_followed_and_finished_runs_do_not_stop(trainer, capsys):
    code, out, _ = await halo(capsys, "train", "--submit", trainer, "--tasks", "playground-signup", "--steps", "2", "--group-size", "3")
    assert code == 0, out
    run_id = run_id_in(out)
    code, out, _ = await halo(capsys, "runs", "list", "--trainer", trainer)
    assert code == 0 and run_id in out and "succeeded" in out and "2/2" in out and "grpo/embedded" in out
    code, out, _ = await halo(capsys, "runs", "list", "--trainer", trainer, "--json")
    (row,) = [r for r in json.loads(out) if r["run_id"] == run_id]
    assert row["state"] == "succeeded" and row["step"] == row["total_steps"] == 2 and row["error"] == ""
    code, out, _ = await halo(capsys, "runs", "follow", run_id, "--trainer", trainer)
    assert code == 0 and "step 1:" in out and "step 2:" in out and "succeeded" in out
    code, _, err = await halo(capsys, "runs", "stop", run_id, "--trainer", trainer)
    assert code == 2 and f"run {run_id} is not running (succeeded)" in err
    code, _, err = await halo(capsys, "runs", "follow", "no-such-run", "--trainer", trainer)
    assert code == 2 and "unknown run 'no-such-run'" in err


async def test_stop_then_resume_on_the_service_keeps_the_stored_spec(trainer, capsys):
    from halo.client.trainer import TrainerClient

    async with TrainerClient(trainer) as client:
        run = await client.start_run(RunSpec(task_ids=["playground-signup"], total_steps=4, group_size=3))
        code, out, _ = await halo(capsys, "runs", "stop", run.run_id, "--trainer", trainer)
        stopped = await client.get_run(run.run_id)
        runs_before = {r.run_id for r in await client.list_runs()}
    assert code == 0 and "stopped at step" in out and stopped.step < 4, out
    for flag, value in (("--backend", "tinker"), ("--group-size", "5"), ("--extra", "{}")):
        code, _, err = await halo(capsys, "train", "--resume", run.run_id, "--submit", trainer, flag, value)
        assert code == 2 and err.startswith(f"halo train: {flag} ") and "only --steps may change" in err, err
    # flags that repeat the stored spec are fine; the group size not typed is the stored 3, not the default 8
    code, out, _ = await halo(capsys, "train", "--resume", run.run_id, "--submit", trainer, "--tasks", "playground-signup")
    assert code == 0 and f"resumed run {run.run_id}" in out and "step 4:" in out, out
    code, out, _ = await halo(capsys, "train", "--resume", run.run_id, "--submit", trainer, "--steps", "5")   # extend it
    assert code == 0 and "at step 4/5" in out and "step 5:" in out, out
    async with TrainerClient(trainer) as client:
        resumed = await client.get_run(run.run_id)
        assert {r.run_id for r in await client.list_runs()} == runs_before   # resumed, not started anew
    assert (resumed.state, resumed.step, resumed.spec.total_steps, resumed.spec.group_size) == (5, 5, 5, 3)
    code, _, err = await halo(capsys, "train", "--resume", run.run_id, "--submit", trainer)
    assert code == 2 and "already finished all 5 steps" in err
    code, _, err = await halo(capsys, "train", "--resume", "no-such-run", "--submit", trainer)
    assert code == 2 and "unknown run 'no-such-run'" in err


def test_a_local_resume_takes_the_stored_spec_and_refuses_contradicting_flags(tmp_path: Path, capsys, monkeypatch):
    import halo.cli.train

    stored = RunSpec(kind="grpo", backend="embedded", task_ids=["playground-signup"], group_size=3, total_steps=4)
    RunStore(tmp_path).save(RunRecord(run_id="r1", spec=stored, state=RunState.STOPPED, step=2))
    resumed: list[tuple[RunSpec, str, int]] = []

    async def fake_train_local(spec, runs_dir, resume="", total_steps=0, **targets):
        resumed.append((spec, resume, total_steps))
        return 0

    monkeypatch.setattr(halo.cli.train, "train_local", fake_train_local)
    runs = ["--runs-dir", str(tmp_path)]
    assert main(["train", "--resume", "r1", *runs, "--backend", "tinker"]) == 2
    assert "--backend tinker contradicts run r1, started with embedded" in capsys.readouterr().err
    assert main(["train", "--resume", "r1", *runs, "--tasks", "gomail-1"]) == 2
    assert "--tasks gomail-1 contradicts run r1, started with playground-signup" in capsys.readouterr().err
    assert main(["train", "--resume", "r1", *runs, "--steps", "1"]) == 2
    assert "--steps 1 is below the 2 steps run r1 has completed" in capsys.readouterr().err
    assert main(["train", "--resume", "nope", *runs]) == 2
    assert "no such run" in capsys.readouterr().err
    assert main(["train", "--resume", "r1", *runs, "--backend", "embedded", "--steps", "9"]) == 0
    ((spec, run_id, total_steps),) = resumed
    assert (spec.group_size, spec.backend, run_id, total_steps) == (3, "embedded", "r1", 9)
