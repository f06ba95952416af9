"""The Tinker trainer: RunSpec -> tinker-cookbook Config, and the cookbook's real RL loop
(`rl.train.main`) hosted by the trainer's JobManager over the real env + reward services, with
the Tinker SDK's clients faked at their boundary (tests/tinker/fakes.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import tinker

from halo.runs.context import ServiceTargets
from halo.runs.spec import RunSpec
from halo.trainers.tinker_train import build_config, sync_cookbook_checkpoints
from tests.tinker.fakes import FakeSamplingClient, FakeServiceClient, alternating_signup_script

MODEL = "Qwen/Qwen3-VL-30B-A3B-Instruct"


def test_config_maps_the_runspec_onto_the_cookbook_config(tmp_path: Path):
    from tinker_cookbook.rl.rollout_strategy import MinViableGroup
    from tinker_cookbook.rl.train import Config

    spec = RunSpec(backend="tinker", task_ids=["playground-signup", "omnizon"], seed=3)   # seeds/000 defaults
    config = build_config(spec, ServiceTargets("127.0.0.1:1", "127.0.0.1:2", token="t"), tmp_path / "tinker", run_id="r1")
    assert isinstance(config, Config)
    assert (config.model_name, config.renderer_name) == (MODEL, "qwen3_vl_instruct")
    assert (config.learning_rate, config.lora_rank, config.temperature, config.max_tokens) == (1e-6, 32, 0.7, 300)
    assert config.loss_fn == "importance_sampling" and config.loss_fn_config is None
    assert config.max_steps == spec.total_steps == 20 and config.save_every == 1 and config.eval_every == 0
    assert config.kl_penalty_coef == 0.0 and config.log_path == str(tmp_path / "tinker")
    dataset = config.dataset_builder
    assert (dataset.group_size, dataset.groups_per_batch, dataset.num_batches, dataset.seed) == (8, 1, 20, 3)
    assert dataset.task_refs == ["playground-signup", "omnizon"] and dataset.eval_seeds == []
    task = dataset.config
    assert (task.env_target, task.reward_target, task.token, task.run_id) == ("127.0.0.1:1", "127.0.0.1:2", "t", "r1")
    assert task.max_steps == 70 and task.history_steps == 5 and task.model_name == MODEL
    strategy = config.effective_rollout_strategy()
    assert isinstance(strategy, MinViableGroup) and strategy.min_successful == 6 and strategy.max_retries == 2 * 8   # two fresh attempts per member, as GRPO

    dro = build_config(RunSpec(backend="tinker", task_ids=["x"], loss_fn="dro", extra={"dro_beta": 0.1}), ServiceTargets("e"), tmp_path)
    assert dro.loss_fn == "dro" and dro.loss_fn_config == {"beta": 0.1}
    ppo = build_config(RunSpec(backend="tinker", task_ids=["x"], loss_fn="ppo", extra={"clip_high_threshold": 1.28}), ServiceTargets("e"), tmp_path)
    assert ppo.loss_fn_config == {"clip_low_threshold": 0.8, "clip_high_threshold": 1.28}
    assert build_config(RunSpec(backend="tinker", task_ids=["x"], loss_fn="cispo"), ServiceTargets("e"), tmp_path).loss_fn == "cispo"
    custom = build_config(
        RunSpec(backend="tinker", task_ids=["x"], model="Qwen/Qwen3-VL-8B-Instruct", lora_rank=8, group_size=2, total_steps=3,
                checkpoint_every=2, extra={"eval_every": 5, "eval_seeds": [7], "env_retries": 2}),
        ServiceTargets("e"), tmp_path)
    assert custom.model_name == "Qwen/Qwen3-VL-8B-Instruct" and custom.lora_rank == 8 and custom.save_every == 2
    assert custom.eval_every == 5 and custom.dataset_builder.eval_seeds == [7]
    assert custom.rollout_error_tolerance.min_successful == 2 and custom.rollout_error_tolerance.max_retries == 2
    with pytest.raises(ValueError, match="loss_fn"):
        build_config(RunSpec(backend="tinker", task_ids=["x"], loss_fn="reinforce"), ServiceTargets("e"), tmp_path)


def test_max_staleness_maps_onto_the_cookbooks_async_config(tmp_path: Path):
    from tinker_cookbook.rl.train import AsyncConfig

    def config(**extra):
        spec = RunSpec(backend="tinker", task_ids=["x"], groups_per_batch=3, extra=extra)
        return build_config(spec, ServiceTargets("e"), tmp_path)

    assert config().async_config is None and config(max_staleness=0).async_config is None   # synchronous
    two = config(max_staleness=2, stale_rule="drop").async_config
    assert isinstance(two, AsyncConfig)
    assert (two.max_steps_off_policy, two.groups_per_batch) == (2, 3)
    # the cookbook requeues a group beyond K (HALO's drop): `correct` is refused, not run as something else
    with pytest.raises(ValueError, match="stale-rule correct is not available on Tinker"):
        config(max_staleness=1, stale_rule="correct")
    with pytest.raises(ValueError, match="max_staleness must be >= 0"):
        config(max_staleness=-1)


def test_the_registry_resolves_the_tinker_trainer():
    from halo.cli.registry import resolve_trainer
    from halo.trainers.tinker_train import train_tinker

    assert resolve_trainer(RunSpec(backend="tinker", task_ids=["x"])) is train_tinker
    with pytest.raises(ValueError, match="no trainer"):
        resolve_trainer(RunSpec(kind="mcts", backend="local_lora", task_ids=["x"]))


def test_resume_cuts_the_cookbook_checkpoints_back_to_the_hosts_step(tmp_path: Path):
    log = tmp_path / "tinker"
    log.mkdir()
    records = [{"name": f"{b:06d}", "batch": b, "state_path": f"tinker://r/weights/{b:06d}"} for b in (1, 2, 3)]
    (log / "checkpoints.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    sync_cookbook_checkpoints(log, 2, None)   # the host had completed step 2 when the service died
    assert [json.loads(x)["batch"] for x in (log / "checkpoints.jsonl").read_text().splitlines()] == [1, 2]
    # lost records come back from the copy kept with the host's checkpoint
    host = tmp_path / "step-000003"
    host.mkdir()
    (host / "checkpoints.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    sync_cookbook_checkpoints(log, 3, host)
    assert json.loads((log / "checkpoints.jsonl").read_text().splitlines()[-1])["batch"] == 3
    from halo.errors import FailedPrecondition

    with pytest.raises(FailedPrecondition, match="step 4"):
        sync_cookbook_checkpoints(log, 4, host)
    sync_cookbook_checkpoints(log, 0, None)   # a fresh start forgets an attempt that never checkpointed
    assert not (log / "checkpoints.jsonl").exists()


async def test_without_an_api_key_the_run_fails_with_a_clear_message(jobs_factory, monkeypatch):
    from halo.trainer.store import RunState

    monkeypatch.delenv("TINKER_API_KEY", raising=False)
    jobs = jobs_factory()
    record = await jobs.start_run(RunSpec(backend="tinker", task_ids=["playground-signup"], total_steps=1))
    [e async for e in jobs.watch(record.run_id)]
    assert jobs.get(record.run_id).state is RunState.FAILED
    assert "TINKER_API_KEY" in jobs.get(record.run_id).error


async def test_a_tinker_run_trains_checkpoints_stops_and_resumes_offline(jobs_factory, monkeypatch, tiny_dir, renderer, env):
    """The cookbook's RL loop end to end: rollouts on the playground, datums to forward_backward,
    Tinker checkpoints reported as the host's steps, stop between steps, resume from Tinker state."""
    from halo.trainer.store import RunState

    sdk = FakeServiceClient(lambda path: FakeSamplingClient(renderer.tokenizer, alternating_signup_script(), model_path=path))
    monkeypatch.setattr(tinker, "ServiceClient", sdk)
    monkeypatch.setenv("TINKER_API_KEY", "offline-test-key")
    jobs = jobs_factory()
    spec = RunSpec(
        name="tinker-offline", backend="tinker", task_ids=["playground-signup"], total_steps=3, group_size=4,
        max_steps=2, max_tokens=64, checkpoint_every=1,
        extra={"tokenizer": tiny_dir, "num_groups_to_log": 0, "tinker_sampling": "direct"},
    )
    record = await jobs.start_run(spec)
    async for event in jobs.watch(record.run_id):
        if event["type"] == "metrics" and event["step"] == 1:
            await jobs.stop(record.run_id)   # honoured between iterations
    stopped = jobs.get(record.run_id)
    assert stopped.state is RunState.STOPPED, stopped.error
    assert stopped.step == 2   # step 2 was under way when the stop came; it finished and was kept

    (training,) = sdk.training_clients
    assert sdk.created == [("lora", MODEL)] and training.rank == 32 and training.base_model == MODEL
    assert len(training.forward_backward_calls) == 2 and len(training.optim_steps) == 2
    assert all(s.learning_rate == 1e-6 for s in training.optim_steps)
    call = training.forward_backward_calls[0]
    assert call.loss_fn == "importance_sampling" and call.loss_fn_config is None
    assert len(call.data) == 8   # 4 episodes x 2 steps, one datum per step (fresh prompt each step)
    assert all(any(isinstance(c, tinker.types.ImageChunk) for c in d.model_input.chunks) for d in call.data)
    assert all("mask" not in d.loss_fn_inputs for d in call.data)   # the cookbook strips it before sending
    advantages = sorted({round(float(d.loss_fn_inputs["advantages"].to_torch().max()), 4) for d in call.data})
    assert advantages[-1] > 0 and any(a == 0 for a in advantages)   # good episodes pushed up (bad ones: min < 0)
    # every sample came from a sampler for the current weights, at the run's temperature
    samplers = sdk.sampling_clients
    assert all(p.temperature == 0.7 and p.max_tokens == 64 for s in samplers for _, p in s.calls)

    rows = jobs.store.metrics(record.run_id)
    assert [r["step"] for r in rows] == [1, 2]
    for row in rows:
        assert row["episodes"] == 4 and row["env_failures"] == 0 and row["success_rate"] == 0.5
        assert row["frac_reward_zero_std"] == 0.0 and row["action_validity"] == pytest.approx(0.5)
        assert row["env/all/reward/total"] == pytest.approx(row["mean_reward"], abs=1e-6)
        assert row["env/all/success"] == pytest.approx(0.5)
    checkpoints = jobs.checkpoints(record.run_id)
    assert [c.step for c in checkpoints] == [1, 2]
    info = json.loads((Path(checkpoints[-1].path) / "tinker.json").read_text())
    assert info["state_path"] == f"tinker://{training.run}/weights/000002"
    assert info["sampler_path"] == f"tinker://{training.run}/sampler_weights/000002"

    # resume: the cookbook reloads weights + optimizer from the step-2 Tinker state, runs step 3
    await jobs.resume(record.run_id)
    [e async for e in jobs.watch(record.run_id, after_sequence=10_000)]
    done = jobs.get(record.run_id)
    assert done.state is RunState.SUCCEEDED, done.error
    assert sdk.created[-1] == ("resume", f"tinker://{training.run}/weights/000002")
    resumed = sdk.training_clients[-1]
    assert len(resumed.forward_backward_calls) == 1
    assert [r["step"] for r in jobs.store.metrics(record.run_id)] == [1, 2, 3]
    last = jobs.checkpoints(record.run_id)[-1]
    assert last.step == 3
    final = json.loads((Path(last.path) / "tinker.json").read_text())
    assert final["state_path"].endswith("/weights/final") and final["checkpoint"]["batch"] == 3
    assert (await env.pool_stats()).active_sessions == 0


