"""Asynchronous GRPO with bounded staleness: rollouts of later steps run while the learner updates.

One knob, `max_staleness` K (`halo train --max-staleness K`, the run spec's `extra`):

- K = 0 is the synchronous loop: step N's rollouts start after step N-1's update was published.
- K >= 1: step M's rollouts may start as soon as the learner holds version M-1-K (version = number
  of completed updates), so the rollouts of steps N+1..N+K run while step N updates. They sample
  from the newest version published when they start, and every episode of a step keeps that
  version to its end (`Episode.weight_version`), so a group is always one policy's samples.

Staleness of a step's samples = the learner's version when it updates on them minus the version
they were sampled from; the admission rule above bounds it by K. Should a group still arrive more
than K versions behind (it is checked, not assumed), the configured rule (`stale_rule`) applies:
`drop` leaves it out of the update (counted as `async/stale_dropped`), `correct` keeps it and the
update corrects it with the importance ratio of the current policy over the logprob each action
was sampled with (every learner here computes that ratio; it is what makes any K > 0 sound).

Env slots are shared by all steps in flight and handed out oldest step first, so a later step
fills the tail of the current one (the stragglers) instead of competing with it.

What is reproducible: which tasks and seeds a step rolls out and each episode's sampling seed
(the same as the synchronous loop). What is not, for K > 0: which weight version a step samples
from depends on how fast the learner and the browsers are (recorded per episode and in the
`async/version` metric), so two runs may differ from the first step whose version differed.

Stop and resume: only completed steps are checkpointed (the host writes the checkpoint, then
records the step); rollouts in flight for later steps are abandoned on a stop or a crash and
rolled out again after a resume, so nothing completed is lost and no episode is counted twice.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import statistics
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

STALE_RULES = ("drop", "correct")


@dataclass(frozen=True)
class AsyncSettings:
    max_staleness: int = 0          # K: 0 = synchronous
    stale_rule: str = "drop"        # what happens to a group more than K versions behind

    @classmethod
    def from_extra(cls, extra: dict[str, Any]) -> "AsyncSettings":
        settings = cls(int(extra.get("max_staleness", 0)), str(extra.get("stale_rule", "drop")))
        if settings.max_staleness < 0:
            raise ValueError(f"max_staleness must be >= 0, got {settings.max_staleness}")
        if settings.stale_rule not in STALE_RULES:
            raise ValueError(f"stale_rule must be one of {STALE_RULES}, got {settings.stale_rule!r}")
        return settings

    def describe(self) -> str:
        if not self.max_staleness:
            return "synchronous GRPO: each step rolls out after the previous update"
        return (f"asynchronous GRPO: rollouts up to {self.max_staleness} step(s) ahead of the learner, "
                f"groups staler than that: {self.stale_rule}")


class PrioritySlots:
    """A semaphore whose waiters are served lowest priority value first (the oldest step)."""

    def __init__(self, slots: int) -> None:
        self._free = slots
        self._waiters: list[tuple[int, int, asyncio.Future]] = []
        self._order = itertools.count()

    async def acquire(self, priority: int) -> None:
        if self._free > 0 and not self._waiters:
            self._free -= 1
            return
        future = asyncio.get_running_loop().create_future()
        entry = (priority, next(self._order), future)
        heapq.heappush(self._waiters, entry)
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self.release()               # handed a slot while being cancelled: pass it on
            else:
                self._waiters.remove(entry)
                heapq.heapify(self._waiters)
            raise

    def release(self) -> None:
        while self._waiters:
            _, _, future = heapq.heappop(self._waiters)
            if not future.done():
                future.set_result(None)
                return
        self._free += 1

    def for_step(self, step: int) -> "StepSlots":
        return StepSlots(self, step)


class StepSlots:
    """One step's view of the shared slots, used as `async with` (rollout_groups' `limit`)."""

    def __init__(self, slots: PrioritySlots, step: int) -> None:
        self._slots, self._step = slots, step

    async def __aenter__(self) -> None:
        await self._slots.acquire(self._step)

    async def __aexit__(self, *exc) -> None:
        self._slots.release()


@dataclass(frozen=True)
class Redone:
    """What a step's rollout cost in environment failures before its groups were kept: whole
    rollouts thrown away and rolled out again, and the episode attempts in them (retries
    included), counted in the step's metrics and never learned from."""

    rollouts: int = 0
    attempts: int = 0


