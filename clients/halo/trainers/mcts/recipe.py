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
import dataclasses
import json
import random
import time
from pathlib import Path

from halo.client.env import EnvClient
from halo.client.policy import PolicyClient
from halo.client.reward import RewardClient
from halo.embedded.policy import ScoringHead, head_from_bytes, head_to_bytes
from halo.rollout.episode import RolloutConfig
from halo.rollout.tasks import expand_tasks
from halo.trainers.embedded_learner import DEFAULT_LR, EmbeddedLearner
from halo.trainers.grpo import evaluate_greedy
from halo.trainers.mcts.preferences import preference_pairs
from halo.trainers.mcts.search import MODE, config_from_spec, search, search_metrics
from halo.trainers.mcts.tree import SearchResult


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
    reference_bytes = head_to_bytes(reference)
    config = config_from_spec(spec, ctx.run_id)
    beta = float(extra.get("dpo_beta", 0.1))
    margin = float(extra.get("pair_margin", 0.05))
    update_epochs = max(1, int(extra.get("update_epochs", 4)))
    concurrency = max(1, int(extra.get("concurrency", spec.groups_per_batch)))
    eval_every = int(extra.get("eval_every", 0))
    eval_seeds = [int(s) for s in extra.get("eval_seeds", [1001, 1002])]
    adapter = f"run-{ctx.run_id}"
    services = ctx.services
    async with EnvClient(services.env, token=services.token, tls_ca=services.tls_ca) as env, \
            RewardClient(services.reward, token=services.token, tls_ca=services.tls_ca) as reward, \
            PolicyClient(services.gateway, token=services.token, tls_ca=services.tls_ca) as gateway:
        tasks = await expand_tasks(env, spec.task_ids)
        await gateway.load_adapter(spec.model, adapter, weights=learner.weights())
        rollout_config = RolloutConfig(max_steps=config.max_depth, screenshots=False,
                                       reward_overrides=spec.reward_overrides, run_id=ctx.run_id)
        ctx.log(f"MCTS: {config.simulations} simulations, K={config.children}, c={config.ucb_c}, alpha={config.alpha}, "
                f"depth {config.max_depth}; critic route {config.critic_model!r}; DPO beta={beta}")
        baseline: dict[str, float] = {}
        if eval_every and ctx.start_step == 0:
            baseline["eval_success_rate_untrained"] = await evaluate_greedy(
                env, reward, gateway, spec.model, adapter, tasks, eval_seeds, rollout_config, concurrency)
        limit = asyncio.Semaphore(concurrency)
        try:
            for step in range(ctx.start_step + 1, spec.total_steps + 1):
                if ctx.stop_requested():
                    return
                started = time.perf_counter()
                rng = random.Random(f"{spec.seed}:{step}")  # the batch of a step is the same after a resume
                batch = [(rng.choice(tasks), rng.randrange(1_000)) for _ in range(spec.groups_per_batch)]

                async def one(task_id: str, seed: int) -> SearchResult:
                    async with limit:
                        step_config = dataclasses.replace(config, seed=config.seed * 1_000_003 + step)
                        return await search(env, reward, gateway, spec.model, adapter, task_id, seed, step_config)

                results = await asyncio.gather(*(one(t, s) for t, s in batch))
                pairs = [p for r in results if not r.env_failure for p in preference_pairs(r, margin=margin)]
                update: dict[str, float] = {"pairs": float(len(pairs))}
                for _ in range(update_epochs):
                    update |= await asyncio.to_thread(learner.dpo_update, pairs, reference, beta, spec.temperature)
                await gateway.load_adapter(spec.model, adapter, weights=learner.weights())
                metrics = search_metrics(results) | update
                if eval_every and (step % eval_every == 0 or step == spec.total_steps):
                    metrics["eval_success_rate"] = await evaluate_greedy(
                        env, reward, gateway, spec.model, adapter, tasks, eval_seeds, rollout_config, concurrency)
                metrics |= {"step_s": time.perf_counter() - started} | baseline
                baseline = {}
                summary = [{"task_id": r.task_id, "seed": r.seed, "success": r.success, "found": r.found,
                            "env_failure": r.env_failure, "critic_route": r.critic_route,
                            "stats": r.stats.as_dict(), "best_path": r.describe_best_path()} for r in results]

                def save(folder: Path, summary=summary) -> None:
                    learner.save(folder)
                    (folder / "reference.safetensors").write_bytes(reference_bytes)
                    (folder / "adapter.json").write_text(json.dumps(
                        {"mode": MODE, "backend": "embedded", "route": spec.model, "weights": "head.safetensors",
                         "reference": "reference.safetensors", "loss": "dpo", "dpo_beta": beta}, indent=2))
                    (folder / "search.json").write_text(json.dumps(summary, indent=2))

                await ctx.complete_step(step, metrics, save)
        finally:
            try:
                await gateway.unload_adapter(spec.model, adapter)
            except Exception:
                pass  # the gateway may be gone; its adapters die with it
