"""A vLLM start that fails leaves nothing behind: vLLM's API server forks an EngineCore (the model,
the KV cache), and a start that fails or times out, or a stop after the API server died, ends
that engine too (halo.cli.vllm_local over halo.cli.processes). Each test starts its own vLLM."""

from __future__ import annotations

import os
import signal
import socket
import time

import psutil
import pytest

from halo.cli import processes, vllm_local
from halo.cli.vllm_local import VllmStartError

pytestmark = pytest.mark.vllm_own_server


def engine_processes(pid: int) -> list[int]:
    """vLLM's EngineCore among the descendants of its API server (it names itself VLLM::EngineCore)."""
    found = []
    for child in processes.descendants(pid):
        try:
            proc = psutil.Process(child)
            if "EngineCore" in proc.name() or "EngineCore" in " ".join(proc.cmdline()):
                found.append(child)
        except psutil.Error:
            continue
    return found


def test_an_api_server_that_dies_mid_start_takes_its_engine_with_it(vllm_model_dir, tmp_path):
    server = vllm_local.start(vllm_model_dir, served_model="doomed", max_lora_rank=8, log_path=tmp_path / "vllm.log", wait=False)
    try:
        deadline = time.monotonic() + 600
        while not (engines := engine_processes(server.pid)):
            assert server.alive() and time.monotonic() < deadline, f"no EngineCore started:\n{server.log_tail()}"
            time.sleep(0.2)
        spawned = set(processes.descendants(server.pid)) | set(processes.group_members(server.pid))
        os.kill(server.pid, signal.SIGKILL)     # the API server dies; its engine was already forked
        with pytest.raises(VllmStartError, match="exited"):
            server.wait_ready(timeout_s=120)
        assert processes.alive(sorted(spawned - {server.pid})) == [], f"left behind: {spawned} (engine {engines})"
        assert processes.group_members(server.pid) == []
    finally:
        server.stop()


def test_a_start_on_a_taken_port_fails_and_leaves_no_process(vllm_model_dir, tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        seen: set[int] = set()
        server = vllm_local.start(vllm_model_dir, port=port, served_model="nowhere", max_lora_rank=8,
                                  log_path=tmp_path / "vllm.log", wait=False)
        try:
            deadline = time.monotonic() + 600
            while server.alive() and time.monotonic() < deadline:
                seen |= set(processes.descendants(server.pid))
                time.sleep(0.1)
            with pytest.raises(VllmStartError):
                server.wait_ready(timeout_s=60)
            assert processes.alive(sorted(seen)) == [] and processes.group_members(server.pid) == []
        finally:
            server.stop()


def test_a_start_that_times_out_ends_the_whole_group(vllm_model_dir, tmp_path):
    server = vllm_local.start(vllm_model_dir, served_model="slow", max_lora_rank=8, log_path=tmp_path / "vllm.log", wait=False)
    try:
        deadline = time.monotonic() + 600
        while not engine_processes(server.pid):
            assert server.alive() and time.monotonic() < deadline, f"no EngineCore started:\n{server.log_tail()}"
            time.sleep(0.2)
        spawned = set(processes.descendants(server.pid)) | {server.pid}
        with pytest.raises(VllmStartError, match="did not answer"):
            server.wait_ready(timeout_s=0.0)
        assert not server.alive()
        assert processes.alive(sorted(spawned)) == [] and processes.group_members(server.pid) == []
    finally:
        server.stop()
