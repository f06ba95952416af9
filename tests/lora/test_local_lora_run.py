"""`halo train --backend local_lora` as a hosted run: the tiny Qwen3-VL samples in-process or through
a real vLLM behind the gateway, the env + reward services score it (playground replica, real
Chromium), the PEFT learner updates it, and every step's checkpoint is a PEFT adapter plus the
optimizer state."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from halo.runs.context import ServiceTargets
from halo.runs.spec import RunSpec

#: A page layout of the task and a token budget that give every group a learning signal: the policy
#: writes one click of a two-click menu (the grammar makes every finished completion a valid action),
#: and the random model spells out a varying share of it, so about half the completions end within
#: MENU_TOKENS (a valid action: +0.1) and the rest are cut (unparsed: -0.2) whichever element they
#: pick. A group of four then sees two rewards far more often than not, and its step trains (a step
#: whose advantages are all zero takes no optimizer step). Sampling is seeded: the runs are repeatable.
LAYOUT = 2
MENU_TOKENS = 60


async def two_click_menu(env) -> dict:
    """extra for a run within a menu of the Sign up button and one other element of page LAYOUT."""
    from halo.agent import actions as A
    from halo.agent.formats import ActionFormat
    from halo.agent.grammar import choice_regex

    created = await env.create_session("playground-signup", seed=LAYOUT)
    try:
        elements = [e for e in created.observation.elements if e.interactive and e.bid]
    finally:
        await env.close_session(created.session_id)
    answer = next(e.bid for e in elements if e.role == "button" and e.name == "Sign up")
    other = next(e.bid for e in elements if e.bid != answer)
    regex = choice_regex(ActionFormat.QWEN_COMPUTER_USE, [A.ClickElement(answer), A.ClickElement(other)])
    return {"action_regex": regex, "layout_seeds": [LAYOUT], "screenshots": False}


def trained(rows: list[dict]) -> list[dict]:
    """The rows of steps that took an optimizer step."""
    return [r for r in rows if not r.get("optim_skipped")]


async def test_a_local_lora_run_trains_and_checkpoints_peft_adapters(stack, env, tiny_dir, tmp_path: Path):
    from halo.trainer.jobs import JobManager
    from halo.trainer.store import RunState
    from halo.trainers.lora_learner import LoraLearner, train_local_lora
    from halo.cli.registry import resolve_trainer

    spec = RunSpec(
        name="local-lora", backend="local_lora", task_ids=["playground-signup"], total_steps=2, group_size=4,
        max_steps=1, max_tokens=MENU_TOKENS, learning_rate=1e-3, lora_rank=4, checkpoint_every=1, temperature=1.0,
        extra={"model_dir": tiny_dir, **await two_click_menu(env)},
    )
    assert resolve_trainer(spec) is train_local_lora
    jobs = JobManager(tmp_path, ServiceTargets(stack.env_target, stack.reward_target), resolve_trainer, auto_resume=False)
    record = await jobs.start_run(spec)
    [e async for e in jobs.watch(record.run_id)]
    done = jobs.get(record.run_id)
    assert done.state is RunState.SUCCEEDED, done.error
    rows = jobs.store.metrics(record.run_id)
    assert [r["step"] for r in rows] == [1, 2]
    assert trained(rows), f"no step of this seeded run drew two outcomes in a group: {rows}"
    for row in rows:
        assert row["episodes"] == 4 and row["env_failures"] == 0 and row["episode_length"] == 1
        assert row["datums"] == 4 and row["env/all/total_episodes"] == 4
        assert row["optim_skipped"] == float(row["reward_std"] == 0)   # no optimizer step without a reward spread
    for count, row in enumerate(trained(rows), start=1):
        assert row["tokens_trained"] >= 4 and row["updates"] == count and "loss" in row
    checkpoints = jobs.checkpoints(record.run_id)
    assert [c.step for c in checkpoints] == [1, 2]
    adapter = Path(checkpoints[-1].path) / "adapter"
    config = json.loads((adapter / "adapter_config.json").read_text())
    assert config["r"] == 4 and (adapter / "adapter_model.safetensors").exists()
    restored = LoraLearner(tiny_dir, rank=4)
    restored.load(Path(checkpoints[-1].path))
    assert restored.updates == len(trained(rows))
    assert (await env.pool_stats()).active_sessions == 0

    missing = RunSpec(backend="local_lora", task_ids=["playground-signup"], total_steps=1)
    failed = await jobs.start_run(missing)
    [e async for e in jobs.watch(failed.run_id)]
    assert jobs.get(failed.run_id).state is RunState.FAILED and "model_dir" in jobs.get(failed.run_id).error


async def test_a_local_lora_run_samples_through_vllm_and_hot_loads_every_steps_adapter(stack, env, tiny_dir, vllm_gateway,
                                                                                       vllm_server, vllm_recorder,
                                                                                       tmp_path: Path):
    """End to end on a real vLLM: env service -> gateway (vLLM route) -> learner -> adapter -> vLLM.
    Step N samples every rollout through the route with the adapter of step N-1, loaded as
    run-<id>-v<N-1> (a new name per version, the old one unloaded), and trains on vLLM's tokens.
    Which adapter answered is read from vLLM's own replies (the recording route), not the trainer's."""
    from safetensors.torch import load_file

    from halo.trainer.jobs import JobManager
    from halo.trainer.store import RunState
    from halo.cli.registry import resolve_trainer
    from tests.vllm_helpers import served_adapters

    spec = RunSpec(backend="local_lora", task_ids=["playground-signup"], total_steps=2, group_size=4, max_steps=1,
                   max_tokens=MENU_TOKENS, learning_rate=1e-3, lora_rank=4, temperature=1.0,
                   extra={"model_dir": tiny_dir, "serve_route": "qwen3vl-recorded", **await two_click_menu(env)})
    jobs = JobManager(tmp_path, ServiceTargets(stack.env_target, stack.reward_target, vllm_gateway.target), resolve_trainer,
                      auto_resume=False)
    first_request = len(vllm_recorder.requests)
    record = await jobs.start_run(spec)
    loaded_during_run: set[str] = set()
    async for event in jobs.watch(record.run_id):
        if event["type"] == "metrics":   # what vLLM serves between steps: the run's latest version
            loaded_during_run |= set(served_adapters(vllm_server))
    assert jobs.get(record.run_id).state is RunState.SUCCEEDED, jobs.get(record.run_id).error

    rows = jobs.store.metrics(record.run_id)
    assert [r["step"] for r in rows] == [1, 2]
    name = f"run-{record.run_id}"
    # what vLLM answered, in order: v0 loaded, step 1's four samples from it, v1 loaded, step 2's from v1
    calls = [(r["path"].rsplit("/", 1)[-1], r.get("served") or r.get("lora_name")) for r in vllm_recorder.requests[first_request:]]
    chats = [served for path, served in calls if path == "completions"]
    assert chats == [f"{name}-v0"] * 4 + [f"{name}-v1"] * 4, calls
    loads = [i for i, (path, _) in enumerate(calls) if path == "load_lora_adapter"]
    assert [calls[i][1] for i in loads] == [f"{name}-v0", f"{name}-v1", f"{name}-v2"], calls
    for row, version in zip(rows, (0, 1)):
        # the step's metrics name the version vLLM answered with, and the learner trained on it
        assert row["adapter_version_min"] == row["adapter_version_max"] == version
        assert row["sample_calls"] == 4 and row["sampled_tokens"] >= 4 and row["datums"] == 4
        assert row["adapter_load_s"] > 0 and row["time/sample_s"] > 0 and row["time/learn_s"] > 0
        assert row["episodes"] == 4 and row["env_failures"] == 0
    assert trained(rows), f"no step of this seeded run drew two outcomes in a group: {rows}"
    for row in trained(rows):   # the learner scores vLLM's masked q: on-policy, ratio 1
        assert abs(row["sampler_ratio/min"] - 1.0) < 1e-3 and abs(row["sampler_ratio/max"] - 1.0) < 1e-3, row
    assert loaded_during_run and loaded_during_run <= {f"{name}-v1", f"{name}-v2"}   # v0 unloaded once v1 was in
    assert served_adapters(vllm_server) == {}                                # unloaded when the run ended
    serving = tmp_path / record.run_id / "serving"
    assert sorted(p.name for p in serving.iterdir()) == ["step-000001", "step-000002"]   # older ones pruned
    served = load_file(str(serving / "step-000002" / "adapter_model.safetensors"))
    saved = load_file(str(Path(jobs.checkpoints(record.run_id)[-1].path) / "adapter" / "adapter_model.safetensors"))
    assert served.keys() == saved.keys() and all(served[k].equal(saved[k]) for k in saved)   # the step's weights

    no_gateway = JobManager(tmp_path / "b", ServiceTargets(stack.env_target, stack.reward_target), resolve_trainer,
                            auto_resume=False)
    failed = await no_gateway.start_run(spec)
    [e async for e in no_gateway.watch(failed.run_id)]
    refused = no_gateway.get(failed.run_id)
    assert refused.state is RunState.FAILED and refused.step == 0
    assert "extra.serve_route='qwen3vl-recorded' needs a policy gateway" in refused.error, refused.error


async def test_an_async_local_lora_run_keeps_k_plus_1_versions_in_vllm_and_samples_ahead(stack, tiny_dir, vllm_gateway,
                                                                                         vllm_server, tmp_path: Path):
    """--max-staleness 1 through the real vLLM: step N's rollouts start before step N-1's update is
    published, sample a version at most 1 behind, and vLLM holds at most the 2 newest versions,
    each under its own name (never reloaded in place)."""
    from halo.trainer.jobs import JobManager
    from halo.trainer.store import RunState
    from halo.cli.registry import resolve_trainer
    from tests.vllm_helpers import served_adapters

    spec = RunSpec(backend="local_lora", task_ids=["playground-signup"], total_steps=3, group_size=2, max_steps=1,
                   max_tokens=8, learning_rate=1e-3, lora_rank=4,
                   extra={"model_dir": tiny_dir, "serve_route": "qwen3vl-local", "max_staleness": 1})
    jobs = JobManager(tmp_path, ServiceTargets(stack.env_target, stack.reward_target, vllm_gateway.target), resolve_trainer,
                      auto_resume=False)
    record = await jobs.start_run(spec)
    seen: list[set[str]] = []
    async for event in jobs.watch(record.run_id):
        if event["type"] == "metrics":
            seen.append(set(served_adapters(vllm_server)))
    assert jobs.get(record.run_id).state is RunState.SUCCEEDED, jobs.get(record.run_id).error
    rows = jobs.store.metrics(record.run_id)
    assert [r["step"] for r in rows] == [1, 2, 3]
    name = f"run-{record.run_id}"
    for row in rows:
        # (staleness <= 1 and no stale drop hold by the launch rule itself; not asserted here)
        assert row["async/version"] == row["adapter_version_min"] == row["adapter_version_max"]
        assert row["episodes"] == 2 and row["datums"] == 2
    # some step sampled the version before the newest: only rollouts that overlap an update do
    assert any(row["adapter_version_min"] == row["step"] - 2 for row in rows[1:]), rows
    for before, row in zip(rows, rows[1:]):
        assert row["async/rollout_start"] < before["async/update_end"], (before, row)   # ran during the update
    assert all(len(loaded) <= 2 and loaded <= {f"{name}-v{v}" for v in range(4)} for loaded in seen), seen
    assert served_adapters(vllm_server) == {}


@pytest.mark.vllm_own_server
async def test_vllm_killed_mid_run_fails_the_run_unavailable_and_keeps_its_checkpoints(stack, tiny_dir, tmp_path: Path):
    """vLLM dies after step 1 (SIGKILL, its own server: the session's must live): the route answers
    UNAVAILABLE after its retries, the run fails saying so, and every checkpoint it wrote loads."""
    import asyncio

    from halo.cli import vllm_local
    from halo.client.policy import PolicyClient
    from halo.errors import Unavailable
    from halo.policy.config import GatewayConfig, GatewaySettings, RouteConfig
    from halo.policy.server import build_service
    from halo.runtime.server import start_service
    from halo.trainer.jobs import JobManager
    from halo.trainer.store import RunState
    from halo.trainers.lora_learner import LoraLearner
    from halo.cli.registry import resolve_trainer
    from tests.policy import pages

    server = vllm_local.start(tiny_dir, served_model="tiny-qwen3vl", max_lora_rank=8, log_path=tmp_path / "vllm.log", wait=False)
    await asyncio.to_thread(server.wait_ready)
    config = GatewayConfig(routes=[RouteConfig(
        name="doomed", backend="vllm", base_url=server.base_url, served_model=server.served_model, api_key="EMPTY",
        retries=1, backoff_s=0.05, max_backoff_s=0.1, timeout_s=60, extra_body=vllm_local.route_extra_body(tiny_dir))])
    settings = GatewaySettings(port=0, metrics_port=-1)
    gateway = await start_service(build_service(settings, config=config), settings)
    try:
        spec = RunSpec(backend="local_lora", task_ids=["playground-signup"], total_steps=4, group_size=2, max_steps=1,
                       max_tokens=8, learning_rate=1e-3, lora_rank=4, checkpoint_every=1,
                       extra={"model_dir": tiny_dir, "serve_route": "doomed"})
        jobs = JobManager(tmp_path / "runs", ServiceTargets(stack.env_target, stack.reward_target, gateway.target),
                          resolve_trainer, auto_resume=False)
        record = await jobs.start_run(spec)
        async for event in jobs.watch(record.run_id):
            if event["type"] == "metrics" and server.alive():
                server.kill()
        failed = jobs.get(record.run_id)
        assert failed.state is RunState.FAILED and failed.step < 4
        assert "Unavailable" in failed.error and "route 'doomed'" in failed.error, failed.error
        checkpoints = jobs.checkpoints(record.run_id)
        assert [c.step for c in checkpoints] == [r["step"] for r in jobs.store.metrics(record.run_id)] == list(range(1, failed.step + 1))
        restored = LoraLearner(tiny_dir, rank=4)
        restored.load(Path(checkpoints[-1].path))
        assert restored.updates == len(trained(jobs.store.metrics(record.run_id)))
        async with PolicyClient(gateway.target, timeout_s=30) as policy:
            with pytest.raises(Unavailable, match="route 'doomed'"):
                await policy.sample("doomed", input=pages.policy_input())
    finally:
        await gateway.stop(grace=1.0)
        server.stop()


def test_the_registry_knows_the_local_lora_trainer():
    from halo.trainers.lora_learner import train_local_lora
    from halo.cli.registry import resolve_trainer

    assert resolve_trainer(RunSpec(backend="local_lora", task_ids=["x"])) is train_local_lora
