"""REAL tasks as tinker-cookbook RL environments: the Tinker backend's side of the loop.

Tinker's RL loop (`tinker_cookbook.rl.train`) samples Qwen3-VL on Tinker's servers and calls
`Env.step(tokens)`; here every `Env` is one env-service session over gRPC, so the browsers stay
in HALO's env service exactly as for the embedded backend:

    HaloBrowserDatasetBuilder -> HaloBrowserDataset.get_batch(i) -> [HaloBrowserGroupBuilder]
    HaloBrowserGroupBuilder.make_envs() -> group_size x HaloBrowserEnv (same task, same seed)
    HaloBrowserEnv.initial_observation(): CreateSession + StartEpisode, render the first prompt
    HaloBrowserEnv.step(tokens): decode, parse (Qwen3-VL computer_use, 0..1000 grid), env Step
        (with the replica's state: include_state), reward ScoreTransition; at the end Evaluate
        (success bonus) on the last step's state (GetState first on remote sites)
    HaloBrowserGroupBuilder.cleanup(): EndEpisode + CloseSession for every session it opened

Observations are fresh each step, never a growing chat (seeds/000): the system prompt with the
computer_use tool, then one user turn with the screenshot (an ImageChunk, rendered by
tinker-cookbook's `qwen3_vl_instruct` renderer), the goal, the URL, the last 5 actions and the
AXTree cut to a budget (`halo.agent.prompt`), which keeps a step at a few thousand tokens.

Environment failures (browser crash, site down, a session that vanished) raise `EnvFailure`: the
rollout strategy (`MinViableGroup`, set by `halo.trainers.tinker_train`) drops that trajectory
from its group instead of learning from a fake zero reward, and counts it.

The group builders are picklable (the cookbook may ship them to worker processes): they hold
service addresses and names, and open their gRPC channels and renderer in `make_envs()`, like
tinker-cookbook's `recipes/harbor_rl/harbor_env.py` does with its sandboxes.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import chz
import tinker
from tinker_cookbook.rl.types import (
    STOP_METRIC_PREFIX,
    ActionExtra,
    Env,
    EnvGroupBuilder,
    RLDataset,
    RLDatasetBuilder,
    StepResult,
    StopReason,
)

from halo.agent import actions as A
from halo.agent.context import DEFAULT_HISTORY_STEPS, PastStep, PolicyContext, page_from_proto
from halo.agent.formats import ActionFormat
from halo.agent.parse import ParsedAction, parse_action
from halo.agent.prompt import DEFAULT_MAX_AXTREE_CHARS, Prompt, PromptOptions, build_prompt
from halo.client.env import EnvClient, observation_options
from halo.client.reward import RewardClient, page_state
from halo.errors import HaloError, InvalidArgument
from halo.rollout.retries import DEFAULT_EPISODE_RETRIES
from halo.rollout.tasks import expand_tasks
from halo.trainers.advantages import EpisodeSummary
from halo.v1 import env_pb2 as epb

log = logging.getLogger("halo.trainers.tinker_env")

DEFAULT_TINKER_MODEL = "Qwen/Qwen3-VL-30B-A3B-Instruct"
DEFAULT_RENDERER = "qwen3_vl_instruct"
STOP_TEXTS = ("<|im_end|>", "<|endoftext|>")


def env_failure_strategy(group_size: int, extra: dict[str, Any]):
    """The cookbook rollout strategy both cookbook-loop backends (Tinker, local LoRA) use for
    environment failures: a failed trajectory is rolled out again in a fresh env (a new session, on
    an env fleet on a replica that still serves) while its group is below `extra.min_group`
    (default 3/4 of the group, at least 2), with `extra.env_retries` attempts per group (default
    DEFAULT_EPISODE_RETRIES per member, as GRPO gives each episode); above the floor a failed member
    is dropped, never scored. A group that stays below the floor is dropped whole."""
    from tinker_cookbook.rl.rollout_strategy import MinViableGroup

    min_group = int(extra.get("min_group", max(2, math.ceil(0.75 * group_size))))
    retries = int(extra.get("env_retries", DEFAULT_EPISODE_RETRIES * group_size))
    return MinViableGroup(min_successful=max(1, min(min_group, group_size)), max_retries=retries)


class EnvFailure(RuntimeError):
    """The environment failed (not the agent): the trajectory is dropped, never scored 0."""


@dataclass(frozen=True)
class BrowserTaskConfig:
    """Everything an env needs besides its task and seed. Plain values only (picklable)."""

    env_target: str
    reward_target: str
    token: str = ""
    tls_ca: str = ""                         # PEM root certificate when the services serve TLS
    max_steps: int = 70                      # episode length cap (RunSpec.max_steps)
    history_steps: int = DEFAULT_HISTORY_STEPS
    image_format: str = "jpeg"
    jpeg_quality: int = 80
    include_axtree: bool = True
    screenshots: bool = True                 # False: the text-only mode (AXTree, no image; env skip_screenshot)
    max_axtree_chars: int = DEFAULT_MAX_AXTREE_CHARS
    reward_overrides: dict[str, float] = field(default_factory=dict)
    run_id: str = ""
    model_name: str = DEFAULT_TINKER_MODEL
    renderer_name: str = DEFAULT_RENDERER
    tokenizer: str = ""                      # HF name or local folder; default: model_name
    image_processor: str = ""                # HF name or local folder; default: tokenizer
    rpc_timeout_s: float = 60.0

    def prompt_options(self) -> PromptOptions:
        return PromptOptions(
            action_format=ActionFormat.QWEN_COMPUTER_USE, history_steps=self.history_steps,
            max_axtree_chars=self.max_axtree_chars, include_axtree=self.include_axtree,
            include_screenshot=self.screenshots,
        )


@functools.cache
def load_renderer(renderer_name: str, tokenizer_name: str, image_processor_name: str, model_name: str) -> Any:
    """tinker-cookbook's renderer with its tokenizer and image processor (loaded once per process)."""
    from tinker_cookbook import renderers
    from tinker_cookbook.image_processing_utils import get_image_processor
    from tinker_cookbook.tokenizer_utils import get_tokenizer

    tokenizer = get_tokenizer(tokenizer_name)
    image_processor = get_image_processor(image_processor_name)
    return renderers.get_renderer(renderer_name, tokenizer, image_processor, model_name=model_name)


