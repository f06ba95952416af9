"""Aggregates of an evaluation's episodes (per site, per task) and how they are written in tables."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any


ALL = "all"


@dataclass(frozen=True)
class Row:
    """Aggregates of a group of episodes (a site, a task, or all)."""

    name: str
    episodes: int
    scored: int
    successes: int
    success_rate: float        # nan when nothing was scored
    mean_steps: float
    validity: float
    mean_return: float
    env_failures: int
    unscorable: int
    site: str = ""
    successes_strict: int = 0
    success_rate_strict: float = math.nan   # agisdk AND HALO's strict checks; nan when nothing was scored

    def as_dict(self) -> dict[str, Any]:
        return self.__dict__.copy()


def mean_of(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else math.nan


def aggregate(name: str, episodes: Sequence[dict[str, Any]], site: str = "") -> Row:
    finished = [e for e in episodes if not e.get("env_failure")]
    scored = [e for e in finished if e.get("scorable", True)]
    steps = sum(e["length"] for e in finished)
    successes = sum(bool(e["success"]) for e in scored)
    strict = sum(bool(e.get("success_strict")) for e in scored)   # episodes stored before strict success: 0
    return Row(
        name=name, episodes=len(episodes), scored=len(scored), successes=successes,
        success_rate=successes / len(scored) if scored else math.nan,
        mean_steps=mean_of([e["length"] for e in finished]),
        validity=sum(e["valid_actions"] for e in finished) / steps if steps else math.nan,
        mean_return=mean_of([e["return"] for e in finished]),
        env_failures=len(episodes) - len(finished), unscorable=len(finished) - len(scored), site=site,
        successes_strict=strict, success_rate_strict=strict / len(scored) if scored else math.nan,
    )


def group_by(episodes: Iterable[dict[str, Any]], key: str) -> dict[str, list[dict[str, Any]]]:
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for e in episodes:
        groups[e[key]].append(e)
    return dict(sorted(groups.items()))


def site_rows(episodes: Sequence[dict[str, Any]]) -> list[Row]:
    """One row per site, then the `all` row."""
    return [aggregate(site, eps) for site, eps in group_by(episodes, "site").items()] + [aggregate(ALL, episodes)]


def task_rows(episodes: Sequence[dict[str, Any]]) -> list[Row]:
    return [aggregate(task, eps, site=eps[0]["site"]) for task, eps in group_by(episodes, "task_id").items()]


def pct(x: float) -> str:
    return "–" if math.isnan(x) else f"{x:.0%}"


def num(x: float, digits: int = 1) -> str:
    return "–" if math.isnan(x) else f"{x:.{digits}f}"


def success_cell(r: Row, strict: bool = False) -> str:
    """`successes/scored (rate)` under agisdk's verdict, or under strict success."""
    if strict:
        return f"{r.successes_strict}/{r.scored} ({pct(r.success_rate_strict)})"
    return f"{r.successes}/{r.scored} ({pct(r.success_rate)})"


#: The per-task tables of the report and the viewer.
TASK_HEADER = ["task", "site", "success", "strict success", "mean steps", "validity", "mean return"]


def task_cells(r: Row) -> list[str]:
    return [r.name, r.site, success_cell(r), success_cell(r, strict=True), num(r.mean_steps), pct(r.validity), num(r.mean_return, 2)]


SITE_HEADER = ["site", "episodes", "success rate", "successes", "strict success", "mean steps", "validity", "mean return",
               "env failures"]


def site_cells(r: Row) -> list[str]:
    name = f"**{r.name}**" if r.name == ALL else r.name
    return [name, str(r.episodes), pct(r.success_rate), f"{r.successes}/{r.scored}",
            f"{pct(r.success_rate_strict)} ({r.successes_strict}/{r.scored})", num(r.mean_steps), pct(r.validity),
            num(r.mean_return, 2), str(r.env_failures)]


def outcome(e: dict[str, Any]) -> str:
    if e.get("env_failure"):
        return "env failure"
    if not e.get("scorable", True):
        return "unscorable"
    return "success" if e["success"] else "failure"
