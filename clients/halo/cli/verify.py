"""Run oracle / no-op / plausible-wrong attempts through the env service and score them with agisdk.

Used by `halo tasks verify` and the replica tests: every replica task must score 1 with its
oracle and 0 with a no-op or a plausible wrong attempt.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from halo.agent import actions as A
from halo.client.env import EnvClient, observation_options
from halo.tasks.registry import TaskSpec
from halo.reward.evaluator import Evaluation, evaluate_async
from halo.sites.oracle import OracleStep, resolve
from halo.sites.registry import attempts_for

_TEXT_ONLY = observation_options(screenshot=False)
#: How the env service reports an action past its action timeout (Playwright's own wording follows).
TIMED_OUT = "timed out"


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
    created = await env.create_session(task.id, seed=seed, observation=_TEXT_ONLY)
    session_id, obs = created.session_id, created.observation
    errors: list[str] = []
    try:
        for step in steps:
            try:
                action = resolve(step, obs.elements)
            except LookupError as exc:   # the page is not what the oracle expects: the attempt stops, scored as is
                errors.append(str(exc))
                break
            result = await env.step(session_id, action, observation=_TEXT_ONLY)
            if result.env_failure:
                raise RuntimeError(f"env failure during {kind} of {task.id}: {result.env_failure_reason}")
            if not result.action_ok:
                errors.append(f"{A.describe(action)}: {result.action_error}")
            obs = result.observation
        state = await env.get_state(session_id)
    finally:
        await env.close_session(session_id)
    attempt = Attempt(task.id, kind, json.loads(state.state_json), state.final_message, errors)
    # agisdk's scripts run as subprocesses: in a thread, so an env service sharing this event loop
    # (`halo tasks verify` on a local stack, the test sweep) keeps serving the other attempts.
    attempt.evaluation = await evaluate_async(task, attempt.state, attempt.final_message)
    return attempt


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


async def verify_task(env: EnvClient, task: TaskSpec, sessions: asyncio.Semaphore | None = None) -> VerifyRow:
    """Oracle, no-op and every wrong attempt of one task, concurrently: one env session each, at
    most as many at once as `sessions` allows (the env pool refuses more than its size)."""
    oracle, wrong = attempts_for(task.site, task.id)
    sessions = sessions or asyncio.Semaphore(8)

    async def attempt(steps: Sequence[OracleStep] | None, kind: str) -> Attempt | None:
        if steps is None:
            return None
        async with sessions:
            first = await run_attempt(env, task, steps, kind)
        if not any(TIMED_OUT in error for error in first.errors):
            return first
        # An action that ran past the env's action timeout says the machine was busy, not that the
        # replica is wrong: the attempt runs once more in a fresh session. A page that really
        # cannot be clicked times out again and is reported.
        async with sessions:
            return await run_attempt(env, task, steps, kind)

    labels = list(wrong)
    attempts = await asyncio.gather(attempt(oracle, "oracle"), attempt([], "noop"),
                                    *(attempt(wrong[label], "wrong") for label in labels))
    return VerifyRow(task, oracle=attempts[0], noop=attempts[1], wrong=dict(zip(labels, attempts[2:])))


async def verify_site_tasks(env: EnvClient, tasks: Sequence[TaskSpec], on_row=None, sessions: int = 4) -> list[VerifyRow]:
    """Verify replica tasks with at most `sessions` env sessions open at once; `on_row(row)` is
    called as each task finishes (progress). Rows come back in the order of `tasks`."""
    limit = asyncio.Semaphore(sessions)

    async def one(task: TaskSpec) -> VerifyRow:
        row = await verify_task(env, task, limit)
        if on_row is not None:
            on_row(row)
        return row

    return list(await asyncio.gather(*(one(task) for task in tasks)))
