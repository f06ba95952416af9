"""HALO's Tinker path against a REAL Tinker-API server: the real tinker SDK (0.38) over HTTP to
SkyRL 0.3.0's server on a tiny text Qwen3 (conftest.py), through the proto wire adapter.

Covered: the SDK's own calls (forward, forward_backward + optim_step that move the weights,
save_weights_for_sampler to a tinker:// path, sampling those weights with token logprobs), the
adapter's fail-fast refusal of image chunks, a short `halo train --backend tinker --observation
text` on a replica task (tinker-cookbook's loop, checkpoints with tinker:// paths), sampling
the trained weights through the policy gateway's tinker route, and the same run with its rollouts
sampled through the gateway (`--tinker-sampling gateway`).
Not covered here (SkyRL 0.3.0 lacks them; the offline tests in tests/tinker cover HALO's side):
resume from Tinker state (its load answers 422), the `dro` loss (422), screenshots (text only).
Opt-in: `make test-tinker-server` (see conftest.py and the README).
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
        "train", "--backend", "tinker", "--model", tinker_server.model, "--tasks", "playground-signup",
        "--steps", "2", "--group-size", "2", "--groups-per-batch", "1", "--max-steps", "2", "--max-tokens", "24",
        "--lora-rank", "8", "--lr", "1e-3", "--eval-every", "0", "--observation", "text", "--runs-dir", str(runs),
        "--name", "tinker-real-server", "--tinker-sampling", "direct",
        "--extra", json.dumps({"tinker_base_url": tinker_server.url, "tokenizer": tinker_server.model, "num_groups_to_log": 0}),
    ]
    from tests.tinker_server.conftest import API_KEY

    env = dict(os.environ, TINKER_API_KEY=API_KEY)
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=420, env=env)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"halo train did not finish in 420 s:\n{(exc.stdout or '')[-3000:]}\nserver:\n{tinker_server.log_tail()}")
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"halo train failed ({done.returncode}):\n{output[-5000:]}\nserver:\n{tinker_server.log_tail()}"
    (run_dir,) = [p for p in runs.iterdir() if p.is_dir()]
    return {"run_dir": run_dir, "output": output}


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



# 900 s for the run: at load average 44 (other CI jobs) SkyRL took 52 s to create the LoRA and ~60 s
# to JIT-compile each of sampling and training a 3K-token sequence; 420 s failed there
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
        "train", "--backend", "tinker", "--model", tinker_server.model, "--tasks", "playground-signup",
        "--steps", "2", "--group-size", "2", "--groups-per-batch", "1", "--max-steps", "2", "--max-tokens", "24",
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
