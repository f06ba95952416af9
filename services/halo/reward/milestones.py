"""Site progress milestones: detection of a config rule on a transition.

Evidence, in order of trust: the site's state diff (the /finish JSON the evaluator reads) when
the transition carries it and the rule has state checks; otherwise the page (URL, title, AXTree
text) and the action (kind, element acted on, text). Paying once per episode is the episode's
business (shaping.py), not the rule's.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import jmespath

from halo.reward.config import REGEX_FLAGS, ActionCheck, MilestoneSpec, PageCheck, StateCheck
from halo.reward.pages import PageSnapshot
from halo.reward.transition import Transition


def _rx(pattern: str) -> re.Pattern[str] | None:
    return re.compile(pattern, REGEX_FLAGS) if pattern else None


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


@dataclass(frozen=True)
class _State:
    query: Any            # compiled JMESPath, or None
    matches: re.Pattern[str] | None
    path: re.Pattern[str] | None

    @classmethod
    def compile(cls, check: StateCheck) -> "_State":
        return cls(jmespath.compile(check.query) if check.query else None, _rx(check.matches), _rx(check.path))

    def holds(self, page: PageSnapshot) -> bool:
        if self.path is not None:
            return any(self.path.search(p) for p in page.truthy_leaf_paths)
        try:
            value = self.query.search(page.state)
        except jmespath.exceptions.JMESPathError:   # e.g. values() of a string: not this shape of state
            return False
        if self.matches is None:
            return bool(value)
        values = value if isinstance(value, list) else [value]
        return any(v is not None and self.matches.search(_as_text(v)) for v in values)


@dataclass(frozen=True)
class _Page:
    url: re.Pattern[str] | None
    title: re.Pattern[str] | None
    axtree: re.Pattern[str] | None

    @classmethod
    def compile(cls, check: PageCheck) -> "_Page":
        return cls(_rx(check.url), _rx(check.title), _rx(check.axtree))

    def holds(self, page: PageSnapshot) -> bool:
        pairs = ((self.url, page.url), (self.title, page.title), (self.axtree, page.axtree))
        return all(rx.search(text) for rx, text in pairs if rx is not None)


@dataclass(frozen=True)
class _Action:
    kinds: frozenset[str]
    target: re.Pattern[str] | None
    text: re.Pattern[str] | None

    @classmethod
    def compile(cls, check: ActionCheck) -> "_Action":
        return cls(frozenset(check.kinds), _rx(check.target), _rx(check.text))

    def holds(self, transition: Transition) -> bool:
        facts = transition.facts
        if facts is None or not transition.valid:   # a click that failed did not click Save
            return False
        if self.kinds and facts.kind not in self.kinds:
            return False
        if self.target is not None and (facts.target is None or not self.target.search(facts.target.label)):
            return False
        return self.text is None or bool(self.text.search(facts.text))


@dataclass(frozen=True)
class Milestone:
    site: str
    name: str
    reward: float
    description: str
    state: tuple[_State, ...]
    page: tuple[_Page, ...]
    action: tuple[_Action, ...]

    @classmethod
    def compile(cls, site: str, spec: MilestoneSpec) -> "Milestone":
        return cls(
            site, spec.name, spec.reward, spec.description,
            tuple(_State.compile(c) for c in spec.state), tuple(_Page.compile(c) for c in spec.page),
            tuple(_Action.compile(c) for c in spec.action),
        )

    @property
    def qualified_name(self) -> str:
        return f"{self.site}.{self.name}"

    def evidence(self, page: PageSnapshot, transition: Transition | None = None) -> str:
        """Why the milestone holds on `page` (after `transition`, when given); "" when it does not."""
        if self.state and page.state is not None:
            return "state diff" if any(c.holds(page) for c in self.state) else ""
        if any(c.holds(page) for c in self.page):
            return "page"
        if transition is not None and any(c.holds(transition) for c in self.action):
            return "action"
        return ""


def compile_milestones(site: str, specs: tuple[MilestoneSpec, ...]) -> tuple[Milestone, ...]:
    return tuple(Milestone.compile(site, spec) for spec in specs)
