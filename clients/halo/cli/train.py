"""`halo train`: run a training job locally (services started in this process) or on a trainer service.

Locally it hosts the run with the same job machinery as the trainer service (durable run folder,
checkpoints, resume), shows a progress bar with the latest metrics, and writes at the end:
    runs/<run_id>/metrics.jsonl   one line per step
    runs/<run_id>/curves.png      reward and success curves
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sys
from pathlib import Path

from rich.console import Console

from halo.cli.curriculum import OLD_SPELLINGS, SUITES, suite
from halo.cli.runs import follow_submitted, refusal, render_events
from halo.agent.grammar import action_regex
from halo.cli.flags import Spelling, deprecated_alias, track_typed, typed_flags
from halo.errors import FailedPrecondition, InvalidArgument, NotFound
from halo.runs.spec import RunSpec

console = Console()

# One spelling per name; the old ones still work, with a warning.
SUITE_SPELLING = Spelling("--suite", SUITES, OLD_SPELLINGS)
BACKEND_SPELLING = Spelling("--backend", ["embedded", "tinker", "local_lora"], {"local-lora": "local_lora"})


def _summary(rows: list[dict[str, float]], label: str = "greedy eval") -> None:
    """Before/after: did it learn?"""
    if not rows:
        return
    first, last = rows[0], rows[-1]
    for name, key in (("", "success_rate"), ("strict ", "success_rate_strict")):
        if key in last:
            console.print(f"training {name}success rate (sampled): step 1 {first.get(key, 0):.0%} -> step {last['step']} {last[key]:.0%}")
    evals = [r for r in rows if "eval_success_rate" in r]
    for name, key in (("success", "eval_success_rate"), ("strict success", "eval_success_rate_strict")):
        if f"{key}_untrained" in first:
            after = evals[-1].get(key, float("nan")) if evals else float("nan")
            console.print(f"{name}, {label}: untrained {first[f'{key}_untrained']:.0%} -> trained {after:.0%}")


def seeds_text(seeds: list[int]) -> str:
    """`seed 1001`, `seeds 1001-1004` (consecutive) or `seeds 3, 7`."""
    if len(seeds) == 1:
        return f"seed {seeds[0]}"
    if seeds == list(range(seeds[0], seeds[0] + len(seeds))):
        return f"seeds {seeds[0]}-{seeds[-1]}"
    return "seeds " + ", ".join(map(str, seeds))


def eval_label(spec: RunSpec) -> str:
    """What the run's greedy evaluation covers, in words for its plot and summary: the training
    tasks, on seeds it never trains on. Those seeds change the page layouts of HALO's playground
    tasks (held-out layouts); a REAL replica is the same whatever the seed, so there the
    evaluation replays the training tasks themselves."""
    tasks = len(spec.task_ids)
    noun = f"{tasks} training task{'s' if tasks != 1 else ''} × {seeds_text(spec.eval_seeds())}"
    if all(t.startswith("playground") for t in spec.task_ids):
        return f"greedy, {noun} (held-out layouts)"
    return f"greedy, the {noun} (REAL replicas: not held out)"


def sampled_label(spec: RunSpec) -> str:
    """What a step's sampled reward and success cover, for the plot: the step's episodes, on
    training seeds (GRPO: its groups; MCTS: the best path of each search)."""
    groups = spec.groups_per_batch
    if spec.kind == "mcts":
        return f"the best path of {groups} search{'es' if groups != 1 else ''} a step, on training seeds"
    return f"{groups} group{'s' if groups != 1 else ''} × {spec.group_size} episodes a step, on training seeds"


def tinker_route(spec: RunSpec) -> str:
    """The gateway's Tinker route a run samples through ("" when it samples no Tinker route):
    MCTS on Tinker always, GRPO on Tinker unless --tinker-sampling direct."""
    if spec.backend != "tinker":
        return ""
    if spec.kind == "mcts":
        from halo.trainers.mcts.tinker import route_for

        return route_for(spec)
    from halo.trainers.tinker_train import sampling_mode_for, tinker_route_for

    return tinker_route_for(spec) if sampling_mode_for(spec) == "gateway" else ""


def gateway_routes(spec: RunSpec) -> list[str]:
    """The gateway routes a local run needs: the embedded policy, plus the route it samples through
    (configs/gateway.yaml): a Tinker run's Tinker route (it refuses calls without TINKER_API_KEY),
    a local_lora run's vLLM route (`--route`, extra.serve_route)."""
    route = tinker_route(spec) or (str(spec.extra.get("serve_route") or "") if spec.backend == "local_lora" else "")
    return list(dict.fromkeys(["embedded", route])) if route else ["embedded"]


