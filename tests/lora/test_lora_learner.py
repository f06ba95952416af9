"""The local LoRA backend on CPU with the tiny random Qwen3-VL: PEFT LoRA updates in the trainer,
Tinker's losses on tinker-cookbook's datums, adapters in PEFT format loaded by the serving side.

The observation is rendered by the real `qwen3_vl_instruct` renderer (screenshot as an
ImageChunk); completions are really sampled by PeftSampler (the CPU stand-in for vLLM)."""

from __future__ import annotations

import math

import json
from pathlib import Path

import pytest
import torch

from halo.trainers.advantages import group_advantages
from halo.trainers.lora_learner import LoraLearner, PeftSampler, datum_from_completion, rl_loss

TEMPERATURE = 0.7
RANK = 8


def _observation(tiny_dir: str):
    from PIL import Image, ImageDraw

    from halo.trainers.tinker_env import DEFAULT_RENDERER, DEFAULT_TINKER_MODEL, load_renderer

    renderer = load_renderer(DEFAULT_RENDERER, tiny_dir, tiny_dir, DEFAULT_TINKER_MODEL)
    image = Image.new("RGB", (1280, 720), (245, 245, 245))
    ImageDraw.Draw(image).rectangle((560, 330, 720, 390), fill=(30, 90, 200))   # a "Sign up" button
    messages = [
        {"role": "system", "content": "You are a web agent. Answer with one computer_use tool call."},
        {"role": "user", "content": [{"type": "image", "image": image},
                                     {"type": "text", "text": 'Goal: Click the "Sign up" button.\n[3] button "Sign up"'}]},
    ]
    return renderer.build_generation_prompt(messages), renderer


@pytest.fixture(scope="module")
def prompt(tiny_dir):
    return _observation(tiny_dir)[0]


@pytest.fixture(scope="module")
def sampler(tiny_dir):
    return PeftSampler(tiny_dir)


@pytest.fixture(scope="module")
def group(sampler, prompt):
    """A fixed GRPO group: 4 sampled completions of the same observation, fixed rewards."""
    samples = [sampler.sample(prompt, max_tokens=10, temperature=TEMPERATURE, seed=seed) for seed in (1, 2, 3, 4)]
    assert len({tuple(s.tokens) for s in samples}) == 4
    rewards = [1.0, 0.0, 0.5, -0.5]
    return samples, group_advantages(rewards)   # dr_grpo: A_i = r_i - mean(r)


def test_sampler_and_trainer_logprobs_agree_with_the_lora_at_init(tiny_dir, prompt, group):
    samples, _ = group
    learner = LoraLearner(tiny_dir, rank=RANK, temperature=TEMPERATURE)
    assert any("lora_B" in n for n, p in learner.model.named_parameters() if p.requires_grad)
    assert not any("visual" in n for n, p in learner.model.named_parameters() if p.requires_grad)   # vision frozen
    for sample in samples:
        assert 1 <= len(sample.tokens) <= 10 and len(sample.logprobs) == len(sample.tokens)
        assert not set(sample.tokens) & set(learner.banned)   # no vision placeholders in text
        trainer = learner.completion_logprobs(prompt, sample.tokens)
        assert torch.allclose(trainer, torch.tensor(sample.logprobs), atol=1e-4), (trainer, sample.logprobs)
    # through the datum the cookbook would build (prompt + completion, shifted): same numbers, ratio 1
    datum = datum_from_completion(prompt, samples[0].tokens, samples[0].logprobs, 1.0)
    result = learner.forward_backward([datum])
    mask = datum.loss_fn_inputs["mask"].to_torch() > 0
    assert torch.allclose(result.logprobs[0][mask], torch.tensor(samples[0].logprobs), atol=1e-4)
    assert result.metrics["mean_ratio"] == pytest.approx(1.0, abs=1e-4)
    assert result.metrics["loss:sum"] == pytest.approx(-len(samples[0].tokens), abs=1e-3)   # -(sum of ratio * A) with A = 1
    assert result.loss == pytest.approx(-1.0, abs=1e-4)   # the default aggregation: the mean over the trained tokens
    learner.optimizer.zero_grad(set_to_none=True)
    # a learner scoring at another temperature would not agree (the test can fail)
    other = LoraLearner(tiny_dir, rank=RANK, temperature=1.0)
    assert not torch.allclose(other.completion_logprobs(prompt, samples[0].tokens), torch.tensor(samples[0].logprobs), atol=1e-3)


