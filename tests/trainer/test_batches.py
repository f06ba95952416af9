"""How a GRPO step picks its groups: balanced over the tasks, and the same after a resume."""

from halo.trainers.grpo import batch_for_step

TASKS = ["playground-signup", "playground-name", "playground-plan", "playground-finish"]


def test_each_step_deals_every_task_once_when_groups_equal_tasks():
    for step in range(1, 30):
        batch = batch_for_step(TASKS, 4, seed=3, step=step)
        assert sorted(t for t, _ in batch) == sorted(TASKS)
        assert all(0 <= s < 1000 for _, s in batch)


def test_fewer_groups_than_tasks_still_cover_the_tasks_evenly():
    dealt = [t for step in range(1, 13) for t, _ in batch_for_step(TASKS, 3, seed=0, step=step)]
    assert {dealt.count(t) for t in TASKS} == {9}          # 36 groups, 9 per task


def test_a_resumed_run_gets_the_same_batches_and_seeds_differ_across_steps():
    assert batch_for_step(TASKS, 4, 7, 5) == batch_for_step(TASKS, 4, 7, 5)
    assert batch_for_step(TASKS, 4, 7, 5) != batch_for_step(TASKS, 4, 8, 5)
    seeds = {s for step in range(1, 10) for _, s in batch_for_step(TASKS, 4, 0, step)}
    assert len(seeds) > 20
