"""gRPC glue of the reward service: protos in, plain Python to RewardCore, protos out."""

from __future__ import annotations

from google.protobuf.duration_pb2 import Duration

from halo.agent.actions import ActionConversionError, action_from_proto
from halo.agent.context import element_from_proto
from halo.tasks.registry import TaskRegistry, default_registry
from halo.reward.config import RewardConfig, RewardSettings
from halo.reward.core import FinalEvaluation, RewardCore, parse_state_json
from halo.reward.judge import Judge
from halo.reward.pages import PageSnapshot
from halo.reward.shaping import Breakdown
from halo.reward.transition import Transition
from halo.runtime.errors import InvalidArgument, translate_errors
from halo.runtime.server import ServiceSpec, grpc_service
from halo.v1 import common_pb2 as cpb
from halo.v1 import reward_pb2 as pb
from halo.v1 import reward_pb2_grpc as rpc

_EVAL_KINDS = {"script": cpb.EVAL_KIND_SCRIPT, "jmespath": cpb.EVAL_KIND_JMESPATH, "llm_judge": cpb.EVAL_KIND_LLM_JUDGE}


def page_from_proto(msg: pb.PageState) -> PageSnapshot:
    elements = tuple(element_from_proto(e) for e in msg.elements)
    return PageSnapshot(msg.url, msg.title, msg.axtree, parse_state_json(msg.state_json), elements)


def transition_from_proto(request: pb.ScoreTransitionRequest) -> Transition:
    action = None
    if request.HasField("action"):
        try:
            action = action_from_proto(request.action)
        except ActionConversionError as exc:
            raise InvalidArgument(f"action: {exc}") from exc
    elif request.action_parsed and not request.env_failure:
        raise InvalidArgument("action_parsed is set but no action was sent")
    return Transition(
        step_index=request.step_index, action=action, action_parsed=request.action_parsed, action_ok=request.action_ok,
        before=page_from_proto(request.before), after=page_from_proto(request.after), done=request.done,
        env_failure=request.env_failure,
    )


def breakdown_to_proto(result: Breakdown) -> pb.RewardBreakdown:
    return pb.RewardBreakdown(
        total=result.total,
        components=[pb.RewardComponent(name=c.name, value=c.value, detail=c.detail) for c in result.components],
        env_failure=result.env_failure, episode_return=result.episode_return,
    )


def evaluation_to_proto(result: FinalEvaluation) -> pb.EvaluationResult:
    duration = Duration()
    duration.FromNanoseconds(int(result.duration_s * 1e9))
    return pb.EvaluationResult(
        task_id=result.task_id, success=result.success, score=result.score,
        details=[
            pb.EvalDetail(
                index=d.index, kind=_EVAL_KINDS.get(d.kind, cpb.EVAL_KIND_UNSPECIFIED), passed=d.passed,
                description=d.description, output=d.output, error=d.error,
            )
            for d in result.details
        ],
        env_failure=result.env_failure, scorable=result.scorable, duration=duration, success_bonus=result.success_bonus,
        success_strict=result.success_strict, strict_failed=result.strict_failed,
    )


def config_to_proto(config: RewardConfig) -> pb.RewardConfig:
    return pb.RewardConfig(weights=config.weight_map(), yaml=config.to_yaml())


class RewardServicer(rpc.RewardServiceServicer):
    def __init__(self, core: RewardCore) -> None:
        self.core = core

    @translate_errors
    async def StartEpisode(self, request, context):
        initial = page_from_proto(request.initial) if request.HasField("initial") else None
        episode = self.core.start_episode(request.episode_id, request.task_id, dict(request.overrides), initial)
        return pb.StartEpisodeResponse(
            episode_id=episode.id, site=episode.site, milestones=[m.qualified_name for m in episode.milestones],
        )

    @translate_errors
    async def ScoreTransition(self, request, context):
        if not request.episode_id:
            raise InvalidArgument("episode_id is required")
        return breakdown_to_proto(self.core.score(request.episode_id, transition_from_proto(request)))

    @translate_errors
    async def Evaluate(self, request, context):
        result = await self.core.evaluate(
            request.task_id, request.state_json, request.final_message,
            episode_id=request.episode_id, env_failure=request.env_failure,
        )
        return evaluation_to_proto(result)

    @translate_errors
    async def EndEpisode(self, request, context):
        summary = self.core.end_episode(request.episode_id)
        if summary is None:
            return pb.EndEpisodeResponse(was_open=False)
        return pb.EndEpisodeResponse(
            was_open=True, episode_return=summary.episode_return, transitions=summary.transitions,
            milestones_paid=list(summary.milestones_paid),
        )

    @translate_errors
    async def GetRewardConfig(self, request, context):
        return config_to_proto(self.core.config_for(request.episode_id))


def build_service(
    settings: RewardSettings, registry: TaskRegistry | None = None, judge: Judge | None = None,
    config: RewardConfig | None = None,
) -> ServiceSpec:
    core = RewardCore(settings, registry or default_registry(), config=config, judge=judge)
    return grpc_service("reward", pb.DESCRIPTOR.services_by_name["RewardService"], rpc.add_RewardServiceServicer_to_server,
                        RewardServicer(core), core, on_start=core.start, on_stop=core.close)
