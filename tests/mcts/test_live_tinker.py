"""Live smoke run of MCTS on Tinker: one step (a small search on the playground through a real
gateway Tinker route, step-level DPO on a Qwen3-VL-30B-A3B LoRA, a Tinker checkpoint).

Skipped unless TINKER_API_KEY is set. It also needs the Qwen3-VL tokenizer and image processor:
from the Hugging Face hub (run with HF_HUB_OFFLINE=0; tests/conftest.py defaults it to 1), or
from a local copy named by HALO_TINKER_TOKENIZER.

    TINKER_API_KEY=... HF_HUB_OFFLINE=0 .venv/bin/python -m pytest tests/mcts/test_live_tinker.py -q
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest

from halo.runs.spec import RunSpec

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(not os.environ.get("TINKER_API_KEY"), reason="live Tinker API: set TINKER_API_KEY"),
    pytest.mark.skipif(os.environ.get("HF_HUB_OFFLINE") == "1" and not os.environ.get("HALO_TINKER_TOKENIZER"),
                       reason="the Qwen3-VL tokenizer: set HF_HUB_OFFLINE=0 or HALO_TINKER_TOKENIZER=<local folder>"),
]

MODEL = "Qwen/Qwen3-VL-30B-A3B-Instruct"
ROUTE = "qwen3vl-tinker"


@pytest.mark.timeout(1800)
async def test_one_live_mcts_tinker_step(stack, tmp_path: Path):
    from halo.policy.config import GatewayConfig, GatewaySettings, RouteConfig
    from halo.policy.server import build_service
    from halo.runtime.server import start_service
    from halo.trainer.jobs import JobManager
    from halo.trainer.store import RunState
    from halo.runs.context import ServiceTargets
    from halo.cli.registry import resolve_trainer

    tokenizer = os.environ.get("HALO_TINKER_TOKENIZER", "")
    route = RouteConfig(name=ROUTE, backend="tinker", base_model=MODEL, api_key_env="TINKER_API_KEY", timeout_s=180,
                        tinker={"tokenizer": tokenizer})
    settings = GatewaySettings(port=0, metrics_port=-1)
    gateway = await start_service(build_service(settings, config=GatewayConfig(default_critic=ROUTE, routes=[route])), settings)
    try:
        jobs = JobManager(tmp_path, ServiceTargets(stack.env_target, stack.reward_target, gateway.target), resolve_trainer,
                          auto_resume=False)
        extra = {"simulations": 3, "children": 2, "widen_every": 0, "pair_margin": 0.0}
        if tokenizer:
            extra["tokenizer"] = tokenizer
        spec = RunSpec(name="mcts-tinker-live-smoke", kind="mcts", backend="tinker", task_ids=["playground-signup"],
                       total_steps=1, max_steps=1, learning_rate=1e-5, extra=extra)
        record = await jobs.start_run(spec)
        [e async for e in jobs.watch(record.run_id)]
        done = jobs.get(record.run_id)
        assert done.state is RunState.SUCCEEDED, done.error
        (row,) = jobs.store.metrics(record.run_id)
        assert row["searches"] + row["env_failures"] == 1
        if row["pairs"]:
            assert math.isfinite(row["dpo_loss"])
        (checkpoint,) = jobs.checkpoints(record.run_id)
        adapter = json.loads((Path(checkpoint.path) / "adapter.json").read_text())
        assert adapter["mode"] == "qwen3vl_mcts" and adapter["sampler_path"].startswith("tinker://")
        assert adapter["reference_sampler_path"].startswith("tinker://")
    finally:
        await gateway.stop(grace=1.0)