def test_tinkers_losses_token_wise():
    target = torch.tensor([-1.0, -2.0, -0.5], requires_grad=True)
    sampled = torch.tensor([-1.0, -1.5, -1.0])
    adv = torch.tensor([1.0, -1.0, 2.0])
    ratio = (target.detach() - sampled).exp()
    assert rl_loss("importance_sampling", target, sampled, adv).loss.detach().item() == pytest.approx(float(-(ratio * adv).sum()))
    clipped = ratio.clamp(0.8, 1.2)
    ppo = -torch.min(ratio * adv, clipped * adv).sum()
    assert rl_loss("ppo", target, sampled, adv).loss.detach().item() == pytest.approx(float(ppo))
    assert rl_loss("cispo", target, sampled, adv).loss.detach().item() == pytest.approx(float(-(clipped * target.detach() * adv).sum()))
    dro = -(target.detach() * adv - 0.5 * 0.05 * (target.detach() - sampled) ** 2).sum()
    assert rl_loss("dro", target, sampled, adv).loss.detach().item() == pytest.approx(float(dro))
    assert rl_loss("dro", target, sampled, adv, config={"beta": 1.0}).loss.detach().item() != pytest.approx(float(dro))
    # cispo's weight carries no gradient: d/dtarget = -clip(r) * A
    rl_loss("cispo", target, sampled, adv).loss.backward()
    assert torch.allclose(target.grad, -(clipped * adv))
    with pytest.raises(ValueError):
        rl_loss("reinforce", target, sampled, adv)


def test_truncated_importance_sampling_caps_the_sampler_correction_and_clips_only_against_the_proximal_policy():
    target = torch.tensor([-1.0, -2.0, -0.5, -0.2], requires_grad=True)
    sampled = torch.tensor([-1.0, -1.5, -1.0, -2.0])       # p/q = 1, e^-0.5, e^0.5, e^1.8 (over the cap)
    adv = torch.tensor([1.0, -1.0, 2.0, 1.0])
    behaviour = (target.detach() - sampled).exp()
    weight = behaviour.clamp(max=2.0)
    terms = rl_loss("importance_sampling", target, sampled, adv, tis_cap=2.0)
    # in value -w·A (r = 1), below the cap Tinker's -(p/q)·A; the gradient is -w·A per token
    assert terms.loss.item() == pytest.approx(float(-(weight * adv).sum()))
    terms.loss.backward()
    assert torch.allclose(target.grad, -(weight * adv))
    assert terms.capped.tolist() == [False, False, False, True] and torch.allclose(terms.ratio, behaviour)
    k3 = behaviour - 1 - (target.detach() - sampled)
    assert torch.allclose(terms.kl_k3, k3) and terms.kl_k3[0] == 0 and bool((terms.kl_k3[1:] > 0).all())
    # Tinker's ppo clips p/q (all three tokens away from 1 here); with the cap, the clip is against the proximal policy
    # (the learner's weights at the step's start): inactive in the step's one update
    tinker_ppo = rl_loss("ppo", target, sampled, adv)
    assert tinker_ppo.clipped.tolist() == [False, True, True, True]
    capped_ppo = rl_loss("ppo", target, sampled, adv, tis_cap=2.0)
    assert not capped_ppo.clipped.any() and capped_ppo.loss.item() == pytest.approx(terms.loss.item())
    target.grad = None
    rl_loss("cispo", target, sampled, adv, tis_cap=2.0).loss.backward()
    assert torch.allclose(target.grad, -(weight * adv))
    # dro has no ratio to correct (its penalty anchors it to the sampler): the same loss either way
    assert rl_loss("dro", target, sampled, adv, tis_cap=2.0).loss.item() == pytest.approx(rl_loss("dro", target, sampled, adv).loss.item())
    with pytest.raises(ValueError, match="tis_cap"):
        rl_loss("ppo", target, sampled, adv, tis_cap=0.0)


def test_tokens_far_below_the_samplers_probability_are_not_trained_on():
    """The off-policy weight is bounded on both sides: capped above (tis_cap), and a token whose ratio
    learner/sampler is under mask_low leaves the loss (prime-rl's token_mask_low)."""
    target = torch.tensor([-1.0, -4.0, -0.5, -1.2], requires_grad=True)
    sampled = torch.tensor([-1.0, -1.0, -1.0, -1.0])       # ratios 1, e^-3 (under 1/8), e^0.5, e^-0.2
    adv = torch.tensor([1.0, 1.0, -1.0, 1.0])
    terms = rl_loss("importance_sampling", target, sampled, adv, tis_cap=2.0, mask_low=0.125)
    assert terms.masked_low.tolist() == [False, True, False, False] and terms.per_token[1] == 0
    terms.loss.backward()
    assert target.grad[1] == 0 and bool((target.grad[[0, 2, 3]] != 0).all())
    unbounded = rl_loss("importance_sampling", target.detach(), sampled, adv, tis_cap=2.0)
    assert not unbounded.masked_low.any() and unbounded.per_token[1] != 0
    with pytest.raises(ValueError, match="mask_low"):
        rl_loss("ppo", target, sampled, adv, mask_low=0.0)


