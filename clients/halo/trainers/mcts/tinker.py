"""MCTS on Tinker (run kind "mcts", backend "tinker"): Agent Q's search + step-level DPO on a hosted LoRA.

    halo train --kind mcts --backend tinker --tasks playground-signup     (TINKER_API_KEY must be set)

Each training step, like the embedded MCTS trainer (`mcts.train_embedded`):

1. search: one `mcts.TreeSearch` per task of the batch, a pure client of the env, reward and
   gateway services. Candidates are sampled through the gateway's Tinker route (`extra.route`,
   default `qwen3vl-tinker`) under the run's adapter: the run's *current* sampler weights, loaded
   with `LoadAdapter(path="tinker://.../sampler_weights/...")` (the route's TinkerBackend makes a
   SamplingClient for that path). The critic is the gateway's Critique route (`extra.critic`,
   default the same Tinker route: self-critique by the base model, Agent Q style);
2. preferences: sibling actions -> step-level pairs (`preferences.preference_pairs`) ->
   tinker-cookbook `LabeledComparison`s (`preferences.labeled_comparisons`: the policy's own
   prompt for the state, built with the route's prompt options, screenshot included; each action
   as one assistant message in Qwen3-VL's computer_use syntax);
3. DPO: the datums are the cookbook's (`preference/dpo_datasets.py`: `build_supervised_example`
   of prompt + completion, `datum_from_model_input_weights(..., reduction="none")`, chosen and
   rejected interleaved), the loss the cookbook's `compute_dpo_loss` over weighted token sums of
   the policy's and the reference's logprobs, sent through `TrainingClient.forward_backward_custom`
   and followed by `optim_step(AdamParams(learning_rate=spec.learning_rate))` — exactly the step
   of `preference/train_dpo.py::do_update`. That function itself is synchronous (asyncio.run inside)
   and prints examples with `ModelInput.to_ints()`, which raises on image chunks, so the step is put
   together here from the same parts. The reference is the run's initial weights: a sampler
   checkpoint saved before the first update, whose `compute_logprobs` gives the reference terms; it
   stays the same across stop/resume (its path is in every checkpoint);
4. checkpoint: state + sampler weights saved on Tinker (`checkpoint_utils.save_checkpoint_async`,
   the cookbook's checkpoints.jsonl in `runs/<id>/tinker/`), the new sampler path loaded into the
   gateway for the next step, and the step reported through the host (`ctx.complete_step`):
   `tinker.json` (state and sampler paths, like the GRPO Tinker trainer's), `adapter.json` naming
   the `qwen3vl_mcts` mode/adapter (route, paths, reference, DPO beta) and `search.json`.

Stop is honoured between steps; resume reloads weights + optimizer from the last host checkpoint's
Tinker state (`create_training_client_from_state_with_optimizer`), the same reference, and the
last sampler weights into the gateway. Steps are seeded as in the embedded trainer, so a resumed
step searches the same batch of (task, seed).

extra: route, critic, dpo_beta (0.1), pair_margin (0.05), update_epochs (1: forward_backward +
optim_step passes per step on the same pairs), max_length (datum truncation, none), screenshots
(true), history_steps, max_axtree_chars, concurrency, eval_every + eval_seeds (greedy held-out
evaluation through the route), sample_timeout_s (the deadline of each gateway call, 600 s:
`halo train --sample-timeout-s`; a first sample of a new length on a JAX server on CPU compiles for
a minute or more), load_checkpoint_path (start from a tinker:// state, e.g. a GRPO
run's, instead of a fresh LoRA), checkpoint_ttl_s, tokenizer / image_processor (local folders),
tinker_base_url, and the search settings of `mcts.config_from_spec` (simulations, children, ...).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Any

import tinker   # already loaded with halo.trainers.tinker_train (tinker_env's cookbook types)

from halo.agent.formats import ActionFormat
from halo.agent.prompt import DEFAULT_MAX_AXTREE_CHARS, PromptOptions
from halo.client.env import EnvClient
from halo.client.reward import RewardClient
from halo.errors import FailedPrecondition
from halo.rollout.episode import RolloutConfig
from halo.rollout.tasks import expand_tasks
from halo.runs.context import RunContext
from halo.runs.spec import RunSpec
from halo.trainers.learner import GatewayRun, run_steps, sample_gateway
from halo.trainers.mcts.learner import MCTSLearner, search_summary
from halo.trainers.mcts.preferences import labeled_comparisons
from halo.trainers.mcts.search import MODE, config_from_spec, search_metrics
from halo.trainers.mcts.tree import MCTSConfig, SearchResult
from halo.trainers.tinker_gateway import save_sampler_weights
from halo.trainers.tinker_train import (
    CHECKPOINT_INFO,
    DEFAULT_TINKER_ROUTE,
    TINKER_SAMPLE_TIMEOUT_S,
    model_name_for,
    renderer_for_spec,
    require_api_key,
    save_tinker_checkpoint,
    service_client,
    sync_cookbook_checkpoints,
)

RECIPE_NAME = "halo_browser_mcts"
ADAPTER_INFO = "adapter.json"


def route_for(spec: RunSpec) -> str:
    """The gateway route that samples the policy: extra.route, else spec.model when it names a
    route (not the embedded default, not a Hugging Face model name), else qwen3vl-tinker."""
    if spec.extra.get("route"):
        return str(spec.extra["route"])
    if spec.model and spec.model != "embedded" and "/" not in spec.model:
        return spec.model
    return DEFAULT_TINKER_ROUTE


def search_config_for(spec: RunSpec, run_id: str = ""):
    """The search settings of `mcts.config_from_spec`, with a VLM's view (screenshots on) and the
    Tinker route as its own critic unless extra.critic names another route."""
    route = route_for(spec)
    config = config_from_spec(spec, run_id)
    return dataclasses.replace(config, critic_model=str(spec.extra.get("critic", route)),
                               screenshots=bool(spec.extra.get("screenshots", True)))


def prompt_options_for(spec: RunSpec):
    """The prompt the route builds when it samples (route defaults: 5 past actions, the AXTree
    budget, the screenshot): the DPO datums must condition on the prompt the actions came from."""
    extra = spec.extra
    return PromptOptions(action_format=ActionFormat.QWEN_COMPUTER_USE, history_steps=int(extra.get("history_steps", 5)),
                         max_axtree_chars=int(extra.get("max_axtree_chars", DEFAULT_MAX_AXTREE_CHARS)),
                         include_screenshot=bool(extra.get("screenshots", True)))


# ----------------------------------------------------------------------------------- DPO

def dpo_datums(renderer: Any, comparisons: list[Any], max_length: int | None = None) -> list[Any]:
    """Chosen and rejected datums, interleaved, as tinker-cookbook's DPODatasetBuilderFromComparisons
    builds them: prompt + completion through the renderer, weights on the completion only, token-sum."""
    from tinker_cookbook.supervised.common import datum_from_model_input_weights

    out = []
    for labeled in comparisons:
        c = labeled.comparison
        chosen, rejected = (c.completion_A, c.completion_B) if labeled.label == "A" else (c.completion_B, c.completion_A)
        for completion in (chosen, rejected):
            tokens, weights = renderer.build_supervised_example([*c.prompt_conversation, *completion])
            out.append(datum_from_model_input_weights(tokens, weights, max_length, reduction="none"))
    return out


async def reference_logprobs(reference_client: Any, datums: list[Any]) -> list[Any]:
    """Per-target logprobs of each datum under the reference sampler (train_dpo's recipe: the full
    sequence is the input plus its last target; the first position has none). Positions without a
    logprob (image tokens) carry weight 0 and count as 0."""
    import torch

    sequences = []
    for datum in datums:
        targets = datum.loss_fn_inputs["target_tokens"].data
        sequences.append(datum.model_input.append_int(int(targets[-1])) if targets else datum.model_input)
    results = await asyncio.gather(*(reference_client.compute_logprobs_async(s) for s in sequences))
    return [torch.tensor([0.0 if x is None else float(x) for x in lp[1:]]) for lp in results]


def dpo_loss_fn(reference: list[Any], beta: float):
    """The custom loss of train_dpo.do_update: weighted token sums of policy and reference
    logprobs, pairs at (2i, 2i+1), the cookbook's compute_dpo_loss."""
    import torch
    from tinker_cookbook.preference.train_dpo import compute_dpo_loss

    def loss(data: list[Any], logprobs_list: list[Any]):
        sums: list[list[Any]] = [[], [], [], []]   # chosen, rejected, ref chosen, ref rejected
        for i, (datum, logprobs) in enumerate(zip(data, logprobs_list, strict=True)):
            weights = torch.tensor(datum.loss_fn_inputs["weights"].data).float()
            sums[i % 2].append(torch.dot(logprobs.float(), weights))
            sums[2 + i % 2].append(torch.dot(reference[i].float(), weights))
        return compute_dpo_loss(sums[0], sums[1], sums[2], sums[3], beta)

    return loss


