"""The contract checks of protos/ (scripts/check_protos.sh: buf lint, buf breaking against the
committed v1 baseline and against the change's git base), on this checkout and on throwaway git
repositories that make the breaking changes they must catch."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BUF = REPO / "scripts" / "buf" / "node_modules" / ".bin" / "buf"
SCRIPT = REPO / "scripts" / "check_protos.sh"
ENV_PROTO = Path("protos") / "halo" / "v1" / "env.proto"


@pytest.fixture(scope="module")
def buf() -> Path:
    if not BUF.exists():
        pytest.fail("buf is missing: run scripts/setup.sh --test (npm ci in scripts/buf)")
    return BUF


def check_protos(root: Path, buf: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(root / "scripts" / "check_protos.sh"), *args], cwd=root,
                          env={**os.environ, "HALO_BUF": str(buf)}, capture_output=True, text=True, timeout=120)


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root,
                          check=True, capture_output=True, text=True).stdout.strip()


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def test_the_protos_pass_lint_and_breaking_checks(buf):
    done = check_protos(REPO, buf)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "buf lint protos" in done.stdout and "against protos/baseline/halo-v1.binpb" in done.stdout
    assert done.stdout.rstrip().endswith("check_protos: ok")


def test_the_pinned_buf_is_the_one_installed(buf):
    pinned = json.loads((REPO / "scripts" / "buf" / "package.json").read_text())["devDependencies"]["@bufbuild/buf"]
    version = subprocess.run([str(buf), "--version"], capture_output=True, text=True, check=True).stdout.strip()
    assert version == pinned


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """A one-branch repository (main) with this checkout's protos/ and check script, as CI clones it."""
    root = tmp_path / "repo"
    shutil.copytree(REPO / "protos", root / "protos")
    (root / "scripts").mkdir()
    shutil.copy(SCRIPT, root / "scripts" / "check_protos.sh")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "v1 with buf checks")
    return root


def test_a_renumbered_field_fails_against_the_baseline(clone, buf):
    edit(clone / ENV_PROTO, "bool replica_only = 2;", "bool replica_only = 12;")
    done = check_protos(clone, buf)
    assert done.returncode != 0
    assert "against protos/baseline/halo-v1.binpb" in done.stdout
    assert "replica_only" in done.stdout + done.stderr


def test_a_lint_violation_fails(clone, buf):
    edit(clone / ENV_PROTO, "service EnvService {", "// A second service.\nservice Browsers {}\n\nservice EnvService {")
    done = check_protos(clone, buf)
    assert done.returncode != 0 and "Browsers" in done.stdout + done.stderr


def test_a_field_added_after_the_baseline_is_protected_by_the_git_base(clone, buf):
    # main gains a field after the baseline image was cut (compatible: everything passes) ...
    edit(clone / ENV_PROTO, "bool replica_only = 2;", "bool replica_only = 2;\n  string note = 90;")
    git(clone, "commit", "-qam", "add ListTasksRequest.note")
    done = check_protos(clone, buf)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "HEAD~1" in done.stdout  # HEAD is main: compared with its parent

    # ... a branch that removes it passes the baseline check but not the one against where it left main
    git(clone, "checkout", "-q", "-b", "feature")
    edit(clone / ENV_PROTO, "\n  string note = 90;", "")
    git(clone, "commit", "-qam", "drop note")
    git(clone, "commit", "-q", "--allow-empty", "-m", "a later commit on the branch")
    done = check_protos(clone, buf)
    assert done.returncode != 0
    assert "where this branch left main" in done.stdout and "note" in done.stdout + done.stderr

    # merged into main (a merge commit, as the lead does): HEAD = main, first parent = main before
    git(clone, "checkout", "-q", "main")
    git(clone, "merge", "-q", "--no-ff", "-m", "merge feature", "feature")
    done = check_protos(clone, buf)
    assert done.returncode != 0 and "HEAD~1" in done.stdout


