"""`halo` command line.

    halo demo                      drive a session on the local playground through the env service
    halo serve NAME [flags]        run one service: sites, env, reward, gateway, trainer (`halo serve env --help`)
    halo tasks list [--site S]     the task registry
    halo tasks verify [--site S]   oracle / no-op / wrong attempts of replica tasks, scored by agisdk
    halo sites shots               screenshots of each replica's main pages
    halo bench env                 env service vs raw Playwright throughput
    halo protos [--check]          regenerate (or check) the gRPC stubs
"""

from __future__ import annotations

import argparse
import asyncio
import sys


# gRPC services: name -> (settings class, ServiceSpec factory), imported lazily. Add new services here.
GRPC_SERVICES: dict[str, tuple[str, str]] = {
    "env": ("halo.env.config:EnvSettings", "halo.env.server:build_service"),
    "reward": ("halo.reward.config:RewardSettings", "halo.reward.server:build_service"),
    "trainer": ("halo.trainer.config:TrainerSettings", "halo.trainer.server:build_service"),
}


def _load(ref: str):
    import importlib

    module, _, attr = ref.partition(":")
    return getattr(importlib.import_module(module), attr)


def _serve(argv: list[str]) -> int:
    names = ["sites", *GRPC_SERVICES]
    if not argv or argv[0] not in names:
        print(f"usage: halo serve {{{','.join(names)}}} [--flag value ...]   (halo serve env --help)", file=sys.stderr)
        return 2
    name, flags = argv[0], argv[1:]
    if name == "sites":
        from halo.sites.server import SitesSettings, run

        run(SitesSettings.from_cli(flags))
        return 0
    from halo.runtime.server import run

    settings_ref, factory_ref = GRPC_SERVICES[name]
    run(_load(factory_ref), _load(settings_ref).from_cli(flags))
    return 0


def _tasks(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from halo.env.tasks import default_registry

    tasks = default_registry().list(site=args.site or "", replica_only=args.replica_only, suite=args.suite or "")
    table = Table(title=f"{len(tasks)} tasks")
    for col in ("id", "site", "suite", "replica", "scorable", "goal"):
        table.add_column(col, overflow="fold")
    for t in tasks:
        table.add_row(t.id, t.site, t.suite, "yes" if t.replica_available else "-", "yes" if t.scorable else "NO", t.goal[:90])
    Console().print(table)
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["serve"]:
        return _serve(argv[1:])
    parser = argparse.ArgumentParser(prog="halo", description="HALO: online RL for browser agents")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("serve", help="run a service (halo serve env --help)")

    demo = sub.add_parser("demo", help="drive the playground through the env service, step by step")
    demo.add_argument("--task", default="playground-finish")
    demo.add_argument("--out", default="artifacts/demo", help="folder for the screenshots")

    tasks = sub.add_parser("tasks", help="task registry")
    tasks_sub = tasks.add_subparsers(dest="tasks_command", required=True)
    tl = tasks_sub.add_parser("list", help="list tasks")
    tl.add_argument("--site", default="")
    tl.add_argument("--suite", default="", choices=["", "real-v2", "halo"])
    tl.add_argument("--replica-only", action="store_true")

    tv = tasks_sub.add_parser("verify", help="run each replica task's oracle, no-op and wrong attempt, scored by agisdk")
    tv.add_argument("--site", default="", help="only this site (all replica sites when empty)")

    sites = sub.add_parser("sites", help="site replicas")
    sites_sub = sites.add_subparsers(dest="sites_command", required=True)
    shots = sites_sub.add_parser("shots", help="PNG screenshots of each replica's main pages")
    shots.add_argument("--out", default="docs/shots")
    shots.add_argument("--site", action="append", default=[], help="only these sites")

    bench = sub.add_parser("bench", help="benchmarks")
    bench_sub = bench.add_subparsers(dest="bench_command", required=True)
    be = bench_sub.add_parser("env", help="env service vs raw Playwright on the playground")
    be.add_argument("--sessions", default="1,4,8", help="comma-separated concurrency levels")
    be.add_argument("--steps", type=int, default=40, help="steps per session per level")
    be.add_argument("--image-format", default="jpeg", choices=["png", "jpeg"])
    be.add_argument("--json", default="", help="also write the results to this JSON file")

    protos = sub.add_parser("protos", help="regenerate the gRPC stubs from protos/")
    protos.add_argument("--check", action="store_true", help="fail when committed stubs drift")

    args = parser.parse_args(argv)
    if args.command == "demo":
        from halo.demo import run_demo

        return asyncio.run(run_demo(args.task, args.out))
    if args.command == "tasks" and args.tasks_command == "verify":
        from halo.tasks_verify import run_verify

        return asyncio.run(run_verify(args.site))
    if args.command == "tasks":
        return _tasks(args)
    if args.command == "sites":
        from pathlib import Path

        from halo.sites.shots import render_shots

        for path in asyncio.run(render_shots(Path(args.out), args.site or None)):
            print(path)
        return 0
    if args.command == "bench":
        from halo.bench.env import run_env_bench

        return asyncio.run(run_env_bench(
            [int(n) for n in args.sessions.split(",") if n], args.steps, args.image_format, args.json
        ))
    if args.command == "protos":
        from halo.protogen import main as protogen

        return protogen(["--check"] if args.check else [])
    parser.error(f"unknown command {args.command}")
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
