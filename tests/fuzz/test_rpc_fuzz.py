"""Property-based fuzzing of every RPC of the env, reward, policy gateway and trainer services.

Real services on loopback (the session's LocalStack for env + reward, a gateway with the embedded
route and a trainer service started here), raw generated stubs, requests built from the message
descriptors (tests/fuzz/protofuzz.py). The contract: a call succeeds or fails with a status a
client can act on (INVALID_ARGUMENT, NOT_FOUND, FAILED_PRECONDITION, ...) and a message saying
why; never UNKNOWN/INTERNAL (an unhandled exception) nor DEADLINE_EXCEEDED (a hang). After the
fuzz every service still serves a normal call, and no fuzzed session or run is left behind.

Ids a random string would never hit are reached through placeholders ("@session", "@snapshot",
"@episode", "@run"), replaced before the call by the id of a live session, episode or run.

CI draws 25 requests per RPC, the same ones on every run of a commit (tests/conftest.py), and does
not shrink a failing request against the live services (shrinking replays hundreds of calls:
minutes per failure); the failing request is printed as it was drawn. `HALO_FUZZ_EXAMPLES=500
HALO_HYPOTHESIS_PROFILE=explore pytest tests/fuzz` searches deeper, with new examples each run and
shrinking on.
"""

from __future__ import annotations

import asyncio
import collections
import io
import json
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from google.protobuf import text_format
from google.protobuf.descriptor import FieldDescriptor
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from halo.v1 import common_pb2 as cpb
from halo.v1 import env_pb2, env_pb2_grpc, policy_pb2, policy_pb2_grpc, reward_pb2, reward_pb2_grpc
from halo.v1 import trainer_pb2, trainer_pb2_grpc
from tests.fuzz.protofuzz import requests

ALLOWED = {
    grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND, grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.OUT_OF_RANGE, grpc.StatusCode.ALREADY_EXISTS,
    grpc.StatusCode.ABORTED,
}
RPC_TIMEOUT_S = 30.0  # generous for a loaded 2-core machine; a fuzzed call that needs it is a hang
EXAMPLES = int(os.environ.get("HALO_FUZZ_EXAMPLES", "25"))
_EXPLORE = os.environ.get("HALO_HYPOTHESIS_PROFILE") == "explore"
FUZZ = settings(max_examples=EXAMPLES, deadline=None,
                phases=tuple(Phase) if _EXPLORE else (Phase.explicit, Phase.reuse, Phase.generate),
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])


OUTCOMES: collections.Counter = collections.Counter()  # (service, method, status) -> calls; printed by -s runs


@pytest.fixture(scope="module", autouse=True)
def _report_outcomes():
    yield
    for key, count in sorted(OUTCOMES.items()):
        print("fuzz outcome", *key, count)


def _short(msg) -> str:
    return text_format.MessageToString(msg, as_utf8=True)[:1500]


class Target:
    """One service under fuzz: its stub, request strategies, placeholders, and per-call cleanup."""

    def __init__(self, service, stub, hints: dict, placeholders: dict[str, Callable[[], Awaitable[str]]] | None = None,
                 after: Callable[[str, object, object, set], Awaitable[None]] | None = None) -> None:
        self.service = service            # ServiceDescriptor
        self.stub = stub
        self.hints = hints
        self.placeholders = placeholders or {}
        self.after = after                # (method, request, response or None, placeholders used)
        self._strategies: dict = {}

    def __repr__(self) -> str:  # hypothesis prints the fixtures of a failing example
        return f"Target({self.service.full_name})"

    def strategy(self, method: str):
        if method not in self._strategies:
            input_type = self.service.methods_by_name[method].input_type
            self._strategies[method] = requests(input_type, hints=self.hints)
        return self._strategies[method]

    async def substitute(self, request) -> set[str]:
        used = set()
        for f in request.DESCRIPTOR.fields:
            if f.type == FieldDescriptor.TYPE_STRING and not f.is_repeated:
                value = getattr(request, f.name)
                if value in self.placeholders:
                    setattr(request, f.name, await self.placeholders[value]())
                    used.add(value)
        return used

    async def fuzz(self, method: str, request) -> None:
        used = await self.substitute(request)
        rpc = getattr(self.stub, method)
        response = None
        try:
            if self.service.methods_by_name[method].server_streaming:
                response = await _read_stream(rpc(request, timeout=RPC_TIMEOUT_S))
            else:
                response = await rpc(request, timeout=RPC_TIMEOUT_S)
        except grpc.aio.AioRpcError as exc:
            OUTCOMES[(self.service.name, method, exc.code().name)] += 1
            assert exc.code() in ALLOWED, f"{method} -> {exc.code().name}: {exc.details()}\nrequest: {_short(request)}"
            assert exc.details(), f"{method} -> {exc.code().name} without a message\nrequest: {_short(request)}"
        else:
            OUTCOMES[(self.service.name, method, "OK")] += 1
        if self.after is not None:
            await self.after(method, request, response, used)


