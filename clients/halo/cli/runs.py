"""`halo runs list | follow | stop`: the runs of a trainer service (those `halo train --submit` and
`halo eval --submit` start), managed from the command line with the calls TrainerClient has.

`follow_submitted` is the one follower of a submitted run: `halo train --submit` (a new run or a
resumed one) and `halo runs follow` both show its progress with it and exit with its outcome:
0 when the run SUCCEEDED, 1 otherwise. Usage errors (an unknown run, a run that cannot stop) exit 2.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import AsyncIterator
from datetime import datetime
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from halo.errors import DeadlineExceeded, FailedPrecondition, InvalidArgument, NotFound, Unavailable

console = Console()

#: `halo up`'s trainer service (deploy/services.yaml, services.trainer.port).
DEFAULT_TRAINER = "127.0.0.1:50055"
#: How long `halo runs stop` waits for the run to finish its current step and stop.
DEFAULT_STOP_WAIT_S = 600.0


def state_name(state: int) -> str:
    """RUN_STATE_SUCCEEDED -> "succeeded" (the trainer service's own spelling of a state)."""
    from halo.v1 import trainer_pb2 as pb

    return pb.RunState.Name(state).removeprefix("RUN_STATE_").lower()


def refusal(exc: Exception) -> str:
    """A service's refusal (unknown run, wrong state) in one line."""
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def describe_metrics(values: dict[str, float]) -> str:
    """A step's headline metrics on one line (those it has)."""
    keys = ("mean_reward", "success_rate", "success_rate_strict", "eval_success_rate", "eval_success_rate_strict",
            "frac_reward_zero_std", "action_validity")
    return "  ".join(f"{k}={values[k]:.2f}" for k in keys if k in values)


async def render_events(events: AsyncIterator[tuple[str, dict]], total: int) -> str:
    """Show a run's events, `(kind, payload)` as halo.trainer.jobs emits them (a local run's, or a
    submitted one's through `_events`), as a progress bar and a line per step; returns the final
    state message."""
    final = ""
    with Progress(
        TextColumn("[bold]training[/bold]"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        TextColumn("{task.description}"), console=console,
    ) as progress:
        bar = progress.add_task("", total=total)
        async for kind, payload in events:
            if kind == "metrics":
                progress.update(bar, completed=payload["step"], description=describe_metrics(payload["values"]))
                console.log(f"step {payload['step']}: {describe_metrics(payload['values'])}")
            elif kind == "state":
                final = f"{payload['state']}: {payload['message']}"
                if payload["state"] == "running" and "resuming" in payload["message"]:
                    console.log(payload["message"])
            elif kind == "log":
                console.log(payload["message"])
    return final


async def _events(client, run_id: str, target: str, reconnect_s: float) -> AsyncIterator[tuple[str, dict]]:
    """The run's events as `(kind, payload)` for `render_events`; when the trainer
    service goes away (killed, restarting), the run lives on in its runs folder and resumes when the
    service starts again: wait up to `reconnect_s` for it and follow on from the last event seen."""
    last_sequence = 0
    while True:
        try:
            async for e in client.watch(run_id, after_sequence=last_sequence):
                last_sequence = e.sequence
                kind = e.WhichOneof("event")
                if kind == "metrics":
                    yield "metrics", {"step": e.metrics.step, "values": dict(e.metrics.values)}
                elif kind == "state_change":
                    yield "state", {"state": state_name(e.state_change.state), "message": e.state_change.message}
                elif kind == "log":
                    yield "log", {"message": e.log.message}
            return
        except (Unavailable, DeadlineExceeded) as exc:
            yield "log", {"message": f"lost the trainer service at {target} ({refusal(exc)}); the run is kept there "
                                     f"and resumes when the service is back: waiting up to {reconnect_s:g}s "
                                     "(Ctrl-C stops following, not the run)"}
            if not await _wait_healthy(client, reconnect_s):
                raise Unavailable(f"the trainer service at {target} did not come back in {reconnect_s:g}s; run "
                                  f"{run_id} is kept in its runs folder and resumes when the service starts again") from None
            yield "log", {"message": f"the trainer service at {target} is back: following run {run_id} again"}


async def _wait_healthy(client, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if await client.healthy(timeout_s=2):
            return True
        await asyncio.sleep(1.0)
    return False


async def follow_submitted(client, run, target: str, *, reconnect_s: float = 600.0) -> int:
    """Show a submitted run's progress until it ends (across restarts of the trainer service);
    0 when it SUCCEEDED, 1 otherwise (failed, stopped, or the service did not come back)."""
    from halo.v1 import trainer_pb2 as pb

    try:
        console.print(await render_events(_events(client, run.run_id, target, reconnect_s), run.spec.total_steps))
        final = await client.get_run(run.run_id)
    except Unavailable as exc:
        console.print(f"[red]{exc}[/red]")
        return 1
    if final.state == pb.RUN_STATE_FAILED and final.error:
        console.print(f"[red]run {final.run_id} failed: {final.error}[/red]")
    return 0 if final.state == pb.RUN_STATE_SUCCEEDED else 1


def _started(run) -> str:
    return datetime.fromtimestamp(run.created_at.ToSeconds()).strftime("%Y-%m-%d %H:%M:%S") if run.created_at.seconds else ""


def run_row(run) -> dict[str, object]:
    """One run as `halo runs list` shows it (and writes it with --json)."""
    from halo.runs.spec import RunSpec

    spec = RunSpec.from_proto(run.spec)
    return {"run_id": run.run_id, "name": spec.name, "state": state_name(run.state), "step": run.step,
            "total_steps": spec.total_steps, "kind": spec.kind, "backend": spec.backend,
            "started": _started(run), "error": run.error}


async def _list(args: argparse.Namespace, client) -> int:
    rows = [run_row(r) for r in await client.list_runs(limit=args.limit)]
    if args.json == "-":
        print(json.dumps(rows, indent=2))
        return 0
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")
    if not rows:
        console.print(f"no runs on the trainer service at {args.trainer}")
        return 0
    header = ("RUN", "STATE", "STEP", "KIND/BACKEND", "STARTED", "ERROR")
    lines = [header] + [(str(r["run_id"]), str(r["state"]), f"{r['step']}/{r['total_steps']}", f"{r['kind']}/{r['backend']}",
                         str(r["started"]), str(r["error"]).splitlines()[0] if r["error"] else "") for r in rows]
    widths = [max(len(line[i]) for line in lines) for i in range(len(header) - 1)]
    for line in lines:   # one line per run, whatever the terminal's width: the error, last, runs on
        print("  ".join(cell.ljust(width) for cell, width in zip(line, widths)) + "  " + line[-1])
    return 0


async def _follow(args: argparse.Namespace, client) -> int:
    run = await client.get_run(args.run_id)
    row = run_row(run)
    console.print(f"run [bold]{run.run_id}[/bold] ({row['kind']}/{row['backend']}) on {args.trainer}: "
                  f"{row['state']}, step {run.step}/{row['total_steps']}")
    return await follow_submitted(client, run, args.trainer, reconnect_s=args.reconnect_s)


async def _stop(args: argparse.Namespace, client) -> int:
    from halo.v1 import trainer_pb2 as pb

    run = await client.stop_run(args.run_id)
    console.print(f"run {run.run_id}: {state_name(run.state)} (stops after its current step)")
    deadline = time.monotonic() + args.wait_s
    while run.state in (pb.RUN_STATE_PENDING, pb.RUN_STATE_RUNNING, pb.RUN_STATE_STOPPING):
        if time.monotonic() > deadline:
            console.print(f"run {run.run_id} is still {state_name(run.state)} after {args.wait_s:g}s; "
                          f"halo runs follow {run.run_id} shows when it ends")
            return 1
        await asyncio.sleep(0.5)
        run = await client.get_run(run.run_id)
    console.print(f"run {run.run_id}: {state_name(run.state)} at step {run.step}/{run.spec.total_steps}"
                  + (f" ({run.error})" if run.error else ""))
    return 0 if run.state in (pb.RUN_STATE_STOPPED, pb.RUN_STATE_SUCCEEDED) else 1


async def _main(args: argparse.Namespace) -> int:
    from halo.client.trainer import TrainerClient

    async with TrainerClient(args.trainer, token=args.token, tls_ca=args.tls_ca) as client:
        try:
            return await args.action(args, client)
        except (NotFound, FailedPrecondition, InvalidArgument) as exc:   # the user's run id or its state
            print(f"halo runs {args.runs_command}: {refusal(exc)} (trainer service {args.trainer})", file=sys.stderr)
            return 2
        except (Unavailable, DeadlineExceeded) as exc:
            print(f"halo runs {args.runs_command}: no trainer service at {args.trainer} ({refusal(exc)})", file=sys.stderr)
            return 1


def run(args: argparse.Namespace) -> int:
    try:
        return asyncio.run(_main(args))
    except KeyboardInterrupt:   # following only: the run goes on on the service
        return 130


def add_parser(sub) -> None:
    runs = sub.add_parser("runs", help="list, follow and stop the runs of a trainer service",
                          description="The runs of a trainer service (halo train --submit, halo eval --submit): "
                                      "list them, follow one until it ends, stop one.")
    runs_sub = runs.add_subparsers(dest="runs_command", required=True, metavar="COMMAND")

    def target_flags(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--trainer", default=DEFAULT_TRAINER, metavar="HOST:PORT",
                            help="the trainer service (the default is halo up's)")
        parser.add_argument("--token", default="", help="bearer token of the trainer service")
        parser.add_argument("--tls-ca", default="", metavar="PEM", help="root certificate to trust: talk TLS to the trainer service")

    listing = runs_sub.add_parser("list", help="one line per run: id, state, step/total, kind/backend, started, error")
    target_flags(listing)
    listing.add_argument("--limit", type=int, default=0, metavar="N", help="the N newest runs (0: all)")
    listing.add_argument("--json", nargs="?", const="-", default=None, metavar="PATH",
                         help="write the runs as a JSON list to PATH (no PATH: standard output, instead of the table)")
    follow = runs_sub.add_parser("follow", help="stream a run's steps until it ends (exit 0: succeeded, 1: not)")
    follow.add_argument("run_id", metavar="RUN_ID", help="the run (halo runs list shows the ids)")
    target_flags(follow)
    follow.add_argument("--reconnect-s", type=float, default=600.0, metavar="S",
                        help="when the trainer service goes away, wait this long for it to come back and follow on")
    stop = runs_sub.add_parser("stop", help="stop a run after its current step; wait for it and print its final state")
    stop.add_argument("run_id", metavar="RUN_ID", help="the run (halo runs list shows the ids)")
    target_flags(stop)
    stop.add_argument("--wait-s", type=float, default=DEFAULT_STOP_WAIT_S, metavar="S",
                      help="how long to wait for the run to stop (it finishes the step in flight first)")
    for parser, action in ((listing, _list), (follow, _follow), (stop, _stop)):
        parser.set_defaults(run=run, action=action)