def renderer_for(config: BrowserTaskConfig) -> Any:
    tokenizer = config.tokenizer or config.model_name
    return load_renderer(config.renderer_name, tokenizer, config.image_processor or tokenizer, config.model_name)


def decode_completion(tokenizer: Any, tokens: Sequence[int]) -> str:
    """The raw completion text up to the end-of-turn token (HALO's parser reads the tool call)."""
    text = tokenizer.decode(list(tokens), skip_special_tokens=False)
    for stop in STOP_TEXTS:
        text = text.split(stop, 1)[0]
    return text


def render_observation(renderer: Any, ctx: PolicyContext, options: PromptOptions) -> tuple[tinker.ModelInput, Prompt]:
    prompt = build_prompt(ctx, options)
    return renderer.build_generation_prompt(prompt.to_renderer_messages()), prompt


class _Services:
    """The gRPC clients one group shares (opened in make_envs, closed in cleanup)."""

    def __init__(self, config: BrowserTaskConfig) -> None:
        self.env = EnvClient(config.env_target, token=config.token, tls_ca=config.tls_ca, timeout_s=config.rpc_timeout_s)
        self.reward = RewardClient(config.reward_target, token=config.token, tls_ca=config.tls_ca, timeout_s=config.rpc_timeout_s)

    async def close(self) -> None:
        for client in (self.env, self.reward):
            try:
                await client.close()
            except Exception:  # closing must never mask the rollout's own outcome
                log.warning("closing a service channel failed", exc_info=True)