def local_gateway_config(spec: RunSpec):
    """configs/gateway.yaml with the run's Tinker route pointed at the run's own model and Tinker
    service (its model, extra.tinker_base_url, extra.tokenizer / image_processor / renderer), so
    that the local gateway samples the model the run trains. None: the YAML as it is."""
    route_name = tinker_route(spec)
    if not route_name:
        return None
    from halo.policy.config import DEFAULT_CONFIG_PATH, RouteConfig, load_gateway_config
    from halo.trainers.tinker_train import base_url_for, model_name_for

    config = load_gateway_config(DEFAULT_CONFIG_PATH)
    extra = spec.extra
    found = [r for r in config.routes if r.name == route_name and r.backend == "tinker"]
    route = found[0] if found else RouteConfig(name=route_name, backend="tinker", base_model=model_name_for(spec),
                                               api_key_env="TINKER_API_KEY")
    options = route.tinker.model_copy(update={
        k: v for k, v in {"service_url": base_url_for(spec) or "", "tokenizer": str(extra.get("tokenizer", "")),
                          "image_processor": str(extra.get("image_processor", "")),
                          "renderer": str(extra.get("renderer", ""))}.items() if v})
    route = route.model_copy(update={"base_model": model_name_for(spec), "tinker": options})
    routes = [r for r in config.routes if r.name != route_name] + [route]
    return config.model_copy(update={"routes": routes})


async def train_local(spec: RunSpec, runs_dir: Path, resume: str = "", env_target: str = "", gateway_target: str = "",
                      reward_target: str = "", token: str = "", tls_ca: str = "", total_steps: int = 0) -> int:
    """Host the run here: `spec`, or with `resume` that run of `runs_dir` (its stored spec, which
    `spec` then is; `total_steps` > 0 extends it). Services given as targets are used as they are
    (with `token` and, for TLS, `tls_ca`); the others start in this process."""
    from halo.cli.stack import LocalStack
    from halo.runtime.logging import configure_logging
    from halo.trainer.jobs import JobManager
    from halo.runs.context import ServiceTargets
    from halo.trainers.plots import plot_curves
    from halo.cli.registry import resolve_trainer

    from halo.cli.preflight import PreflightError, check_local_run

    if not resume:   # a resumed run keeps the spec it was started with
        try:
            check_local_run(spec, gateway_here=not gateway_target)
        except PreflightError as exc:
            print(f"halo train: {exc}", file=sys.stderr)
            return 2
    configure_logging("warning")  # the progress bar is the output; services only speak up when something is wrong
    here = [name for name, target in (("sites, env", env_target), ("reward", reward_target), ("gateway", gateway_target))
            if not target]
    with console.status(f"starting {', '.join(here) or 'no'} service(s){'' if env_target else ' (Chromium)'}…"):
        stack = await LocalStack(
            env_overrides={"pool_size": max(8, spec.group_size), "acquire_timeout_s": 60}, with_env=not env_target,
            with_reward=not reward_target, with_gateway=not gateway_target,
            gateway_overrides={"only_routes": gateway_routes(spec)}, gateway_config=local_gateway_config(spec),
        ).__aenter__()
    try:
        for name, target in (("env", env_target), ("reward", reward_target), ("gateway", gateway_target)):
            if target:
                console.print(f"{name}: {target}")
        targets = ServiceTargets(env=env_target or stack.env_target, reward=reward_target or stack.reward_target,
                                 gateway=gateway_target or stack.gateway_target, token=token, tls_ca=tls_ca)
        jobs = JobManager(runs_dir, targets, resolve_trainer, auto_resume=False)
        record = await (jobs.resume(resume, total_steps=total_steps) if resume else jobs.start_run(spec))
        console.print(f"run [bold]{record.run_id}[/bold] ({record.spec.kind}/{record.spec.backend}) on {', '.join(record.spec.task_ids)}")

        async def events():
            async for e in jobs.watch(record.run_id):
                yield e["type"], e

        run_dir = jobs.store.run_dir(record.run_id)

        def write_curves() -> list[dict]:
            rows = jobs.store.metrics(record.run_id)
            if rows:
                png = plot_curves(rows, run_dir / "curves.png", title=f"{record.spec.name} ({record.run_id})",
                                  eval_label=eval_label(record.spec), sampled=sampled_label(record.spec))
                console.print(f"curves: {png}")
            console.print(f"metrics: {run_dir / 'metrics.jsonl'}")
            return rows

        try:
            final = await render_events(events(), record.spec.total_steps)
        except asyncio.CancelledError:   # Ctrl-C: asyncio.run cancels this task; end the run first, then the services
            await jobs.abort()
            rows = write_curves()
            console.print(f"[yellow]interrupted: run {record.run_id} keeps its {len(rows)} completed step(s) "
                          f"(checkpoints in {run_dir / 'checkpoints'}); continue it with "
                          f"halo train --resume {record.run_id}{'' if runs_dir == Path('runs') else f' --runs-dir {runs_dir}'}[/yellow]")
            raise
        rows = write_curves()
        console.print(final)
        _summary(rows, eval_label(record.spec))
        return 0 if jobs.get(record.run_id).state.value == "succeeded" else 1
    finally:
        await stack.__aexit__(None, None, None)


