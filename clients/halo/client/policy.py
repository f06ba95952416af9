"""Typed async client of the policy gateway.

    async with PolicyClient("127.0.0.1:50053") as policy:
        response = await policy.sample("embedded", goal=task.goal, observation=obs, n=8, temperature=0.7)
        best = [c for c in response.candidates if c.valid]
"""

from __future__ import annotations

from collections.abc import Sequence

from halo.agent.actions import Action, action_to_proto
from halo.agent.context import PolicyContext, context_to_proto
from halo.agent.formats import ActionFormat
from halo.client.base import ServiceClient
from halo.v1 import common_pb2 as cpb
from halo.v1 import policy_pb2 as pb
from halo.v1 import policy_pb2_grpc as rpc


def policy_input(goal: str, observation: cpb.Observation, history: Sequence[tuple[Action | cpb.Action, str]] = ()) -> pb.PolicyInput:
    """A PolicyInput from an env observation and (action, error) pairs, oldest first."""
    steps = [
        pb.HistoryStep(action=a if isinstance(a, cpb.Action) else action_to_proto(a), error=error)
        for a, error in history
    ]
    return pb.PolicyInput(goal=goal, observation=observation, history=steps)


class PolicyClient(ServiceClient):
    stub_class = rpc.PolicyGatewayServiceStub
    stub: rpc.PolicyGatewayServiceStub

    async def sample(
        self, model: str, *, input: pb.PolicyInput | PolicyContext | None = None, goal: str = "",
        observation: cpb.Observation | None = None, history: Sequence[tuple[Action | cpb.Action, str]] = (),
        n: int = 1, temperature: float = 0.7, top_p: float = 1.0, max_tokens: int = 0, seed: int = 0,
        logprobs: bool = False, adapter: str = "", action_format: ActionFormat | None = None,
        prompt: pb.PromptOptions | None = None, tokens: pb.TokenPrompt | None = None, timeout_s: float | None = None,
        output_regex: str = "",
    ) -> pb.SampleResponse:
        """`tokens`: a prompt already rendered to token ids, sampled as is (tinker routes); `input`
        then only needs the viewport, for parsing coordinates. `output_regex`: every completion
        matches it (vLLM routes' structured outputs)."""
        if isinstance(input, PolicyContext):
            input = context_to_proto(input)
        if input is None and (tokens is None or observation is not None or goal):
            input = policy_input(goal, observation or cpb.Observation(), history)
        request = pb.SampleRequest(
            model=model, adapter=adapter, input=input, n=n, temperature=temperature, top_p=top_p,
            max_tokens=max_tokens, seed=seed, logprobs=logprobs, action_format=int(action_format or 0), prompt=prompt,
            tokens=tokens, output_regex=output_regex,
        )
        # not retried here: the gateway already retried the backend before answering UNAVAILABLE
        return await self._call(self.stub.Sample, request, timeout_s)

    async def critique(self, input: pb.PolicyInput | PolicyContext, candidates: Sequence[Action | cpb.Action],
                       model: str = "", timeout_s: float | None = None) -> pb.CritiqueResponse:
        if isinstance(input, PolicyContext):
            input = context_to_proto(input)
        actions = [a if isinstance(a, cpb.Action) else action_to_proto(a) for a in candidates]
        return await self._call(self.stub.Critique, pb.CritiqueRequest(model=model, input=input, candidates=actions), timeout_s)

    async def judge(self, *, answer: str, rubric: str, question: str = "", model: str = "",
                    timeout_s: float | None = None) -> pb.JudgeResponse:
        request = pb.JudgeRequest(model=model, answer=answer, rubric=rubric, question=question)
        return await self._call(self.stub.Judge, request, timeout_s)

    async def load_adapter(self, model: str, name: str, *, path: str = "", weights: bytes = b"",
                           make_default: bool = False, timeout_s: float | None = None) -> pb.LoadAdapterResponse:
        request = pb.LoadAdapterRequest(model=model, name=name, path=path, weights=weights, make_default=make_default)
        return await self._call(self.stub.LoadAdapter, request, timeout_s)

    async def unload_adapter(self, model: str, name: str) -> bool:
        response = await self._read(self.stub.UnloadAdapter, pb.UnloadAdapterRequest(model=model, name=name))
        return response.was_loaded

    async def list_models(self) -> list[pb.ModelRoute]:
        response = await self._read(self.stub.ListModels, pb.ListModelsRequest())
        return list(response.models)
