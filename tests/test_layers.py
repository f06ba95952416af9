"""The layering of docs/design.md holds: `lint-imports` checks pyproject.toml's contracts.

Layers (CLI on top; apps and services beside each other; the SDK at the bottom), apps reach
services only over gRPC, services never import an app, the SDK stays light (no torch, transformers,
tinker or playwright), only the embedded backend, the trainers and the CLI load the torch model,
and no two sibling modules import each other (function-local imports count).
"""

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _lint_imports() -> str:
    found = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert found, "lint-imports is missing: pip install -e '.[test]'"
    return found


def test_import_contracts_are_kept():
    done = subprocess.run([_lint_imports(), "--no-cache"], cwd=REPO, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def test_a_violation_breaks_the_build(tmp_path):
    """The contracts bite: a service module importing an app is reported as a broken contract."""
    (tmp_path / "pyproject.toml").write_text((REPO / "pyproject.toml").read_text())
    bad = REPO / "services" / "halo" / "env" / "_layers_probe.py"
    bad.write_text("from halo.trainers import grpo  # deliberately wrong: a service importing an app\n")
    try:
        done = subprocess.run([_lint_imports(), "--no-cache", "--config", str(tmp_path / "pyproject.toml")],
                              cwd=REPO, capture_output=True, text=True, timeout=240)
    finally:
        bad.unlink()
    assert done.returncode == 1, done.stdout[-3000:]
    assert "halo.env._layers_probe -> halo.trainers" in done.stdout
