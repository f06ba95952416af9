"""The grader audit: per replica task, its oracle and every labelled near miss (the replica's
wrong attempts, which agisdk rejects, and halo.sites.near_misses, which the audit found agisdk
accepts) run through the env service, each scored by agisdk's eval script and by HALO's strict
success (agisdk AND configs/strict_checks.yaml). `halo tasks audit` prints it; a task is lenient
when agisdk accepts one of its near misses, and sound under strict when its oracle scores 1 and
every near miss 0 there."""

from __future__ import annotations

import asyncio
import datetime
from collections import Counter
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


def summary_line(rows: Sequence[AuditRow]) -> str:
    """Tasks, near misses, what agisdk accepts and how strict success scores them: one sentence."""
    lenient = [r for r in rows if r.lenient]
    scorable = [r for r in rows if r.task.scorable]
    sound = sum(r.sound_under_strict for r in scorable)
    misses = sum(len(r.near_misses) for r in rows)
    return (f"{len(rows)} tasks, {misses} near misses: agisdk accepts {sum(len(r.lenient) for r in rows)} of them "
            f"in {len(lenient)} tasks; strict success: oracle 1 and every near miss 0 in {sound}/{len(scorable)} "
            f"scorable tasks" + (f" ({len(rows) - len(scorable)} unscorable)" if len(scorable) < len(rows) else ""))


def markdown(rows: Sequence[AuditRow], day: datetime.date | None = None) -> str:
    """The audit as docs/reference/graders.md keeps it: the run's date and summary, the accepted near
    misses by kind and by site, and each accepted near miss with the strict rules that reject it."""
    day = day or datetime.date.today()
    accepted = [(row, label) for row in rows for label in row.lenient]
    kinds = Counter(label.split(":")[0] for _, label in accepted)
    sites = sorted({row.task.site for row in rows})
    out = [f"`halo tasks audit`, {day.isoformat()}: {summary_line(rows)}.", "",
           "Accepted near misses by kind: " + ", ".join(f"{kind} {n}" for kind, n in kinds.most_common()) + ".", "",
           "| site | tasks | near misses | agisdk accepts (tasks) | sound under strict |", "| --- | --- | --- | --- | --- |"]
    for site in sites:
        of = [r for r in rows if r.task.site == site]
        scorable = [r for r in of if r.task.scorable]
        out.append(f"| {site} | {len(of)} | {sum(len(r.near_misses) for r in of)} | "
                   f"{sum(len(r.lenient) for r in of)} ({sum(1 for r in of if r.lenient)}) | "
                   f"{sum(r.sound_under_strict for r in scorable)}/{len(scorable)} |")
    out += ["", "| task | kind | near miss agisdk accepts | strict rule that rejects it |", "| --- | --- | --- | --- |"]
    for row, label in accepted:
        kind, _, what = label.partition(": ")
        why = "; ".join(row.near_misses[label].failed_checks) or "(none: strict accepts it too)"
        out.append(f"| {row.task.id} | {kind} | {what} | {why} |")
    return "\n".join(out) + "\n"