class HaloBrowserEnv(Env):
    """One attempt at one REAL task: one env-service session, opened lazily, closed by close()."""

    def __init__(self, task_id: str, seed: int, config: BrowserTaskConfig, renderer: Any, services: _Services) -> None:
        self.task_id, self.seed, self.config = task_id, seed, config
        self.renderer = renderer
        self.services = services
        self.options = config.prompt_options()
        self.obs_options = observation_options(config.image_format, config.jpeg_quality, screenshot=config.screenshots)
        self.session_id = ""
        self.goal = ""
        self.site = ""
        self.replica = False
        self.history: list[PastStep] = []
        self.summary: EpisodeSummary | None = None      # set when the episode ends
        self.env_failure = ""                           # why, when the environment failed
        self.total_reward = 0.0
        self.valid_actions = 0
        self.action_tokens = 0
        self.last_prompt: Prompt | None = None
        self._obs: Any = None
        self._before: Any = None
        self._closed = False
        self._episode_started = False

    # --- lifecycle ---------------------------------------------------------------------------

    def _fail(self, reason: str) -> EnvFailure:
        self.env_failure = reason
        self.summary = EpisodeSummary(self.total_reward, False, len(self.history), self.valid_actions, self.action_tokens, True)
        return EnvFailure(f"{self.task_id} (seed {self.seed}, session {self.session_id or '-'}): {reason}")

    async def initial_observation(self) -> tuple[tinker.ModelInput, list[int] | list[str]]:
        try:
            created = await self.services.env.create_session(
                self.task_id, seed=self.seed, max_steps=self.config.max_steps, observation=self.obs_options,
                run_id=self.config.run_id, labels={"trainer": "tinker"}, include_state=True,
            )
            self.session_id, self._obs = created.session_id, created.observation
            self.goal, self.site, self.replica = created.task.goal, created.task.site, created.task.replica_available
            self._before = page_state(self._obs, created.state_json)   # a replica's state, "" on remote sites
            await self.services.reward.start_episode(
                self.session_id, self.task_id, overrides=self.config.reward_overrides, initial=self._before,
            )
            self._episode_started = True
        except InvalidArgument:
            raise  # an unknown task or a bad request is a configuration error, not a flaky environment
        except HaloError as exc:
            raise self._fail(f"{type(exc).__name__}: {exc}") from exc
        return await self._render(), self.renderer.get_stop_sequences()

    async def _render(self) -> tinker.ModelInput:
        ctx = PolicyContext(goal=self.goal, page=page_from_proto(self._obs), history=tuple(self.history[-self.config.history_steps:]))
        model_input, self.last_prompt = await asyncio.to_thread(render_observation, self.renderer, ctx, self.options)
        return model_input

    def parse(self, tokens: Sequence[int]) -> tuple[str, ParsedAction]:
        text = decode_completion(self.renderer.tokenizer, tokens)
        width, height = (self._obs.width or 1280, self._obs.height or 720) if self._obs is not None else (1280, 720)
        return text, parse_action(text, ActionFormat.QWEN_COMPUTER_USE, width, height)

    async def step(self, action: list[int], *, extra: ActionExtra | None = None) -> StepResult:
        text, parsed = self.parse(action)
        chosen = parsed.action if parsed.action is not None else A.Noop()
        message = A.action_to_proto(chosen, text)   # once: env, reward and the next prompts' history share it
        step_index = len(self.history)
        self.action_tokens += len(action)
        try:
            # the reply carries a replica's state after the action (include_state): no GetState per step
            result = await self.services.env.step(self.session_id, message, observation=self.obs_options, include_state=True)
            if result.env_failure:
                raise self._fail(result.env_failure_reason or "environment failure")
            self._obs, done = result.observation, result.done
            after = page_state(self._obs, result.state_json)
            breakdown = await self.services.reward.score_transition(
                self.session_id, step_index, message if parsed.action is not None else None, self._before, after,
                action_ok=result.action_ok, done=done,
            )
        except InvalidArgument:
            raise
        except HaloError as exc:
            raise self._fail(f"{type(exc).__name__}: {exc}") from exc
        self._before = after
        valid = parsed.valid and result.action_ok
        self.valid_actions += valid
        self.history.append(PastStep(chosen, result.action_error, text, message))
        reward = breakdown.total
        metrics: dict[str, float] = {
            "action_valid": float(valid), "action_parsed": float(parsed.valid),
            "truncated": float(bool(extra and extra.get("stop_reason") == "length")),
        }
        metrics |= {f"reward/{c.name}": c.value for c in breakdown.components}
        logs: dict[str, str | int | float] = {
            "action": A.describe(chosen), "url": self._obs.url, "completion": text[:800],
        }
        if parsed.error is not None:
            logs["parse_error"] = str(parsed.error)
        if result.action_error:
            logs["action_error"] = result.action_error
        if not done:
            self.total_reward += reward
            return StepResult(reward, False, await self._render(), self.renderer.get_stop_sequences(), metrics, logs)
        # the episode is over: score it with the REAL evaluator
        try:
            if self.replica:   # the last step's reply holds the final state and message
                state_json, final_message = result.state_json, result.final_message
            else:
                state = await self.services.env.get_state(self.session_id)
                state_json, final_message = state.state_json, state.final_message
            evaluation = await self.services.reward.evaluate(self.task_id, state_json, final_message, episode_id=self.session_id)
        except InvalidArgument:
            raise
        except HaloError as exc:
            raise self._fail(f"{type(exc).__name__} while evaluating: {exc}") from exc
        reward += evaluation.success_bonus
        self.total_reward += reward
        stop = StopReason.MAX_TURNS if result.termination == epb.TERMINATION_MAX_STEPS else StopReason.COMPLETED
        metrics |= {
            "success": float(evaluation.success), "success_strict": float(evaluation.success_strict), "success_bonus": evaluation.success_bonus,
            "episode_length": float(len(self.history)), f"{STOP_METRIC_PREFIX}{stop.value}": 1.0,
        }
        logs["evaluation"] = "; ".join(f"{d.description}: {'pass' if d.passed else 'fail'}" for d in evaluation.details)[:800]
        self.summary = EpisodeSummary(self.total_reward, evaluation.success, len(self.history), self.valid_actions, self.action_tokens, False,
                                      evaluation.success_strict)
        return StepResult(reward, True, tinker.ModelInput.empty(), self.renderer.get_stop_sequences(), metrics, logs)

    async def close(self) -> None:
        """End the reward episode and close the session (idempotent, never raises)."""
        self._obs = self._before = self.last_prompt = None   # screenshots: not kept past the episode
        if self._closed or not self.session_id:
            self._closed = True
            return
        self._closed = True
        if self._episode_started:
            try:
                await self.services.reward.end_episode(self.session_id)
            except Exception:
                pass  # the reward service may be gone; the episode dies with it
        try:
            await self.services.env.close_session(self.session_id)
        except Exception:
            pass  # already closed by the env service (env failure, reaped)