def test_the_loss_aggregations_scale_the_summed_gradient(tiny_dir, prompt, group):
    """token_mean (the default, DAPO / verl) = the summed loss / the step's trained tokens; Dr. GRPO's
    seq_mean_token_sum_norm = the sum / (datums x the constant); sum = Tinker's. Same direction, and
    each scale as documented."""
    samples, advantages = group
    data = [datum_from_completion(prompt, s.tokens, s.logprobs, a) for s, a in zip(samples, advantages)]
    tokens = sum(len(s.tokens) for s in samples)
    grads = {}
    for agg in ("sum", "token_mean", "seq_mean_token_sum_norm"):
        learner = LoraLearner(tiny_dir, rank=RANK, temperature=TEMPERATURE, seed=0, loss_agg=agg, loss_agg_norm=300)
        result = learner.forward_backward(data, "importance_sampling")
        grads[agg] = torch.cat([p.grad.flatten() for p in learner.trainable_parameters() if p.grad is not None])
        assert result.metrics["loss:sum"] == pytest.approx(result.loss * {"sum": 1, "token_mean": tokens,
                                                                          "seq_mean_token_sum_norm": len(data) * 300}[agg], rel=1e-4)
    assert torch.allclose(grads["token_mean"] * tokens, grads["sum"], rtol=1e-3, atol=1e-6)
    assert torch.allclose(grads["seq_mean_token_sum_norm"] * len(data) * 300, grads["sum"], rtol=1e-3, atol=1e-6)
    with pytest.raises(ValueError, match="loss_agg"):
        LoraLearner(tiny_dir, rank=RANK, loss_agg="mean")


def test_a_step_reports_the_sampler_learner_mismatch(tiny_dir, prompt, group):
    """Datums whose sampler logprobs are not the learner's (a stale or differently computed
    sampler): the step's metrics show the ratio's spread, the capped fraction and the k3 KL; on
    the learner's own logprobs they read 1, 0 and 0."""
    samples, advantages = group
    learner = LoraLearner(tiny_dir, rank=RANK, temperature=TEMPERATURE, seed=0)
    own = [datum_from_completion(prompt, s.tokens, learner.completion_logprobs(prompt, s.tokens).tolist(), a)
           for s, a in zip(samples[:2], advantages)]
    on = learner.forward_backward(own, "ppo").metrics
    assert on["sampler_ratio/min"] == pytest.approx(1.0, abs=1e-5) and on["sampler_ratio/max"] == pytest.approx(1.0, abs=1e-5)
    assert on["sampler_ratio/frac_capped"] == 0 and on["policy_ratio/frac_clipped"] == 0
    assert abs(on["kl_sampler_learner_k3"]) < 1e-8
    # the sampler gave alternate tokens 1.5 nats less (ratio e^1.5 > 2: capped) and 0.5 more
    shifted = [datum_from_completion(prompt, s.tokens, [lp + (-1.5 if i % 2 == 0 else 0.5) for i, lp in
                                                         enumerate(learner.completion_logprobs(prompt, s.tokens).tolist())], a)
               for s, a in zip(samples[:2], advantages)]
    learner.optimizer.zero_grad()
    off = learner.forward_backward(shifted, "ppo").metrics
    assert off["sampler_ratio/max"] == pytest.approx(math.exp(1.5), rel=1e-4)
    assert off["sampler_ratio/min"] == pytest.approx(math.exp(-0.5), rel=1e-4)
    assert 0.4 < off["sampler_ratio/frac_capped"] < 0.6 and off["policy_ratio/frac_clipped"] == 0
    assert off["kl_sampler_learner_k3"] > 0.5


@pytest.fixture(scope="module")
def trained(tiny_dir, prompt, group):
    """A few GRPO steps (importance sampling, Tinker's default) on the fixed group."""
    samples, advantages = group
    data = [datum_from_completion(prompt, s.tokens, s.logprobs, a) for s, a in zip(samples, advantages)]
    learner = LoraLearner(tiny_dir, rank=RANK, temperature=TEMPERATURE, learning_rate=2e-3, seed=0)
    before = [learner.completion_logprobs(prompt, s.tokens).sum().item() for s in samples]
    losses = []
    for _ in range(4):
        losses.append(learner.forward_backward(data, "importance_sampling").metrics["loss:sum"])
        learner.optim_step()
    after = [learner.completion_logprobs(prompt, s.tokens).sum().item() for s in samples]
    return learner, data, losses, before, after


