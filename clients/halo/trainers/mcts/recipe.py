"""The MCTS trainer on the embedded policy (run kind "mcts", backend "embedded").

Training (`train_embedded`): each step searches `groups_per_batch` tasks with the run's current
policy, turns sibling actions with different composite Q into step-level preference pairs
(preferences.py) and takes DPO steps on the embedded policy's scoring head against a frozen
reference head (the run's initial weights). New weights go to the gateway as the run's adapter
and into the step's checkpoint (head.safetensors, the `qwen3vl_mcts` adapter of the embedded
backend), exactly like GRPO.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from halo.client.env import EnvClient
from halo.client.policy import PolicyClient
from halo.client.reward import RewardClient
from halo.embedded.policy import ScoringHead, head_from_bytes, head_to_bytes
from halo.rollout.episode import RolloutConfig
from halo.rollout.tasks import expand_tasks
from halo.runs.spec import RunSpec
from halo.trainers.embedded_learner import DEFAULT_LR, EmbeddedLearner
from halo.trainers.learner import GatewayRun, run_steps
from halo.trainers.mcts.learner import MCTSLearner, search_summary
from halo.trainers.mcts.search import MODE, config_from_spec, search_metrics
from halo.trainers.mcts.tree import MCTSConfig, SearchResult


class EmbeddedMCTSLearner(MCTSLearner):
    """DPO passes on the scoring head against the frozen reference head, the new head to the gateway."""

    def __init__(self, spec: RunSpec, run: GatewayRun, config: MCTSConfig, learner: EmbeddedLearner,
                 reference: ScoringHead) -> None:
        extra = spec.extra
        super().__init__(spec, run, config, float(extra.get("pair_margin", 0.05)))
        self.learner, self.reference, self.reference_bytes = learner, reference, head_to_bytes(reference)
        self.beta = float(extra.get("dpo_beta", 0.1))
        self.update_epochs = max(1, int(extra.get("update_epochs", 4)))

    async def learn(self, step: int, batch: list[SearchResult]) -> dict[str, float]:
        pairs = self.pairs(batch)
        update: dict[str, float] = {"pairs": float(len(pairs))}
        for _ in range(self.update_epochs):
            update |= await asyncio.to_thread(self.learner.dpo_update, pairs, self.reference, self.beta, self.spec.temperature)
        await self.publish(weights=self.learner.weights())
        return search_metrics(batch) | update

    def checkpoint(self, step: int, batch: list[SearchResult]):
        summary = search_summary(batch)

        def save(folder: Path) -> None:
            self.learner.save(folder)
            (folder / "reference.safetensors").write_bytes(self.reference_bytes)
            (folder / "adapter.json").write_text(json.dumps(
                {"mode": MODE, "backend": "embedded", "route": self.spec.model, "weights": "head.safetensors",
                 "reference": "reference.safetensors", "loss": "dpo", "dpo_beta": self.beta}, indent=2))
            (folder / "search.json").write_text(json.dumps(summary, indent=2))

        return save


async def train_embedded(ctx) -> None:
    """kind=mcts, backend=embedded: search -> step-level preference pairs -> DPO on the scoring head."""
    spec = ctx.spec
    extra = spec.extra
    lr = spec.learning_rate if spec.learning_rate > 1e-5 else DEFAULT_LR  # 1e-6 is LoRA's default, not the head's
    learner = await asyncio.to_thread(EmbeddedLearner, lr, spec.seed)
    reference: ScoringHead
    if ctx.last_checkpoint is not None:
        learner.load(ctx.last_checkpoint)
        reference = head_from_bytes((ctx.last_checkpoint / "reference.safetensors").read_bytes())
    else:
        reference = head_from_bytes(learner.weights())  # frozen: the run's initial policy
    config = config_from_spec(spec, ctx.run_id)
    services = ctx.services
    async with EnvClient(services.env, token=services.token, tls_ca=services.tls_ca) as env, \
            RewardClient(services.reward, token=services.token, tls_ca=services.tls_ca) as reward, \
            PolicyClient(services.gateway, token=services.token, tls_ca=services.tls_ca) as gateway:
        rollout_config = RolloutConfig(max_steps=config.max_depth, screenshots=False,
                                       reward_overrides=spec.reward_overrides, run_id=ctx.run_id)
        run = GatewayRun(env, reward, gateway, spec.model, f"run-{ctx.run_id}", await expand_tasks(env, spec.task_ids),
                         spec.eval_seeds(), rollout_config,
                         max(1, int(extra.get("concurrency", spec.groups_per_batch))))
        mcts = EmbeddedMCTSLearner(spec, run, config, learner, reference)
        await mcts.publish(weights=learner.weights())
        ctx.log(f"MCTS: {config.simulations} simulations, K={config.children}, c={config.ucb_c}, alpha={config.alpha}, "
                f"depth {config.max_depth}; critic route {config.critic_model!r}; DPO beta={mcts.beta}")
        await run_steps(ctx, mcts, int(extra.get("eval_every", 0)))
