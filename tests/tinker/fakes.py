"""Fakes of the Tinker SDK's clients, at its Python boundary (the Tinker service is remote).

Everything on HALO's side is real: tinker-cookbook's RL loop (`rl.train.main`), rollouts,
advantages and datums; the `qwen3_vl_instruct` renderer with the tiny checkpoint's tokenizer and
image processor; the env and reward services on loopback with real Chromium. Only these stand
in for Tinker's servers:

- FakeSamplingClient: answers `sample_async` with a completion chosen by a script that reads
  the prompt (decoded from the real ModelInput), tokenized by the real tokenizer;
- TinyQwenSamplingClient: really samples from the tiny random Qwen3-VL (PeftSampler);
- FakeTrainingClient: records every forward_backward (datums, loss) and optim_step (AdamParams)
  and answers like Tinker (training logprobs, tinker:// checkpoint paths);
- FakeServiceClient: what `tinker.ServiceClient(...)` returns inside the cookbook's main();
- FakeGatewaySdk: the same fake SDK as the gateway's TinkerBackend calls it (it awaits
  `create_sampling_client`), so a gateway route samples the trainer's fake `tinker://` weights.

DPO (MCTS on Tinker) goes through `forward_backward_custom`: the fake answers the forward pass
with `fake_logprob` per target token and runs the SDK's own client-side step
(`TrainingClient._compute_custom_loss`: the custom loss, its backward, the linear weights
`-dLoss/dlogprobs` the real client then sends in a cross_entropy forward_backward); the sampling
clients' `compute_logprobs_async` (the reference) answers with the same `fake_logprob`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tinker
import torch
from tinker import TensorData

TINY_DIR_NAME = "tiny-qwen3vl-shared"


def tiny_model_dir(tmp_path_factory) -> str:
    """The tiny random Qwen3-VL, built once per test session (shared by tests/tinker and tests/lora)."""
    from halo.cli.benches.tiny_qwen3vl import build

    root = Path(tmp_path_factory.getbasetemp()) / TINY_DIR_NAME
    if not (root / "model.safetensors").exists():
        build(root)
    return str(root)


def fake_logprob(token: int) -> float:
    """What the fake Tinker "model" answers for a token (policy and reference alike)."""
    return -0.1 - 0.01 * (token % 7)


def _token_ids(model_input: tinker.ModelInput) -> list[int]:
    """Token ids of a ModelInput, 0 at image positions."""
    return [t for c in model_input.chunks for t in (list(c.tokens) if hasattr(c, "tokens") else [0] * c.length)]


def prompt_text(tokenizer: Any, model_input: tinker.ModelInput) -> str:
    return "".join(tokenizer.decode(list(c.tokens)) for c in model_input.chunks if hasattr(c, "tokens"))


def tool_call(arguments: str) -> str:
    return f'<tool_call>\n{{"name": "computer_use", "arguments": {arguments}}}\n</tool_call>'


def _history(text: str) -> str:
    return text.split("Previous actions", 1)[-1].split("Accessibility tree", 1)[0]


def alternating_signup_script() -> Callable[[str], str]:
    """A scripted policy for playground-signup: episodes alternate between a good one (click the
    "Sign up" button found in the prompt's AXTree, then answer) and a bad one (unparseable text
    at every step). Deterministic per episode, whatever order concurrent rollouts call it in."""
    episodes = 0

    def respond(text: str) -> str:
        nonlocal episodes
        history = _history(text)
        if "none (this is the first step)" in history:
            episodes += 1
            good = episodes % 2 == 1
        else:
            good = "click_element" in history
        if not good:
            return "I am not sure what to do."
        if "click_element" in history:
            return tool_call('{"action": "answer", "text": "Signed up."}')
        match = re.search(r'\[(\w+)\] button "Sign up"', text)
        return tool_call(f'{{"action": "click_element", "bid": "{match.group(1) if match else "0"}"}}')

    return respond


@dataclass
class FakeSamplingClient:
    """Stands in for tinker.SamplingClient; the completion comes from a script reading the prompt."""

    tokenizer: Any
    respond: Callable[[str], str]
    model_path: str = ""
    calls: list[tuple[tinker.ModelInput, tinker.SamplingParams]] = field(default_factory=list)
    before_sample: Callable[[int], Any] | None = None   # async hook(call_index), e.g. to break a session
    logprob_calls: list[tinker.ModelInput] = field(default_factory=list)

    async def sample_async(self, prompt: tinker.ModelInput, num_samples: int, sampling_params: tinker.SamplingParams,
                           **_: Any) -> tinker.types.SampleResponse:
        assert isinstance(prompt, tinker.ModelInput) and isinstance(sampling_params, tinker.SamplingParams)
        self.calls.append((prompt, sampling_params))
        if self.before_sample is not None:
            await self.before_sample(len(self.calls))
        sequences = []
        for i in range(num_samples):
            tokens = self.tokenizer.encode(self.respond(prompt_text(self.tokenizer, prompt)), add_special_tokens=False)
            tokens = tokens[: sampling_params.max_tokens - 1] + [self.tokenizer.convert_tokens_to_ids("<|im_end|>")]
            logprobs = [-0.05 - 0.01 * (j % 7) for j in range(len(tokens))]
            sequences.append(tinker.types.SampledSequence(
                stop_reason="stop", sequence_id=f"s{len(self.calls)}-{i}", _tokens_list=tokens, _logprobs_list=logprobs,
            ))
        return tinker.types.SampleResponse(sequences=sequences)

    async def sample(self, prompt: tinker.ModelInput, num_samples: int, sampling_params: tinker.SamplingParams,
                     **kwargs: Any) -> tinker.types.SampleResponse:
        """`await client.sample(...)`, as the gateway's TinkerBackend calls it (the SDK returns an awaitable future)."""
        return await self.sample_async(prompt, num_samples, sampling_params, **kwargs)

    async def compute_logprobs_async(self, prompt: tinker.ModelInput, **_: Any) -> list[float | None]:
        self.logprob_calls.append(prompt)
        return [None] + [fake_logprob(t) for t in _token_ids(prompt)[1:]]