@dataclass
class StepRollouts:
    """One step's groups and when and from which weight version they were sampled."""

    step: int
    version: int
    groups: list[Any]                # the backend's groups: Episode lists (embedded), TrajectoryGroups (LoRA)
    redone: Redone = field(default_factory=Redone)   # rollouts of the step thrown away (env failures)
    started_at: float = 0.0          # epoch seconds
    finished_at: float = 0.0
    asked_at: float = 0.0            # perf_counter when the learner asked for them (RolloutPipeline.steps)


@dataclass
class Admitted:
    groups: list[list[Any]]
    stale_dropped: int               # episodes left out as too stale
    stale_corrected: int             # episodes kept past K under the `correct` rule
    staleness: list[int]             # per kept episode


def admit(rolled: StepRollouts, learner_version: int, settings: AsyncSettings,
          version_of: Callable[[Any], list[int]] | None = None, kept_of: Callable[[Any], int] | None = None) -> Admitted:
    """Apply the staleness rule to a step's groups before the learner uses them.

    `version_of(group)`: the weight versions its samples came from (default: Episode lists'
    `weight_version`); `kept_of(group)`: how many of its samples the learner would use (default:
    the episodes without an environment failure)."""
    version_of = version_of or (lambda g: [e.weight_version for e in g if e.weight_version is not None and not e.env_failure])
    kept_of = kept_of or (lambda g: sum(not e.env_failure for e in g))
    kept, dropped, corrected, staleness = [], 0, 0, []
    for group in rolled.groups:
        versions = version_of(group)
        behind = learner_version - min(versions) if versions else 0
        if behind > settings.max_staleness:
            if settings.stale_rule == "drop":
                dropped += kept_of(group)
                continue
            corrected += kept_of(group)
        kept.append(group)
        staleness += [learner_version - v for v in versions]
    return Admitted(kept, dropped, corrected, staleness)


class _BusyClock:
    """Wall time with no step's rollouts in flight (the browsers and the sampler idle)."""

    def __init__(self) -> None:
        self.active, self.idle_s, self._idle_since = 0, 0.0, time.monotonic()

    def enter(self) -> None:
        if self.active == 0:
            self.idle_s += time.monotonic() - self._idle_since
        self.active += 1

    def exit(self) -> None:
        self.active -= 1
        if self.active == 0:
            self._idle_since = time.monotonic()

    def take_idle(self) -> float:
        idle = self.idle_s + (time.monotonic() - self._idle_since if self.active == 0 else 0.0)
        self.idle_s, self._idle_since = 0.0, time.monotonic()
        return idle


RollOut = Callable[[int, int, Any], Awaitable[tuple[list[list[Any]], Redone]]]


