"""Group-relative advantages and the per-step training metrics of GRPO."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass


def group_advantages(returns: Sequence[float], normalize_std: bool = False, eps: float = 1e-6) -> list[float]:
    """dr_grpo: A_i = r_i - mean(r); optionally divided by the group's std (classic GRPO)."""
    if not returns:
        return []
    mean = statistics.fmean(returns)
    centred = [r - mean for r in returns]
    if not normalize_std:
        return centred
    std = statistics.pstdev(returns)
    return [a / (std + eps) for a in centred]


@dataclass(frozen=True)
class EpisodeSummary:
    """What the metrics need of one finished episode."""

    ret: float
    success: bool
    length: int
    valid_actions: int
    tokens: int
    env_failure: bool
    success_strict: bool = False   # agisdk AND HALO's strict checks


def step_metrics(groups: Sequence[Sequence[EpisodeSummary]]) -> dict[str, float]:
    """mean_reward, reward_std, frac_reward_zero_std, success_rate (agisdk), success_rate_strict, action_validity, episode_length,
    tokens, env_failures — over the episodes kept for learning (env failures are counted, not used)."""
    kept = [e for g in groups for e in g if not e.env_failure]
    failures = sum(e.env_failure for g in groups for e in g)
    zero_std = [len(set(round(e.ret, 9) for e in g if not e.env_failure)) <= 1 for g in groups if any(not e.env_failure for e in g)]
    returns = [e.ret for e in kept]
    steps = sum(e.length for e in kept)
    return {
        "mean_reward": statistics.fmean(returns) if returns else 0.0,
        "reward_std": statistics.pstdev(returns) if len(returns) > 1 else 0.0,
        "frac_reward_zero_std": (sum(zero_std) / len(zero_std)) if zero_std else 1.0,
        "success_rate": (sum(e.success for e in kept) / len(kept)) if kept else 0.0,
        "success_rate_strict": (sum(e.success_strict for e in kept) / len(kept)) if kept else 0.0,
        "action_validity": (sum(e.valid_actions for e in kept) / steps) if steps else 0.0,
        "episode_length": (steps / len(kept)) if kept else 0.0,
        "tokens": float(sum(e.tokens for e in kept)),
        "episodes": float(len(kept)),
        "env_failures": float(failures),
    }