async def _read_stream(call, at_most: int = 2) -> list:
    """At most a couple of messages of a server stream, then hang up."""
    out = []
    async for message in call:
        out.append(message)
        if len(out) >= at_most:
            call.cancel()
            break
    return out


def _methods(service) -> list[str]:
    return [m.name for m in service.methods]


# ---------------------------------------------------------------------------------- env

ENV_SERVICE = env_pb2.DESCRIPTOR.services_by_name["EnvService"]


@dataclass
class LiveSession:
    stub: env_pb2_grpc.EnvServiceStub
    session_id: str = ""
    snapshot_id: str = ""
    created: int = 0

    async def session(self) -> str:
        if not self.session_id:
            response = await self.stub.CreateSession(env_pb2.CreateSessionRequest(
                task_id="playground-signup", observation=cpb.ObservationOptions(skip_screenshot=True)), timeout=RPC_TIMEOUT_S)
            self.session_id, self.snapshot_id = response.session_id, ""
            self.created += 1
        return self.session_id

    async def snapshot(self) -> str:
        session_id = await self.session()
        if not self.snapshot_id:
            self.snapshot_id = (await self.stub.Snapshot(env_pb2.SnapshotRequest(session_id=session_id), timeout=RPC_TIMEOUT_S)).snapshot_id
        return self.snapshot_id

    async def refresh(self) -> None:
        """Forget the live session when a fuzzed call ended or closed it (the next use opens a fresh one)."""
        if not self.session_id:
            return
        try:
            state = await self.stub.GetState(env_pb2.GetStateRequest(session_id=self.session_id), timeout=RPC_TIMEOUT_S)
        except grpc.aio.AioRpcError as exc:
            assert exc.code() == grpc.StatusCode.NOT_FOUND, exc
            self.session_id = self.snapshot_id = ""
            return
        if state.done:
            await self.close()

    async def close(self) -> None:
        if self.session_id:
            await self.stub.CloseSession(env_pb2.CloseSessionRequest(session_id=self.session_id), timeout=RPC_TIMEOUT_S)
            self.session_id = self.snapshot_id = ""


@pytest.fixture(scope="module")
async def env_target(stack):
    async with grpc.aio.insecure_channel(stack.env_target) as channel:
        stub = env_pb2_grpc.EnvServiceStub(channel)
        baseline = (await stub.GetPoolStats(env_pb2.GetPoolStatsRequest())).active_sessions
        tasks = (await stub.ListTasks(env_pb2.ListTasksRequest())).tasks
        task_ids = sorted({"playground-signup", "playground-finish", *[t.id for t in tasks if t.replica_available][:3],
                           *[t.id for t in tasks if not t.replica_available][:2]})
        sites = sorted({t.site for t in tasks})
        live = LiveSession(stub)

        async def after(method, request, response, used):
            if method == "CreateSession" and response is not None:  # a fuzzed create that opened a session: close it
                closed = await stub.CloseSession(env_pb2.CloseSessionRequest(session_id=response.session_id), timeout=RPC_TIMEOUT_S)
                assert closed.was_open
            if used:
                await live.refresh()

        hints = {
            "session_id": st.just("@session"), "snapshot_id": st.just("@snapshot"),
            "task_id": st.sampled_from(task_ids + ["v2." + task_ids[-1]]), "site": st.sampled_from(sites),
            "suite": st.sampled_from(["real-v2", "halo"]),
            "milliseconds": st.integers(0, 300),  # the server caps waits (max_wait_ms); keep the fuzz fast
            "jpeg_quality": st.integers(0, 100), "skip_screenshot": st.just(True),
            "url": st.sampled_from([stack.sites.url + "/", stack.sites.url + "/nope?x=1", "http://example.com/",
                                    "file:///etc/passwd", "javascript:alert(1)", "about:blank", "chrome://version",
                                    "data:text/html,<b>x</b>", "http://[::1", "ftp://x"]),
        }
        hints["action"] = requests(cpb.Action.DESCRIPTOR, hints=hints, oneof_set=True)  # half the steps carry an action
        target = Target(ENV_SERVICE, stub, hints, placeholders={"@session": live.session, "@snapshot": live.snapshot},
                        after=after)
        target.live, target.baseline = live, baseline
        yield target
        await live.close()


