"""LLM-judge evals through the policy gateway's Judge route (halo.v1.PolicyGatewayService/Judge).

The reward service never talks to an LLM itself: the gateway owns model routes, keys and
retries. A judge that cannot be reached is not a task failure: it raises Unavailable (the caller
retries the evaluation); a gateway without a judge route is a FailedPrecondition; a judge reply
without a verdict makes the attempt unscorable (evaluator.py), never a failure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from halo.client.base import ServiceClient
from halo.errors import DeadlineExceeded, FailedPrecondition, HaloError, InvalidArgument, NotFound, Unavailable
from halo.v1 import policy_pb2 as pb
from halo.v1 import policy_pb2_grpc as rpc


@dataclass(frozen=True)
class Verdict:
    passed: bool
    score: float
    rationale: str = ""
    model: str = ""
    parsed: bool = True      # false: the judge's output held no verdict (no verdict on the agent either)


class Judge(Protocol):
    async def judge(self, *, answer: str, rubric: str, question: str = "") -> Verdict: ...


class GatewayJudge(ServiceClient):
    """A small client of the generated PolicyGatewayService stub, for its Judge rpc only."""

    stub_class = rpc.PolicyGatewayServiceStub
    stub: rpc.PolicyGatewayServiceStub

    def __init__(self, target: str, *, model: str = "", token: str = "", timeout_s: float = 60.0, tls_ca: str = "") -> None:
        super().__init__(target, token=token, timeout_s=timeout_s, tls_ca=tls_ca)
        self.model = model

    async def judge(self, *, answer: str, rubric: str, question: str = "") -> Verdict:
        request = pb.JudgeRequest(model=self.model, answer=answer, rubric=rubric, question=question)
        try:
            response = await self._read(self.stub.Judge, request)
        except (NotFound, FailedPrecondition, InvalidArgument) as exc:
            raise FailedPrecondition(f"the policy gateway at {self.target} cannot judge: {exc}") from None
        except (Unavailable, DeadlineExceeded) as exc:
            raise Unavailable(f"judge route at {self.target} unavailable: {exc}") from None
        except HaloError as exc:
            raise Unavailable(f"judge route at {self.target} failed: {exc}") from None
        return Verdict(response.passed, response.score, response.rationale, response.model, response.parsed)
