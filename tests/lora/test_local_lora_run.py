"""`halo train --backend local_lora` as a hosted run: the tiny Qwen3-VL samples in-process, the
env + reward services score it (playground replica, real Chromium), the PEFT learner updates it,
and every step's checkpoint is a PEFT adapter plus the optimizer state."""

from __future__ import annotations

import json
from pathlib import Path

from halo.runs.context import ServiceTargets
from halo.runs.spec import RunSpec


async def test_a_local_lora_run_trains_and_checkpoints_peft_adapters(stack, env, tiny_dir, tmp_path: Path):
    from halo.trainer.jobs import JobManager
    from halo.trainer.store import RunState
    from halo.trainers.lora_learner import LoraLearner, train_local_lora
    from halo.cli.registry import resolve_trainer

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


async def test_a_local_lora_run_hot_loads_every_steps_adapter_into_vllm_through_the_gateway(stack, tiny_dir, tmp_path: Path):
    """extra.serve_route: after each step the adapter goes to the gateway's vLLM route by path
    (vLLM's runtime LoRA loading, faked: vLLM needs a GPU), replacing the last one; unloaded at the end."""
    from safetensors.torch import load_file

    from halo.policy.config import GatewayConfig, GatewaySettings, RouteConfig
    from halo.policy.server import build_service
    from halo.runtime.server import start_service
    from halo.trainer.jobs import JobManager
    from halo.trainer.store import RunState
    from halo.cli.registry import resolve_trainer
    from tests.policy.fake_vllm import FakeVllmServer

    vllm = FakeVllmServer(tiny_dir).start()
    config = GatewayConfig(routes=[RouteConfig(name="qwen3vl-local", backend="vllm", base_url=vllm.base_url,
                                               served_model=vllm.served_model, api_key="EMPTY", retries=0)])
    settings = GatewaySettings(port=0, metrics_port=-1)
    gateway = await start_service(build_service(settings, config=config), settings)
    try:
        spec = RunSpec(backend="local_lora", task_ids=["playground-signup"], total_steps=2, group_size=2, max_steps=1,
                       max_tokens=8, learning_rate=1e-3, lora_rank=4, extra={"model_dir": tiny_dir, "serve_route": "qwen3vl-local"})
        jobs = JobManager(tmp_path, ServiceTargets(stack.env_target, stack.reward_target, gateway.target), resolve_trainer,
                          auto_resume=False)
        record = await jobs.start_run(spec)
        [e async for e in jobs.watch(record.run_id)]
        assert jobs.get(record.run_id).state is RunState.SUCCEEDED, jobs.get(record.run_id).error

        name = f"run-{record.run_id}"
        serving = tmp_path / record.run_id / "serving"
        # the initial weights, then each step's, all under the run's adapter name
        assert vllm.loads == [(name, str((serving / f"step-{s:06d}").resolve())) for s in (0, 1, 2)]
        assert sorted(p.name for p in serving.iterdir()) == ["step-000001", "step-000002"]   # older ones pruned
        served = load_file(str(serving / "step-000002" / "adapter_model.safetensors"))
        saved = load_file(str(Path(jobs.checkpoints(record.run_id)[-1].path) / "adapter" / "adapter_model.safetensors"))
        assert served.keys() == saved.keys() and all(served[k].equal(saved[k]) for k in saved)   # the step's weights
        assert vllm.adapters == {}                                   # unloaded when the run ended
        rows = jobs.store.metrics(record.run_id)
        assert all(r["adapter_publish_s"] > 0 for r in rows)

        no_gateway = JobManager(tmp_path / "b", ServiceTargets(stack.env_target, stack.reward_target), resolve_trainer,
                                auto_resume=False)
        failed = await no_gateway.start_run(spec)
        [e async for e in no_gateway.watch(failed.run_id)]
        refused = no_gateway.get(failed.run_id)
        assert refused.state is RunState.FAILED and refused.step == 0
        assert "extra.serve_route='qwen3vl-local' needs a policy gateway" in refused.error, refused.error
    finally:
        await gateway.stop(grace=1.0)
        vllm.stop()


def test_the_registry_knows_the_local_lora_trainer():
    from halo.trainers.lora_learner import train_local_lora
    from halo.cli.registry import resolve_trainer

    assert resolve_trainer(RunSpec(backend="local_lora", task_ids=["x"])) is train_local_lora
