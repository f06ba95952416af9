"""The learner under a grammar (constrained sampling, `--constrain-actions`), on the CPU with the tiny
random Qwen3-VL: it scores every completion position over the tokens the grammar allowed there, the
distribution vLLM samples from (the parity with the real vLLM is tests/lora/test_vllm_rollouts.py),
and one small step on a fixed batch moves each completion's masked log-probability the way its
advantage says (a first-order check that catches a lost sign or a mask that differs between the
step and the readout in seconds; the end-to-end learning test is test_local_lora_learns.py)."""

from __future__ import annotations

import pytest
import torch

from halo.agent import actions as A
from halo.agent.formats import ActionFormat, format_action
from halo.agent.grammar import action_regex, choice_regex
from halo.trainers.lora_grammar import GrammarMismatch
from halo.trainers.lora_learner import LoraLearner, datum_from_completion
from tests.lora.test_lora_learner import _observation

TEMPERATURE = 1.0
MENU = [A.ClickElement(bid) for bid in ("1", "5", "12", "13")]
QWEN = ActionFormat.QWEN_COMPUTER_USE


@pytest.fixture(scope="module")
def prompt(tiny_dir):
    return _observation(tiny_dir)[0]


@pytest.fixture(scope="module")
def menu_learner(tiny_dir):
    return LoraLearner(tiny_dir, rank=4, temperature=TEMPERATURE, learning_rate=1e-2, seed=0,
                       action_regex=choice_regex(QWEN, MENU))


def completions(learner: LoraLearner) -> list[list[int]]:
    """Each menu action as a token path the grammar allows, ended by the stop token (a fixed,
    weight-independent batch)."""
    grammar = learner.grammar
    return [grammar.greedy_path(format_action(a, QWEN), learner.tokenizer) + grammar.stop_ids[:1] for a in MENU]


