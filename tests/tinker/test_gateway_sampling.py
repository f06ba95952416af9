"""Tinker rollouts through the policy gateway (`--tinker-sampling gateway`), offline.

Real: the policy gateway on loopback (gRPC), its TinkerBackend, the qwen3_vl_instruct renderer
with the tiny Qwen3-VL's tokenizer and image processor, tinker-cookbook's RL loop and the env +
reward services. Faked, at the SDK's Python boundary, because the Tinker service is remote
(tests/tinker/fakes.py): the SDK's clients, shared by the trainer and the gateway's route so that
the route samples exactly the `tinker://` weights the run saved.
"""

from __future__ import annotations

import io

import pytest
import tinker

from halo.runs.spec import RunSpec
from tests.tinker.fakes import FakeGatewaySdk, FakeSamplingClient, FakeServiceClient, alternating_signup_script, tool_call

MODEL = "Qwen/Qwen3-VL-30B-A3B-Instruct"
ROUTE = "tinker-rollouts"
CLICK = tool_call('{"action": "click_element", "bid": "12"}')


def _screenshot() -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (320, 180), (200, 30, 30)).save(out, format="PNG")
    return out.getvalue()


@pytest.fixture
async def tinker_gateway(tiny_dir, renderer):
    """A real gateway whose tinker route is the real TinkerBackend over the fake SDK."""
    from halo.policy.config import GatewayConfig, GatewaySettings, RouteConfig
    from halo.policy.server import build_service
    from halo.runtime.server import start_service
    from tests.policy.tinker_fakes import TinkerBackendWithFakeSdk

    sdk = FakeServiceClient(lambda path: FakeSamplingClient(renderer.tokenizer, alternating_signup_script(), model_path=path))
    route = RouteConfig(name=ROUTE, backend="tinker", base_model=MODEL, max_tokens=64, retries=0, timeout_s=120,
                        tinker={"tokenizer": tiny_dir})
    gateway_sdk = FakeGatewaySdk(sdk)
    # a chat route (never reached: nothing listens there) to show who refuses token prompts
    chat = RouteConfig(name="chat", backend="openai_compatible", base_url="http://127.0.0.1:9/v1", served_model="any",
                       api_key="EMPTY", retries=0)
    settings = GatewaySettings(port=0, metrics_port=-1)
    service = build_service(settings, config=GatewayConfig(routes=[route, chat]),
                            backends={ROUTE: TinkerBackendWithFakeSdk(route, gateway_sdk)})
    running = await start_service(service, settings)
    yield running, sdk, gateway_sdk
    await running.stop(grace=1.0)


def _served(route: str) -> float:
    from halo.policy import metrics

    return metrics.REQUESTS.labels(route, "Sample", "ok")._value.get()


async def test_the_token_completer_samples_through_the_gateway_with_tokens_and_logprobs(tinker_gateway, renderer):
    """The cookbook's TokenCompleter over a real gateway: the rendered prompt (text tokens and the
    screenshot's image chunk) reaches the SDK as it is, with the renderer's stop token; the sampled
    token ids and their logprobs come back, and the gateway counted the sample."""
    from halo.agent.context import PageView, PolicyContext
    from halo.agent.prompt import PromptOptions
    from halo.client.policy import PolicyClient
    from halo.trainers.tinker_env import render_observation
    from halo.trainers.tinker_gateway import GatewaySampling

    running, sdk, gateway_sdk = tinker_gateway
    context = PolicyContext(goal="Sign up for the newsletter.", page=PageView(
        screenshot=_screenshot(), image_mime="image/png", axtree='[12] button "Sign up"', url="http://127.0.0.1/playground/"))
    model_input, _ = render_observation(renderer, context, PromptOptions(include_screenshot=True))
    assert any(isinstance(c, tinker.types.ImageChunk) for c in model_input.chunks)
    stop = renderer.get_stop_sequences()
    served = _served(ROUTE)
    path = "tinker://fake-run-0/sampler_weights/halo-sampler-000000"
    async with PolicyClient(running.target, timeout_s=60) as gateway:
        sampling = GatewaySampling(gateway, ROUTE, "r1")
        trainer_sampler = object()   # what the cookbook holds: the sampling client of that path
        sampling.record(trainer_sampler, path, 0)
        completer = sampling.completer(trainer_sampler, max_tokens=48, temperature=0.7)
        out = await completer(model_input, stop)
        (adapters,) = [m.adapters for m in await gateway.list_models() if m.name == ROUTE]

    assert [p for p, _ in gateway_sdk.created] == [path] and adapters == ["run-r1-s0"]
    ((prompt, params),) = gateway_sdk.created[0][1].calls
    assert [type(c) for c in prompt.chunks] == [type(c) for c in model_input.chunks]
    for sent, rendered in zip(prompt.chunks, model_input.chunks, strict=True):
        if isinstance(rendered, tinker.types.ImageChunk):
            assert (bytes(sent.data), sent.format, sent.expected_tokens) == (bytes(rendered.data), rendered.format,
                                                                           rendered.expected_tokens)
        else:
            assert list(sent.tokens) == list(rendered.tokens)
    assert list(params.stop) == list(stop) and params.max_tokens == 48 and params.temperature == pytest.approx(0.7)

    tokenizer = renderer.tokenizer
    click = tool_call('{"action": "click_element", "bid": "12"}')   # the script clicks "Sign up" on a first step
    assert out.tokens == tokenizer.encode(click, add_special_tokens=False) + [tokenizer.convert_tokens_to_ids("<|im_end|>")]
    assert out.logprobs == pytest.approx([-0.05 - 0.01 * (j % 7) for j in range(len(out.tokens))], abs=1e-6)
    assert out.stop_reason == "stop"
    assert _served(ROUTE) == served + 1
    assert sampling.times.take()["sample/calls"] == 1.0


