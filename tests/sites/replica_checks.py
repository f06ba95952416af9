"""What every REAL replica's test module checks the same way: its tasks verified through the env
service (oracle 1, no-op 0, each labelled wrong attempt 0, none by accident), and its /finish state
read over HTTP and scored by agisdk's scripts."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable

import httpx

from halo.client.env import EnvClient
from halo.env.tasks import default_registry
from halo.reward.evaluator import evaluate
from halo.sites.replica import Replica
from halo.sites.verify import VerifyRow, verify_site_tasks


async def verify_tasks(env: EnvClient, task_ids: Iterable[str], sessions: int = 8) -> dict[str, VerifyRow]:
    """Oracle, no-op and wrong attempts of every task, `sessions` env sessions at once (text-only observations)."""
    tasks = [default_registry().get(t) for t in task_ids]
    return {row.task.id: row for row in await verify_site_tasks(env, tasks, sessions=sessions)}


def assert_verified(row: VerifyRow) -> None:
    assert row.oracle is not None and row.oracle.errors == [], row.oracle and row.oracle.errors
    assert row.oracle.score == 1.0, (row.oracle.evaluation, row.oracle.state)
    assert row.noop is not None and row.noop.score == 0.0, row.noop.evaluation
    assert row.wrong, "every task has a wrong attempt"
    for label, wrong in row.wrong.items():
        assert wrong.errors == [], (label, wrong.errors)   # wrong on purpose, not by accident
        assert wrong.score == 0.0, (label, wrong.evaluation, wrong.state)


async def finish_state(http: httpx.AsyncClient, site: str) -> dict:
    """The /finish JSON of this client's session on `site` (what agisdk's scripts read)."""
    page = (await http.get(f"/{site}/finish")).text
    body = re.search(r"<pre>(.*)</pre>", page, re.S)
    assert body, page[:200]
    return json.loads(html.unescape(body.group(1)))


def score(task_id: str, state: dict) -> float:
    return evaluate(default_registry().get(task_id), state, "").score


def assert_serves_every_task(replica: type[Replica], count: int) -> None:
    """The replica serves every REAL v2 task of its site, each scorable and with an oracle and wrong attempts."""
    v2 = default_registry().list(site=replica.site_id, suite="real-v2")
    assert {t.id for t in v2} == replica.task_ids and len(v2) == count
    assert all(t.replica_available and t.scorable for t in v2)
    assert {t.id for t in default_registry().list(site=replica.site_id, replica_only=True)} == replica.task_ids
    assert set(replica.oracles) == set(replica.wrong_attempts) == replica.task_ids


async def assert_listed_by_env(env: EnvClient, replica: type[Replica]) -> None:
    """ListTasks(replica_only) over gRPC names exactly the replica's tasks for its site."""
    listed = await env.list_tasks(site=replica.site_id, replica_only=True)
    assert {t.id for t in listed} == replica.task_ids
