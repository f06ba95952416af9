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
        pytest.fail("buf is missing: run scripts/setup.sh (npm ci in scripts/buf)")
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
