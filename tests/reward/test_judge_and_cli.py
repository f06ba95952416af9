"""LLM-judge evals over gRPC (reward service -> PolicyGatewayService/Judge), and `halo serve reward`."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time

import grpc
import pytest

from halo.client.reward import RewardClient
from halo.errors import FailedPrecondition, Unavailable
from halo.reward.config import RewardSettings
from halo.reward.server import build_service
from halo.runtime.server import start_service
from halo.v1 import common_pb2 as cpb
from halo.v1 import policy_pb2 as ppb
from halo.v1 import policy_pb2_grpc as prpc
from tests.reward.pagekit import diff
from tests.reward.test_core import judge_registry

SOLVED = json.dumps(diff({"signup": {"clicked": True}}))


class RubricGateway(prpc.PolicyGatewayServiceServicer):
    """A gateway whose judge route passes answers that mention "pro" (a stand-in for an LLM route)."""

    def __init__(self) -> None:
        self.requests: list[ppb.JudgeRequest] = []

    async def Judge(self, request, context):
        self.requests.append(request)
        if "gibberish" in request.answer:
            return ppb.JudgeResponse(passed=False, score=0.0, rationale="???", model="rubric", parsed=False)
        ok = "pro" in request.answer.lower()
        return ppb.JudgeResponse(passed=ok, score=float(ok), rationale="mentions pro" if ok else "no", model="rubric", parsed=True)


@pytest.fixture
async def gateway():
    servicer = RubricGateway()
    server = grpc.aio.server()
    prpc.add_PolicyGatewayServiceServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    yield f"127.0.0.1:{port}", servicer
    await server.stop(0)


async def _reward_service(**settings):
    s = RewardSettings(**{"port": 0, "metrics_port": -1, **settings})
    return await start_service(build_service(s, registry=judge_registry()), s)


async def test_llm_judge_evals_go_through_the_gateway(gateway):
    target, servicer = gateway
    running = await _reward_service(judge_target=target, judge_route="rubric")
    try:
        async with RewardClient(running.target) as reward:
            good = await reward.evaluate("playground-judged", SOLVED, "Your plan is Pro now.")
            bad = await reward.evaluate("playground-judged", SOLVED, "It is free.")
            unparsed = await reward.evaluate("playground-judged", SOLVED, "gibberish")
    finally:
        await running.stop(grace=0)
    assert good.success and good.score == 1.0
    assert [d.kind for d in good.details] == [cpb.EVAL_KIND_LLM_JUDGE, cpb.EVAL_KIND_JMESPATH]
    assert "mentions pro" in good.details[0].output and good.details[0].description == "says the plan is pro"
    assert not bad.success and [d.passed for d in bad.details] == [False, True] and bad.scorable
    assert not unparsed.success and not unparsed.scorable and "no verdict" in unparsed.details[0].error
    request = servicer.requests[0]
    assert request.model == "rubric" and request.rubric == "says the plan is pro" and request.answer == "Your plan is Pro now."
    assert request.question   # the task goal goes along as context


async def test_judge_evals_without_a_judge_route_are_failed_precondition():
    running = await _reward_service()
    try:
        async with RewardClient(running.target) as reward:
            with pytest.raises(FailedPrecondition, match="judge"):
                await reward.evaluate("playground-judged", SOLVED, "pro")
            plain = await reward.evaluate("playground-signup", SOLVED)   # tasks without judge evals still score
            assert plain.success
    finally:
        await running.stop(grace=0)


async def test_an_unreachable_judge_is_unavailable_not_a_failure():
    with socket.socket() as s:   # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        dead = f"127.0.0.1:{s.getsockname()[1]}"
    running = await _reward_service(judge_target=dead, judge_timeout_s=2)
    try:
        async with RewardClient(running.target, timeout_s=20) as reward:
            with pytest.raises(Unavailable, match="judge route"):
                await reward.evaluate("playground-judged", SOLVED, "pro")
    finally:
        await running.stop(grace=0)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_halo_serve_reward_runs_with_flags_and_stops_on_sigterm():
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "halo.cli", "serve", "reward", "--port", str(port), "--metrics-port", "-1",
         "--overrides", '{"loop_penalty": -1.0}'],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        async with RewardClient(f"127.0.0.1:{port}", timeout_s=5) as reward:
            deadline = time.monotonic() + 60
            while not await reward.healthy(timeout_s=1):
                assert proc.poll() is None, proc.stdout.read().decode()
                assert time.monotonic() < deadline, "reward service did not come up"
                await asyncio.sleep(0.2)
            config = await reward.get_config()
            assert config.weights["loop_penalty"] == -1.0 and config.weights["novelty_bonus"] == 0.2
    finally:
        proc.send_signal(signal.SIGTERM)
        output = proc.communicate(timeout=30)[0].decode()
    assert proc.returncode == 0, output
    assert "service stopped" in output
