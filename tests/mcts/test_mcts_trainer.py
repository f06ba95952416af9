"""kind=mcts runs through the trainer's job machinery like GRPO: start, watch, stop, resume, checkpoints."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from halo.runs.spec import RunSpec


async def test_mcts_run_stops_resumes_and_checkpoints_the_qwen3vl_mcts_adapter(mcts_stack, tmp_path: Path):
    import torch

    from halo.embedded.policy import ScoringHead, head_from_bytes
    from halo.trainer.jobs import JobManager
    from halo.trainer.store import RunState
    from halo.runs.context import ServiceTargets
    from halo.cli.registry import resolve_trainer

    jobs = JobManager(tmp_path, ServiceTargets(mcts_stack.env_target, mcts_stack.reward_target, mcts_stack.gateway_target),
                      resolve_trainer, auto_resume=False)
    spec = RunSpec(kind="mcts", task_ids=["playground-finish"], total_steps=3, groups_per_batch=1, max_steps=2,
                   learning_rate=0.02, temperature=1.0, seed=5,
                   extra={"simulations": 8, "children": 3, "widen_every": 0, "update_epochs": 2})
    record = await jobs.start_run(spec)
    while jobs.get(record.run_id).step < 1:
        await asyncio.sleep(0.2)
    await jobs.stop(record.run_id)
    events = [e async for e in jobs.watch(record.run_id)]
    stopped = jobs.get(record.run_id)
    assert stopped.state is RunState.STOPPED, events[-1]
    assert 1 <= stopped.step < 3

    await jobs.resume(record.run_id)
    events = [e async for e in jobs.watch(record.run_id)]
    assert jobs.get(record.run_id).state is RunState.SUCCEEDED, events[-1]
    assert any("resuming from" in e.get("message", "") for e in events if e["type"] == "state")

    rows = jobs.store.metrics(record.run_id)
    assert [r["step"] for r in rows] == [1, 2, 3]                       # nothing lost, nothing repeated
    for r in rows:
        assert r["searches"] == 1 and r["env_failures"] == 0
        assert r["simulations"] == 8 and r["env_steps"] >= 1 and r["tree_nodes"] == r["env_steps"] + 1
        assert 0.0 <= r["search_success_rate"] <= r["found_success_rate"] <= 1.0
        assert 0.0 <= r["success_rate_strict"] <= r["success_rate"]   # strict never grants what agisdk refuses
        assert "pairs" in r
    assert sum(r["pairs"] for r in rows) > 0

    checkpoints = jobs.checkpoints(record.run_id)
    assert [c.step for c in checkpoints] == [1, 2, 3]
    initial = ScoringHead(seed=5).state_dict()

    def same_weights(data: bytes) -> bool:
        state = head_from_bytes(data).state_dict()
        return all(torch.equal(state[k], initial[k]) for k in initial)

    for c in checkpoints:
        folder = Path(c.path)
        adapter = json.loads((folder / "adapter.json").read_text())
        assert adapter["mode"] == "qwen3vl_mcts" and adapter["loss"] == "dpo"
        assert same_weights((folder / "reference.safetensors").read_bytes())   # frozen across stop/resume
        search = json.loads((folder / "search.json").read_text())
        assert search[0]["task_id"] == "playground-finish" and search[0]["critic_route"] == "embedded"
    learner_state = json.loads((Path(checkpoints[-1].path) / "learner.json").read_text())
    assert learner_state["updates"] == 2 * sum(1 for r in rows if r["pairs"] > 0)  # resumed optimizer count
    assert not same_weights((Path(checkpoints[-1].path) / "head.safetensors").read_bytes())   # DPO moved it


def test_halo_train_accepts_kind_mcts(capsys):
    from halo.cli.main import main

    assert main(["train", "--kind", "mcts", "--steps", "0"]) == 2       # parsed into an mcts spec, then validated
    assert "halo train: --steps must be >= 1" in capsys.readouterr().err
