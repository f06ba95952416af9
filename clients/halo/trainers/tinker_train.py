"""The Tinker backend: GRPO on Qwen3-VL-30B-A3B with tinker-cookbook's RL loop, hosted as a HALO run.

    halo train --backend tinker --tasks playground-signup     (TINKER_API_KEY must be set)

`train_tinker(ctx)` maps the RunSpec onto `tinker_cookbook.rl.train.Config` and runs the
cookbook's `main()`: Tinker samples (`SamplingClient`), the envs in `tinker_env.py` step HALO's
env service and score with its reward service, the cookbook centres rewards per group
(dr_grpo: A_i = r_i - mean(r)) and calls Tinker's `forward_backward` + `optim_step` on a LoRA.

RunSpec -> Config:
    model (a HF name, else Qwen/Qwen3-VL-30B-A3B-Instruct) -> model_name; renderer qwen3_vl_instruct
    learning_rate, lora_rank, temperature, max_tokens, loss_fn  -> same names
    total_steps -> max_steps (training iterations); max_steps -> the envs' episode cap
    group_size, groups_per_batch, seed, task_ids -> the dataset (HaloBrowserDatasetBuilder)
    checkpoint_every -> save_every (Tinker checkpoints on the host's checkpoint steps)
    extra: dro_beta, clip_low_threshold / clip_high_threshold (ppo, cispo), min_group (smallest
        group kept after env failures), env_retries, eval_every + eval_seeds, tinker_base_url,
        wandb_project, tokenizer / image_processor (local folders), history_steps, screenshots
        (False: text-only, `halo train --observation text`),
        max_axtree_chars, remove_constant_reward_groups, num_groups_to_log, kl_penalty_coef,
        tinker_sampling ("direct" | "gateway", `--tinker-sampling`), route (the gateway's tinker
        route, default qwen3vl-tinker), sample_timeout_s (each gateway Sample's deadline)

Sampling. `gateway` (the default, see the README's measurement; `direct` with --max-staleness):
every rollout sample goes through the policy gateway's `Sample` on a tinker route, with the current iteration's sampler weights loaded there by their tinker://
path (`tinker_gateway.py`); each step then also reports `sample/calls`, `sample/tokens` and
`sample/mean_s` (wall time per sample, as the trainer saw it). `direct`: the cookbook samples with
the SDK's SamplingClient itself.

Progress and checkpoints. The cookbook owns its loop, so steps are reported from the one hook it
offers between iterations: the dataset's `get_batch(i)`, called once iteration i-1 is complete
(its Tinker checkpoint saved and its metrics logged). There step i is reported with
`ctx.complete_step(i, metrics, save)`; `save` writes the Tinker checkpoint's `tinker://` paths
(state + sampler weights) and a copy of the cookbook's checkpoints.jsonl into the host's
checkpoint folder. The last step is reported after `main()` returns, when its final checkpoint
exists. A stop request is honoured there too (StopRequested between iterations). On resume the
cookbook's checkpoints.jsonl is cut back to the host's last completed step, so both resume from
the same point (the cookbook reloads weights and optimizer state from Tinker).

Known gaps: the Tinker checkpoints themselves live on Tinker's servers (the host keeps their
paths, not the weights; the cookbook's default TTL is 7 days for periodic ones, none for the
final one); metrics of a step are the cookbook's (prefixed as it logs them) plus HALO's standard
ones computed from the episodes; KL penalties against a reference model are off unless
extra.kl_penalty_coef is set.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import shutil
from pathlib import Path
from typing import Any

import chz

from halo.agent.prompt import DEFAULT_MAX_AXTREE_CHARS
from halo.errors import FailedPrecondition
from halo.runs.context import RunContext, ServiceTargets
from halo.runs.spec import RunSpec
from halo.trainers.advantages import step_metrics
from halo.trainers.async_rollouts import AsyncSettings
from halo.trainers.tinker_env import (
    DEFAULT_RENDERER,
    DEFAULT_TINKER_MODEL,
    BrowserTaskConfig,
    HaloBrowserDataset,
    HaloBrowserDatasetBuilder,
    StopRequested,
    env_failure_strategy,
)
from halo.trainers.tinker_env import load_renderer
from halo.trainers import tinker_gateway

TINKER_API_KEY_ENV = "TINKER_API_KEY"
TINKER_BASE_URL_ENV = "TINKER_BASE_URL"
RECIPE_NAME = "halo_browser_grpo"
DEFAULT_TINKER_ROUTE = "qwen3vl-tinker"     # configs/gateway.yaml's Tinker route
SAMPLING_MODES = ("direct", "gateway")
DEFAULT_SAMPLING = "gateway"                # chosen by measurement: README, "Tinker rollouts through the gateway"
CHECKPOINTS_FILE = "checkpoints.jsonl"
CHECKPOINT_INFO = "tinker.json"

# The dataset builder (a chz config) cannot hold a callback; a run registers its batch hook here.
_BATCH_HOOKS: dict[str, Any] = {}


def model_name_for(spec: RunSpec) -> str:
    """The RunSpec's model when it is a Hugging Face name (org/name), else Qwen3-VL-30B-A3B."""
    return spec.model if "/" in spec.model else DEFAULT_TINKER_MODEL


