"""Can the embedded policy solve a replica task at all? Walk the task's oracle with the policy's own candidates.

At each oracle step the oracle's action is resolved on the live page and looked for among the
embedded policy's candidates for that observation (`halo.embedded.candidates`, goal +
observation only): the same action ("exact"), or a fill of the same field with one of the
candidate texts from the goal ("text": the one sharing most words with the oracle's text). When the
target is below the fold, the policy's own "scroll down" candidate is taken first (up to 5 times).
When no candidate does what the oracle does, the walk stops ("missing"). The end state is scored
by agisdk's evaluator, as any episode is. A task whose walk scores 1 is within the policy's reach:
some sequence of its candidates solves it (a sufficient condition, not a necessary one).

Used by `halo tasks reach` and by the curriculum test.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from halo.agent import actions as A
from halo.agent.context import page_from_proto
from halo.client.env import EnvClient, observation_options
from halo.embedded.candidates import CandidateAction, candidates_for
from halo.reward.evaluator import evaluate_async
from halo.sites.oracle import OracleStep, resolve
from halo.sites.registry import attempts_for
from halo.tasks.registry import TaskSpec

_TEXT_ONLY = observation_options(screenshot=False)
MAX_SCROLLS = 5


@dataclass
class Reach:
    task_id: str
    oracle_steps: int
    walked: list[str] = field(default_factory=list)     # per oracle step: exact | text | scroll+exact ... | missing: why
    candidates: list[int] = field(default_factory=list)  # how many candidates each decision had
    score: float = 0.0

    @property
    def missing(self) -> str:
        return next((w for w in self.walked if w.startswith("missing")), "")

    @property
    def reachable(self) -> bool:
        return self.score == 1.0 and not self.missing


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def match_candidate(action: A.Action, candidates: Sequence[CandidateAction]) -> tuple[CandidateAction | None, str]:
    """The candidate that does what `action` does: the same action, or a fill of the same field."""
    for c in candidates:
        if c.action == action:
            return c, "exact"
    if isinstance(action, (A.Fill, A.TypeText)):
        bid = getattr(action, "bid", None)
        fills = [c for c in candidates if isinstance(c.action, A.Fill) and (bid is None or c.action.bid == bid)]
        if fills:
            best = max(fills, key=lambda c: len(_words(c.action.text) & _words(action.text)))
            return best, "text"
    return None, ""


async def walk_oracle(env: EnvClient, task: TaskSpec, steps: Sequence[OracleStep]) -> Reach:
    reach = Reach(task.id, len(steps))
    created = await env.create_session(task.id, observation=_TEXT_ONLY)
    session_id, obs = created.session_id, created.observation
    try:
        for step in steps:
            how = ""
            for scrolls in range(MAX_SCROLLS + 1):
                candidates = candidates_for(task.goal, page_from_proto(obs))
                reach.candidates.append(len(candidates))
                try:
                    action = resolve(step, obs.elements)
                except LookupError as exc:
                    how = f"missing: {exc}"
                    break
                chosen, kind = match_candidate(action, candidates)
                if chosen is not None:
                    how = "scroll+" * scrolls + kind
                    break
                if scrolls == MAX_SCROLLS:
                    how = f"missing: no candidate {A.describe(action)}"
                    break
                obs = (await env.step(session_id, A.Scroll(delta_y=400.0), observation=_TEXT_ONLY)).observation
            reach.walked.append(how)
            if how.startswith("missing"):
                break
            result = await env.step(session_id, chosen.action, observation=_TEXT_ONLY)
            if result.env_failure:
                raise RuntimeError(f"env failure while walking {task.id}: {result.env_failure_reason}")
            obs = result.observation
        state = await env.get_state(session_id)
    finally:
        await env.close_session(session_id)
    reach.score = (await evaluate_async(task, json.loads(state.state_json), state.final_message)).score
    return reach


async def survey(env: EnvClient, tasks: Sequence[TaskSpec]) -> list[Reach]:
    out = []
    for task in tasks:
        oracle, _ = attempts_for(task.site, task.id)
        if oracle is not None:
            out.append(await walk_oracle(env, task, oracle))
    return out
