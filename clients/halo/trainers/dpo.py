"""DPO (Rafailov et al. 2023) on step-level preference pairs, in torch (the embedded learner's loss).

    L = −log σ(β · [(log π(c|s) − log π_ref(c|s)) − (log π(r|s) − log π_ref(r|s))])
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def dpo_loss(chosen: torch.Tensor, rejected: torch.Tensor, ref_chosen: torch.Tensor,
             ref_rejected: torch.Tensor, beta: float) -> tuple[torch.Tensor, dict[str, float]]:
    """Mean DPO loss over pairs (1-D tensors of log-probabilities) and its usual metrics."""
    chosen_ratio = chosen - ref_chosen
    rejected_ratio = rejected - ref_rejected
    logits = beta * (chosen_ratio - rejected_ratio)
    loss = -F.logsigmoid(logits).mean()
    return loss, {
        "dpo_loss": float(loss.detach()),
        "dpo_accuracy": float((chosen_ratio > rejected_ratio).float().mean()),
        "dpo_margin": float(logits.detach().mean()),
        "chosen_reward": float(beta * chosen_ratio.detach().mean()),
        "rejected_reward": float(beta * rejected_ratio.detach().mean()),
    }
