"""A Docker engine for the `docker compose up` test, and HALO's images built on it, cached.

- `engine()` uses the engine that answers (DOCKER_HOST, /var/run/docker.sock); where none does, it
  starts a private dockerd (Debian's docker.io, scripts/setup_docker.sh installs it) with its own
  data root, exec root and socket, and no iptables or default bridge, so it touches nothing else
  on the machine, and stops exactly that process afterwards. The data root lies in the cache folder
  (outside the clone), so images and BuildKit's layers outlive the run.
- `build_images()` builds the images compose runs on a base made from Debian's packages (no Docker
  Hub) and tags them by a hash of what they are built from: a second run finds the tags and
  builds nothing.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests import background

REPO = Path(__file__).resolve().parents[2]
DEBIAN_OVERRIDE = REPO / "deploy" / "compose.debian-base.yml"
CACHE = Path(os.environ.get("HALO_DOCKER_CACHE") or (
    "/var/cache/halo-docker" if os.geteuid() == 0 else Path.home() / ".cache" / "halo" / "docker"))
# compose's images (docker-compose.yml, deploy/compose.debian-base.yml) -> their Dockerfile stage
IMAGES = {"halo-services": "services", "halo-env": "env", "halo-base": "base", "halo-prometheus": "prometheus"}


class NoEngine(Exception):
    """No Docker engine answers and none can be started here (the reason is the message)."""


@dataclass
class Engine:
    host: str                   # DOCKER_HOST
    started_pid: int | None     # the dockerd this test started (None: an engine that was running)

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, "DOCKER_HOST": self.host, "DOCKER_BUILDKIT": "1"}

    def docker(self, *args: str, timeout: float = 120, check: bool = True, input: bytes | None = None,
               ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(["docker", *args], env=self.env, capture_output=True, timeout=timeout, input=input,
                              text=input is None)
        if check and done.returncode != 0:
            raise AssertionError(f"docker {' '.join(args)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
        return done

    def has_image(self, ref: str) -> bool:
        return self.docker("image", "inspect", ref, check=False).returncode == 0


def _answers(host: str) -> bool:
    if not shutil.which("docker"):
        return False
    try:
        done = subprocess.run(["docker", "version", "--format", "{{.Server.Version}}"], capture_output=True,
                              text=True, timeout=15, env={**os.environ, "DOCKER_HOST": host})
    except subprocess.TimeoutExpired:
        return False
    return done.returncode == 0


@contextlib.contextmanager
def engine(log: Path) -> Iterator[Engine]:
    """The engine that answers, or a private dockerd started here and stopped afterwards; the
    suite's background work is stopped meanwhile (tests/background.py says why)."""
    with background.quiet():
        yield from _engine(log)


def _engine(log: Path) -> Iterator[Engine]:
    for host in filter(None, [os.environ.get("DOCKER_HOST"), "unix:///var/run/docker.sock"]):
        if _answers(host):
            yield Engine(host, None)
            return
    dockerd = shutil.which("dockerd") or "/usr/sbin/dockerd"
    if not Path(dockerd).exists():
        raise NoEngine("no Docker engine answers and dockerd is not installed (scripts/setup_docker.sh)")
    if os.geteuid() != 0:
        raise NoEngine("no Docker engine answers, and a private dockerd needs root here")
    CACHE.mkdir(parents=True, exist_ok=True)
    # One private engine per data root at a time: a second test run waits for the first.
    with open(CACHE / "engine.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        # exec root and socket in a short folder of their own (unix socket paths stay < 108 bytes)
        run = Path(tempfile.mkdtemp(prefix="halo-dockerd-", dir="/tmp"))
        host = f"unix://{run}/docker.sock"
        with open(log, "ab") as out:
            proc = subprocess.Popen(
                [dockerd, "--data-root", str(CACHE / "data"), "--exec-root", str(run / "exec"),
                 "--pidfile", str(run / "pid"), "--host", host, "--iptables=false", "--bridge=none"],
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
            )
        try:
            deadline = time.monotonic() + 90
            while not _answers(host):
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise NoEngine(f"the private dockerd did not start (rc {proc.poll()}): {log.read_text()[-3000:]}")
                time.sleep(0.5)
            yield Engine(host, proc.pid)
        finally:
            proc.send_signal(signal.SIGTERM)   # dockerd stops its containers and its own containerd
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=30)
            shutil.rmtree(run, ignore_errors=True)


# --------------------------------------------------------------------------------------------------
# Images


def _base_tarball() -> Path:
    done = subprocess.run(["bash", str(REPO / "scripts" / "setup_docker.sh"), "--print"], capture_output=True,
                          text=True, timeout=30, check=True)
    return Path(done.stdout.strip())


def debian_base(engine: Engine) -> str:
    """The base image made from Debian's packages (scripts/setup_docker.sh's tarball), imported once."""
    tarball = _base_tarball()
    if not tarball.is_file():
        raise NoEngine(f"no Debian base tarball {tarball}: run scripts/setup_docker.sh")
    tag = f"halo-debian-base:{tarball.stem.rsplit('-', 1)[-1]}"
    if not engine.has_image(tag):
        engine.docker("import", "--change", 'CMD ["/bin/bash"]', str(tarball), tag, timeout=600)
    return tag


