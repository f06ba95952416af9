"""`halo eval`: evaluate a policy mode on REAL tasks, resume, report, compare.

    halo eval --mode embedded --tasks playground --seeds 0-3 --workers 4
    halo eval --mode embedded --tasks playground-signup --weights runs/<id>/checkpoints/step-20/head.safetensors
    halo eval --mode qwen3vl_grpo --tasks omnizon,gomail --workers 8        # vLLM route qwen3vl + LoRA adapter
    halo eval --mode gpt5_baseline --tasks all                              # OPENAI_API_KEY
    halo eval --resume <eval_id>                                            # skip the episodes already saved
    halo eval --mode embedded --tasks playground --submit 127.0.0.1:50055   # a job on the trainer service
    halo eval compare <eval_a> <eval_b>                                     # side by side
    halo eval report <eval_id>                                              # re-render report.md, plots, viewer
    halo eval list
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from halo.cli.flags import deprecated_alias
from halo.cli.train import SUCCESS_CHOICES, SUCCESS_HELP, success_overrides
from halo.evaluation.modes import MODES
from halo.runs.context import ServiceTargets

console = Console()

DEFAULT_MAX_STEPS = {"embedded": 10}   # the embedded policy's tasks are short; VLM modes get the design's 70


def parse_seeds(text: str) -> list[int]:
    """"0,1,2", "0-4" or a mix ("0-2,7")."""
    seeds: list[int] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if "-" in part:
            lo, hi = part.split("-", 1)
            seeds += list(range(int(lo), int(hi) + 1))
        else:
            seeds.append(int(part))
    if not seeds:
        raise ValueError(f"no seeds in {text!r}")
    return list(dict.fromkeys(seeds))


def run_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="halo eval", description="Evaluate a policy mode on REAL tasks (subcommands: compare, report, list).",
        epilog="modes: " + "; ".join(f"{m.name}: {m.description}" for m in MODES.values()),
    )
    p.add_argument("--mode", choices=list(MODES), help="what to evaluate (route + adapter)")
    p.add_argument("--tasks", default="", help="comma-separated task ids, site names, or 'all' (REAL v2 tasks with a replica)")
    p.add_argument("--success", default="agisdk", choices=SUCCESS_CHOICES, help=SUCCESS_HELP)
    p.add_argument("--seeds", default="0", help="seeds per task: 0,1,2 or 0-4 (default 0)")
    p.add_argument("--workers", type=int, default=4, help="episodes run in parallel")
    max_actions = p.add_argument("--max-actions", type=int, default=0, metavar="N",
                                 help="actions per episode at most (default 70; 10 for embedded)")
    deprecated_alias(p, "--max-steps", max_actions)
    p.add_argument("--temperature", type=float, default=0.0, help="sampling temperature (0: greedy)")
    p.add_argument("--weights", default="", help="embedded: head.safetensors, a checkpoint folder or a run folder (last checkpoint)")
    p.add_argument("--adapter", default=None, metavar="PATH",
                   help="LoRA adapter: a PEFT folder, a local_lora run folder (runs/<run_id>: its last checkpoint) or "
                        "checkpoint folder, or a tinker:// path (default: the mode's, e.g. checkpoints/qwen3vl_grpo_lora; "
                        "'' = base model)")
    p.add_argument("--route", default="", help="gateway route instead of the mode's (e.g. qwen3vl-tinker)")
    p.add_argument("--eval-id", default="", help="name of the eval folder (default: <mode>-<time>-<hex>)")
    p.add_argument("--evals-dir", default="evals", help="the folder holding every eval (one subfolder each)")
    p.add_argument("--resume", default="", metavar="EVAL_ID", help="continue an interrupted eval: saved episodes are skipped")
    p.add_argument("--screenshots", action=argparse.BooleanOptionalAction, default=True,
                   help="record each step's screenshot (--no-screenshots: faster; the viewer shows no images)")
    p.add_argument("--observation", default="screenshot", choices=["screenshot", "text"],
                   help="what the policy sees: screenshot + AXTree, or text only (the env skips the screenshot, so the "
                        "prompt has none; implies --no-screenshots)")
    p.add_argument("--env", default="", metavar="TARGET",
                   help="use this env service instead of starting one here: host:port, or a fleet of replicas "
                        "(host:port,host:port or fleet://name:port), as in halo train")
    p.add_argument("--reward", default="", metavar="HOST:PORT", help="use this reward service instead of starting one here")
    p.add_argument("--gateway", default="", metavar="HOST:PORT", help="use this policy gateway instead of starting one here")
    p.add_argument("--token", default="", help="bearer token of the running services")
    p.add_argument("--tls-ca", default="", metavar="PEM", help="root certificate to trust: talk TLS to the running services")
    p.add_argument("--gateway-config", default="", help="route table for the in-process gateway (default configs/gateway.yaml)")
    p.add_argument("--submit", default="", metavar="HOST:PORT",
                   help="run it as a job on a trainer service (written under its runs/<run_id>/eval/); Ctrl-C does not stop it")
    return p


def _screenshots(args) -> bool:
    """Screenshots are taken (and shown to the policy) unless --no-screenshots or --observation text."""
    return args.screenshots and args.observation != "text"


def _site_table(rows, title: str) -> Table:
    from halo.evaluation.summary import SITE_HEADER, site_cells

    table = Table(title=title)
    for col in SITE_HEADER:
        table.add_column(col, justify="left" if col == "site" else "right")
    for r in rows:
        table.add_row(*[c.replace("**", "") for c in site_cells(r)], style="bold" if r.name == "all" else None)
    return table


def _episode_line(e: dict) -> str:
    from halo.evaluation.summary import outcome

    mark = {"success": "[green]✓[/green]", "failure": "[red]✗[/red]"}.get(outcome(e), "[yellow]![/yellow]")
    text = f"{mark} {e['task_id']} seed {e['seed']}: {outcome(e)} in {e['length']} steps, return {e['return']:.2f}"
    if e.get("env_failure"):
        text += f" ({e['env_failure_reason']})"
    return text


async def _submit(args: argparse.Namespace) -> int:
    from halo.client.trainer import TrainerClient
    from halo.evaluation.hosted import eval_run_spec
    from halo.v1 import trainer_pb2 as pb

    if not args.mode or not args.tasks:
        console.print("halo eval: --mode and --tasks are required", style="red")
        return 2
    spec = eval_run_spec(
        args.mode, [t for t in args.tasks.split(",") if t], seeds=parse_seeds(args.seeds), workers=max(1, args.workers),
        max_steps=args.max_actions or DEFAULT_MAX_STEPS.get(args.mode, 70), temperature=args.temperature, route=args.route,
        adapter_path=args.adapter, weights=args.weights, screenshots=_screenshots(args), name=args.eval_id,
    )
    async with TrainerClient(args.submit, token=args.token, tls_ca=args.tls_ca) as client:
        run = await client.start_run(spec)
        console.print(f"submitted eval run [bold]{run.run_id}[/bold] to {args.submit}; it keeps going if you disconnect")
        async for event in client.watch(run.run_id):
            kind = event.WhichOneof("event")
            if kind == "log":
                console.log(event.log.message)
            elif kind == "state_change":
                console.log(f"{pb.RunState.Name(event.state_change.state).removeprefix('RUN_STATE_').lower()}: {event.state_change.message}")
        final = await client.get_run(run.run_id)
    console.print(f"eval folder (on the trainer's machine): {final.output_dir}/eval")
    if final.last_metrics:
        console.print("  ".join(f"{k}={v:.2f}" for k, v in sorted(final.last_metrics.items())))
    return 0 if final.state == pb.RUN_STATE_SUCCEEDED else 1


@contextlib.asynccontextmanager
async def local_services(route: str, workers: int, gateway_config: str = "",
                         given: ServiceTargets | None = None) -> AsyncIterator[ServiceTargets]:
    """The eval's services: those `given` (--env, --reward, --gateway, with --token and --tls-ca) as
    they are, the others started in this process (sites + env, reward, a gateway with only `route`)."""
    from halo.cli.stack import LocalStack

    given = given or ServiceTargets("")
    if given.env and given.reward and given.gateway:
        yield given
        return
    gateway = {"only_routes": [route], **({"config": gateway_config} if gateway_config else {})}
    async with LocalStack(env_overrides={"pool_size": max(8, workers), "acquire_timeout_s": 120}, with_env=not given.env,
                          with_reward=not given.reward, with_gateway=not given.gateway, gateway_overrides=gateway) as stack:
        yield ServiceTargets(given.env or stack.env_target, given.reward or stack.reward_target,
                             given.gateway or stack.gateway_target, given.token, given.tls_ca)


async def _run(args: argparse.Namespace) -> int:
    from halo.evaluation.harness import EvalAborted, new_eval_id, run_eval
    from halo.evaluation.modes import ResolvedMode, resolve_mode
    from halo.evaluation.records import EvalSpec
    from halo.evaluation.store import EvalStore
    from halo.evaluation.summary import site_rows
    from halo.runtime.logging import configure_logging

    store = EvalStore(args.evals_dir)
    if args.resume:
        spec = store.load_spec(args.resume)
        if args.workers != 4:
            spec.workers = args.workers
        resolved = ResolvedMode(spec.mode, spec.route, spec.adapter, spec.adapter_path, spec.weights)
        console.print(f"resuming [bold]{spec.eval_id}[/bold] ({spec.mode}, {len(store.completed(spec.eval_id))} episodes saved)")
    else:
        if not args.mode or not args.tasks:
            console.print("halo eval: --mode and --tasks are required (or --resume EVAL_ID)", style="red")
            return 2
        try:
            resolved = resolve_mode(args.mode, route=args.route, adapter_path=args.adapter, weights=args.weights)
        except ValueError as exc:
            console.print(f"halo eval: {exc}", style="red")
            return 2
        eval_id = args.eval_id or new_eval_id(args.mode)
        if store.exists(eval_id):
            console.print(f"halo eval: {store.eval_dir(eval_id)} exists; continue it with --resume {eval_id}", style="red")
            return 2
        spec = EvalSpec(
            eval_id=eval_id, mode=args.mode, route=resolved.route, adapter=resolved.adapter, adapter_path=resolved.adapter_path,
            weights=resolved.weights, tasks=[t for t in args.tasks.split(",") if t], seeds=parse_seeds(args.seeds),
            max_steps=args.max_actions or DEFAULT_MAX_STEPS.get(args.mode, 70), workers=max(1, args.workers),
            temperature=args.temperature, screenshots=_screenshots(args),
            reward_overrides=success_overrides(args.success, {}),
        )
    args.eval_id = spec.eval_id   # for the message after Ctrl-C
    given = ServiceTargets(args.env, args.reward, args.gateway, args.token, args.tls_ca)
    if args.tls_ca and not (args.env and args.reward and args.gateway):
        console.print("halo eval: --tls-ca talks TLS to every service of the eval, and the services started here serve "
                      "plaintext: give --env, --reward and --gateway too", style="red")
        return 2

    configure_logging("warning")   # the progress bar is the output
    adapter = spec.adapter_path or spec.weights
    console.print(f"eval [bold]{spec.eval_id}[/bold]: mode {spec.mode}, route {spec.route}"
                  + (f", adapter {adapter}" if adapter else "") + f", tasks {', '.join(spec.tasks)}, seeds {spec.seeds}")
    with Progress(TextColumn("[bold]evaluating[/bold]"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("{task.description}"), console=console) as progress:
        bar = progress.add_task("starting services…", total=None)
        results: list[dict] = []

        def on_event(kind: str, payload: dict) -> None:
            if kind == "planned":
                progress.update(bar, total=payload["total"], completed=payload["done"], description="")
                if payload["done"]:
                    console.log(f"{payload['done']} episodes already saved, {payload['pending']} to run")
            elif kind == "episode":
                results.append(payload)
                progress.advance(bar)
                scored = [e for e in results if not e.get("env_failure") and e.get("scorable", True)]
                if scored:
                    progress.update(bar, description=f"success {sum(e['success'] for e in scored) / len(scored):.0%} of {len(scored)} this run")
                console.log(_episode_line(payload))
            elif kind == "log":
                progress.update(bar, description=payload["message"])

        try:
            async with contextlib.AsyncExitStack() as stack:
                targets = await stack.enter_async_context(local_services(resolved.route, spec.workers, args.gateway_config, given))
                outcome = await run_eval(spec, store, targets=targets, resolved=resolved, on_event=on_event)
        except EvalAborted as exc:
            progress.stop()
            console.print(f"halo eval: {exc}", style="red")
            if store.exists(spec.eval_id) and not store.episodes(spec.eval_id):
                import shutil

                shutil.rmtree(store.eval_dir(spec.eval_id), ignore_errors=True)   # nothing was measured
            return 2
    rows = site_rows(outcome.episodes)
    console.print(_site_table(rows, f"{spec.eval_id}: success per site"))
    folder = store.eval_dir(spec.eval_id)
    console.print(f"report: {folder / 'report.md'}\nviewer: {folder / 'index.html'}")
    failures = sum(1 for e in outcome.episodes if e.get("env_failure"))
    complete = len(store.completed(spec.eval_id)) == len(spec.task_ids) * len(spec.seeds)
    if not complete:
        console.print(f"{failures} episodes hit an infrastructure failure: rerun them with halo eval --resume {spec.eval_id}",
                      style="yellow")
    return 0 if complete else 1


def compare_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="halo eval compare", description="two evaluation runs side by side")
    p.add_argument("eval_a", help="the first eval's id (its folder under --evals-dir)")
    p.add_argument("eval_b", help="the eval to compare it with")
    p.add_argument("--evals-dir", default="evals", help="the folder holding every eval (one subfolder each)")
    p.add_argument("--out", default="", help="folder for compare.md + compare.png (default evals/compare-A-vs-B)")
    return p


def _compare(argv: list[str]) -> int:
    from halo.evaluation.report import compare, comparison_cells, write_comparison
    from halo.evaluation.store import EvalStore

    p = compare_parser()
    args = p.parse_args(argv)
    store = EvalStore(args.evals_dir)
    try:
        c = compare(store, args.eval_a, args.eval_b)
    except FileNotFoundError as exc:
        console.print(f"halo eval compare: {exc}", style="red")
        return 2
    header, rows = comparison_cells(c)
    table = Table(title=f"{c.a.eval_id} ({c.a.mode}) vs {c.b.eval_id} ({c.b.mode})")
    for col in header:
        table.add_column(col, justify="left" if col == "site" else "right")
    for r in rows:
        table.add_row(*r, style="bold" if r[0] == "all" else None)
    console.print(table)
    if c.tasks:
        diff = Table(title="tasks that differ (successes / scored episodes)")
        for col in ("task", c.a.eval_id, c.b.eval_id):
            diff.add_column(col)
        for t, ra, rb in c.tasks:
            diff.add_row(t, "–" if ra is None else f"{ra.successes}/{ra.scored}", "–" if rb is None else f"{rb.successes}/{rb.scored}")
        console.print(diff)
    out = Path(args.out) if args.out else store.root / f"compare-{c.a.eval_id}-vs-{c.b.eval_id}"
    console.print(f"written: {write_comparison(store, c, out)}")
    return 0


def report_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="halo eval report", description="re-render an eval's report, plots and viewer")
    p.add_argument("eval_id", help="the eval's id (its folder under --evals-dir)")
    p.add_argument("--evals-dir", default="evals", help="the folder holding every eval (one subfolder each)")
    return p


def _report(argv: list[str]) -> int:
    from halo.evaluation.report import rebuild
    from halo.evaluation.store import EvalStore
    from halo.evaluation.summary import site_rows

    p = report_parser()
    args = p.parse_args(argv)
    store = EvalStore(args.evals_dir)
    try:
        index = rebuild(store, args.eval_id)
    except FileNotFoundError as exc:
        console.print(f"halo eval report: {exc}", style="red")
        return 2
    console.print(_site_table(site_rows(store.episodes(args.eval_id)), f"{args.eval_id}: success per site"))
    console.print(f"report: {index.parent / 'report.md'}\nviewer: {index}")
    return 0


def list_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="halo eval list", description="the evaluations in --evals-dir")
    p.add_argument("--evals-dir", default="evals", help="the folder holding every eval (one subfolder each)")
    return p


def _list(argv: list[str]) -> int:
    from halo.evaluation.summary import aggregate, pct
    from halo.evaluation.store import EvalStore

    p = list_parser()
    args = p.parse_args(argv)
    store = EvalStore(args.evals_dir)
    table = Table(title=f"evaluations in {store.root}")
    for col in ("eval id", "mode", "route", "episodes", "success rate", "strict success", "started"):
        table.add_column(col)
    for eval_id in store.list_ids():
        spec, episodes = store.load_spec(eval_id), store.episodes(eval_id)
        r = aggregate("all", episodes)
        table.add_row(eval_id, spec.mode, spec.route, f"{len(episodes)}/{len(spec.task_ids) * len(spec.seeds)}",
                      pct(r.success_rate), pct(r.success_rate_strict), spec.created_at)
    console.print(table)
    return 0


def main(argv: list[str]) -> int:
    sub = {"compare": _compare, "report": _report, "list": _list}
    if argv and argv[0] in sub:
        return sub[argv[0]](argv[1:])
    args = run_parser().parse_args(argv)
    try:
        return asyncio.run(_submit(args) if args.submit else _run(args))
    except ValueError as exc:       # bad mode / weights / seeds
        console.print(f"halo eval: {exc}", style="red")
        return 2
    except FileNotFoundError as exc:
        console.print(f"halo eval: {exc}", style="red")
        return 2
    except KeyboardInterrupt:
        console.print(f"interrupted: the episodes saved so far are kept; continue with halo eval --resume {args.eval_id or '<eval_id>'}",
                      style="yellow")
        return 130


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