async def test_each_iterations_sampler_is_loaded_once_and_the_older_ones_unloaded(tinker_gateway):
    from halo.client.policy import PolicyClient
    from halo.trainers.tinker_gateway import GatewaySampling

    running, _, gateway_sdk = tinker_gateway
    prompt = tinker.ModelInput.from_ints([1, 2, 3])
    async with PolicyClient(running.target, timeout_s=60) as gateway:
        sampling = GatewaySampling(gateway, ROUTE, "r2")
        samplers = [object() for _ in range(3)]
        for i, sampler in enumerate(samplers):
            sampling.record(sampler, f"tinker://fake-run-0/sampler_weights/halo-sampler-00000{i}", i)
            completer = sampling.completer(sampler, max_tokens=8)
            for _ in range(2):   # the second sample of an iteration reuses its adapter
                await completer(prompt, [])
            (loaded,) = [m.adapters for m in await gateway.list_models() if m.name == ROUTE]
            assert loaded == [f"run-r2-s{j}" for j in range(max(0, i - 1), i + 1)]
        await sampling.close()
        assert [m.adapters for m in await gateway.list_models() if m.name == ROUTE] == [[]]
    assert [p.rsplit("-", 1)[-1] for p, _ in gateway_sdk.created] == ["000000", "000001", "000002"]


async def test_token_prompts_are_refused_where_they_cannot_be_sampled_as_they_are(tinker_gateway):
    from halo.client.policy import PolicyClient
    from halo.errors import FailedPrecondition, InvalidArgument
    from halo.v1 import policy_pb2 as ppb

    running, _, _ = tinker_gateway
    tokens = ppb.TokenPrompt(chunks=[ppb.PromptChunk(tokens=[1, 2, 3])])
    async with PolicyClient(running.target, timeout_s=60) as gateway:
        with pytest.raises(FailedPrecondition, match=r"not token prompts \(SampleRequest.tokens needs a tinker route\)"):
            await gateway.sample("chat", tokens=tokens)
        with pytest.raises(InvalidArgument, match="token prompt is empty"):
            await gateway.sample(ROUTE, tokens=ppb.TokenPrompt(chunks=[ppb.PromptChunk()]))
        with pytest.raises(InvalidArgument, match="input .* or tokens"):
            await gateway._call(gateway.stub.Sample, ppb.SampleRequest(model=ROUTE), None)


async def test_a_tinker_run_samples_every_rollout_through_the_gateway_offline(jobs_factory, tinker_gateway, monkeypatch,
                                                                              tiny_dir, env):
    """`--tinker-sampling gateway` end to end: the cookbook's loop trains on samples that all came
    through the gateway's route (none from the trainer's own sampling clients), from the sampler
    weights of the iteration being rolled out, and the step reports how many it took."""
    from halo.trainer.store import RunState

    running, sdk, gateway_sdk = tinker_gateway
    monkeypatch.setattr(tinker, "ServiceClient", sdk)
    monkeypatch.setenv("TINKER_API_KEY", "offline-test-key")
    served = _served(ROUTE)
    jobs = jobs_factory(running.target)
    spec = RunSpec(name="tinker-gateway-offline", backend="tinker", task_ids=["playground-signup"], total_steps=2,
                   group_size=2, max_steps=2, max_tokens=64, checkpoint_every=2,
                   extra={"tokenizer": tiny_dir, "num_groups_to_log": 0, "tinker_sampling": "gateway", "route": ROUTE})
    record = await jobs.start_run(spec)
    [e async for e in jobs.watch(record.run_id)]
    done = jobs.get(record.run_id)
    assert done.state is RunState.SUCCEEDED, done.error

    (training,) = sdk.training_clients
    through_gateway = {id(client) for _, client in gateway_sdk.created}
    direct = [c for c in sdk.sampling_clients if id(c) not in through_gateway]
    assert direct and all(not c.calls for c in direct)   # the trainer's own sampling clients never sampled
    paths = [p for p, _ in gateway_sdk.created]
    assert paths == [f"tinker://{training.run}/sampler_weights/halo-sampler-00000{i}" for i in range(2)]
    sampled = [len(client.calls) for _, client in gateway_sdk.created]
    datums = [len(call.data) for call in training.forward_backward_calls]
    assert sampled == datums and all(n > 0 for n in sampled)   # one sample per transition, per iteration
    rows = jobs.store.metrics(record.run_id)
    assert [r["sample/calls"] for r in rows] == [float(n) for n in sampled]
    assert all(r["sample/mean_s"] > 0 for r in rows)
    assert _served(ROUTE) == served + sum(sampled)
    assert (await env.pool_stats()).active_sessions == 0


def test_gateway_sampling_is_the_default_and_refused_with_the_cookbooks_async_mode():
    from halo.trainers.tinker_train import sampling_mode_for

    assert sampling_mode_for(RunSpec(backend="tinker", task_ids=["x"])) == "gateway"
    assert sampling_mode_for(RunSpec(backend="tinker", task_ids=["x"], extra={"tinker_sampling": "direct"})) == "direct"
    assert sampling_mode_for(RunSpec(backend="tinker", task_ids=["x"], extra={"max_staleness": 2})) == "direct"
    with pytest.raises(ValueError, match="synchronous only"):
        sampling_mode_for(RunSpec(backend="tinker", task_ids=["x"], extra={"tinker_sampling": "gateway", "max_staleness": 1}))
    with pytest.raises(ValueError, match="direct, gateway"):
        sampling_mode_for(RunSpec(backend="tinker", task_ids=["x"], extra={"tinker_sampling": "sdk"}))
