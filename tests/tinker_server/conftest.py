"""A real Tinker-API server for the real-server tests: SkyRL 0.3.0 in `.venv-skyrl` on a tiny
text Qwen3, behind the tinker-proto wire adapter (`skyrl_server.py`, `proto_wire.py`).

Opt-in: `make test-tinker-server` (HALO_TINKER_SERVER=1) after `make tinker-server`; the default
test run skips these, saying why. The server is started once per session, health-checked with a
deadline (its start takes 15-30 s), and killed with its engine process at the end.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

REPO = Path(__file__).resolve().parents[2]
SKYRL_VENV = REPO / ".venv-skyrl"
SKYRL_PYTHON = SKYRL_VENV / "bin" / "python"
OPT_IN_ENV = "HALO_TINKER_SERVER"
SERVER_START_S = 180.0          # SkyRL imports JAX and loads the model in its engine process
API_KEY = "tml-halo-local-skyrl"   # SkyRL does not check keys; the SDK wants one


def skip_reason() -> str:
    if os.environ.get(OPT_IN_ENV) != "1":
        return f"the real Tinker-server tests are opt-in: `make test-tinker-server` ({OPT_IN_ENV}=1)"
    if not (SKYRL_VENV / ".halo-installed").exists():
        return f"{SKYRL_VENV} is absent: run `make tinker-server` (scripts/setup_tinker_server.sh) first"
    return ""


class TinkerServer:
    def __init__(self, url: str, model: str, process: subprocess.Popen, log: Path) -> None:
        self.url, self.model, self.process, self.log = url, model, process, log

    def log_tail(self, chars: int = 4000) -> str:
        return self.log.read_text(errors="replace")[-chars:] if self.log.exists() else ""


@pytest.fixture(scope="session")
def tinker_server(tmp_path_factory):
    reason = skip_reason()
    if reason:   # before building anything: the default test run only pays for the skip
        pytest.skip(reason)
    from halo.cli.benches.tiny_qwen3 import build

    tiny_text_model = str(build(tmp_path_factory.mktemp("tiny-qwen3")))
    work = tmp_path_factory.mktemp("skyrl")
    port = _free_port()
    log = work / "server.log"
    command = [
        str(SKYRL_PYTHON), str(Path(__file__).with_name("skyrl_server.py")), "--host", "127.0.0.1", "--port", str(port),
        "--base-model", tiny_text_model, "--backend", "jax", "--checkpoints-base", str(work / "checkpoints"),
        "--database-url", f"sqlite:///{work / 'tinker.db'}",
    ]
    env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONUNBUFFERED="1")
    env.pop("PYTHONPATH", None)   # HALO's packages stay out of the server's interpreter
    with open(log, "wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True, cwd=work)
    url = f"http://127.0.0.1:{port}"
    server = TinkerServer(url, tiny_text_model, process, log)
    try:
        _wait_healthy(server)
        yield server
    finally:
        _stop(process)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_healthy(server: TinkerServer) -> None:
    """Health check with a deadline: a server that dies or never answers fails here, at once and
    with its log, instead of leaving the SDK to retry for minutes."""
    deadline = time.monotonic() + SERVER_START_S
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            pytest.fail(f"the SkyRL Tinker server exited with {server.process.returncode}:\n{server.log_tail()}")
        try:
            if httpx.get(server.url + "/api/v1/healthz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    pytest.fail(f"the SkyRL Tinker server did not answer /api/v1/healthz within {SERVER_START_S:g}s:\n{server.log_tail()}")


def _stop(process: subprocess.Popen) -> None:
    """SIGTERM to the server's process group (the API process and the engine it started), then SIGKILL."""
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=5)
    except ProcessLookupError:
        pass


@pytest.fixture
def tinker_key(monkeypatch):
    monkeypatch.setenv("TINKER_API_KEY", API_KEY)
    return API_KEY


def halo_cli() -> list[str]:
    return [sys.executable, "-m", "halo.cli"]
