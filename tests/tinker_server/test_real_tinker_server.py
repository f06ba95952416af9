"""HALO's Tinker path against a REAL Tinker-API server: the real tinker SDK (0.38) over HTTP to
SkyRL 0.3.0's server on a tiny text Qwen3 (conftest.py), through the proto wire adapter.

Covered: the SDK's own calls (forward, forward_backward + optim_step that move the weights,
save_weights_for_sampler to a tinker:// path, sampling those weights with token logprobs), the
adapter's fail-fast refusal of image chunks, a short `halo train --backend tinker --observation
text` on a replica task (tinker-cookbook's loop, checkpoints with tinker:// paths), sampling
the trained weights through the policy gateway's tinker route, the same run with its rollouts
sampled through the gateway (`--tinker-sampling gateway`), MCTS on Tinker (`halo train --kind mcts`:
its search sampling through a gateway's tinker route, checkpoints with tinker:// paths) and the
MCTS DPO update (`forward_backward_custom` with the DPO loss against saved reference weights).
Not covered here (SkyRL 0.3.0 lacks them; the offline tests in tests/tinker cover HALO's side):
resume from Tinker state (its load answers 422), the `dro` loss (422), screenshots (text only);
nor an MCTS search that finds pairs by itself (the tiny random model writes no parseable action;
tests/mcts/test_mcts_tinker.py covers that offline).
Opt-in: `make test-tinker-server` (see conftest.py and docs/guides/tinker.md).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tests.tinker_server.conftest import halo_cli

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

GOAL = "Goal: sign up for the newsletter with the e-mail address."
ANSWER = ' I will click the button. <tool_call>\n{"name": "computer_use"}'


def _tensor(values, dtype) -> "object":
    import tinker

    return tinker.TensorData.from_numpy(np.asarray(values, dtype=dtype))


def _datum(tokenizer, advantage: float):
    import tinker

    prompt, answer = tokenizer.encode(GOAL), tokenizer.encode(ANSWER)
    tokens = prompt + answer
    targets = tokens[1:]
    n = len(targets)
    mask = [0.0] * (len(prompt) - 1) + [1.0] * len(answer)
    return tinker.Datum(
        model_input=tinker.ModelInput.from_ints(tokens[:-1]),
        loss_fn_inputs={
            "target_tokens": _tensor(targets, np.int64), "logprobs": _tensor([-6.0] * n, np.float32),
            "advantages": _tensor([advantage * m for m in mask], np.float32),
        },
    ), mask


def _answer_logprob(output, mask) -> float:
    logprobs = np.asarray(output.loss_fn_outputs[0]["logprobs"].to_numpy(), dtype=np.float64)
    return float((logprobs * np.asarray(mask)).sum())


async def test_the_real_sdk_trains_saves_and_samples_over_http(tinker_server, tinker_key):
    import tinker
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tinker_server.model)
    service = tinker.ServiceClient(base_url=tinker_server.url, api_key=tinker_key)
    training = await service.create_lora_training_client_async(base_model=tinker_server.model, rank=8)
    datum, mask = _datum(tokenizer, advantage=1.0)

    before = await (await training.forward_async([datum], "importance_sampling")).result_async()
    assert len(before.loss_fn_outputs[0]["logprobs"].to_numpy()) == len(mask)
    for _ in range(3):   # reward the answer: its logprob must go up
        fwd = await training.forward_backward_async([datum], "importance_sampling")
        opt = await training.optim_step_async(tinker.AdamParams(learning_rate=0.05))
        await fwd.result_async()
        await opt.result_async()
    after = await (await training.forward_async([datum], "importance_sampling")).result_async()
    assert _answer_logprob(after, mask) > _answer_logprob(before, mask)

    saved = await (await training.save_weights_for_sampler_async("halo-sdk-step3")).result_async()
    assert saved.path.startswith("tinker://") and saved.path.endswith("halo-sdk-step3")
    sampler = await service.create_sampling_client_async(model_path=saved.path)
    response = await sampler.sample_async(
        prompt=tinker.ModelInput.from_ints(tokenizer.encode(GOAL)), num_samples=2,
        sampling_params=tinker.SamplingParams(max_tokens=6, temperature=1.0, seed=7),
    )
    assert len(response.sequences) == 2
    for seq in response.sequences:
        assert 1 <= len(seq.tokens) <= 6 and len(seq.logprobs) == len(seq.tokens)
        assert all(lp <= 0.0 for lp in seq.logprobs) and seq.stop_reason in ("stop", "length")


async def test_an_image_chunk_fails_at_once_instead_of_hanging_in_retries(tinker_server, tinker_key):
    """SkyRL's CPU backend would drop the image and misalign the targets; the adapter answers 400,
    which the SDK does not retry (the module's 600 s timeout would catch a 360 s retry loop;
    this test's own timeout is much shorter)."""
    import tinker
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tinker_server.model)
    service = tinker.ServiceClient(base_url=tinker_server.url, api_key=tinker_key)
    training = await service.create_lora_training_client_async(base_model=tinker_server.model, rank=4)
    text, _ = _datum(tokenizer, advantage=1.0)
    image = tinker.types.ImageChunk(data=b"\xff\xd8\xff\xe0not-really-a-jpeg", format="jpeg", expected_tokens=4)
    with_image = tinker.Datum(model_input=tinker.ModelInput(chunks=[image, *text.model_input.chunks]),
                              loss_fn_inputs=text.loss_fn_inputs)
    with pytest.raises(Exception, match="text only"):
        future = await training.forward_backward_async([with_image], "importance_sampling")
        await future.result_async()


