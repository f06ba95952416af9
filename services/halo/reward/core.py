"""The reward service's core: episodes (with a TTL), transition scoring, final evaluation.

Plain Python in, plain Python out; server.py adapts the protos. Everything here runs on the
event loop thread (episode memory needs no locks); only eval scripts go to threads.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from halo.tasks.registry import TaskRegistry, TaskSpec
from halo.reward import metrics
from halo.reward.config import RewardConfig, RewardSettings, load_config
from halo.reward.evaluator import EvalOutcome, Evaluation, evaluate_async, needs_judge
from halo.reward.judge import GatewayJudge, Judge
from halo.reward.pages import PageSnapshot
from halo.reward.strict import load_checks
from halo.reward.shaping import Breakdown, Episode, score_transition
from halo.reward.transition import Transition
from halo.runtime.errors import AlreadyExists, FailedPrecondition, InvalidArgument, NotFound, ResourceExhausted
from halo.runtime.logging import get_logger

log = get_logger("halo.reward")
T = TypeVar("T")


class EpisodeStore:
    """Episodes by id, forgotten after `ttl_s` without a call (a crashed trainer leaks nothing)."""

    def __init__(self, ttl_s: float, max_episodes: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl_s = ttl_s
        self.max_episodes = max_episodes
        self.clock = clock
        self._episodes: dict[str, Episode] = {}

    def add(self, episode: Episode) -> None:
        if len(self._episodes) >= self.max_episodes:
            self.reap()
        if len(self._episodes) >= self.max_episodes:
            raise ResourceExhausted(f"{self.max_episodes} episodes are open; end some (EndEpisode) or raise --max-episodes")
        self._episodes[episode.id] = episode
        metrics.EPISODES_OPEN.set(len(self._episodes))

    def peek(self, episode_id: str) -> Episode | None:
        episode = self._episodes.get(episode_id)
        if episode is not None and self._expired(episode):
            self._drop(episode_id, "expired")
            return None
        return episode

    def get(self, episode_id: str) -> Episode:
        episode = self.peek(episode_id)
        if episode is None:
            raise NotFound(f"unknown or expired episode {episode_id!r} (StartEpisode first; idle episodes expire after {self.ttl_s:g} s)")
        episode.last_used = self.clock()
        return episode

    def pop(self, episode_id: str) -> Episode | None:
        episode = self.peek(episode_id)
        if episode is not None:
            self._drop(episode_id, "ended")
        return episode

    def reap(self) -> int:
        expired = [eid for eid, ep in self._episodes.items() if self._expired(ep)]
        for eid in expired:
            self._drop(eid, "expired")
        return len(expired)

    def _expired(self, episode: Episode) -> bool:
        return self.clock() - episode.last_used > self.ttl_s

    def _drop(self, episode_id: str, reason: str) -> None:
        episode = self._episodes.pop(episode_id)
        metrics.EPISODES_ENDED.labels(reason).inc()
        metrics.EPISODE_RETURN.labels(episode.site).observe(episode.episode_return)
        metrics.EPISODE_RETURN_SUM.labels(episode.site).inc(episode.episode_return)
        metrics.EPISODES_OPEN.set(len(self._episodes))

    def __len__(self) -> int:
        return len(self._episodes)


@dataclass(frozen=True)
class EpisodeSummary:
    episode_id: str
    episode_return: float
    transitions: int
    milestones_paid: tuple[str, ...]


@dataclass
class FinalEvaluation:
    """Evaluate's answer: REAL's verdict, or an env failure that is no verdict at all."""

    task_id: str
    success: bool
    details: list[EvalOutcome] = field(default_factory=list)
    env_failure: bool = False
    scorable: bool = True
    duration_s: float = 0.0
    success_bonus: float = 0.0
    success_strict: bool = False              # success AND the task's strict checks (halo.reward.strict)
    strict_failed: list[str] = field(default_factory=list)

    @property
    def score(self) -> float:
        return 1.0 if self.success else 0.0


class RewardCore:
    def __init__(
        self, settings: RewardSettings, registry: TaskRegistry, config: RewardConfig | None = None,
        judge: Judge | None = None, clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings
        self.registry = registry
        base = config if config is not None else load_config(settings.config)
        self.config = base.with_overrides(settings.overrides)   # run-wide overrides
        if judge is None and settings.judge_target:
            judge = GatewayJudge(settings.judge_target, model=settings.judge_route, token=settings.judge_token or settings.auth_token,
                                 tls_ca=settings.judge_tls_ca, timeout_s=settings.judge_timeout_s)
        self.judge = judge
        self.strict_checks = load_checks()   # configs/strict_checks.yaml: a bad rule fails at start, not mid-run
        self.episodes = EpisodeStore(settings.episode_ttl_s, settings.max_episodes, clock)
        self.clock = clock
        self._scripts = asyncio.Semaphore(settings.eval_concurrency)
        self._reaper: asyncio.Task[None] | None = None

    # --- lifecycle ---------------------------------------------------------------------------

    async def start(self) -> None:
        self._reaper = asyncio.create_task(self._reap_forever())

    async def close(self) -> None:
        if self._reaper is not None:
            self._reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reaper
        if isinstance(self.judge, GatewayJudge):
            await self.judge.close()

    async def _reap_forever(self) -> None:
        while True:
            await asyncio.sleep(self.settings.reap_interval_s)
            if reaped := self.episodes.reap():
                log.info("expired episodes forgotten", count=reaped)

    # --- episodes ----------------------------------------------------------------------------

    def start_episode(
        self, episode_id: str, task_id: str, overrides: dict[str, float] | None = None, initial: PageSnapshot | None = None,
    ) -> Episode:
        if not episode_id:
            raise InvalidArgument("episode_id is required")
        if not task_id:
            raise InvalidArgument("task_id is required")
        task = self.registry.get(task_id)
        overrides = dict(overrides or {})
        existing = self.episodes.peek(episode_id)
        if existing is not None:
            # A retried StartEpisode is harmless; reusing an id for something else is a bug.
            if existing.task.id == task.id and existing.overrides == overrides:
                return existing
            raise AlreadyExists(f"episode {episode_id!r} is open for task {existing.task.id} with other settings")
        episode = Episode.open(episode_id, task, self.config, overrides, self.clock(), initial)
        self.episodes.add(episode)
        return episode

    def score(self, episode_id: str, transition: Transition) -> Breakdown:
        if not episode_id:
            raise InvalidArgument("episode_id is required")
        episode = self.episodes.get(episode_id)
        result = score_transition(episode, transition)
        site = episode.site
        metrics.TRANSITIONS.labels(site, "env_failure" if result.env_failure else "scored").inc()
        if not result.env_failure:
            metrics.TRANSITION_REWARD.labels(site).observe(result.total)
            for c in result.components:
                record_component(site, c.name, c.value)
        return result

    def end_episode(self, episode_id: str) -> EpisodeSummary | None:
        if not episode_id:
            raise InvalidArgument("episode_id is required")
        episode = self.episodes.pop(episode_id)
        if episode is None:
            return None
        return EpisodeSummary(episode.id, episode.episode_return, episode.transitions, tuple(episode.paid))

    def config_for(self, episode_id: str = "") -> RewardConfig:
        return self.episodes.get(episode_id).config if episode_id else self.config

    # --- final evaluation --------------------------------------------------------------------

    async def evaluate(
        self, task_id: str, state_json: str, final_message: str = "", *, episode_id: str = "", env_failure: bool = False,
    ) -> FinalEvaluation:
        episode = self.episodes.get(episode_id) if episode_id else None
        task = self._task_for(task_id, episode)
        if env_failure:
            # Not a verdict on the agent: nothing is run, nothing is paid, and the metrics keep
            # it apart from failures.
            metrics.EVALUATIONS.labels(task.site, "env_failure").inc()
            return FinalEvaluation(task.id, False, env_failure=True, scorable=task.scorable)
        state = parse_state_json(state_json, required=True)
        if needs_judge(task) and self.judge is None:
            raise FailedPrecondition(
                f"task {task.id} has LLM-judge evals and no judge route is configured "
                "(start the reward service with --judge-target pointing at the policy gateway)"
            )
        evaluation = await evaluate_async(task, state, final_message, self.judge, self._run_script)
        strict = self.strict_checks.verdict(task.id, evaluation.success, state)
        bonus = self._pay_success(episode, evaluation, strict.success)
        self._record(task, evaluation)
        return FinalEvaluation(
            task.id, evaluation.success, evaluation.details, False, evaluation.scorable, evaluation.duration_s, bonus,
            strict.success, strict.failed,
        )

    def _task_for(self, task_id: str, episode: Episode | None) -> TaskSpec:
        if not task_id:
            if episode is None:
                raise InvalidArgument("task_id is required (or an episode_id whose task is evaluated)")
            return episode.task
        task = self.registry.get(task_id)
        if episode is not None and episode.task.id != task.id:
            raise InvalidArgument(f"episode {episode.id!r} is for task {episode.task.id}, not {task.id}")
        return task

    def _pay_success(self, episode: Episode | None, evaluation: Evaluation, strict_success: bool) -> float:
        """The success bonus, on the verdict the episode's config names (`strict_success` weight:
        1 = strict success, 0 = agisdk's)."""
        success = strict_success if episode is not None and episode.config.weights.strict_success else evaluation.success
        if episode is None or not success or episode.success_paid:
            return 0.0   # evaluating the same success twice pays once
        episode.success_paid = True
        bonus = episode.config.weights.success_bonus
        episode.episode_return += bonus
        record_component(episode.site, "success", bonus)
        return bonus

    async def _run_script(self, fn: Callable[[], T]) -> T:
        async with self._scripts:
            return await asyncio.to_thread(fn)

    @staticmethod
    def _record(task: TaskSpec, evaluation: Evaluation) -> None:
        outcome = "unscorable" if not evaluation.scorable else "success" if evaluation.success else "failure"
        metrics.EVALUATIONS.labels(task.site, outcome).inc()
        metrics.EVAL_SECONDS.labels(task.site).observe(evaluation.duration_s)
        for detail in evaluation.details:
            if detail.error:
                metrics.EVAL_ERRORS.labels(task.site, detail.kind).inc()


def record_component(site: str, name: str, value: float) -> None:
    metrics.COMPONENT_PAID.labels(site, name).inc()
    metrics.COMPONENT_CONTRIBUTION.labels(site, name).inc(value)


def parse_state_json(text: str, *, required: bool = False) -> dict[str, Any] | None:
    """The /finish JSON: an object. Empty -> None (or INVALID_ARGUMENT where it is required)."""
    import json

    if not text:
        if required:
            raise InvalidArgument("state_json is required (the site's /finish JSON); set env_failure when it could not be fetched")
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidArgument(f"state_json does not parse: {exc}") from None
    except (ValueError, RecursionError) as exc:  # an integer over Python's digit limit; nesting deeper than the stack
        raise InvalidArgument(f"state_json does not parse: {type(exc).__name__}: {str(exc)[:200]}") from None
    if not isinstance(value, dict):
        raise InvalidArgument(f"state_json must be a JSON object, got {type(value).__name__}")
    return value