def test_grpo_steps_on_a_fixed_batch_lower_the_loss(trained, group):
    learner, _, losses, before, after = trained
    _, advantages = group
    assert all(b < a for a, b in zip(losses, losses[1:])), losses   # strictly decreasing
    assert losses[-1] < losses[0] - 0.5
    # the best completion became more likely, the worst less
    best, worst = advantages.index(max(advantages)), advantages.index(min(advantages))
    assert after[best] > before[best] + 0.1 and after[worst] < before[worst] - 0.1
    assert learner.updates == 4


@pytest.mark.parametrize("loss_fn", ["ppo", "cispo", "dro"])
def test_the_other_losses_also_learn_on_the_fixed_batch(tiny_dir, prompt, group, loss_fn):
    samples, advantages = group
    data = [datum_from_completion(prompt, s.tokens, s.logprobs, a) for s, a in zip(samples, advantages)]
    learner = LoraLearner(tiny_dir, rank=RANK, temperature=TEMPERATURE, learning_rate=2e-3, seed=0)
    best, worst = advantages.index(max(advantages)), advantages.index(min(advantages))
    start = [learner.completion_logprobs(prompt, samples[i].tokens).sum().item() for i in (best, worst)]
    losses = []
    for _ in range(2):
        losses.append(learner.forward_backward(data, loss_fn).loss)
        learner.optim_step()
    losses.append(learner.forward_backward(data, loss_fn).loss)
    end = [learner.completion_logprobs(prompt, samples[i].tokens).sum().item() for i in (best, worst)]
    assert end[0] > start[0] and end[1] < start[1], (start, end)
    if loss_fn != "cispo":   # cispo's clipped weights are constants per step: its values do not compare across steps
        assert losses[-1] < losses[0], losses


def test_the_adapter_is_saved_in_peft_format_and_changes_the_serving_sides_outputs(trained, tiny_dir, prompt, group, sampler, tmp_path: Path):
    learner, _, _, _, _ = trained
    samples, advantages = group
    folder = learner.save_adapter(tmp_path / "adapter")
    assert (folder / "adapter_config.json").exists() and (folder / "adapter_model.safetensors").exists()
    config = json.loads((folder / "adapter_config.json").read_text())
    assert config["peft_type"] == "LORA" and config["r"] == RANK and "language_model" in str(config["target_modules"])
    from safetensors.torch import load_file

    weights = load_file(str(folder / "adapter_model.safetensors"))
    assert weights and all("lora_A" in k or "lora_B" in k for k in weights)
    assert any("lora_B" in k and v.abs().max() > 0 for k, v in weights.items())   # trained, not the B = 0 init

    served = PeftSampler(tiny_dir, folder)   # the serving side loads the PEFT folder
    best = samples[advantages.index(max(advantages))]
    base_lp = sampler.completion_logprobs(prompt, best.tokens, TEMPERATURE)
    served_lp = served.completion_logprobs(prompt, best.tokens, TEMPERATURE)
    learner_lp = learner.completion_logprobs(prompt, best.tokens)
    assert torch.allclose(served_lp, learner_lp, atol=1e-4)            # serving = trainer after the update
    assert served_lp.sum() > base_lp.sum() + 0.1                       # and the adapter changed its outputs
    again = served.sample(prompt, max_tokens=10, temperature=TEMPERATURE, seed=1)
    assert again.tokens != samples[0].tokens or not torch.allclose(torch.tensor(again.logprobs), torch.tensor(samples[0].logprobs), atol=1e-3)

    # a trainer checkpoint (adapter + optimizer) restores the same weights in a fresh learner
    checkpoint = tmp_path / "step-000004"
    checkpoint.mkdir()
    learner.save(checkpoint)
    restored = LoraLearner(tiny_dir, rank=RANK, temperature=TEMPERATURE, learning_rate=2e-3, seed=1)
    assert not torch.allclose(restored.completion_logprobs(prompt, best.tokens), learner_lp, atol=1e-4)
    restored.load(checkpoint)
    assert torch.allclose(restored.completion_logprobs(prompt, best.tokens), learner_lp, atol=1e-5)
    assert restored.updates == 4 and restored.optimizer.state_dict()["state"]


