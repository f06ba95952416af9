"""A real `halo up` (separate processes on ephemeral loopback ports) shared by the deploy tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


# The stack runs offline: routes that need a key refuse calls (FAILED_PRECONDITION), none goes out.
OFFLINE_ENV = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "TINKER_API_KEY")}


def halo(*args: str, timeout: float = 240, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The real command line, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "halo.cli", *args], cwd=REPO, capture_output=True, text=True, timeout=timeout,
        stdin=subprocess.DEVNULL, env=env or OFFLINE_ENV,
    )


@dataclass
class UpStack:
    run_dir: Path
    up_output: str

    @property
    def state(self) -> dict:
        return json.loads((self.run_dir / "state.json").read_text())

    def target(self, name: str) -> str:
        entry = self.state["services"][name]
        return f"{entry['host']}:{entry['port']}"

    def url(self, name: str) -> str:
        return f"http://{self.target(name)}"


@pytest.fixture(scope="package")
def up_stack(tmp_path_factory):
    """`halo up --ports free` with a 1 s Prometheus scrape interval; `halo down` afterwards."""
    run_dir = tmp_path_factory.mktemp("halo-run")
    done = halo("up", "--ports", "free", "--run-dir", str(run_dir), "--scrape-interval-s", "1")
    if done.returncode != 0:
        halo("down", "--run-dir", str(run_dir))
        pytest.fail(f"halo up failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    try:
        yield UpStack(run_dir, done.stdout)
    finally:
        halo("down", "--run-dir", str(run_dir))
