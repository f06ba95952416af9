"""Trainer-side updates of the embedded policy: PyTorch on CPU, weights pushed to the gateway.

The gateway samples with its copy of the scoring head; the learner recomputes each chosen
action's log-probability under its own copy from the same features (same candidate enumeration,
same frozen encoder) and takes policy-gradient steps with the chosen RL loss. New weights go
back to the gateway with LoadAdapter, exactly as a LoRA adapter would go to vLLM.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import torch

from halo.embedded.policy import EmbeddedPolicy, ScoringHead, SentenceEncoder, head_from_bytes, head_to_bytes, shared_encoder
from halo.rollout.episode import Episode
from halo.trainers.dpo import dpo_loss

DEFAULT_LR = 3e-3  # the head is tiny and starts near uniform: LoRA's 1e-6 would not move it


@dataclass
class LossConfig:
    loss_fn: str = "importance_sampling"
    clip_eps: float = 0.2         # ppo / cispo ratio clip
    dro_beta: float = 0.05        # dro: quadratic penalty on the log-ratio
    temperature: float = 0.7      # the sampling temperature the logprobs were taken at
    entropy_coef: float = 0.0


class EmbeddedLearner:
    def __init__(self, learning_rate: float, seed: int = 0, encoder: SentenceEncoder | None = None,
                 relevance_prior: float = 0.0) -> None:
        self.policy = EmbeddedPolicy(encoder or shared_encoder())
        self.head = ScoringHead(seed=seed, relevance_prior=relevance_prior)
        self.optimizer = torch.optim.Adam(self.head.parameters(), lr=learning_rate)
        self.updates = 0

    # --- weights --------------------------------------------------------------------------

    def weights(self) -> bytes:
        return head_to_bytes(self.head)

    def save(self, folder: Path) -> None:
        (folder / "head.safetensors").write_bytes(self.weights())
        torch.save(self.optimizer.state_dict(), folder / "optimizer.pt")
        (folder / "learner.json").write_text(json.dumps({"updates": self.updates}))

    def load(self, folder: Path) -> None:
        self.head.load_state_dict(head_from_bytes((folder / "head.safetensors").read_bytes()).state_dict())
        self.optimizer.load_state_dict(torch.load(folder / "optimizer.pt", weights_only=True))
        self.updates = json.loads((folder / "learner.json").read_text())["updates"]

    # --- update -----------------------------------------------------------------------------

    def update(self, episodes: list[Episode], advantages: list[float], loss: LossConfig) -> dict[str, float]:
        """One gradient step over every (observation, chosen action) of the episodes.

        Every action of episode i gets its advantage A_i (dr_grpo: no per-step credit, constant
        normalisation by the number of actions in the batch).
        """
        terms, ratios, entropies = [], [], []
        self.head.train()
        for episode, advantage in zip(episodes, advantages, strict=True):
            if advantage == 0.0:
                continue
            for t in episode.transitions:
                index = t.decision.extras.get("index")
                if index is None:
                    continue  # unparseable output: nothing to reinforce
                features = self.policy.featurize(t.context)
                if index >= len(features.candidates) or features.candidates[index].action != t.decision.action:
                    raise RuntimeError("candidate enumeration differs between gateway and learner")
                logp_all = EmbeddedPolicy.log_probs(self.head, features.tensor, loss.temperature)
                log_ratio = logp_all[index] - t.decision.logprob
                ratio = log_ratio.exp()
                a = torch.tensor(advantage)
                if loss.loss_fn == "ppo":
                    term = -torch.min(ratio * a, ratio.clamp(1 - loss.clip_eps, 1 + loss.clip_eps) * a)
                elif loss.loss_fn == "cispo":  # clipped IS weight, gradient through log pi only
                    term = -(ratio.clamp(1 - loss.clip_eps, 1 + loss.clip_eps).detach() * a * logp_all[index])
                elif loss.loss_fn == "dro":
                    term = -(logp_all[index] * a) + loss.dro_beta / 2 * log_ratio**2
                else:  # importance_sampling (Tinker's default): -(pi/q) * A
                    term = -(ratio * a)
                entropy = -(logp_all.exp() * logp_all).sum()
                terms.append(term - loss.entropy_coef * entropy)
                ratios.append(float(ratio.detach()))
                entropies.append(float(entropy.detach()))
        if not terms:
            return {"loss": 0.0, "actions_trained": 0.0}
        total = torch.stack(terms).mean()
        self.optimizer.zero_grad()
        total.backward()
        grad_norm = float(torch.nn.utils.clip_grad_norm_(self.head.parameters(), 5.0))
        self.optimizer.step()
        self.head.eval()
        self.updates += 1
        return {
            "loss": float(total.detach()), "grad_norm": grad_norm, "actions_trained": float(len(terms)),
            "mean_ratio": sum(ratios) / len(ratios), "policy_entropy": sum(entropies) / len(entropies),
        }

    def dpo_update(self, pairs, reference: ScoringHead, beta: float = 0.1, temperature: float = 1.0) -> dict[str, float]:
        """One DPO step over step-level preference pairs (halo.trainers.mcts.preferences.PreferencePair:
        context, chosen, rejected) against a frozen reference head (MCTS / Agent Q)."""
        chosen, rejected, ref_chosen, ref_rejected = [], [], [], []
        skipped = 0
        by_state: dict[int, tuple] = {}   # pairs of one node share one featurization
        self.head.train()
        for pair in pairs:
            key = id(pair.context)
            if key not in by_state:
                features = self.policy.featurize(pair.context)
                with torch.no_grad():
                    ref = EmbeddedPolicy.log_probs(reference, features.tensor, temperature)
                index = {c.action: i for i, c in enumerate(features.candidates)}
                by_state[key] = (EmbeddedPolicy.log_probs(self.head, features.tensor, temperature), ref, index)
            logp, ref, index = by_state[key]
            if pair.chosen not in index or pair.rejected not in index:
                skipped += 1   # not candidates of the embedded policy (another backend's actions)
                continue
            c, r = index[pair.chosen], index[pair.rejected]
            chosen.append(logp[c]), rejected.append(logp[r]), ref_chosen.append(ref[c]), ref_rejected.append(ref[r])
        if not chosen:
            self.head.eval()
            return {"dpo_loss": 0.0, "pairs_trained": 0.0, "pairs_skipped": float(skipped)}
        loss, metrics = dpo_loss(torch.stack(chosen), torch.stack(rejected), torch.stack(ref_chosen),
                                 torch.stack(ref_rejected), beta)
        self.optimizer.zero_grad()
        loss.backward()
        grad_norm = float(torch.nn.utils.clip_grad_norm_(self.head.parameters(), 5.0))
        self.optimizer.step()
        self.head.eval()
        self.updates += 1
        return metrics | {"grad_norm": grad_norm, "pairs_trained": float(len(chosen)), "pairs_skipped": float(skipped)}