async def train_remote(spec: RunSpec, target: str, *, token: str = "", tls_ca: str = "", reconnect_s: float = 600.0) -> int:
    """Start `spec` on the trainer service at `target` and follow it until it ends."""
    from halo.client.trainer import TrainerClient

    async with TrainerClient(target, token=token, tls_ca=tls_ca) as client:
        run = await client.start_run(spec)
        console.print(f"submitted run [bold]{run.run_id}[/bold] to {target}; it keeps going if you disconnect")
        return await follow_submitted(client, run, target, reconnect_s=reconnect_s)


async def resume_remote(args: argparse.Namespace) -> int:
    """`--resume RUN_ID --submit HOST:PORT`: continue the service's run with the spec it stores (the
    flags typed may repeat it, not change it; --steps extends it), then follow it until it ends."""
    from halo.client.trainer import TrainerClient

    target = args.submit
    async with TrainerClient(target, token=args.token, tls_ca=args.tls_ca) as client:
        try:
            stored = await client.get_run(args.resume)
            problem = resume_conflict(args, RunSpec.from_proto(stored.spec))
            if problem:
                print(f"halo train: {problem}", file=sys.stderr)
                return 2
            run = await client.resume_run(args.resume, total_steps=args.steps or 0)
        except (FailedPrecondition, InvalidArgument, NotFound) as exc:   # unknown, running, or finished
            print(f"halo train: --resume {args.resume}: {refusal(exc)} (trainer service {target}; "
                  f"halo runs list --trainer {target} lists its runs)", file=sys.stderr)
            return 2
        console.print(f"resumed run [bold]{run.run_id}[/bold] on {target} at step {run.step}/{run.spec.total_steps}; "
                      "it keeps going if you disconnect")
        return await follow_submitted(client, run, target, reconnect_s=args.reconnect_s)


def resume_local(args: argparse.Namespace) -> int:
    """`--resume RUN_ID`: continue the run of --runs-dir with the spec it stores (its backend,
    routes, tasks, ...: the flags typed may repeat it, not change it; --steps extends it)."""
    from halo.trainer.jobs import check_run_id
    from halo.trainer.store import RunState, RunStore

    runs_dir = Path(args.runs_dir)
    try:
        record = RunStore(runs_dir).load(check_run_id(args.resume))
    except InvalidArgument as exc:
        print(f"halo train: --resume: {exc}", file=sys.stderr)
        return 2
    if record is None:
        print(f"halo train: --resume {args.resume}: no such run in {runs_dir} (its folders are the run ids)", file=sys.stderr)
        return 2
    problem = resume_conflict(args, record.spec)
    if not problem and args.steps is not None and args.steps < record.step:
        problem = f"--steps {args.steps} is below the {record.step} steps run {args.resume} has completed"
    if not problem and record.state is RunState.SUCCEEDED and (args.steps or 0) <= record.spec.total_steps:
        problem = (f"--resume {args.resume}: the run already finished all {record.spec.total_steps} steps "
                   "(give --steps N with more to extend it)")
    if problem:
        print(f"halo train: {problem}", file=sys.stderr)
        return 2
    try:
        return asyncio.run(train_local(record.spec, runs_dir, resume=args.resume, total_steps=args.steps or 0,
                                       env_target=args.env, gateway_target=args.gateway, reward_target=args.reward,
                                       token=args.token, tls_ca=args.tls_ca))
    except KeyboardInterrupt:   # train_local said what was kept and how to continue
        return 130


#: Flags a resumed run may be given whatever its spec: where it runs and its services are, and
#: --steps (to extend it). Any other flag typed must repeat what the run was started with.
RESUME_FREE = frozenset({"resume", "runs_dir", "submit", "env", "reward", "gateway", "token", "tls_ca", "reconnect_s", "steps"})


def _route_of(spec: RunSpec) -> str:
    if spec.backend == "embedded":
        return spec.model
    return str(spec.extra.get("route" if spec.backend == "tinker" else "serve_route", ""))


