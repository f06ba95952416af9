"""The grader audit and strict success: near misses that agisdk's scripts accept (the three kinds
the issue names: a post contradicting the goal, one of two matching items, a booking on another
day; and one task per strict rule added since: an email that takes back its request or is sent
twice, two units for one, another weekday, a tour at another time) are driven through the env
service, scored 1 by agisdk and 0 by strict success; the oracle scores 1 under both. Plus the
strict rules themselves, on small states (no browser). `halo tasks audit` runs the same on every
task (docs/reference/graders.md)."""

from __future__ import annotations

import asyncio

import pytest

from halo.cli.audit import audit_task, near_misses
from halo.reward.strict import Rule, load_checks, parse_checks
from halo.sites.near_misses import KINDS, NEAR_MISSES, WRONG_ATTEMPT_KINDS, kind_of, kinds_of
from halo.sites.registry import attempts_for
from halo.tasks.registry import default_registry

#: One task per leniency the issue names (all in the real-easy curriculum), then one per rule added since.
AUDITED = ["networkin-13", "topwork-8", "opendining-4", "gomail-7", "omnizon-13", "gocalendar-6", "zilloft-14"]


@pytest.fixture(scope="module")
async def audited(env):
    sessions = asyncio.Semaphore(4)
    rows = await asyncio.gather(*(audit_task(env, default_registry().get(t), sessions) for t in AUDITED))
    return {row.task.id: row for row in rows}


@pytest.mark.parametrize("task_id", AUDITED)
async def test_agisdk_accepts_the_near_miss_and_strict_success_does_not(audited, task_id):
    row = audited[task_id]
    assert row.oracle.agisdk and row.oracle.strict and not row.oracle.attempt.errors
    _, wrong = attempts_for(row.task.site, task_id)
    assert set(row.near_misses) == set(wrong) | set(NEAR_MISSES[task_id])
    for label, scored in row.near_misses.items():
        assert not scored.attempt.errors, (label, scored.attempt.errors)
        assert not scored.strict, (label, scored.attempt.state)
        if scored.agisdk:
            assert label in NEAR_MISSES[task_id], label   # a replica's wrong attempts are verified to score 0
            assert scored.failed_checks, label          # strict said no because of a rule, not agisdk
    assert row.lenient and row.sound_under_strict       # agisdk accepts one: the strict rule is what refuses it


async def test_the_tutorials_task_is_held_to_its_strict_rule(env):
    """docs/guides/add-a-task.md's worked example, playground-newsletter: its eval reads the address
    only, so ticking "partner offers" as well passes agisdk's verdict; its strict rule refuses it."""
    row = await audit_task(env, default_registry().get("playground-newsletter"), asyncio.Semaphore(2))
    assert row.oracle.agisdk and row.oracle.strict and not row.oracle.attempt.errors
    assert set(row.near_misses) == {"another address", "wrong count: partner offers as well"}
    partners = row.near_misses["wrong count: partner offers as well"]
    assert partners.agisdk and not partners.strict and partners.failed_checks == ["the subscription is without partner offers"]
    assert not row.near_misses["another address"].agisdk
    assert row.sound_under_strict and not any(s.attempt.errors for s in row.near_misses.values())


def test_every_near_miss_has_a_kind_and_strict_rules_name_replica_tasks():
    checks = load_checks()
    registry = default_registry()
    for task_id, misses in NEAR_MISSES.items():
        assert registry.get(task_id).replica_available
        assert all(label.split(":")[0] in KINDS for label in misses), misses
        assert set(misses).isdisjoint(near_misses(registry.get(task_id)).keys() - misses.keys())
    assert set(checks.rules) <= {t.id for t in registry.list(replica_only=True)}


def test_every_near_miss_of_every_task_has_a_kind():
    tasks = [t for t in default_registry().list(suite="real-v2") if t.replica_available]
    wrong = {t.id: set(attempts_for(t.site, t.id)[1]) for t in tasks}
    missing = {t: sorted(labels - WRONG_ATTEMPT_KINDS.get(t, {}).keys()) for t, labels in wrong.items()}
    missing = {t: labels for t, labels in missing.items() if labels}
    assert not missing, f"replica wrong attempts without a kind in WRONG_ATTEMPT_KINDS: {missing}"
    stale = {t: sorted(kinds.keys() - wrong.get(t, set())) for t, kinds in WRONG_ATTEMPT_KINDS.items()}
    stale = {t: labels for t, labels in stale.items() if labels}
    assert not stale, f"WRONG_ATTEMPT_KINDS labels that are no replica wrong attempt of the task (renamed or removed?): {stale}"
    unknown = sorted((t, label, kind_of(t, label)) for t in wrong for label in wrong[t] | NEAR_MISSES.get(t, {}).keys()
                     if kind_of(t, label) not in KINDS)
    assert not unknown, f"near misses whose kind is not one of {KINDS}: {unknown}"
    kindless = [t for t in wrong if not kinds_of(t)]
    assert not kindless, f"tasks without a near miss of any kind: {kindless}"
    with pytest.raises(KeyError):
        kind_of("udriver-3", "not a label of the task")