test_an_image_chunk_fails_at_once_instead_of_hanging_in_retries = pytest.mark.timeout(90)(
    test_an_image_chunk_fails_at_once_instead_of_hanging_in_retries)


@pytest.fixture(scope="module")
def trained_run(tinker_server, tmp_path_factory) -> dict:
    """`halo train --backend tinker --observation text` for 2 steps on the playground replica."""
    runs = tmp_path_factory.mktemp("runs")
    command = halo_cli() + [
        "train", "--backend", "tinker", "--base-model", tinker_server.model, "--tasks", "playground-signup",
        "--steps", "2", "--group-size", "2", "--groups-per-batch", "1", "--max-actions", "2", "--max-tokens", "24",
        "--lora-rank", "8", "--lr", "1e-3", "--eval-every", "0", "--observation", "text", "--runs-dir", str(runs),
        "--name", "tinker-real-server", "--tinker-sampling", "direct",
        "--extra", json.dumps({"tinker_base_url": tinker_server.url, "tokenizer": tinker_server.model, "num_groups_to_log": 0}),
    ]
    from tests.tinker_server.conftest import API_KEY

    env = dict(os.environ, TINKER_API_KEY=API_KEY)
    try:   # 900 s, as for the gateway-sampling run below: SkyRL's JAX engine JIT-compiles each new
        # sequence length on CPU (minutes on a busy machine; docs/benchmarks.md), twice per step here
        done = subprocess.run(command, capture_output=True, text=True, timeout=900, env=env)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"halo train did not finish in 900 s:\n{(exc.stdout or '')[-3000:]}\nserver:\n{tinker_server.log_tail()}")
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"halo train failed ({done.returncode}):\n{output[-5000:]}\nserver:\n{tinker_server.log_tail()}"
    (run_dir,) = [p for p in runs.iterdir() if p.is_dir()]
    return {"run_dir": run_dir, "output": output}