@dataclass
class TinyQwenSamplingClient:
    """Stands in for tinker.SamplingClient by really sampling the tiny Qwen3-VL (PeftSampler)."""

    sampler: Any   # halo.trainers.lora_learner.PeftSampler
    calls: int = 0

    async def sample_async(self, prompt: tinker.ModelInput, num_samples: int, sampling_params: tinker.SamplingParams,
                           **_: Any) -> tinker.types.SampleResponse:
        import asyncio

        stops = [s for s in (sampling_params.stop or []) if isinstance(s, int)]
        sequences = []
        for i in range(num_samples):
            self.calls += 1
            sample = await asyncio.to_thread(
                self.sampler.sample, prompt, max_tokens=sampling_params.max_tokens,
                temperature=sampling_params.temperature, stop_token_ids=stops, seed=self.calls,
            )
            sequences.append(tinker.types.SampledSequence(
                stop_reason=sample.stop_reason, sequence_id=f"t{self.calls}", _tokens_list=sample.tokens,
                _logprobs_list=sample.logprobs,
            ))
        return tinker.types.SampleResponse(sequences=sequences)


class _Done:
    """An APIFuture that is already resolved."""

    def __init__(self, value: Any) -> None:
        self.value = value

    async def result_async(self, timeout: float | None = None) -> Any:
        return self.value

    def result(self, timeout: float | None = None) -> Any:
        return self.value


@dataclass
class ForwardBackwardCall:
    data: list[tinker.Datum]
    loss_fn: str
    loss_fn_config: dict | None
    backward: list[tinker.Datum] | None = None   # forward_backward_custom: the linear datums the SDK sends
    metrics: dict[str, float] = field(default_factory=dict)


