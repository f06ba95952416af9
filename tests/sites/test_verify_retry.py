"""`verify_task` reruns an attempt whose action ran past the env's action timeout (a busy machine),
once, and reports any other action error as it came."""

from __future__ import annotations

from halo.cli import verify
from halo.tasks.registry import default_registry


async def test_an_attempt_that_timed_out_runs_once_more_and_other_errors_stand(monkeypatch):
    task = default_registry().get("gomail-24")
    calls: list[str] = []

    async def fake_run_attempt(env, task, steps, kind, seed=0):   # stands in for the env session only
        calls.append(kind)
        errors = []
        if kind == "oracle" and calls.count("oracle") == 1:
            errors = ["click_element(bid='11'): click_element timed out: Locator.click: Timeout 3000ms exceeded."]
        if kind == "wrong":
            errors = ["click_element(bid='12'): no element with bid 12"]
        return verify.Attempt(task.id, kind, {}, "", errors)

    monkeypatch.setattr(verify, "run_attempt", fake_run_attempt)
    row = await verify.verify_task(None, task)
    assert calls.count("oracle") == 2 and row.oracle.errors == []          # the timeout: run again
    assert calls.count("noop") == 1
    assert calls.count("wrong") == len(row.wrong) and all(w.errors for w in row.wrong.values())   # not rerun
