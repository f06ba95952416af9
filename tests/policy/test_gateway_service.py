"""The gateway through gRPC: the embedded route end to end, adapters, routing and error codes."""

from __future__ import annotations

import asyncio
import os
import signal
import time

import pytest

from halo.agent import actions as A
from halo.agent.actions import action_from_proto
from halo.agent.context import PastStep
from halo.embedded.policy import EmbeddedPolicy, ScoringHead, head_to_bytes
from halo.errors import DeadlineExceeded, FailedPrecondition, InvalidArgument, NotFound, ResourceExhausted, Unavailable
from halo.v1 import policy_pb2 as pb
from tests.policy import pages


def target_head(target_description: str, policy: EmbeddedPolicy, steps: int = 60) -> ScoringHead:
    """A head trained (a few Adam steps on CPU) to prefer one candidate: what a trainer pushes."""
    import torch

    head = ScoringHead(seed=1)
    features = policy.featurize(pages.context())
    index = [c.description for c in features.candidates].index(target_description)
    optimizer = torch.optim.Adam(head.parameters(), lr=0.02)
    for _ in range(steps):
        loss = -EmbeddedPolicy.log_probs(head, features.tensor)[index]
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return head.eval()


async def test_embedded_sample_returns_valid_actions_with_token_free_logprobs(policy, gateway):
    response = await policy.sample("embedded", input=pages.policy_input(), n=6, temperature=1.0, seed=7)
    assert response.model == "embedded" and response.backend == pb.BACKEND_KIND_EMBEDDED
    assert len(response.candidates) == 6 and response.adapter == "" and response.adapter_version == 0
    backend = gateway.spec.core.routes["embedded"].backend
    features = backend.policy.featurize(pages.context())
    for c in response.candidates:
        assert c.valid and not c.parse_error and c.finish_reason == "stop"
        assert len(c.token_ids) == 1 and len(c.logprobs) == 1 and c.logprobs[0] < 0
        chosen = features.candidates[c.token_ids[0]]  # the index is into the policy's enumeration
        assert action_from_proto(c.action) == chosen.action
        assert c.action.raw_text == c.text and c.parsed_format == pb.ACTION_FORMAT_JSON
    # a trainer recomputes the same log-probability from the same features: ratios start at exactly 1
    logp = EmbeddedPolicy.log_probs(backend.base_head, features.tensor, 1.0).detach()
    for c in response.candidates:
        assert abs(float(logp[c.token_ids[0]]) - c.logprobs[0]) < 1e-5
    again = await policy.sample("embedded", input=pages.policy_input(), n=6, temperature=1.0, seed=7)
    assert [c.token_ids[0] for c in again.candidates] == [c.token_ids[0] for c in response.candidates]


async def test_embedded_weights_load_like_an_adapter_and_change_the_policy(policy, gateway):
    backend = gateway.spec.core.routes["embedded"].backend
    head = target_head('click button "Sign up"', backend.policy)
    loaded = await policy.load_adapter("embedded", "grpo", weights=head_to_bytes(head))
    assert loaded.name == "grpo" and loaded.version == 1
    greedy = await policy.sample("embedded", input=pages.policy_input(), adapter="grpo", temperature=0.0)
    assert action_from_proto(greedy.candidates[0].action) == pages.SIGNUP_CLICK
    assert greedy.adapter == "grpo" and greedy.adapter_version == 1
    base = await policy.sample("embedded", input=pages.policy_input(), n=16, temperature=1.0, seed=3)
    tuned = await policy.sample("embedded", input=pages.policy_input(), adapter="grpo", n=16, temperature=1.0, seed=3)
    hits = lambda r: sum(action_from_proto(c.action) == pages.SIGNUP_CLICK for c in r.candidates)  # noqa: E731
    assert hits(tuned) > hits(base)
    # replacing under the same name bumps the version; make_default serves it without naming it
    other = target_head('fill textbox "Email" with "bob@example.com"', backend.policy)
    again = await policy.load_adapter("embedded", "grpo", weights=head_to_bytes(other), make_default=True)
    assert again.version == 2
    default = await policy.sample("embedded", input=pages.policy_input(), temperature=0.0)
    assert default.adapter == "grpo" and default.adapter_version == 2
    assert action_from_proto(default.candidates[0].action) == pages.FILL_EMAIL
    models = {m.name: m for m in await policy.list_models()}
    assert models["embedded"].adapters == ["grpo"] and models["embedded"].default_adapter == "grpo"
    assert await policy.unload_adapter("embedded", "grpo") is True
    assert await policy.unload_adapter("embedded", "grpo") is False  # idempotent
    with pytest.raises(NotFound, match="grpo"):
        await policy.sample("embedded", input=pages.policy_input(), adapter="grpo")
    back_to_base = await policy.sample("embedded", input=pages.policy_input(), temperature=0.0)
    assert back_to_base.adapter == "" and back_to_base.adapter_version == 0


