"""The policy every app samples with: one action per decision through the gateway's Sample API."""

from __future__ import annotations

from dataclasses import dataclass, replace

from halo.agent.actions import action_from_proto
from halo.agent.context import PolicyContext
from halo.client.policy import PolicyClient
from halo.rollout.episode import Decision
from halo.v1 import policy_pb2 as ppb


@dataclass
class GatewayPolicy:
    """A Policy that samples one action per decision through the gateway's Sample API.

    With a `seed_base`, the decision at observation step k samples with seed `seed_base + k`
    (backends that take a seed then draw reproducibly); 0 leaves the draws to the backend.
    """

    client: PolicyClient
    model: str
    adapter: str
    temperature: float
    seed_base: int = 0

    def for_episode(self, seed_base: int) -> "GatewayPolicy":
        return replace(self, seed_base=seed_base)

    async def decide(self, ctx: PolicyContext) -> Decision:
        seed = self.seed_base + ctx.page.step_index if self.seed_base else 0
        response = await self.client.sample(self.model, input=ctx, n=1, temperature=self.temperature,
                                            adapter=self.adapter, logprobs=True, seed=seed)
        c = response.candidates[0]
        embedded = response.backend == ppb.BACKEND_KIND_EMBEDDED  # its one "token" is the candidate index
        return Decision(
            action=action_from_proto(c.action) if c.valid else None, raw_text=c.text, parse_error=c.parse_error,
            logprob=sum(c.logprobs), tokens=0 if embedded else len(c.token_ids),
            extras={"index": c.token_ids[0]} if embedded and c.token_ids else {},
            message=c.action if c.valid else None,
        )