#: A flag's value as the stored spec of a run says it (for the flags that can be compared).
STORED_VALUE = {
    "kind": lambda s: s.kind, "backend": lambda s: s.backend, "name": lambda s: s.name, "tasks": lambda s: s.task_ids,
    "suite": lambda s: s.task_ids, "group_size": lambda s: s.group_size, "groups_per_batch": lambda s: s.groups_per_batch,
    "lr": lambda s: s.learning_rate, "temperature": lambda s: s.temperature, "max_tokens": lambda s: s.max_tokens,
    "lora_rank": lambda s: s.lora_rank, "max_actions": lambda s: s.max_steps, "loss_fn": lambda s: s.loss_fn,
    "seed": lambda s: s.seed, "route": _route_of, "base_model": lambda s: "" if s.backend == "embedded" else s.model,
    "observation": lambda s: "text" if s.extra.get("screenshots") is False else "screenshot",
    "success": lambda s: s.extra.get("success", "agisdk"), "eval_every": lambda s: s.extra.get("eval_every"),
    "update_epochs": lambda s: s.extra.get("update_epochs"), "entropy_coef": lambda s: s.extra.get("entropy_coef"),
    "max_staleness": lambda s: int(s.extra.get("max_staleness", 0) or 0),
    "stale_rule": lambda s: s.extra.get("stale_rule", "drop"), "simulations": lambda s: s.extra.get("simulations"),
    "children": lambda s: s.extra.get("children"), "widen_every": lambda s: s.extra.get("widen_every"),
    "device": lambda s: s.extra.get("device"), "tinker_sampling": lambda s: s.extra.get("tinker_sampling", ""),
    "sample_timeout_s": lambda s: s.extra.get("sample_timeout_s", 0.0),
}
#: A typed flag's value in the spec's terms, where the flag is not the field itself.
TYPED_VALUE = {"tasks": lambda a: [t for t in a.tasks.split(",") if t], "suite": lambda a: suite(a.suite).select()}


def _same(typed: object, stored: object) -> bool:
    """Equal, floats within float32 rounding (a spec that went through the trainer service's proto)."""
    numbers = (int, float)
    if isinstance(typed, numbers) and isinstance(stored, numbers) and not isinstance(typed, bool):
        return math.isclose(typed, stored, rel_tol=1e-6)
    return typed == stored


def resume_conflict(args: argparse.Namespace, stored: RunSpec) -> str:
    """Why the flags typed with --resume cannot apply to the run's stored spec ("" when they can):
    a resumed run keeps the spec it was started with (its backend, routes, tasks, group size, ...)."""
    keep = "a resumed run keeps the spec it was started with; only --steps may change, to extend it"
    for dest in sorted(typed_flags(args) - RESUME_FREE):
        flag = "--" + dest.replace("_", "-")
        if dest not in STORED_VALUE:
            return f"{flag} cannot be given with --resume: {keep}"
        typed = TYPED_VALUE[dest](args) if dest in TYPED_VALUE else getattr(args, dest)
        started = STORED_VALUE[dest](stored)
        if not _same(typed, started):
            shown = getattr(args, dest)
            was = ",".join(started) if isinstance(started, list) else started
            return f"{flag} {shown} contradicts run {args.resume}, started with {was if was not in (None, '') else 'none'}: {keep}"
    return ""


# What the embedded quickstart needs, measured (docs/benchmarks.md, "The playground run"): several clipped passes over
# each batch, a small entropy bonus, and less pay for novelty — with the reference 0.2, wandering
# through five new states is worth as much as solving a playground task.
EMBEDDED_DEFAULTS = {"lr": 2e-2, "loss_fn": "ppo", "update_epochs": 4, "entropy_coef": 0.01, "temperature": 1.0,
                     "reward_overrides": {"novelty_bonus": 0.05}}
# Qwen3-VL on Tinker or a local LoRA: the reference settings (seeds/000: lr 1e-6, temperature 0.7)
OTHER_DEFAULTS = {"lr": 1e-6, "loss_fn": "importance_sampling", "update_epochs": 1, "entropy_coef": 0.0, "temperature": 0.7,
                  "reward_overrides": {}}


def _json_object(text: str, flag: str) -> dict:
    try:
        values = json.loads(text) if text else {}
    except ValueError as exc:
        raise SystemExit(f"halo train: {flag}: {exc}") from None
    if not isinstance(values, dict):
        raise SystemExit(f"halo train: {flag}: a JSON object is expected, got {text!r}")
    return values


#: The reward weight that makes the success bonus follow strict success (halo.reward.config.Weights).
STRICT_SUCCESS_WEIGHT = "strict_success"
SUCCESS_CHOICES = ("agisdk", "strict")
SUCCESS_HELP = ("which verdict pays the success bonus: agisdk (REAL's eval scripts, comparable with REAL's numbers) or "
                "strict (agisdk AND HALO's per-task checks, configs/strict_checks.yaml); both are always reported")