@pytest.mark.parametrize("method", _methods(ENV_SERVICE))
@FUZZ
@given(data=st.data())
async def test_env_rpcs(env_target, method, data):
    await env_target.fuzz(method, data.draw(env_target.strategy(method), label="request"))


@FUZZ
@given(action=st.deferred(lambda: requests(cpb.Action.DESCRIPTOR, oneof_set=True, hints=_LIVE_ACTION_HINTS)),
       options=requests(cpb.ObservationOptions.DESCRIPTOR, hints={"jpeg_quality": st.integers(0, 100)}))
async def test_env_step_any_action_on_a_live_session(env_target, action, options):
    """Step's real work (executing and observing) for any action: the generic fuzz above mostly
    stops at the id and argument checks."""
    request = env_pb2.StepRequest(session_id="@session", action=action, observation=options)
    await env_target.fuzz("Step", request)


_LIVE_ACTION_HINTS = {
    "milliseconds": st.integers(0, 300),
    "url": st.sampled_from(["/", "/nope?x=1", "http://example.com/", "file:///etc/passwd", "javascript:alert(1)",
                            "about:blank", "chrome://version", "data:text/html,<b>x</b>", "http://[::1", "ftp://x"]),
    "bid": st.sampled_from([str(i) for i in range(1, 30)]),
}


async def test_env_still_serves_and_no_session_leaked(env_target):
    stub = env_target.stub
    await env_target.live.close()
    created = await stub.CreateSession(env_pb2.CreateSessionRequest(
        task_id="playground-signup", observation=cpb.ObservationOptions(skip_screenshot=True)), timeout=RPC_TIMEOUT_S)
    assert created.session_id and created.observation.axtree
    step = await stub.Step(env_pb2.StepRequest(session_id=created.session_id, action=cpb.Action(noop=cpb.Noop()),
                                               observation=cpb.ObservationOptions(skip_screenshot=True)), timeout=RPC_TIMEOUT_S)
    assert step.action_ok and not step.env_failure
    closed = await stub.CloseSession(env_pb2.CloseSessionRequest(session_id=created.session_id), timeout=RPC_TIMEOUT_S)
    assert closed.was_open
    stats = await stub.GetPoolStats(env_pb2.GetPoolStatsRequest(), timeout=RPC_TIMEOUT_S)
    assert stats.active_sessions == env_target.baseline, stats


# ------------------------------------------------------------------------------- reward

REWARD_SERVICE = reward_pb2.DESCRIPTOR.services_by_name["RewardService"]

_json_leaf = st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.floats() | st.text(max_size=10)
_json = st.recursive(_json_leaf, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
                     max_leaves=10)
_SLICES = ["emails", "cart", "orders", "events", "user", "listings", "signup", "plan", "profile", "messages"]
_diff = st.fixed_dictionaries({}, optional={
    k: st.dictionaries(st.sampled_from(_SLICES) | st.text(max_size=6), _json, max_size=3) | _json
    for k in ("added", "updated", "deleted")})
# The site's /finish JSON: REAL-shaped objects with random insides, and text that is not one.
STATE_JSONS = st.one_of(
    st.fixed_dictionaries({}, optional={"initialfinaldiff": _diff | _json, "differences": _json,
                                        **{k: _json for k in _SLICES[:4]}}).map(json.dumps),
    st.sampled_from(["", "{}", "[]", "null", "not json", '{"a": NaN}', '{"a": 1e999}', "[" * 5000,
                     '{"a": ' + "[" * 900 + "]" * 900 + "}", '{"a": ' + "9" * 5000 + "}", '"' + "x" * 10000 + '"']),
    st.text(max_size=20),
)


