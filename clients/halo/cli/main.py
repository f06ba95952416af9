"""`halo` command line: one module per subcommand (halo.cli.<name>), each with `add_parser`.

    halo train [--kind mcts] [--steps N ...]   GRPO or MCTS training (local services, or --submit to a trainer service)
    halo eval --mode M --tasks T   evaluate a mode on tasks; halo eval compare A B | report ID | list (halo.cli.eval)
    halo demo                      drive a session on the local playground through the env service
    halo serve NAME [flags]        run one service: sites, env, reward, gateway, trainer (`halo serve env --help`)
    halo tasks list [--site S]     the task registry
    halo tasks verify [--site S]   oracle / no-op / wrong attempts of replica tasks, scored by agisdk
    halo sites shots               screenshots of each replica's main pages
    halo bench env                 env service vs raw Playwright vs agisdk's harness: throughput, memory
    halo bench gateway             policy gateway overhead over calling its backend directly
    halo bench leak [--cycles N]   create/step/close cycles: memory growth, orphan pages/processes/sessions
    halo bench rollout             local_lora steps sampled with generate() and with vLLM: step time split, tokens/s
    halo bench clicks              a click on a native <select>: with Chromium's popup vs the env's, and a button
    halo protos [--check]          regenerate (or check) the gRPC stubs
    halo up | status | down        the services of deploy/services.yaml as local processes (halo.cli.launcher)
    halo health TARGET             gRPC (host:port) or HTTP (http://...) health check; exit 0 when serving
    halo deploy render [--check]   docker-compose.yml + prometheus.yml from deploy/services.yaml
    halo docs cli [--check]        docs/reference/cli.md from these parsers (halo.cli.reference)
"""

from __future__ import annotations

import argparse
import sys

from halo.cli import bench, demo, protos, reference, sites, tasks, train

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
    for module in (train, demo, tasks, sites, bench, protos, reference):
        module.add_parser(sub)
    parser.set_defaults(top_parser=parser)   # halo docs cli documents this parser
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
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