@pytest.mark.timeout(1500)   # the first test to ask for trained_run pays for the run
def test_halo_train_on_tinker_runs_the_cookbook_loop_over_the_real_sdk(trained_run):
    run_dir: Path = trained_run["run_dir"]
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines() if line.strip()]
    assert [r["step"] for r in rows] == [1, 2]
    for row in rows:
        assert row["episodes"] == 2 and row["env_failures"] == 0   # two attempts per step, none lost
        assert any(k.startswith("env/all/") for k in row)           # the cookbook's own metrics came back
    infos = sorted(run_dir.rglob("tinker.json"))
    assert len(infos) == 2
    for info in map(lambda p: json.loads(p.read_text()), infos):
        assert info["backend"] == "tinker"
        assert info["state_path"].startswith("tinker://") and info["sampler_path"].startswith("tinker://")
    # text only: the datums carried no image (the server refuses them, see the test above)
    log = run_dir / "tinker" / "checkpoints.jsonl"
    assert [json.loads(x)["batch"] for x in log.read_text().splitlines() if x.strip()][-1] == 2


async def test_the_gateway_samples_the_trained_weights_through_its_tinker_route(trained_run, tinker_server, tinker_key):
    from halo.client.policy import PolicyClient
    from halo.policy.config import GatewayConfig, GatewaySettings, RouteConfig
    from halo.policy.server import build_service
    from halo.runtime.server import start_service
    from halo.v1 import common_pb2 as cpb

    final = json.loads(sorted(trained_run["run_dir"].rglob("tinker.json"))[-1].read_text())
    route = RouteConfig(
        name="tinker-local", backend="tinker", base_model=tinker_server.model, api_key_env="TINKER_API_KEY",
        max_tokens=12, timeout_s=60, retries=0, prompt={"include_screenshot": False},
        tinker={"tokenizer": tinker_server.model, "service_url": tinker_server.url, "model_path": final["sampler_path"]},
    )
    settings = GatewaySettings(port=0, metrics_port=-1)
    running = await start_service(build_service(settings, config=GatewayConfig(routes=[route])), settings)
    try:
        async with PolicyClient(running.target, timeout_s=120) as policy:
            observation = cpb.Observation(url="http://127.0.0.1/playground/", axtree='[1] button "Sign up"\n[2] textbox "Email"',
                                          width=1280, height=720)
            response = await policy.sample("tinker-local", goal=GOAL, observation=observation, n=2, max_tokens=8,
                                           temperature=1.0, logprobs=True, seed=3)
            assert len(response.candidates) == 2
            for candidate in response.candidates:
                assert 1 <= len(candidate.token_ids) <= 8 and len(candidate.logprobs) == len(candidate.token_ids)
            assert response.prompt_token_ids   # the prompt the trainer would train on
            # the same checkpoint as a named adapter (LoadAdapter with its tinker:// path)
            await policy.load_adapter("tinker-local", "step-2", path=final["sampler_path"])
            adapted = await policy.sample("tinker-local", goal=GOAL, observation=observation, max_tokens=4, adapter="step-2",
                                          logprobs=True)
            assert adapted.candidates[0].token_ids
    finally:
        await running.stop(grace=1.0)



