"""The local LoRA backend: PyTorch + PEFT updates of Qwen3-VL in the trainer, adapters in PEFT format.

Same data, same losses as the Tinker backend, computed locally:

- the unit of training data is tinker's `Datum` exactly as tinker-cookbook's RL loop builds it
  (`rl.data_processing.trajectory_to_data`): the rendered observation (text tokens + screenshot
  ImageChunks, from the `qwen3_vl_instruct` renderer) followed by the sampled completion,
  shifted by one, with `target_tokens`, the sampler's `logprobs` and per-token `advantages`;
- `forward_backward(data, loss_fn)` computes Tinker's documented losses token-wise:
  importance_sampling `-(p/q)·A`, ppo `-min(r·A, clip(r, 0.8, 1.2)·A)`, cispo
  `-sg(clip(r))·log p·A`, dro `-(log p·A - β/2·(log p - log q)²)`, by default with the
  sampler correction bounded (`tis_cap`, `tis_mask_low`, lora_model.rl_loss: w = min(p/q, 2)
  detached, tokens under 1/8 left out, the clip against the proximal policy), aggregated by
  `loss_agg` (the token mean by default), with the step's mismatch metrics (`off_policy_metrics`);
  under a grammar (`action_regex`) every position is scored over the tokens it allowed
  (lora_grammar), the distribution vLLM sampled from;
  `optim_step()` is Adam (β = 0.9, 0.95, like the cookbook's AdamParams) on the LoRA parameters only;
- `save_adapter(folder)` writes a PEFT adapter (adapter_config.json + adapter_model.safetensors),
  which vLLM loads as a runtime LoRA (the gateway's LoadAdapter with `path=folder`) and which
  `PeftSampler` (the CPU stand-in for vLLM, used in tests) loads with `PeftModel.from_pretrained`.

Module layout: the model inputs, token log-probabilities and losses are `lora_model`, the sampler
`lora_sampler`; this module is the learner and the `local_lora` trainer.

`PeftSampler` (lora_sampler) is the serving side on a machine without vLLM: it samples completions from the
base model (+ adapter) with HF `generate`, and returns token ids and the log-probabilities of
the sampled tokens under the sampling distribution (softmax(logits / T), no top-k / top-p, vision placeholder tokens
excluded), the `q` of the importance ratio. The learner computes `p` at the same temperature, so with the LoRA
at its initialisation (B = 0) both agree to float precision.

Images: an ImageChunk stands for `expected_tokens` `<|image_pad|>` tokens; the chunk's JPEG is
decoded and run through the checkpoint's image processor, which must produce exactly that many
merged patches (it does when the renderer used the same image processor).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tinker
import torch

from halo.errors import FailedPrecondition, InvalidArgument
from halo.trainers.advantages import step_metrics
from halo.trainers.async_rollouts import AsyncSettings, Redone, RolloutPipeline, StepRollouts, admit
from halo.trainers.learner import sample_gateway
from halo.trainers.tinker_env import BrowserTaskConfig, HaloBrowserDataset, env_failure_strategy, expand_task_refs
from halo.trainers.tinker_train import loss_fn_config_for
from halo.trainers.lora_grammar import TokenGrammar, segments
from halo.trainers.lora_model import (  # noqa: F401 (datum_from_completion, LOSS_FUNCTIONS: this module's API)
    LOSS_FUNCTIONS, QwenVLInputs, _tensor, datum_from_completion, load_base_model, load_processors, masked_scaled_logits,
    rl_loss, token_logprobs, vision_token_ids,
)
from halo.trainers.lora_options import (  # noqa: F401 (the defaults: this module's API)
    DEFAULT_GRAD_CLIP_NORM, DEFAULT_LOSS_AGG, DEFAULT_MICRO_BATCH_TOKENS, DEFAULT_TIS_CAP, DEFAULT_TIS_MASK_LOW,
    LOSS_AGGREGATIONS, LocalLoraOptions,
)
from halo.trainers.lora_sampler import LocalSamplingClient, PeftSampler
from halo.trainers.vllm_rollout import GatewayGroupBuilder, GatewayPolicy, SampleClock, rollout_batch

DEFAULT_TARGET_MODULES = r".*language_model.*\.(q_proj|k_proj|v_proj|o_proj|gate_proj|up_proj|down_proj)"
ADAPTER_FILES = ("adapter_config.json", "adapter_model.safetensors")


# ---------------------------------------------------------------------------------- learner

def off_policy_metrics(terms: Sequence[Any]) -> dict[str, float]:
    """A step's sampler/learner mismatch over its trained tokens: the ratio learner/sampler
    (mean, min, max; `mean_ratio` is the mean too), the fraction of tokens whose truncated-IS
    weight hit the cap, that fell under the lower bound (not trained on), and whose PPO/CISPO
    clip was active, and the k3 estimate of
    KL(sampler || learner) (Schulman 2020; prime-rl and verl log the same)."""
    if not terms:
        return {}
    ratio = torch.cat([t.ratio.float().cpu() for t in terms])
    capped = torch.cat([t.capped.cpu() for t in terms]).float()
    masked_low = torch.cat([t.masked_low.cpu() for t in terms]).float()
    clipped = torch.cat([t.clipped.cpu() for t in terms]).float()
    k3 = torch.cat([t.kl_k3.float().cpu() for t in terms])
    return {
        "mean_ratio": float(ratio.mean()), "sampler_ratio/mean": float(ratio.mean()),
        "sampler_ratio/min": float(ratio.min()), "sampler_ratio/max": float(ratio.max()),
        "sampler_ratio/frac_capped": float(capped.mean()), "sampler_ratio/frac_masked_low": float(masked_low.mean()),
        "policy_ratio/frac_clipped": float(clipped.mean()),
        "kl_sampler_learner_k3": float(k3.mean()),
    }

@dataclass
class StepResult:
    loss: float
    logprobs: list[torch.Tensor] = field(default_factory=list)   # per datum, trainer's target logprobs
    metrics: dict[str, float] = field(default_factory=dict)


class LoraLearner:
    """A Qwen3-VL with a trainable PEFT LoRA on its language model; the vision tower stays frozen."""

    def __init__(
        self, model_dir: str | Path, *, rank: int = 32, alpha: int | None = None, learning_rate: float = 1e-6,
        target_modules: str | list[str] = DEFAULT_TARGET_MODULES, temperature: float = 1.0, seed: int = 0,
        dtype: torch.dtype | None = None, device: str = "cpu", adapter: str | Path | None = None,
        tis_cap: float | None = DEFAULT_TIS_CAP, grad_clip_norm: float = DEFAULT_GRAD_CLIP_NORM,
        micro_batch_tokens: int = DEFAULT_MICRO_BATCH_TOKENS, gradient_checkpointing: bool = False,
        fp32_logits: bool = True, action_regex: str = "", tis_mask_low: float | None = DEFAULT_TIS_MASK_LOW,
        loss_agg: str = DEFAULT_LOSS_AGG, loss_agg_norm: int = 0,
    ) -> None:
        from peft import LoraConfig, PeftModel, get_peft_model

        torch.manual_seed(seed)
        self.model_dir, self.device, self.temperature = str(model_dir), device, temperature
        if tis_cap is not None and not tis_cap > 0:
            raise ValueError(f"tis_cap must be > 0 (None: Tinker's losses, no cap), got {tis_cap}")
        self.tis_cap = tis_cap
        if tis_mask_low is not None and not tis_mask_low > 0:
            raise ValueError(f"tis_mask_low must be > 0 (None: train on every token), got {tis_mask_low}")
        self.tis_mask_low = tis_mask_low
        if loss_agg not in LOSS_AGGREGATIONS or loss_agg_norm < 0:
            raise ValueError(f"loss_agg must be one of {LOSS_AGGREGATIONS} (got {loss_agg!r}) and loss_agg_norm >= 0 (got {loss_agg_norm})")
        self.loss_agg, self.loss_agg_norm = loss_agg, loss_agg_norm
        if micro_batch_tokens < 1 or grad_clip_norm < 0:
            raise ValueError(f"micro_batch_tokens must be >= 1 and grad_clip_norm >= 0 (got {micro_batch_tokens}, {grad_clip_norm})")
        self.grad_clip_norm, self.micro_batch_tokens = grad_clip_norm, micro_batch_tokens
        self.gradient_checkpointing, self.fp32_logits = gradient_checkpointing, fp32_logits
        self._head32: torch.Tensor | None = None
        self.tokenizer, self.image_processor = load_processors(model_dir)
        base = load_base_model(model_dir, dtype, device)
        self.inputs = QwenVLInputs(self.image_processor, base.config.image_token_id)
        self.banned = vision_token_ids(base.config)
        # the mask of constrained sampling, replayed (lora_grammar): the logits' width is the LM head's
        self.grammar = (TokenGrammar.for_checkpoint(action_regex, model_dir, self.tokenizer, base.lm_head.weight.shape[0])
                        if action_regex else None)
        if adapter is not None:
            self.model = PeftModel.from_pretrained(base, str(adapter), is_trainable=True)
        else:
            config = LoraConfig(r=rank, lora_alpha=alpha or rank, target_modules=target_modules, lora_dropout=0.0, bias="none")
            self.model = get_peft_model(base, config)
        self.model.eval()  # no dropout anywhere: the learner must score tokens exactly like the sampler
        if gradient_checkpointing:
            # non-reentrant: works with a frozen base (no input that requires grad); used in train mode only
            base.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        self.learning_rate = learning_rate
        self.optimizer = torch.optim.Adam(self.trainable_parameters(), lr=learning_rate, betas=(0.9, 0.95), eps=1e-8)
        self.updates = 0

    def trainable_parameters(self) -> list[torch.nn.Parameter]:
        return [p for p in self.model.parameters() if p.requires_grad]

    # --- scoring ----------------------------------------------------------------------------

    def _hidden(self, inputs: dict[str, torch.Tensor]) -> torch.Tensor:
        """The language model's last hidden states [batch, positions, hidden] (LoRA applied), before
        the LM head: the head then runs only where a token is scored."""
        return self.model.get_base_model().model(**inputs, use_cache=False)[0]

    def _logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """The LM head over `hidden` [n, hidden] -> [n, vocab]; in float32 when `fp32_logits` (the
        frozen head's weights upcast once and kept), so a bfloat16 run scores tokens with float32
        logits, not bf16-rounded ones (MiniMax-M1's fix for the train/inference probability gap)."""
        head = self.model.get_base_model().lm_head
        if not self.fp32_logits or head.weight.dtype == torch.float32:
            return head(hidden).float()
        if self._head32 is None:
            self._head32 = head.weight.detach().float()   # the LM head is frozen (LoRA targets the layers)
        bias = None if head.bias is None else head.bias.detach().float()
        return torch.nn.functional.linear(hidden.float(), self._head32, bias)

    def allowed(self, tokens: Sequence[int]) -> torch.Tensor | None:
        """The grammar's mask before each token of one completion (None without a grammar)."""
        return None if self.grammar is None else self.grammar.allowed(tokens)

    @torch.no_grad()
    def completion_logprobs(self, prompt: tinker.ModelInput, tokens: Sequence[int]) -> torch.Tensor:
        """log q(token_i | prompt, tokens_<i) for each completion token, at the learner's temperature,
        over what the sampler could draw there (the vision placeholders banned, the grammar's mask)."""
        inputs = self.inputs.encode(prompt, extra_tokens=tokens[:-1], device=self.device)
        logits = self._logits(self._hidden(inputs)[0, -len(tokens):])
        return token_logprobs(logits, torch.tensor(list(tokens), device=self.device), self.temperature, self.banned,
                              self.allowed(tokens)).cpu()

    @torch.no_grad()
    def next_token_logprobs(self, prompt: tinker.ModelInput, tokens: Sequence[int] = ()) -> torch.Tensor:
        """log q(· | prompt, tokens) over the vocabulary [V] (−inf where the sampler could not draw):
        the distribution of the completion's next token after `tokens`."""
        inputs = self.inputs.encode(prompt, extra_tokens=tokens, device=self.device)
        logits = self._logits(self._hidden(inputs)[0, -1:])
        allowed = None if self.grammar is None else self.grammar.next_allowed(tokens).unsqueeze(0)
        return torch.log_softmax(masked_scaled_logits(logits, self.temperature, self.banned, allowed), dim=-1)[0].cpu()

    def _allowed_at(self, targets: torch.Tensor, positions: torch.Tensor) -> torch.Tensor | None:
        """The grammar's mask at a datum's trained positions: each maximal run of positions is one
        completion (a datum of a multi-action episode holds several, observation tokens between them),
        whose grammar starts afresh at its first token."""
        if self.grammar is None:
            return None
        pieces = [self.grammar.allowed(targets[start:end].tolist()) for start, end in segments(positions)]
        return torch.cat(pieces) if pieces else torch.zeros(0, self.grammar.vocab_size, dtype=torch.bool)

    @torch.no_grad()
    def reference_logprobs(self, data: Sequence[tinker.Datum]) -> list[torch.Tensor]:
        """The base model's (LoRA off) logprob of each datum's targets at its trained positions (0
        elsewhere), over what the sampler could draw there: the reference of the KL penalty."""
        out: list[torch.Tensor] = []
        with self.model.disable_adapter():
            for datum in data:
                targets = datum.loss_fn_inputs["target_tokens"].to_torch().long()
                positions = (datum.loss_fn_inputs["mask"].to_torch() > 0).nonzero().squeeze(-1)
                logprobs = torch.zeros(targets.shape[0])
                if positions.numel():
                    hidden = self._hidden(self.inputs.encode(datum.model_input, device=self.device))[0, positions.to(self.device)]
                    logprobs[positions] = token_logprobs(self._logits(hidden), targets[positions].to(self.device), self.temperature,
                                                         self.banned, self._allowed_at(targets, positions)).cpu()
                out.append(logprobs)
        return out

    def micro_batches(self, lengths: Sequence[int]) -> list[list[int]]:
        """Datum indices in order, grouped so that a group's padded size (rows x longest) stays within
        `micro_batch_tokens` (a datum longer than that is a group of its own)."""
        groups: list[list[int]] = []
        longest = 0
        for i, length in enumerate(lengths):
            if groups and max(longest, length) * (len(groups[-1]) + 1) <= self.micro_batch_tokens:
                groups[-1].append(i)
                longest = max(longest, length)
            else:
                groups.append([i])
                longest = length
        return groups

    # --- Tinker's training primitives, locally ------------------------------------------------

    def forward_backward(self, data: Sequence[tinker.Datum], loss_fn: str = "importance_sampling",
                         loss_fn_config: dict[str, float] | None = None) -> StepResult:
        """Accumulate the gradient of the step's loss over `data`, a micro-batch at a time: the
        per-token losses aggregated by `loss_agg` (token mean by default; `StepResult.loss` is that,
        `metrics["loss:sum"]` the plain sum). With a grammar every trained position is scored over the
        tokens it allowed there, the distribution vLLM sampled from.

        Only the trained positions (the sampled completion) go through the LM head; the result's
        per-datum logprobs hold the learner's logprob there and NaN elsewhere."""
        if loss_fn not in LOSS_FUNCTIONS:
            raise ValueError(f"loss_fn must be one of {LOSS_FUNCTIONS}, got {loss_fn!r}")
        rows: list[tuple[tinker.Datum, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]] = []
        out: list[torch.Tensor] = []
        for datum in data:
            targets = datum.loss_fn_inputs["target_tokens"].to_torch().long()
            sampling = _tensor(datum, "logprobs")
            advantages = _tensor(datum, "advantages")
            if sampling is None or advantages is None:
                raise ValueError("RL losses need logprobs and advantages in loss_fn_inputs")
            if datum.model_input.length != targets.shape[0]:
                raise ValueError(f"datum has {targets.shape[0]} targets for {datum.model_input.length} input positions")
            mask = _tensor(datum, "mask")
            if mask is None and self.grammar is not None:
                raise ValueError("a constrained run's datum needs its mask: the grammar restarts at each completion it marks")
            # The sampled tokens: the mask when the datum has one (the cookbook strips it before
            # sending), else where the cookbook put an advantage or a sampler logprob (the
            # observation's positions carry 0 for both and contribute nothing).
            active = (mask > 0) if mask is not None else (advantages != 0) | (sampling != 0)
            out.append(torch.full((targets.shape[0],), float("nan")))
            rows.append((datum, targets, sampling, advantages, active.nonzero().squeeze(-1)))
        trained = [i for i, row in enumerate(rows) if row[4].numel()]
        if self.grammar is not None:   # every completion checked before any is trained on
            for i in trained:
                for start, end in segments(rows[i][4]):
                    self.grammar.state_after(rows[i][1][start:end].tolist())
        scale = self._loss_scale(sum(rows[i][4].numel() for i in trained), len(trained))
        total, aggregated, terms_seen, tokens_trained = 0.0, 0.0, [], 0
        self.model.train(self.gradient_checkpointing)   # HF checkpoints layers only in train mode (no dropout here)
        try:
            for group in self.micro_batches([rows[i][0].model_input.length for i in trained]):
                batch = [rows[trained[g]] for g in group]
                hidden = self._hidden(self.inputs.encode_batch([r[0].model_input for r in batch], device=self.device))
                row_of = torch.cat([torch.full((r[4].numel(),), b, dtype=torch.long) for b, r in enumerate(batch)])
                positions = torch.cat([r[4] for r in batch])
                # the grammar's mask, built per micro-batch: [positions, V] like the logits it masks
                mask = None if self.grammar is None else torch.cat([self._allowed_at(batch_row[1], batch_row[4])
                                                                    for batch_row in batch])
                logprobs = token_logprobs(self._logits(hidden[row_of.to(self.device), positions.to(self.device)]),
                                          torch.cat([r[1][r[4]] for r in batch]).to(self.device), self.temperature, self.banned,
                                          mask)
                terms = rl_loss(loss_fn, logprobs, torch.cat([r[2][r[4]] for r in batch]).to(self.device),
                                torch.cat([r[3][r[4]] for r in batch]).to(self.device), None, loss_fn_config,
                                tis_cap=self.tis_cap, mask_low=self.tis_mask_low)
                loss = terms.loss * scale
                if loss.requires_grad:
                    loss.backward()
                total += float(terms.loss.detach())
                aggregated += float(loss.detach())
                terms_seen.append(terms)
                tokens_trained += positions.numel()
                for piece, g in zip(logprobs.detach().cpu().split([r[4].numel() for r in batch]), group):
                    out[trained[g]][rows[trained[g]][4]] = piece
        finally:
            self.model.eval()
        metrics = {"loss:sum": total, "tokens_trained": float(tokens_trained)} | off_policy_metrics(terms_seen)
        return StepResult(aggregated, out, metrics)

    def _loss_scale(self, tokens: int, datums: int) -> float:
        """The factor that turns the summed per-token loss into the step's loss (`loss_agg`,
        halo.trainers.lora_options.LOSS_AGGREGATIONS). Counted before any token is masked, so a
        token left out of the loss (tis_mask_low) only removes its own share."""
        if self.loss_agg == "sum" or not tokens:
            return 1.0
        if self.loss_agg == "token_mean":
            return 1.0 / tokens
        if not self.loss_agg_norm:
            raise ValueError("loss_agg seq_mean_token_sum_norm needs loss_agg_norm (Dr. GRPO's constant: the generation budget)")
        return 1.0 / (datums * self.loss_agg_norm)

    def optim_step(self, learning_rate: float | None = None, grad_clip_norm: float | None = None) -> dict[str, float]:
        """Adam on the accumulated gradient, its global norm clipped to `grad_clip_norm` (the
        learner's, 1.0 by default; 0: no clipping). `grad_norm` is the norm before clipping."""
        if learning_rate is not None:
            for group in self.optimizer.param_groups:
                group["lr"] = learning_rate
        clip = self.grad_clip_norm if grad_clip_norm is None else grad_clip_norm
        params = self.trainable_parameters()
        norm = torch.nn.utils.clip_grad_norm_(params, clip if clip > 0 else float("inf"))
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.updates += 1
        return {"grad_norm": float(norm), "updates": float(self.updates)}

    # --- adapters and checkpoints -------------------------------------------------------------

    def save_adapter(self, folder: str | Path) -> Path:
        """The LoRA adapter in PEFT format: what vLLM (LoadAdapter) and PeftSampler load."""
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        self.model.save_pretrained(str(folder))
        missing = [f for f in ADAPTER_FILES if not (folder / f).exists()]
        if missing:
            raise RuntimeError(f"PEFT did not write {missing} in {folder}")
        return folder

    def save(self, folder: Path) -> None:
        """A trainer checkpoint: the adapter plus the optimizer state."""
        self.save_adapter(folder / "adapter")
        torch.save(self.optimizer.state_dict(), folder / "optimizer.pt")
        (folder / "learner.json").write_text(json.dumps({"updates": self.updates, "model_dir": self.model_dir}))

    def load(self, folder: Path) -> None:
        from peft import set_peft_model_state_dict
        from safetensors.torch import load_file

        state = load_file(str(folder / "adapter" / "adapter_model.safetensors"))
        result = set_peft_model_state_dict(self.model, state)
        if getattr(result, "unexpected_keys", None):
            raise RuntimeError(f"adapter does not fit this model: {result.unexpected_keys[:5]}")
        self.optimizer.load_state_dict(torch.load(folder / "optimizer.pt", weights_only=True))
        self.updates = json.loads((folder / "learner.json").read_text())["updates"]


# ------------------------------------------------------------------- the local_lora trainer

async def train_local_lora(ctx: Any) -> None:
    """GRPO with a LoRA trained here (PyTorch + PEFT; a GPU when there is one).

    The same environments, rollouts, advantages and datums as the Tinker backend (tinker-cookbook's
    rollout and data-processing code over `tinker_env`), updated with `forward_backward` +
    `optim_step` above. Each step's checkpoint is the adapter (PEFT format, loadable by vLLM)
    plus the optimizer state. The run's options (`RunSpec.extra`) are read and checked by
    `halo.trainers.lora_options.LocalLoraOptions` before anything loads; the main ones:

    extra.model_dir (or a RunSpec.model that is a folder): the local Qwen3-VL checkpoint.
    extra.device: cuda / cpu (default: cuda when available).
    extra.serve_route: a gateway vLLM route that serves the run's weights and samples its rollouts:
    at the start and after every step the adapter is written to `<run>/serving/step-N` and
    hot-loaded there as `run-<run_id>-v<N>` (a new name per version, the previous one unloaded
    after: the gateway refuses new weights under a name it has served), and every rollout of step
    N+1 samples through the route with `run-<run_id>-v<N>`; the datums are vLLM's own prompt ids,
    sampled ids and logprobs (`halo.trainers.vllm_rollout`). The vLLM server must read the run
    folder (same machine or a shared volume: compose mounts `runs` read-only).
    extra.sample_timeout_s (`halo train --sample-timeout-s`): the deadline of each call to the gateway (300 s).
    extra.sampler: "vllm" (the default with a serve_route) or "local" (in-process generate() from
    the learner's weights, the default without one; with a serve_route the adapter is still pushed).
    extra.action_regex (`halo train --constrain-actions`): every sampled completion matches this
    regex (vLLM's structured outputs; vLLM sampling only), and the learner applies the same
    grammar mask at every completion position (halo.trainers.lora_grammar), so it scores the
    distribution vLLM sampled from.
    extra.layout_seeds: the page layouts the rollouts draw from (e.g. [0]: one page, the playground's
    reference layout); every layout seed 0..999 when unset.
    extra.tis_cap / tis_mask_low: the sampler correction's bounds (a token's weight capped at
    tis_cap, a token whose ratio is under tis_mask_low not trained on); extra.loss_agg: how token
    losses become the step's loss (token_mean by default); extra.normalize_std,
    remove_constant_reward_groups, kl_penalty_coef (+ kl_discount_factor): as tinker-cookbook's.
    A step whose advantages are all zero takes no optimizer step (`optim_skipped`).
    """
    spec = ctx.spec
    options = LocalLoraOptions.from_extra(spec.extra)
    extra = spec.extra
    model_dir = options.model_dir or (spec.model if Path(spec.model).is_dir() else "")
    if not model_dir or not Path(model_dir).is_dir():
        raise FailedPrecondition("the local_lora backend needs a local Qwen3-VL checkpoint: set --base-model (or extra.model_dir) to its folder")
    serve_route = options.serve_route
    if serve_route and not ctx.services.gateway:
        raise FailedPrecondition(f"extra.serve_route={serve_route!r} needs a policy gateway (the trainer's --gateway-target)")
    sampler = options.sampler or ("vllm" if serve_route else "local")
    if sampler == "vllm" and not serve_route:
        raise InvalidArgument("extra.sampler='vllm' samples through the gateway: set extra.serve_route to its vLLM route")
    action_regex = action_regex_for(options)
    device = options.device or ("cuda" if torch.cuda.is_available() else "cpu")
    dtype = torch.bfloat16 if device.startswith("cuda") else None
    learner = await asyncio.to_thread(
        _learner_for, model_dir, rank=spec.lora_rank, learning_rate=spec.learning_rate, temperature=spec.temperature,
        seed=spec.seed, dtype=dtype, device=device, tis_cap=options.tis_cap, tis_mask_low=options.tis_mask_low,
        grad_clip_norm=options.grad_clip_norm, micro_batch_tokens=options.micro_batch_tokens,
        gradient_checkpointing=options.gradient_checkpointing, fp32_logits=options.fp32_logits,
        action_regex=action_regex, loss_agg=options.loss_agg, loss_agg_norm=options.loss_agg_norm or spec.max_tokens,
    )
    if ctx.last_checkpoint is not None:
        await asyncio.to_thread(learner.load, ctx.last_checkpoint)
    services = ctx.services
    task = BrowserTaskConfig(
        env_target=services.env, reward_target=services.reward, token=services.token, tls_ca=services.tls_ca,
        max_steps=spec.max_steps,
        history_steps=int(extra.get("history_steps", 5)), reward_overrides=dict(spec.reward_overrides), run_id=ctx.run_id,
        model_name=model_dir, tokenizer=model_dir, image_processor=model_dir,
        screenshots=bool(extra.get("screenshots", True)),
    )
    tasks = await expand_task_refs(task, spec.task_ids)
    dataset = HaloBrowserDataset(tasks, group_size=spec.group_size, groups_per_batch=spec.groups_per_batch,
                                 num_batches=spec.total_steps, seed=spec.seed, config=task,
                                 layout_seeds=list(options.layout_seeds))
    strategy = env_failure_strategy(spec.group_size, extra)
    settings = AsyncSettings.from_extra(extra)
    if settings.max_staleness and sampler != "vllm":
        raise InvalidArgument("--max-staleness needs the rollouts sampled through vLLM (extra.serve_route): "
                              "in-process generate() shares the learner's weights, so it cannot run ahead of them")
    publisher = AdapterPublisher(ctx, serve_route, keep_loaded=settings.max_staleness + 1)
    try:
        policy = _rollout_policy(ctx, learner, sampler, serve_route, task, publisher, action_regex)
        await publisher.publish(learner, ctx.start_step)   # the route serves the run's weights from the start
        await _train_local_lora_steps(ctx, learner, policy, dataset, strategy, publisher, settings, options)
    finally:
        await publisher.close()


def _learner_for(model_dir: str, **kwargs: Any) -> "LoraLearner":
    """The run's learner; a setting it refuses (an action regex xgrammar cannot compile, ...) is the
    run spec's error, not a failure of the run."""
    try:
        return LoraLearner(model_dir, **kwargs)
    except ValueError as exc:
        raise InvalidArgument(str(exc)) from None


def action_regex_for(options: LocalLoraOptions) -> str:
    """extra.action_regex, checked: a regex Python compiles (xgrammar, which both samplers and the
    learner use, compiles it when the learner loads). vLLM constrains with its structured outputs,
    in-process generate() with the same grammar mask (PeftSampler)."""
    regex = options.action_regex
    if not regex:
        return ""
    try:
        re.compile(regex)
    except re.error as exc:
        raise InvalidArgument(f"extra.action_regex is not a regular expression: {exc}") from None
    return regex


def step_data(groups: Sequence[Any], options: LocalLoraOptions) -> tuple[list[tinker.Datum], dict[str, float]]:
    """A step's datums from its trajectory groups, as tinker-cookbook's RL loop builds them, with the
    run's advantage options: groups whose rewards are all equal dropped (`remove_constant_reward_groups`,
    the cookbook's function) and the group-centred advantages divided by the group's std
    (`normalize_std`: GRPO's original form; dr_grpo, the default, leaves it out)."""
    from tinker_cookbook.rl.data_processing import assemble_training_data, compute_advantages, remove_constant_reward_groups

    metrics: dict[str, float] = {}
    if options.remove_constant_reward_groups:
        kept = remove_constant_reward_groups(list(groups))
        metrics["groups_constant_removed"] = float(len(groups) - len(kept))
        groups = kept
    if not groups:
        return [], metrics
    advantages = compute_advantages(list(groups))
    if options.normalize_std:
        advantages = [a / (torch.tensor(g.get_total_rewards()).std(unbiased=False) + 1e-6)
                      for a, g in zip(advantages, groups)]
    data, _ = assemble_training_data(list(groups), advantages)
    return data, metrics


def has_signal(data: Sequence[tinker.Datum]) -> bool:
    """Whether any trained token has a non-zero advantage: without one the loss's gradient is zero and
    an optimizer step would move the weights by Adam's momentum alone."""
    return any(bool((d.loss_fn_inputs["advantages"].to_torch() != 0).any()) for d in data)


def incorporate_kl_penalty(data: Sequence[tinker.Datum], reference: Sequence[torch.Tensor], coef: float,
                           discount: float = 0.0) -> dict[str, float]:
    """tinker-cookbook's KL penalty (rl.metrics.incorporate_kl_penalty) against the base model, computed
    here: per trained token d = log q_sampler − log q_base, and each advantage gains
    coef · (mean(d) − d) (discounted into future sums when `discount` > 0). The reference is the
    learner's base weights (LoRA off) over the same masked distribution as the sampler's."""
    from tinker_cookbook.rl.metrics import discounted_future_sum_vectorized

    masks = [d.loss_fn_inputs["mask"].to_torch().float() for d in data]
    diffs = [(d.loss_fn_inputs["logprobs"].to_torch().float() - ref) * m for d, ref, m in zip(data, reference, masks)]
    tokens = sum(float(m.sum()) for m in masks)
    mean = sum(float(x.sum()) for x in diffs) / tokens if tokens else 0.0
    for datum, diff, m in zip(data, diffs, masks):
        penalty = coef * m * (mean - diff)
        if discount > 0:
            penalty = discounted_future_sum_vectorized(penalty, discount)
        datum.loss_fn_inputs["advantages"] = tinker.TensorData.from_torch(datum.loss_fn_inputs["advantages"].to_torch() + penalty)
    return {"kl_policy_base": mean}


def _rollout_policy(ctx: Any, learner: "LoraLearner", sampler: str, route: str, task: Any, publisher: "AdapterPublisher",
                    action_regex: str = ""):
    """The cookbook TokenCompleter the rollouts sample from: vLLM through the gateway, or generate() here."""
    from tinker_cookbook.completers import TinkerTokenCompleter

    from halo.trainers.vllm_rollout import GatewayPolicy, SampleClock, TimedCompleter

    spec = ctx.spec
    if sampler == "vllm":
        return GatewayPolicy(publisher.gateway, route, learner.inputs.image_token_id, task.prompt_options(),
                             max_tokens=spec.max_tokens, temperature=spec.temperature, seed=spec.seed,
                             output_regex=action_regex)
    local = TinkerTokenCompleter(LocalSamplingClient(PeftSampler.of(learner), seed=spec.seed), max_tokens=spec.max_tokens,
                                 temperature=spec.temperature)
    return TimedCompleter(local, SampleClock())


class AdapterPublisher:
    """Pushes the learner's adapter to a gateway route after each step (vLLM's runtime LoRA loading),
    each version under its own name (`run-<run_id>-v<step>`), the previous one unloaded after."""

    def __init__(self, ctx: Any, route: str, keep_loaded: int = 1) -> None:
        self.route, self.prefix = route, f"run-{ctx.run_id}"
        self.folder = Path(ctx.run_dir) / "serving"
        self.current = ""           # the adapter name the route serves the run's weights under
        self.version = -1
        # versions kept loaded: 1 when synchronous, K+1 with --max-staleness K (a step in flight
        # samples from a version at most K behind the newest; none is unloaded under it)
        self.keep_loaded = max(1, keep_loaded)
        self.loaded: list[str] = []
        self.keep_folders = self.keep_loaded + 1   # plus the one before (vLLM has read it by then)
        self.gateway = None
        if route:
            services = ctx.services
            # the deadline of each Sample/LoadAdapter call: vLLM on a loaded CPU answered a first LoRA
            # chat in over 60 s (the client default); a GPU answers in seconds
            self.gateway = sample_gateway(services, ctx.spec, 300.0)

    def name(self, step: int) -> str:
        return f"{self.prefix}-v{step}"

    async def publish(self, learner: "LoraLearner", step: int) -> dict[str, float]:
        if self.gateway is None:
            self.version = step   # in-process sampling: the learner's weights are the version sampled
            return {}
        started = time.perf_counter()
        adapter = await asyncio.to_thread(learner.save_adapter, self.folder / f"step-{step:06d}")
        saved = time.perf_counter()
        name = self.name(step)
        await self.gateway.load_adapter(self.route, name, path=str(adapter.resolve()))
        loaded = time.perf_counter()
        self.current, self.version = name, step
        self.loaded = [n for n in self.loaded if n != name] + [name]
        while len(self.loaded) > self.keep_loaded:
            await self.gateway.unload_adapter(self.route, self.loaded.pop(0))
        unloaded = time.perf_counter()
        for old in sorted(self.folder.glob("step-*"))[:-self.keep_folders]:
            shutil.rmtree(old, ignore_errors=True)
        return {"adapter_publish_s": time.perf_counter() - started, "adapter_save_s": saved - started,
                "adapter_load_s": loaded - saved, "adapter_unload_s": unloaded - loaded}

    async def close(self) -> None:
        if self.gateway is None:
            return
        for name in self.loaded:
            try:
                await self.gateway.unload_adapter(self.route, name)
            except Exception:
                pass  # the gateway (or its vLLM) may be gone; the adapter dies with it
        await self.gateway.close()


async def _train_local_lora_steps(ctx: Any, learner: "LoraLearner", policy, dataset, strategy,
                                  publisher: AdapterPublisher, settings: AsyncSettings, options: LocalLoraOptions) -> None:
    """The step loop; with `settings.max_staleness` K > 0 (vLLM sampling only) the rollouts of the next
    K steps run through vLLM while this step learns (halo.trainers.async_rollouts), each step on its
    own GatewayPolicy sampling the adapter version that was newest when it started."""
    from tinker_cookbook.rl.metric_util import compute_trajectory_metrics

    spec = ctx.spec
    through_gateway = isinstance(policy, GatewayPolicy)

    async def roll(step: int, version: int, limit) -> tuple[tuple, Redone]:
        builders = dataset.get_batch(step - 1)
        step_policy = policy
        if through_gateway:
            if settings.max_staleness:   # steps in flight never share a policy's pending prompts or clock
                step_policy = dataclasses.replace(policy, seed=spec.seed * 7_919 + step, clock=SampleClock(),
                                                  failure=None, _pending={}, _calls=0)
            step_policy.clear()
            step_policy.use(publisher.name(version), version)   # the weights of step `version`
            builders = [GatewayGroupBuilder(b, step_policy) for b in builders]
        results = await rollout_batch(builders, step_policy, strategy)
        if through_gateway and step_policy.failure is not None:
            # the sampler failed, not the environment: no step is recorded, the last checkpoint stays
            raise step_policy.failure
        return (builders, results, step_policy), Redone()   # lost trajectories: the strategy's retries

    pipeline = RolloutPipeline(settings, ctx.start_step + 1, spec.total_steps, roll, lambda: publisher.version, slots=1)
    ctx.log(settings.describe())
    try:
        async for rolled in pipeline.steps(ctx.stop_requested):
            step, started = rolled.step, rolled.asked_at
            builders, results, step_policy = rolled.groups
            rolled_at = time.perf_counter()
            kept = [(b, g) for b, g in zip(builders, results) if g is not None]
            metrics = step_metrics([b.summaries() for b in builders])
            if through_gateway:
                versions = step_policy.resolve([g for _, g in kept])
                if versions:
                    metrics |= {"adapter_version_min": float(min(versions)), "adapter_version_max": float(max(versions))}
            admitted = admit(StepRollouts(step, rolled.version, kept), step - 1, settings,
                             version_of=lambda _: [rolled.version], kept_of=lambda bg: len(bg[1].trajectories_G))
            kept = admitted.groups
            update_started = time.time()
            if kept:
                groups = [g for _, g in kept]
                data, data_metrics = step_data(groups, options)
                metrics |= data_metrics
                if data and options.kl_penalty_coef > 0:
                    reference = await asyncio.to_thread(learner.reference_logprobs, data)
                    metrics |= incorporate_kl_penalty(data, reference, options.kl_penalty_coef, options.kl_discount_factor)
                if data and has_signal(data):
                    result = await asyncio.to_thread(learner.forward_backward, data, spec.loss_fn, loss_fn_config_for(spec))
                    optim = await asyncio.to_thread(learner.optim_step, spec.learning_rate)
                    metrics |= {"loss": result.loss, **result.metrics, **optim, "optim_skipped": 0.0}
                else:   # no advantage anywhere: nothing to learn, and Adam's momentum alone would move the weights
                    metrics["optim_skipped"] = 1.0
                metrics["datums"] = float(len(data))
                metrics |= compute_trajectory_metrics(groups, [b.logging_tags() for b, _ in kept])
            learned = time.perf_counter()
            sampled = step_policy.clock.reset()
            rollout_s = rolled.finished_at - rolled.started_at   # that step's own rollouts (they may overlap)
            metrics |= sampled | {
                "time/rollout_s": rollout_s, "time/env_s": max(0.0, rollout_s - sampled["time/sample_s"]),
                "time/learn_s": learned - rolled_at, "step_s": learned - started,
                "sample_tokens_per_s": sampled["sampled_tokens"] / sampled["time/sample_s"] if sampled["time/sample_s"] else 0.0,
            }
            metrics |= await publisher.publish(learner, step)
            if settings.max_staleness:
                pipeline.start(learner_version=step)   # the step K ahead starts on the new adapter
            metrics |= pipeline.metrics(rolled, admitted, update_started, time.time())
            metrics["step_s"] = time.perf_counter() - started
            await ctx.complete_step(step, {k: float(v) for k, v in metrics.items()}, learner.save)
    finally:
        await pipeline.close()
