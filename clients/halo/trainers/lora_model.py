"""Qwen3-VL on the trainer's side of the local LoRA backend: model inputs, loading, token
log-probabilities and Tinker's RL losses computed token-wise (halo.trainers.lora_learner trains
with them, halo.trainers.lora_sampler samples with them).
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tinker
import torch

LOSS_FUNCTIONS = ("importance_sampling", "ppo", "cispo", "dro")


# ------------------------------------------------------------------------------ model inputs

class QwenVLInputs:
    """tinker.ModelInput (text chunks + ImageChunks) -> Qwen3-VL forward() keyword arguments."""

    def __init__(self, image_processor: Any, image_token_id: int) -> None:
        self.image_processor = image_processor
        self.image_token_id = image_token_id
        self.merge = int(getattr(image_processor, "merge_size", 2))

    def encode(self, model_input: tinker.ModelInput, extra_tokens: Sequence[int] = (), device: str | torch.device = "cpu") -> dict[str, torch.Tensor]:
        from PIL import Image

        ids: list[int] = []
        types: list[int] = []        # mm_token_type_ids: 1 for image placeholders (M-RoPE needs them)
        images: list[Any] = []
        expected: list[int] = []
        for chunk in model_input.chunks:
            if isinstance(chunk, tinker.types.ImageChunk):
                image = Image.open(io.BytesIO(chunk.data))
                image.load()
                images.append(image.convert("RGB"))
                count = chunk.expected_tokens
                if count is None:
                    raise ValueError("an ImageChunk without expected_tokens cannot be laid out locally")
                expected.append(count)
                ids += [self.image_token_id] * count
                types += [1] * count
            else:
                ids += list(chunk.tokens)
                types += [0] * len(chunk.tokens)
        ids += list(extra_tokens)
        types += [0] * len(extra_tokens)
        out: dict[str, torch.Tensor] = {
            "input_ids": torch.tensor([ids], dtype=torch.long, device=device),
            "attention_mask": torch.ones(1, len(ids), dtype=torch.long, device=device),
        }
        if images:
            pixels = self.image_processor(images=images, return_tensors="pt")
            grid = pixels["image_grid_thw"]
            got = [int(g.prod()) // (self.merge * self.merge) for g in grid]
            if got != expected:
                raise ValueError(f"image token counts differ: renderer said {expected}, image processor gives {got}")
            out["pixel_values"] = pixels["pixel_values"].to(device)
            out["image_grid_thw"] = grid.to(device)
            out["mm_token_type_ids"] = torch.tensor([types], dtype=torch.int, device=device)
        return out


    def encode_batch(self, model_inputs: Sequence[tinker.ModelInput], device: str | torch.device = "cpu") -> dict[str, torch.Tensor]:
        """Several ModelInputs as one right-padded batch (attention_mask 0 on the padding; the
        images of all rows in row order, as the processor batches them): one forward for a
        micro-batch of datums. Right padding leaves every real position's causal context as it is alone."""
        rows = [self.encode(m, device=device) for m in model_inputs]
        if len(rows) == 1:
            return rows[0]
        width = max(r["input_ids"].shape[1] for r in rows)

        def padded(key: str, value: int) -> torch.Tensor:
            return torch.cat([torch.nn.functional.pad(r[key], (0, width - r[key].shape[1]), value=value) for r in rows])

        out = {"input_ids": padded("input_ids", 0), "attention_mask": padded("attention_mask", 0)}
        with_images = [r for r in rows if "pixel_values" in r]
        if with_images:
            out["pixel_values"] = torch.cat([r["pixel_values"] for r in with_images])
            out["image_grid_thw"] = torch.cat([r["image_grid_thw"] for r in with_images])
            for r in rows:
                r.setdefault("mm_token_type_ids", torch.zeros_like(r["input_ids"], dtype=torch.int))
            out["mm_token_type_ids"] = padded("mm_token_type_ids", 0)
        return out


def load_processors(model_dir: str | Path) -> tuple[Any, Any]:
    # tinker-cookbook's loaders: the same tokenizer and image processor its renderer uses (and
    # the one import path of AutoImageProcessor that works without torchvision)
    from tinker_cookbook.image_processing_utils import get_image_processor
    from tinker_cookbook.tokenizer_utils import get_tokenizer

    return get_tokenizer(str(model_dir)), get_image_processor(str(model_dir))


