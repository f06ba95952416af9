"""Local LoRA backend fixtures: the tiny random Qwen3-VL (built once per session, shared with
tests/tinker) and a fixed observation rendered by tinker-cookbook's qwen3_vl_instruct renderer."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def tiny_dir(tmp_path_factory) -> str:
    from tests.tinker.fakes import tiny_model_dir

    return tiny_model_dir(tmp_path_factory)


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread():
    """One intra-op thread: many times faster for the tiny model on a loaded machine (restored after)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def vllm_recorder(vllm_server):
    """A RecordingProxy in front of the session's vLLM (tests/vllm_helpers.py): the gateway's
    `qwen3vl-recorded` route goes through it, so a test reads which adapter vLLM answered with."""
    from tests.vllm_helpers import RecordingProxy

    proxy = RecordingProxy(vllm_server.base_url).start()
    yield proxy
    proxy.stop()


@pytest.fixture(scope="session")
async def vllm_gateway(vllm_server, vllm_recorder, tiny_dir):
    """A policy gateway whose `qwen3vl-local` route is the session's real vLLM (tests/conftest.py),
    set up the way a training route is (vision placeholders banned, special tokens kept), and whose
    `qwen3vl-recorded` route is the same vLLM behind `vllm_recorder`."""
    from halo.policy.config import GatewayConfig, GatewaySettings, RouteConfig
    from halo.policy.server import build_service
    from halo.runtime.server import start_service
    from halo.cli.vllm_local import route_extra_body

    assert vllm_server.log_path.parent == Path(tiny_dir)   # one checkpoint: vLLM's is the learner's
    route = dict(backend="vllm", served_model=vllm_server.served_model, api_key="EMPTY", retries=1, backoff_s=0.05,
                 max_backoff_s=0.1, timeout_s=120, extra_body=route_extra_body(tiny_dir))
    config = GatewayConfig(routes=[RouteConfig(name="qwen3vl-local", base_url=vllm_server.base_url, **route),
                                   RouteConfig(name="qwen3vl-recorded", base_url=vllm_recorder.base_url, **route)])
    settings = GatewaySettings(port=0, metrics_port=-1)
    running = await start_service(build_service(settings, config=config), settings)
    yield running
    await running.stop(grace=1.0)