def local_wheel_dirs() -> list[Path]:
    """pip's find-links folders on this machine (where it keeps the torch CPU wheel that PyPI lacks)."""
    done = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True, timeout=60)
    found = [os.environ.get("PIP_FIND_LINKS", "")]
    for line in done.stdout.splitlines():
        key, _, value = line.partition("=")
        if key.endswith("find-links"):
            found.append(value.strip("'\""))
    return [Path(p) for v in found for p in v.split() if p and Path(p).is_dir()]


def wheels_image(engine: Engine) -> str | None:
    """An image holding the local wheels at / (mounted by deploy/Dockerfile at /mnt/wheels), or None."""
    wheels = sorted({w.name: w for d in local_wheel_dirs() for w in d.glob("*.whl")}.values())
    if not wheels:
        return None
    key = hashlib.sha256("\n".join(f"{w.name} {w.stat().st_size}" for w in wheels).encode()).hexdigest()[:12]
    tag = f"halo-wheels:{key}"
    if not engine.has_image(tag):
        with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
            archive = Path(tmp) / "wheels.tar"
            with tarfile.open(archive, "w") as tar:
                for wheel in wheels:
                    tar.add(wheel, arcname=wheel.name)
            engine.docker("import", str(archive), tag, timeout=600)
    return tag


def context_files() -> list[Path]:
    """The files of the build context: deploy/Dockerfile.dockerignore's allow-list, by git's file list."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO, capture_output=True,
                            text=True, timeout=60, check=True).stdout.split()
    allowed = ("pyproject.toml", "setup.py", "README.md", "clients/halo/", "services/", "configs/", "protos/",
               "requirements/")
    return sorted(REPO / p for p in listed if p.startswith(allowed) and "__pycache__" not in p and (REPO / p).is_file())


def build_key(build_args: dict[str, str]) -> str:
    """A hash of what the images are built from: the Dockerfile, its ignore file, the context, the args."""
    h = hashlib.sha256()
    for path in [REPO / "deploy" / "Dockerfile", REPO / "deploy" / "Dockerfile.dockerignore", *context_files()]:
        h.update(str(path.relative_to(REPO)).encode() + b"\0" + path.read_bytes() + b"\0")
    h.update(json.dumps(build_args, sort_keys=True).encode())
    return h.hexdigest()[:12]


def index_url() -> str:
    """The package index pip uses on this machine (its config, else PyPI)."""
    done = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True, timeout=60)
    for line in done.stdout.splitlines():
        key, _, value = line.partition("=")
        if key.endswith(".index-url") and not key.endswith("extra-index-url"):
            return value.strip("'\"")
    return os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple")


@dataclass
class Built:
    key: str
    args: dict[str, str]          # the HALO_* variables deploy/compose.debian-base.yml reads
    seconds: float                # build time (0 when every image was cached)
    sizes: dict[str, int]         # image -> bytes


def build_images(engine: Engine, compose: list[str], log: Path) -> Built:
    """HALO's images on the Debian base, built by `docker compose build` unless tagged by this hash."""
    base = debian_base(engine)
    wheels = wheels_image(engine)
    args = {
        "HALO_BASE_IMAGE": f"{base}",
        "HALO_WHEELS_IMAGE": wheels or base,
        "HALO_PIP_INDEX_URL": index_url(),
        "HALO_PIP_EXTRA_INDEX_URL": "",
        "HALO_PIP_FIND_LINKS": "/mnt/wheels" if wheels else "",
    }
    key = build_key(args)
    seconds = 0.0
    if not all(engine.has_image(f"{name}:{key}") for name in IMAGES):
        started = time.monotonic()
        with open(log, "ab") as out:
            done = subprocess.run([*compose, "build", "sites", "env", "gateway", "prometheus"], env={**engine.env, **args},
                                  stdout=out, stderr=subprocess.STDOUT, timeout=2400, cwd=REPO)
        if done.returncode != 0:
            raise AssertionError(f"docker compose build failed ({done.returncode}): see {log}\n{log.read_text()[-4000:]}")
        seconds = time.monotonic() - started
        for name in IMAGES:
            engine.docker("tag", f"{name}:latest", f"{name}:{key}")
        # the cache keeps one build: older hash tags go, and their layers with them (shared ones stay)
        for name in IMAGES:
            tags = engine.docker("image", "ls", "--format", "{{.Tag}}", name).stdout.split()
            for old in set(tags) - {key, "latest"}:
                engine.docker("image", "rm", f"{name}:{old}", check=False)
        engine.docker("image", "prune", "-f", check=False)
        engine.docker("builder", "prune", "-f", "--keep-storage", "8GB", check=False)   # BuildKit's layer cache
    for name in IMAGES:   # compose runs :latest; the hash tag is what a later run finds
        engine.docker("tag", f"{name}:{key}", f"{name}:latest")
    sizes = {name: int(engine.docker("image", "inspect", "--format", "{{.Size}}", f"{name}:{key}").stdout)
             for name in IMAGES}
    return Built(key, args, seconds, sizes)