class FakeTrainingClient:
    """Stands in for tinker.TrainingClient: records datums and optimizer steps."""

    def __init__(self, service: "FakeServiceClient", run: str, base_model: str, rank: int, loaded_from: str = "") -> None:
        self.service, self.run, self.base_model, self.rank, self.loaded_from = service, run, base_model, rank, loaded_from
        self.forward_backward_calls: list[ForwardBackwardCall] = []
        self.optim_steps: list[tinker.AdamParams] = []
        self.saved: list[str] = []

    async def forward_backward_async(self, data: list[tinker.Datum], loss_fn: str, loss_fn_config: dict | None = None):
        self.forward_backward_calls.append(ForwardBackwardCall(list(data), loss_fn, loss_fn_config))
        outputs = []
        loss = 0.0
        for datum in data:
            sampled = datum.loss_fn_inputs["logprobs"].to_torch()
            advantages = datum.loss_fn_inputs["advantages"].to_torch()
            loss += float(-(advantages * torch.ones_like(sampled)).sum())   # importance sampling at ratio 1
            outputs.append({"logprobs": TensorData.from_torch(sampled.clone())})
        return _Done(tinker.ForwardBackwardOutput(loss_fn_output_type="ArrayRecord", loss_fn_outputs=outputs,
                                                  metrics={"loss:sum": loss}))

    def forward_backward_custom(self, data: list[tinker.Datum], loss_fn: Callable, **_: Any):
        """The SDK's client-side custom loss on the fake forward pass (see the module docstring)."""
        outputs = [{"logprobs": TensorData.from_torch(torch.tensor([fake_logprob(int(t)) for t in d.loss_fn_inputs["target_tokens"].data]))}
                   for d in data]
        forward = tinker.ForwardBackwardOutput(loss_fn_output_type="ArrayRecord", loss_fn_outputs=outputs, metrics={})
        custom = tinker.TrainingClient._compute_custom_loss(data, loss_fn, forward)
        metrics = {**custom.metrics, "loss:sum": custom.loss_sum}
        self.forward_backward_calls.append(ForwardBackwardCall(list(data), "custom", None, list(custom.data), metrics))
        return _Done(tinker.ForwardBackwardOutput(loss_fn_output_type="ArrayRecord", loss_fn_outputs=outputs, metrics=metrics))

    async def optim_step_async(self, adam_params: tinker.AdamParams):
        self.optim_steps.append(adam_params)
        return _Done(tinker.types.OptimStepResponse(metrics={"optim/fake_steps": float(len(self.optim_steps))}))

    def _path(self, kind: str, name: str) -> str:
        path = f"tinker://{self.run}/{kind}/{name}"
        self.saved.append(path)
        return path

    async def save_state_async(self, name: str, ttl_seconds: int | None = None):
        return _Done(tinker.types.SaveWeightsResponse(path=self._path("weights", name)))

    async def save_weights_for_sampler_async(self, name: str, ttl_seconds: int | None = None):
        return _Done(tinker.types.SaveWeightsForSamplerResponse(path=self._path("sampler_weights", name)))

    async def save_weights_and_get_sampling_client_async(self, *_: Any, **__: Any):
        return self.service.sampling_client(self._path("sampler_weights", f"ephemeral-{len(self.saved)}"))

    def create_sampling_client(self, model_path: str, *_: Any, **__: Any):
        return self.service.sampling_client(model_path)


class FakeRestClient:
    def __init__(self, renderer_name: str) -> None:
        self.renderer_name = renderer_name

    async def get_training_run_by_tinker_path_async(self, path: str):
        return type("TrainingRunInfo", (), {"user_metadata": {"renderer_name": self.renderer_name}})()

    def get_training_run_by_tinker_path(self, path: str):
        return _Done(type("TrainingRunInfo", (), {"user_metadata": {"renderer_name": self.renderer_name}})())

    async def delete_checkpoint_from_tinker_path_async(self, path: str):
        return None