async def dpo_step(training_client: Any, datums: list[Any], reference: list[Any], beta: float, adam: Any) -> dict[str, float]:
    """One forward_backward_custom with the DPO loss + one optim_step (submitted before waiting)."""
    backward = training_client.forward_backward_custom(datums, dpo_loss_fn(reference, beta))
    optim = await training_client.optim_step_async(adam)
    result = await backward.result_async()
    await optim.result_async()
    metrics = {k: float(v) for k, v in result.metrics.items() if isinstance(v, (int, float))}
    return {
        "dpo_loss": metrics.get("dpo_loss", float("nan")), "dpo_accuracy": metrics.get("accuracy", float("nan")),
        "dpo_margin": metrics.get("margin", float("nan")), "chosen_reward": metrics.get("chosen_reward", float("nan")),
        "rejected_reward": metrics.get("rejected_reward", float("nan")),
    }


# ------------------------------------------------------------------------------ the trainer

def _read_checkpoint(folder: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    info = json.loads((folder / CHECKPOINT_INFO).read_text())
    adapter = json.loads((folder / ADAPTER_INFO).read_text())
    if not info.get("state_path") or not adapter.get("reference_sampler_path"):
        raise FailedPrecondition(f"cannot resume from {folder}: no Tinker state or reference recorded")
    return info, adapter


class TinkerMCTSLearner(MCTSLearner):
    """DPO on the hosted LoRA: the cookbook's datums and loss, one forward_backward_custom +
    optim_step per pass, a Tinker checkpoint per step whose sampler weights the gateway loads."""

    def __init__(self, spec: RunSpec, run: GatewayRun, config: MCTSConfig, *, training: Any, reference: Any,
                 reference_path: str, renderer: Any, renderer_name: str, model: str, log_path: Path) -> None:
        extra = spec.extra
        super().__init__(spec, run, config, float(extra.get("pair_margin", 0.05)))
        self.training, self.reference, self.reference_path = training, reference, reference_path
        self.renderer, self.renderer_name, self.model, self.log_path = renderer, renderer_name, model, log_path
        self.options = prompt_options_for(spec)
        self.beta = float(extra.get("dpo_beta", 0.1))
        self.update_epochs = max(1, int(extra.get("update_epochs", 1)))
        self.max_length = int(extra["max_length"]) if extra.get("max_length") else None
        self.ttl = int(extra["checkpoint_ttl_s"]) if extra.get("checkpoint_ttl_s") else None
        self.adam = tinker.AdamParams(learning_rate=spec.learning_rate, beta1=float(extra.get("adam_beta1", 0.9)),
                                      beta2=float(extra.get("adam_beta2", 0.95)), eps=float(extra.get("adam_eps", 1e-8)))
        self._paths: dict[str, str] = {}    # the last step's Tinker checkpoint (state + sampler)

    async def learn(self, step: int, batch: list[SearchResult]) -> dict[str, float]:
        from tinker_cookbook import checkpoint_utils   # lazy: tinker-cookbook (torch) only for a Tinker run

        spec = self.spec
        pairs = self.pairs(batch)
        comparisons = labeled_comparisons(pairs, prompt_options=self.options)
        datums = await asyncio.to_thread(dpo_datums, self.renderer, comparisons, self.max_length)
        update: dict[str, float] = {"pairs": float(len(pairs)), "dpo_datums": float(len(datums)),
                                    "dpo_tokens": float(sum(d.model_input.length for d in datums)),
                                    "learning_rate": spec.learning_rate}
        if datums:
            ref = await reference_logprobs(self.reference, datums)
            for _ in range(self.update_epochs):
                update |= await dpo_step(self.training, datums, ref, self.beta, self.adam)
            update["dpo_updates"] = float(self.update_epochs)
        self._paths = await checkpoint_utils.save_checkpoint_async(
            self.training, f"{step:06d}", str(self.log_path), {"batch": step}, kind="both", ttl_seconds=self.ttl)
        await self.publish(path=self._paths["sampler_path"])   # the next step samples the new weights
        return search_metrics(batch) | update

    def checkpoint(self, step: int, batch: list[SearchResult]):
        summary = search_summary(batch)
        described = {"mode": MODE, "backend": "tinker", "route": self.run.route, "adapter": self.run.adapter,
                     "base_model": self.model, "renderer": self.renderer_name, "lora_rank": self.spec.lora_rank,
                     "sampler_path": self._paths["sampler_path"], "state_path": self._paths.get("state_path", ""),
                     "reference_sampler_path": self.reference_path, "loss": "dpo", "dpo_beta": self.beta}

        def save(folder: Path) -> None:
            save_tinker_checkpoint(self.log_path, step, self.model, folder)
            (folder / ADAPTER_INFO).write_text(json.dumps(described, indent=2))
            (folder / "search.json").write_text(json.dumps(summary, indent=2))

        return save


async def train_mcts_tinker(ctx: RunContext) -> None:
    """kind=mcts, backend=tinker: search with the current Tinker weights -> pairs -> DPO on Tinker."""
    from tinker_cookbook import checkpoint_utils

    spec = ctx.spec
    require_api_key()
    if ctx.start_step >= spec.total_steps:
        return
    services = ctx.services
    if not services.gateway:
        raise FailedPrecondition("MCTS samples through the policy gateway: the run has no gateway target")
    extra = spec.extra
    model = model_name_for(spec)
    route = route_for(spec)
    config = search_config_for(spec, ctx.run_id)
    options = prompt_options_for(spec)
    ttl = int(extra["checkpoint_ttl_s"]) if extra.get("checkpoint_ttl_s") else None
    log_path = ctx.run_dir / "tinker"
    log_path.mkdir(parents=True, exist_ok=True)
    sync_cookbook_checkpoints(log_path, ctx.start_step, ctx.last_checkpoint)
    renderer = await asyncio.to_thread(renderer_for_spec, spec)
    renderer_name = str(extra.get("renderer", "qwen3_vl_instruct"))

    service = service_client(spec, RECIPE_NAME)
    metadata: dict[str, str] = {}
    checkpoint_utils.add_renderer_name_to_user_metadata(metadata, renderer_name)
    if ctx.last_checkpoint is not None:
        info, saved = _read_checkpoint(ctx.last_checkpoint)
        training = await service.create_training_client_from_state_with_optimizer_async(info["state_path"], user_metadata=metadata)
        reference_path, sampler_path = saved["reference_sampler_path"], info["sampler_path"]
        ctx.log(f"tinker: resumed weights + optimizer from {info['state_path']}")
    else:
        start_from = str(extra.get("load_checkpoint_path", ""))
        if start_from:
            training = await service.create_training_client_from_state_async(start_from, user_metadata=metadata)
        else:
            training = await service.create_lora_training_client_async(base_model=model, rank=spec.lora_rank, user_metadata=metadata)
        reference_path = sampler_path = await save_sampler_weights(training, "reference", ttl)   # the run's initial weights
    reference = await service.create_sampling_client_async(model_path=reference_path)

    async with EnvClient(services.env, token=services.token, tls_ca=services.tls_ca) as env, \
            RewardClient(services.reward, token=services.token, tls_ca=services.tls_ca) as reward, \
            sample_gateway(services, spec, TINKER_SAMPLE_TIMEOUT_S) as gateway:
        rollout_config = RolloutConfig(max_steps=config.max_depth, screenshots=config.screenshots,
                                       reward_overrides=spec.reward_overrides, run_id=ctx.run_id,
                                       history_steps=options.history_steps)
        run = GatewayRun(env, reward, gateway, route, f"run-{ctx.run_id}", await expand_tasks(env, spec.task_ids),
                         spec.eval_seeds(), rollout_config,
                         max(1, int(extra.get("concurrency", spec.groups_per_batch))))
        mcts = TinkerMCTSLearner(spec, run, config, training=training, reference=reference, reference_path=reference_path,
                                 renderer=renderer, renderer_name=renderer_name, model=model, log_path=log_path)
        await mcts.publish(path=sampler_path)
        ctx.log(f"MCTS on Tinker: {model} via route {route!r}, LoRA rank {spec.lora_rank}, lr {spec.learning_rate:g}; "
                f"{config.simulations} simulations, K={config.children}, c={config.ucb_c}, alpha={config.alpha}, "
                f"depth {config.max_depth}; critic route {config.critic_model!r}; DPO beta={mcts.beta}")
        await run_steps(ctx, mcts, int(extra.get("eval_every", 0)))