class HaloBrowserGroupBuilder(EnvGroupBuilder):
    """`group_size` attempts at one task from the same initial state (same task, same seed)."""

    def __init__(self, task_id: str, seed: int, group_size: int, config: BrowserTaskConfig) -> None:
        self.task_id, self.seed, self.group_size, self.config = task_id, seed, group_size, config
        self.envs: list[HaloBrowserEnv] = []
        self._services: _Services | None = None
        # where a finished rollout of this group goes (the trainer's step metrics); set by the dataset
        self.on_group_done: Callable[[list[EpisodeSummary]], None] | None = None
        self._handed_over = 0   # envs[:_handed_over] went to on_group_done already

    def __getstate__(self) -> dict[str, Any]:
        # live channels, sessions and the trainer's sink never travel: a worker opens its own in make_envs()
        return {k: v for k, v in self.__dict__.items() if k not in ("envs", "_services", "on_group_done")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.envs, self._services, self.on_group_done, self._handed_over = [], None, None, 0

    async def make_envs(self) -> Sequence[Env]:
        # Sessions open lazily in initial_observation(): a retry that builds a whole group to
        # use one env costs Python objects, not browser sessions.
        if self._services is None:
            self._services = _Services(self.config)
        renderer = await asyncio.to_thread(renderer_for, self.config)
        envs = [HaloBrowserEnv(self.task_id, self.seed, self.config, renderer, self._services) for _ in range(self.group_size)]
        self.envs += envs
        return envs

    async def cleanup(self) -> None:
        """Called by the cookbook once a rollout of this group is over (kept, dropped or cancelled):
        closes its sessions and hands the episodes that ended to `on_group_done`, each once (a stale
        group requeued by the cookbook's async mode is rolled out again with new envs)."""
        await asyncio.gather(*(env.close() for env in self.envs))
        if self._services is not None:
            await self._services.close()
            self._services = None
        ended = [e.summary for e in self.envs[self._handed_over:] if e.summary is not None]
        self._handed_over = len(self.envs)
        if ended and self.on_group_done is not None:
            self.on_group_done(ended)

    def logging_tags(self) -> list[str]:
        site = next((e.site for e in self.envs if e.site), "") or self.task_id.split("-", 1)[0]
        return [site]

    def summaries(self) -> list[EpisodeSummary]:
        """One summary per attempt that started (kept and dropped ones), for HALO's step metrics."""
        return [e.summary for e in self.envs if e.summary is not None]


def batch_for_step(tasks: Sequence[str], seed: int, index: int, groups_per_batch: int,
                   layout_seeds: Sequence[int] = ()) -> list[tuple[str, int]]:
    """(task, layout seed) per group of batch `index`: the same after a resume (as in grpo.py).
    The layout seed is drawn from `layout_seeds` when given (one page to overfit: `[0]`), else from 0..999."""
    rng = random.Random(f"{seed}:{index + 1}")
    return [(rng.choice(list(tasks)), rng.choice(list(layout_seeds)) if layout_seeds else rng.randrange(1_000))
            for _ in range(groups_per_batch)]


class HaloBrowserDataset(RLDataset):
    """`num_batches` batches of `groups_per_batch` groups. `on_group_done` (set by the trainer)
    receives each finished rollout of a group, the episodes that ended in it. Nothing here marks a
    step as trained: the cookbook's async mode asks for batches ahead of training."""

    def __init__(
        self, tasks: Sequence[str], *, group_size: int, groups_per_batch: int, num_batches: int, seed: int,
        config: BrowserTaskConfig, fixed: Sequence[tuple[str, int]] | None = None, layout_seeds: Sequence[int] = (),
    ) -> None:
        if not tasks:
            raise ValueError("no tasks to train on")
        self.tasks, self.group_size, self.groups_per_batch = list(tasks), group_size, groups_per_batch
        self.num_batches, self.seed, self.config = num_batches, seed, config
        self.fixed = list(fixed) if fixed is not None else None   # one batch of exactly these groups (evaluation)
        self.layout_seeds = tuple(layout_seeds)
        self.on_group_done: Callable[[list[EpisodeSummary]], None] | None = None

    def get_batch(self, index: int) -> Sequence[EnvGroupBuilder]:
        pairs = self.fixed if self.fixed is not None else batch_for_step(self.tasks, self.seed, index, self.groups_per_batch,
                                                                         self.layout_seeds)
        builders = [HaloBrowserGroupBuilder(task, seed, self.group_size, self.config) for task, seed in pairs]
        for builder in builders:
            builder.on_group_done = self.on_group_done
        return builders

    def __len__(self) -> int:
        return self.num_batches


async def expand_task_refs(config: BrowserTaskConfig, refs: Sequence[str]) -> list[str]:
    """Task ids from ids or site names (a site name means its replica tasks), via the env service."""
    async with EnvClient(config.env_target, token=config.token, tls_ca=config.tls_ca, timeout_s=config.rpc_timeout_s) as env:
        return await expand_tasks(env, list(refs))


@chz.chz
class HaloBrowserDatasetBuilder(RLDatasetBuilder):
    """Builds the training dataset (and, with eval_seeds, a greedy-free held-out test set)."""

    task_refs: list[str]
    config: BrowserTaskConfig
    group_size: int = 8
    groups_per_batch: int = 1
    num_batches: int = 20
    seed: int = 0
    eval_seeds: list[int] = chz.field(default_factory=list)

    async def __call__(self) -> tuple[RLDataset, RLDataset | None]:
        tasks = await expand_task_refs(self.config, self.task_refs)
        train = HaloBrowserDataset(
            tasks, group_size=self.group_size, groups_per_batch=self.groups_per_batch, num_batches=self.num_batches,
            seed=self.seed, config=self.config,
        )
        test = None
        if self.eval_seeds:
            test = HaloBrowserDataset(
                tasks, group_size=1, groups_per_batch=0, num_batches=1, seed=self.seed, config=self.config,
                fixed=[(t, s) for t in tasks for s in self.eval_seeds],
            )
        return train, test