# ------------------------------------------------- shared by the Tinker trainers (GRPO, MCTS)

def require_api_key() -> None:
    """A Tinker run fails at once, and says why, without TINKER_API_KEY."""
    if not os.environ.get(TINKER_API_KEY_ENV):
        raise FailedPrecondition(f"the Tinker backend needs an API key: set {TINKER_API_KEY_ENV} (https://auth.thinkingmachines.ai/sign-up)")


def base_url_for(spec: RunSpec) -> str | None:
    """extra.tinker_base_url, else $TINKER_BASE_URL, else the SDK's default."""
    return str(spec.extra.get("tinker_base_url", "")) or os.environ.get(TINKER_BASE_URL_ENV) or None


def service_client(spec: RunSpec, recipe_name: str) -> Any:
    """The SDK's ServiceClient as the cookbook's own loops create it (lazy: no network until a call)."""
    import tinker
    from tinker_cookbook.utils.git_rev import recipe_user_metadata

    return tinker.ServiceClient(base_url=base_url_for(spec), user_metadata=recipe_user_metadata(recipe_name))


def renderer_for_spec(spec: RunSpec) -> Any:
    """The cookbook renderer a Tinker run trains with (qwen3_vl_instruct; extra.tokenizer /
    extra.image_processor may name local folders instead of the hub's copy)."""
    model = model_name_for(spec)
    tokenizer = str(spec.extra.get("tokenizer", "")) or model
    image_processor = str(spec.extra.get("image_processor", "")) or tokenizer
    return load_renderer(str(spec.extra.get("renderer", DEFAULT_RENDERER)), tokenizer, image_processor, model)


def sampling_mode_for(spec: RunSpec) -> str:
    """extra.tinker_sampling: `gateway` (the gateway's Sample; the default) or `direct` (the SDK's
    SamplingClient; the default with --max-staleness, which gateway sampling does not support)."""
    asynchronous = bool(AsyncSettings.from_extra(spec.extra).max_staleness)
    mode = str(spec.extra.get("tinker_sampling", "") or ("direct" if asynchronous else DEFAULT_SAMPLING))
    if mode not in SAMPLING_MODES:
        raise ValueError(f"--tinker-sampling must be one of {', '.join(SAMPLING_MODES)}, got {mode!r}")
    if mode == "gateway" and asynchronous:
        raise ValueError("--tinker-sampling gateway is synchronous only: the cookbook's async mode (--max-staleness) "
                         "creates its first sampler outside the checkpoint hook the gateway path wraps; use direct")
    return mode


def tinker_route_for(spec: RunSpec) -> str:
    """The gateway route that samples a Tinker run (extra.route, default qwen3vl-tinker)."""
    return str(spec.extra.get("route", "")) or DEFAULT_TINKER_ROUTE


def loss_fn_config_for(spec: RunSpec) -> dict[str, float] | None:
    extra = spec.extra
    if spec.loss_fn == "dro":
        return {"beta": float(extra.get("dro_beta", 0.05))}
    if spec.loss_fn in ("ppo", "cispo") and ("clip_low_threshold" in extra or "clip_high_threshold" in extra):
        return {"clip_low_threshold": float(extra.get("clip_low_threshold", 0.8)),
                "clip_high_threshold": float(extra.get("clip_high_threshold", 1.2))}
    return None  # Tinker's defaults (ppo/cispo clip at 0.8..1.2)


