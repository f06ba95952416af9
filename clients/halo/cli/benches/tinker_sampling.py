"""`halo bench tinker-sampling`: what sampling a Tinker run's rollouts through the gateway costs
over the Tinker SDK's own SamplingClient, per sample.

One run against one Tinker-API server (Tinker itself, or a local SkyRL server:
`make test-tinker-server`'s harness, see docs/guides/tinker.md), the same sampler weights (a LoRA saved to a
`tinker://` path), the same rendered prompt, calls in pairs that alternate which path goes first
(direct-gateway, gateway-direct, ...) so that machine load hits both paths alike:

- direct: tinker-cookbook's `TinkerTokenCompleter` over a `SamplingClient` of that path, what
  `--tinker-sampling direct` rolls out with;
- gateway: `GatewayTokenCompleter` (`halo.trainers.tinker_gateway`), what `--tinker-sampling
  gateway` rolls out with: a gRPC Sample with the token prompt to a gateway started here, whose
  tinker route samples the same path (LoadAdapter) through its own SDK client.

Reported: the medians, the paired difference, and the gateway's own time (client-observed time
minus the backend time the gateway reports) as a share of a direct sample. Target: <= 5%.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from halo.cli.benches.gateway import PathTiming, _timing

TARGET_OVERHEAD = 0.05
ROUTE = "tinker-bench"


@dataclass
class TinkerSamplingResult:
    server: str
    model: str
    prompt_tokens: int
    max_tokens: int
    direct: PathTiming
    gateway: PathTiming
    paired_difference_ms: float   # median gateway - median direct
    gateway_internal_ms: float    # median (gateway-path time - backend time the gateway reports)
    overhead_fraction: float      # gateway_internal_ms / median direct
    load_average: list[float]
    meets_target: bool
    direct_s: list[float]          # every sample, in order (pairs alternate which path went first)
    gateway_s: list[float]


def bench_prompt(renderer, elements: int):
    """A text observation (AXTree, no screenshot) of a page with `elements` rows, rendered as the
    Tinker envs render it (`tinker_env.render_observation`)."""
    from halo.agent.context import PageView, PolicyContext
    from halo.agent.prompt import PromptOptions
    from halo.trainers.tinker_env import render_observation

    rows = [f'[{i}] {("link", "button", "textbox", "heading")[i % 4]} "Item {i} of the catalogue"' for i in range(elements)]
    page = PageView(axtree="\n".join(rows), url="http://127.0.0.1:8100/playground/")
    ctx = PolicyContext(goal='Sign up for the newsletter with "bob@example.com".', page=page)
    model_input, _ = render_observation(renderer, ctx, PromptOptions(include_screenshot=False))
    return model_input


async def run_tinker_sampling_bench(tinker_url: str, model: str, requests: int = 20, max_tokens: int = 24,
                                    elements: int = 200, warmup: int = 3, json_path: str = "") -> int:
    import tinker
    from tinker_cookbook.completers import TinkerTokenCompleter

    from halo.client.policy import PolicyClient
    from halo.policy.config import GatewayConfig, GatewaySettings, RouteConfig
    from halo.policy.server import build_service
    from halo.runtime.server import start_service
    from halo.trainers.tinker_env import load_renderer
    from halo.trainers.tinker_gateway import GatewaySampling, save_sampler_weights

    os.environ.setdefault("TINKER_API_KEY", "tml-halo-bench")   # a local server does not check it; the SDK wants one
    renderer = load_renderer("qwen3_vl_instruct", model, model, model)
    prompt = bench_prompt(renderer, elements)
    stop = renderer.get_stop_sequences()
    print(f"prompt: {prompt.length} tokens; saving sampler weights on {tinker_url} ...", flush=True)
    service = tinker.ServiceClient(base_url=tinker_url)
    training = await service.create_lora_training_client_async(base_model=model, rank=8)
    path = await save_sampler_weights(training, "halo-bench-sampling", None)
    direct = TinkerTokenCompleter(await service.create_sampling_client_async(model_path=path), max_tokens=max_tokens)

    route = RouteConfig(name=ROUTE, backend="tinker", base_model=model, api_key_env="TINKER_API_KEY", max_tokens=max_tokens,
                        timeout_s=600, retries=0, tinker={"tokenizer": model, "service_url": tinker_url})
    settings = GatewaySettings(port=0, metrics_port=-1)
    running = await start_service(build_service(settings, config=GatewayConfig(routes=[route])), settings)
    direct_s, gateway_s, internal_s = [], [], []
    try:
        async with PolicyClient(running.target, timeout_s=600) as gateway:
            sampling = GatewaySampling(gateway, ROUTE, "bench")
            sampling.record(direct.sampling_client, path, 0)
            through = sampling.completer(direct.sampling_client, max_tokens)
            for i in range(warmup):   # SkyRL compiles its sampler for new shapes on the first calls
                await direct(prompt, stop)
                await through(prompt, stop)
                print(f"warm-up {i + 1}/{warmup}", flush=True)
            for i in range(requests):
                # which path goes first alternates: a server still busy after one call slows the next alike
                for first in ((True, False) if i % 2 == 0 else (False, True)):
                    if first:
                        started = time.perf_counter()
                        await direct(prompt, stop)
                        direct_s.append(time.perf_counter() - started)
                    else:
                        before = _backend_seconds(ROUTE)
                        started = time.perf_counter()
                        await through(prompt, stop)
                        gateway_s.append(time.perf_counter() - started)
                        internal_s.append(gateway_s[-1] - (_backend_seconds(ROUTE) - before))
                print(f"{i + 1}/{requests}: direct {direct_s[-1] * 1e3:.0f} ms, gateway {gateway_s[-1] * 1e3:.0f} ms", flush=True)
            await sampling.close()
    finally:
        await running.stop(grace=1.0)
    d, g = _timing(direct_s), _timing(gateway_s)
    internal_ms = statistics.median(internal_s) * 1e3
    result = TinkerSamplingResult(
        server=tinker_url, model=model, prompt_tokens=prompt.length, max_tokens=max_tokens, direct=d, gateway=g,
        paired_difference_ms=g.median_ms - d.median_ms, gateway_internal_ms=internal_ms,
        overhead_fraction=internal_ms / d.median_ms, load_average=[round(x, 2) for x in os.getloadavg()],
        meets_target=internal_ms / d.median_ms <= TARGET_OVERHEAD, direct_s=direct_s, gateway_s=gateway_s,
    )
    print(f"server: {tinker_url} ({model}); prompt {prompt.length} tokens, max_tokens {max_tokens}; "
          f"load average now {result.load_average}")
    print(f"direct  : median {d.median_ms:8.1f} ms  mean {d.mean_ms:8.1f} ms  p90 {d.p90_ms:8.1f} ms  ({d.calls} samples)")
    print(f"gateway : median {g.median_ms:8.1f} ms  mean {g.mean_ms:8.1f} ms  p90 {g.p90_ms:8.1f} ms  ({g.calls} samples)")
    print(f"overhead: {internal_ms:.2f} ms per sample outside the backend call (gRPC, token prompt, decode, parse, limits) = "
          f"{100 * result.overhead_fraction:.2f}% of a direct sample (target <= {100 * TARGET_OVERHEAD:.0f}%: "
          f"{'met' if result.meets_target else 'NOT met'}); median gateway - median direct: {result.paired_difference_ms:+.1f} ms")
    if json_path:
        Path(json_path).write_text(json.dumps(asdict(result), indent=2))
    return 0 if result.meets_target else 1


def _backend_seconds(route: str) -> float:
    """The gateway's total backend time for the route so far (its halo_gateway_backend_seconds histogram)."""
    from halo.policy import metrics

    return metrics.BACKEND_SECONDS.labels(route)._sum.get()
