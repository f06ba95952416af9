"""`docker compose up`, for real: HALO's images built on a base made from Debian's packages, the
stack started with `docker compose up -d --wait` and driven from the host as a user would.

The engine is the one that answers, or a private dockerd started for this module and stopped after
it (tests/deploy/docker_engine.py); the images are tagged by a hash of what they are built from, so
a second run builds nothing. Every port is published on an ephemeral loopback port
(tests/deploy/compose.test.yml); everything else (the generated token, the health checks) is as
shipped. Grafana runs only where its image can be had (Docker Hub): the
module says which in its output.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from . import docker_engine
from .conftest import REPO
from .test_compose import compose_binary

pytestmark = [pytest.mark.slow, pytest.mark.timeout(3600)]

PROJECT = "halo-ci"
FILES = [REPO / "docker-compose.yml", docker_engine.DEBIAN_OVERRIDE, Path(__file__).with_name("compose.test.yml")]
HALO_SERVICES = ["sites", "env", "reward", "gateway", "trainer"]
SCRAPED = {"env", "reward", "gateway", "trainer", "prometheus"}   # the HALO jobs of deploy/prometheus/prometheus.yml
GRAFANA_IMAGE = "grafana/grafana:11.3.0"
HALO = str(Path(sys.executable).parent / "halo")
GRPCURL = str(Path(sys.executable).parent / "grpcurl")
TRAIN = ["--tasks", "playground-signup", "--max-actions", "2", "--lr", "0.02", "--seed", "3", "--eval-every", "0"]


@dataclass
class Stack:
    engine: docker_engine.Engine
    built: docker_engine.Built
    services: list[str]
    logs: Path
    env_target: str = "env:50051"
    notes: list[str] = field(default_factory=list)
    token: str = ""   # the generated bearer token, read as the guide says (`exec trainer cat /run/halo/token`)

    @property
    def env(self) -> dict[str, str]:
        return {**self.engine.env, **self.built.args, "HALO_TEST_ENV_TARGET": self.env_target}

    def compose(self, *args: str, timeout: float = 600, check: bool = True) -> subprocess.CompletedProcess[str]:
        cmd = [compose_binary(), "-p", PROJECT, "--project-directory", str(REPO)]
        for f in FILES:
            cmd += ["-f", str(f)]
        done = subprocess.run([*cmd, *args], env=self.env, capture_output=True, text=True, timeout=timeout, cwd=REPO)
        if check and done.returncode != 0:
            raise AssertionError(f"docker compose {' '.join(args)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
        return done

    def address(self, service: str, port: int, index: int = 1) -> str:
        """host:port where the host reaches `service`'s container port (replica `index`)."""
        out = self.compose("port", "--index", str(index), service, str(port)).stdout.strip()
        return out.replace("0.0.0.0", "127.0.0.1")

    def containers(self, service: str) -> list[str]:
        return self.compose("ps", "-q", service).stdout.split()

    def up(self, *args: str) -> float:
        started = time.monotonic()
        self.compose("up", "-d", "--wait", "--wait-timeout", "600", *args, *self.services, timeout=900)
        return time.monotonic() - started


#: the stack's bearer token, set by the fixture once the stack is up (every call but health needs it)
TOKEN: list[str] = []


def grpcurl_run(target: str, method: str, data: dict | None = None, *extra: str, token: bool = True) -> subprocess.CompletedProcess[str]:
    cmd = [GRPCURL, "-plaintext", *extra]
    if token:
        cmd += ["-H", f"authorization: Bearer {TOKEN[0]}"]
    if data is not None:
        cmd += ["-d", json.dumps(data)]
    return subprocess.run([*cmd, target, *filter(None, [method])], capture_output=True, text=True, timeout=90)


def grpcurl(target: str, method: str, data: dict | None = None, *extra: str) -> str:
    done = grpcurl_run(target, method, data, *extra)
    assert done.returncode == 0, f"grpcurl {method} failed ({done.returncode}): {done.stderr}"
    return done.stdout


def pool_stats(target: str) -> dict[str, int]:
    stats = json.loads(grpcurl(target, "halo.v1.EnvService/GetPoolStats", {}))
    return {k: int(v) for k, v in stats.items()}