def load_base_model(model_dir: str | Path, dtype: torch.dtype | None = None, device: str = "cpu") -> Any:
    from transformers import Qwen3VLForConditionalGeneration, Qwen3VLMoeForConditionalGeneration, AutoConfig

    config = AutoConfig.from_pretrained(str(model_dir))
    cls = Qwen3VLMoeForConditionalGeneration if config.model_type == "qwen3_vl_moe" else Qwen3VLForConditionalGeneration
    kwargs: dict[str, Any] = {"dtype": dtype} if dtype is not None else {}
    return cls.from_pretrained(str(model_dir), **kwargs).to(device).eval()


def vision_token_ids(config: Any) -> list[int]:
    """The vision placeholders (<|image_pad|>, <|vision_start|>, ...): never text a policy may write.
    The local sampler never samples them and both sides normalise over the rest of the vocabulary,
    so sampler and learner score the same distribution."""
    names = ("image_token_id", "video_token_id", "vision_start_token_id", "vision_end_token_id")
    return sorted({int(getattr(config, n)) for n in names if getattr(config, n, None) is not None})


def masked_scaled_logits(logits: torch.Tensor, temperature: float = 1.0, banned: Sequence[int] = (),
                         allowed: torch.Tensor | None = None) -> torch.Tensor:
    """logits / T in float32 with −inf wherever the sampler could not draw: the banned tokens (the
    vision placeholders, vLLM's `bad_words`) and, per position, every token outside `allowed`
    (bool [positions, V], the grammar's mask of constrained sampling, halo.trainers.lora_grammar)."""
    scaled = logits.float() / max(temperature, 1e-6)
    if banned:
        scaled[..., list(banned)] = float("-inf")
    if allowed is not None:
        scaled = scaled.masked_fill(~allowed.to(scaled.device), float("-inf"))
    return scaled


def token_logprobs(logits: torch.Tensor, targets: torch.Tensor, temperature: float = 1.0,
                   banned: Sequence[int] = (), allowed: torch.Tensor | None = None) -> torch.Tensor:
    """log softmax(logits / T)[target] per position (float32), over the tokens the sampler could
    draw (`masked_scaled_logits`): the distribution vLLM reports the logprobs of."""
    scaled = masked_scaled_logits(logits, temperature, banned, allowed)
    return torch.log_softmax(scaled, dim=-1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)


# ----------------------------------------------------------------------------------- losses

@dataclass(frozen=True)
class LossTerms:
    loss: torch.Tensor          # summed over tokens (Tinker's convention)
    per_token: torch.Tensor     # the loss of each token, 0 where masked (`loss` is its sum)
    ratio: torch.Tensor         # the sampler correction's ratio per token, detached: learner / sampler
    capped: torch.Tensor        # per token: the truncated-IS weight hit its cap (all False without one)
    clipped: torch.Tensor       # per token: the PPO / CISPO clip was active
    kl_k3: torch.Tensor         # per token: Schulman's k3 estimate of KL(sampler || learner), r - 1 - log r
    masked_low: torch.Tensor    # per token: its ratio fell under the lower bound, so it was not trained on