async def test_async_tinker_reports_exactly_the_steps_the_cookbook_trained_offline(jobs_factory, monkeypatch, tiny_dir, renderer, env):
    """--max-staleness 1 on Tinker runs the cookbook's async loop (rollouts of later batches while a
    step trains). Its dataloader asks for batch i+1 before step i is trained; HALO reports a step
    when it is trained: steps, metrics rows and checkpoints are 1..N once each, across a stop and a
    resume, with the async/ metrics of the trained groups."""
    from halo.trainer.store import RunState
    from halo.trainers.tinker_env import HaloBrowserDataset

    sdk = FakeServiceClient(lambda path: FakeSamplingClient(renderer.tokenizer, alternating_signup_script(), model_path=path))
    monkeypatch.setattr(tinker, "ServiceClient", sdk)
    monkeypatch.setenv("TINKER_API_KEY", "offline-test-key")
    asked: list[tuple[int, int]] = []   # (batch asked for, steps trained by then), a spy on the real dataset
    get_batch = HaloBrowserDataset.get_batch

    def spy(self, index):
        if self.fixed is None:
            asked.append((index, sum(len(t.optim_steps) for t in sdk.training_clients)))
        return get_batch(self, index)

    monkeypatch.setattr(HaloBrowserDataset, "get_batch", spy)
    jobs = jobs_factory()
    spec = RunSpec(
        name="tinker-async", backend="tinker", task_ids=["playground-signup"], total_steps=4, group_size=2, groups_per_batch=2,
        max_steps=2, max_tokens=64, checkpoint_every=1,
        extra={"tokenizer": tiny_dir, "num_groups_to_log": 0, "max_staleness": 1},
    )
    record = await jobs.start_run(spec)
    reported: list[int] = []
    seen = 0
    async for event in jobs.watch(record.run_id):
        seen = event["sequence"]
        if event["type"] == "metrics":
            reported.append(event["step"])
            if event["step"] == 1:
                await jobs.stop(record.run_id)   # honoured after the next trained step
    stopped = jobs.get(record.run_id)
    assert stopped.state is RunState.STOPPED, stopped.error
    stopped_at = stopped.step   # (the record lives on through the resume)
    assert 2 <= stopped_at < 4 and reported == list(range(1, stopped_at + 1))
    # the async loop did run ahead: a batch was asked for before the step before it was trained
    assert any(trained < index for index, trained in asked), asked
    (first,) = sdk.training_clients
    assert len(first.optim_steps) >= stopped_at   # every reported step was trained (a later one may be under way)
    assert (await env.pool_stats()).active_sessions == 0   # rollouts abandoned at the stop closed their sessions

    await jobs.resume(record.run_id)
    async for event in jobs.watch(record.run_id, after_sequence=seen):
        if event["type"] == "metrics":
            reported.append(event["step"])
    done = jobs.get(record.run_id)
    assert done.state is RunState.SUCCEEDED, done.error
    assert sdk.created[-1] == ("resume", f"tinker://{first.run}/weights/{stopped_at:06d}")
    assert len(sdk.training_clients[-1].optim_steps) == 4 - stopped_at
    assert reported == [1, 2, 3, 4]
    rows = jobs.store.metrics(record.run_id)
    assert [r["step"] for r in rows] == [1, 2, 3, 4]
    for row in rows:
        assert row["async/max_staleness"] == 1.0 and row["async/learner_version"] == row["step"] - 1
        assert 0.0 <= row["async/mean_staleness"] <= row["async/oldest_staleness"] <= 1.0
        assert row["async/version"] == row["async/learner_version"] - row["async/oldest_staleness"]
        assert row["episodes"] >= 2 and row["env_failures"] == 0 and "env/all/success" in row
    assert sum(r["episodes"] for r in rows) >= 4 * 2 * 2   # every trained group's episodes, each in one step
    # the cookbook's own rows: one per trained iteration, 0..N-1 across the stop and the resume
    cookbook_rows = [json.loads(x) for x in (jobs.store.run_dir(record.run_id) / "tinker" / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in cookbook_rows if "optim/lr" in r] == [0, 1, 2, 3]
    checkpoints = jobs.checkpoints(record.run_id)
    assert [c.step for c in checkpoints] == [1, 2, 3, 4]
    paths = [json.loads((Path(c.path) / "tinker.json").read_text())["state_path"] for c in checkpoints]
    assert paths[:stopped_at] == [f"tinker://{first.run}/weights/{s:06d}" for s in range(1, stopped_at + 1)]
    assert paths[-1].endswith("/weights/final")
    assert (await env.pool_stats()).active_sessions == 0
