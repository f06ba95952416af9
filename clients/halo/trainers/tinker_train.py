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
        route, default qwen3vl-tinker), sample_timeout_s (each gateway Sample's deadline, 600 s;
        `--sample-timeout-s`)

Sampling. `gateway` (the default, see docs/benchmarks.md; `direct` with --max-staleness):
every rollout sample goes through the policy gateway's `Sample` on a tinker route, with the current iteration's sampler weights loaded there by their tinker://
path (`tinker_gateway.py`); each step then also reports `sample/calls`, `sample/tokens` and
`sample/mean_s` (wall time per sample, as the trainer saw it). `direct`: the cookbook samples with
the SDK's SamplingClient itself.

Progress and checkpoints. The cookbook owns its loop; a step is reported once it is trained: the
cookbook logs each trained iteration's metrics row after saving its checkpoint, and the run's
`StepReporter` is one of its loggers (`tap_cookbook_loggers`). There step i is queued and reported
with `ctx.complete_step(i, metrics, save)`; `save` writes the Tinker checkpoint's `tinker://` paths
(state + sampler weights) and a copy of the cookbook's checkpoints.jsonl into the host's
checkpoint folder. The last step is reported after `main()` returns, when its final checkpoint
exists. A stop request takes effect after the next trained step: the cookbook's task is cancelled
there (rollouts under way are abandoned, their sessions closed). On resume the cookbook's
checkpoints.jsonl is cut back to the host's last completed step, so both resume from the same point
(the cookbook reloads weights and optimizer state from Tinker).

`--max-staleness K` maps onto the cookbook's async mode, `AsyncConfig(max_steps_off_policy=K)`
(`async_config_for`): rollouts go on while it trains, each training step takes the first
`groups_per_batch` groups sampled at most K updates ago, from whichever batch, and rolls older ones
out again. Reported steps follow the trained ones; `async/version`, `async/mean_staleness`,
`async/oldest_staleness` come from the cookbook's `sampling_client/step_*` of the trained groups.

Known gaps: the Tinker checkpoints themselves live on Tinker's servers (the host keeps their
paths, not the weights; the cookbook's default TTL is 7 days for periodic ones, none for the
final one); metrics of a step are the cookbook's (prefixed as it logs them) plus HALO's standard
ones computed from the episodes; KL penalties against a reference model are off unless
extra.kl_penalty_coef is set.
"""

from __future__ import annotations

import asyncio
import functools
import json
import math
import os
import shutil
from pathlib import Path
from typing import Any

import chz

from halo.agent.prompt import DEFAULT_MAX_AXTREE_CHARS
from halo.errors import FailedPrecondition, HaloError
from halo.runs.context import RunContext, ServiceTargets
from halo.runs.layout import TINKER_CHECKPOINT_INFO
from halo.runs.spec import RunSpec
from halo.trainers.advantages import EpisodeSummary, step_metrics
from halo.trainers.async_rollouts import AsyncSettings
from halo.trainers.tinker_env import (
    DEFAULT_RENDERER,
    DEFAULT_TINKER_MODEL,
    BrowserTaskConfig,
    HaloBrowserDataset,
    HaloBrowserDatasetBuilder,
    env_failure_strategy,
)
from halo.trainers.tinker_env import load_renderer
from halo.trainers import tinker_gateway
from halo.trainers.learner import sample_gateway

TINKER_API_KEY_ENV = "TINKER_API_KEY"
TINKER_BASE_URL_ENV = "TINKER_BASE_URL"
RECIPE_NAME = "halo_browser_grpo"
DEFAULT_TINKER_ROUTE = "qwen3vl-tinker"     # configs/gateway.yaml's Tinker route
SAMPLING_MODES = ("direct", "gateway")
DEFAULT_SAMPLING = "gateway"                # chosen by measurement: docs/benchmarks.md, "Tinker sampling through the gateway"
TINKER_SAMPLE_TIMEOUT_S = 600.0             # each gateway Sample's deadline unless extra.sample_timeout_s / --sample-timeout-s
CHECKPOINTS_FILE = "checkpoints.jsonl"
CHECKPOINT_INFO = TINKER_CHECKPOINT_INFO

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
    there, so it is refused rather than silently run as something else. Steps are reported as the
    cookbook trains them (StepReporter), not when it asks for their batches, which async mode does ahead."""
    from tinker_cookbook.rl.train import AsyncConfig

    settings = AsyncSettings.from_extra(spec.extra)
    if not settings.max_staleness:
        return None
    if settings.stale_rule != "drop":
        raise ValueError(f"--stale-rule {settings.stale_rule} is not available on Tinker: tinker-cookbook requeues a group "
                         f"more than --max-staleness steps behind (rolls it out again), HALO's `drop`; use --stale-rule drop")
    return AsyncConfig(max_steps_off_policy=settings.max_staleness, groups_per_batch=spec.groups_per_batch)


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
        eval_seeds=spec.eval_seeds() if eval_every else [],
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


