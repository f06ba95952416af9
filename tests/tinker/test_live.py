"""Live smoke run of the Tinker backend: one GRPO step of Qwen3-VL-30B-A3B on the playground.

Skipped unless TINKER_API_KEY is set. It also needs the Qwen3-VL tokenizer and image processor:
from the Hugging Face hub (run with HF_HUB_OFFLINE=0; tests/conftest.py defaults it to 1), or
from a local copy named by HALO_TINKER_TOKENIZER.

    TINKER_API_KEY=... HF_HUB_OFFLINE=0 .venv/bin/python -m pytest tests/tinker/test_live.py -q
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from halo.runs.context import ServiceTargets
from halo.runs.spec import RunSpec

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(not os.environ.get("TINKER_API_KEY"), reason="live Tinker API: set TINKER_API_KEY"),
    pytest.mark.skipif(os.environ.get("HF_HUB_OFFLINE") == "1" and not os.environ.get("HALO_TINKER_TOKENIZER"),
                       reason="the Qwen3-VL tokenizer: set HF_HUB_OFFLINE=0 or HALO_TINKER_TOKENIZER=<local folder>"),
]


@pytest.mark.timeout(1800)
async def test_one_live_tinker_grpo_step(stack, tmp_path: Path):
    from halo.trainer.jobs import JobManager
    from halo.trainer.store import RunState
    from halo.cli.registry import resolve_trainer

    extra = {"num_groups_to_log": 0, "tinker_sampling": "direct"}   # no gateway here: one live step of the SDK path
    if os.environ.get("HALO_TINKER_TOKENIZER"):
        extra["tokenizer"] = os.environ["HALO_TINKER_TOKENIZER"]
    jobs = JobManager(tmp_path, ServiceTargets(stack.env_target, stack.reward_target), resolve_trainer, auto_resume=False)
    spec = RunSpec(name="tinker-live-smoke", backend="tinker", task_ids=["playground-signup"], total_steps=1,
                   group_size=2, max_steps=2, max_tokens=128, extra=extra)
    record = await jobs.start_run(spec)
    [e async for e in jobs.watch(record.run_id)]
    done = jobs.get(record.run_id)
    assert done.state is RunState.SUCCEEDED, done.error
    (row,) = jobs.store.metrics(record.run_id)
    assert row["episodes"] + row["env_failures"] == 2 and 0.0 <= row["action_validity"] <= 1.0
    (checkpoint,) = jobs.checkpoints(record.run_id)
    info = json.loads((Path(checkpoint.path) / "tinker.json").read_text())
    assert info["state_path"].startswith("tinker://") and info["sampler_path"].startswith("tinker://")