def test_every_position_is_scored_over_the_tokens_the_grammar_allows(menu_learner, prompt):
    learner = menu_learner
    for tokens in completions(learner):
        allowed = learner.grammar.allowed(tokens)
        assert allowed.shape == (len(tokens), learner.grammar.vocab_size)
        assert all(allowed[i, t] for i, t in enumerate(tokens))
        assert allowed.sum(-1).min() >= 1 and allowed.sum(-1).max() < 50   # a grammar, not the whole vocabulary
        for i in (0, len(tokens) // 2, len(tokens) - 1):
            dist = learner.next_token_logprobs(prompt, tokens[:i])
            assert torch.isneginf(dist[~allowed[i]]).all()               # nothing outside the mask
            assert float(dist[allowed[i]].exp().sum()) == pytest.approx(1.0, abs=1e-5)   # renormalised over it
        masked = learner.completion_logprobs(prompt, tokens)
        assert torch.isfinite(masked).all() and (masked <= 0).all()
    # a forced position (one allowed token) carries no choice: logprob exactly 0
    tokens = completions(learner)[0]
    forced = [i for i, row in enumerate(learner.grammar.allowed(tokens)) if int(row.sum()) == 1]
    assert forced and (learner.completion_logprobs(prompt, tokens)[forced] == 0).all()


def test_the_unmasked_softmax_is_what_the_mask_corrects(tiny_dir, menu_learner, prompt):
    """Without the mask the learner's p is the masked q times the allowed mass Z_t < 1: the ratio p/q
    far below 1 that an unmasked learner reported under a grammar. The mask makes it exactly 1."""
    plain = LoraLearner(tiny_dir, rank=4, temperature=TEMPERATURE, seed=0)
    tokens = completions(menu_learner)[2]
    q = menu_learner.completion_logprobs(prompt, tokens)
    p = plain.completion_logprobs(prompt, tokens)
    assert (p <= q + 1e-6).all() and float((p - q).min()) < -1.0
    datum = datum_from_completion(prompt, tokens, q.tolist(), 1.0)
    result = menu_learner.forward_backward([datum])
    menu_learner.optimizer.zero_grad(set_to_none=True)
    assert result.metrics["sampler_ratio/min"] == pytest.approx(1.0, abs=1e-5)
    assert result.metrics["sampler_ratio/max"] == pytest.approx(1.0, abs=1e-5)
    assert result.metrics["sampler_ratio/frac_masked_low"] == 0


def test_a_completion_the_grammar_refuses_is_an_error_not_a_silent_fallback(menu_learner, prompt):
    tokens = completions(menu_learner)[0]
    outside = [t for t in range(menu_learner.grammar.vocab_size) if not menu_learner.grammar.allowed(tokens)[0, t]][0]
    with pytest.raises(GrammarMismatch, match="not allowed by the action regex"):
        menu_learner.completion_logprobs(prompt, [outside] + tokens[1:])
    datum = datum_from_completion(prompt, [outside] + tokens[1:], [0.0] * len(tokens), 1.0)
    with pytest.raises(GrammarMismatch):
        menu_learner.forward_backward([datum])


def test_the_full_action_grammar_compiles_and_masks_like_the_menu(tiny_dir, prompt):
    learner = LoraLearner(tiny_dir, rank=4, temperature=TEMPERATURE, seed=0, action_regex=action_regex())
    text = format_action(A.Fill("3", "Ada"), QWEN)
    tokens = learner.grammar.greedy_path(text, learner.tokenizer) + learner.grammar.stop_ids[:1]
    allowed = learner.grammar.allowed(tokens)
    assert allowed.sum(-1).max() > 50                      # a free-text field allows far more than a menu does
    assert torch.isfinite(learner.completion_logprobs(prompt, tokens)).all()


def test_one_small_step_moves_each_completion_the_way_its_advantage_says(tiny_dir, prompt):
    """The first-order check: on a fixed batch of four menu completions with advantages +1, +0.5, −0.5,
    −1 (sampler logprobs = the learner's own masked q: on-policy), one small Adam step raises the
    masked log q of every positive-advantage completion and lowers every negative one, and the
    advantage-weighted sum Σ A·log q rises. A lost sign, or a mask that differed between the step
    and this readout, fails it."""
    learner = LoraLearner(tiny_dir, rank=4, temperature=TEMPERATURE, learning_rate=1e-3, seed=0,
                          action_regex=choice_regex(QWEN, MENU))
    batch = completions(learner)
    advantages = [1.0, 0.5, -0.5, -1.0]
    before = [learner.completion_logprobs(prompt, t) for t in batch]
    data = [datum_from_completion(prompt, t, q.tolist(), a) for t, q, a in zip(batch, before, advantages)]
    result = learner.forward_backward(data, "importance_sampling")
    assert result.metrics["sampler_ratio/max"] == pytest.approx(1.0, abs=1e-5)
    learner.optim_step()
    after = [learner.completion_logprobs(prompt, t) for t in batch]
    moved = [float(a.sum() - b.sum()) for a, b in zip(after, before)]
    print(f"masked log q change per completion (advantages {advantages}): {moved}")
    assert all(m > 0 for m, a in zip(moved, advantages) if a > 0), moved
    assert all(m < 0 for m, a in zip(moved, advantages) if a < 0), moved
    objective = [sum(a * float(q.sum()) for a, q in zip(advantages, qs)) for qs in (before, after)]
    assert objective[1] > objective[0]


def test_in_process_sampling_draws_within_the_grammar_and_the_learner_scores_it_exactly(menu_learner, prompt):
    """PeftSampler (in-process generate(), the sampler where there is no vLLM) applies the same mask:
    every completion is one of the menu's actions, and its logprobs are the learner's masked q."""
    from halo.trainers.lora_learner import PeftSampler

    sampler = PeftSampler.of(menu_learner)
    texts = {format_action(a, QWEN) for a in MENU}
    seen = set()
    for seed in range(6):
        sample = sampler.sample(prompt, max_tokens=160, temperature=TEMPERATURE, seed=seed)
        assert sample.stop_reason == "stop" and sample.tokens[-1] in menu_learner.grammar.stop_ids
        text = menu_learner.tokenizer.decode(sample.tokens[:-1])
        assert text in texts, text
        seen.add(text)
        mine = menu_learner.completion_logprobs(prompt, sample.tokens)
        assert torch.allclose(mine, torch.tensor(sample.logprobs), atol=1e-4)
    assert len(seen) >= 2   # it samples, not one fixed path


def test_the_kl_reference_is_the_base_weights_over_the_same_mask(tiny_dir, prompt):
    """reference_logprobs scores each datum's completion with the LoRA off, masked like the sampler:
    at init (LoRA B = 0) it is the learner's own q; after a step the learner moves and it does not."""
    learner = LoraLearner(tiny_dir, rank=4, temperature=TEMPERATURE, learning_rate=1e-2, seed=0,
                          action_regex=choice_regex(QWEN, MENU))
    tokens = completions(learner)[1]
    q = learner.completion_logprobs(prompt, tokens)
    datum = datum_from_completion(prompt, tokens, q.tolist(), 1.0)
    mask = datum.loss_fn_inputs["mask"].to_torch() > 0
    (reference,) = learner.reference_logprobs([datum])
    assert torch.allclose(reference[mask], q, atol=1e-5) and (reference[~mask] == 0).all()
    learner.forward_backward([datum])
    learner.optim_step()
    (after,) = learner.reference_logprobs([datum])
    assert torch.allclose(after, reference, atol=1e-6)                           # the base does not move
    assert float(learner.completion_logprobs(prompt, tokens).sum()) > float(q.sum()) + 1e-3   # the policy does
