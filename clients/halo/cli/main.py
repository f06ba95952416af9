"""`halo` command line: one module per subcommand (halo.cli.<name>), each with `add_parser`.

`halo --help` lists every subcommand with one line; docs/reference/cli.md (`halo docs cli`) every
flag. `serve`, `eval` and the launcher's `up`, `status`, `down`, `health`, `deploy` parse their own
arguments (PASSTHROUGH below); the others are parsed here.
"""

from __future__ import annotations

import argparse
import asyncio
import faulthandler
import signal
import sys
import threading

from halo.cli import bench, demo, protos, reference, runs, sites, tasks, train

# Subcommands that parse their own arguments: halo <name> [args...] -> module.main(args)
PASSTHROUGH = {
    "serve": "run one service: sites, env, reward, gateway, trainer",
    "eval": "evaluate a policy mode on tasks; compare, report, list evals",
    "up": "start the services as local processes",
    "status": "pids and health of what halo up started",
    "down": "stop what halo up started",
    "health": "health check of a service (exit 0 when serving)",
    "deploy": "render or check the generated deployment files",
}


def build_parser() -> argparse.ArgumentParser:
    """Every subcommand with its one-line help (`halo --help`); the passthrough ones parse the rest."""
    parser = argparse.ArgumentParser(prog="halo", description="HALO: online RL for browser agents",
                                     formatter_class=lambda prog: argparse.HelpFormatter(prog, max_help_position=20, width=120))
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, text in PASSTHROUGH.items():
        sub.add_parser(name, help=text)
    for module in (train, runs, demo, tasks, sites, bench, protos, reference):
        module.add_parser(sub)
    parser.set_defaults(top_parser=parser)   # halo docs cli documents this parser
    return parser


def dump_stacks(_signum: int = 0, _frame: object = None) -> None:
    """Print every thread's stack and, when an event loop runs in this thread, every asyncio task's
    stack to stderr: `kill -USR1 <pid>` shows where a halo process that does not answer is waiting."""
    faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
    try:
        tasks = asyncio.all_tasks(asyncio.get_running_loop())
    except RuntimeError:   # no loop runs in this thread
        return
    print(f"{len(tasks)} asyncio task(s):", file=sys.stderr)
    for task in tasks:   # by hand: Task.print_stack fails on frames without a line number (uvloop's)
        print(f"Stack for {task!r}:", file=sys.stderr)
        for frame in task.get_stack(limit=12):
            print(f"  File {frame.f_code.co_filename!r}, line {frame.f_lineno}, in {frame.f_code.co_name}", file=sys.stderr)
    sys.stderr.flush()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if hasattr(signal, "SIGUSR1") and threading.current_thread() is threading.main_thread():   # only there can it
        signal.signal(signal.SIGUSR1, dump_stacks)
    if argv[:1] == ["serve"]:
        from halo.cli.serve import main as serve_main

        return serve_main(argv[1:])
    if argv[:1] == ["eval"]:
        from halo.cli.eval import main as eval_main

        return eval_main(argv[1:])
    if argv[:1] and argv[0] in ("up", "down", "status", "health", "deploy"):
        from halo.cli.launcher import main as launcher_main

        return launcher_main(argv)
    args = build_parser().parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    raise SystemExit(main())