class FakeServiceClient:
    """Stands in for tinker.ServiceClient (what the cookbook's main() creates)."""

    def __init__(self, make_sampler: Callable[[str], Any]) -> None:
        self.make_sampler = make_sampler
        self.constructed: list[dict[str, Any]] = []
        self.training_clients: list[FakeTrainingClient] = []
        self.sampling_clients: list[Any] = []
        self.created: list[tuple[str, str]] = []   # (how, path or base model)

    def __call__(self, **kwargs: Any) -> "FakeServiceClient":   # tinker.ServiceClient(base_url=..., ...)
        self.constructed.append(kwargs)
        return self

    def sampling_client(self, model_path: str):
        client = self.make_sampler(model_path)
        self.sampling_clients.append(client)
        return client

    def _training(self, base_model: str, rank: int, loaded_from: str = "") -> FakeTrainingClient:
        client = FakeTrainingClient(self, f"fake-run-{len(self.training_clients)}", base_model, rank, loaded_from)
        self.training_clients.append(client)
        return client

    async def create_lora_training_client_async(self, base_model: str, rank: int = 32, **_: Any):
        self.created.append(("lora", base_model))
        return self._training(base_model, rank)

    async def create_training_client_from_state_with_optimizer_async(self, path: str, **_: Any):
        self.created.append(("resume", path))
        return self._training("", 0, path)

    async def create_training_client_from_state_async(self, path: str, **_: Any):
        self.created.append(("weights", path))
        return self._training("", 0, path)

    def create_sampling_client(self, base_model: str | None = None, model_path: str | None = None, **_: Any):
        return self.sampling_client(model_path or base_model or "")

    async def create_sampling_client_async(self, base_model: str | None = None, model_path: str | None = None, **_: Any):
        return self.sampling_client(model_path or base_model or "")

    def create_rest_client(self) -> FakeRestClient:
        return FakeRestClient("qwen3_vl_instruct")


class FakeGatewaySdk:
    """The fake SDK as the gateway's TinkerBackend uses it: `await service.create_sampling_client(...)`
    (the real one returns an awaitable future of the client). Clients come from the same
    FakeServiceClient the trainer uses, so a route samples exactly the weights a run saved."""

    def __init__(self, service: FakeServiceClient) -> None:
        self.service = service
        self.created: list[tuple[str, Any]] = []   # (model_path or base model, client)
        self.tokenizer: Any = None                 # set by tests.policy.tinker_fakes.TinkerBackendWithFakeSdk

    async def create_sampling_client(self, model_path: str | None = None, base_model: str | None = None, **_: Any):
        if model_path is not None and not model_path.startswith("tinker://"):
            raise ValueError(f"invalid model_path {model_path!r}")
        client = self.service.sampling_client(model_path or base_model or "")
        self.created.append((model_path or base_model or "", client))
        return client


def tinker_run_folder(run: Path, recorded: list[int], checkpointed: list[int]) -> None:
    """A run folder as the Tinker trainer leaves it: the cookbook's checkpoint records of the
    `recorded` steps (weights at tinker://m/weights/N, sampler weights at tinker://m/sampler/N)
    and the host's checkpoints of the `checkpointed` steps (save_tinker_checkpoint's tinker.json)."""
    from halo.trainers.tinker_train import CHECKPOINTS_FILE, save_tinker_checkpoint, write_records

    log_path = run / "tinker"
    log_path.mkdir(parents=True, exist_ok=True)
    write_records(log_path / CHECKPOINTS_FILE, [
        {"batch": s, "name": f"{s:06d}", "state_path": f"tinker://m/weights/{s}", "sampler_path": f"tinker://m/sampler/{s}"}
        for s in recorded])
    for step in checkpointed:
        folder = run / "checkpoints" / f"step-{step:06d}"
        folder.mkdir(parents=True, exist_ok=True)
        save_tinker_checkpoint(log_path, step, "Qwen/Qwen3-VL-30B-A3B-Instruct", folder)
