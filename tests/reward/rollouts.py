"""Drive a trajectory through the env service and score it with the reward service, like a trainer.

Each step: pick an action on the current observation, step the env, read the site's /finish
state, score the transition; at the end, evaluate and close the episode.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from halo.agent import actions as A
from halo.client.env import EnvClient, observation_options
from halo.client.reward import RewardClient, page_state
from halo.sites.oracle import OracleStep, resolve
from halo.v1 import common_pb2 as cpb
from halo.v1 import reward_pb2 as rpb

TEXT_ONLY = observation_options(screenshot=False)

#: Picks the next action on an observation; None stands for model output that did not parse.
Policy = Callable[[cpb.Observation], A.Action | None]


@dataclass
class Rollout:
    task_id: str
    breakdowns: list[rpb.RewardBreakdown] = field(default_factory=list)
    evaluation: rpb.EvaluationResult | None = None
    summary: rpb.EndEpisodeResponse | None = None
    state: dict = field(default_factory=dict)
    final_message: str = ""
    env_failure: str = ""     # the env failed the episode (infrastructure): not scored, see rollout_until_whole

    @property
    def shaped_return(self) -> float:
        return sum(b.total for b in self.breakdowns)

    @property
    def components(self) -> list[str]:
        return [c.name for b in self.breakdowns for c in b.components]


def oracle_policy(steps: Sequence[OracleStep]) -> list[Policy]:
    """One policy call per oracle step, each resolved on the page it is taken on."""
    remaining = list(steps)

    def pick(obs: cpb.Observation) -> A.Action | None:
        return resolve(remaining.pop(0), obs.elements)

    return [pick] * len(steps)


async def run_rollout(env: EnvClient, reward: RewardClient, task_id: str, policies: Sequence[Policy],
                      overrides: dict[str, float] | None = None) -> Rollout:
    created = await env.create_session(task_id, observation=TEXT_ONLY)
    sid, obs = created.session_id, created.observation
    out = Rollout(task_id)
    try:
        before = page_state(obs, (await env.get_state(sid)).state_json)
        await reward.start_episode(sid, task_id, overrides=overrides, initial=before)
        for index, policy in enumerate(policies, start=1):
            action = policy(obs)
            if action is None:   # unparsed output: nothing reaches the env
                out.breakdowns.append(await reward.score_transition(sid, index, None, before, before, action_ok=False))
                continue
            result = await env.step(sid, action, observation=TEXT_ONLY)
            if result.env_failure:   # the env closed the session: nothing of this episode is the task's outcome
                out.env_failure = result.env_failure_reason or "environment failure"
                return out
            obs = result.observation
            after = page_state(obs, (await env.get_state(sid)).state_json)
            out.breakdowns.append(await reward.score_transition(
                sid, index, action, before, after, action_ok=result.action_ok, done=result.done,
                env_failure=result.env_failure,
            ))
            before = after
            if result.done:
                break
        final = await env.get_state(sid)
        out.state, out.final_message = json.loads(final.state_json), final.final_message
        out.evaluation = await reward.evaluate(task_id, final.state_json, final.final_message, episode_id=sid)
        out.summary = await reward.end_episode(sid)
    finally:
        if not out.env_failure:
            await env.close_session(sid)
    return out


async def rollout_until_whole(env: EnvClient, reward: RewardClient, task_id: str, make_policies: Callable[[], Sequence[Policy]],
                              attempts: int = 3) -> Rollout:
    """run_rollout again (fresh policies) while the env fails the episode, as `halo tasks verify`
    does: an environment failure (a browser too slow under load) is never the policy's outcome."""
    for _ in range(attempts):
        rollout = await run_rollout(env, reward, task_id, make_policies())
        if not rollout.env_failure:
            return rollout
    raise AssertionError(f"{task_id}: {attempts} attempts in a row ended in environment failures: {rollout.env_failure}")