@pytest.fixture(scope="module")
async def reward_target(stack, env_target):
    async with grpc.aio.insecure_channel(stack.reward_target) as channel:
        stub = reward_pb2_grpc.RewardServiceStub(channel)
        weights = list((await stub.GetRewardConfig(reward_pb2.GetRewardConfigRequest())).weights)
        live = {"id": "", "n": 0}

        async def episode() -> str:
            if not live["id"]:
                live["n"] += 1
                live["id"] = (await stub.StartEpisode(reward_pb2.StartEpisodeRequest(
                    episode_id=f"fuzz-live-{live['n']}", task_id="playground-signup"), timeout=RPC_TIMEOUT_S)).episode_id
            return live["id"]

        async def after(method, request, response, used):
            if method == "StartEpisode" and response is not None and response.episode_id != live["id"]:
                await stub.EndEpisode(reward_pb2.EndEpisodeRequest(episode_id=response.episode_id), timeout=RPC_TIMEOUT_S)
            if method == "EndEpisode" and "@episode" in used:
                live["id"] = ""

        task_ids = env_target.hints["task_id"]
        target = Target(
            REWARD_SERVICE, stub,
            hints={
                "episode_id": st.just("@episode"), "task_id": task_ids,
                "state_json": STATE_JSONS,
                "overrides": st.dictionaries(st.sampled_from(weights + ["nope"]), st.floats(), max_size=3),
            },
            placeholders={"@episode": episode},
            after=after,
        )
        episodes: dict[str, str] = {}

        async def episode_of(task_id: str) -> str:
            """A live episode of `task_id` (started again when a fuzzed transition ended it)."""
            if task_id in episodes:
                try:
                    await stub.GetRewardConfig(reward_pb2.GetRewardConfigRequest(episode_id=episodes[task_id]), timeout=RPC_TIMEOUT_S)
                    return episodes[task_id]
                except grpc.aio.AioRpcError as exc:
                    assert exc.code() == grpc.StatusCode.NOT_FOUND, exc
            live["n"] += 1
            episodes[task_id] = (await stub.StartEpisode(reward_pb2.StartEpisodeRequest(
                episode_id=f"fuzz-{task_id}-{live['n']}", task_id=task_id), timeout=RPC_TIMEOUT_S)).episode_id
            return episodes[task_id]

        target.episode_of = episode_of
        yield target
        for episode_id in [live["id"], *episodes.values()]:
            if episode_id:
                await stub.EndEpisode(reward_pb2.EndEpisodeRequest(episode_id=episode_id), timeout=RPC_TIMEOUT_S)


@pytest.mark.parametrize("method", _methods(REWARD_SERVICE))
@FUZZ
@given(data=st.data())
async def test_reward_rpcs(reward_target, method, data):
    await reward_target.fuzz(method, data.draw(reward_target.strategy(method), label="request"))


@FUZZ
@given(task_id=st.sampled_from(["playground-signup", "playground-finish", "playground-plan", "omnizon-3", "gomail-1",
                                "zilloft-2", "gocalendar-4"]),
       transition=requests(reward_pb2.ScoreTransitionRequest.DESCRIPTOR, hints={"state_json": STATE_JSONS}))
async def test_reward_scores_any_transition_of_a_live_episode(reward_target, task_id, transition):
    """Shaping's real work (milestone rules over the state JSON and page, novelty, loops) on
    episodes of every site: the generic fuzz above mostly stops at the id checks."""
    transition.episode_id = await reward_target.episode_of(task_id)
    await reward_target.fuzz("ScoreTransition", transition)


@FUZZ
@given(task_id=st.sampled_from(["playground-signup", "playground-finish", "playground-plan", "playground-drag",
                                "playground-name", "gomail-1"]),
       state_json=STATE_JSONS, final_message=st.text(max_size=40), env_failure=st.booleans())
async def test_reward_evaluates_any_final_state(reward_target, task_id, state_json, final_message, env_failure):
    """The REAL evaluator (jmespath evals in process, agisdk eval scripts in a subprocess) on any state."""
    await reward_target.fuzz("Evaluate", reward_pb2.EvaluateRequest(task_id=task_id, state_json=state_json,
                                                                    final_message=final_message, env_failure=env_failure))




