"""Shared by the replica test files: verify a site's tasks through the env service concurrently,
and assert a row the way every replica must pass (oracle 1 without action errors, no-op 0, each
labelled wrong attempt 0 without action errors)."""

from __future__ import annotations


from collections.abc import Iterable

import contextlib

import httpx
import pytest

from halo.client.env import EnvClient
from halo.tasks.registry import default_registry
from halo.cli.verify import VerifyRow, verify_site_tasks


async def verify_all(env: EnvClient, task_ids: Iterable[str], sessions: int = 8) -> dict[str, VerifyRow]:
    """Every attempt of every task, at most `sessions` env sessions at once (text-only observations)."""
    registry = default_registry()
    rows = await verify_site_tasks(env, [registry.get(t) for t in task_ids], sessions=sessions)
    return {row.task.id: row for row in rows}


def assert_verifies(row: VerifyRow) -> None:
    assert row.oracle is not None and row.oracle.errors == [], row.oracle and row.oracle.errors
    assert row.oracle.score == 1.0, (row.oracle.evaluation, row.oracle.state)
    assert row.noop is not None and row.noop.score == 0.0, row.noop.evaluation
    assert row.wrong, "every task has a wrong attempt"
    for label, wrong in row.wrong.items():
        assert wrong.errors == [], (label, wrong.errors)   # wrong on purpose, not by accident
        assert wrong.score == 0.0, (label, wrong.evaluation, wrong.state)


def by_number(task_ids: Iterable[str]) -> list[str]:
    return sorted(task_ids, key=lambda t: int(t.rsplit("-", 1)[1]))





async def finish_state(http, site: str) -> dict:
    """The /finish JSON of `site` for the httpx client's context (what agisdk's scripts read)."""
    import html
    import json
    import re

    page = (await http.get(f"/{site}//finish")).text
    return json.loads(html.unescape(re.search(r"<pre>(.*)</pre>", page, re.S).group(1)))


def score(task_id: str, state: dict) -> float:
    from halo.reward.evaluator import evaluate

    return evaluate(default_registry().get(task_id), state).score


def verified_fixture(task_ids: Iterable[str]):
    """A module fixture `verified`: every attempt of these tasks, run once for the module's tests."""
    @pytest.fixture(scope="module")
    async def verified(env) -> dict[str, VerifyRow]:
        return await verify_all(env, task_ids)

    return verified


def assert_replica_serves(cls, count: int) -> None:
    """The registry lists the site's REAL v2 tasks as served by the replica, each scorable and with
    its caveats spelled out, and the replica has an oracle and wrong attempts for each."""
    v2 = default_registry().list(site=cls.site_id, suite="real-v2")
    assert {t.id for t in v2} == cls.task_ids and len(v2) == count
    assert all(t.replica_available and t.scorable and t.notes for t in v2)
    assert set(cls.oracles) == set(cls.wrong_attempts) == cls.task_ids
    assert {t.id for t in default_registry().list(site=cls.site_id, replica_only=True)} == cls.task_ids  # ListTasks(replica_only)


@contextlib.asynccontextmanager
async def site_client(cls, task_id: str, run_id: str):
    """An HTTP client on a sites app serving only `cls`, configured for `task_id` (REAL's /config)."""
    from halo.sites.app import create_app

    transport = httpx.ASGITransport(app=create_app([cls]))
    async with httpx.AsyncClient(transport=transport, base_url="http://sites", follow_redirects=True) as client:
        r = await client.get(f"/{cls.site_id}//config?run_id={run_id}&task_id=v2.{task_id}")
        assert r.status_code == 200, r.text
        yield client


def milestones_by_step(breakdowns) -> list[list[str]]:
    """The milestones each transition of a rollout paid, step by step (names without the 'milestone:' prefix)."""
    return [[c.name.removeprefix("milestone:") for c in b.components if c.name.startswith("milestone:")] for b in breakdowns]


def site_milestone_names(site: str) -> set[str]:
    from halo.reward.config import load_config

    return {m.name for m in load_config().milestones[site]}