def test_image_token_counts_must_match_the_renderer(tiny_dir, prompt):
    import tinker

    from transformers import AutoConfig

    from halo.trainers.lora_learner import QwenVLInputs, load_processors

    _, image_processor = load_processors(tiny_dir)
    image_token = AutoConfig.from_pretrained(tiny_dir).image_token_id
    inputs = QwenVLInputs(image_processor, image_token_id=image_token)
    encoded = inputs.encode(prompt)
    image = next(c for c in prompt.chunks if isinstance(c, tinker.types.ImageChunk))
    assert int((encoded["input_ids"] == image_token).sum()) == image.expected_tokens == int(encoded["mm_token_type_ids"].sum())
    assert encoded["pixel_values"].shape[0] == 4 * image.expected_tokens   # 2x2 patches merge into one token
    wrong = tinker.ModelInput(chunks=[tinker.types.ImageChunk(data=image.data, format="jpeg", expected_tokens=image.expected_tokens + 1)])
    with pytest.raises(ValueError, match="image token counts differ"):
        inputs.encode(wrong)


def _grads(learner: LoraLearner) -> torch.Tensor:
    return torch.cat([p.grad.flatten() for p in learner.trainable_parameters() if p.grad is not None])


def test_micro_batches_and_gradient_checkpointing_give_the_per_datum_gradient(tiny_dir, prompt, group):
    """Several datums in one padded forward (the default budget holds the whole group), one datum per
    forward, and with gradient checkpointing: the same loss, logprobs and gradient (float32)."""
    samples, advantages = group
    data = [datum_from_completion(prompt, s.tokens, s.logprobs, a) for s, a in zip(samples, advantages)]
    runs = {}
    for name, options in {"batched": {}, "one_by_one": {"micro_batch_tokens": 1},
                          "checkpointed": {"gradient_checkpointing": True, "micro_batch_tokens": 2 * prompt.length + 40}}.items():
        learner = LoraLearner(tiny_dir, rank=RANK, temperature=TEMPERATURE, seed=0, **options)
        lengths = [d.model_input.length for d in data]
        runs[name] = (learner.forward_backward(data, "ppo"), _grads(learner), len(learner.micro_batches(lengths)))
    assert [n for _, _, n in runs.values()] == [1, 4, 2]
    (base, base_grad, _) = runs["batched"]
    assert base_grad.abs().max() > 0
    for name in ("one_by_one", "checkpointed"):
        result, grad, _ = runs[name]
        assert result.loss == pytest.approx(base.loss, rel=1e-5, abs=1e-5), name
        assert torch.allclose(grad, base_grad, rtol=1e-4, atol=1e-6), (name, float((grad - base_grad).abs().max()))
        for mine, theirs in zip(result.logprobs, base.logprobs):
            assert torch.allclose(mine, theirs, atol=1e-5, equal_nan=True), name
    # only the completion went through the LM head: NaN at the prompt's positions
    assert bool(base.logprobs[0][: prompt.length - 1].isnan().all()) and not bool(base.logprobs[0][-1].isnan())


def test_the_gradient_norm_is_clipped_to_1_by_default(tiny_dir, prompt, group):
    samples, _ = group
    learner = LoraLearner(tiny_dir, rank=RANK, temperature=TEMPERATURE, seed=0)
    assert learner.grad_clip_norm == 1.0
    before = [p.detach().clone() for p in learner.trainable_parameters()]
    learner.optimizer = torch.optim.SGD(learner.trainable_parameters(), lr=1.0)   # the step is the clipped gradient
    learner.forward_backward([datum_from_completion(prompt, samples[0].tokens, samples[0].logprobs, 50.0)])
    norm = learner.optim_step()["grad_norm"]
    moved = torch.cat([(p.detach() - b).flatten() for p, b in zip(learner.trainable_parameters(), before)]).norm()
    assert norm > 2 and float(moved) == pytest.approx(1.0, rel=1e-3), (norm, float(moved))


def test_a_bfloat16_learner_scores_with_float32_logits(tiny_dir, prompt, group):
    samples, _ = group
    learner = LoraLearner(tiny_dir, rank=RANK, temperature=TEMPERATURE, seed=0, dtype=torch.bfloat16)
    inputs = learner.inputs.encode(prompt, extra_tokens=samples[0].tokens[:-1])
    with torch.no_grad():
        hidden = learner._hidden(inputs)[0, -len(samples[0].tokens):]
        logits = learner._logits(hidden)
        head = learner.model.get_base_model().lm_head
        exact = hidden.float() @ head.weight.float().T
        rounded = head(hidden).float()
    assert hidden.dtype == torch.bfloat16 and logits.dtype == torch.float32
    assert torch.allclose(logits, exact, atol=1e-5) and not torch.equal(logits, rounded)
