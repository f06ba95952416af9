"""`verify_task` reruns an attempt whose action ran past the env's action timeout (a busy machine),
once, and reports any other action error as it came; the no-op is read from the oracle's session
before its first action; a `wrong_labels` choice runs only those wrong attempts."""

from __future__ import annotations

import pytest

from halo.cli import verify
from halo.tasks.registry import default_registry


def _fake_sessions(monkeypatch, calls: list[str], env_failures: int = 0) -> None:
    async def fake_run_attempts(env, task, steps, kind, seed=0, noop_too=False):   # stands in for the env session only
        calls.append(kind + ("+noop" if noop_too else ""))
        if kind == "wrong" and calls.count("wrong") <= env_failures:
            raise verify.AttemptEnvFailure(f"env failure during wrong of {task.id}: the click did not finish in time")
        errors = []
        if kind == "oracle" and calls.count("oracle+noop") == 1:
            errors = ["click_element(bid='11'): click_element timed out: Locator.click: Timeout 3000ms exceeded."]
        if kind == "wrong":
            errors = ["click_element(bid='12'): no element with bid 12"]
        noop = [verify.Attempt(task.id, "noop", {}, "")] if noop_too else []
        return [*noop, verify.Attempt(task.id, kind, {}, "", errors)]

    monkeypatch.setattr(verify, "run_attempts", fake_run_attempts)


async def test_an_attempt_that_timed_out_runs_once_more_and_other_errors_stand(monkeypatch):
    task = default_registry().get("gomail-24")
    calls: list[str] = []
    _fake_sessions(monkeypatch, calls)
    row = await verify.verify_task(None, task)
    assert calls.count("oracle+noop") == 2 and row.oracle.errors == []      # the timeout: run again, no-op with it
    assert row.noop is not None and row.noop.kind == "noop" and "noop" not in calls   # no session of its own
    assert calls.count("wrong") == len(row.wrong) and all(w.errors for w in row.wrong.values())   # not rerun


async def test_wrong_labels_choose_the_wrong_attempts_that_run(monkeypatch):
    task = default_registry().get("dashdish-1")
    calls: list[str] = []
    _fake_sessions(monkeypatch, calls)
    row = await verify.verify_task(None, task, wrong_labels=lambda _task, labels: labels[:1] + ["no such label"])
    assert calls.count("wrong") == 1 and len(row.wrong) == 1
    row = await verify.verify_task(None, task, wrong_labels=lambda _task, labels: [])
    assert row.wrong == {} and row.oracle is not None and row.noop is not None


async def test_an_attempt_lost_to_an_environment_failure_runs_once_more_and_a_second_loss_is_raised(monkeypatch):
    task = default_registry().get("dashdish-1")
    calls: list[str] = []
    _fake_sessions(monkeypatch, calls, env_failures=1)
    row = await verify.verify_task(None, task, wrong_labels=lambda _task, labels: labels[:1])
    assert calls.count("wrong") == 2 and len(row.wrong) == 1 and row.wrong[next(iter(row.wrong))].kind == "wrong"
    calls.clear()
    _fake_sessions(monkeypatch, calls, env_failures=2)
    with pytest.raises(verify.AttemptEnvFailure):
        await verify.verify_task(None, task, wrong_labels=lambda _task, labels: labels[:1])
    assert calls.count("wrong") == 2
