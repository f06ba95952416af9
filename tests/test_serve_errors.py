"""`halo serve NAME` refuses bad settings before it serves: one line per problem that names the
flag (and its environment variable) or the file, never an internal field name or a traceback,
exit code 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from halo.cli.serve import main as serve

HALO = Path(sys.executable).parent / "halo"


def refusal(capsys, argv: list[str]) -> list[str]:
    """A refusal of the settings themselves (before anything runs), in this process."""
    assert serve(argv) == 2
    return capsys.readouterr().err.strip().splitlines()


def refusal_at_start(argv: list[str]) -> list[str]:
    """A refusal of what the settings name (a route file), found as the service starts: a process of
    its own, as a user runs it (starting sets up logging and an event loop, process-wide)."""
    done = subprocess.run([str(HALO), "serve", *argv], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done
    return done.stderr.strip().splitlines()


def test_a_bad_value_names_its_flag_and_variable(capsys, monkeypatch):
    assert refusal(capsys, ["env", "--pool-size", "abc"]) == [
        "halo serve env: --pool-size (HALO_ENV_POOL_SIZE): Input should be a valid integer, unable to parse string as an integer"]
    monkeypatch.setenv("HALO_REWARD_PORT", "eighty")
    [line] = refusal(capsys, ["reward"])
    assert line.startswith("halo serve reward: --port (HALO_REWARD_PORT): ")


def test_unknown_routes_are_refused_with_the_routes_the_table_has():
    assert refusal_at_start(["gateway", "--metrics-port", "-1", "--only-routes", "nope"]) == [
        "halo serve gateway: --only-routes names routes the table does not have: nope "
        "(it has: embedded, qwen3vl, qwen3vl-tinker, gpt)"]


@pytest.mark.parametrize("text, said", [
    ("routes: [{name: x, backend: vllm}]", "routes[0]: route 'x': backend vllm needs base_url"),
    ("routes: [{name: x, backend: embedded, temprature: 1}]", "routes[0].temprature: Extra inputs are not permitted"),
    ("routes: [{name: x, backend: embedded", "not valid YAML"),
    (None, "No such file or directory"),
])
def test_a_broken_route_file_is_one_line_naming_the_file_and_the_place(tmp_path: Path, text, said):
    path = tmp_path / "routes.yaml"
    if text is not None:
        path.write_text(text)
    [line] = refusal_at_start(["gateway", "--metrics-port", "-1", "--config", str(path)])
    assert line.startswith(f"halo serve gateway: --config {path}: ") and said in line, line
