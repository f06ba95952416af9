"""`halo bench gateway`: what the policy gateway costs over calling its backend directly.

Same run, same prompt, interleaved calls (direct, gateway, direct, ...) so machine load hits
both paths alike:

- direct: the OpenAI SDK posts the already-built chat messages (screenshot as a base64 data URL)
  to the OpenAI-compatible server;
- gateway: a gRPC Sample with the raw observation; the gateway builds the prompt, calls the same
  server through its route (limits, retries), parses the completion and answers.

The backend is `transformers serve` on a tiny Qwen3-VL built locally (or --base-url). Greedy
decoding with a fixed max_tokens makes both paths generate the same tokens. The embedded
policy is measured too (in-process call vs gRPC), as absolute milliseconds: its backend call is
sub-millisecond, so a percentage says little there. Target: gateway overhead <= 5%.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

TARGET_OVERHEAD = 0.05


@dataclass
class PathTiming:
    calls: int
    median_ms: float
    mean_ms: float
    p90_ms: float


@dataclass
class GatewayBenchResult:
    backend: str
    direct: PathTiming
    gateway: PathTiming
    paired_difference_ms: float  # median gateway - median direct (noisy: backend latency varies call to call)
    gateway_internal_ms: float   # median (client-observed gateway time - backend time the gateway reports)
    overhead_fraction: float     # gateway_internal_ms / median direct: the robust estimate, judged against the target
    embedded_direct_ms: float
    embedded_gateway_ms: float
    meets_target: bool


def _timing(samples: list[float]) -> PathTiming:
    ordered = sorted(samples)
    return PathTiming(len(samples), statistics.median(ordered) * 1e3, statistics.fmean(ordered) * 1e3,
                      ordered[int(0.9 * (len(ordered) - 1))] * 1e3)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_transformers_serve(model_dir: str, timeout_s: float = 300) -> tuple[subprocess.Popen, str]:
    """`transformers serve` on a local checkpoint; returns (process, base_url ending in /v1)."""
    import httpx

    port = _free_port()
    cache = Path(model_dir) / ".hf-cache"
    cache.mkdir(exist_ok=True)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(cache)}
    binary = Path(sys.executable).with_name("transformers")
    process = subprocess.Popen(
        [str(binary), "serve", model_dir, "--host", "127.0.0.1", "--port", str(port), "--device", "cpu",
         "--trust-remote-code", "--log-level", "warning"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
    )
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"transformers serve exited with {process.returncode}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                return process, f"http://127.0.0.1:{port}/v1"
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    process.kill()
    raise RuntimeError(f"transformers serve did not start within {timeout_s:g}s")


def bench_observation():
    """A 1280x720 page with a form, as the env service observes it."""
    from PIL import Image, ImageDraw

    from halo.agent.context import PageElement, PageView, PolicyContext

    elements = (
        PageElement("1", "link", "Home", x=20, y=20, width=60, height=20),
        PageElement("2", "textbox", "Email", x=400, y=250, width=480, height=40),
        PageElement("3", "button", "Sign up", x=560, y=300, width=160, height=40),
    )
    image = Image.new("RGB", (1280, 720), "white")
    draw = ImageDraw.Draw(image)
    for e in elements:
        draw.rectangle([e.x, e.y, e.x + e.width, e.y + e.height], outline="black")
        draw.text((e.x + 4, e.y + 4), e.name, fill="black")
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=80)
    page = PageView(screenshot=buffer.getvalue(), image_mime="image/jpeg", elements=elements, url="http://127.0.0.1:8100/",
                    axtree="\n".join(f'[{e.bid}] {e.role} "{e.name}"' for e in elements))
    return PolicyContext(goal='Sign up with "bob@example.com".', page=page)


async def run_gateway_bench(requests: int = 30, max_tokens: int = 16, base_url: str = "", served_model: str = "",
                            json_path: str = "") -> int:
    import openai

    from halo.agent.context import context_to_proto
    from halo.agent.prompt import build_prompt
    from halo.client.policy import PolicyClient
    from halo.policy.config import GatewayConfig, GatewaySettings, RouteConfig
    from halo.policy.server import build_service
    from halo.runtime.server import start_service

    process = None
    workdir = tempfile.mkdtemp(prefix="halo-bench-gateway-")
    if not base_url:
        from halo.cli.benches.tiny_qwen3vl import build

        print("building a tiny Qwen3-VL and starting `transformers serve` on it ...", flush=True)
        served_model = str(build(Path(workdir) / "tiny-qwen3vl"))
        process, base_url = start_transformers_serve(served_model)
    try:
        route = RouteConfig(name="bench", backend="openai_compatible", base_url=base_url, served_model=served_model,
                            api_key=os.environ.get("OPENAI_API_KEY", "EMPTY"), max_tokens=max_tokens, timeout_s=300,
                            max_concurrency=4)
        config = GatewayConfig(routes=[route, RouteConfig(name="embedded", backend="embedded", action_format="json")])
        settings = GatewaySettings(port=0, metrics_port=-1)
        running = await start_service(build_service(settings, config=config), settings)
        ctx = bench_observation()
        message = context_to_proto(ctx)
        body = {"model": served_model, "messages": build_prompt(ctx, route.prompt_options()).to_openai_messages(),
                "temperature": 0.0, "max_tokens": max_tokens}
        direct_client = openai.AsyncOpenAI(base_url=base_url, api_key=route.resolve_api_key() or "EMPTY", max_retries=0)
        direct, through, internal = [], [], []
        async with PolicyClient(running.target, timeout_s=300) as policy:
            for warmup in range(2):
                await direct_client.chat.completions.create(**body)
                await policy.sample("bench", input=message, temperature=0.0)
            for _ in range(requests):
                started = time.perf_counter()
                await direct_client.chat.completions.create(**body)
                direct.append(time.perf_counter() - started)
                started = time.perf_counter()
                response = await policy.sample("bench", input=message, temperature=0.0)
                elapsed = time.perf_counter() - started
                through.append(elapsed)
                internal.append(elapsed - response.latency.ToNanoseconds() / 1e9)
            # the embedded policy: in-process call vs through gRPC (features cached after the warm-up)
            backend = running.spec.core.routes["embedded"].backend
            await policy.sample("embedded", input=message, temperature=0.0)
            embedded_direct, embedded_gateway = [], []
            for _ in range(requests):
                started = time.perf_counter()
                await asyncio.to_thread(backend.policy.sample, backend.base_head, ctx, 1, 0.0, 0)
                embedded_direct.append(time.perf_counter() - started)
                started = time.perf_counter()
                await policy.sample("embedded", input=message, temperature=0.0)
                embedded_gateway.append(time.perf_counter() - started)
        await direct_client.close()
        await running.stop(grace=1.0)
    finally:
        if process is not None:
            process.terminate()
            process.wait(timeout=15)
    d, g = _timing(direct), _timing(through)
    internal_ms = statistics.median(internal) * 1e3
    result = GatewayBenchResult(
        backend=f"openai_compatible at {base_url} ({served_model})", direct=d, gateway=g,
        paired_difference_ms=g.median_ms - d.median_ms, gateway_internal_ms=internal_ms,
        overhead_fraction=internal_ms / d.median_ms,
        embedded_direct_ms=statistics.median(embedded_direct) * 1e3,
        embedded_gateway_ms=statistics.median(embedded_gateway) * 1e3,
        meets_target=internal_ms / d.median_ms <= TARGET_OVERHEAD,
    )
    print(f"backend: {result.backend}")
    print(f"direct  : median {d.median_ms:8.1f} ms  mean {d.mean_ms:8.1f} ms  p90 {d.p90_ms:8.1f} ms  ({d.calls} calls)")
    print(f"gateway : median {g.median_ms:8.1f} ms  mean {g.mean_ms:8.1f} ms  p90 {g.p90_ms:8.1f} ms  ({g.calls} calls)")
    print(f"overhead: {internal_ms:.2f} ms per call outside the backend (gRPC, prompt, parse, limits) = "
          f"{100 * result.overhead_fraction:.2f}% of a direct call (target <= {100 * TARGET_OVERHEAD:.0f}%: "
          f"{'met' if result.meets_target else 'NOT met'}); median gateway - median direct: {result.paired_difference_ms:+.1f} ms")
    print(f"embedded: in-process {result.embedded_direct_ms:.2f} ms, through the gateway {result.embedded_gateway_ms:.2f} ms")
    if json_path:
        Path(json_path).write_text(json.dumps(asdict(result), indent=2))
    return 0 if result.meets_target else 1