async def test_bad_weights_are_invalid_argument(policy):
    with pytest.raises(InvalidArgument, match="safetensors"):
        await policy.load_adapter("embedded", "junk", weights=b"not weights at all")
    from safetensors.torch import save
    import torch

    wrong = save({"w": torch.zeros(3)}, metadata={"format": "something-else"})
    with pytest.raises(InvalidArgument, match="format"):
        await policy.load_adapter("embedded", "junk", weights=wrong)
    with pytest.raises(InvalidArgument):
        await policy.load_adapter("embedded", "junk")


async def test_history_and_critique_on_the_embedded_route(policy):
    history = (PastStep(pages.FILL_EMAIL),)
    response = await policy.sample("embedded", input=pages.policy_input(history), n=2, temperature=0.7)
    assert all(c.valid for c in response.candidates)
    critique = await policy.critique(pages.policy_input(), [pages.SIGNUP_CLICK, pages.FILL_EMAIL, A.Goto("http://x/")])
    assert critique.model == "embedded" and critique.parsed and len(critique.scores) == 3
    assert all(0.0 <= s <= 1.0 for s in critique.scores) and max(critique.scores[:2]) == pytest.approx(max(critique.scores))
    assert critique.scores[2] == 0.0  # not an action the embedded policy can take
    with pytest.raises(FailedPrecondition, match="cannot judge"):
        await policy.judge(answer="42", rubric="the answer is 42", model="embedded")


async def test_unknown_route_and_bad_requests(policy):
    with pytest.raises(NotFound, match="no model route 'nope'"):
        await policy.sample("nope", input=pages.policy_input())
    with pytest.raises(InvalidArgument, match="n must be"):
        await policy.sample("embedded", input=pages.policy_input(), n=65)
    with pytest.raises(InvalidArgument, match="input"):
        await policy._call(policy.stub.Sample, pb.SampleRequest(model="embedded"))
    with pytest.raises(InvalidArgument, match="temperature"):
        await policy.sample("embedded", input=pages.policy_input(), temperature=-1)
    with pytest.raises(NotFound):
        await policy.critique(pages.policy_input(), [pages.SIGNUP_CLICK], model="nope")


async def test_backend_down_is_unavailable_after_retries(policy, vllm_server):
    started = time.monotonic()
    with pytest.raises(Unavailable, match="route 'down'.*unavailable after 2 attempt"):
        await policy.sample("down", input=pages.policy_input())
    assert time.monotonic() - started < 10
    models = {m.name: m for m in await policy.list_models()}
    assert models["down"].backend == pb.BACKEND_KIND_VLLM and not models["down"].healthy
    assert models["embedded"].healthy and models["vllm"].healthy


async def test_missing_credentials_are_a_failed_precondition(policy):
    with pytest.raises(FailedPrecondition, match="HALO_TEST_UNSET_TINKER_KEY"):
        await policy.sample("tinker-nokey", input=pages.policy_input())


async def _until_in_flight(route: str, count: int, timeout_s: float = 30.0) -> None:
    """Until the (in-process) gateway holds `count` calls of `route` on its backend."""
    from prometheus_client import REGISTRY

    deadline = time.monotonic() + timeout_s
    while (REGISTRY.get_sample_value("halo_gateway_in_flight", {"route": route}) or 0) < count:
        assert time.monotonic() < deadline, f"route {route}: not {count} call(s) in flight within {timeout_s:g} s"
        await asyncio.sleep(0.02)


async def test_slow_backend_is_deadline_exceeded_and_full_route_is_resource_exhausted(policy, vllm_server):
    # a hung vLLM, for real: its API server stopped (SIGSTOP) accepts connections and never answers
    os.kill(vllm_server.pid, signal.SIGSTOP)
    try:
        with pytest.raises(DeadlineExceeded, match="timed out"):
            await policy.sample("vllm-strict", input=pages.policy_input())
        # vllm-strict allows one call in flight and queues 0.2 s: the second of two concurrent calls is refused
        first = asyncio.create_task(policy.sample("vllm-strict", input=pages.policy_input()))
        await _until_in_flight("vllm-strict", 1)   # the first call holds the route's one slot
        with pytest.raises(ResourceExhausted, match="slots busy"):
            await policy.sample("vllm-strict", input=pages.policy_input())
        with pytest.raises(DeadlineExceeded):
            await first
    finally:
        os.kill(vllm_server.pid, signal.SIGCONT)
    assert (await policy.sample("vllm", input=pages.policy_input(), temperature=0.0)).candidates   # and it recovers


async def test_embedded_candidates_are_written_in_the_requested_syntax(policy):
    response = await policy.sample("embedded", input=pages.policy_input(), n=3, temperature=1.0, seed=1,
                                   action_format=pb.ACTION_FORMAT_BROWSERGYM)
    from halo.agent.parse import parse_action
    from halo.agent.formats import ActionFormat

    for c in response.candidates:
        assert c.parsed_format == pb.ACTION_FORMAT_BROWSERGYM
        assert parse_action(c.text, ActionFormat.BROWSERGYM).action == action_from_proto(c.action)
