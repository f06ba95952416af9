"""An evaluation as a trainer-service job (RunSpec kind "eval"): `halo eval --submit HOST:PORT`.

The run's spec carries the mode (`spec.mode`), the tasks (`task_ids`), `max_steps`, `temperature`
and, in `extra`: seeds, workers, route, adapter_path, weights, screenshots. The eval is written
under the run's folder (`runs/<run_id>/eval/`: the same layout as `evals/<eval_id>/`). An eval run
is one step: it completes when every episode is saved, with the summary as the step's metrics
(success_rate, per-site success_rate/<site>, episode_length, action_validity, mean_reward,
env_failures). A stop lets the running episodes finish; resuming the run (or a restart of the
trainer service) skips the episodes already saved.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from halo.evaluation.harness import run_eval
from halo.evaluation.modes import MODES, resolve_mode
from halo.evaluation.records import EvalSpec
from halo.evaluation.store import EvalStore
from halo.evaluation.summary import ALL, site_rows
from halo.runs.context import RunContext
from halo.runs.spec import RunSpec

EVAL_ID = "eval"


def check_spec(spec: RunSpec) -> None:
    if spec.mode not in MODES:
        raise ValueError(f"eval runs need a mode, one of {', '.join(MODES)} (got {spec.mode!r})")
    if spec.total_steps != 1:
        raise ValueError(f"an eval run is one step: set total_steps=1 (got {spec.total_steps})")


def eval_run_spec(mode: str, tasks: list[str], *, seeds: list[int], workers: int, max_steps: int, temperature: float,
                  route: str = "", adapter_path: str | None = None, weights: str = "", screenshots: bool = True,
                  name: str = "") -> RunSpec:
    extra: dict[str, Any] = {"seeds": seeds, "workers": workers, "route": route, "weights": weights, "screenshots": screenshots}
    if adapter_path is not None:
        extra["adapter_path"] = adapter_path
    return RunSpec(name=name, kind="eval", backend="embedded", mode=mode, model=route or mode, task_ids=tasks, total_steps=1,
                   max_steps=max_steps, temperature=temperature, extra=extra)


def summary_metrics(episodes: list[dict[str, Any]]) -> dict[str, float]:
    out: dict[str, float] = {}
    for r in site_rows(episodes):
        if r.name == ALL:
            out |= {"success_rate": r.success_rate, "success_rate_strict": r.success_rate_strict, "episodes": float(r.episodes), "episode_length": r.mean_steps,
                    "action_validity": r.validity, "mean_reward": r.mean_return, "env_failures": float(r.env_failures)}
        else:
            out[f"success_rate/{r.name}"] = r.success_rate
    return {k: v for k, v in out.items() if not math.isnan(v)}


async def run_eval_job(ctx: RunContext) -> None:
    spec, extra = ctx.spec, ctx.spec.extra
    store = EvalStore(ctx.run_dir)
    if store.exists(EVAL_ID):
        eval_spec = store.load_spec(EVAL_ID)
        ctx.log(f"resuming the eval: {len(store.completed(EVAL_ID))} episodes already saved")
    else:
        resolved = resolve_mode(spec.mode, route=str(extra.get("route", "")), adapter_path=extra.get("adapter_path"),
                                weights=str(extra.get("weights", "")))
        eval_spec = EvalSpec(
            eval_id=EVAL_ID, mode=spec.mode, route=resolved.route, adapter=resolved.adapter, adapter_path=resolved.adapter_path,
            weights=resolved.weights, tasks=list(spec.task_ids), seeds=[int(s) for s in extra.get("seeds", [0])],
            max_steps=spec.max_steps, workers=int(extra.get("workers", 4)), temperature=spec.temperature,
            screenshots=bool(extra.get("screenshots", True)), reward_overrides=dict(spec.reward_overrides),
        )

    def on_event(kind: str, payload: dict[str, Any]) -> None:
        if kind == "episode":
            state = "env failure" if payload["env_failure"] else "success" if payload["success"] else "failure"
            ctx.log(f"{payload['task_id']} seed {payload['seed']}: {state} in {payload['length']} steps")
        elif kind == "planned":
            ctx.log(f"{payload['pending']} episodes to run ({payload['done']} of {payload['total']} saved)")

    outcome = await run_eval(eval_spec, store, targets=ctx.services, on_event=on_event, stop=ctx.stop_requested)
    if ctx.stop_requested():
        return   # stopped: the run resumes from the saved episodes
    metrics = summary_metrics(outcome.episodes)
    folder = store.eval_dir(EVAL_ID)

    def save(checkpoint: Path) -> None:
        (checkpoint / "summary.json").write_text(json.dumps({"eval_dir": str(folder), "metrics": metrics}, indent=2))

    await ctx.complete_step(1, metrics, save)
    ctx.log(f"report: {folder / 'report.md'} · viewer: {folder / 'index.html'}")
