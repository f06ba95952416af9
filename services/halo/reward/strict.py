"""Strict success: agisdk's verdict AND HALO's own checks of what the goal asks that agisdk's
script lets pass (the leniencies `halo tasks audit` finds; docs/reference/graders.md).

The checks are data (configs/strict_checks.yaml): per task, a list of rules, each one of a few
kinds that serve many tasks, applied to the /finish state JSON with a jmespath query:

    all_match   every value the query returns (at least one) matches the regex `pattern`
    none_match  no string the query returns matches `pattern`
    count       the query returns a list whose length is within [min, max]
    at_least    the query returns a number >= `value`
    equals      the query returns exactly `expected` (a number, string, list or mapping)

A task without rules is strict-successful exactly when agisdk says so. Strict success never
grants what agisdk refuses: HALO's numbers stay comparable with REAL's under `--success agisdk`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import jmespath
import jmespath.exceptions
import yaml

#: configs/strict_checks.yaml of the repository (services/halo/reward/strict.py -> repo root).
DEFAULT_CHECKS_PATH = Path(__file__).resolve().parents[3] / "configs" / "strict_checks.yaml"

KINDS = ("all_match", "none_match", "count", "at_least", "equals")


@dataclass(frozen=True)
class Rule:
    """One check of a task's state; `why` says which part of the goal it holds the agent to."""

    check: str
    query: str
    why: str
    pattern: str = ""
    min: int | None = None
    max: int | None = None
    value: float | None = None
    expected: Any = None

    def __post_init__(self) -> None:
        if self.check not in KINDS:
            raise ValueError(f"unknown strict check {self.check!r} (one of {', '.join(KINDS)})")
        jmespath.compile(self.query)   # a bad query is a bad config, found when loading
        if self.check in ("all_match", "none_match"):
            re.compile(self.pattern)

    def passes(self, state: dict[str, Any]) -> bool:
        try:
            found = jmespath.search(self.query, state)
        except jmespath.exceptions.JMESPathError:
            return False   # a function given what the goal's state would not hold (sum of no orders): not passed
        if self.check == "equals":
            return found == self.expected
        if self.check == "at_least":
            return isinstance(found, (int, float)) and not isinstance(found, bool) and found >= (self.value or 0)
        if self.check == "count":
            if not isinstance(found, list):
                found = [] if found is None else [found]
            return (self.min is None or len(found) >= self.min) and (self.max is None or len(found) <= self.max)
        values = _strings(found)
        if self.check == "all_match":
            return bool(values) and all(re.search(self.pattern, v) for v in values)
        return not any(re.search(self.pattern, v) for v in values)    # none_match


def _strings(found: Any) -> list[str]:
    if found is None:
        return []
    items = found if isinstance(found, list) else [found]
    return [str(item) for item in items if item is not None and not isinstance(item, (list, dict))]


@dataclass(frozen=True)
class StrictVerdict:
    success: bool                                   # agisdk's verdict AND every rule
    failed: list[str] = field(default_factory=list)   # `why` of each rule that did not pass


@dataclass(frozen=True)
class StrictChecks:
    rules: dict[str, tuple[Rule, ...]]   # task id -> its rules

    def verdict(self, task_id: str, agisdk_success: bool, state: dict[str, Any] | None) -> StrictVerdict:
        failed = [rule.why for rule in self.rules.get(task_id, ()) if state is None or not rule.passes(state)]
        return StrictVerdict(agisdk_success and not failed, failed)


def parse_checks(raw: Any) -> StrictChecks:
    if not isinstance(raw, dict) or not isinstance(raw.get("tasks"), dict):
        raise ValueError("strict checks: a mapping with `tasks: {task id: [rule, ...]}`")
    rules: dict[str, tuple[Rule, ...]] = {}
    for task_id, items in raw["tasks"].items():
        if not isinstance(items, list) or not items:
            raise ValueError(f"strict checks of {task_id}: a non-empty list of rules")
        rules[task_id] = tuple(Rule(**item) for item in items)
    return StrictChecks(rules)


@cache
def load_checks(path: str | Path = DEFAULT_CHECKS_PATH) -> StrictChecks:
    return parse_checks(yaml.safe_load(Path(path).read_text()))