def async_config_for(spec: RunSpec) -> Any | None:
    """The cookbook's own async mode for `--max-staleness K` (None for K = 0, the synchronous loop).

    With `AsyncConfig(max_steps_off_policy=K)` the cookbook samples while it trains and never trains
    on a group sampled more than K steps behind the learner: it requeues that group (rolls it out
    again), which is HALO's `drop` rule. The groups it keeps are corrected by the importance ratio of
    the loss (importance_sampling, ppo, cispo); `correct` for a group beyond K has no counterpart
    there, so it is refused rather than silently run as something else."""
    from tinker_cookbook.rl.train import AsyncConfig

    settings = AsyncSettings.from_extra(spec.extra)
    if not settings.max_staleness:
        return None
    if settings.stale_rule != "drop":
        raise ValueError(f"--stale-rule {settings.stale_rule} is not available on Tinker: tinker-cookbook requeues a group "
                         f"more than --max-staleness steps behind (rolls it out again), HALO's `drop`; use --stale-rule drop")
    return AsyncConfig(max_steps_off_policy=settings.max_staleness, groups_per_batch=spec.groups_per_batch)


@chz.chz
class HookedDatasetBuilder(HaloBrowserDatasetBuilder):
    """HaloBrowserDatasetBuilder whose training dataset calls the run's batch hook."""

    hook_key: str = ""

    async def __call__(self):  # type: ignore[override]
        train, test = await super().__call__()
        hook = _BATCH_HOOKS.get(self.hook_key)
        if hook is not None:
            hook.attach(train)
        return train, test


def build_config(spec: RunSpec, services: ServiceTargets, log_path: Path, *, run_id: str = "", hook_key: str = ""):
    """The cookbook's RL Config for a RunSpec (no network: ServiceClient is created in main())."""
    from tinker_cookbook.rl.train import Config, KLReferenceConfig

    spec.validate()
    extra = spec.extra
    model = model_name_for(spec)
    tokenizer = str(extra.get("tokenizer", ""))
    task = BrowserTaskConfig(
        env_target=services.env, reward_target=services.reward, token=services.token, tls_ca=services.tls_ca,
        max_steps=spec.max_steps,
        history_steps=int(extra.get("history_steps", 5)), reward_overrides=dict(spec.reward_overrides), run_id=run_id,
        model_name=model, renderer_name=str(extra.get("renderer", DEFAULT_RENDERER)), tokenizer=tokenizer,
        image_processor=str(extra.get("image_processor", "")),
        max_axtree_chars=int(extra.get("max_axtree_chars", DEFAULT_MAX_AXTREE_CHARS)),
        screenshots=bool(extra.get("screenshots", True)),
    )
    eval_every = int(extra.get("eval_every", 0))
    dataset = HookedDatasetBuilder(
        task_refs=list(spec.task_ids), config=task, group_size=spec.group_size, groups_per_batch=spec.groups_per_batch,
        num_batches=spec.total_steps, seed=spec.seed,
        eval_seeds=[int(s) for s in extra.get("eval_seeds", [1001, 1002])] if eval_every else [],
        hook_key=hook_key,
    )
    kl = float(extra.get("kl_penalty_coef", 0.0))
    return Config(
        learning_rate=spec.learning_rate, dataset_builder=dataset, model_name=model, recipe_name=RECIPE_NAME,
        max_tokens=spec.max_tokens, log_path=str(log_path), eval_every=eval_every, save_every=spec.checkpoint_every,
        renderer_name=task.renderer_name, loss_fn=spec.loss_fn, loss_fn_config=loss_fn_config_for(spec),
        lora_rank=spec.lora_rank, temperature=spec.temperature,
        rollout_error_tolerance=env_failure_strategy(spec.group_size, extra),
        remove_constant_reward_groups=bool(extra.get("remove_constant_reward_groups", False)),
        base_url=base_url_for(spec),
        wandb_project=str(extra.get("wandb_project", "")) or None, wandb_name=(spec.name or run_id or None),
        num_groups_to_log=int(extra.get("num_groups_to_log", 2)), max_steps=spec.total_steps,
        kl_penalty_coef=kl, kl_reference_config=KLReferenceConfig(base_model=model) if kl > 0 else None,
        async_config=async_config_for(spec),
    )


# ------------------------------------------------------------------------ checkpoint files

