"""The VLM modes end to end without a GPU or an API key: the gateway's routes point at FakeVllmServer
(vLLM's HTTP API around a tiny random Qwen3-VL run by transformers on the CPU, tests/policy/fake_vllm.py),
which records the requests it got: this test checks which model name each mode asked for, which
a real vLLM does not expose (the real one is tested in tests/policy and tests/lora).
What is checked is the plumbing each mode needs: the route, the LoRA adapter loaded by path and
sampled by name, screenshots and raw model text saved, unparseable output counted as invalid."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def fake_vllm(tmp_path_factory):
    from halo.cli.benches.tiny_qwen3vl import build
    from tests.policy.fake_vllm import FakeVllmServer

    server = FakeVllmServer(str(build(tmp_path_factory.mktemp("tiny-qwen3vl")))).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
async def vlm_gateway(fake_vllm, tmp_path_factory):
    """configs/gateway.yaml's gpt and qwen3vl routes, both aimed at the fake server."""
    import os

    import yaml

    from halo.policy.config import DEFAULT_CONFIG_PATH, GatewaySettings
    from halo.policy.server import build_service
    from halo.runtime.server import start_service

    config = yaml.safe_load(DEFAULT_CONFIG_PATH.read_text())
    for route in config["routes"]:
        if route["name"] in ("gpt", "qwen3vl"):
            route |= {"base_url": fake_vllm.base_url, "served_model": fake_vllm.served_model, "max_tokens": 12, "retries": 0}
        if route["name"] == "gpt":
            route["api_key_env"] = "HALO_TEST_EVAL_OPENAI_KEY"
    os.environ["HALO_TEST_EVAL_OPENAI_KEY"] = "sk-test"
    path = tmp_path_factory.mktemp("vlm-gateway") / "gateway.yaml"
    path.write_text(yaml.safe_dump(config))
    settings = GatewaySettings(port=0, metrics_port=0, config=str(path), only_routes=["gpt", "qwen3vl"])
    service = await start_service(build_service(settings), settings)
    yield service.target
    await service.stop(grace=1.0)
    os.environ.pop("HALO_TEST_EVAL_OPENAI_KEY", None)


async def test_vlm_modes_sample_their_route_and_adapter(targets, vlm_gateway, fake_vllm, evals_dir, tmp_path):
    from halo.evaluation.harness import run_eval
    from halo.evaluation.modes import resolve_mode
    from halo.evaluation.records import EvalSpec
    from halo.evaluation.store import EvalStore
    from halo.runs.context import ServiceTargets

    adapter = tmp_path / "checkpoints" / "qwen3vl_grpo_lora"
    adapter.mkdir(parents=True)
    (adapter / "adapter_config.json").write_text('{"r": 32, "peft_type": "LORA"}')
    store = EvalStore(evals_dir)
    vlm = ServiceTargets(targets.env, targets.reward, vlm_gateway)
    models_sampled = {}
    for mode, adapter_path in (("qwen3vl_grpo", str(adapter)), ("qwen3vl_base", None), ("gpt5_baseline", None)):
        resolved = resolve_mode(mode, adapter_path=adapter_path)
        spec = EvalSpec(eval_id=f"vlm-{mode}", mode=mode, route=resolved.route, adapter=resolved.adapter,
                        adapter_path=resolved.adapter_path, tasks=["playground-signup"], seeds=[0], max_steps=2, workers=1)
        before = len(fake_vllm.requests)
        outcome = await run_eval(spec, store, targets=vlm, resolved=resolved)
        models_sampled[mode] = {r["model"] for r in fake_vllm.requests[before:]}
        [episode] = outcome.episodes
        assert not episode["env_failure"] and episode["length"] >= 1, episode
        steps = store.steps(spec.eval_id, episode["key"])
        for s in steps:
            assert s["raw_text"] and s["screenshot"]          # the model's own text, and what it saw
            assert s["valid"] == (s["action"] is not None and s["action_ok"])
            assert s["action"] is not None or s["parse_error"]
        if mode != "gpt5_baseline":   # the OpenAI path asks for no token ids
            assert all(s["tokens"] > 0 for s in steps)
    assert fake_vllm.adapters == {"qwen3vl_grpo": str(adapter)}     # loaded by path, under the mode's name
    assert models_sampled == {"qwen3vl_grpo": {"qwen3vl_grpo"}, "qwen3vl_base": {"tiny-qwen3vl"}, "gpt5_baseline": {"tiny-qwen3vl"}}
