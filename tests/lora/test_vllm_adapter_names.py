"""A vLLM route's adapter names against the real vLLM (the session's server): a name the gateway has
loaded takes only the same weights again, so vLLM's prefix cache, keyed by adapter name, never
answers a prompt with results computed with other weights. A refused load leaves the adapter that
vLLM serves under the name as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from halo.errors import FailedPrecondition
from tests.policy import pages
from tests.vllm_helpers import random_adapter, served_adapters

ROUTE = "qwen3vl-local"
NAME = "names-x"
FILES = ("adapter_config.json", "adapter_model.safetensors")


async def _greedy(policy, adapter: str) -> list[int]:
    response = await policy.sample(ROUTE, input=pages.policy_input(), temperature=0.0, logprobs=True, adapter=adapter,
                                   max_tokens=8)
    assert response.adapter == adapter
    return list(response.candidates[0].token_ids)


async def test_a_loaded_name_takes_only_its_first_weights_again(vllm_gateway, vllm_server, tiny_dir, tmp_path: Path):
    from halo.client.policy import PolicyClient

    a = random_adapter(tiny_dir, tmp_path / "a", seed=1).resolve()
    b = random_adapter(tiny_dir, tmp_path / "b", seed=2).resolve()
    async with PolicyClient(vllm_gateway.target, timeout_s=300) as policy:
        try:
            assert (await policy.load_adapter(ROUTE, NAME, path=str(a))).version == 1
            first = await _greedy(policy, NAME)

            # other weights under the name: refused, and vLLM still serves the first ones under it
            with pytest.raises(FailedPrecondition, match="new name") as refused:
                await policy.load_adapter(ROUTE, NAME, path=str(b))
            assert "prefix-cache" in str(refused.value) and str(b) in str(refused.value)
            assert served_adapters(vllm_server)[NAME] == str(a)
            assert await _greedy(policy, NAME) == first

            # the same folder with other weights written into it: refused too
            original = {f: (a / f).read_bytes() for f in FILES}
            random_adapter(tiny_dir, a, seed=3)
            assert (a / "adapter_model.safetensors").read_bytes() != original["adapter_model.safetensors"]
            with pytest.raises(FailedPrecondition, match="changed"):
                await policy.load_adapter(ROUTE, NAME, path=str(a))
            assert served_adapters(vllm_server)[NAME] == str(a)
            assert await _greedy(policy, NAME) == first

            # the very files first loaded, again: a reload (what a restarted vLLM needs)
            for f, data in original.items():
                (a / f).write_bytes(data)
            assert (await policy.load_adapter(ROUTE, NAME, path=str(a))).version == 2
            assert served_adapters(vllm_server)[NAME] == str(a)
            assert await _greedy(policy, NAME) == first
        finally:
            await policy.unload_adapter(ROUTE, NAME)
    assert NAME not in served_adapters(vllm_server)
