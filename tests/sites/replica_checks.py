"""What every REAL replica's test module checks the same way: its tasks verified through the env
service (oracle 1 without action errors, no-op 0, each labelled wrong attempt 0 and wrong on purpose,
not by accident), its /finish state read over HTTP and scored by agisdk's scripts, its milestones,
and the registry and ListTasks serving exactly its tasks."""

from __future__ import annotations

import functools
import html
import json
import os
import re
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager

import httpx
import pytest

from halo.cli.curriculum import suite
from halo.cli.verify import VerifyRow, verify_site_tasks
from halo.client.env import EnvClient
from halo.reward.evaluator import evaluate
from halo.sites.app import create_app
from halo.sites.replica import Replica
from halo.sites.registry import attempts_for
from halo.tasks.registry import TaskSpec, default_registry


def natural_task_order(task_ids: Iterable[str]) -> list[str]:
    return sorted(task_ids, key=lambda t: int(t.rsplit("-", 1)[1]))


#: `HALO_REPLICA_SWEEP=full` (`make test-replicas`) runs every labelled wrong attempt of every task,
#: as `halo tasks verify` does. By default (CI) every task's oracle and no-op run, and the wrong
#: attempts of `wrong_swept_tasks`: the wrong attempts are most of the sweep's actions, and one
#: task per site (plus the real-easy curriculum) keeps each site's wrong-attempt path tested.
FULL_SWEEP = os.environ.get("HALO_REPLICA_SWEEP", "") == "full"


@functools.cache
def wrong_swept_tasks() -> frozenset[str]:
    """Tasks whose wrong attempts the default sweep runs: each site's first task (a wrong attempt
    per site's state and scripts) and the real-easy curriculum (a wrong attempt that scored there
    would teach `halo train --suite real-easy` the wrong thing). Every task under FULL_SWEEP."""
    ids = [t.id for t in default_registry().list(suite="real-v2") if t.replica_available]
    if FULL_SWEEP:
        return frozenset(ids)
    first_of_site: dict[str, str] = {}
    for task_id in natural_task_order(ids):
        first_of_site.setdefault(task_id.rsplit("-", 1)[0], task_id)
    return frozenset(first_of_site.values()) | frozenset(suite("real-easy").select())


def _swept_labels(task: TaskSpec, labels: list[str]) -> list[str]:
    return labels if task.id in wrong_swept_tasks() else []


async def verify_all(env: EnvClient, task_ids: Iterable[str], sessions: int = 4) -> dict[str, VerifyRow]:
    """Oracle and no-op of every task, and the wrong attempts of `wrong_swept_tasks()`, `sessions`
    env sessions at a time (text-only observations). Four, not the pool's eight: an oracle's
    actions must finish within the env's 3 s action timeout, and fewer pages at once keep each
    action's share of the cores."""
    tasks = [default_registry().get(t) for t in natural_task_order(task_ids)]
    rows = await verify_site_tasks(env, tasks, sessions=sessions, wrong_labels=_swept_labels)
    return {row.task.id: row for row in rows}


def verified_fixture(task_ids: Iterable[str]):
    """A module fixture `verified`: the rows of these tasks from the session's one sweep
    (tests/sites/conftest.py, `replica_rows`)."""
    ids = list(task_ids)

    @pytest.fixture(scope="module")
    def verified(replica_rows) -> dict[str, VerifyRow]:
        return {task_id: replica_rows[task_id] for task_id in ids}

    return verified


def assert_verified(row: VerifyRow) -> None:
    """Oracle 1 with no action errors, no-op 0, and every labelled wrong attempt that the sweep ran
    (`wrong_swept_tasks`) 0, wrong on purpose, not by accident. Every task has wrong attempts."""
    assert row.oracle is not None and row.oracle.errors == [], row.oracle and row.oracle.errors
    assert row.oracle.score == 1.0, (row.oracle.evaluation, row.oracle.state)
    assert row.noop is not None and row.noop.score == 0.0, row.noop.evaluation
    _, labelled = attempts_for(row.task.site, row.task.id)
    assert labelled, "every task has a wrong attempt"
    assert set(row.wrong) == (set(labelled) if row.task.id in wrong_swept_tasks() else set())
    for label, wrong in row.wrong.items():
        assert wrong.errors == [], (label, wrong.errors)
        assert wrong.score == 0.0, (label, wrong.evaluation, wrong.state)


@asynccontextmanager
async def site_client(replica: type[Replica], task_id: str, run_id: str = "run-3") -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client on a sites app serving only `replica`, configured for `task_id` the way agisdk does."""
    transport = httpx.ASGITransport(app=create_app([replica]))
    async with httpx.AsyncClient(transport=transport, base_url="http://sites", follow_redirects=True) as client:
        r = await client.get(f"/{replica.site_id}//config?run_id={run_id}&task_id=v2.{task_id}")
        assert r.status_code == 200, r.text
        yield client


async def finish_state(http: httpx.AsyncClient, site: str) -> dict:
    """The /finish JSON of this client's session on `site` (what agisdk's scripts read)."""
    page = (await http.get(f"/{site}//finish")).text
    body = re.search(r"<pre>(.*)</pre>", page, re.S)
    assert body, page[:200]
    return json.loads(html.unescape(body.group(1)))


def score(task_id: str, state: dict) -> float:
    return evaluate(default_registry().get(task_id), state).score


def milestones_by_step(breakdowns) -> list[list[str]]:
    """The milestones each transition of a rollout paid, step by step (names without the 'milestone:' prefix)."""
    return [[c.name.removeprefix("milestone:") for c in b.components if c.name.startswith("milestone:")] for b in breakdowns]


def site_milestone_names(site: str) -> set[str]:
    from halo.reward.config import load_config

    return {m.name for m in load_config().milestones[site]}


def assert_serves_every_v2_task(replica: type[Replica], count: int, *, notes_for_every_task: bool = True) -> None:
    """The registry lists the site's `count` REAL v2 tasks as served and scorable (each with its caveat
    spelled out, unless the site's scripts have none to note), ListTasks(replica_only) in the registry
    returns them, and each has an oracle and labelled wrong attempts."""
    site = replica.site_id
    v2 = default_registry().list(site=site, suite="real-v2")
    assert {t.id for t in v2} == replica.task_ids and len(v2) == count
    assert all(t.replica_available and t.scorable for t in v2)
    if notes_for_every_task:
        assert all(t.notes for t in v2), [t.id for t in v2 if not t.notes]
    assert set(replica.oracles) == set(replica.wrong_attempts) == replica.task_ids
    assert {t.id for t in default_registry().list(site=site, replica_only=True)} == replica.task_ids


async def assert_listed_by_env(env: EnvClient, replica: type[Replica]) -> None:
    """ListTasks(replica_only) over gRPC names exactly the replica's tasks for its site."""
    listed = await env.list_tasks(site=replica.site_id, replica_only=True)
    assert {t.id for t in listed} == replica.task_ids
