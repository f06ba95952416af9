"""The Go client (clients/go): stubs generated from protos/ with protoc-gen-go and protoc-gen-go-grpc,
built offline against Debian's Go packages, driving the real env service of a `halo up` the same
way the Node client does (tests/deploy/test_other_languages.py)."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from tests.other_clients import GO_DIR, assert_walked_the_signup_session, build_go_demo

from .conftest import REPO


@pytest.fixture(scope="module")
def go_demo(tmp_path_factory) -> Path:
    demo = build_go_demo(tmp_path_factory.mktemp("go-bin"))
    generated = sorted(p.name for p in (GO_DIR / "halov1").glob("*.go"))
    protos = sorted(p.stem for p in (REPO / "protos" / "halo" / "v1").glob("*.proto"))
    assert [n for n in generated if n.endswith(".pb.go") and not n.endswith("_grpc.pb.go")] == [f"{p}.pb.go" for p in protos]
    assert "policy_grpc.pb.go" in generated and "env_grpc.pb.go" in generated
    return demo


def run_demo(demo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(demo), *args], capture_output=True, text=True, timeout=180)


def test_go_client_lists_tasks_and_drives_a_session(up_stack, go_demo):
    done = run_demo(go_demo, "-target", up_stack.target("env"), "-task", "playground-signup", "-click", "Sign up")
    assert done.returncode == 0, done.stderr
    assert_walked_the_signup_session(json.loads(done.stdout))


def test_go_client_reports_errors_and_grpc_status_codes(up_stack, go_demo):
    done = run_demo(go_demo, "-target", up_stack.target("env"), "-task", "no-such-task")
    assert done.returncode == 1 and "is not in the registry" in done.stderr

    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    done = run_demo(go_demo, "-target", f"127.0.0.1:{port}", "-timeout", "3s")
    assert done.returncode == 1
    assert done.stderr.startswith(("env-demo: Unavailable:", "env-demo: DeadlineExceeded:")), done.stderr


def test_go_sources_are_gofmt_clean():
    if shutil.which("gofmt") is None:
        pytest.skip("gofmt is absent (scripts/setup.sh --test installs Debian's golang-go)")
    done = subprocess.run(["gofmt", "-l", "halo", "cmd"], cwd=GO_DIR, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == "", f"not gofmt-formatted: {done.stdout}{done.stderr}"