def write_records(path: Path, records: list[dict[str, Any]]) -> None:
    """The cookbook's checkpoints.jsonl, replaced whole (written beside it, then renamed)."""
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
    write_records(path, records)


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


# ------------------------------------------------------------------------- step reporting

TRAINING_ROW_KEY = "optim/lr"   # in every row the cookbook logs after a trained step (sync and async), never in an eval row


def numeric_metrics(metrics: dict[str, Any]) -> dict[str, float]:
    return {k: float(v) for k, v in metrics.items()
            if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)}


def cookbook_async_metrics(metrics: dict[str, float], trained_step: int, max_staleness: int) -> dict[str, float]:
    """HALO's async/ metrics from the cookbook's row of a trained step. Versions count completed
    updates, as the cookbook's `sampling_client_step` does: the learner is at trained_step-1 when it
    trains step `trained_step`, and a group's staleness is that minus the version it was sampled
    from (`sampling_client/step_*`, over the groups the step trained on)."""
    learner = trained_step - 1
    out = {"async/max_staleness": float(max_staleness), "async/learner_version": float(learner)}
    if "sampling_client/step_min" in metrics:
        out["async/version"] = metrics["sampling_client/step_min"]   # the oldest policy the step trained on
        out["async/mean_staleness"] = learner - metrics["sampling_client/step_mean"]
        out["async/oldest_staleness"] = learner - metrics["sampling_client/step_min"]
    return out


class StepReporter:
    """Turns the cookbook's trained iterations into the host's completed steps, in order.

    The cookbook has no callback after a trained step except its metric loggers: `rl.train.main`
    logs each trained iteration's row (`ml_logger.log_metrics(metrics, step=i)`) after its
    checkpoint is saved, in the sync and in the async loop alike. `StepLogger` is added to those
    loggers (`tap_cookbook_loggers`), so a step is reported once it is trained, never when the
    cookbook asks for its batch (its async mode does that ahead of training).

    Step i+1's HALO episode metrics are the episodes whose group rollout ended since step i (the
    dataset's `on_group_done`): in the synchronous loop exactly the step's batch; in async mode the
    groups that finished while the step was rolling out (the cookbook trains on the first
    `groups_per_batch` groups not too stale, from whichever batch, and rolls stale ones out again),
    each episode counted once. The cookbook's own `env/all/...` metrics are those of the trained groups.
    """

    def __init__(self, ctx: RunContext, log_path: Path, model_name: str, max_staleness: int = 0,
                 sample_metrics: Any = None) -> None:
        self.ctx, self.log_path, self.model_name, self.max_staleness = ctx, log_path, model_name, max_staleness
        self.sample_metrics = sample_metrics   # () -> the sampling metrics since the last call (gateway mode)
        self.reported = ctx.start_step
        self.last_step = ctx.spec.total_steps
        self.queue: asyncio.Queue[tuple[int, dict[str, float]] | None] = asyncio.Queue()   # None: no more steps
        self.final: tuple[int, dict[str, float]] | None = None   # the last step: reported once its final checkpoint exists
        self.trained: list[int] = []        # steps the cookbook logged as trained, in order
        self.tapped = False                 # the cookbook's loggers reach on_row (checked when main() builds the dataset)
        self.training: asyncio.Task | None = None   # the task running the cookbook's main(): cancelled on a stop
        self.stopping = False
        self._ended_groups: list[list[EpisodeSummary]] = []
        self._eval_metrics: dict[str, float] = {}

    def attach(self, dataset: HaloBrowserDataset) -> None:
        dataset.on_group_done = self._ended_groups.append

    def step_logger(self) -> Any:
        from tinker_cookbook.utils import ml_log

        reporter = self

        class StepLogger(ml_log.Logger):
            def log_hparams(self, config: Any) -> None:
                pass

            def log_metrics(self, metrics: dict[str, Any], step: int | None = None) -> None:
                reporter.on_row(metrics, step)

        self.tapped = True
        return StepLogger()

    def on_row(self, metrics: dict[str, Any], step: int | None) -> None:
        """A row the cookbook logged (called inside its loop, after the row's checkpoint was saved)."""
        row = numeric_metrics(metrics)
        if step is None or TRAINING_ROW_KEY not in metrics:
            self._eval_metrics |= row   # the async loop logs evaluations as rows of their own: go with the next step
            return
        trained = step + 1
        self.trained.append(trained)
        row = self._eval_metrics | row | step_metrics(self._ended_groups)
        self._eval_metrics = {}
        self._ended_groups.clear()   # in place: the dataset holds its append
        if self.max_staleness:
            row |= cookbook_async_metrics(row, trained, self.max_staleness)
        if self.sample_metrics is not None:   # the samples since the last trained step are this step's
            row |= self.sample_metrics()
        if trained >= self.last_step:
            self.final = (trained, row)
            return
        self.queue.put_nowait((trained, row))
        if self.ctx.stop_requested() and self.training is not None and not self.training.done():
            # between iterations: the step just trained is reported (its checkpoint exists); the next
            # one's rollouts are abandoned (sessions closed by the groups' cleanup) and run again on resume
            self.stopping = True
            self.training.cancel()

    async def report(self, step: int, metrics: dict[str, float]) -> None:
        if step <= self.reported:
            return
        await self.ctx.complete_step(
            step, metrics, lambda folder: save_tinker_checkpoint(self.log_path, step, self.model_name, folder),
        )
        self.reported = step

    async def consume(self) -> None:
        """Report queued steps in order until the None that ends the run (never cut mid-report)."""
        while (item := await self.queue.get()) is not None:
            await self.report(*item)