def rl_loss(loss_fn: str, target_logprobs: torch.Tensor, sampling_logprobs: torch.Tensor, advantages: torch.Tensor,
            mask: torch.Tensor | None = None, config: dict[str, float] | None = None,
            tis_cap: float | None = None, mask_low: float | None = None) -> LossTerms:
    """Tinker's built-in RL losses, token-wise, summed (https://tinker-docs.thinkingmachines.ai/losses).

    tis_cap None: Tinker's losses exactly, every ratio taken against the sampler's logprobs q
    (importance_sampling `-(p/q)·A`, ppo's and cispo's clip on p/q, dro's penalty on log p - log q).

    tis_cap C > 0: decoupled off-policy correction (truncated importance sampling, as in verl's
    rollout IS weights, SkyRL's `tis_imp_ratio_cap` and Yao et al. 2025): the proximal policy is
    the learner's own weights at the start of the step (sg(p)), the sampler correction is the
    detached weight w = min(sg(p)/q, C), and the PPO / CISPO clip applies to r = p/sg(p), the
    ratio against the proximal policy, never to the sampler mismatch:
    importance_sampling `-w·r·A`; ppo `-w·min(r·A, clip(r)·A)`; cispo `-w·sg(clip(r))·log p·A`;
    dro unchanged (an off-policy objective without a ratio: its penalty anchors it to the sampler).
    With one optimizer step per batch r is 1 in value (its gradient is ∇log p), so the clip is
    inactive and w alone corrects what the sampler's and the learner's numerics or a stale
    adapter (--max-staleness) make different; below the cap the gradient equals Tinker's.

    mask_low L > 0: a token whose ratio learner/sampler (detached) is below L is left out of the loss
    (its per-token loss is 0), whatever the loss: the sampler drew it where the learner gives it far
    less mass, so its gradient would follow a distribution neither side holds (prime-rl's
    `token_mask_low`, verl's rollout rejection sampling). The cap bounds the weight from above, the
    mask from below.
    """
    config = config or {}
    low, high = config.get("clip_low_threshold", 0.8), config.get("clip_high_threshold", 1.2)
    mismatch = target_logprobs.detach() - sampling_logprobs        # log(learner / sampler)
    behaviour = mismatch.exp()
    kl_k3 = behaviour - 1 - mismatch
    no = torch.zeros_like(behaviour, dtype=torch.bool)
    if tis_cap is None:
        log_ratio = target_logprobs - sampling_logprobs
        ratio, weight, capped = log_ratio.exp(), torch.ones_like(behaviour), no
    else:
        if not tis_cap > 0:
            raise ValueError(f"tis_cap must be > 0, got {tis_cap}")
        ratio = (target_logprobs - target_logprobs.detach()).exp()
        weight, capped = behaviour.clamp(max=tis_cap), behaviour > tis_cap
    clipped = no
    if loss_fn == "importance_sampling":
        per_token = -(weight * ratio * advantages)
    elif loss_fn == "ppo":
        unclipped, bounded = ratio * advantages, ratio.clamp(low, high) * advantages
        per_token = -(weight * torch.min(unclipped, bounded))
        clipped = (bounded.detach() < unclipped.detach())
    elif loss_fn == "cispo":
        per_token = -(weight * ratio.clamp(low, high).detach() * target_logprobs * advantages)
        clipped = (ratio.detach() < low) | (ratio.detach() > high)
    elif loss_fn == "dro":
        beta = config.get("beta", 0.05)
        per_token = -(target_logprobs * advantages - 0.5 * beta * (target_logprobs - sampling_logprobs) ** 2)
    else:
        raise ValueError(f"loss_fn must be one of {LOSS_FUNCTIONS}, got {loss_fn!r}")
    masked_low = no
    if mask_low is not None:
        if not mask_low > 0:
            raise ValueError(f"mask_low must be > 0, got {mask_low}")
        masked_low = behaviour < mask_low
        per_token = per_token.masked_fill(masked_low, 0.0)
    if mask is not None:
        per_token = per_token * mask
    return LossTerms(per_token.sum(), per_token, behaviour, capped, clipped, kl_k3, masked_low)


def datum_from_completion(prompt: tinker.ModelInput, tokens: Sequence[int], logprobs: Sequence[float], advantage: float) -> tinker.Datum:
    """The Datum tinker-cookbook's RL loop builds for one (observation, sampled completion) pair."""
    from tinker_cookbook.completers import TokensWithLogprobs
    from tinker_cookbook.rl.data_processing import trajectory_to_data
    from tinker_cookbook.rl.types import Trajectory, Transition

    transition = Transition(ob=prompt, ac=TokensWithLogprobs(tokens=list(tokens), maybe_logprobs=list(logprobs)),
                            reward=0.0, episode_done=True)
    (datum,) = trajectory_to_data(Trajectory([transition], tinker.ModelInput.empty()), advantage)
    return datum


def _tensor(datum: tinker.Datum, key: str) -> torch.Tensor | None:
    value = datum.loss_fn_inputs.get(key)
    return None if value is None else value.to_torch().float()
