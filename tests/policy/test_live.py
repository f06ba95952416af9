"""Live backends, skipped unless their variables are set: HALO_VLLM_URL (+ HALO_VLLM_MODEL),
OPENAI_API_KEY (+ HALO_OPENAI_MODEL, HALO_OPENAI_BASE_URL), TINKER_API_KEY."""

from __future__ import annotations

import os
from contextlib import asynccontextmanager

import pytest

from halo.policy.config import GatewayConfig, GatewaySettings, RouteConfig
from tests.policy import pages

pytestmark = pytest.mark.live


@asynccontextmanager
async def gateway_with(route: RouteConfig):
    from halo.client.policy import PolicyClient
    from halo.policy.server import build_service
    from halo.runtime.server import start_service

    settings = GatewaySettings(port=0, metrics_port=-1)
    running = await start_service(build_service(settings, config=GatewayConfig(routes=[route], default_judge=route.name)), settings)
    try:
        async with PolicyClient(running.target, timeout_s=300) as client:
            yield client
    finally:
        await running.stop(grace=1.0)


@pytest.mark.skipif(not os.environ.get("HALO_VLLM_URL"), reason="HALO_VLLM_URL not set")
async def test_live_vllm_sample_with_token_ids():
    model = os.environ.get("HALO_VLLM_MODEL", "Qwen/Qwen3-VL-8B-Instruct")
    route = RouteConfig(name="live-vllm", backend="vllm", base_url=os.environ["HALO_VLLM_URL"], served_model=model, api_key="EMPTY")
    async with gateway_with(route) as policy:
        response = await policy.sample("live-vllm", input=pages.policy_input(), n=2, temperature=0.7, logprobs=True)
    assert len(response.candidates) == 2 and response.prompt_token_ids
    for c in response.candidates:
        assert c.token_ids and len(c.logprobs) == len(c.token_ids)
    assert any(c.valid for c in response.candidates), [c.text for c in response.candidates]


@pytest.mark.skipif(not os.environ.get("OPENAI_API_KEY"), reason="OPENAI_API_KEY not set")
async def test_live_openai_sample_and_judge():
    route = RouteConfig(name="live-gpt", backend="openai_compatible", api_key_env="OPENAI_API_KEY", action_format="json",
                        base_url=os.environ.get("HALO_OPENAI_BASE_URL", "https://api.openai.com/v1"),
                        served_model=os.environ.get("HALO_OPENAI_MODEL", "gpt-4o-mini"))
    async with gateway_with(route) as policy:
        response = await policy.sample("live-gpt", input=pages.policy_input(), temperature=0.0)
        assert response.candidates[0].valid, response.candidates[0].text
        yes = await policy.judge(question="What is 2 + 2?", answer="4", rubric="the answer is 4")
        no = await policy.judge(question="What is 2 + 2?", answer="5", rubric="the answer is 4")
    assert yes.parsed and yes.passed and no.parsed and not no.passed


@pytest.mark.skipif(not os.environ.get("TINKER_API_KEY"), reason="TINKER_API_KEY not set")
async def test_live_tinker_sample():
    route = RouteConfig(name="live-tinker", backend="tinker", base_model="Qwen/Qwen3-VL-30B-A3B-Instruct",
                        api_key_env="TINKER_API_KEY", max_tokens=120)
    async with gateway_with(route) as policy:
        response = await policy.sample("live-tinker", input=pages.policy_input(), n=2, temperature=0.7, logprobs=True)
    assert len(response.candidates) == 2 and all(c.token_ids and c.logprobs for c in response.candidates)
