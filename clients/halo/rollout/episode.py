"""One episode of a policy on a task, through the services: env steps, reward per transition,
REAL evaluation at the end. Shared by GRPO, MCTS and evaluation.

Environment failures end the episode with `env_failure=True`; callers drop such episodes
instead of learning from a fake zero reward. That covers a browser that crashed (the env service
says so) and an env service that went away mid-episode: unreachable or restarting (UNAVAILABLE),
too slow to answer (DEADLINE_EXCEEDED), or back without the session it lost (NOT_FOUND).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from halo.agent import actions as A
from halo.agent.context import PageView, PastStep, PolicyContext, page_from_proto
from halo.client.env import EnvClient, observation_options
from halo.client.reward import RewardClient, page_state
from halo.errors import DeadlineExceeded, HaloError, NotFound, ResourceExhausted, Unavailable
from halo.v1 import common_pb2 as cpb


@dataclass
class Decision:
    """What a policy chose for one observation."""

    action: A.Action | None            # None when the model output could not be parsed
    raw_text: str = ""
    parse_error: str = ""
    logprob: float = 0.0               # log-probability of the choice under the sampling policy
    tokens: int = 0                    # completion tokens (0 for the embedded policy)
    extras: dict[str, Any] = field(default_factory=dict)   # what a learner needs to replay the choice
    #: the action's proto as the gateway sent it (raw text included): it goes on to the env and the
    #: reward service as it is, not converted back and forth once more
    message: cpb.Action | None = None

    def action_message(self) -> tuple[A.Action, cpb.Action]:
        """The action to execute (noop when the output did not parse) and its proto."""
        if self.action is None:
            return A.Noop(), A.action_to_proto(A.Noop(), self.raw_text)
        return self.action, self.message if self.message is not None else A.action_to_proto(self.action, self.raw_text)


class Policy(Protocol):
    async def decide(self, ctx: PolicyContext) -> Decision: ...


@dataclass
class Transition:
    context: PolicyContext
    decision: Decision
    reward: float
    components: dict[str, float]
    action_ok: bool
    action_error: str = ""
    timings: dict[str, float] = field(default_factory=dict)   # seconds: policy_s, env_s, reward_s


@dataclass
class Episode:
    task_id: str
    seed: int
    transitions: list[Transition] = field(default_factory=list)
    success: bool = False              # agisdk's verdict (REAL's scoring)
    success_strict: bool = False       # agisdk's verdict AND HALO's strict checks (docs/reference/graders.md)
    success_bonus: float = 0.0
    env_failure: bool = False
    env_failure_reason: str = ""
    env_retries: int = 0               # earlier attempts lost to environment failures (rollout.retries)
    final_message: str = ""
    eval_details: list[str] = field(default_factory=list)
    scorable: bool = True              # false when agisdk cannot score the task
    final_page: PageView | None = None  # the observation after the last step (evaluation viewer)
    timings: dict[str, float] = field(default_factory=dict)   # seconds: setup_s, evaluate_s, total_s
    weight_version: int | None = None  # the policy weights (learner updates) it was sampled from

    @property
    def ret(self) -> float:
        return sum(t.reward for t in self.transitions) + self.success_bonus

    @property
    def length(self) -> int:
        return len(self.transitions)

    @property
    def valid_actions(self) -> int:
        return sum(t.decision.action is not None and t.action_ok for t in self.transitions)

    @property
    def tokens(self) -> int:
        return sum(t.decision.tokens for t in self.transitions)


@dataclass(frozen=True)
class RolloutConfig:
    max_steps: int = 70
    screenshots: bool = True           # the embedded policy reads the AXTree only: skip them to go faster
    image_format: str = "jpeg"
    reward_overrides: dict[str, float] = field(default_factory=dict)
    run_id: str = ""
    history_steps: int = 5
    #: how long to wait for a free env session when the pool is full (another group finishing,
    #: a killed client's sessions not yet reaped) before the episode is an environment failure
    pool_wait_s: float = 300.0


#: Env-service answers that mean the service, not the task, failed (NOT_FOUND only once the session exists).
ENV_SERVICE_DOWN = (Unavailable, DeadlineExceeded)


class EnvServiceLost(Exception):
    """The env service failed mid-episode (down, restarted, too slow): an environment failure."""


async def _env_call(call):
    try:
        return await call
    except (*ENV_SERVICE_DOWN, NotFound) as exc:
        raise EnvServiceLost(f"env service: {exc}") from exc


def episode_observation(config: RolloutConfig) -> cpb.ObservationOptions:
    """What an episode's observations contain (also part of the key a primed session is made for)."""
    return observation_options(config.image_format, 80, screenshot=config.screenshots)


