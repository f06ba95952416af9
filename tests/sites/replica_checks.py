"""Checks shared by the replica test modules: a verified task row, a replica's /finish state over
HTTP, and a task's score by agisdk's script."""

from __future__ import annotations

import html
import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx

from halo.tasks.registry import default_registry
from halo.reward.evaluator import evaluate
from halo.sites.app import create_app
from halo.sites.replica import Replica
from halo.cli.verify import VerifyRow


def assert_verified(row: VerifyRow) -> None:
    """Oracle 1 with no action errors, no-op 0, every labelled wrong attempt 0 (and wrong on purpose, not by accident)."""
    assert row.oracle is not None and row.oracle.errors == [], row.oracle and row.oracle.errors
    assert row.oracle.score == 1.0, (row.oracle.evaluation, row.oracle.state)
    assert row.noop is not None and row.noop.score == 0.0, row.noop.evaluation
    assert row.wrong, "every task has a wrong attempt"
    for label, wrong in row.wrong.items():
        assert wrong.errors == [], (label, wrong.errors)
        assert wrong.score == 0.0, (label, wrong.evaluation, wrong.state)


@asynccontextmanager
async def site_client(replica: type[Replica], task_id: str) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client on a sites app serving only `replica`, configured for `task_id` the way agisdk does."""
    transport = httpx.ASGITransport(app=create_app([replica]))
    async with httpx.AsyncClient(transport=transport, base_url="http://sites", follow_redirects=True) as client:
        r = await client.get(f"/{replica.site_id}//config?run_id=run-3&task_id=v2.{task_id}&latency=0")
        assert r.status_code == 200
        yield client


async def finish_state(http: httpx.AsyncClient, site: str) -> dict:
    page = (await http.get(f"/{site}//finish")).text
    return json.loads(html.unescape(re.search(r"<pre>(.*)</pre>", page, re.S).group(1)))


def score(task_id: str, state: dict) -> float:
    return evaluate(default_registry().get(task_id), state).score


def milestones_by_step(breakdowns) -> list[list[str]]:
    """The milestones each transition of a rollout paid, step by step (names without the 'milestone:' prefix)."""
    return [[c.name.removeprefix("milestone:") for c in b.components if c.name.startswith("milestone:")] for b in breakdowns]


def site_milestone_names(site: str) -> set[str]:
    from halo.reward.config import load_config

    return {m.name for m in load_config().milestones[site]}


def assert_serves_every_v2_task(replica: type[Replica], count: int) -> None:
    """The registry lists the site's `count` REAL v2 tasks as served and scorable, each with its caveat,
    ListTasks(replica_only) returns them, and each has an oracle and labelled wrong attempts."""
    site = replica.site_id
    v2 = default_registry().list(site=site, suite="real-v2")
    assert {t.id for t in v2} == replica.task_ids and len(v2) == count
    assert all(t.replica_available and t.scorable and t.notes for t in v2)
    assert set(replica.oracles) == set(replica.wrong_attempts) == replica.task_ids
    assert {t.id for t in default_registry().list(site=site, replica_only=True)} == replica.task_ids


def natural_task_order(task_ids) -> list[str]:
    return sorted(task_ids, key=lambda t: int(t.rsplit("-", 1)[1]))


async def verify_all(env, task_ids, sessions: int = 4) -> dict[str, VerifyRow]:
    """Oracle, no-op and wrong attempts of every task, `sessions` env sessions at a time."""
    from halo.cli.verify import verify_site_tasks

    rows = await verify_site_tasks(env, [default_registry().get(t) for t in natural_task_order(task_ids)], sessions=sessions)
    return {row.task.id: row for row in rows}