async def close_abandoned_sessions(ctx: RunContext) -> None:
    """After a stop cancelled the cookbook mid-rollout: the groups' cleanup closed the sessions they
    knew, but a CreateSession cancelled in flight leaves one that no env holds. Close what the run
    still has open (as a resume does with a previous life's leftovers)."""
    from halo.client.env import EnvClient

    try:
        async with EnvClient(ctx.services.env, token=ctx.services.token, tls_ca=ctx.services.tls_ca, timeout_s=10) as env:
            closed = await env.close_run_sessions(ctx.run_id)
    except HaloError as exc:   # the env service away: the sessions die with its idle TTL
        ctx.log(f"could not close the run's abandoned env sessions: {exc}")
        return
    if closed:
        ctx.log(f"closed {closed} env session(s) of rollouts abandoned by the stop")


# The cookbook builds its loggers inside main() (ml_log.setup_logging(log_dir=config.log_path));
# a run registers its reporter here under its log path to receive the rows.
_REPORTERS: dict[str, StepReporter] = {}


def _log_key(log_path: Path | str) -> str:
    return str(Path(str(log_path)).expanduser())   # as Config's munger writes config.log_path


def tap_cookbook_loggers() -> None:
    """Wrap `ml_log.setup_logging` once per process: for a log path with a registered reporter, the
    returned MultiplexLogger also feeds that reporter's StepLogger. Other runs are untouched."""
    from tinker_cookbook.utils import ml_log

    original = ml_log.setup_logging
    if getattr(original, "halo_tapped", False):
        return

    @functools.wraps(original)
    def setup_logging(*args: Any, **kwargs: Any) -> Any:
        logger = original(*args, **kwargs)
        reporter = _REPORTERS.get(_log_key(kwargs.get("log_dir", args[0] if args else "")))
        if reporter is not None and isinstance(logger, ml_log.MultiplexLogger):
            logger.loggers.append(reporter.step_logger())
        return logger

    setup_logging.halo_tapped = True   # type: ignore[attr-defined]
    ml_log.setup_logging = setup_logging


