"""Step-level preferences from an MCTS tree, and the DPO loss that learns from them (Agent Q).

At every node where the search tried at least two actions, the action with the highest
composite Q (`α·Q_mcts + (1−α)·Q_critic`) is preferred over each sibling whose Q is lower by at
least `margin`: both come from the same state (the node's PolicyContext), so a pair says "from
here, this action rather than that one" — process supervision, not a whole-trajectory label.

DPO (Rafailov et al. 2023) on a pair (c, r) at state s, against a frozen reference policy:

    L = −log σ(β · [(log π(c|s) − log π_ref(c|s)) − (log π(r|s) − log π_ref(r|s))])

The embedded backend computes it locally (EmbeddedLearner.dpo_update). For Tinker, the same
pairs become tinker-cookbook `LabeledComparison`s (`labeled_comparisons`): the shared prompt is
the policy's own prompt for the state, the completions are the two actions written in the
route's action syntax, ready for `tinker_cookbook.preference.dpo_datasets` /
`preference.train_dpo` (whose `compute_dpo_loss` is this same formula over token sums).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from halo.agent import actions as A
from halo.agent.context import PolicyContext

if TYPE_CHECKING:
    import torch

    from halo.trainers.mcts.search import SearchResult


@dataclass(frozen=True)
class PreferencePair:
    task_id: str
    node_id: int                # the shared state: one tree node
    depth: int
    context: PolicyContext      # what the policy saw there
    chosen: A.Action
    rejected: A.Action
    q_chosen: float             # composite Q
    q_rejected: float
    chosen_text: str = ""
    rejected_text: str = ""
    visits_chosen: int = 0
    visits_rejected: int = 0

    @property
    def gap(self) -> float:
        return self.q_chosen - self.q_rejected


def preference_pairs(result: "SearchResult", margin: float = 0.05, min_visits: int = 1,
                     all_pairs: bool = False) -> list[PreferencePair]:
    """Pairs of sibling actions from a search tree (best vs. each clearly worse sibling; every
    ordered pair with `all_pairs`). Only tried actions count: an untried one has no Q_mcts."""
    from halo.trainers.mcts.search import iter_nodes

    if result.root is None or result.env_failure:
        return []
    alpha = result.config.alpha
    out: list[PreferencePair] = []
    for node in iter_nodes(result.root):
        tried = sorted((e for e in node.edges if e.visits >= min_visits and e.child is not None),
                       key=lambda e: (e.q(alpha), e.visits), reverse=True)
        if len(tried) < 2:
            continue
        heads = tried if all_pairs else tried[:1]
        for i, best in enumerate(heads):
            for other in tried[i + 1:]:
                if best.q(alpha) - other.q(alpha) < margin or best.action == other.action:
                    continue
                out.append(PreferencePair(
                    result.task_id, node.id, node.depth, node.context, best.action, other.action,
                    best.q(alpha), other.q(alpha), best.text, other.text, best.visits, other.visits,
                ))
    return out


def dpo_loss(chosen: "torch.Tensor", rejected: "torch.Tensor", ref_chosen: "torch.Tensor",
             ref_rejected: "torch.Tensor", beta: float) -> tuple["torch.Tensor", dict[str, float]]:
    """Mean DPO loss over pairs (1-D tensors of log-probabilities) and its usual metrics."""
    import torch.nn.functional as F

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


def labeled_comparisons(pairs: Sequence[PreferencePair], action_format: Any = None,
                        prompt_options: Any = None) -> list[Any]:
    """The pairs as tinker-cookbook `LabeledComparison`s (label "A" = chosen) for its DPO trainer.

    The prompt conversation is the policy's own prompt for the state (halo.agent.prompt, with the
    screenshot as an image part); each completion is one assistant message holding the action in
    the route's syntax (Qwen3-VL computer_use by default). Offline: no tokenizer is needed here.
    """
    from tinker_cookbook.preference.types import Comparison, LabeledComparison

    from halo.agent.formats import ActionFormat, format_action
    from halo.agent.prompt import PromptOptions, build_prompt

    fmt = action_format or ActionFormat.QWEN_COMPUTER_USE
    options = prompt_options or PromptOptions(action_format=fmt)
    out = []
    for pair in pairs:
        page = pair.context.page
        prompt = build_prompt(pair.context, options).to_renderer_messages()

        def completion(action: A.Action) -> list[dict]:
            return [{"role": "assistant", "content": format_action(action, fmt, page.width, page.height)}]

        out.append(LabeledComparison(Comparison(prompt, completion(pair.chosen), completion(pair.rejected)), "A"))
    return out
