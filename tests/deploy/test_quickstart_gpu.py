"""The quickstart of docs/guides/quickstart-gpu.md, run as written on this machine with the tiny
random Qwen3-VL: its shell block's commands in order (after `make setup vllm`, which the test tier
has done), in a fresh folder, to a finished local_lora run through the CPU vLLM and an evaluation of
its adapter."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GUIDE = REPO / "docs" / "guides" / "quickstart-gpu.md"


def quickstart_commands() -> list[str]:
    """The shell block under "On any machine": one command per line, comments dropped."""
    text = GUIDE.read_text()
    section = text[text.index("## On any machine"):]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    return [line.split("  #", 1)[0].strip() for line in block.splitlines() if line.strip()]


def test_the_quickstart_block_is_the_sequence_this_test_runs():
    commands = quickstart_commands()
    assert commands[0] == "make setup vllm"
    assert [c.split()[1] if c.startswith(".venv/bin/halo") else c.split()[0] for c in commands[1:]] == \
        ["MODEL=$PWD/.halo/tiny-qwen3vl", ".venv/bin/python", "up", "train", "eval", "down"]


@pytest.mark.vllm_own_server
@pytest.mark.timeout(1500)
def test_the_quickstart_trains_through_vllm_and_evaluates_the_adapter(tmp_path):
    (tmp_path / ".venv").symlink_to(REPO / ".venv")
    env = {**os.environ, "PWD": str(tmp_path), "PYTHONUNBUFFERED": "1"}
    env.pop("HALO_RUN_DIR", None)
    outputs: list[str] = []
    run_id = ""
    try:
        for command in quickstart_commands()[1:]:
            if command.startswith("MODEL="):
                env["MODEL"] = command.split("=", 1)[1].replace("$PWD", str(tmp_path))
                continue
            argv = [os.path.expandvars(a) if "$" in a else a for a in shlex.split(command.replace("$PWD", str(tmp_path)))]
            argv = [a.replace("$MODEL", env["MODEL"]) for a in argv]
            argv = [a.replace("RUN_ID", run_id) for a in argv]
            done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
            outputs.append(f"$ {command}\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
            assert done.returncode == 0, "\n".join(outputs)
            if argv[1:2] == ["train"]:
                run_id = re.search(r"run (\S+) \(grpo/local_lora\)", done.stdout).group(1)
    finally:
        subprocess.run([str(REPO / ".venv" / "bin" / "halo"), "down"], cwd=tmp_path, env=env, capture_output=True, timeout=120)
    run = tmp_path / "runs" / run_id
    assert (run / "checkpoints" / "step-000002" / "adapter" / "adapter_model.safetensors").exists(), "\n".join(outputs)
    reports = list((tmp_path / "evals").glob("*/report.md"))
    assert len(reports) == 1, "\n".join(outputs)
    assert "playground-signup" in reports[0].read_text()