def success_overrides(success: str, overrides: dict[str, float]) -> dict[str, float]:
    """The run's reward overrides with the success verdict it trains (or is scored) on."""
    if success not in SUCCESS_CHOICES:
        raise SystemExit(f"--success: {success!r} is not one of {', '.join(SUCCESS_CHOICES)}")
    return {**overrides, STRICT_SUCCESS_WEIGHT: 1.0} if success == "strict" else dict(overrides)


def _reward_overrides(text: str) -> dict[str, float]:
    try:
        return {str(k): float(v) for k, v in _json_object(text, "--reward-overrides").items()}
    except (ValueError, TypeError) as exc:
        raise SystemExit(f"halo train: --reward-overrides: {exc} (a JSON object of name -> number is expected)") from None


def _task_ids(args: argparse.Namespace) -> tuple[list[str], dict]:
    """The run's tasks (--tasks, or the --suite's rule) and the suite's own settings (none for --tasks)."""
    if args.tasks:
        return [t for t in args.tasks.split(",") if t], {}
    chosen = suite(args.suite)
    tasks = chosen.select()
    console.print(f"suite [bold]{chosen.name}[/bold]: {chosen.rule}\n  {len(tasks)} tasks: {', '.join(tasks)}")
    return tasks, chosen.defaults


def _model_flags(args: argparse.Namespace) -> tuple[str, dict]:
    """What --route and --base-model mean for the run's backend, as the run spec's `model` and
    `extra`: the route an embedded run samples from; a Tinker run's base model (and the gateway
    route it samples through); a local_lora run's base-model folder (and the vLLM route it samples
    through). A flag the backend has no use for is refused."""
    if args.model:   # the old, overloaded flag: its meaning follows the backend
        if args.backend == "embedded" or (args.backend == "tinker" and "/" not in args.model):
            new = "--route"
        else:
            new = "--base-model"
        from halo.cli.flags import warn

        warn(f"--model is deprecated; with --backend {args.backend} it means {new} {args.model}")
        setattr(args, new.removeprefix("--").replace("-", "_"), getattr(args, new.removeprefix("--").replace("-", "_")) or args.model)
    if args.backend == "embedded" and args.base_model:
        raise SystemExit("halo train: --base-model has no meaning with --backend embedded (its policy is built in)")
    extra: dict = {}
    if args.backend == "embedded":
        return args.route or "embedded", extra
    if args.route:
        extra["route" if args.backend == "tinker" else "serve_route"] = args.route
    return args.base_model or "embedded", extra


#: `--eval-every` when not given: every 5 steps, except on local_lora, which has no in-run evaluation
#: (evaluate its checkpoints with `halo eval`).
DEFAULT_EVAL_EVERY = 5


def _eval_every(args: argparse.Namespace) -> int:
    if args.eval_every is None:
        return 0 if args.backend == "local_lora" else DEFAULT_EVAL_EVERY
    return args.eval_every


#: RunSpec's fields as `halo train` spells them: its errors name the flag the user typed.
SPEC_FLAGS = {"total_steps": "--steps", "max_steps": "--max-actions", "group_size": "--group-size",
              "groups_per_batch": "--groups-per-batch",
              "learning_rate": "--lr", "temperature": "--temperature", "task_ids": "--tasks",
              "reward_overrides": "--reward-overrides", "loss_fn": "--loss-fn"}


def flag_named(message: str) -> str:
    """A RunSpec validation message with its field replaced by the flag that sets it."""
    field, _, rest = message.partition(" ")
    return f"{SPEC_FLAGS[field]} {rest}" if field in SPEC_FLAGS else message


def unknown_task_refs(refs: list[str]) -> list[str]:
    """The refs that are neither a task id nor a site of the local task registry."""
    from halo.tasks.registry import default_registry

    tasks = default_registry().list()
    known = {t.id for t in tasks} | {t.site for t in tasks} | {"all"}
    return [r for r in refs if r not in known]


def target_problem(args: argparse.Namespace) -> str:
    """Why the run's targets (--submit, --env, --reward, --gateway, --tls-ca) do not go together ("" when they do)."""
    if args.env and args.submit:
        return "--env is for a local run; a trainer service uses its own env target (HALO_TRAINER_ENV_TARGET)"
    for flag, value in (("--gateway", args.gateway), ("--reward", args.reward)):
        if value and args.submit:
            return f"{flag} is for a local run; a trainer service uses its own targets"
    if args.tls_ca and not args.submit and not (args.env and args.reward and args.gateway):
        return ("--tls-ca talks TLS to every service of the run, and the services started here serve plaintext: "
                "give --env, --reward and --gateway too (or --submit)")
    if args.env:
        from halo.client.fleet import fleet_members, is_fleet_target

        try:
            if is_fleet_target(args.env):
                fleet_members(args.env)
        except ValueError as exc:
            return f"--env: {exc}"
    return ""


