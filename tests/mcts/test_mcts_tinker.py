"""kind=mcts on the Tinker backend, offline: the real search, services, renderer and cookbook DPO
pieces, with the Tinker SDK's clients faked at their Python boundary (tests/tinker/fakes.py).

The search samples through a real policy gateway whose Tinker route is the real TinkerBackend
(Qwen3-VL renderer with the tiny tokenizer) over the fake SDK: `LoadAdapter(path=tinker://...)`
makes the route sample the run's saved weights, and the same FakeServiceClient is the trainer's
`tinker.ServiceClient` (training client, reference sampler). The fake sampler's "policy" is a script
reading the prompt; its critic answers score the "Sign up" click above the rest.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import re
from pathlib import Path

import pytest
import tinker

from halo.runs.spec import RunSpec
from tests.tinker.conftest import renderer, tiny_dir  # noqa: F401  (fixtures: tiny Qwen3-VL tokenizer + renderer)
from tests.tinker.fakes import FakeGatewaySdk, FakeSamplingClient, FakeServiceClient, prompt_text, tool_call

MODEL = "Qwen/Qwen3-VL-30B-A3B-Instruct"
ROUTE = "qwen3vl-tinker"
BETA = 0.1
LR = 2e-5


def _signup_bid(text: str) -> str:
    match = re.search(r'\[(\w+)\] button "Sign up"', text)
    return match.group(1) if match else ""


def signup_search_script():
    """Policy: successive samples click successive buttons/links of the page's AXTree, the "Sign up"
    button first. Critic (the critic prompt lists the candidates): 0.9 for clicking Sign up, 0.2 else."""
    counter = itertools.count()

    def respond(text: str) -> str:
        signup = _signup_bid(text)
        if "Candidate actions (" in text:
            listed = [line for line in text.split("Candidate actions (", 1)[1].splitlines()[1:] if re.match(r"\d+\. ", line)]
            scores = [0.9 if signup and re.search(rf'"bid":\s*"{signup}"', line) else 0.2 for line in listed]
            return json.dumps({"scores": scores, "rationale": "signing up is the goal"})
        bids = [signup] if signup else []
        bids += [b for b in re.findall(r'\[(\w+)\] (?:button|link) "', text.split("Accessibility tree", 1)[-1]) if b != signup]
        bid = bids[next(counter) % len(bids)] if bids else "0"
        return tool_call(f'{{"action": "click_element", "bid": "{bid}"}}')

    return respond


def test_route_search_config_and_local_gateway_routes():
    from halo.cli.train import gateway_routes
    from halo.trainers.mcts.tinker import prompt_options_for, route_for, search_config_for

    spec = RunSpec(kind="mcts", backend="tinker", task_ids=["playground-signup"], max_steps=3,
                   extra={"simulations": 7, "children": 4})
    assert route_for(spec) == ROUTE                                          # the CLI's --model default is "embedded"
    assert route_for(RunSpec(model="my-tinker-route")) == "my-tinker-route"
    assert route_for(RunSpec(model=MODEL)) == ROUTE                          # an HF name is the trained model, not a route
    assert route_for(RunSpec(extra={"route": "other"})) == "other"
    config = search_config_for(spec, "r1")
    assert (config.simulations, config.children, config.max_depth, config.run_id) == (7, 4, 3, "r1")
    assert config.critic_model == ROUTE and config.screenshots                # self-critique; the VLM sees the page
    assert search_config_for(RunSpec(kind="mcts", backend="tinker", extra={"critic": "gpt"})).critic_model == "gpt"
    options = prompt_options_for(spec)
    assert options.include_screenshot and options.history_steps == 5
    assert gateway_routes(spec) == ["embedded", ROUTE] and gateway_routes(RunSpec()) == ["embedded"]


def test_halo_train_kind_mcts_backend_tinker_reaches_the_tinker_mcts_trainer(monkeypatch):
    import halo.cli.train
    from halo.cli.main import main
    from halo.trainers.mcts.tinker import train_mcts_tinker
    from halo.cli.registry import resolve_trainer

    seen: list[RunSpec] = []

    async def fake_train_local(spec, runs_dir, resume="", **targets):
        seen.append(spec)
        return 0

    monkeypatch.setattr(halo.cli.train, "train_local", fake_train_local)
    assert main(["train", "--kind", "mcts", "--backend", "tinker", "--tasks", "playground-signup", "--steps", "2",
                 "--simulations", "9", "--sample-timeout-s", "900"]) == 0
    (spec,) = seen
    assert (spec.kind, spec.backend, spec.learning_rate, spec.extra["simulations"]) == ("mcts", "tinker", 1e-6, 9)
    assert spec.extra["sample_timeout_s"] == 900.0
    assert resolve_trainer(spec) is train_mcts_tinker


async def test_without_an_api_key_an_mcts_tinker_run_fails_with_a_clear_message(jobs_factory, monkeypatch):
    from halo.trainer.store import RunState

    monkeypatch.delenv("TINKER_API_KEY", raising=False)
    jobs = jobs_factory()
    record = await jobs.start_run(RunSpec(kind="mcts", backend="tinker", task_ids=["playground-signup"], total_steps=1))
    [e async for e in jobs.watch(record.run_id)]
    assert jobs.get(record.run_id).state is RunState.FAILED
    assert "TINKER_API_KEY" in jobs.get(record.run_id).error


async def _start_tinker_gateway(tiny_dir: str, renderer, before_sample=None):  # noqa: F811
    """A policy gateway whose Tinker route is the real TinkerBackend over the fake SDK
    (`before_sample`: the fake samplers' async hook before each sample)."""
    from halo.policy.config import GatewayConfig, GatewaySettings, RouteConfig
    from halo.policy.server import build_service
    from halo.runtime.server import start_service
    from tests.policy.tinker_fakes import TinkerBackendWithFakeSdk

    sdk = FakeServiceClient(lambda path: FakeSamplingClient(renderer.tokenizer, signup_search_script(), model_path=path,
                                                            before_sample=before_sample))
    route = RouteConfig(name=ROUTE, backend="tinker", base_model=MODEL, max_tokens=64, retries=0, timeout_s=120,
                        tinker={"tokenizer": tiny_dir})
    gateway_sdk = FakeGatewaySdk(sdk)
    settings = GatewaySettings(port=0, metrics_port=-1)
    service = build_service(settings, config=GatewayConfig(default_critic=ROUTE, routes=[route]),
                            backends={ROUTE: TinkerBackendWithFakeSdk(route, gateway_sdk)})
    return await start_service(service, settings), sdk, gateway_sdk


@pytest.fixture
async def tinker_gateway(tiny_dir, renderer):  # noqa: F811
    """A policy gateway whose Tinker route is the real TinkerBackend over the fake SDK."""
    running, sdk, gateway_sdk = await _start_tinker_gateway(tiny_dir, renderer)
    yield running, sdk, gateway_sdk
    await running.stop(grace=1.0)


async def test_a_sample_past_the_runs_deadline_fails_the_run_naming_the_setting_that_raises_it(
        jobs_factory, tiny_dir, renderer, monkeypatch):  # noqa: F811
    """A backend whose first sample compiles (SkyRL's JAX server on CPU: a minute or more per new
    length on a loaded machine) outlives the run's sample deadline: the run fails saying which call,
    which deadline and which setting raises it (`--sample-timeout-s`), not a bare DEADLINE_EXCEEDED."""
    import asyncio

    from halo.trainer.store import RunState

    async def compiling(call: int) -> None:   # the first sample of each sampler is slow, the rest are not
        if call == 1:
            await asyncio.sleep(4.0)

    running, sdk, _ = await _start_tinker_gateway(tiny_dir, renderer, before_sample=compiling)
    monkeypatch.setattr(tinker, "ServiceClient", sdk)
    monkeypatch.setenv("TINKER_API_KEY", "offline-test-key")
    try:
        jobs = jobs_factory(running.target)
        spec = RunSpec(kind="mcts", backend="tinker", task_ids=["playground-signup"], total_steps=1, groups_per_batch=1,
                       max_steps=1, extra={"simulations": 1, "children": 2, "widen_every": 0, "tokenizer": tiny_dir,
                                           "sample_timeout_s": 1.0})
        record = await jobs.start_run(spec)
        [e async for e in jobs.watch(record.run_id)]
        failed = jobs.get(record.run_id)
        assert failed.state is RunState.FAILED
        assert "Sample to " in failed.error and "deadline of 1s" in failed.error and "--sample-timeout-s" in failed.error
        # the same run with a deadline that covers the slow first sample gets through its step
        record = await jobs.start_run(dataclasses.replace(spec, name="", extra=spec.extra | {"sample_timeout_s": 30}))
        [e async for e in jobs.watch(record.run_id)]
        done = jobs.get(record.run_id)
        assert done.state is RunState.SUCCEEDED, done.error
        assert [r["step"] for r in jobs.store.metrics(record.run_id)] == [1]
    finally:
        await running.stop(grace=1.0)


def _positions(model_input: tinker.ModelInput) -> list:
    """A ModelInput position by position: text tokens, and each image's positions by its content."""
    out: list = []
    for chunk in model_input.chunks:
        out += list(chunk.tokens) if hasattr(chunk, "tokens") else [("image", hash(bytes(chunk.data)))] * chunk.length
    return out


def _completion(tokenizer, datum: tinker.Datum) -> tuple[int, str, list[float]]:
    """(where the weighted completion starts, its text, the weights): weights are 0 on the prompt, 1 on one run."""
    weights = [float(w) for w in datum.loss_fn_inputs["weights"].data]
    targets = [int(t) for t in datum.loss_fn_inputs["target_tokens"].data]
    assert set(weights) <= {0.0, 1.0}
    start, n = weights.index(1.0), weights.count(1.0)
    assert weights[start:start + n] == [1.0] * n
    return start, tokenizer.decode(targets[start:start + n]), weights


async def test_an_mcts_tinker_run_searches_trains_dpo_checkpoints_stops_and_resumes(
        jobs_factory, tinker_gateway, renderer, tiny_dir, env, monkeypatch):  # noqa: F811
    from halo.trainer.store import RunState

    gateway, sdk, gateway_sdk = tinker_gateway
    monkeypatch.setattr(tinker, "ServiceClient", sdk)
    monkeypatch.setenv("TINKER_API_KEY", "offline-test-key")
    tokenizer = renderer.tokenizer
    jobs = jobs_factory(gateway.target)
    spec = RunSpec(name="mcts-tinker-offline", kind="mcts", backend="tinker", task_ids=["playground-signup"], total_steps=3,
                   groups_per_batch=1, max_steps=2, learning_rate=LR, temperature=0.7, seed=3,
                   extra={"simulations": 4, "children": 3, "widen_every": 0, "tokenizer": tiny_dir, "dpo_beta": BETA})
    record = await jobs.start_run(spec)
    async for event in jobs.watch(record.run_id):
        if event["type"] == "metrics" and event["step"] == 1:
            await jobs.stop(record.run_id)   # honoured between steps
    stopped = jobs.get(record.run_id)
    assert stopped.state is RunState.STOPPED, stopped.error
    stopped_at = stopped.step
    assert 1 <= stopped_at < 3

    first = sdk.training_clients[0]
    assert sdk.created[0] == ("lora", MODEL) and first.rank == 32 and first.base_model == MODEL
    reference_path = f"tinker://{first.run}/sampler_weights/reference"   # the initial weights, saved before any update

    await jobs.resume(record.run_id)
    events = [e async for e in jobs.watch(record.run_id, after_sequence=10_000)]
    done = jobs.get(record.run_id)
    assert done.state is RunState.SUCCEEDED, (done.error, events[-1:])
    assert sdk.created[-1] == ("resume", f"tinker://{first.run}/weights/{stopped_at:06d}")
    resumed = sdk.training_clients[-1]
    assert len(sdk.training_clients) == 2

    rows = jobs.store.metrics(record.run_id)
    assert [r["step"] for r in rows] == [1, 2, 3]   # nothing lost, nothing repeated
    calls = first.forward_backward_calls + resumed.forward_backward_calls
    steps = first.optim_steps + resumed.optim_steps
    assert len(first.forward_backward_calls) == stopped_at and len(resumed.forward_backward_calls) == 3 - stopped_at
    assert len(calls) == len(steps) == 3 and all(s.learning_rate == LR for s in steps)
    for row, call in zip(rows, calls):
        assert row["searches"] == 1 and row["env_failures"] == 0 and row["simulations"] == 4
        assert row["found_success_rate"] == 1.0 and row["search_success_rate"] == 1.0   # the Sign up click passes
        pairs = int(row["pairs"])
        assert pairs >= 1 and call.loss_fn == "custom" and len(call.data) == 2 * pairs == row["dpo_datums"]
        # nothing learned between the fake "model" and its reference: ratio 0, loss log 2
        assert row["dpo_loss"] == pytest.approx(math.log(2)) and row["dpo_accuracy"] == 0.0 and row["learning_rate"] == LR
        for i in range(pairs):
            chosen, rejected = call.data[2 * i], call.data[2 * i + 1]
            (start_c, text_c, weights_c), (start_r, text_r, weights_r) = (_completion(tokenizer, d) for d in (chosen, rejected))
            # chosen and rejected share the prompt (everything before the completion, screenshot included)
            assert start_c == start_r and _positions(chosen.model_input)[:start_c] == _positions(rejected.model_input)[:start_c]
            assert any(isinstance(c, tinker.types.ImageChunk) for c in chosen.model_input.chunks)
            assert text_c != text_r and text_c.startswith("<tool_call>") and text_r.startswith("<tool_call>")
            # the DPO gradient the SDK sends back: +beta/(2P) on chosen tokens, -beta/(2P) on rejected, 0 on the prompt
            for linear, weights, sign in ((call.backward[2 * i], weights_c, 1.0), (call.backward[2 * i + 1], weights_r, -1.0)):
                sent = [float(x) for x in linear.loss_fn_inputs["weights"].to_torch().flatten()]
                assert sent == pytest.approx([sign * BETA / (2 * pairs) * w for w in weights], abs=1e-7)
        # the root's pairs come first; its preferred action is the critic's and the evaluator's: clicking Sign up
        bid = _signup_bid(prompt_text(tokenizer, call.data[0].model_input))
        assert bid and f'"bid": "{bid}"' in _completion(tokenizer, call.data[0])[1]

    # every step searched with the weights of the step before: the gateway's route sampled from the
    # reference (step 1) and from each saved sampler checkpoint; the datums' prompts are the prompts it sampled
    sampled = {path: client for path, client in gateway_sdk.created if client.calls}
    assert reference_path in sampled
    for step in (1, 2):
        run = first.run if step <= stopped_at else resumed.run
        assert f"tinker://{run}/sampler_weights/{step:06d}" in sampled
    assert not any(p.endswith("/000003") for p in sampled)   # the last weights were loaded, never needed for a search
    assert all(params.temperature == 0.7 for path, c in sampled.items() if path != MODEL for _, params in c.calls)
    critic = [c for path, c in gateway_sdk.created if path == MODEL]
    assert critic and all(c.calls for c in critic)           # self-critique on the route's base model
    sampled_prompts = [_positions(p) for c in sampled.values() for p, _ in c.calls]
    for call in calls:
        for datum in call.data:
            # the datum's prompt is exactly a prompt the route sampled from (the completion starts after it)
            start = _completion(tokenizer, datum)[0]
            assert _positions(datum.model_input)[:start + 1] in [p for p in sampled_prompts if len(p) == start + 1]
    # the reference is the initial weights on both sides of the resume (compute_logprobs on it)
    references = [c for c in sdk.sampling_clients if c.model_path == reference_path and c.logprob_calls]
    assert len(references) == 2 and sum(len(c.logprob_calls) for c in references) == sum(len(c.data) for c in calls)

    checkpoints = jobs.checkpoints(record.run_id)
    assert [c.step for c in checkpoints] == [1, 2, 3]
    for c in checkpoints:
        folder = Path(c.path)
        run = first.run if c.step <= stopped_at else resumed.run
        info = json.loads((folder / "tinker.json").read_text())
        assert info["state_path"] == f"tinker://{run}/weights/{c.step:06d}"
        assert info["sampler_path"] == f"tinker://{run}/sampler_weights/{c.step:06d}"
        adapter = json.loads((folder / "adapter.json").read_text())
        assert adapter["mode"] == "qwen3vl_mcts" and adapter["backend"] == "tinker" and adapter["route"] == ROUTE
        assert adapter["loss"] == "dpo" and adapter["dpo_beta"] == BETA and adapter["base_model"] == MODEL
        assert adapter["sampler_path"] == info["sampler_path"] and adapter["reference_sampler_path"] == reference_path
        search = json.loads((folder / "search.json").read_text())
        assert search[0]["task_id"] == "playground-signup" and search[0]["critic_route"] == ROUTE and search[0]["success"]
    assert (await env.pool_stats()).active_sessions == 0