async def test_reward_still_serves(reward_target):
    stub = reward_target.stub
    started = await stub.StartEpisode(reward_pb2.StartEpisodeRequest(episode_id="fuzz-after", task_id="playground-signup"),
                                      timeout=RPC_TIMEOUT_S)
    page = reward_pb2.PageState(url="http://127.0.0.1/signup", title="Sign up")
    scored = await stub.ScoreTransition(reward_pb2.ScoreTransitionRequest(
        episode_id=started.episode_id, step_index=1, action=cpb.Action(noop=cpb.Noop()), action_parsed=True, action_ok=True,
        before=page, after=page), timeout=RPC_TIMEOUT_S)
    assert scored.components
    ended = await stub.EndEpisode(reward_pb2.EndEpisodeRequest(episode_id=started.episode_id), timeout=RPC_TIMEOUT_S)
    assert ended.was_open and ended.transitions == 1


# ------------------------------------------------------------------------------ gateway

GATEWAY_SERVICE = policy_pb2.DESCRIPTOR.services_by_name["PolicyGatewayService"]


def _png(width: int = 32, height: int = 18) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (width, height), (200, 30, 30)).save(out, format="PNG")
    return out.getvalue()


@pytest.fixture(scope="module")
async def gateway_target():
    from halo.policy.config import GatewayConfig, GatewaySettings, RouteConfig
    from halo.policy.server import build_service
    from halo.runtime.server import start_service

    settings = GatewaySettings(port=0, metrics_port=-1)
    config = GatewayConfig(default_critic="embedded", routes=[
        RouteConfig(name="embedded", backend="embedded", action_format="json", max_concurrency=2)])
    running = await start_service(build_service(settings, config=config), settings)
    try:
        async with grpc.aio.insecure_channel(running.target) as channel:
            target = Target(
                GATEWAY_SERVICE, policy_pb2_grpc.PolicyGatewayServiceStub(channel),
                hints={
                    "model": st.just("embedded"), "n": st.integers(0, 3), "screenshot": st.just(_png()),
                    "path": st.sampled_from(["/nonexistent/adapter", "/etc", "/etc/hostname", "/dev/zero", "/proc/self/mem",
                                             "tinker://x/y", "../../..", "a\x00b", "x" * 5000, ""]),
                },
            )
            yield target
    finally:
        await running.stop(grace=1)


@pytest.mark.parametrize("method", _methods(GATEWAY_SERVICE))
@FUZZ
@given(data=st.data())
async def test_gateway_rpcs(gateway_target, method, data):
    await gateway_target.fuzz(method, data.draw(gateway_target.strategy(method), label="request"))


_INPUT_HINTS = {"screenshot": st.just(_png()), "width": st.integers(1, 1280), "height": st.integers(1, 720)}


@FUZZ
@given(policy_input=requests(policy_pb2.PolicyInput.DESCRIPTOR, hints=_INPUT_HINTS),
       candidates=st.lists(requests(cpb.Action.DESCRIPTOR, oneof_set=True), min_size=1, max_size=3),
       n=st.integers(1, 3), temperature=st.sampled_from([0.0, 0.7, 2.0]), seed=st.integers(-(2**63), 2**63 - 1),
       prompt=requests(policy_pb2.PromptOptions.DESCRIPTOR))
async def test_gateway_samples_and_critiques_any_input(gateway_target, policy_input, candidates, n, temperature, seed, prompt):
    """The embedded policy's real work (encoding the page, scoring candidates) for any input: the
    generic fuzz above mostly stops at the argument checks."""
    await gateway_target.fuzz("Sample", policy_pb2.SampleRequest(
        model="embedded", input=policy_input, n=n, temperature=temperature, seed=seed, logprobs=True, prompt=prompt))
    await gateway_target.fuzz("Critique", policy_pb2.CritiqueRequest(model="embedded", input=policy_input, candidates=candidates))


