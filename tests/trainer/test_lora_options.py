"""A local_lora run's options (RunSpec.extra) and its step's data: every key read, typed and
checked before anything loads; unknown or unimplemented options refused; the cookbook's advantage
options (remove_constant_reward_groups, normalize_std, the KL penalty) applied; a step without
any advantage takes no optimizer step. No model, no service: these run in `make test-fast`."""

from __future__ import annotations

import pytest
import tinker
import torch

from halo.errors import InvalidArgument
from halo.trainers.lora_options import DEFAULT_TIS_CAP, DEFAULT_TIS_MASK_LOW, LocalLoraOptions


def test_defaults_and_what_the_cli_always_sends_are_accepted():
    options = LocalLoraOptions.from_extra({
        "eval_every": 0, "update_epochs": 1, "entropy_coef": 0.0, "max_staleness": 0, "stale_rule": "drop",
        "success": "agisdk", "serve_route": "qwen3vl", "action_regex": "(a|b)", "layout_seeds": [2.0],
    })
    assert (options.tis_cap, options.tis_mask_low, options.loss_agg) == (DEFAULT_TIS_CAP, DEFAULT_TIS_MASK_LOW, "token_mean")
    assert options.layout_seeds == (2,) and options.serve_route == "qwen3vl"
    # numbers arrive as floats through the trainer service (a protobuf Struct)
    assert LocalLoraOptions.from_extra({"micro_batch_tokens": 512.0}).micro_batch_tokens == 512
    assert LocalLoraOptions.from_extra({"tis_cap": 0, "tis_mask_low": 0}).tis_cap is None


@pytest.mark.parametrize("extra, message", [
    ({"tis_capp": 2}, "does not know extra.tis_capp"),
    ({"relevance_prior": 5.0}, "does not know extra.relevance_prior"),
    ({"entropy_coef": 0.01}, "does not implement extra.entropy_coef"),
    ({"update_epochs": 4}, "does not implement extra.update_epochs"),
    ({"eval_every": 5}, "does not implement extra.eval_every"),
    ({"loss_agg": "mean"}, "loss_agg must be one of"),
    ({"tis_mask_low": 3.0}, "must be below extra.tis_cap"),
    ({"tis_cap": -1}, ">= 0"),
    ({"kl_penalty_coef": "a lot"}, "must be a number"),
    ({"kl_discount_factor": 1.0}, r"in \[0, 1\)"),
    ({"normalize_std": "yes"}, "true or false"),
    ({"grad_clip_norm": float("nan")}, "finite"),
    ({"sampler": "tinker"}, "'vllm' or 'local'"),
])
def test_unknown_unimplemented_and_malformed_options_are_refused(extra, message):
    with pytest.raises(InvalidArgument, match=message):
        LocalLoraOptions.from_extra(extra)


def _datum(advantages: list[float], logprobs: list[float], mask: list[float]) -> tinker.Datum:
    n = len(advantages)
    return tinker.Datum(
        model_input=tinker.ModelInput.from_ints(list(range(n))),
        loss_fn_inputs={
            "target_tokens": tinker.TensorData.from_torch(torch.arange(1, n + 1)),
            "logprobs": tinker.TensorData.from_torch(torch.tensor(logprobs)),
            "advantages": tinker.TensorData.from_torch(torch.tensor(advantages)),
            "mask": tinker.TensorData.from_torch(torch.tensor(mask)),
        },
    )


def test_a_batch_without_any_advantage_has_no_signal():
    from halo.trainers.lora_learner import has_signal

    assert not has_signal([_datum([0.0, 0.0], [-1.0, -2.0], [0.0, 1.0]), _datum([0.0], [-1.0], [1.0])])
    assert has_signal([_datum([0.0, 0.0], [-1.0, -2.0], [0.0, 1.0]), _datum([0.5], [-1.0], [1.0])])


def test_the_kl_penalty_is_the_cookbooks_against_the_reference_logprobs():
    """advantage += coef · (mean(d) − d) at each trained token, d = log q_sampler − log q_base
    (tinker-cookbook's rl.metrics.incorporate_kl_penalty); untrained positions keep theirs."""
    from halo.trainers.lora_learner import incorporate_kl_penalty

    data = [_datum([0.0, 1.0, 1.0], [0.0, -1.0, -2.0], [0.0, 1.0, 1.0]), _datum([0.0, -1.0], [0.0, -0.5], [0.0, 1.0])]
    reference = [torch.tensor([0.0, -1.5, -1.0]), torch.tensor([0.0, -0.5])]
    metrics = incorporate_kl_penalty(data, reference, coef=0.1)
    d = [0.5, -1.0, 0.0]                      # sampler − reference at the three trained tokens
    mean = sum(d) / 3
    assert metrics["kl_policy_base"] == pytest.approx(mean)
    first = data[0].loss_fn_inputs["advantages"].to_torch().tolist()
    second = data[1].loss_fn_inputs["advantages"].to_torch().tolist()
    assert first == pytest.approx([0.0, 1.0 + 0.1 * (mean - 0.5), 1.0 + 0.1 * (mean + 1.0)])
    assert second == pytest.approx([0.0, -1.0 + 0.1 * mean])


def test_constant_reward_groups_are_dropped_and_std_normalisation_scales_advantages():
    from tinker_cookbook.completers import TokensWithLogprobs
    from tinker_cookbook.rl.types import Trajectory, TrajectoryGroup, Transition

    from halo.trainers.lora_learner import step_data

    def group(rewards: list[float]) -> TrajectoryGroup:
        trajectories = [Trajectory([Transition(ob=tinker.ModelInput.from_ints([1, 2]),
                                               ac=TokensWithLogprobs(tokens=[3, 4], maybe_logprobs=[-1.0, -1.0]),
                                               reward=r, episode_done=True)], tinker.ModelInput.empty()) for r in rewards]
        return TrajectoryGroup(trajectories, [0.0] * len(rewards), [{} for _ in rewards])

    def advantage(datum: tinker.Datum) -> float:   # the completion's (the observation's positions carry 0)
        return float(datum.loss_fn_inputs["advantages"].to_torch()[datum.loss_fn_inputs["mask"].to_torch() > 0][0])

    groups = [group([1.0, 0.0, 0.0, 0.0]), group([0.5, 0.5, 0.5, 0.5])]
    data, metrics = step_data(groups, LocalLoraOptions())
    assert len(data) == 8 and "groups_constant_removed" not in metrics
    data, metrics = step_data(groups, LocalLoraOptions(remove_constant_reward_groups=True))
    assert len(data) == 4 and metrics["groups_constant_removed"] == 1
    centred = [advantage(d) for d in data]
    assert centred == pytest.approx([0.75, -0.25, -0.25, -0.25], abs=1e-6)
    data, _ = step_data(groups[:1], LocalLoraOptions(normalize_std=True))
    scaled = [advantage(d) for d in data]
    std = torch.tensor([1.0, 0.0, 0.0, 0.0]).std(unbiased=False).item()
    assert scaled == pytest.approx([0.75 / std, -0.25 / std, -0.25 / std, -0.25 / std], rel=1e-4)
