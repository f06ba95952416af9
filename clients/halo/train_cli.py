"""`halo train`: run a training job locally (services started in this process) or on a trainer service.

Locally it hosts the run with the same job machinery as the trainer service (durable run folder,
checkpoints, resume), shows a progress bar with the latest metrics, and writes at the end:
    runs/<run_id>/metrics.jsonl   one line per step
    runs/<run_id>/curves.png      reward and success curves
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from halo.trainers.spec import RunSpec

console = Console()


def _describe(values: dict[str, float]) -> str:
    keys = ("mean_reward", "success_rate", "eval_success_rate", "frac_reward_zero_std", "action_validity")
    return "  ".join(f"{k}={values[k]:.2f}" for k in keys if k in values)


async def _follow(events, total: int) -> str:
    """Render a run's event stream as a progress bar; returns the final state message."""
    final = ""
    with Progress(
        TextColumn("[bold]training[/bold]"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        TextColumn("{task.description}"), console=console,
    ) as progress:
        bar = progress.add_task("", total=total)
        async for kind, payload in events:
            if kind == "metrics":
                progress.update(bar, completed=payload["step"], description=_describe(payload["values"]))
                console.log(f"step {payload['step']}: {_describe(payload['values'])}")
            elif kind == "state":
                final = f"{payload['state']}: {payload['message']}"
                if payload["state"] == "running" and "resuming" in payload["message"]:
                    console.log(payload["message"])
            elif kind == "log":
                console.log(payload["message"])
    return final


def _summary(rows: list[dict[str, float]]) -> None:
    """Before/after: did it learn?"""
    if not rows:
        return
    first, last = rows[0], rows[-1]
    console.print(f"training success rate (sampled): step 1 {first.get('success_rate', 0):.0%} -> step {last['step']} {last.get('success_rate', 0):.0%}")
    if "eval_success_rate_untrained" in first:
        evals = [r for r in rows if "eval_success_rate" in r]
        after = evals[-1]["eval_success_rate"] if evals else float("nan")
        console.print(f"held-out greedy success: untrained {first['eval_success_rate_untrained']:.0%} -> trained {after:.0%}")


def gateway_routes(spec: RunSpec) -> list[str]:
    """The gateway routes a local run needs: the embedded policy, plus the Tinker route that
    MCTS on Tinker searches with (configs/gateway.yaml; it refuses calls without TINKER_API_KEY)."""
    if spec.kind == "mcts" and spec.backend == "tinker":
        from halo.trainers.mcts_tinker import route_for

        return list(dict.fromkeys(["embedded", route_for(spec)]))
    return ["embedded"]


async def train_local(spec: RunSpec, runs_dir: Path, resume: str = "") -> int:
    from halo.runtime.local import LocalStack
    from halo.runtime.logging import configure_logging
    from halo.trainer.jobs import JobManager
    from halo.trainers.context import ServiceTargets
    from halo.trainers.plots import plot_curves
    from halo.trainers.registry import resolve_trainer

    configure_logging("warning")  # the progress bar is the output; services only speak up when something is wrong
    with console.status("starting sites, env, reward and gateway services (Chromium)…"):
        stack = await LocalStack(
            env_overrides={"pool_size": max(8, spec.group_size), "acquire_timeout_s": 60},
            with_reward=True, with_gateway=True, gateway_overrides={"only_routes": gateway_routes(spec)},
        ).__aenter__()
    try:
        targets = ServiceTargets(env=stack.env_target, reward=stack.reward_target, gateway=stack.gateway_target)
        jobs = JobManager(runs_dir, targets, resolve_trainer, auto_resume=False)
        record = await (jobs.resume(resume) if resume else jobs.start_run(spec))
        console.print(f"run [bold]{record.run_id}[/bold] ({record.spec.kind}/{record.spec.backend}) on {', '.join(record.spec.task_ids)}")

        async def events():
            async for e in jobs.watch(record.run_id):
                yield e["type"], e

        final = await _follow(events(), record.spec.total_steps)
        rows = jobs.store.metrics(record.run_id)
        run_dir = jobs.store.run_dir(record.run_id)
        if rows:
            png = plot_curves(rows, run_dir / "curves.png", title=f"{record.spec.name} ({record.run_id})")
            console.print(f"curves: {png}")
        console.print(f"metrics: {run_dir / 'metrics.jsonl'}")
        console.print(final)
        _summary(rows)
        return 0 if jobs.get(record.run_id).state.value == "succeeded" else 1
    finally:
        await stack.__aexit__(None, None, None)


async def train_remote(spec: RunSpec, target: str, *, token: str = "", tls_ca: str = "") -> int:
    from halo.client.trainer import TrainerClient
    from halo.v1 import trainer_pb2 as pb

    async with TrainerClient(target, token=token, tls_ca=tls_ca) as client:
        run = await client.start_run(spec)
        console.print(f"submitted run [bold]{run.run_id}[/bold] to {target}; it keeps going if you disconnect")

        async def events():
            async for e in client.watch(run.run_id):
                kind = e.WhichOneof("event")
                if kind == "metrics":
                    yield "metrics", {"step": e.metrics.step, "values": dict(e.metrics.values)}
                elif kind == "state_change":
                    yield "state", {"state": pb.RunState.Name(e.state_change.state).removeprefix("RUN_STATE_").lower(),
                                    "message": e.state_change.message}
                elif kind == "log":
                    yield "log", {"message": e.log.message}

        console.print(await _follow(events(), run.spec.total_steps))
        return 0 if (await client.get_run(run.run_id)).state == pb.RUN_STATE_SUCCEEDED else 1