def read_records(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _write_records(path: Path, records: list[dict[str, Any]]) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text("".join(json.dumps(r) + "\n" for r in records))
    os.replace(tmp, path)


def sync_cookbook_checkpoints(log_path: Path, start_step: int, last_checkpoint: Path | None) -> None:
    """Make the cookbook resume exactly where the host does: at `start_step` (0: from scratch)."""
    path = log_path / CHECKPOINTS_FILE
    if start_step == 0:
        if path.exists():
            path.unlink()   # a previous attempt died before its first checkpoint
        return
    records = [r for r in read_records(path) if int(r.get("batch", -1)) <= start_step]
    if not any(int(r.get("batch", -1)) == start_step and r.get("state_path") for r in records) and last_checkpoint is not None:
        saved = read_records(last_checkpoint / CHECKPOINTS_FILE)   # the copy kept with the host checkpoint
        records = [r for r in saved if int(r.get("batch", -1)) <= start_step]
    if not any(int(r.get("batch", -1)) == start_step and r.get("state_path") for r in records):
        raise FailedPrecondition(f"cannot resume at step {start_step}: no Tinker checkpoint recorded for it in {path}")
    log_path.mkdir(parents=True, exist_ok=True)
    _write_records(path, records)


def save_tinker_checkpoint(log_path: Path, step: int, model_name: str, folder: Path) -> None:
    """The host checkpoint of a Tinker run: where its weights are on Tinker, and the cookbook's records."""
    records = read_records(log_path / CHECKPOINTS_FILE)
    at_step = [r for r in records if int(r.get("batch", -1)) == step and r.get("state_path")]
    info = {
        "backend": "tinker", "step": step, "model_name": model_name, "log_path": str(log_path),
        "checkpoint": at_step[-1] if at_step else None,
        "state_path": at_step[-1].get("state_path", "") if at_step else "",
        "sampler_path": at_step[-1].get("sampler_path", "") if at_step else "",
    }
    (folder / CHECKPOINT_INFO).write_text(json.dumps(info, indent=2))
    if (log_path / CHECKPOINTS_FILE).exists():
        shutil.copyfile(log_path / CHECKPOINTS_FILE, folder / CHECKPOINTS_FILE)


def cookbook_metrics(log_path: Path, iteration: int) -> dict[str, float]:
    """The numeric metrics the cookbook logged for an iteration (its last line for that step)."""
    found: dict[str, Any] = {}
    for record in read_records(log_path / "metrics.jsonl"):
        if record.get("step") == iteration:
            found = record
    return {k: float(v) for k, v in found.items()
            if k != "step" and isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)}


# ------------------------------------------------------------------------- step reporting

class StepReporter:
    """Turns the cookbook's iterations into the host's completed steps, in order."""

    def __init__(self, ctx: RunContext, log_path: Path, model_name: str, sample_metrics: Any = None) -> None:
        self.ctx, self.log_path, self.model_name = ctx, log_path, model_name
        self.sample_metrics = sample_metrics        # () -> the iteration's sampling metrics (gateway mode)
        self.sampled: dict[int, dict[str, float]] = {}
        self.reported = ctx.start_step
        self.dataset: HaloBrowserDataset | None = None
        self.queue: asyncio.Queue[int | None] = asyncio.Queue()   # None: no more steps

    def attach(self, dataset: HaloBrowserDataset) -> None:
        self.dataset = dataset
        dataset.before_batch = self.before_batch

    def before_batch(self, index: int) -> None:
        """Called by get_batch(index): iteration index-1 (step `index`) is complete."""
        self.take_sample_metrics(index)
        if index > self.reported:
            self.queue.put_nowait(index)
        if self.ctx.stop_requested():
            raise StopRequested(f"stop requested before step {index + 1}")

    def take_sample_metrics(self, step: int) -> None:
        """The samples counted since the last call belong to step `step` (iteration step-1)."""
        if self.sample_metrics is not None and step > 0:
            self.sampled[step] = self.sample_metrics()

    def episode_metrics(self, step: int) -> dict[str, float]:
        builders = self.dataset.issued.get(step - 1, []) if self.dataset is not None else []
        return step_metrics([b.summaries() for b in builders])

    async def report(self, step: int) -> None:
        if step <= self.reported:
            return
        metrics = self.episode_metrics(step) | cookbook_metrics(self.log_path, step - 1) | self.sampled.pop(step, {})
        await self.ctx.complete_step(
            step, metrics, lambda folder: save_tinker_checkpoint(self.log_path, step, self.model_name, folder),
        )
        self.reported = step

    async def consume(self) -> None:
        """Report queued steps in order until the None that ends the run (never cut mid-report)."""
        while (step := await self.queue.get()) is not None:
            await self.report(step)


