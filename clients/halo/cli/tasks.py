"""`halo tasks list` (the task registry), `halo tasks verify` (a table per replica task: oracle,
no-op and wrong attempts, scored by agisdk), `halo tasks audit` (which near misses agisdk
accepts, and how strict success scores them) and `halo tasks reach` (which tasks the embedded
policy's candidates can solve at all)."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from halo.cli.curriculum import OLD_SPELLINGS, SUITES
from halo.cli.flags import Spelling

console = Console()


def _passed(attempt) -> bool:
    return attempt.score == (1.0 if attempt.kind == "oracle" else 0.0)


def _cell(attempt) -> str:
    if attempt is None:
        return "-"
    return f"[green]{attempt.score:.0f}[/green]" if _passed(attempt) else f"[red]{attempt.score:.0f}[/red]"


def _wrong_cell(wrong: dict) -> str:
    """'0 0 0' (one score per wrong attempt), red where one scored."""
    return " ".join(_cell(attempt) for attempt in wrong.values()) or "-"


async def run_verify(site: str = "") -> int:
    from halo.client.env import EnvClient
    from halo.tasks.registry import default_registry
    from halo.cli.stack import LocalStack
    from halo.cli.verify import verify_site_tasks

    tasks = default_registry().list(site=site, replica_only=True)
    if not tasks:
        console.print(f"[red]no replica tasks{' for site ' + site if site else ''}[/red]")
        return 2
    async with LocalStack(env_overrides={"pool_size": 4}) as stack:
        async with EnvClient(stack.env_target) as env:
            with Progress(console=console, transient=True) as progress:
                bar = progress.add_task("verifying", total=len(tasks))
                rows = await verify_site_tasks(env, tasks, on_row=lambda _row: progress.advance(bar), sessions=4)
    table = Table(title="replica tasks: oracle must score 1, no-op and every wrong attempt 0 (agisdk's evaluator)")
    table.add_column("task", no_wrap=True)
    for col in ("site", "replica", "oracle", "no-op", "wrong", "ok", "notes"):
        table.add_column(col)
    for row in rows:
        failed = [f"wrong '{label}' scored 1" for label, attempt in row.wrong.items() if not _passed(attempt)]
        failed += [f"wrong '{label}': {attempt.errors[0]}" for label, attempt in row.wrong.items() if attempt.errors]
        notes = "; ".join(row.oracle.errors[:2]) if row.oracle and row.oracle.errors else "; ".join(failed) or row.task.notes
        table.add_row(row.task.id, row.task.site, "yes", _cell(row.oracle), _cell(row.noop), _wrong_cell(row.wrong),
                      "[green]yes[/green]" if row.ok else "[red]NO[/red]", notes)
    console.print(table)
    passed = sum(r.ok for r in rows)
    console.print(f"{passed}/{len(rows)} tasks verified")
    return 0 if passed == len(rows) else 1


def _selected_tasks(site: str, suite_name: str, task_ids: str) -> list:
    """The tasks a command names: explicit ids, a suite, else every REAL v2 replica task (of `site`)."""
    from halo.cli.curriculum import suite
    from halo.tasks.registry import default_registry

    registry = default_registry()
    if task_ids or suite_name:
        ids = [t for t in task_ids.split(",") if t] if task_ids else suite(suite_name).select()
        return [registry.get(t) for t in ids]
    return [t for t in registry.list(site=site, replica_only=True) if t.suite == "real-v2"]


async def run_audit(site: str = "", suite_name: str = "", task_ids: str = "", lenient_only: bool = False,
                    markdown_path: str = "") -> int:
    from halo.cli.audit import audit_tasks, markdown, summary_line
    from halo.cli.stack import LocalStack
    from halo.client.env import EnvClient
    from halo.runtime.logging import configure_logging

    configure_logging("warning")   # the table is the output
    tasks = _selected_tasks(site, suite_name, task_ids)
    async with LocalStack(env_overrides={"pool_size": 4}) as stack:
        async with EnvClient(stack.env_target) as env:
            with Progress(console=console, transient=True) as progress:
                bar = progress.add_task("auditing", total=len(tasks))
                rows = await audit_tasks(env, tasks, sessions=4, on_row=lambda _row: progress.advance(bar))
    table = Table(title="grader audit: near misses scored by agisdk's script and by strict success "
                        "(agisdk AND configs/strict_checks.yaml)")
    for col in ("task", "oracle agisdk/strict", "near misses", "agisdk accepts", "strict ok"):
        table.add_column(col, overflow="fold")

    def pair(s) -> str:
        return "-" if s is None else f"{s.agisdk:d}/{s.strict:d}"

    for row in rows:
        if lenient_only and not row.lenient:
            continue
        accepted = "; ".join(row.lenient) or "-"
        errors = [f"{label}: {s.attempt.errors[0]}" for label, s in row.near_misses.items() if s.attempt.errors]
        if not row.task.scorable:   # agisdk cannot score it (an empty script): nothing to audit
            verdict = f"unscorable: {row.task.notes}"
        else:
            verdict = ("[green]yes[/green]" if row.sound_under_strict else "[red]NO[/red]") + (" " + "; ".join(errors) if errors else "")
        table.add_row(row.task.id, pair(row.oracle), str(len(row.near_misses)),
                      f"[yellow]{accepted}[/yellow]" if row.lenient else "-", verdict)
    console.print(table)
    console.print(summary_line(rows))
    if markdown_path:
        Path(markdown_path).write_text(markdown(rows))
        console.print(f"markdown (docs/reference/graders.md's audit section): {markdown_path}")
    scorable = [r for r in rows if r.task.scorable]
    return 0 if all(r.sound_under_strict for r in scorable) else 1


async def run_reach(site: str = "", suite_name: str = "", task_ids: str = "") -> int:
    from halo.cli.reach import survey
    from halo.cli.stack import LocalStack
    from halo.client.env import EnvClient
    from halo.runtime.logging import configure_logging

    configure_logging("warning")   # the table is the output
    tasks = _selected_tasks(site, suite_name, task_ids)
    async with LocalStack(env_overrides={"pool_size": 2}) as stack:
        async with EnvClient(stack.env_target) as env:
            with console.status(f"walking {len(tasks)} oracles with the embedded policy's candidates"):
                rows = await survey(env, tasks)
    table = Table(title="the oracle walked with the embedded policy's candidates (goal + observation only), "
                        "scored by agisdk")
    for col in ("task", "oracle", "candidates (max)", "walk", "score"):
        table.add_column(col, overflow="fold")
    for r in rows:
        table.add_row(r.task_id, str(r.oracle_steps), str(max(r.candidates, default=0)), " ".join(r.walked),
                      f"[green]{r.score:.0f}[/green]" if r.reachable else f"[red]{r.score:.0f}[/red]")
    console.print(table)
    console.print(f"{sum(r.reachable for r in rows)}/{len(rows)} tasks within the embedded policy's reach")
    return 0


def list_tasks(args: argparse.Namespace) -> int:
    from halo.tasks.registry import default_registry

    from halo.cli.curriculum import SUITES, suite

    registry = default_registry()
    if args.suite in SUITES:   # a training suite: the tasks its rule picks
        chosen = set(suite(args.suite).select())
        tasks = [t for t in registry.list(site=args.site or "", replica_only=args.replica_only) if t.id in chosen]
    else:                      # a registry suite: where the tasks come from
        tasks = registry.list(site=args.site or "", replica_only=args.replica_only, suite=args.suite or "")
    table = Table(title=f"{len(tasks)} tasks")
    for col in ("id", "site", "suite", "replica", "scorable", "goal"):
        table.add_column(col, overflow="fold")
    for t in tasks:
        table.add_row(t.id, t.site, t.suite, "yes" if t.replica_available else "-", "yes" if t.scorable else "NO", t.goal[:90])
    Console().print(table)
    return 0


REGISTRY_SUITES = ("real-v2", "halo")   # halo.tasks.registry's SUITE_REAL, SUITE_HALO (the registry is a service-side module)
SUITE_SPELLING = Spelling("--suite", [*REGISTRY_SUITES, *SUITES], {"real_v2": "real-v2", **OLD_SPELLINGS})
TRAINING_SUITE_SPELLING = Spelling("--suite", SUITES, OLD_SPELLINGS)


def add_parser(sub) -> None:
    tasks = sub.add_parser("tasks", help="the task registry: list, verify, audit, reach")
    tasks_sub = tasks.add_subparsers(dest="tasks_command", required=True)
    tl = tasks_sub.add_parser("list", help="list tasks")
    tl.add_argument("--site", default="", help="only this site's tasks")
    tl.add_argument("--suite", default="", choices=[*REGISTRY_SUITES, *SUITES], type=SUITE_SPELLING,
                    help="only these tasks: where they come from (real-v2: agisdk's REAL v2, halo: HALO's own), or a "
                         "training suite's (halo train --suite)")
    tl.add_argument("--replica-only", action=argparse.BooleanOptionalAction, default=False,
                    help="only tasks a local replica serves")
    tl.set_defaults(run=list_tasks)

    tv = tasks_sub.add_parser("verify", help="run each replica task's oracle, no-op and wrong attempt, scored by agisdk")
    tv.add_argument("--site", default="", help="only this site (all replica sites when empty)")
    tv.set_defaults(run=lambda args: asyncio.run(run_verify(args.site)))

    ta = tasks_sub.add_parser("audit", help="run each replica task's oracle and labelled near misses; print which near "
                                            "misses agisdk's script accepts and how strict success scores them")
    ta.add_argument("--site", default="", help="only this site (every REAL v2 replica task when empty)")
    ta.add_argument("--suite", default="", choices=[*SUITES], type=TRAINING_SUITE_SPELLING,
                    help="the tasks of a training suite (halo train --suite), e.g. real-easy")
    ta.add_argument("--tasks", default="", help="comma-separated task ids")
    ta.add_argument("--lenient-only", action=argparse.BooleanOptionalAction, default=False,
                    help="list only the tasks where agisdk accepts a near miss")
    ta.add_argument("--markdown", default="", metavar="PATH",
                    help="also write the audit as docs/reference/graders.md keeps it (date, summary, tables) to PATH")
    ta.set_defaults(run=lambda args: asyncio.run(run_audit(args.site, args.suite, args.tasks, args.lenient_only, args.markdown)))

    tr = tasks_sub.add_parser("reach", help="walk each replica task's oracle with the embedded policy's candidates: "
                                            "which tasks it can solve at all")
    tr.add_argument("--site", default="", help="only this site (every REAL v2 replica task when empty)")
    tr.add_argument("--suite", default="", choices=[*SUITES], type=TRAINING_SUITE_SPELLING,
                    help="the tasks of a training suite (halo train --suite), e.g. real-easy")
    tr.add_argument("--tasks", default="", help="comma-separated task ids")
    tr.set_defaults(run=lambda args: asyncio.run(run_reach(args.site, args.suite, args.tasks)))
