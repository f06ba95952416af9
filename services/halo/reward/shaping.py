"""Dense shaping reward of one transition, against the episode's memory.

Components (configs/rewards.yaml names the weights):

* valid_action / invalid_action: the model output parsed and the env executed it, or not.
* novelty: the after-state (pages.state_key) was never seen in this episode, at most
  `novelty_cap` times per episode. Returning to a seen state earns nothing, so undo/redo and
  scrolling back and forth earn nothing.
* loop: the same action again from the same view (pages.view_key), or the states cycling
  A-B-A-B. At most one loop penalty per transition; unparsed actions are already penalised.
* milestone:<name>: site progress, each paid once per episode, never when it already held on
  the episode's first page; redoing a milestone after undoing it earns nothing.
* success: paid by the final evaluation (core.py), once per episode.

An env failure scores 0 and leaves the memory untouched: the transition is dropped from learning.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass, field

from halo.tasks.registry import TaskSpec
from halo.reward.config import RewardConfig
from halo.reward.milestones import Milestone, compile_milestones
from halo.reward.pages import PageSnapshot
from halo.reward.transition import Transition


@dataclass(frozen=True)
class Component:
    name: str
    value: float
    detail: str = ""


@dataclass(frozen=True)
class Breakdown:
    components: tuple[Component, ...]
    env_failure: bool = False
    episode_return: float = 0.0

    @property
    def total(self) -> float:
        return sum(c.value for c in self.components)

    def value_of(self, name: str) -> float:
        return sum(c.value for c in self.components if c.name == name)

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.components]


@dataclass
class Episode:
    """Everything the reward service remembers about one episode."""

    id: str
    task: TaskSpec
    config: RewardConfig                                  # with this episode's overrides applied
    overrides: dict[str, float]
    milestones: tuple[Milestone, ...]
    last_used: float
    seen_states: set[str] = field(default_factory=set)
    state_trail: list[str] = field(default_factory=list)  # state keys in visiting order
    tried: collections.Counter[tuple[str, str]] = field(default_factory=collections.Counter)  # (view, action)
    paid: dict[str, float] = field(default_factory=dict)  # milestone name -> reward, in paying order
    baseline: set[str] = field(default_factory=set)       # milestones that held on the first page
    started: bool = False
    novelty_paid: int = 0
    transitions: int = 0
    env_failures: int = 0
    episode_return: float = 0.0
    success_paid: bool = False
    last_scored: tuple[tuple, Breakdown] | None = None    # (request fingerprint, result): retries

    @property
    def site(self) -> str:
        return self.task.site

    @classmethod
    def open(
        cls, episode_id: str, task: TaskSpec, base: RewardConfig, overrides: dict[str, float], now: float,
        initial: PageSnapshot | None = None,
    ) -> "Episode":
        config = base.with_overrides(overrides)
        milestones = compile_milestones(task.site, config.milestones_for(task.site, task.id))
        episode = cls(episode_id, task, config, dict(overrides), milestones, now)
        if initial is not None:
            episode.begin(initial)
        return episode

    def begin(self, first_page: PageSnapshot) -> None:
        """The episode's first page: seen, and whatever already holds there is not progress."""
        self.started = True
        self.seen_states.add(first_page.state_key)
        self.state_trail.append(first_page.state_key)
        self.baseline = {m.name for m in self.milestones if m.evidence(first_page)}


def score_transition(episode: Episode, t: Transition) -> Breakdown:
    """Score `t` and update the episode's memory (idempotent for an immediate retry of the same request)."""
    fingerprint = _fingerprint(t)
    if episode.last_scored is not None and episode.last_scored[0] == fingerprint:
        return episode.last_scored[1]
    if t.env_failure:
        episode.env_failures += 1
        result = Breakdown((Component("env_failure", 0.0, "environment failure: not scored, drop from training"),),
                           env_failure=True, episode_return=episode.episode_return)
        episode.last_scored = (fingerprint, result)
        return result
    if not episode.started:
        episode.begin(t.before)
    # A tree search may restore a snapshot the episode never saw: it is seen now, but unpaid.
    episode.seen_states.add(t.before.state_key)
    w = episode.config.weights
    parts: list[Component] = []

    if t.valid:
        parts.append(Component("valid_action", w.valid_action_bonus, "parsed and executed"))
    elif not t.action_parsed or t.action is None:
        parts.append(Component("invalid_action", w.action_error_penalty, "model output did not parse into an action"))
    else:
        parts.append(Component("invalid_action", w.action_error_penalty, "the env rejected the action"))

    loop = _loop_reason(episode, t)
    after_key = t.after.state_key
    if after_key not in episode.seen_states:
        episode.seen_states.add(after_key)
        cap = int(w.novelty_cap)
        if cap == 0 or episode.novelty_paid < cap:
            episode.novelty_paid += 1
            parts.append(Component("novelty", w.novelty_bonus, f"new state {after_key[:8]}"))
    episode.state_trail.append(after_key)
    if loop is None:
        loop = _cycle_reason(episode.state_trail)
    if loop is not None:
        parts.append(Component("loop", w.loop_penalty, loop))

    for m in episode.milestones:
        if m.name in episode.paid or m.name in episode.baseline:
            continue
        evidence = m.evidence(t.after, t)
        if evidence:
            value = m.reward * w.progress_weight
            episode.paid[m.name] = value
            parts.append(Component(f"milestone:{m.name}", value, f"{m.description} ({evidence})"))

    episode.transitions += 1
    result = Breakdown(tuple(parts))
    episode.episode_return += result.total
    result = Breakdown(result.components, episode_return=episode.episode_return)
    episode.last_scored = (fingerprint, result)
    return result


def _loop_reason(episode: Episode, t: Transition) -> str | None:
    """The same action from the same view as an earlier step (counted before this one)."""
    facts = t.facts
    if facts is None or not t.action_parsed:
        return None
    key = (t.before.view_key, facts.signature)
    episode.tried[key] += 1
    if episode.tried[key] > 1:
        return f"repeated {facts.signature} from the same view ({episode.tried[key]}x)"
    return None


def _cycle_reason(trail: list[str]) -> str | None:
    """A-B-A-B: the agent went back and forth between two states twice."""
    if len(trail) >= 4 and trail[-1] == trail[-3] and trail[-2] == trail[-4] and trail[-1] != trail[-2]:
        return f"cycling between states {trail[-2][:8]} and {trail[-1][:8]}"
    return None


def _fingerprint(t: Transition) -> tuple:
    return (
        t.step_index, t.facts.signature if t.facts else None, t.action_parsed, t.action_ok, t.env_failure,
        t.before.view_key, t.after.view_key, t.done,
    )
