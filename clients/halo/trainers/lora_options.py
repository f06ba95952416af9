"""The options of a local_lora run (`RunSpec.extra`), read and checked in one place.

Every key a local_lora run reads is listed here with its type and default; a key it does not know
is an error, and so is a key it knows but does not implement (`entropy_coef`, `update_epochs`,
`eval_every` at anything but their neutral value): a run never silently trains differently from
what its spec says. The checks run before the learner loads a model or a rollout starts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from halo.errors import InvalidArgument

#: The truncated importance-sampling cap (extra.tis_cap; 0 = Tinker's exact losses, ratios against
#: the sampler, no cap): 2, as in Yao et al. 2025 and verl's rollout IS default.
DEFAULT_TIS_CAP = 2.0
#: Tokens whose ratio learner/sampler is below this are not trained on (extra.tis_mask_low; 0 = keep
#: every token): prime-rl's `token_mask_low` default, 1/8.
DEFAULT_TIS_MASK_LOW = 0.125
#: Global gradient-norm clip of every optimizer step (extra.grad_clip_norm; 0 = none): 1.0, the
#: default of verl, OpenRLHF and TRL.
DEFAULT_GRAD_CLIP_NORM = 1.0
#: A forward_backward micro-batch's padded size (rows x longest datum), extra.micro_batch_tokens.
DEFAULT_MICRO_BATCH_TOKENS = 4096

#: How a step's per-token losses become one loss (extra.loss_agg), with the names verl uses:
#: - "token_mean" (the default; verl's default `loss_agg_mode`, DAPO): the mean over every trained
#:   token of the step. A token weighs the same in a short and a long completion, and the step's
#:   size does not grow with the group size or the completion length, so one learning rate fits
#:   runs of any shape and the gradient clip acts on the same scale in all of them.
#: - "seq_mean_token_sum_norm" (Dr. GRPO): each datum's token sum divided by a constant
#:   (`loss_agg_norm`, the run's max_tokens by default), then the mean over datums: no length
#:   normalisation bias at all, at the price of a step that shrinks with shorter completions.
#: - "sum" (Tinker's convention: its forward_backward sums over tokens): the step grows with the
#:   number of tokens in the batch.
LOSS_AGGREGATIONS = ("token_mean", "seq_mean_token_sum_norm", "sum")
DEFAULT_LOSS_AGG = "token_mean"

SAMPLERS = ("vllm", "local")

#: The keys every trainer may receive from `halo train` that a local_lora run reads elsewhere
#: (AsyncSettings, env_failure_strategy, loss_fn_config_for, the gateway client) or that only
#: describe the run (success: the --success rule, applied through the reward overrides).
_SHARED_KEYS = frozenset({
    "max_staleness", "stale_rule", "min_group", "env_retries", "sample_timeout_s", "success",
    "clip_low_threshold", "clip_high_threshold", "dro_beta", "history_steps", "screenshots",
})
#: Keys other backends implement, accepted here only at the value that changes nothing.
_NEUTRAL = {"entropy_coef": 0.0, "update_epochs": 1, "eval_every": 0}


@dataclass(frozen=True)
class LocalLoraOptions:
    model_dir: str = ""
    serve_route: str = ""
    sampler: str = ""                    # "vllm" with a serve_route, else "local"
    device: str = ""                     # cuda when available, else cpu
    action_regex: str = ""
    layout_seeds: tuple[int, ...] = ()
    tis_cap: float | None = DEFAULT_TIS_CAP
    tis_mask_low: float | None = DEFAULT_TIS_MASK_LOW
    grad_clip_norm: float = DEFAULT_GRAD_CLIP_NORM
    micro_batch_tokens: int = DEFAULT_MICRO_BATCH_TOKENS
    gradient_checkpointing: bool = False
    fp32_logits: bool = True
    loss_agg: str = DEFAULT_LOSS_AGG
    loss_agg_norm: int = 0               # seq_mean_token_sum_norm's constant; 0: the run's max_tokens
    kl_penalty_coef: float = 0.0
    kl_discount_factor: float = 0.0
    remove_constant_reward_groups: bool = False
    normalize_std: bool = False

    @classmethod
    def from_extra(cls, extra: dict[str, Any]) -> "LocalLoraOptions":
        own = {f for f in cls.__dataclass_fields__}
        unknown = sorted(set(extra) - own - _SHARED_KEYS - set(_NEUTRAL))
        if unknown:
            raise InvalidArgument(f"the local_lora backend does not know extra.{', extra.'.join(unknown)} "
                                  f"(it reads: {', '.join(sorted(own | _SHARED_KEYS))})")
        for key, neutral in _NEUTRAL.items():
            if key in extra and _number(extra, key, neutral) != neutral:
                raise InvalidArgument(f"the local_lora backend does not implement extra.{key} (got {extra[key]!r}; "
                                      f"only {neutral!r} is accepted)")
        tis_cap = _number(extra, "tis_cap", DEFAULT_TIS_CAP)
        mask_low = _number(extra, "tis_mask_low", DEFAULT_TIS_MASK_LOW)
        if tis_cap < 0 or mask_low < 0:
            raise InvalidArgument(f"extra.tis_cap and extra.tis_mask_low must be >= 0 (0 turns each off), got {tis_cap}, {mask_low}")
        if tis_cap and mask_low and mask_low >= tis_cap:
            raise InvalidArgument(f"extra.tis_mask_low ({mask_low}) must be below extra.tis_cap ({tis_cap})")
        loss_agg = str(extra.get("loss_agg", DEFAULT_LOSS_AGG))
        if loss_agg not in LOSS_AGGREGATIONS:
            raise InvalidArgument(f"extra.loss_agg must be one of {', '.join(LOSS_AGGREGATIONS)}, got {loss_agg!r}")
        sampler = str(extra.get("sampler") or "")
        if sampler and sampler not in SAMPLERS:
            raise InvalidArgument(f"extra.sampler must be 'vllm' or 'local', got {sampler!r}")
        options = cls(
            model_dir=str(extra.get("model_dir") or ""), serve_route=str(extra.get("serve_route") or ""),
            sampler=sampler, device=str(extra.get("device") or ""), action_regex=str(extra.get("action_regex") or ""),
            layout_seeds=tuple(int(s) for s in extra.get("layout_seeds") or ()),
            tis_cap=tis_cap or None, tis_mask_low=mask_low or None,
            grad_clip_norm=_number(extra, "grad_clip_norm", DEFAULT_GRAD_CLIP_NORM, low=0.0),
            micro_batch_tokens=int(_number(extra, "micro_batch_tokens", DEFAULT_MICRO_BATCH_TOKENS, low=1)),
            gradient_checkpointing=_flag(extra, "gradient_checkpointing", False),
            fp32_logits=_flag(extra, "fp32_logits", True), loss_agg=loss_agg,
            loss_agg_norm=int(_number(extra, "loss_agg_norm", 0, low=0)),
            kl_penalty_coef=_number(extra, "kl_penalty_coef", 0.0, low=0.0),
            kl_discount_factor=_number(extra, "kl_discount_factor", 0.0, low=0.0),
            remove_constant_reward_groups=_flag(extra, "remove_constant_reward_groups", False),
            normalize_std=_flag(extra, "normalize_std", False),
        )
        if options.kl_discount_factor >= 1:
            raise InvalidArgument(f"extra.kl_discount_factor must be in [0, 1), got {options.kl_discount_factor}")
        return options


def _number(extra: dict[str, Any], key: str, default: float, low: float | None = None) -> float:
    value = extra.get(key, default)
    if isinstance(value, bool):
        raise InvalidArgument(f"extra.{key} must be a number, got {value!r}")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InvalidArgument(f"extra.{key} must be a number, got {value!r}") from None
    if not math.isfinite(number) or (low is not None and number < low):
        raise InvalidArgument(f"extra.{key} must be a finite number{f' >= {low:g}' if low is not None else ''}, got {value!r}")
    return number


def _flag(extra: dict[str, Any], key: str, default: bool) -> bool:
    value = extra.get(key, default)
    if not isinstance(value, bool):
        raise InvalidArgument(f"extra.{key} must be true or false, got {value!r}")
    return value