def test_rule_kinds_on_states():
    state = {"posts": {"1": {"text": "Finished my internship"}, "2": {"text": "no comment"}}, "jobs": [{"c": "Data"}, {"c": "Art"}],
             "beds": 2}
    assert Rule("all_match", "posts.*.text", "x", pattern="(?i)internship|comment").passes(state)
    assert not Rule("all_match", "posts.*.text", "x", pattern="(?i)internship").passes(state)
    assert not Rule("all_match", "missing.*.text", "x", pattern=".").passes(state)        # nothing found is no match
    assert not Rule("none_match", "posts.*.text", "x", pattern=r"\bno\b").passes(state)
    assert Rule("none_match", "missing", "x", pattern=r"\bno\b").passes(state)
    assert Rule("count", "jobs[?c == 'Data']", "x", min=1, max=1).passes(state)
    assert not Rule("count", "jobs", "x", max=1).passes(state)
    assert Rule("at_least", "beds", "x", value=2).passes(state) and not Rule("at_least", "beds", "x", value=3).passes(state)
    assert not Rule("at_least", "missing", "x", value=0).passes(state)
    assert not Rule("equals", "sum(missing.*.n)", "x", expected=0).passes(state)   # sum of nothing: a type error, not passed


def test_strict_success_never_grants_what_agisdk_refuses_and_bad_rules_fail_loudly():
    checks = parse_checks({"tasks": {"t-1": [{"check": "at_least", "query": "n", "value": 1, "why": "one"}]}})
    assert checks.verdict("t-1", True, {"n": 1}).success
    assert not checks.verdict("t-1", False, {"n": 1}).success
    assert checks.verdict("t-1", True, {"n": 0}).failed == ["one"]
    assert checks.verdict("other", True, {}).success and not checks.verdict("other", False, {}).success
    for bad in ({"tasks": {"t": [{"check": "similar", "query": "n", "why": ""}]}},
                {"tasks": {"t": [{"check": "count", "query": "n[", "why": ""}]}},
                {"tasks": {"t": []}}, {"rules": {}}):
        with pytest.raises(ValueError):
            parse_checks(bad)


def test_equals_rule():
    state = {"g": {"Adults": 2, "Children": 1, "Infants": 0}}
    assert Rule("equals", "[g.Adults, g.Children]", "x", expected=[2, 1]).passes(state)
    assert Rule("equals", "sum(values(g))", "x", expected=3).passes(state)
    assert not Rule("equals", "g.Adults", "x", expected=3).passes(state)


def test_the_docs_table_is_written_from_the_audit_rows():
    import datetime

    from halo.cli.audit import AuditRow, Scored, markdown
    from halo.cli.verify import Attempt

    def scored(agisdk: bool, strict: bool, failed: list[str] | None = None) -> Scored:
        return Scored(Attempt("gomail-7", "wrong", {}, ""), agisdk, strict, failed or [])

    registry = default_registry()
    rows = [AuditRow(registry.get("gomail-7"), scored(True, True), {
                "a near-namesake": scored(False, False),
                "wrong count: the email sent twice": scored(True, False, ["one email is sent"])}),
            AuditRow(registry.get("omnizon-3"), scored(True, True), {"wrong count: two": scored(True, True)})]
    text = markdown(rows, datetime.date(2026, 11, 28))
    assert text.startswith("`halo tasks audit`, 2026-11-28: 2 tasks, 3 near misses: agisdk accepts 2 of them in 2 tasks; "
                           "strict success: oracle 1 and every near miss 0 in 1/2 scorable tasks.")
    assert "Accepted near misses by kind: wrong count 2." in text
    assert "| gomail | 1 | 2 | 1 (1) | 1/1 |" in text and "| omnizon | 1 | 1 | 1 (1) | 0/1 |" in text
    assert "| gomail-7 | wrong count | the email sent twice | one email is sent |" in text
    assert "| omnizon-3 | wrong count | two | (none: strict accepts it too) |" in text
