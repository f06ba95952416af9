"""Fakes of the Tinker SDK's clients, at its Python boundary (the Tinker service is remote).

Everything on HALO's side of the boundary is real: the TinkerBackend, tinker_cookbook's
Qwen3-VL renderer with the tiny checkpoint's tokenizer and image processor, and the real
`tinker.types` (ModelInput with ImageChunks in, SampleResponse / SampledSequence out). The fake
sampling client answers with a scripted completion tokenized by the real tokenizer, and records
every ModelInput and SamplingParams it was given so tests can check what would have been sent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import tinker

from halo.policy.backends.tinker import TinkerBackend

SCRIPTED_COMPLETION = ('I will sign up.\n<tool_call>\n{"name": "computer_use", "arguments": '
                       '{"action": "left_click", "coordinate": [500, 410]}}\n</tool_call>')


@dataclass
class FakeSamplingClient:
    """Stands in for tinker.SamplingClient: `await client.sample(...)` -> tinker.types.SampleResponse."""

    model: str
    tokenizer: Any
    calls: list[tuple[tinker.ModelInput, int, tinker.SamplingParams]] = field(default_factory=list)

    async def sample(self, prompt: tinker.ModelInput, num_samples: int, sampling_params: tinker.SamplingParams,
                     **_: Any) -> tinker.types.SampleResponse:
        assert isinstance(prompt, tinker.ModelInput) and isinstance(sampling_params, tinker.SamplingParams)
        self.calls.append((prompt, num_samples, sampling_params))
        tokens = self.tokenizer.encode(SCRIPTED_COMPLETION, add_special_tokens=False)
        tokens.append(self.tokenizer.convert_tokens_to_ids("<|im_end|>"))
        sequences = [
            tinker.types.SampledSequence(
                stop_reason="stop", sequence_id=f"seq-{len(self.calls)}-{i}", _tokens_list=list(tokens),
                _logprobs_list=[-0.25 - 0.01 * i] * len(tokens),
            )
            for i in range(num_samples)
        ]
        return tinker.types.SampleResponse(sequences=sequences)


@dataclass
class FakeTinkerServiceClient:
    """Stands in for tinker.ServiceClient: create_sampling_client(base_model= | model_path=)."""

    tokenizer: Any = None
    created: list[dict[str, str]] = field(default_factory=list)
    clients: list[FakeSamplingClient] = field(default_factory=list)

    async def create_sampling_client(self, model_path: str | None = None, base_model: str | None = None, **_: Any):
        if model_path is not None and not model_path.startswith("tinker://"):
            raise ValueError(f"invalid model_path {model_path!r}")
        self.created.append({"model_path": model_path or "", "base_model": base_model or ""})
        client = FakeSamplingClient(model_path or base_model or "", self.tokenizer)
        self.clients.append(client)
        return client


class TinkerBackendWithFakeSdk(TinkerBackend):
    """The real TinkerBackend; only its ServiceClient comes from the fake SDK above."""

    def __init__(self, route, sdk: FakeTinkerServiceClient) -> None:
        super().__init__(route)
        self.sdk = sdk

    async def start(self) -> None:
        await super()._ensure_renderer()  # no key here: load the renderer anyway
        self.sdk.tokenizer = self.tokenizer

    def service_client(self) -> FakeTinkerServiceClient:
        return self.sdk
