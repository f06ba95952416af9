"""gRPC glue of the policy gateway: protos in, plain Python to PolicyGateway, protos out."""

from __future__ import annotations

from google.protobuf.duration_pb2 import Duration

from halo.agent.actions import ActionConversionError, action_from_proto, action_to_proto
from halo.agent.context import context_from_proto
from halo.agent.formats import ActionFormat
from halo.policy.backends.base import Backend, PromptChunk, TokenPrompt
from halo.policy.config import GatewayConfig, GatewaySettings, load_gateway_config
from halo.policy.gateway import PolicyGateway, PromptOverrides, SampleCall
from halo.runtime.errors import InvalidArgument, translate_errors
from halo.runtime.server import ServiceSpec, grpc_service
from halo.v1 import policy_pb2 as pb
from halo.v1 import policy_pb2_grpc as rpc


def _duration(seconds: float) -> Duration:
    d = Duration()
    d.FromNanoseconds(int(seconds * 1e9))
    return d


def _context(msg: pb.PolicyInput, what: str = "input"):
    try:
        return context_from_proto(msg)
    except ActionConversionError as exc:
        raise InvalidArgument(f"{what}.history holds a malformed action: {exc}") from None


def _token_prompt(msg: pb.TokenPrompt) -> TokenPrompt:
    return TokenPrompt(
        chunks=tuple(PromptChunk(tuple(c.tokens), c.image, c.image_format, c.image_tokens) for c in msg.chunks),
        stop_token_ids=tuple(msg.stop_token_ids), stop=tuple(msg.stop),
    )


def _action_format(value: int) -> ActionFormat | None:
    if value == pb.ACTION_FORMAT_UNSPECIFIED:
        return None
    try:
        return ActionFormat(value)
    except ValueError:
        raise InvalidArgument(f"unknown action_format {value}") from None


class GatewayServicer(rpc.PolicyGatewayServiceServicer):
    def __init__(self, gateway: PolicyGateway) -> None:
        self.gateway = gateway

    @translate_errors
    async def Sample(self, request, context):
        if not request.HasField("input") and not request.HasField("tokens"):
            raise InvalidArgument("input (goal + observation) or tokens (a rendered prompt) is required")
        call = SampleCall(
            model=request.model, ctx=_context(request.input), adapter=request.adapter, n=request.n or 1,
            temperature=request.temperature, top_p=request.top_p or 1.0, max_tokens=request.max_tokens,
            seed=request.seed, logprobs=request.logprobs, action_format=_action_format(request.action_format),
            prompt=PromptOverrides(
                history_steps=request.prompt.history_steps, max_axtree_chars=request.prompt.max_axtree_chars,
                skip_axtree=request.prompt.skip_axtree, skip_screenshot=request.prompt.skip_screenshot,
            ),
            tokens=_token_prompt(request.tokens) if request.HasField("tokens") else None,
            output_regex=request.output_regex,
        )
        out = await self.gateway.sample(call)
        response = pb.SampleResponse(
            model=out.route, backend=out.backend_kind, adapter=out.adapter, adapter_version=out.adapter_version,
            usage=pb.Usage(prompt_tokens=out.prompt_tokens, completion_tokens=out.completion_tokens),
            latency=_duration(out.backend_seconds), prompt_token_ids=out.prompt_token_ids,
        )
        for c in out.candidates:
            candidate = response.candidates.add(
                text=c.text, valid=c.valid, repaired=bool(c.repairs), token_ids=c.token_ids, logprobs=c.logprobs,
                finish_reason=c.finish_reason, parsed_format=int(c.parsed_format or 0),
            )
            if c.action is not None:
                candidate.action.CopyFrom(action_to_proto(c.action, c.text))
            if c.parse_error is not None:
                candidate.parse_error = str(c.parse_error)
                candidate.parse_error_kind = int(c.parse_error.kind)
        return response

    @translate_errors
    async def Critique(self, request, context):
        try:
            candidates = [action_from_proto(a) for a in request.candidates]
        except ActionConversionError as exc:
            raise InvalidArgument(f"candidates: {exc}") from None
        scores, rationale, route, parsed = await self.gateway.critique(request.model, _context(request.input), candidates)
        return pb.CritiqueResponse(scores=scores, rationale=rationale, model=route, parsed=parsed)

    @translate_errors
    async def Judge(self, request, context):
        verdict, route = await self.gateway.judge(request.model, request.question, request.answer, request.rubric)
        return pb.JudgeResponse(passed=verdict.passed, score=verdict.score, rationale=verdict.rationale, model=route,
                                parsed=verdict.parsed)

    @translate_errors
    async def LoadAdapter(self, request, context):
        version = await self.gateway.load_adapter(request.model, request.name, request.path, request.weights, request.make_default)
        return pb.LoadAdapterResponse(name=request.name, version=version)

    @translate_errors
    async def UnloadAdapter(self, request, context):
        return pb.UnloadAdapterResponse(was_loaded=await self.gateway.unload_adapter(request.model, request.name))

    @translate_errors
    async def ListModels(self, request, context):
        return pb.ListModelsResponse(models=[
            pb.ModelRoute(
                name=info.config.name, backend=info.kind, base_model=info.config.base_model or info.config.served_model,
                endpoint=info.endpoint, adapters=info.adapters, default_action_format=int(info.config.format),
                max_concurrency=info.config.max_concurrency, healthy=info.healthy, default_adapter=info.default_adapter,
            )
            for info in self.gateway.list_models()
        ])


def build_service(settings: GatewaySettings, config: GatewayConfig | None = None,
                  backends: dict[str, Backend] | None = None) -> ServiceSpec:
    """`config` replaces the YAML (tests); `backends` replaces built backends by route name."""
    config = (config or load_gateway_config(settings.config)).only(settings.only_routes)
    gateway = PolicyGateway(config, backends)
    return grpc_service("gateway", pb.DESCRIPTOR.services_by_name["PolicyGatewayService"], rpc.add_PolicyGatewayServiceServicer_to_server,
                        GatewayServicer(gateway), gateway,
                        on_start=lambda: gateway.start(settings.health_interval_s), on_stop=gateway.close)
