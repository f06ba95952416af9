"""Shared by the tests of HALO's clients in other languages: building clients/go's demo, and what
every language's env demo (clients/node/env-demo.js, clients/go's halo-env-demo) must print after
its walk on playground-signup: list tasks, create a session, click "Sign up" by bid, read the
site's state, close."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
GO_DIR = REPO / "clients" / "go"


def build_go_demo(out: Path) -> Path:
    """clients/go/build.sh into `out` (stubs generated from protos/ first); skips without Go."""
    if shutil.which("go") is None:
        pytest.skip("go is absent (scripts/setup.sh --test installs Debian's golang-go and the Go gRPC packages)")
    done = subprocess.run(["bash", str(GO_DIR / "build.sh"), str(out)], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    return out / "halo-env-demo"


def assert_walked_the_signup_session(out: dict) -> None:
    assert out["tasks"] > 100 and out["task"]["replica_available"] is True  # REAL v2 + playground
    assert out["clicked"]["role"] == "button" and out["action_ok"] is True and out["env_failure"] is False
    assert any("Thanks for signing up" in name for name in out["after"])
    assert out["state"]["initialfinaldiff"]["updated"]["signup"]["clicked"] is True  # the site's /finish state
    assert out["closed"] is True