class RolloutPipeline:
    """Runs the rollouts of steps first..last ahead of the learner, at most K steps ahead.

    `roll(step, version, limit)` rolls out one step's groups sampling from `version`, taking env
    slots through `limit`, and returns (groups, Redone). `version_now()` is the newest
    published version (what a starting step samples from).
    """

    def __init__(self, settings: AsyncSettings, first: int, last: int, roll: RollOut,
                 version_now: Callable[[], int], slots: int) -> None:
        self.settings, self.first, self.last = settings, first, last
        self._roll, self._version_now = roll, version_now
        self._slots = PrioritySlots(slots)
        self._tasks: dict[int, asyncio.Task] = {}
        self._next = first                # the next step whose rollouts have not started
        self._clock = _BusyClock()
        self._learner_idle_s = 0.0

    def _launch_until(self, step: int) -> None:
        while self._next <= min(step, self.last):
            self._tasks[self._next] = asyncio.create_task(self._one(self._next), name=f"rollouts-step-{self._next}")
            self._next += 1

    async def _one(self, step: int) -> StepRollouts:
        version, started = self._version_now(), time.time()
        self._clock.enter()
        try:
            groups, redone = await self._roll(step, version, self._slots.for_step(step))
        finally:
            self._clock.exit()
        return StepRollouts(step, version, groups, redone, started, time.time())

    def start(self, learner_version: int) -> None:
        """Launch every step the learner's version admits: M <= version + 1 + K."""
        self._launch_until(learner_version + 1 + self.settings.max_staleness)

    async def take(self, step: int) -> StepRollouts:
        """The step's rollouts, once finished (launched now if they were not yet)."""
        self._launch_until(step)
        waited = time.monotonic()
        try:
            return await self._tasks.pop(step)
        finally:
            self._learner_idle_s = time.monotonic() - waited

    async def steps(self, stop_requested: Callable[[], bool]) -> AsyncIterator[StepRollouts]:
        """The learner's loop: each step's rollouts in order (`asked_at`: when the learner asked for
        them, perf_counter), until the last step or a stop. The learner publishes version N after
        step N and then calls `start(N)`, which lets the step K ahead begin."""
        for step in range(self.first, self.last + 1):
            if stop_requested():
                return
            asked_at = time.perf_counter()
            self.start(learner_version=step - 1)
            rolled = await self.take(step)
            rolled.asked_at = asked_at
            yield rolled

    def metrics(self, rolled: StepRollouts, admitted: Admitted, update_started: float, update_finished: float) -> dict[str, float]:
        """The step's async/ metrics (times as epoch seconds, so steps of a resumed run line up)."""
        return {
            "async/max_staleness": float(self.settings.max_staleness),
            "async/version": float(rolled.version),
            "async/mean_staleness": statistics.fmean(admitted.staleness) if admitted.staleness else 0.0,
            "async/stale_dropped": float(admitted.stale_dropped),
            "async/stale_corrected": float(admitted.stale_corrected),
            "async/learner_idle_s": self._learner_idle_s,
            "async/rollout_idle_s": self._clock.take_idle(),
            "async/rollout_start": rolled.started_at, "async/rollout_end": rolled.finished_at,
            "async/update_start": update_started, "async/update_end": update_finished,
        }

    async def close(self) -> None:
        """Abandon the rollouts in flight (a stop, a failure, or the last step done)."""
        for task in self._tasks.values():
            task.cancel()
        await asyncio.gather(*self._tasks.values(), return_exceptions=True)
        self._tasks.clear()


@dataclass
class AdapterVersions:
    """The weight versions the gateway serves for a run's rollouts.

    With K = 0 the run's one adapter name is reloaded after each update (the synchronous loop: no
    rollout is in flight then). With K > 0 every version gets its own name, `run-<id>-v<N>`, and the
    K+1 newest stay loaded: a step in flight samples from a version at most K behind the newest,
    so nothing it uses is unloaded under it and no name is ever reloaded in place.
    """

    load: Callable[[str, int], Awaitable[None]]      # (name, version) -> the gateway serves it
    unload: Callable[[str], Awaitable[None]]
    run_id: str
    max_staleness: int
    loaded: list[int] = field(default_factory=list)

    def name(self, version: int) -> str:
        return f"run-{self.run_id}" if self.max_staleness == 0 else f"run-{self.run_id}-v{version}"

    @property
    def newest(self) -> int:
        return self.loaded[-1]

    async def publish(self, version: int) -> None:
        await self.load(self.name(version), version)
        if self.max_staleness == 0:
            self.loaded = [version]
            return
        self.loaded.append(version)
        while len(self.loaded) > self.max_staleness + 1:
            await self.unload(self.name(self.loaded.pop(0)))

    async def unload_all(self) -> None:
        for version in dict.fromkeys(self.name(v) for v in self.loaded):
            try:
                await self.unload(version)
            except Exception:
                pass   # the gateway may be gone; its adapters die with it
        self.loaded = []
