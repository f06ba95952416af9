"""Contract tests every replica must pass: REAL's /config + /finish, isolation under concurrency."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from halo.tasks.registry import default_registry
from halo.sites.app import create_app
from halo.sites.diff import detailed_diff
from halo.sites.registry import REPLICA_TYPES, attempts_for
from halo.cli.verify import Attempt, VerifyRow, run_attempts_once_more, verify_task

SITES_WITH_ORACLES = [cls.site_id for cls in REPLICA_TYPES if cls.oracles]


def test_detailed_diff_matches_deep_object_diff_semantics():
    old = {"a": 1, "b": {"c": 2, "d": [1, 2]}, "gone": {"x": 1}}
    new = {"a": 2, "b": {"c": 2, "d": [1, 3, 4]}, "new": True}
    assert detailed_diff(old, new) == {
        "added": {"b": {"d": {"2": 4}}, "new": True},
        "deleted": {"gone": None},
        "updated": {"a": 2, "b": {"d": {"1": 3}}},
    }
    assert detailed_diff(old, old) == {"added": {}, "deleted": {}, "updated": {}}


async def test_config_and_finish_honour_real_urls_with_double_slashes():
    transport = httpx.ASGITransport(app=create_app())
    async with httpx.AsyncClient(transport=transport, base_url="http://sites") as http:
        r = await http.get("/playground//config?run_id=7&task_id=playground-signup&latency=0")
        assert r.status_code == 200
        r = await http.get("/playground//finish")
        assert r.status_code == 200 and "<pre>" in r.text
        body = r.text.split("<pre>")[1].split("</pre>")[0].replace("&quot;", '"')
        state = json.loads(body)
        assert set(state) >= {"initialfinaldiff", "differences"}
        assert state["run_id"] == "7" and state["task_id"] == "playground-signup"
        assert (await http.get("/playground/config?task_id=omnizon-3")).status_code == 404


PLAYGROUND_TASKS = [t.id for t in default_registry().list(site="playground", replica_only=True)]


def test_the_playground_has_tasks():
    assert "playground-signup" in PLAYGROUND_TASKS and "playground-newsletter" in PLAYGROUND_TASKS


@pytest.mark.parametrize("task_id", PLAYGROUND_TASKS)
async def test_every_playground_task_verifies(env, task_id):
    """Oracle scores 1, no-op 0, plausible wrong attempt 0 — scored by the evaluator.
    (Each REAL replica has its own per-task file: tests/sites/test_<site>.py.)"""
    row = await verify_task(env, default_registry().get(task_id))
    assert row.ok, (row.oracle and row.oracle.score, row.noop and row.noop.score,
                    {label: w.score for label, w in row.wrong.items()}, row.oracle and row.oracle.errors)


@pytest.mark.parametrize("site", SITES_WITH_ORACLES)
async def test_eight_concurrent_sessions_on_one_site_stay_isolated(env, site):
    """Two oracle and six no-op attempts interleaved on the same site: each scores as if it were
    alone (two oracles: a state shared between them shows; six no-ops, which cost no actions: an
    oracle's change leaking into another session shows)."""
    task_id = sorted(t for t in REPLICA_TYPES_BY_SITE[site].oracles)[0]
    task = default_registry().get(task_id)
    oracle, _ = attempts_for(site, task_id)
    sessions = asyncio.Semaphore(8)   # all eight at once; an environment failure is run once more, as verify does
    runs = await asyncio.gather(*(
        run_attempts_once_more(env, task, oracle if i % 4 == 0 else [], "oracle" if i % 4 == 0 else "noop", sessions)
        for i in range(8)
    ))
    attempts = [run[-1] for run in runs]
    assert [a.score for a in attempts] == [1.0, 0.0, 0.0, 0.0] * 2, [(a.kind, a.score, a.errors) for a in attempts]


REPLICA_TYPES_BY_SITE = {cls.site_id: cls for cls in REPLICA_TYPES}


def test_a_verify_row_with_action_errors_is_not_ok():
    """`halo tasks verify`'s "ok": an oracle that scored 1 past a failed step, or a wrong attempt
    that scored 0 because a step failed, verifies nothing."""
    from halo.reward.evaluator import Evaluation
    task = default_registry().get("marrisuite-8")

    def attempt(kind: str, success: bool, errors: list[str] | None = None) -> Attempt:
        return Attempt(task.id, kind, {}, "", errors or [], Evaluation(task.id, success))

    good = dict(task=task, oracle=attempt("oracle", True), noop=attempt("noop", False))
    assert VerifyRow(**good, wrong={"x": attempt("wrong", False)}).ok
    assert not VerifyRow(**good, wrong={"x": attempt("wrong", False, ["click timed out"])}).ok
    assert not VerifyRow(task, attempt("oracle", True, ["fill timed out"]), attempt("noop", False), {}).ok
    assert not VerifyRow(**good, wrong={"x": attempt("wrong", True)}).ok