# 900 s for the run: SkyRL creates the LoRA and JIT-compiles sampling and training of each new
# sequence length on CPU, about a minute each on a busy machine (docs/benchmarks.md)
@pytest.mark.timeout(1500)
async def test_halo_train_on_tinker_samples_every_rollout_through_the_gateway(tinker_server, tmp_path):
    """`--tinker-sampling gateway` against the real server: a gateway started here (its tinker
    route at the SkyRL server), `halo train --gateway` pointed at it. Every sample the episodes
    took went through that gateway's Sample (its counters, the decoded raw text's parse outcome)
    from the run's per-iteration sampler weights (LoadAdapter with their tinker:// paths)."""
    import asyncio

    from halo.policy import metrics
    from halo.policy.config import GatewayConfig, GatewaySettings, RouteConfig
    from halo.policy.server import build_service
    from halo.runtime.server import start_service
    from tests.tinker_server.conftest import API_KEY

    route = RouteConfig(name="tinker-rollouts", backend="tinker", base_model=tinker_server.model, api_key=API_KEY,
                        max_tokens=24, timeout_s=300, retries=1,
                        tinker={"tokenizer": tinker_server.model, "service_url": tinker_server.url})
    settings = GatewaySettings(port=0, metrics_port=-1)
    running = await start_service(build_service(settings, config=GatewayConfig(routes=[route])), settings)

    def counted() -> tuple[float, float, float]:
        candidates = sum(metrics.CANDIDATES.labels(route.name, v)._value.get() for v in ("true", "false"))
        return (metrics.REQUESTS.labels(route.name, "Sample", "ok")._value.get(), candidates,
                metrics.ADAPTER_LOADS.labels(route.name)._value.get())

    before = counted()
    runs = tmp_path / "runs"
    command = halo_cli() + [
        "train", "--backend", "tinker", "--base-model", tinker_server.model, "--tasks", "playground-signup",
        "--steps", "2", "--group-size", "2", "--groups-per-batch", "1", "--max-actions", "2", "--max-tokens", "24",
        "--lora-rank", "8", "--lr", "1e-3", "--eval-every", "0", "--observation", "text", "--runs-dir", str(runs),
        "--name", "tinker-gateway-sampling", "--tinker-sampling", "gateway", "--gateway", running.target,
        "--extra", json.dumps({"tinker_base_url": tinker_server.url, "tokenizer": tinker_server.model, "num_groups_to_log": 0,
                               "route": route.name}),
    ]
    try:
        env = dict(os.environ, TINKER_API_KEY=API_KEY)
        try:   # in a thread: this test's event loop serves the gateway meanwhile
            done = await asyncio.to_thread(subprocess.run, command, capture_output=True, text=True, timeout=900, env=env)
        except subprocess.TimeoutExpired as exc:
            pytest.fail(f"halo train did not finish in 900 s:\n{(exc.stdout or '')[-3000:]}\nserver:\n{tinker_server.log_tail()}")
        after = counted()
    finally:
        await running.stop(grace=1.0)
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"halo train failed ({done.returncode}):\n{output[-5000:]}\nserver:\n{tinker_server.log_tail()}"
    assert "sampling through gateway route 'tinker-rollouts'" in " ".join(output.split())   # (the console wraps lines)

    (run_dir,) = [p for p in runs.iterdir() if p.is_dir()]
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines() if line.strip()]
    assert [r["step"] for r in rows] == [1, 2]
    samples = sum(r["sample/calls"] for r in rows)
    turns = sum(r["episodes"] * r["episode_length"] for r in rows)   # the episodes' steps: one sample each
    assert all(r["env_failures"] == 0 for r in rows) and samples == pytest.approx(turns) and samples >= 4
    assert all(r["sample/mean_s"] > 0 and r["sample/tokens"] > 0 for r in rows)
    requests, candidates, loads = (a - b for a, b in zip(after, before, strict=True))
    assert requests == samples and candidates == samples   # every sample went through Sample, its text parsed there
    assert loads == 2   # each iteration's sampler weights, by their tinker:// path


def _tinker_route(tinker_server, name: str):
    """A gateway route at the SkyRL server (300 s per call: a first sample of a new length JIT-compiles)."""
    from halo.policy.config import RouteConfig
    from tests.tinker_server.conftest import API_KEY

    return RouteConfig(name=name, backend="tinker", base_model=tinker_server.model, api_key=API_KEY, max_tokens=24,
                       timeout_s=300, retries=0, tinker={"tokenizer": tinker_server.model, "service_url": tinker_server.url})


