"""The MCTS step both backends share: one tree search per task of the step's batch, then pairs.

`MCTSLearner.collect` searches the batch (the same (task, seed) after a resume, at most
`concurrency` trees at once, each step's searches seeded apart); the embedded and the Tinker
trainer (`recipe.EmbeddedMCTSLearner`, `tinker.TinkerMCTSLearner`) only differ in how they learn
from the preference pairs and what their checkpoint holds.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
from typing import Any

from halo.runs.spec import RunSpec
from halo.trainers.learner import GatewayLearner, GatewayRun
from halo.trainers.mcts.preferences import PreferencePair, preference_pairs
from halo.trainers.mcts.search import search
from halo.trainers.mcts.tree import MCTSConfig, SearchResult


class MCTSLearner(GatewayLearner[list[SearchResult]]):
    def __init__(self, spec: RunSpec, run: GatewayRun, config: MCTSConfig, margin: float) -> None:
        super().__init__(run)
        self.spec, self.config, self.margin = spec, config, margin
        self.limit = asyncio.Semaphore(run.concurrency)

    async def collect(self, step: int) -> list[SearchResult]:
        spec, run = self.spec, self.run
        rng = random.Random(f"{spec.seed}:{step}")  # the batch of a step is the same after a resume
        batch = [(rng.choice(run.tasks), rng.randrange(1_000)) for _ in range(spec.groups_per_batch)]
        step_config = dataclasses.replace(self.config, seed=self.config.seed * 1_000_003 + step)

        async def one(task_id: str, seed: int) -> SearchResult:
            async with self.limit:
                return await search(run.env, run.reward, run.gateway, run.route, run.adapter, task_id, seed, step_config)

        return list(await asyncio.gather(*(one(t, s) for t, s in batch)))

    def pairs(self, results: list[SearchResult]) -> list[PreferencePair]:
        """Step-level preference pairs of the searches the environment did not fail."""
        return [p for r in results if not r.env_failure for p in preference_pairs(r, margin=self.margin)]


def search_summary(results: list[SearchResult]) -> list[dict[str, Any]]:
    """search.json of a checkpoint: what each search of the step found."""
    return [{"task_id": r.task_id, "seed": r.seed, "success": r.success, "success_strict": r.success_strict, "found": r.found,
             "env_failure": r.env_failure, "critic_route": r.critic_route,
             "stats": r.stats.as_dict(), "best_path": r.describe_best_path()} for r in results]