@chz.chz
class HookedDatasetBuilder(HaloBrowserDatasetBuilder):
    """HaloBrowserDatasetBuilder whose training dataset hands its ended groups to the run's reporter."""

    hook_key: str = ""

    async def __call__(self):  # type: ignore[override]
        train, test = await super().__call__()
        reporter = _REPORTERS.get(self.hook_key)
        if reporter is not None:
            if not reporter.tapped:   # main() builds the dataset after its loggers: a cookbook that changed that fails here
                raise RuntimeError("tinker-cookbook's metric loggers were not created through ml_log.setup_logging: "
                                   "HALO cannot see which steps are trained")
            reporter.attach(train)
        return train, test


def _gateway_sampling(ctx: RunContext) -> "tinker_gateway.GatewaySampling":
    """The run's gateway client and sampling state (gateway mode)."""
    services, spec = ctx.services, ctx.spec
    if not services.gateway:
        raise FailedPrecondition("--tinker-sampling gateway: the run has no policy gateway target")
    # each Sample's deadline: the route's own retries fit inside it (its timeout_s is 180 s by default)
    client = sample_gateway(services, spec, TINKER_SAMPLE_TIMEOUT_S)
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
    hook_key = _log_key(log_path)
    config = build_config(spec, ctx.services, log_path, run_id=ctx.run_id, hook_key=hook_key)
    max_staleness = config.async_config.max_steps_off_policy if config.async_config is not None else 0
    sampling = _gateway_sampling(ctx) if mode == "gateway" else None
    reporter = StepReporter(ctx, log_path, model, max_staleness, sampling.times.take if sampling is not None else None)
    registered = False
    local_tokenizer = str(spec.extra.get("tokenizer", ""))
    # (not when the model itself is that folder, as on a local Tinker-API server: the entry would call itself)
    if local_tokenizer and local_tokenizer != model and not tokenizer_utils.is_tokenizer_registered(model):
        # main() loads the tokenizer by model name (from the hub): point it at the local copy
        tokenizer_utils.register_tokenizer(model, lambda: tokenizer_utils.get_tokenizer(local_tokenizer))
        registered = True
    if hook_key in _REPORTERS:
        raise FailedPrecondition(f"a Tinker run is already training with the log folder {log_path}")
    tap_cookbook_loggers()
    _REPORTERS[hook_key] = reporter
    consumer = asyncio.get_running_loop().create_task(reporter.consume())
    async_note = f", asynchronous (max {max_staleness} steps off policy)" if max_staleness else ""
    ctx.log(f"tinker: {model}, {spec.loss_fn}, LoRA rank {spec.lora_rank}, lr {spec.learning_rate:g}{async_note}, log {log_path}"
            + (f", sampling through gateway route {sampling.route!r}" if sampling is not None else ", sampling direct (SDK)"))
    active = tinker_gateway.activate(sampling) if sampling is not None else None
    # the task copies the context here: the cookbook's loop (and the tasks it starts) see this run's sampling
    main = reporter.training = asyncio.get_running_loop().create_task(rl_train.main(config))
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
        except asyncio.CancelledError:
            if not reporter.stopping:
                raise
            await close_abandoned_sessions(ctx)
        else:
            if reporter.final is None:
                # the async loop ends when its dataloader runs out, even with batches left unfilled:
                # groups dropped for env failures are not replaced, and stale ones are discarded
                # instead of requeued once the data is out (tinker_cookbook/rl/train.py,
                # do_async_training); its final checkpoint then claims steps that were never trained
                raise FailedPrecondition(
                    f"tinker-cookbook's loop ended after training step {reporter.trained[-1] if reporter.trained else reporter.reported} "
                    f"of {spec.total_steps} (groups dropped or discarded as stale left the last batches short); "
                    f"resume the run to train the rest from step {reporter.trained[-1] if reporter.trained else reporter.reported}")
            reporter.queue.put_nowait(reporter.final)   # the last step: its final checkpoint exists now
    finally:
        if not main.done():   # cancelled from outside (service shutdown)
            main.cancel()
            await asyncio.gather(main, return_exceptions=True)
        # completed steps are reported even when the run failed after them
        reporter.queue.put_nowait(None)
        await asyncio.shield(consumer)
        _REPORTERS.pop(hook_key, None)
        if sampling is not None:
            await sampling.close()
            await sampling.gateway.close()
        if registered:
            tokenizer_utils._CUSTOM_TOKENIZER_REGISTRY.pop(model, None)