# the search's samples and critiques JIT-compile new lengths on SkyRL (~60 s each on a loaded CPU)
@pytest.mark.timeout(1500)
async def test_halo_train_kind_mcts_on_tinker_searches_through_the_gateway_and_checkpoints_on_the_server(
        tinker_server, tmp_path):
    """`halo train --kind mcts --backend tinker --observation text` against the real server, its
    search sampling through a gateway started here (the run's `--gateway`): the run's reference
    weights and each step's weights are saved on the server and loaded into the gateway by their
    tinker:// paths, every Sample the search made went through that gateway's route, and the
    step's checkpoint records the server's paths. The tiny random Qwen3 writes no parseable
    action, so its candidates are invalid and the tree finds no sibling pairs: the DPO update on
    the server is the next test's."""
    import asyncio

    from halo.policy import metrics
    from halo.policy.config import GatewayConfig, GatewaySettings
    from halo.policy.server import build_service
    from halo.runtime.server import start_service
    from tests.tinker_server.conftest import API_KEY

    route = _tinker_route(tinker_server, "tinker-mcts")
    settings = GatewaySettings(port=0, metrics_port=-1)
    running = await start_service(build_service(settings, config=GatewayConfig(routes=[route])), settings)

    def counted() -> tuple[float, float, float, float]:
        return (metrics.REQUESTS.labels(route.name, "Sample", "ok")._value.get(),
                metrics.CANDIDATES.labels(route.name, "true")._value.get(),
                metrics.CANDIDATES.labels(route.name, "false")._value.get(),
                metrics.ADAPTER_LOADS.labels(route.name)._value.get())

    before = counted()
    runs = tmp_path / "runs"
    command = halo_cli() + [
        "train", "--kind", "mcts", "--backend", "tinker", "--base-model", tinker_server.model, "--tasks", "playground-signup",
        "--steps", "1", "--groups-per-batch", "1", "--simulations", "2", "--children", "2", "--widen-every", "0",
        "--max-actions", "2", "--max-tokens", "24", "--lora-rank", "8", "--lr", "1e-3", "--eval-every", "0",
        "--observation", "text", "--runs-dir", str(runs), "--name", "tinker-mcts", "--gateway", running.target,
        "--extra", json.dumps({"tinker_base_url": tinker_server.url, "tokenizer": tinker_server.model, "route": route.name}),
    ]
    try:
        env = dict(os.environ, TINKER_API_KEY=API_KEY)
        try:   # in a thread: this test's event loop serves the gateway meanwhile
            done = await asyncio.to_thread(subprocess.run, command, capture_output=True, text=True, timeout=900, env=env)
        except subprocess.TimeoutExpired as exc:
            pytest.fail(f"halo train --kind mcts did not finish in 900 s:\n{(exc.stdout or '')[-3000:]}\n"
                        f"server:\n{tinker_server.log_tail()}")
        after = counted()
    finally:
        await running.stop(grace=1.0)
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"halo train failed ({done.returncode}):\n{output[-5000:]}\nserver:\n{tinker_server.log_tail()}"

    (run_dir,) = [p for p in runs.iterdir() if p.is_dir()]
    (row,) = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines() if line.strip()]
    assert row["step"] == 1 and row["searches"] == 1 and row["env_failures"] == 0 and row["simulations"] >= 1
    (folder,) = sorted((run_dir / "checkpoints").iterdir())
    (search,) = json.loads((folder / "search.json").read_text())
    stats = search["stats"]
    assert search["task_id"] == "playground-signup" and stats["expansions"] >= 1 and stats["sample_calls"] >= 1
    requests, valid, invalid, loads = (a - b for a, b in zip(after, before, strict=True))
    assert requests == stats["sample_calls"]                       # every sample of the search went through the route
    assert valid + invalid == 2 * stats["sample_calls"] and invalid == row["invalid_candidates"]   # K=2 candidates each
    assert loads == 2   # the reference weights (the first search's) and step 1's (the next step's), by tinker:// path
    info = json.loads((folder / "tinker.json").read_text())
    adapter = json.loads((folder / "adapter.json").read_text())
    assert info["state_path"].startswith("tinker://") and info["state_path"].endswith("/weights/000001")
    assert info["sampler_path"].startswith("tinker://") and info["sampler_path"].endswith("/000001")
    assert adapter["sampler_path"] == info["sampler_path"] and adapter["state_path"] == info["state_path"]
    assert adapter["mode"] == "qwen3vl_mcts" and adapter["route"] == route.name and adapter["loss"] == "dpo"
    assert adapter["reference_sampler_path"].startswith("tinker://") and adapter["reference_sampler_path"].endswith("/reference")
    assert row["pairs"] * 2 == row["dpo_datums"]


