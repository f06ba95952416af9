"""The grader audit: per replica task, its oracle and every labelled near miss (the replica's
wrong attempts, which agisdk rejects, and halo.sites.near_misses, which the audit found agisdk
accepts) run through the env service, each scored by agisdk's eval script and by HALO's strict
success (agisdk AND configs/strict_checks.yaml). `halo tasks audit` prints it; a task is lenient
when agisdk accepts one of its near misses, and sound under strict when its oracle scores 1 and
every near miss 0 there."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from halo.cli.verify import Attempt, per_task, run_attempts_once_more
from halo.client.env import EnvClient
from halo.reward.strict import StrictChecks, load_checks
from halo.sites.near_misses import near_misses_for
from halo.sites.oracle import OracleStep
from halo.sites.registry import attempts_for
from halo.tasks.registry import TaskSpec


@dataclass
class Scored:
    attempt: Attempt
    agisdk: bool                 # agisdk's verdict
    strict: bool                 # agisdk's verdict AND the task's strict checks
    failed_checks: list[str] = field(default_factory=list)


@dataclass
class AuditRow:
    task: TaskSpec
    oracle: Scored | None
    near_misses: dict[str, Scored] = field(default_factory=dict)   # label -> scored attempt

    @property
    def lenient(self) -> list[str]:
        """Labels of the near misses agisdk accepts."""
        return [label for label, s in self.near_misses.items() if s.agisdk]

    @property
    def sound_under_strict(self) -> bool:
        """Oracle 1 and every near miss 0 under strict success, none of them stopped by an action error."""
        return (self.oracle is not None and self.oracle.strict and not self.oracle.attempt.errors
                and all(not s.strict and not s.attempt.errors for s in self.near_misses.values()))


def near_misses(task: TaskSpec) -> dict[str, list[OracleStep]]:
    """Every labelled near miss of a task: the replica's wrong attempts and the audit's own."""
    _, wrong = attempts_for(task.site, task.id)
    return {**wrong, **near_misses_for(task.id)}


def _score(attempt: Attempt, checks: StrictChecks) -> Scored:
    agisdk = attempt.evaluation is not None and attempt.evaluation.success
    verdict = checks.verdict(attempt.task_id, agisdk, attempt.state)
    return Scored(attempt, agisdk, verdict.success, verdict.failed)


async def audit_task(env: EnvClient, task: TaskSpec, sessions: asyncio.Semaphore, checks: StrictChecks | None = None) -> AuditRow:
    checks = checks or load_checks()
    oracle, _ = attempts_for(task.site, task.id)
    labelled = near_misses(task)

    async def attempt(steps: Sequence[OracleStep], kind: str) -> Attempt:
        return (await run_attempts_once_more(env, task, steps, kind, sessions))[-1]

    runs = [attempt(oracle, "oracle")] if oracle is not None else []
    runs += [attempt(steps, "wrong") for steps in labelled.values()]
    done = await asyncio.gather(*runs)
    scored = [_score(a, checks) for a in done]
    oracle_scored = scored.pop(0) if oracle is not None else None
    return AuditRow(task, oracle_scored, dict(zip(labelled, scored)))


async def audit_tasks(env: EnvClient, tasks: Sequence[TaskSpec], sessions: int = 4, on_row=None) -> list[AuditRow]:
    checks = load_checks()
    return await per_task(tasks, lambda task, limit: audit_task(env, task, limit, checks), sessions, on_row)