def report(request: pytest.FixtureRequest, line: str) -> None:
    """A line in pytest's output, captured or not (timings, sizes, what did not run)."""
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if reporter is None or capture is None:
        print(f"compose-up: {line}")
        return
    with capture.global_and_fixture_disabled():
        reporter.write_line(f"compose-up: {line}")


@pytest.fixture(scope="module")
def stack(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    logs = tmp_path_factory.mktemp("compose-up")
    try:
        context = docker_engine.engine(logs / "dockerd.log")
        engine = context.__enter__()
    except docker_engine.NoEngine as exc:
        pytest.skip(f"docker compose up: {exc}")
    stack = None
    try:
        started = time.monotonic()
        compose = [compose_binary(), "-p", PROJECT, "--project-directory", str(REPO), *sum((["-f", str(f)] for f in FILES), [])]
        built = docker_engine.build_images(engine, compose, logs / "build.log")
        report(request, f"engine {engine.host} ({'started here' if engine.started_pid else 'already running'})")
        report(request, f"images {built.key}: " + (f"built in {built.seconds:.0f} s" if built.seconds else "cached, no build")
               + "; " + ", ".join(f"{n} {s / 1e6:.0f} MB" for n, s in built.sizes.items()))
        services = [*HALO_SERVICES, "prometheus"]
        if engine.has_image(GRAFANA_IMAGE) or engine.docker("pull", GRAFANA_IMAGE, timeout=120, check=False).returncode == 0:
            services.append("grafana")
        else:
            report(request, f"grafana not started: its image {GRAFANA_IMAGE} cannot be had here (Docker Hub unreachable)")
        stack = Stack(engine, built, services, logs)
        stack.compose("down", "-v", "--remove-orphans", timeout=300)   # what an interrupted run left
        seconds = stack.up()
        report(request, f"docker compose up -d --wait ({', '.join(services)}): {seconds:.0f} s; "
                        f"fixture ready after {time.monotonic() - started:.0f} s")
        stack.token = stack.compose("exec", "-T", "trainer", "cat", "/run/halo/token").stdout.strip()
        TOKEN[:] = [stack.token]
        yield stack
    finally:
        if stack is not None:
            (logs / "compose.log").write_text(stack.compose("logs", "--no-color", timeout=120, check=False).stdout)
            stack.compose("down", "-v", "--remove-orphans", timeout=300, check=False)
        context.__exit__(None, None, None)


def test_both_ignore_files_let_in_the_same_context():
    """deploy/Dockerfile.dockerignore (BuildKit) and .dockerignore (builders that read only that one)."""
    def patterns(path: Path) -> list[str]:
        return [line for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]

    assert patterns(REPO / ".dockerignore") == patterns(REPO / "deploy" / "Dockerfile.dockerignore")
    assert patterns(REPO / ".dockerignore")[0] == "*"   # an allow-list


#: each image's size at most (MB, as `docker image inspect` counts it): docs/guides/deployment-compose.md
#: states the measured sizes; a bound is that size plus room for a Debian or dependency update
IMAGE_BOUNDS_MB = {"halo-services": 900, "halo-env": 1750, "halo-base": 2750, "halo-prometheus": 700}


def test_images_are_lean_run_as_non_root_and_hold_only_the_package(stack: Stack, request: pytest.FixtureRequest):
    files = docker_engine.context_files()
    report(request, f"build context: {len(files)} files, {sum(f.stat().st_size for f in files) / 1e6:.1f} MB")
    users = {"halo-services": "halo", "halo-env": "halo", "halo-base": "halo", "halo-prometheus": "prometheus"}
    for name, user in users.items():
        config = json.loads(stack.engine.docker("image", "inspect", "--format", "{{json .Config}}", f"{name}:latest").stdout)
        assert config["User"] == user, (name, config["User"])
    oversized = {n: round(stack.built.sizes[n] / 1e6) for n, bound in IMAGE_BOUNDS_MB.items() if stack.built.sizes[n] / 1e6 > bound}
    assert not oversized, f"images over their bounds {IMAGE_BOUNDS_MB}: {oversized}"
    app = stack.engine.docker("run", "--rm", "--network", "none", "halo-services:latest", "ls", "-A", "/app", "/app/clients").stdout
    top, clients = app.split("\n\n")
    assert {"pyproject.toml", "clients", "services", "configs", "protos"} <= set(top.split()[1:])
    assert not {".venv", ".venv-vllm", ".venv-skyrl", ".git", "tests", "docs", "evals", "runs"} & set(top.split())
    assert clients.split()[1:] == ["halo"]   # no clients/node (its node_modules), no clients/go
    # what each image may import: torch (CPU build) only where the gateway and trainer run; pip,
    # setuptools and a C compiler in none (the venvs are built in builder stages)
    probe = ("import importlib.util as u; print(*(m for m in ('torch', 'transformers', 'pip', 'setuptools') if u.find_spec(m)))"
             "; import shutil; print(*(b for b in ('pip', 'pip3', 'gcc', 'cc') if shutil.which(b)))")
    found = {name: stack.engine.docker("run", "--rm", "--network", "none", f"{name}:latest", "python", "-c", probe).stdout.split()
             for name in ("halo-services", "halo-env", "halo-base")}
    assert found == {"halo-services": [], "halo-env": [], "halo-base": ["torch", "transformers"]}, found
    versions = stack.engine.docker("run", "--rm", "--network", "none", "halo-base:latest", "python", "-c",
                                   "import torch; print(torch.__version__)").stdout
    assert "+cpu" in versions, versions   # torch's CPU build
    chromium = stack.engine.docker("run", "--rm", "--network", "none", "halo-env:latest", "chromium-headless-shell",
                                   "--version").stdout
    assert "Chromium" in chromium, chromium   # Debian's headless shell, the pinned version
    for name in ("halo-services", "halo-env"):   # the lean services start without the heavy extras
        helped = stack.engine.docker("run", "--rm", "--network", "none", f"{name}:latest", "halo", "serve", "reward", "--help")
        assert "usage" in helped.stdout, helped.stdout + helped.stderr


def test_grpcurl_lists_the_env_service_by_reflection_and_drives_create_step_close(stack: Stack):
    env = stack.address("env", 50051)
    assert "halo.v1.EnvService" in grpcurl(env, "list").split()
    created = json.loads(grpcurl(env, "halo.v1.EnvService/CreateSession",
                                 {"task_id": "playground-signup", "observation": {"skip_screenshot": True}}))
    button = next(e for e in created["observation"]["elements"] if e.get("name") == "Sign up")
    stepped = json.loads(grpcurl(env, "halo.v1.EnvService/Step", {
        "session_id": created["session_id"], "action": {"click_element": {"bid": button["bid"]}},
        "observation": {"skip_screenshot": True}}))
    assert stepped["action_ok"] is True
    assert any("Thanks for signing up" in e.get("name", "") for e in stepped["observation"]["elements"])
    closed = json.loads(grpcurl(env, "halo.v1.EnvService/CloseSession", {"session_id": created["session_id"]}))
    assert closed["was_open"] is True


# Every Chromium process of the env container: its pid, its command line and its NSpid (the pid in
# each PID namespace it is in: one more than the browser's for a process inside Chromium's sandbox).
CHROMIUM_PROCESSES = r"""
for d in /proc/[0-9]*; do
  comm=$(cat $d/comm 2>/dev/null) || continue
  case "$comm" in chrom*|headless*)
    echo "$(grep '^NSpid:' $d/status | cut -f2- | tr '\t' ' ')|$(tr '\0' ' ' < $d/cmdline)";;
  esac
done
"""


def test_chromium_runs_in_its_sandbox_in_the_env_container(stack: Stack):
    """The env container runs Chromium without --no-sandbox: with a page open, its renderer is in a
    PID namespace of its own (Chromium's namespace sandbox), which the container's seccomp profile
    (deploy/seccomp/chromium.json) allows and Docker's default refuses."""
    env = stack.address("env", 50051)
    created = json.loads(grpcurl(env, "halo.v1.EnvService/CreateSession",
                                 {"task_id": "playground-signup", "observation": {"skip_screenshot": True}}))
    try:
        listing = stack.compose("exec", "-T", "env", "sh", "-c", CHROMIUM_PROCESSES).stdout
    finally:
        grpcurl(env, "halo.v1.EnvService/CloseSession", {"session_id": created["session_id"]})
    processes = [line.split("|", 1) for line in listing.splitlines() if "|" in line]
    browsers = [(ns.split(), cmd) for ns, cmd in processes if "--type=" not in cmd and "--remote-debugging-pipe" in cmd]
    renderers = [(ns.split(), cmd) for ns, cmd in processes if "--type=renderer" in cmd]
    assert browsers and renderers, listing
    assert not any("--no-sandbox" in cmd for _, cmd in processes), listing
    depth = max(len(ns) for ns, _ in browsers)
    assert all(len(ns) > depth for ns, _ in renderers), listing   # a PID namespace below the browser's


# Launch the env service's browser pool as HALO_ENV_CHROMIUM_SANDBOX says, in a container of its own.
LAUNCH = (
    "import asyncio, os; from halo.env.browsers import BrowserPool\n"
    "async def main():\n"
    "    pool = BrowserPool(executable=os.environ['HALO_ENV_CHROMIUM_PATH'],\n"
    "                       sandbox_mode=os.environ['HALO_ENV_CHROMIUM_SANDBOX'])\n"
    "    await pool.start(); await pool.close(); print('launched, sandbox', pool.sandboxed)\n"
    "asyncio.run(main())\n"
)


def test_the_sandbox_needs_the_seccomp_profile_and_says_so_without_it(stack: Stack):
    """The control of the test above: the same image under Docker's default seccomp profile cannot
    start a sandboxed Chromium: `on` refuses to start and says what to do, `auto` runs without the
    sandbox and warns; under deploy/seccomp/chromium.json `on` starts sandboxed."""
    def launch(mode: str, *security: str) -> subprocess.CompletedProcess[str]:
        return stack.engine.docker("run", "--rm", "--network", "none", "--init", *security, "-e",
                                   f"HALO_ENV_CHROMIUM_SANDBOX={mode}", "halo-env:latest", "python", "-c", LAUNCH,
                                   check=False, timeout=180)

    refused = launch("on")
    assert refused.returncode != 0, refused.stdout
    assert "No usable sandbox" in refused.stderr and "deploy/seccomp/chromium.json" in refused.stderr, refused.stderr[-2000:]
    fallen_back = launch("auto")
    assert fallen_back.stdout.strip().endswith("launched, sandbox False"), fallen_back.stdout + fallen_back.stderr[-2000:]
    assert "sandbox is unavailable here" in fallen_back.stdout + fallen_back.stderr
    sandboxed = launch("on", "--security-opt", f"seccomp={REPO / 'deploy' / 'seccomp' / 'chromium.json'}")
    assert sandboxed.stdout.strip().endswith("launched, sandbox True"), sandboxed.stdout + sandboxed.stderr[-2000:]


def non_loopback_address() -> str | None:
    """An address of this machine that is not loopback (the one its default route leaves by), or None."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))   # no packet is sent: the kernel only picks the source address
            address = probe.getsockname()[0]
        except OSError:
            return None
    return None if address.startswith("127.") or address == "0.0.0.0" else address


def reachable(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=3):
            return True
    except OSError:
        return False


def test_nothing_is_open_a_call_without_the_token_is_refused_and_no_port_leaves_loopback(
        stack: Stack, request: pytest.FixtureRequest):
    """The generated token (0600, the services' uid) is required on every call but health; every
    published port is on 127.0.0.1 only: not reachable on the machine's other address."""
    assert re.fullmatch(r"[0-9a-f]{64}", stack.token), stack.token
    owner = stack.compose("exec", "-T", "trainer", "stat", "-c", "%a %u", "/run/halo/token").stdout.split()
    assert owner == ["600", "1000"], owner
    env, trainer = stack.address("env", 50051), stack.address("trainer", 50055)
    for target, method in ((env, "halo.v1.EnvService/GetPoolStats"), (trainer, "halo.v1.TrainerService/ListRuns")):
        refused = grpcurl_run(target, method, {}, token=False)
        assert refused.returncode != 0 and "Unauthenticated" in refused.stderr, refused.stderr
        wrong = grpcurl_run(target, method, {}, "-H", "authorization: Bearer wrong", token=False)
        assert wrong.returncode != 0 and "Unauthenticated" in wrong.stderr, wrong.stderr
        assert grpcurl_run(target, method, {}).returncode == 0   # with the generated token
    health = subprocess.run([HALO, "health", env, "--service", "halo.v1.EnvService"], capture_output=True, text=True, timeout=60)
    assert health.returncode == 0, health.stdout + health.stderr   # probes need no token
    published = {}
    for service in stack.services:
        for container in stack.containers(service):
            ports = json.loads(stack.engine.docker("inspect", "--format", "{{json .NetworkSettings.Ports}}", container).stdout)
            published.update({f"{service} {p}": b for p, b in ports.items() if b})
    assert published and all(b["HostIp"] == "127.0.0.1" for bs in published.values() for b in bs), published
    other = non_loopback_address()
    if other is None:
        report(request, "no non-loopback address on this machine: reachability from beyond loopback not tried")
        return
    with socket.create_server(("0.0.0.0", 0)) as control:   # the address is reachable: a port on all interfaces answers there
        assert reachable(other, control.getsockname()[1]), f"{other} is not reachable from here at all"
    for name, binds in published.items():
        port = int(binds[0]["HostPort"])
        assert reachable("127.0.0.1", port), name
        assert not reachable(other, port), f"{name} answers on {other}:{port}"
    report(request, f"{len(published)} published ports: each answers on 127.0.0.1, none on {other}")


def test_grafana_refuses_anonymous_and_admin_admin_and_takes_the_generated_password(stack: Stack):
    if "grafana" not in stack.services:
        pytest.skip(f"grafana not started: its image {GRAFANA_IMAGE} cannot be had here")
    import base64
    import urllib.error

    url = f"http://{stack.address('grafana', 3000)}/api/search"

    def status(user: str | None = None, password: str = "") -> int:
        req = urllib.request.Request(url)
        if user is not None:
            req.add_header("Authorization", "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode())
        try:
            with urllib.request.urlopen(req, timeout=10) as response:
                return response.status
        except urllib.error.HTTPError as exc:
            return exc.code

    password = stack.compose("exec", "-T", "grafana", "cat", "/run/halo/grafana-admin-password").stdout.strip()
    assert re.fullmatch(r"[0-9a-f]{32}", password), password
    assert status() == 401                    # no anonymous access
    assert status("admin", "admin") == 401    # no default password
    assert status("admin", password) == 200


def scraped_up(stack: Stack) -> list[tuple[str, str, str]]:
    """(job, instance, value of `up`) for every target Prometheus scrapes now."""
    url = f"http://{stack.address('prometheus', 9090)}/api/v1/query?query=up"
    with urllib.request.urlopen(url, timeout=10) as response:
        result = json.load(response)["data"]["result"]
    return [(r["metric"]["job"], r["metric"]["instance"], r["value"][1]) for r in result]


def test_composed_prometheus_reports_every_halo_target_up(stack: Stack):
    deadline, up = time.monotonic() + 120, {}
    while time.monotonic() < deadline:
        up = {job: value for job, _, value in scraped_up(stack) if job in SCRAPED}
        if set(up) == SCRAPED and set(up.values()) == {"1"}:
            break
        time.sleep(3)   # the first scrape comes within the 15 s interval
    assert up == {job: "1" for job in SCRAPED}


def submit(stack: Stack, *args: str, out: Path) -> subprocess.Popen:
    return subprocess.Popen([HALO, "train", "--submit", stack.address("trainer", 50055), "--token", stack.token, *TRAIN, *args],
                            stdout=out.open("w"), stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            env={**os.environ, "COLUMNS": "200"}, cwd=REPO)


def finished(proc: subprocess.Popen, out: Path, timeout: float = 900) -> tuple[str, str]:
    """(run id, output) of a `halo train --submit` that ended SUCCEEDED."""
    try:
        proc.wait(timeout=timeout)
    finally:
        if proc.returncode is None:
            proc.kill()
    text = out.read_text()
    assert proc.returncode == 0 and "Traceback" not in text, text
    run_id = text.split("submitted run ", 1)[1].split()[0]
    return run_id, text


def run_file(stack: Stack, run_id: str, *path: str) -> str:
    return stack.compose("exec", "-T", "trainer", "sh", "-c", f"cat /data/runs/{run_id}/{'/'.join(path)}").stdout


def while_running(proc: subprocess.Popen, out: Path, what: str, check, timeout: float = 600) -> None:
    """Wait until check() holds while the `halo train` process `proc` still runs."""
    deadline = time.monotonic() + timeout
    while not check():
        if proc.poll() is not None:
            raise AssertionError(f"the run ended before {what}:\n{out.read_text()}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.5)


def test_train_submit_succeeds_across_an_env_kill_with_its_checkpoints_on_the_runs_volume(
        stack: Stack, tmp_path: Path, request: pytest.FixtureRequest):
    out = tmp_path / "train.txt"
    proc = submit(stack, "--steps", "3", "--group-size", "4", "--groups-per-batch", "1", out=out)
    env = stack.address("env", 50051)
    # episodes in flight: the kill loses them
    while_running(proc, out, "the run's sessions opened on the env", lambda: pool_stats(env).get("active_sessions", 0) > 0)
    stack.compose("kill", "env")
    killed = time.monotonic()
    stack.compose("up", "-d", "--wait", "--no-deps", "env", timeout=600)
    report(request, f"env killed and up again (healthy) in {time.monotonic() - killed:.0f} s")
    run_id, text = finished(proc, out)
    assert "succeeded" in text, text
    steps = [json.loads(line) for line in run_file(stack, run_id, "metrics.jsonl").splitlines()]
    assert [s["step"] for s in steps] == [1, 2, 3]
    # The lost episodes are environment failures, never zero rewards: a step that lost some keeps the
    # rest (counted in its env_failures); one that lost all waits for the env and rolls out again.
    lost = sum(int(n) for n in re.findall(r"(\d+)/\d+ episodes hit environment failures", text))
    failures = lost + sum(s.get("env_failures", 0) for s in steps)
    assert failures >= 1, (text, steps)
    checkpoints = stack.compose("exec", "-T", "trainer", "ls", f"/data/runs/{run_id}/checkpoints").stdout.split()
    assert "step-000003" in checkpoints, checkpoints
    volume = stack.engine.docker("volume", "ls", "-q", "--filter", f"label=com.docker.compose.project={PROJECT}").stdout
    assert f"{PROJECT}_runs" in volume.split()
    report(request, f"run {run_id}: SUCCEEDED, {failures:g} episode(s) lost to the env kill counted as env failures")


def test_a_scaled_env_is_a_fleet_under_one_name(stack: Stack, tmp_path: Path, request: pytest.FixtureRequest):
    stack.env_target = "fleet://env:50051"   # every address Docker's DNS gives for `env`
    seconds = stack.up("--scale", "env=3")
    report(request, f"up --scale env=3 (trainer on fleet://env:50051): {seconds:.0f} s")
    replicas = [stack.address("env", 50051, i) for i in (1, 2, 3)]
    # Prometheus finds the scaled env by DNS too: one target per container, each up
    deadline, env_up = time.monotonic() + 90, []
    while time.monotonic() < deadline:
        env_up = [(instance, value) for job, instance, value in scraped_up(stack) if job == "env"]
        if len(env_up) == 3 and all(value == "1" for _, value in env_up):
            break
        time.sleep(3)   # DNS is re-resolved, and the new targets scraped, every 15 s
    assert len(env_up) == 3 and all(value == "1" for _, value in env_up), env_up
    before = {r: pool_stats(r).get("sessions_created", 0) for r in replicas}
    out = tmp_path / "train.txt"
    # three groups per step: a step's groups are spread over the replicas group by group
    proc = submit(stack, "--steps", "3", "--group-size", "2", "--groups-per-batch", "3", out=out)
    while_running(proc, out, "sessions on all three env containers", lambda: all(
        pool_stats(r).get("sessions_created", 0) > before[r] for r in replicas))
    spread = {r: pool_stats(r).get("sessions_created", 0) - before[r] for r in replicas}
    victim = stack.containers("env")[-1]
    stack.engine.docker("kill", victim)   # one replica dies mid-run: the run goes on on the others
    run_id, text = finished(proc, out)
    assert "succeeded" in text, text
    steps = [json.loads(line) for line in run_file(stack, run_id, "metrics.jsonl").splitlines()]
    assert [s["step"] for s in steps] == [1, 2, 3]
    report(request, f"fleet run {run_id}: sessions per env container {sorted(spread.values())}, one killed mid-run, "
                    f"SUCCEEDED ({sum(s.get('env_failures', 0) for s in steps):g} env failures)")


def test_down_v_leaves_nothing_behind(stack: Stack):
    stack.compose("down", "-v", "--remove-orphans", timeout=300)
    label = f"label=com.docker.compose.project={PROJECT}"
    assert stack.engine.docker("ps", "-aq", "--filter", label).stdout.split() == []
    assert stack.engine.docker("network", "ls", "-q", "--filter", label).stdout.split() == []
    assert stack.engine.docker("volume", "ls", "-q", "--filter", label).stdout.split() == []
