"""docs/guides/quickstart-tinker.md as written, without a Tinker key: its train command is refused
before anything starts (exit 2, one line naming TINKER_API_KEY), and its eval command, given a run
folder as the Tinker trainer writes it, samples that run's last weights on the tinker route and is
refused for the same reason. The run itself is covered offline by tests/tinker/test_tinker_train.py
and live by tests/tinker/test_live.py."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
GUIDE = REPO / "docs" / "guides" / "quickstart-tinker.md"


def quickstart_commands() -> list[str]:
    """The guide's first shell block: one command per line (continuations joined), comments dropped."""
    block = re.search(r"```bash\n(.*?)```", GUIDE.read_text(), re.S).group(1).replace("\\\n", " ")
    return [line.split("  #", 1)[0].strip() for line in block.splitlines() if line.strip()]


def run_as_written(command: str, cwd: Path) -> subprocess.CompletedProcess:
    argv = shlex.split(command)
    argv[0] = str(REPO / argv[0])   # .venv/bin/halo of this checkout, run from a fresh folder
    env = {k: v for k, v in os.environ.items() if k != "TINKER_API_KEY"}
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def test_the_quickstart_says_what_the_key_is_and_runs_halo_train_then_halo_eval():
    commands = quickstart_commands()
    assert commands[0] == "make setup" and commands[1].startswith("export TINKER_API_KEY=")
    assert [c.split()[1] for c in commands[2:]] == ["train", "eval"]
    assert "--backend tinker" in commands[2] and "--adapter runs/RUN_ID" in commands[3]


def test_without_a_key_train_is_refused_before_it_starts_and_eval_names_the_tinker_route(tmp_path: Path):
    from tests.tinker.fakes import tinker_run_folder

    train, evaluate = quickstart_commands()[2:]
    refused = run_as_written(train, tmp_path)
    assert refused.returncode == 2, refused
    assert refused.stderr.strip().splitlines() == [
        "halo train: --backend tinker needs an API key: set TINKER_API_KEY (https://auth.thinkingmachines.ai/sign-up)"]
    assert not (tmp_path / "runs").exists()   # nothing started, nothing written

    # RUN_ID as the Tinker trainer leaves it: checkpoints that name their weights on Tinker
    tinker_run_folder(tmp_path / "runs" / "RUN_ID", recorded=[1], checkpointed=[1])
    evaluated = run_as_written(evaluate, tmp_path)
    assert evaluated.returncode == 2, evaluated
    said = " ".join((evaluated.stdout + evaluated.stderr).split())
    assert "route 'qwen3vl-tinker'" in said and "tinker://m/sampler/1" in said and "TINKER_API_KEY" in said, said
