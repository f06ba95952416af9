"""Task suites for `halo train --suite NAME`: which tasks a run learns on, by a rule that is printed.

The rules may read the replicas' oracles (how many UI actions a task needs at the least): that
chooses the *curriculum*, like a teacher choosing exercises. The policy never sees them: the
embedded policy's candidates come from the goal and the observation only
(`halo.embedded.candidates`).

    playground-easy   HALO's four one- and two-action playground tasks (the quick demo)
    real-easy         per REAL v2 site, its replica tasks whose oracle takes at most 3 actions,
                      shortest first (ties: lower task number), at most 2 per site
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Suite:
    name: str
    rule: str                                 # the selection rule, in words (printed by halo train)
    select: Callable[[], list[str]]           # task ids, in a stable order
    defaults: dict                            # halo train settings this suite wants unless the user says otherwise


PLAYGROUND_EASY = ("playground-signup", "playground-name", "playground-plan", "playground-finish")

REAL_EASY_MAX_ORACLE_STEPS = 3
REAL_EASY_PER_SITE = 2


def oracle_lengths(suite: str = "real-v2") -> dict[str, tuple[str, int]]:
    """task id -> (site, oracle length) for every scorable replica task of the registry suite that has an oracle."""
    from halo.sites.registry import attempts_for
    from halo.tasks.registry import default_registry

    out: dict[str, tuple[str, int]] = {}
    for task in default_registry().list(replica_only=True, suite=suite):
        oracle, _ = attempts_for(task.site, task.id)
        if oracle is not None and task.scorable:
            out[task.id] = (task.site, len(oracle))
    return out


def _task_number(task_id: str) -> int:
    tail = task_id.rpartition("-")[2]
    return int(tail) if tail.isdigit() else 0


def shortest_oracles(max_steps: int, per_site: int) -> list[str]:
    """Per site, the tasks whose oracle takes at most `max_steps` actions, shortest first, at most `per_site`."""
    by_site: dict[str, list[tuple[int, int, str]]] = {}
    for task_id, (site, length) in oracle_lengths().items():
        if length <= max_steps:
            by_site.setdefault(site, []).append((length, _task_number(task_id), task_id))
    return [task_id for site in sorted(by_site) for _, _, task_id in sorted(by_site[site])[:per_site]]


SUITES: dict[str, Suite] = {
    "playground-easy": Suite(
        "playground-easy",
        "HALO's own playground: sign up, enter a name and save, switch plan, go to page 2 and finish "
        "(one or two actions each; page layouts shuffled per seed)",
        lambda: list(PLAYGROUND_EASY), {}),
    "real-easy": Suite(
        "real-easy",
        f"REAL v2 replica tasks scored by agisdk: per site, the tasks whose oracle takes at most "
        f"{REAL_EASY_MAX_ORACLE_STEPS} UI actions, shortest first (ties: lower task number), at most "
        f"{REAL_EASY_PER_SITE} per site",
        lambda: shortest_oracles(REAL_EASY_MAX_ORACLE_STEPS, REAL_EASY_PER_SITE),
        # episodes of up to 4 actions (oracles take 2-3: room for one detour); one greedy seed per
        # task: the REAL replicas do not vary with the seed, so more seeds would repeat the same
        # deterministic episode (what carries over is measured on the other tasks: halo eval)
        # The head starts from the encoder's relevance (logit += 5 x cosine(goal, what the candidate
        # acts on)): a page here offers 20 to 100 candidates, and uniform exploration of 2-3 steps
        # almost never finds a success to learn from.
        # No pay for a valid action or a new page on this suite (penalties and milestones stay):
        # with them a policy can earn reward by typing the goal's words into any field, each step
        # a valid action and a new state, which agisdk never scores (docs/guides/real-tasks.md).
        # Milestones and success carry the signal.
        # 26 steps: the 30-minute budget of an idle 2-core machine (docs/benchmarks.md).
        {"groups_per_batch": 4, "max_steps": 4, "steps": 26, "eval_seeds": [1001], "extra": {"relevance_prior": 5.0},
         "reward_overrides": {"valid_action_bonus": 0.0, "novelty_bonus": 0.0}}),
}


# Suites are spelled with hyphens; these older spellings still work (halo.cli.flags.Spelling warns).
OLD_SPELLINGS = {"playground_easy": "playground-easy", "real_easy": "real-easy"}


def suite(name: str) -> Suite:
    try:
        return SUITES[name]
    except KeyError:
        raise SystemExit(f"halo: unknown suite {name!r}; known: {', '.join(SUITES)}") from None