def test_without_history_only_the_baseline_is_checked(clone, buf):
    shutil.rmtree(clone / ".git")
    done = check_protos(clone, buf)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no git base" in done.stdout


def test_update_baseline_moves_the_floor(clone, buf):
    edit(clone / ENV_PROTO, "bool replica_only = 2;", "bool replica_only = 2;\n  string note = 90;")
    assert check_protos(clone, buf, "--update-baseline").returncode == 0
    git(clone, "commit", "-qam", "add note, new baseline")
    shutil.rmtree(clone / ".git")  # no git base: the baseline alone must now protect `note`
    edit(clone / ENV_PROTO, "\n  string note = 90;", "")
    done = check_protos(clone, buf)
    assert done.returncode != 0 and "note" in done.stdout + done.stderr


def test_the_generation_template_makes_go_typescript_and_java(buf, tmp_path):
    """protos/buf.gen.yaml, as docs/guides/other-languages.md tells users to run it."""
    for tool in ("protoc", "protoc-gen-go", "protoc-gen-go-grpc", "grpc_java_plugin"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is missing: run scripts/setup.sh --test (Debian packages)")
    env = {**os.environ, "PATH": f"{buf.parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run([str(buf), "generate", "protos", "--template", "protos/buf.gen.yaml", "-o", str(tmp_path)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    go = (tmp_path / "go" / "halo" / "v1" / "policy_grpc.pb.go").read_text()
    assert "package halov1" in go and "PolicyGatewayServiceClient" in go
    ts = (tmp_path / "ts" / "halo" / "v1" / "env_pb.ts").read_text()
    assert "export const EnvService: GenService<" in ts and "export type StepRequest = Message<\"halo.v1.StepRequest\">" in ts
    java = tmp_path / "java" / "ai" / "halo" / "v1"
    assert (java / "EnvServiceGrpc.java").exists() and (java / "PolicyGatewayServiceGrpc.java").exists()
    assert "package ai.halo.v1;" in (java / "StepRequest.java").read_text()


def test_typescript_messages_are_the_same_bytes_as_python(buf, tmp_path):
    """protoc-gen-es's code (run as JavaScript by node) and the committed Python stubs encode a
    StepRequest to identical bytes: the protos, not either library, define the wire."""
    from halo.v1 import common_pb2, env_pb2

    plugin = buf.parent / "protoc-gen-es"
    done = subprocess.run(["protoc", f"--plugin=protoc-gen-es={plugin}", f"--es_out={tmp_path}", "--es_opt=target=js,import_extension=js",
                           "-I", ".", *sorted(str(p.relative_to(REPO / "protos")) for p in (REPO / "protos").rglob("*.proto"))],
                          cwd=REPO / "protos", capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    (tmp_path / "node_modules").symlink_to(buf.parent.parent)  # @bufbuild/protobuf, the runtime
    (tmp_path / "package.json").write_text('{"type": "module"}')
    (tmp_path / "encode.js").write_text(
        'import {create, toBinary} from "@bufbuild/protobuf";\n'
        'import {StepRequestSchema} from "./halo/v1/env_pb.js";\n'
        'const request = create(StepRequestSchema, {sessionId: "s-1", observation: {skipScreenshot: true},\n'
        '  action: {kind: {case: "clickElement", value: {bid: "3"}}, rawText: "click(3)"}});\n'
        'process.stdout.write(Buffer.from(toBinary(StepRequestSchema, request)).toString("hex"));\n')
    done = subprocess.run(["node", "encode.js"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    python = env_pb2.StepRequest(
        session_id="s-1", observation=common_pb2.ObservationOptions(skip_screenshot=True),
        action=common_pb2.Action(click_element=common_pb2.ClickElement(bid="3"), raw_text="click(3)"),
    )
    assert bytes.fromhex(done.stdout) == python.SerializeToString()
    assert len(done.stdout) > 20
