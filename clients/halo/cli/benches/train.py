"""`halo bench train`: the same GRPO run synchronous (K=0) and asynchronous (K=1, 2), in one run.

Each K trains the embedded policy from the same seed on the same tasks, with `halo train`'s
defaults for the embedded backend (ppo over 4 epochs, lr 2e-2, entropy 0.01, novelty 0.05) and
the same number of steps, so every K sees the same number of episodes. The sites server, env,
reward and gateway services run in this process (real Chromium). Per K it prints steps/hour,
the learner's idle share (waiting for rollouts), the rollouts' idle share (no step rolling out:
browsers and sampler idle) and the success curve (sampled success per step, and the greedy
greedy success on the evaluation seeds at the end), so a reader sees the speed-up and whether learning suffered.
A benchmark, not a test: nothing here asserts a speed.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from halo.cli.benches.rollout import report


@dataclass
class TrainRow:
    max_staleness: int
    steps: int
    wall_s: float
    steps_per_hour: float
    learner_idle_share: float
    rollout_idle_share: float
    mean_staleness: float
    stale_dropped: int
    success: list[float]            # sampled success rate per step
    eval_success: float             # greedy, evaluation seeds, after the last step (agisdk's verdict)
    eval_success_strict: float = 0.0   # the same under strict success (docs/reference/graders.md)


def _row(k: int, rows: list[dict], wall_s: float) -> TrainRow:
    total = sum(float(r["step_s"]) for r in rows) or wall_s
    return TrainRow(
        max_staleness=k, steps=len(rows), wall_s=wall_s, steps_per_hour=3600 * len(rows) / total,
        learner_idle_share=sum(float(r["async/learner_idle_s"]) for r in rows) / total,
        rollout_idle_share=sum(float(r["async/rollout_idle_s"]) for r in rows) / total,
        mean_staleness=sum(float(r["async/mean_staleness"]) for r in rows) / max(1, len(rows)),
        stale_dropped=int(sum(float(r["async/stale_dropped"]) for r in rows)),
        success=[round(float(r["success_rate"]), 2) for r in rows],
        eval_success=float(rows[-1].get("eval_success_rate", 0.0)) if rows else 0.0,
        eval_success_strict=float(rows[-1].get("eval_success_rate_strict", 0.0)) if rows else 0.0,
    )


def table(rows: list[TrainRow]) -> str:
    base = rows[0].steps_per_hour if rows and rows[0].max_staleness == 0 else 0.0
    lines = ["| K | steps | steps/hour | vs K=0 | learner idle | rollout idle | mean staleness | stale dropped | "
             "sampled success per step | greedy at the end, evaluation seeds (agisdk / strict) |", "|" + "---|" * 10]
    for r in rows:
        speedup = f"{r.steps_per_hour / base:.2f}x" if base else "-"
        curve = " ".join(f"{s:.0%}" for s in r.success)
        lines.append(f"| {r.max_staleness} | {r.steps} | {r.steps_per_hour:.0f} | {speedup} | {r.learner_idle_share:.0%} | "
                     f"{r.rollout_idle_share:.0%} | {r.mean_staleness:.2f} | {r.stale_dropped} | {curve} | {r.eval_success:.0%} / {r.eval_success_strict:.0%} |")
    return "\n".join(lines)


async def run_train_bench(steps: int = 8, staleness: str = "0,1,2", tasks: str = "", group_size: int = 8,
                          groups_per_batch: int = 4, max_steps: int = 5, seed: int = 0, json_path: str = "") -> int:
    from halo.cli.registry import resolve_trainer
    from halo.cli.stack import LocalStack
    from halo.cli.train import EASY_TASKS, EMBEDDED_DEFAULTS
    from halo.runs.context import ServiceTargets
    from halo.runs.spec import RunSpec
    from halo.trainer.jobs import JobManager
    from halo.trainer.store import RunState

    ks = [int(k) for k in staleness.split(",") if k.strip()]
    work = Path(tempfile.mkdtemp(prefix="halo-bench-train-"))
    task_ids = [t for t in (tasks or ",".join(EASY_TASKS)).split(",") if t]
    results: list[TrainRow] = []
    async with LocalStack(env_overrides={"pool_size": group_size, "acquire_timeout_s": 120}, with_reward=True,
                          with_gateway=True) as stack:
        targets = ServiceTargets(stack.env_target, stack.reward_target, stack.gateway_target)
        for k in ks:
            spec = RunSpec(name=f"bench-train-k{k}", task_ids=task_ids, total_steps=steps, group_size=group_size,
                           groups_per_batch=groups_per_batch, max_steps=max_steps, learning_rate=EMBEDDED_DEFAULTS["lr"],
                           temperature=1.0, loss_fn=EMBEDDED_DEFAULTS["loss_fn"], seed=seed,
                           reward_overrides=EMBEDDED_DEFAULTS["reward_overrides"],
                           extra={"update_epochs": EMBEDDED_DEFAULTS["update_epochs"], "entropy_coef": EMBEDDED_DEFAULTS["entropy_coef"],
                                  "eval_every": steps, "max_staleness": k})
            print(f"bench train: {steps} embedded GRPO steps with --max-staleness {k} ...", flush=True)
            jobs = JobManager(work / f"runs-k{k}", targets, resolve_trainer, auto_resume=False)
            started = time.perf_counter()
            record = await jobs.start_run(spec)
            async for event in jobs.watch(record.run_id):
                if event.get("type") == "metrics":
                    v = event["values"]
                    print(f"  K={k} step {event['step']}: {v['step_s']:.1f} s, success {v['success_rate']:.0%}, "
                          f"learner idle {v['async/learner_idle_s']:.1f} s", flush=True)
            done = jobs.get(record.run_id)
            if done.state is not RunState.SUCCEEDED:
                raise RuntimeError(f"the K={k} run failed: {done.error}")
            results.append(_row(k, jobs.store.metrics(record.run_id), time.perf_counter() - started))
    report(f"embedded GRPO, {','.join(task_ids)}, {groups_per_batch} groups x {group_size} episodes x <= {max_steps} "
           f"actions, {steps} steps, seed {seed}", table(results), results, json_path)
    return 0