def run(args: argparse.Namespace) -> int:
    problem = target_problem(args)
    if problem:
        print(f"halo train: {problem}", file=sys.stderr)
        return 2
    if args.resume:   # the run's stored spec, not these flags' defaults
        return asyncio.run(resume_remote(args)) if args.submit else resume_local(args)
    defaults = EMBEDDED_DEFAULTS if args.backend == "embedded" else OTHER_DEFAULTS
    task_ids, suite_defaults = _task_ids(args)
    model, model_extra = _model_flags(args)
    spec = RunSpec(
        name=args.name, kind=args.kind, backend=args.backend, mode=args.backend, model=model,
        task_ids=task_ids, group_size=args.group_size,
        groups_per_batch=args.groups_per_batch or suite_defaults.get("groups_per_batch", 4),
        total_steps=args.steps if args.steps is not None else suite_defaults.get("steps", 20),   # --steps 0 stays an error
        learning_rate=args.lr or defaults["lr"],
        temperature=defaults["temperature"] if args.temperature is None else args.temperature, max_tokens=args.max_tokens,
        lora_rank=args.lora_rank,
        max_steps=args.max_actions or suite_defaults.get("max_steps", 5),
        loss_fn=args.loss_fn or defaults["loss_fn"], seed=args.seed,
        reward_overrides=(_reward_overrides(args.reward_overrides) if args.reward_overrides is not None
                          else defaults["reward_overrides"] | suite_defaults.get("reward_overrides", {})),
        extra={"eval_every": _eval_every(args), "update_epochs": args.update_epochs or defaults["update_epochs"],
               "entropy_coef": args.entropy_coef if args.entropy_coef is not None else defaults["entropy_coef"],
               "max_staleness": args.max_staleness, "stale_rule": args.stale_rule},
    )
    spec.extra |= model_extra
    spec.reward_overrides = success_overrides(args.success, spec.reward_overrides)
    spec.extra["success"] = args.success
    if "eval_seeds" in suite_defaults and spec.extra["eval_every"]:
        spec.extra["eval_seeds"] = suite_defaults["eval_seeds"]
    if args.backend == "embedded":   # a suite's knobs are the embedded policy's (relevance_prior)
        spec.extra |= suite_defaults.get("extra", {})
    if args.tinker_sampling:
        spec.extra["tinker_sampling"] = args.tinker_sampling
    if args.sample_timeout_s < 0:
        print("halo train: --sample-timeout-s must be a positive number of seconds", file=sys.stderr)
        return 2
    if args.sample_timeout_s:
        spec.extra["sample_timeout_s"] = args.sample_timeout_s
    if args.constrain_actions:
        if args.backend != "local_lora":
            print("halo train: --constrain-actions needs --backend local_lora (vLLM's structured outputs)", file=sys.stderr)
            return 2
        spec.extra["action_regex"] = action_regex() if args.constrain_actions == "grammar" else args.constrain_actions
    if args.device:
        if args.backend != "local_lora":
            print(f"halo train: --device places the local_lora learner; --backend {args.backend} has none here", file=sys.stderr)
            return 2
        spec.extra["device"] = args.device
    if args.observation == "text":   # every backend reads extra.screenshots (the embedded policy never looks at pixels)
        spec.extra["screenshots"] = False
    if args.kind == "mcts":  # one tree per task per step (group_size unused); depth = --max-actions
        spec.extra |= {"simulations": args.simulations, "children": args.children, "widen_every": args.widen_every}
    spec.extra |= _json_object(args.extra, "--extra")   # last: the user's word on any trainer knob
    try:
        spec.validate()
    except ValueError as exc:
        print(f"halo train: {flag_named(str(exc))}", file=sys.stderr)
        return 2
    if not args.env and not args.submit:   # the tasks of an env service started here
        unknown = unknown_task_refs(spec.task_ids)
        if unknown:
            print(f"halo train: --tasks: unknown task or site {', '.join(map(repr, unknown))} (`halo tasks list` lists them)",
                  file=sys.stderr)
            return 2
    if spec.backend == "tinker" and spec.kind == "grpo":
        from halo.trainers.tinker_train import sampling_mode_for

        try:
            sampling_mode_for(spec)
        except ValueError as exc:
            print(f"halo train: {exc}", file=sys.stderr)
            return 2
    if args.submit:
        return asyncio.run(train_remote(spec, args.submit, token=args.token, tls_ca=args.tls_ca,
                                        reconnect_s=args.reconnect_s))
    try:
        return asyncio.run(train_local(spec, Path(args.runs_dir), env_target=args.env,
                                       gateway_target=args.gateway, reward_target=args.reward, token=args.token,
                                       tls_ca=args.tls_ca))
    except KeyboardInterrupt:   # train_local said what was kept and how to continue
        return 130

