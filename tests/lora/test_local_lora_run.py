"""`halo train --backend local_lora` as a hosted run: the tiny Qwen3-VL samples in-process, the
env + reward services score it (playground replica, real Chromium), the PEFT learner updates it,
and every step's checkpoint is a PEFT adapter plus the optimizer state."""

from __future__ import annotations

import json
from pathlib import Path

from halo.trainers.context import ServiceTargets
from halo.trainers.spec import RunSpec


async def test_a_local_lora_run_trains_and_checkpoints_peft_adapters(stack, env, tiny_dir, tmp_path: Path):
    from halo.trainer.jobs import JobManager
    from halo.trainer.store import RunState
    from halo.trainers.lora_learner import LoraLearner, train_local_lora
    from halo.trainers.registry import resolve_trainer

    spec = RunSpec(
        name="local-lora", backend="local_lora", task_ids=["playground-signup"], total_steps=2, group_size=2,
        max_steps=1, max_tokens=8, learning_rate=1e-3, lora_rank=4, checkpoint_every=1, extra={"model_dir": tiny_dir},
    )
    assert resolve_trainer(spec) is train_local_lora
    jobs = JobManager(tmp_path, ServiceTargets(stack.env_target, stack.reward_target), resolve_trainer, auto_resume=False)
    record = await jobs.start_run(spec)
    [e async for e in jobs.watch(record.run_id)]
    done = jobs.get(record.run_id)
    assert done.state is RunState.SUCCEEDED, done.error
    rows = jobs.store.metrics(record.run_id)
    assert [r["step"] for r in rows] == [1, 2]
    for row in rows:
        assert row["episodes"] == 2 and row["env_failures"] == 0 and row["episode_length"] == 1
        assert row["datums"] == 2 and row["tokens_trained"] >= 2 and row["updates"] == row["step"]
        assert "loss" in row and row["env/all/total_episodes"] == 2
    checkpoints = jobs.checkpoints(record.run_id)
    assert [c.step for c in checkpoints] == [1, 2]
    adapter = Path(checkpoints[-1].path) / "adapter"
    config = json.loads((adapter / "adapter_config.json").read_text())
    assert config["r"] == 4 and (adapter / "adapter_model.safetensors").exists()
    restored = LoraLearner(tiny_dir, rank=4)
    restored.load(Path(checkpoints[-1].path))
    assert restored.updates == 2
    assert (await env.pool_stats()).active_sessions == 0

    missing = RunSpec(backend="local_lora", task_ids=["playground-signup"], total_steps=1)
    failed = await jobs.start_run(missing)
    [e async for e in jobs.watch(failed.run_id)]
    assert jobs.get(failed.run_id).state is RunState.FAILED and "model_dir" in jobs.get(failed.run_id).error


def test_the_registry_knows_the_local_lora_trainer():
    from halo.trainers.lora_learner import train_local_lora
    from halo.trainers.registry import resolve_trainer

    assert resolve_trainer(RunSpec(backend="local_lora", task_ids=["x"])) is train_local_lora