async def test_gateway_still_serves(gateway_target):
    observation = cpb.Observation(screenshot=_png(), image_format=cpb.IMAGE_FORMAT_PNG, width=32, height=18,
                                  axtree='[3] button "Sign up"', url="http://127.0.0.1/signup",
                                  elements=[cpb.Element(bid="3", role="button", name="Sign up", visible=True, interactive=True)])
    sampled = await gateway_target.stub.Sample(policy_pb2.SampleRequest(
        model="embedded", n=2, input=policy_pb2.PolicyInput(goal="Sign up", observation=observation)), timeout=RPC_TIMEOUT_S)
    assert len(sampled.candidates) == 2 and all(c.valid for c in sampled.candidates)
    models = await gateway_target.stub.ListModels(policy_pb2.ListModelsRequest(), timeout=RPC_TIMEOUT_S)
    assert [m.name for m in models.models] == ["embedded"]


# ------------------------------------------------------------------------------ trainer

TRAINER_SERVICE = trainer_pb2.DESCRIPTOR.services_by_name["TrainerService"]


def _counting_trainer(spec):
    """The trainer behind every fuzzed run: real spec validation (resolve_trainer), then a few quick
    steps; nothing reaches the other services."""
    from halo.cli.registry import resolve_trainer

    resolve_trainer(spec)  # raises ValueError (-> INVALID_ARGUMENT) for specs no trainer accepts

    async def train(ctx) -> None:
        for step in range(ctx.start_step + 1, ctx.spec.total_steps + 1):
            if ctx.stop_requested():
                return
            await asyncio.sleep(0.01)
            await ctx.complete_step(step, {"mean_reward": float(step)}, lambda d: (d / "w.json").write_text(json.dumps(step)))

    return train


@pytest.fixture(scope="module")
async def trainer_target(tmp_path_factory):
    from halo.runtime.server import start_service
    from halo.trainer.config import TrainerSettings
    from halo.trainer.server import build_service

    runs_dir: Path = tmp_path_factory.mktemp("fuzz-runs")
    settings = TrainerSettings(port=0, metrics_port=-1, runs_dir=str(runs_dir), env_target="127.0.0.1:1",
                               reward_target="127.0.0.1:1", gateway_target="127.0.0.1:1")
    running = await start_service(build_service(settings, resolver=_counting_trainer), settings)
    jobs = running.spec.core
    try:
        async with grpc.aio.insecure_channel(running.target) as channel:
            stub = trainer_pb2_grpc.TrainerServiceStub(channel)
            done = await stub.StartRun(trainer_pb2.StartRunRequest(spec=trainer_pb2.RunSpec(
                name="fuzz-done", task_ids=["playground-signup"], total_steps=2)), timeout=RPC_TIMEOUT_S)
            await _wait_inactive(stub, done.run_id)

            async def run_done() -> str:
                return done.run_id

            async def after(method, request, response, used):
                # a fuzzed run (or resume) that started: stop it now, whatever its budget
                if method in ("StartRun", "ResumeRun") and response is not None:
                    try:
                        await stub.StopRun(trainer_pb2.StopRunRequest(run_id=response.run_id), timeout=RPC_TIMEOUT_S)
                    except grpc.aio.AioRpcError as exc:
                        assert exc.code() == grpc.StatusCode.FAILED_PRECONDITION, exc  # it finished already

            target = Target(
                TRAINER_SERVICE, stub,
                hints={
                    "run_id": st.just("@run"), "task_ids": st.sampled_from([["playground-signup"], ["omnizon"]]),
                    "total_steps": st.integers(0, 3), "mode": st.sampled_from(["embedded", "qwen3vl_base", "nope"]),
                    "extra": st.sampled_from([_struct({"a": float("nan")}), _struct({"x": {"y": [float("inf")]}}),
                                              _struct({"seeds": [1, 2], "workers": 2}), _struct({"": None})]),
                    "reward_overrides": st.sampled_from([{"valid_action": float("nan")}, {"loop_penalty": float("-inf")},
                                                         {"valid_action": 0.5}]),
                    "learning_rate": st.sampled_from([float("nan"), float("inf"), 1e-6]),
                },
                placeholders={"@run": run_done},
                after=after,
            )
            target.jobs = jobs
            yield target
    finally:
        await running.stop(grace=1)


def _struct(value: dict):
    from google.protobuf.struct_pb2 import Struct

    out = Struct()
    out.update(value)
    return out