@pytest.mark.timeout(1200)   # a LoRA, sampler weights, and JIT compiles of logprobs, forward and backward
async def test_the_mcts_dpo_step_runs_on_the_real_server(tinker_server, tinker_key):
    """MCTS on Tinker's update against the real server: a step-level preference pair (clicking
    the Sign up button over a link, from one page state) as the cookbook's DPO datums, the
    reference's logprobs from `compute_logprobs` on saved sampler weights, and
    `forward_backward_custom` with the DPO loss + `optim_step` (`mcts.tinker.dpo_step`): the first
    update starts at the reference (loss log 2: the reference's logprobs line up with the
    policy's), and the updates move the policy off it. Not asserted: the direction. SkyRL 0.3.0
    divides each sequence's cross_entropy by the sum of its weights (clamped at 1e-9), where Tinker's
    is a plain weighted sum; the SDK's custom-loss surrogate sends signed weights (-dLoss/dlogprobs),
    so the rejected sequence's term is scaled by 1e9 and the update is not DPO's (docs/benchmarks.md, "A real Tinker-API server")."""
    import math

    import tinker

    from halo.agent import actions as A
    from halo.agent.context import PolicyContext, page_from_proto
    from halo.runs.spec import RunSpec
    from halo.trainers.mcts.preferences import PreferencePair, labeled_comparisons
    from halo.trainers.mcts.tinker import dpo_datums, dpo_step, prompt_options_for, reference_logprobs
    from halo.trainers.tinker_gateway import save_sampler_weights
    from halo.trainers.tinker_train import renderer_for_spec
    from halo.v1 import common_pb2 as cpb

    spec = RunSpec(kind="mcts", backend="tinker", model=tinker_server.model,
                   extra={"tokenizer": tinker_server.model, "screenshots": False})
    observation = cpb.Observation(url="http://127.0.0.1/playground/", width=1280, height=720,
                                  axtree='[12] button "Sign up"\n[13] link "Help"\n[14] textbox "Email"')
    context = PolicyContext(GOAL, page_from_proto(observation))
    pair = PreferencePair("playground-signup", 0, 0, context, A.ClickElement("12"), A.ClickElement("13"), 0.9, 0.2)
    datums = dpo_datums(renderer_for_spec(spec), labeled_comparisons([pair], prompt_options=prompt_options_for(spec)))
    assert len(datums) == 2 and all(not any(isinstance(c, tinker.types.ImageChunk) for c in d.model_input.chunks)
                                    for d in datums)

    service = tinker.ServiceClient(base_url=tinker_server.url, api_key=tinker_key)
    training = await service.create_lora_training_client_async(base_model=tinker_server.model, rank=8)
    reference_path = await save_sampler_weights(training, "dpo-reference", None)
    reference = await service.create_sampling_client_async(model_path=reference_path)
    ref = await reference_logprobs(reference, datums)
    assert [len(r) for r in ref] == [d.model_input.length for d in datums]
    adam = tinker.AdamParams(learning_rate=0.05)
    steps = [await dpo_step(training, datums, ref, beta=0.1, adam=adam) for _ in range(3)]
    assert steps[0]["dpo_loss"] == pytest.approx(math.log(2), abs=0.01)   # policy = reference before the first update
    margins = [s["dpo_margin"] for s in steps]
    # the updates moved the policy towards the preferred action: the margin rises with each step
    assert margins[0] == pytest.approx(0.0, abs=0.01) and margins[0] < margins[1] < margins[2], margins
    assert all(math.isfinite(s["dpo_loss"]) for s in steps)