def _gateway_sampling(ctx: RunContext) -> "tinker_gateway.GatewaySampling":
    """The run's gateway client and sampling state (gateway mode)."""
    services, spec = ctx.services, ctx.spec
    if not services.gateway:
        raise FailedPrecondition("--tinker-sampling gateway: the run has no policy gateway target")
    from halo.client.policy import PolicyClient

    # each Sample's deadline: the route's own retries fit inside it (its timeout_s is 180 s by default)
    client = PolicyClient(services.gateway, token=services.token, tls_ca=services.tls_ca,
                          timeout_s=float(spec.extra.get("sample_timeout_s", 600.0)))
    return tinker_gateway.GatewaySampling(client, tinker_route_for(spec), ctx.run_id)


async def train_tinker(ctx: RunContext) -> None:
    """Run (or resume) a Tinker GRPO run with tinker-cookbook's RL loop."""
    from tinker_cookbook import tokenizer_utils
    from tinker_cookbook.rl import train as rl_train

    spec = ctx.spec
    require_api_key()
    mode = sampling_mode_for(spec)
    if ctx.start_step >= spec.total_steps:
        return
    log_path = ctx.run_dir / "tinker"
    log_path.mkdir(parents=True, exist_ok=True)
    sync_cookbook_checkpoints(log_path, ctx.start_step, ctx.last_checkpoint)
    model = model_name_for(spec)
    sampling = _gateway_sampling(ctx) if mode == "gateway" else None
    reporter = StepReporter(ctx, log_path, model, sampling.times.take if sampling is not None else None)
    hook_key = f"{ctx.run_id}:{id(reporter)}"
    config = build_config(spec, ctx.services, log_path, run_id=ctx.run_id, hook_key=hook_key)
    registered = False
    local_tokenizer = str(spec.extra.get("tokenizer", ""))
    # (not when the model itself is that folder, as on a local Tinker-API server: the entry would call itself)
    if local_tokenizer and local_tokenizer != model and not tokenizer_utils.is_tokenizer_registered(model):
        # main() loads the tokenizer by model name (from the hub): point it at the local copy
        tokenizer_utils.register_tokenizer(model, lambda: tokenizer_utils.get_tokenizer(local_tokenizer))
        registered = True
    _BATCH_HOOKS[hook_key] = reporter
    consumer = asyncio.get_running_loop().create_task(reporter.consume())
    ctx.log(f"tinker: {model}, {spec.loss_fn}, LoRA rank {spec.lora_rank}, lr {spec.learning_rate:g}, log {log_path}"
            + (f", sampling through gateway route {sampling.route!r}" if sampling is not None else ", sampling direct (SDK)"))
    active = tinker_gateway.activate(sampling) if sampling is not None else None
    # the task copies the context here: the cookbook's loop (and the tasks it starts) see this run's sampling
    main = asyncio.get_running_loop().create_task(rl_train.main(config))
    if active is not None:
        tinker_gateway.deactivate(active)
    try:
        done, _ = await asyncio.wait({main, consumer}, return_when=asyncio.FIRST_COMPLETED)
        if consumer in done and not main.done():  # reporting failed: stop training, surface the error
            main.cancel()
            await asyncio.gather(main, return_exceptions=True)
            consumer.result()
        try:
            main.result()
        except StopRequested:
            pass
        else:
            reporter.take_sample_metrics(spec.total_steps)
            reporter.queue.put_nowait(spec.total_steps)   # the last step: its final checkpoint exists now
    finally:
        if not main.done():   # cancelled from outside (service shutdown)
            main.cancel()
            await asyncio.gather(main, return_exceptions=True)
        # completed steps are reported even when the run failed after them
        reporter.queue.put_nowait(None)
        await asyncio.shield(consumer)
        _BATCH_HOOKS.pop(hook_key, None)
        if sampling is not None:
            await sampling.close()
            await sampling.gateway.close()
        if registered:
            tokenizer_utils._CUSTOM_TOKENIZER_REGISTRY.pop(model, None)