async def _wait_inactive(stub, run_id: str, timeout_s: float = 20) -> None:
    active = {trainer_pb2.RUN_STATE_PENDING, trainer_pb2.RUN_STATE_RUNNING, trainer_pb2.RUN_STATE_STOPPING}

    async def poll():
        while (await stub.GetRun(trainer_pb2.GetRunRequest(run_id=run_id), timeout=RPC_TIMEOUT_S)).state in active:
            await asyncio.sleep(0.02)

    await asyncio.wait_for(poll(), timeout_s)


@pytest.mark.parametrize("method", _methods(TRAINER_SERVICE))
@FUZZ
@given(data=st.data())
async def test_trainer_rpcs(trainer_target, method, data):
    await trainer_target.fuzz(method, data.draw(trainer_target.strategy(method), label="request"))


@FUZZ
@given(spec=requests(trainer_pb2.RunSpec.DESCRIPTOR, hints={
    "kind": st.sampled_from([0, 1, 2, 3]), "backend": st.sampled_from([0, 1]), "loss_fn": st.sampled_from([0, 1, 2, 3, 4]),
    "task_ids": st.sampled_from([["playground-signup"], ["omnizon", "gomail-1"]]), "total_steps": st.integers(1, 3),
    "mode": st.sampled_from(["embedded", "qwen3vl_base"]), "learning_rate": st.sampled_from([1e-6, 0.1]),
    "temperature": st.sampled_from([0.0, 0.7])}),
    after_sequence=st.integers(0, 2**64 - 1) | st.integers(0, 5))
async def test_trainer_starts_watches_and_stops_any_valid_looking_run(trainer_target, spec, after_sequence):
    """StartRun's real work (spec conversion and validation, the run record on disk) and a watch of
    the run it started: the generic fuzz above mostly stops at the spec checks."""
    stub = trainer_target.stub
    run = None
    try:
        run = await stub.StartRun(trainer_pb2.StartRunRequest(spec=spec), timeout=RPC_TIMEOUT_S)
    except grpc.aio.AioRpcError as exc:
        OUTCOMES[("TrainerService", "StartRun(valid-looking)", exc.code().name)] += 1
        assert exc.code() in ALLOWED and exc.details(), f"StartRun -> {exc.code().name}: {exc.details()}\nspec: {_short(spec)}"
    if run is not None:
        OUTCOMES[("TrainerService", "StartRun(valid-looking)", "OK")] += 1
        events = await _read_stream(stub.WatchRun(trainer_pb2.WatchRunRequest(run_id=run.run_id, after_sequence=min(after_sequence, 1)),
                                                  timeout=RPC_TIMEOUT_S))
        assert events and all(e.run_id == run.run_id for e in events)
        await trainer_target.after("StartRun", None, run, set())


async def test_trainer_still_serves_and_no_run_left_running(trainer_target):
    stub = trainer_target.stub
    runs = (await stub.ListRuns(trainer_pb2.ListRunsRequest(), timeout=RPC_TIMEOUT_S)).runs
    assert not [r.run_id for r in runs if r.state in (trainer_pb2.RUN_STATE_RUNNING, trainer_pb2.RUN_STATE_PENDING)]
    for r in runs:  # every fuzzed run was stopped: the last ones finish their current step
        await _wait_inactive(stub, r.run_id)
    run = await stub.StartRun(trainer_pb2.StartRunRequest(spec=trainer_pb2.RunSpec(
        task_ids=["playground-signup"], total_steps=3)), timeout=RPC_TIMEOUT_S)
    events = [e async for e in stub.WatchRun(trainer_pb2.WatchRunRequest(run_id=run.run_id), timeout=RPC_TIMEOUT_S)]
    assert events[-1].state_change.state == trainer_pb2.RUN_STATE_SUCCEEDED
    assert [c.step for c in (await stub.ListCheckpoints(trainer_pb2.ListCheckpointsRequest(run_id=run.run_id))).checkpoints] == [1, 2, 3]


def test_every_rpc_is_fuzzed():
    """A new RPC in a proto gets fuzzed by the parametrisations above without further work."""
    fuzzed = {s.full_name for s in (ENV_SERVICE, REWARD_SERVICE, GATEWAY_SERVICE, TRAINER_SERVICE)}
    declared = {s.full_name for mod in (env_pb2, reward_pb2, policy_pb2, trainer_pb2) for s in mod.DESCRIPTOR.services_by_name.values()}
    assert fuzzed == declared
