"""Run oracle / no-op / plausible-wrong attempts through the env service and score them with agisdk.

Used by `halo tasks verify` and the replica tests: every replica task must score 1 with its
oracle and 0 with a no-op or a plausible wrong attempt.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from halo.agent import actions as A
from halo.client.env import EnvClient, observation_options
from halo.tasks.registry import TaskSpec
from halo.reward.evaluator import Evaluation, evaluate_async
from halo.sites.oracle import OracleStep, resolve
from halo.sites.registry import attempts_for

T = TypeVar("T")

_TEXT_ONLY = observation_options(screenshot=False)
#: How the env service reports an action past its action timeout (Playwright's own wording follows).
TIMED_OUT = "timed out"


class AttemptEnvFailure(RuntimeError):
    """An attempt's session ended in an environment failure: it says nothing of the replica."""


@dataclass
class Attempt:
    task_id: str
    kind: str                  # "oracle" | "noop" | "wrong"
    state: dict
    final_message: str
    errors: list[str] = field(default_factory=list)
    evaluation: Evaluation | None = None

    @property
    def score(self) -> float:
        return self.evaluation.score if self.evaluation else 0.0


async def run_attempt(env: EnvClient, task: TaskSpec, steps: Sequence[OracleStep], kind: str, seed: int = 0) -> Attempt:
    return (await run_attempts(env, task, steps, kind, seed))[-1]


async def run_attempts(env: EnvClient, task: TaskSpec, steps: Sequence[OracleStep], kind: str, seed: int = 0,
                       noop_too: bool = False) -> list[Attempt]:
    """The attempt of `steps` in one env session; with `noop_too`, first a no-op attempt: the state
    of the same session before any action (what a session that does nothing is scored on), so the
    no-op costs no session of its own."""
    created = await env.create_session(task.id, seed=seed, observation=_TEXT_ONLY)
    session_id, obs = created.session_id, created.observation
    errors: list[str] = []
    attempts: list[Attempt] = []
    try:
        if noop_too:
            start = await env.get_state(session_id)
            attempts.append(Attempt(task.id, "noop", json.loads(start.state_json), start.final_message))
        for step in steps:
            try:
                action = resolve(step, obs.elements)
            except LookupError as exc:   # the page is not what the oracle expects: the attempt stops, scored as is
                errors.append(str(exc))
                break
            result = await env.step(session_id, action, observation=_TEXT_ONLY)
            if result.env_failure:
                raise AttemptEnvFailure(f"env failure during {kind} of {task.id}: {result.env_failure_reason}")
            if not result.action_ok:
                errors.append(f"{A.describe(action)}: {result.action_error}")
            obs = result.observation
        state = await env.get_state(session_id)
    finally:
        await env.close_session(session_id)
    attempts.append(Attempt(task.id, kind, json.loads(state.state_json), state.final_message, errors))
    # agisdk's scripts run as subprocesses: in a thread, so an env service sharing this event loop
    # (`halo tasks verify` on a local stack, the test sweep) keeps serving the other attempts.
    evaluations = await asyncio.gather(*(evaluate_async(task, a.state, a.final_message) for a in attempts))
    for attempt, evaluation in zip(attempts, evaluations):
        attempt.evaluation = evaluation
    return attempts


@dataclass
class VerifyRow:
    task: TaskSpec
    oracle: Attempt | None
    noop: Attempt | None
    wrong: dict[str, Attempt] = field(default_factory=dict)   # label -> attempt

    @property
    def ok(self) -> bool:
        """Oracle 1 and no-op 0, each wrong attempt 0, and no action error in the oracle or a wrong
        attempt: an oracle that scored 1 past a failed step, or a near miss that scored 0 because a
        step failed rather than because it was wrong, verifies nothing."""
        return (
            self.oracle is not None and self.oracle.score == 1.0 and not self.oracle.errors
            and self.noop is not None and self.noop.score == 0.0
            and all(attempt.score == 0.0 and not attempt.errors for attempt in self.wrong.values())
        )


async def run_attempts_once_more(env: EnvClient, task: TaskSpec, steps: Sequence[OracleStep], kind: str,
                                 sessions: asyncio.Semaphore, noop_too: bool = False) -> list[Attempt]:
    """`run_attempts` in a session slot of `sessions`, run once more in a fresh session when an
    action ran past the env's action timeout or the session ended in an environment failure: both
    say the machine was busy, not that the replica is wrong. A page that really cannot be clicked
    times out again and is reported; a second environment failure is raised."""
    async with sessions:
        try:
            first = await run_attempts(env, task, steps, kind, noop_too=noop_too)
        except AttemptEnvFailure:
            first = None
    if first is not None and not any(TIMED_OUT in error for a in first for error in a.errors):
        return first
    async with sessions:
        return await run_attempts(env, task, steps, kind, noop_too=noop_too)


async def verify_task(env: EnvClient, task: TaskSpec, sessions: asyncio.Semaphore | None = None,
                      wrong_labels: Callable[[TaskSpec, list[str]], list[str]] | None = None) -> VerifyRow:
    """Oracle, no-op and wrong attempts of one task, concurrently: one env session each (the no-op
    reads the oracle's session before its first action), at most as many at once as `sessions`
    allows (the env pool refuses more than its size). `wrong_labels(task, labels)` picks which of
    the task's labelled wrong attempts run (default: every one)."""
    oracle, wrong = attempts_for(task.site, task.id)
    sessions = sessions or asyncio.Semaphore(8)

    async def attempt(steps: Sequence[OracleStep], kind: str, noop_too: bool = False) -> list[Attempt]:
        return await run_attempts_once_more(env, task, steps, kind, sessions, noop_too=noop_too)

    labels = list(wrong) if wrong_labels is None else [label for label in wrong_labels(task, list(wrong)) if label in wrong]
    if oracle is None:
        first = attempt([], "noop")
    else:
        first = attempt(oracle, "oracle", noop_too=True)
    done = await asyncio.gather(first, *(attempt(wrong[label], "wrong") for label in labels))
    noop = next(a for a in done[0] if a.kind == "noop")
    oracle_attempt = next((a for a in done[0] if a.kind == "oracle"), None)
    return VerifyRow(task, oracle=oracle_attempt, noop=noop, wrong={label: a[-1] for label, a in zip(labels, done[1:])})


async def verify_site_tasks(env: EnvClient, tasks: Sequence[TaskSpec], on_row=None, sessions: int = 4,
                            wrong_labels: Callable[[TaskSpec, list[str]], list[str]] | None = None) -> list[VerifyRow]:
    """Verify replica tasks with at most `sessions` env sessions open at once; `on_row(row)` is
    called as each task finishes (progress). Rows come back in the order of `tasks`."""
    return await per_task(tasks, lambda task, limit: verify_task(env, task, limit, wrong_labels), sessions, on_row)


async def per_task(tasks: Sequence[TaskSpec], run: Callable[[TaskSpec, asyncio.Semaphore], Awaitable[T]],
                   sessions: int, on_row: Callable[[T], object] | None = None) -> list[T]:
    """`run(task, limit)` for every task at once, `limit` holding the env sessions open together to
    `sessions`; `on_row(row)` as each task finishes (progress). Rows in the order of `tasks`."""
    limit = asyncio.Semaphore(sessions)

    async def one(task: TaskSpec) -> T:
        row = await run(task, limit)
        if on_row is not None:
            on_row(row)
        return row

    return list(await asyncio.gather(*(one(task) for task in tasks)))
