"""Checks shared by the replica test modules: a verified task row, a replica's /finish state over
HTTP, and a task's score by agisdk's script."""

from __future__ import annotations

import html
import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx

from halo.env.tasks import default_registry
from halo.reward.evaluator import evaluate
from halo.sites.app import create_app
from halo.sites.replica import Replica
from halo.sites.verify import VerifyRow


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