def add_parser(sub) -> None:
    train = track_typed(sub.add_parser(
        "train", help="train a policy with GRPO or MCTS, here or on a trainer service",
        description="Train a policy with GRPO or MCTS: locally (services started in this process), or on a trainer "
                    "service with --submit. --resume continues a run with the spec it was started with."))
    train.add_argument("--kind", default="grpo", choices=["grpo", "mcts"], help="grpo, or mcts: tree search + step-level DPO (Agent Q)")
    train.add_argument("--suite", default="playground-easy", choices=sorted(SUITES), type=SUITE_SPELLING,
                       help="the tasks to learn on, chosen by a printed rule (halo.cli.curriculum): playground-easy "
                            "(the quick demo) or real-easy (the REAL v2 replica tasks with the shortest oracles)")
    train.add_argument("--tasks", default="", help="comma-separated task ids or site names (instead of --suite)")
    train.add_argument("--backend", default="embedded", choices=["embedded", "tinker", "local_lora"], type=BACKEND_SPELLING,
                       help="who learns: the embedded CPU policy, Tinker (TINKER_API_KEY), or a PEFT LoRA on a local checkpoint")
    route = train.add_argument("--route", default="", metavar="NAME",
                       help="policy-gateway route the rollouts sample from (default: embedded; tinker: extra.route, "
                            "qwen3vl-tinker; local_lora: none, in-process sampling, e.g. qwen3vl for vLLM)")
    base_model = train.add_argument("--base-model", default="", metavar="MODEL",
                       help="the base model the run trains: --backend tinker: its name on Tinker (default "
                            "Qwen/Qwen3-VL-30B-A3B-Instruct; a local Tinker-API server: its model folder); "
                            "--backend local_lora: the Qwen3-VL model folder the LoRA trains on (or extra.model_dir)")
    # The old --model meant a route or a base model; it still works, its meaning taken from --backend (_model_flags).
    train.add_argument("--model", default="", help=argparse.SUPPRESS)
    for action in (route, base_model):
        action.old_spellings = ["--model"]   # type: ignore[attr-defined]  # listed by halo docs cli
    deprecated_alias(train, "--checkpoint", base_model)   # where it named local_lora's base-model folder
    train.add_argument("--steps", type=int, default=None, help="training steps (default: the suite's; 20, real-easy 26)")
    train.add_argument("--group-size", type=int, default=8, help="episodes per group (one task and layout seed)")
    train.add_argument("--groups-per-batch", type=int, default=0, help="tasks (groups) per step (default: the suite's, 4)")
    train.add_argument("--lr", type=float, default=0.0, help="learning rate (backend default when 0: 2e-2 embedded, 1e-6 Tinker/LoRA)")
    train.add_argument("--temperature", type=float, default=None,
                       help="sampling temperature (default: 0.7 for Qwen3-VL on Tinker or local_lora, the reference "
                            "settings; 1.0 for the embedded head, which starts near uniform)")
    train.add_argument("--observation", default="screenshot", choices=["screenshot", "text"],
                       help="what the policy sees: the screenshot + AXTree, or text only (AXTree; the env skips the "
                            "screenshot; cheaper, and what a text model such as a local Tinker-API server can train)")
    train.add_argument("--max-tokens", type=int, default=300, help="completion cap per action (reference: 300)")
    train.add_argument("--lora-rank", type=int, default=32, help="LoRA rank (Tinker, local_lora; reference: 32)")
    train.add_argument("--device", choices=["cpu", "cuda"], default=None,
                       help="--backend local_lora: where the learner runs (default: cuda when torch sees a GPU, else cpu)")
    max_actions = train.add_argument("--max-actions", type=int, default=0, metavar="N",
                                     help="actions per episode at most (default: the suite's, 5; real-easy 4); mcts: the tree's depth")
    deprecated_alias(train, "--max-steps", max_actions)
    train.add_argument("--loss-fn", default="", choices=["importance_sampling", "ppo", "cispo", "dro"],
                       help="default: ppo for the embedded policy (several passes per batch), importance_sampling otherwise")
    train.add_argument("--seed", type=int, default=0, help="the run's seed: which tasks, layouts and samples each step draws")
    train.add_argument("--eval-every", type=int, default=None, help="greedy evaluation of the training tasks on unseen seeds every N steps (default 5, 0: never; "
                            "new layouts on the playground, the same pages on a REAL replica; local_lora has none: "
                            "evaluate its checkpoints with halo eval)")
    train.add_argument("--update-epochs", type=int, default=0, help="gradient passes over each step's batch (default: 4 embedded, 1 otherwise)")
    train.add_argument("--success", default="agisdk", choices=SUCCESS_CHOICES, help=SUCCESS_HELP)
    train.add_argument("--reward-overrides", default=None, metavar="JSON",
                       help='reward weights for this run by configs/rewards.yaml name, e.g. \'{"loop_penalty": -1.0, '
                            '"milestone:playground.name_saved": 0.5}\' (embedded default: {"novelty_bonus": 0.05}; \'{}\': none)')
    train.add_argument("--entropy-coef", type=float, default=None, help="entropy bonus (embedded learner; default 0.01)")
    train.add_argument("--max-staleness", type=int, default=0, metavar="K",
                       help="asynchronous GRPO: rollouts of the next K steps run while a step updates (0: synchronous)")
    train.add_argument("--stale-rule", default="drop", choices=["drop", "correct"],
                       help="a group sampled more than K versions behind the learner: drop it, or keep it with the "
                            "importance ratio correcting it")
    train.add_argument("--simulations", type=int, default=50, help="mcts: simulations per search")
    train.add_argument("--children", type=int, default=5, help="mcts: candidate actions sampled per expansion (K)")
    train.add_argument("--widen-every", type=int, default=10, help="mcts: K more candidates every N visits of a node (0: never)")
    train.add_argument("--extra", default="", metavar="JSON",
                       help='trainer-specific settings merged into the run spec\'s extra, e.g. \'{"env_retries": 5, '
                            '"env_wait_s": 600}\' (GRPO), \'{"model_dir": "/models/qwen3vl", "serve_route": "qwen3vl"}\' '
                            '(local_lora), \'{"dpo_beta": 0.2, "critic": "gpt"}\' (MCTS)')
    train.add_argument("--env", default="", metavar="TARGET",
                       help="use this env service instead of starting one here: host:port, or a fleet of replicas "
                            "(host:port,host:port or fleet://name:port, re-resolved every 5 s)")
    train.add_argument("--reward", default="", metavar="HOST:PORT",
                       help="use this reward service instead of starting one here")
    train.add_argument("--gateway", default="", metavar="HOST:PORT",
                       help="use this policy gateway instead of starting one here")
    train.add_argument("--tinker-sampling", default="", choices=["direct", "gateway"],
                       help="--backend tinker: sample the rollouts through the policy gateway's Sample on its tinker "
                            "route (gateway, the default: its limits, retries, metrics and raw text for every sample; "
                            "docs/benchmarks.md: the measured cost) or with the Tinker SDK's SamplingClient (direct; the default "
                            "with --max-staleness)")
    sample_timeout = train.add_argument("--sample-timeout-s", type=float, default=0.0, metavar="S",
                       help="deadline of each policy-gateway call of a Tinker or local-LoRA run (default 600 s Tinker, "
                            "300 s local LoRA; the route's own timeout and retries run inside it): raise it for a backend "
                            "whose first samples compile, such as a JAX Tinker-API server on CPU")
    deprecated_alias(train, "--sample-timeout", sample_timeout)
    train.add_argument("--constrain-actions", nargs="?", const="grammar", default="", metavar="REGEX",
                       help="--backend local_lora: vLLM samples every action within a grammar (structured outputs): "
                            "Qwen3-VL's computer_use action grammar (halo.agent.grammar) without a value, this regex "
                            "with one. The learner applies the same mask, so it scores the distribution vLLM sampled "
                            "(docs/guides/local-lora-vllm.md)")
    train.add_argument("--runs-dir", default="runs", help="the folder holding every local run (one subfolder each)")
    train.add_argument("--name", default="", help="the run's name, unique among the runs (default: <kind>-<run_id>)")
    train.add_argument("--submit", default="", metavar="HOST:PORT", help="run on this trainer service instead of locally")
    train.add_argument("--token", default="", help="bearer token of the running services (--env, --reward, --gateway, --submit)")
    train.add_argument("--tls-ca", default="", metavar="PEM",
                       help="root certificate to trust: talk TLS to the running services (a local run then needs "
                            "--env, --reward and --gateway: the services started here serve plaintext)")
    train.add_argument("--reconnect-s", type=float, default=600.0, metavar="S",
                       help="--submit: when the trainer service goes away, wait this long for it to come back and follow the run again")
    train.add_argument("--resume", default="", metavar="RUN_ID",
                       help="continue a run from its last checkpoint: one of --runs-dir, or with --submit one of that "
                            "trainer service (halo runs list). It keeps the spec it was started with: other flags may "
                            "repeat it, not change it, except --steps N, which extends it to N steps")
    train.set_defaults(run=run)
