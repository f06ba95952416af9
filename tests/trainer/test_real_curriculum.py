"""`halo train --suite real-easy`: the REAL curriculum's rule, its wiring into the run spec, and a
one-step run on two of its tasks (real services, real Chromium, agisdk's evaluator). The 30-minute
learning curve is a measurement (docs/guides/real-tasks.md), not a test."""

from __future__ import annotations

from pathlib import Path

import pytest

from halo.cli.curriculum import REAL_EASY_MAX_ORACLE_STEPS, REAL_EASY_PER_SITE, oracle_lengths, suite
from halo.runs.spec import RunSpec

#: The list docs/guides/real-tasks.md prints; the rule below must produce it.
README_REAL_EASY = ["gocalendar-10", "gocalendar-23", "gomail-14", "gomail-24", "networkin-13", "networkin-19",
                    "opendining-4", "staynb-15", "topwork-8", "udriver-14", "udriver-2"]


def test_real_easy_follows_its_rule():
    chosen = suite("real-easy").select()
    assert chosen == README_REAL_EASY
    lengths = oracle_lengths()
    per_site: dict[str, list[str]] = {}
    for task_id in chosen:
        site, length = lengths[task_id]
        assert length <= REAL_EASY_MAX_ORACLE_STEPS
        per_site.setdefault(site, []).append(task_id)
    assert all(len(ids) <= REAL_EASY_PER_SITE for ids in per_site.values())
    for task_id, (site, length) in lengths.items():   # nothing shorter was left out of a site
        if task_id not in chosen and length <= REAL_EASY_MAX_ORACLE_STEPS:
            assert len(per_site[site]) == REAL_EASY_PER_SITE
            assert all(lengths[t][1] <= length for t in per_site[site])


def test_halo_train_suite_sets_the_tasks_and_the_suite_settings(monkeypatch):
    import halo.cli.train
    from halo.cli.main import main

    seen: list[RunSpec] = []

    async def capture(spec, runs_dir, resume="", **targets):
        seen.append(spec)
        return 0

    monkeypatch.setattr(halo.cli.train, "train_local", capture)
    assert main(["train", "--suite", "real-easy", "--steps", "1"]) == 0
    assert main(["train", "--suite", "real-easy", "--tasks", "udriver-14", "--max-actions", "3"]) == 0
    assert main(["train"]) == 0
    real, explicit, playground = seen
    assert real.task_ids == README_REAL_EASY and real.max_steps == 4 and real.extra["eval_seeds"] == [1001]
    assert real.total_steps == 1 and playground.total_steps == 20          # --steps wins; the playground's default
    assert explicit.task_ids == ["udriver-14"] and explicit.max_steps == 3      # --tasks wins over the suite
    assert playground.task_ids == ["playground-signup", "playground-name", "playground-plan", "playground-finish"]
    # the REAL suite pays nothing for validity or novelty; the playground keeps the embedded defaults
    assert real.reward_overrides == {"novelty_bonus": 0.0, "valid_action_bonus": 0.0}
    assert playground.reward_overrides == {"novelty_bonus": 0.05}
    assert main(["train", "--suite", "real-easy", "--reward-overrides", '{"loop_penalty": -1}']) == 0
    assert seen[-1].reward_overrides == {"loop_penalty": -1.0}                # the user's word wins
    assert seen[-1].total_steps == 26                                          # the suite's default (about 30 minutes here)


@pytest.fixture(scope="module")
async def services():
    from halo.cli.stack import LocalStack

    async with LocalStack(env_overrides={"pool_size": 4, "acquire_timeout_s": 60}, with_reward=True, with_gateway=True) as stack:
        yield stack


async def test_one_real_easy_step_reports_the_metrics(services, tmp_path: Path):
    """Two of the suite's tasks, one step: untrained greedy success, sampled success, validity,
    frac_reward_zero_std and the greedy evaluation are all reported, from agisdk's verdicts."""
    from halo.cli.registry import resolve_trainer
    from halo.runs.context import ServiceTargets
    from halo.trainer.jobs import JobManager
    from halo.trainer.store import RunState

    tasks = ["udriver-14", "gomail-14"]
    assert set(tasks) <= set(suite("real-easy").select())
    jobs = JobManager(tmp_path, ServiceTargets(services.env_target, services.reward_target, services.gateway_target),
                      resolve_trainer, auto_resume=False)
    spec = RunSpec(task_ids=tasks, total_steps=1, group_size=2, groups_per_batch=2, max_steps=2, learning_rate=0.02,
                   temperature=1.0, loss_fn="ppo", seed=0,
                   extra={"eval_every": 1, "eval_seeds": [1001], "update_epochs": 1, "concurrency": 4})
    record = await jobs.start_run(spec)
    events = [e async for e in jobs.watch(record.run_id)]
    assert jobs.get(record.run_id).state is RunState.SUCCEEDED, events[-1]
    (row,) = jobs.store.metrics(record.run_id)
    assert row["episodes"] == 4 and row["env_failures"] == 0
    for key in ("success_rate", "success_rate_strict", "action_validity", "frac_reward_zero_std", "eval_success_rate",
                "eval_success_rate_untrained", "eval_success_rate_strict", "eval_success_rate_strict_untrained"):
        assert 0.0 <= row[key] <= 1.0, (key, row[key])
    # strict success never grants what agisdk refuses
    assert row["eval_success_rate_strict"] <= row["eval_success_rate"]
    assert row["eval_success_rate_strict_untrained"] <= row["eval_success_rate_untrained"]
    assert -5.0 < row["mean_reward"] < 5.0
    assert 1.0 <= row["episode_length"] <= 2.0