async def run_episode(
    env: EnvClient, reward: RewardClient, policy: Policy, task_id: str, seed: int, config: RolloutConfig,
) -> Episode:
    opts = episode_observation(config)
    episode = Episode(task_id, seed)
    clock = time.perf_counter
    started = clock()
    try:
        created = await env.create_session(task_id, seed=seed, max_steps=config.max_steps, observation=opts,
                                           run_id=config.run_id, wait_for_slot_s=config.pool_wait_s, include_state=True)
    except (*ENV_SERVICE_DOWN, ResourceExhausted) as exc:
        episode.env_failure, episode.env_failure_reason = True, f"env service: {exc}"
        return episode
    session_id, obs = created.session_id, created.observation
    # a replica's state comes with every reply (include_state): no GetState per step; a remote
    # site's replies carry none (its /finish is a page to load), and it is read once, at the end
    replica = created.task.replica_available
    try:
        before = page_state(obs, created.state_json)
        await reward.start_episode(session_id, task_id, overrides=config.reward_overrides, initial=before)
        history: list[PastStep] = []
        done = False
        episode.timings["setup_s"] = clock() - started
        while not done:
            ctx = PolicyContext(goal=created.task.goal, page=page_from_proto(obs), history=tuple(history[-config.history_steps:]))
            t0 = clock()
            decision = await policy.decide(ctx)
            action, message = decision.action_message()
            t1 = clock()
            result = await _env_call(env.step(session_id, message, observation=opts, include_state=True))
            if result.env_failure:
                episode.env_failure, episode.env_failure_reason = True, result.env_failure_reason
                return episode
            obs, done = result.observation, result.done
            after = page_state(obs, result.state_json)
            t2 = clock()
            breakdown = await reward.score_transition(
                session_id, len(episode.transitions), message if decision.action is not None else None, before, after,
                action_ok=result.action_ok, done=done,
            )
            episode.transitions.append(Transition(
                ctx, decision, breakdown.total, {c.name: c.value for c in breakdown.components},
                result.action_ok, result.action_error,
                timings={"policy_s": t1 - t0, "env_s": t2 - t1, "reward_s": clock() - t2},
            ))
            history.append(PastStep(action, result.action_error, decision.raw_text, message))
            before = after
        episode.final_page = page_from_proto(obs)
        t0 = clock()
        if replica:   # the last step's reply holds the final state and message
            state_json, episode.final_message = result.state_json, result.final_message
        else:
            state = await _env_call(env.get_state(session_id))
            state_json, episode.final_message = state.state_json, state.final_message
        evaluation = await reward.evaluate(task_id, state_json, episode.final_message, episode_id=session_id)
        episode.success, episode.success_bonus, episode.scorable = evaluation.success, evaluation.success_bonus, evaluation.scorable
        episode.success_strict = evaluation.success_strict
        episode.eval_details = [f"{d.description}: {'pass' if d.passed else 'fail'} {d.output or d.error}".strip()
                                for d in evaluation.details]
        episode.timings |= {"evaluate_s": clock() - t0, "total_s": clock() - started}
        return episode
    except EnvServiceLost as exc:
        episode.env_failure, episode.env_failure_reason = True, str(exc)
        return episode
    finally:
        try:
            await reward.end_episode(session_id)
        except Exception:
            pass  # the episode may never have started (env failure before StartEpisode)
        try:
            await env.close_session(session_id)
        except (*ENV_SERVICE_DOWN, NotFound):
            # the env service went away (the episode's own failure, or after its last reply: the
            # episode is whole then, its evaluation done): it cannot close the session; its idle
            # TTL reaps it once the service answers again
            pass
        except HaloError:
            if not episode.env_failure:
                raise   # a close refused for another reason is a bug to see, not an env outage
