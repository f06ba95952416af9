"""The serving side of the local LoRA backend on a machine without vLLM: `PeftSampler` samples
completions of the base Qwen3-VL (+ a PEFT adapter) with HF `generate`, with the sampled tokens'
log-probabilities (the `q` of the importance ratio); `LocalSamplingClient` serves it to
tinker-cookbook's TokenCompleter as a tinker SamplingClient.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tinker
import torch

from halo.trainers.lora_grammar import TokenGrammar
from halo.trainers.lora_model import QwenVLInputs, load_base_model, load_processors, token_logprobs, vision_token_ids


# ---------------------------------------------------------------------------------- sampler

@dataclass
class Sample:
    tokens: list[int]
    logprobs: list[float]
    stop_reason: str            # "stop" (a stop token) or "length" (max_tokens)


class PeftSampler:
    """The serving side without vLLM: base Qwen3-VL (+ a PEFT adapter folder), sampled with generate()."""

    def __init__(self, model_dir: str | Path, adapter: str | Path | None = None, *, dtype: torch.dtype | None = None,
                 device: str = "cpu", action_regex: str = "") -> None:
        self.model_dir, self.device = str(model_dir), device
        self.tokenizer, self.image_processor = load_processors(model_dir)
        base = load_base_model(model_dir, dtype, device)
        self.inputs = QwenVLInputs(self.image_processor, base.config.image_token_id)
        self.banned = vision_token_ids(base.config)
        # constrained sampling: every token drawn within the regex, as vLLM's structured outputs do
        self.grammar = (TokenGrammar.for_checkpoint(action_regex, model_dir, self.tokenizer, base.lm_head.weight.shape[0])
                        if action_regex else None)
        self.adapter = str(adapter) if adapter is not None else ""
        if adapter is not None:
            from peft import PeftModel

            base = PeftModel.from_pretrained(base, str(adapter)).eval()
        self.model = base
        self._lock = threading.Lock()   # generate() uses the global RNG: one sample at a time

    @classmethod
    def of(cls, learner: Any) -> "PeftSampler":
        """A sampler over the learner's own PEFT model (one process, one copy of the weights)."""
        sampler = cls.__new__(cls)
        sampler.model_dir, sampler.device, sampler.adapter = learner.model_dir, learner.device, ""
        sampler.tokenizer, sampler.image_processor = learner.tokenizer, learner.image_processor
        sampler.inputs, sampler.banned, sampler.model = learner.inputs, learner.banned, learner.model
        sampler.grammar = learner.grammar
        sampler._lock = threading.Lock()
        return sampler

    @torch.no_grad()
    def sample(self, prompt: tinker.ModelInput, *, max_tokens: int, temperature: float = 1.0,
               stop_token_ids: Sequence[int] = (), seed: int | None = None) -> Sample:
        inputs = self.inputs.encode(prompt, device=self.device)
        stops = list(stop_token_ids) or [self.tokenizer.convert_tokens_to_ids("<|im_end|>")]
        if self.grammar is not None:   # the grammar ends a completion on the stop tokens vLLM would give it
            stops = sorted(set(stops) | set(self.grammar.stop_ids))
        greedy = temperature <= 0
        mask = None if self.grammar is None else _GrammarMask(self.grammar, inputs["input_ids"].shape[1])
        processors = None
        if mask is not None:
            from transformers import LogitsProcessorList

            processors = LogitsProcessorList([mask])
        with self._lock:
            if seed is not None:
                torch.manual_seed(seed)
            out = self.model.generate(
                **inputs, max_new_tokens=max_tokens, do_sample=not greedy, temperature=None if greedy else temperature,
                top_k=None, top_p=None, eos_token_id=stops, pad_token_id=stops[0], suppress_tokens=self.banned,
                output_logits=True, return_dict_in_generate=True, logits_processor=processors,
            )
        tokens = out.sequences[0, inputs["input_ids"].shape[1]:].tolist()
        logits = torch.stack(out.logits, dim=1)[0, : len(tokens)]   # the raw logits: the mask is applied below
        allowed = None if mask is None else torch.stack(mask.rows[: len(tokens)]).to(logits.device)   # what generate() masked
        logprobs = token_logprobs(logits, torch.tensor(tokens, device=logits.device), temperature if not greedy else 1.0,
                                  self.banned, allowed)
        stop_reason = "stop" if tokens and tokens[-1] in stops else "length"
        return Sample(tokens, logprobs.cpu().tolist(), stop_reason)

    @torch.no_grad()
    def completion_logprobs(self, prompt: tinker.ModelInput, tokens: Sequence[int], temperature: float = 1.0) -> torch.Tensor:
        inputs = self.inputs.encode(prompt, extra_tokens=tokens[:-1], device=self.device)
        logits = self.model(**inputs).logits[0, -len(tokens):]
        allowed = None if self.grammar is None else self.grammar.allowed(tokens)
        return token_logprobs(logits, torch.tensor(list(tokens), device=self.device), temperature, self.banned, allowed).cpu()


class _GrammarMask:
    """A generate() logits processor: −inf outside what the grammar allows at the next position (one
    sequence; the tokens generated so far are what follows the prompt). `rows` keeps each position's
    mask, so the sampled tokens' logprobs are scored over the same tokens without a second pass."""

    def __init__(self, grammar: TokenGrammar, prompt_length: int) -> None:
        self.state, self.prompt_length, self.seen = grammar.state(), prompt_length, 0
        self.rows: list[torch.Tensor] = []

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        generated = input_ids[0, self.prompt_length:].tolist()
        for position in range(self.seen, len(generated)):
            self.state.advance(generated[position], position)
        self.seen = len(generated)
        self.rows.append(self.state.allowed())
        return scores.masked_fill(~self.rows[-1].to(scores.device), float("-inf"))


class LocalSamplingClient:
    """tinker.SamplingClient's `sample_async`, served by a PeftSampler (what the cookbook's
    TinkerTokenCompleter calls)."""

    def __init__(self, sampler: PeftSampler, seed: int = 0) -> None:
        self.sampler, self.seed, self.calls = sampler, seed, 0

    async def sample_async(self, prompt: tinker.ModelInput, num_samples: int, sampling_params: tinker.SamplingParams,
                           **_: Any) -> tinker.types.SampleResponse:
        stops = [s for s in (sampling_params.stop or []) if isinstance(s, int)]
        sequences = []
        for _ in range(num_samples):
            self.calls += 1
            sample = await asyncio.to_thread(
                self.sampler.sample, prompt, max_tokens=sampling_params.max_tokens,
                temperature=sampling_params.temperature, stop_token_ids=stops, seed=self.seed * 1_000_003 + self.calls,
            )
            sequences.append(tinker.types.SampledSequence(
                stop_reason=sample.stop_reason, sequence_id=f"local-{self.calls}", _tokens_list=sample.tokens,
                _logprobs_list=sample.logprobs,
            ))
        return tinker.types.SampleResponse(sequences=sequences)
