"""Typed async client of the reward service.

    async with RewardClient(stack.reward_target) as reward:
        await reward.start_episode(session_id, task_id, initial=page_state(obs, state_json))
        breakdown = await reward.score_transition(session_id, step, action, before, after, action_ok=r.action_ok)
        result = await reward.evaluate(task_id, state_json, final_message, episode_id=session_id)
        summary = await reward.end_episode(session_id)
"""

from __future__ import annotations

from halo.agent.actions import Action, action_to_proto
from halo.client.base import ServiceClient
from halo.v1 import common_pb2 as cpb
from halo.v1 import reward_pb2 as pb
from halo.v1 import reward_pb2_grpc as rpc

# Scripts run with agisdk's 30 s timeout, several per task: give Evaluate room.
EVALUATE_TIMEOUT_S = 120.0


def page_state(obs: cpb.Observation | None = None, state_json: str = "", *, elements: bool = True) -> pb.PageState:
    """A PageState from an env observation (and the site's /finish JSON, on replicas).

    The reward service reads the page through its elements (halo.agent.context.PageElement: novelty
    and loop keys, milestones, the element under a coordinate click), never by re-parsing the AXTree
    text; `elements=False` leaves it the URL and title only.
    """
    if obs is None:
        return pb.PageState(state_json=state_json)
    return pb.PageState(
        url=obs.url, title=obs.title, axtree=obs.axtree, state_json=state_json,
        elements=list(obs.elements) if elements else [],
    )


class RewardClient(ServiceClient):
    stub_class = rpc.RewardServiceStub
    stub: rpc.RewardServiceStub

    async def start_episode(
        self, episode_id: str, task_id: str, *, overrides: dict[str, float] | None = None,
        initial: pb.PageState | None = None,
    ) -> pb.StartEpisodeResponse:
        request = pb.StartEpisodeRequest(episode_id=episode_id, task_id=task_id, overrides=overrides or {}, initial=initial)
        # Idempotent on the server (same task and overrides): safe to retry.
        return await self._read(self.stub.StartEpisode, request)

    async def score_transition(
        self, episode_id: str, step_index: int, action: Action | cpb.Action | None,
        before: pb.PageState, after: pb.PageState, *, action_ok: bool = True, action_parsed: bool | None = None,
        raw_text: str = "", done: bool = False, env_failure: bool = False,
    ) -> pb.RewardBreakdown:
        """Score one transition. `action=None` means the model output did not parse."""
        message = None
        if action is not None:
            message = action if isinstance(action, cpb.Action) else action_to_proto(action, raw_text)
        request = pb.ScoreTransitionRequest(
            episode_id=episode_id, step_index=step_index, action=message,
            action_parsed=action is not None if action_parsed is None else action_parsed,
            action_ok=action_ok, before=before, after=after, done=done, env_failure=env_failure,
        )
        # Idempotent for an immediate retry of the same transition (the server remembers the last one).
        return await self._read(self.stub.ScoreTransition, request)

    async def evaluate(
        self, task_id: str, state_json: str, final_message: str = "", *, episode_id: str = "",
        env_failure: bool = False, timeout_s: float | None = EVALUATE_TIMEOUT_S,
    ) -> pb.EvaluationResult:
        request = pb.EvaluateRequest(
            episode_id=episode_id, task_id=task_id, state_json=state_json, final_message=final_message,
            env_failure=env_failure,
        )
        return await self._read(self.stub.Evaluate, request, timeout_s)

    async def end_episode(self, episode_id: str) -> pb.EndEpisodeResponse:
        return await self._read(self.stub.EndEpisode, pb.EndEpisodeRequest(episode_id=episode_id))

    async def get_config(self, episode_id: str = "") -> pb.RewardConfig:
        return await self._read(self.stub.GetRewardConfig, pb.GetRewardConfigRequest(episode_id=episode_id))
