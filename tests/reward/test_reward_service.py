"""The reward service through gRPC: real env service, real Chromium, real agisdk eval scripts."""

from __future__ import annotations

import asyncio
import json
import random

import httpx
import pytest

from halo.agent import actions as A
from halo.tasks.registry import default_registry
from halo.errors import InvalidArgument, NotFound
from halo.sites.registry import REPLICA_TYPES
from halo.v1 import common_pb2 as cpb
from tests.reward.agisdk_direct import agisdk_verdict
from tests.reward.rollouts import oracle_policy, rollout_until_whole, run_rollout


def oracle_tasks() -> list[str]:
    """Every playground task with an oracle, plus the first oracle task of each other replica."""
    ids: list[str] = []
    for replica in REPLICA_TYPES:
        with_oracle = sorted(t for t in replica.task_ids if t in replica.oracles)
        ids += with_oracle if replica.site_id == "playground" else with_oracle[:1]
    return ids


def noop_policy(steps: int = 3):
    return [lambda obs: A.Noop()] * steps


def aimless_policy(seed: int, steps: int = 6):
    """An untrained policy's behaviour: scrolls, waits, hovers over text, unparseable output."""
    rng = random.Random(seed)

    def pick(obs: cpb.Observation) -> A.Action | None:
        texts = [e.bid for e in obs.elements if e.role == "text"]
        return rng.choice([
            A.Scroll(0, rng.choice([300, -300])), A.Wait(50), None, A.Hover(rng.choice(texts)) if texts else A.Noop(),
        ])

    return [pick] * steps


@pytest.mark.parametrize("task_id", oracle_tasks())
async def test_oracle_earns_more_than_noop_and_matches_agisdk(env, reward, task_id):
    task = default_registry().get(task_id)
    oracle_steps, _wrong = next((r.oracles.get(task_id), None) for r in REPLICA_TYPES if r.site_id == task.site)
    oracle, noop, aimless = await asyncio.gather(   # three sessions of their own: run them at once
        rollout_until_whole(env, reward, task_id, lambda: oracle_policy(oracle_steps)),
        rollout_until_whole(env, reward, task_id, noop_policy),
        rollout_until_whole(env, reward, task_id, lambda: aimless_policy(seed=7)),
    )

    assert oracle.evaluation.success and oracle.evaluation.score == 1.0 and oracle.evaluation.success_strict
    assert not noop.evaluation.success_strict
    assert oracle.evaluation.success_bonus == 1.0 and not oracle.evaluation.env_failure
    assert oracle.summary.episode_return == pytest.approx(oracle.shaped_return + 1.0)
    assert oracle.shaped_return > 0 and any(n.startswith("milestone:") for n in oracle.components)
    if task.site == "playground":
        assert "loop" not in oracle.components
    for other in (noop, aimless):
        assert other.evaluation.score == 0.0 and other.evaluation.success_bonus == 0.0
        assert other.summary.episode_return < oracle.summary.episode_return
        assert not any(n.startswith("milestone:") for n in other.components) or task.site != "playground"
    assert "loop" in noop.components and noop.summary.episode_return < 0
    # The service's verdict is agisdk's own, eval by eval, on the very same state.
    for attempt in (oracle, noop):
        success, passed = agisdk_verdict(task, attempt.state, attempt.final_message)
        assert attempt.evaluation.success == success
        assert [d.passed for d in attempt.evaluation.details] == passed


async def test_dense_signal_on_the_playground_form(env, reward):
    """The embedded policy's task: typing the name pays before saving it, saving pays once."""
    def by(role, name):
        return lambda obs: A.ClickElement(next(e.bid for e in obs.elements if e.role == role and e.name == name))

    def fill(text):
        return lambda obs: A.Fill(next(e.bid for e in obs.elements if e.role == "textbox" and e.name == "Name"), text)

    run = await run_rollout(env, reward, "playground-name", [
        fill("Ada"), fill("Ada Lovelace"), by("button", "Save"), by("button", "Save"),
    ])
    first, second, save, save_again = run.breakdowns
    assert "milestone:name_typed" in [c.name for c in first.components]
    assert [c.name for c in second.components] == ["valid_action"]       # typing more is not a new state
    assert "milestone:name_saved" in [c.name for c in save.components]
    assert not any(c.name.startswith("milestone:") for c in save_again.components)
    assert run.evaluation.success


SCRIPT_CASES = [
    # (task, state that passes its agisdk eval script, a near miss that does not)
    ("omnizon-13",
     {"initialfinaldiff": {"added": {"order": {"orders": {"3": {"items": [{"id": "212", "quantity": 1}]}}}}}},
     {"initialfinaldiff": {"added": {"order": {"orders": {"3": {"items": [{"id": "114", "quantity": 1}]}}}}}}),
    ("gomail-12",
     {"initialfinaldiff": {"added": {"email": {"emails": {"90": {
         "to": ["charles.davis@example.com"], "subject": "New clients?", "content": "Any new clients?", "sent": True}}}}}},
     {"initialfinaldiff": {"added": {"email": {"emails": {"90": {
         "to": ["charles.davis@example.com"], "subject": "Hello", "content": "How are you?", "sent": True}}}}}}),
    ("gocalendar-4",
     {"differences": {"events": {"added": {"e1": {"start": "2024-09-21T02:45:00Z", "end": "2024-09-21T03:45:00Z", "location": "Gym"}}}}},
     {"differences": {"events": {"added": {"e1": {"start": "2024-09-21T02:45:00Z", "end": "2024-09-21T03:45:00Z", "location": "Home"}}}}}),
]


@pytest.mark.parametrize("task_id,passing,failing", SCRIPT_CASES, ids=[c[0] for c in SCRIPT_CASES])
async def test_evaluate_runs_agisdk_scripts_exactly(reward, task_id, passing, failing):
    task = default_registry().get(task_id)
    for state, expected in ((passing, True), (failing, False), ({}, False)):
        result = await reward.evaluate(task_id, json.dumps(state))
        success, passed = agisdk_verdict(task, state, "")
        assert result.success is expected is success
        assert [d.passed for d in result.details] == passed
        assert result.details[0].kind == cpb.EVAL_KIND_SCRIPT
        assert result.details[0].output == ("SUCCESS" if expected else "FAILURE")
        assert result.duration.ToNanoseconds() > 0 and result.scorable


async def test_unscorable_task_is_flagged(reward):
    result = await reward.evaluate("v2.gocalendar-11", json.dumps({"differences": {}}))
    assert not result.scorable and not result.success


async def test_env_failure_is_flagged_not_counted_as_failure(stack, reward):
    before = _metric(stack, "halo_reward_evaluations_total", outcome="failure", site="playground")
    result = await reward.evaluate("playground-signup", "", env_failure=True)
    assert result.env_failure and not result.success and result.score == 0.0 and not result.details
    assert _metric(stack, "halo_reward_evaluations_total", outcome="failure", site="playground") == before
    assert _metric(stack, "halo_reward_evaluations_total", outcome="env_failure", site="playground") >= 1


async def test_errors_have_the_right_codes(reward):
    page = cpb.Observation(url="http://x/")
    from halo.client.reward import page_state

    with pytest.raises(NotFound):
        await reward.score_transition("no-such-episode", 1, A.Noop(), page_state(page), page_state(page))
    with pytest.raises(NotFound):
        await reward.get_config("no-such-episode")
    with pytest.raises(NotFound):
        await reward.start_episode("e-unknown-task", "no-such-task-1")
    with pytest.raises(NotFound):
        await reward.evaluate("no-such-task-1", "{}")
    with pytest.raises(InvalidArgument, match="does not parse"):
        await reward.evaluate("playground-signup", "{oops")
    with pytest.raises(InvalidArgument, match="unknown reward override"):
        await reward.start_episode("e-bad-override", "playground-signup", overrides={"loop_penalti": -1.0})
    await reward.start_episode("e-errors", "playground-signup")
    with pytest.raises(InvalidArgument, match="episode_id"):
        await reward.score_transition("", 1, A.Noop(), page_state(page), page_state(page))
    with pytest.raises(InvalidArgument, match="state_json"):
        await reward.score_transition("e-errors", 1, A.Noop(), page_state(page, "{oops"), page_state(page))
    with pytest.raises(InvalidArgument, match="no kind set"):
        await reward.score_transition("e-errors", 1, cpb.Action(), page_state(page), page_state(page))
    assert (await reward.end_episode("e-errors")).was_open
    assert not (await reward.end_episode("e-errors")).was_open      # idempotent
    with pytest.raises(NotFound):
        await reward.score_transition("e-errors", 2, A.Noop(), page_state(page), page_state(page))


async def test_config_and_overrides_through_grpc(reward):
    defaults = await reward.get_config()
    assert defaults.weights["loop_penalty"] == -0.5 and defaults.weights["milestone:omnizon.cart_page"] == 0.3
    assert "zilloft" in defaults.yaml and "listing_viewed" in defaults.yaml
    started = await reward.start_episode("e-config", "omnizon-13", overrides={"loop_penalty": -1.0, "milestone:omnizon.cart_page": 0.5})
    assert started.site == "omnizon" and "omnizon.cart_page" in started.milestones
    episode = await reward.get_config("e-config")
    assert episode.weights["loop_penalty"] == -1.0 and episode.weights["milestone:omnizon.cart_page"] == 0.5
    assert (await reward.get_config()).weights["loop_penalty"] == -0.5   # other episodes keep the defaults
    await reward.end_episode("e-config")


async def test_reward_metrics_are_exported(stack, env, reward):
    """The counters are the shared stack's (other tests' runs, some with other weights, add to
    them): this rollout's share is what they gained during it."""
    def read() -> dict[str, float]:
        return {
            "paid": _metric(stack, "halo_reward_component_paid_total", component="valid_action", site="playground"),
            "total": _metric(stack, "halo_reward_component_contribution", component="valid_action", site="playground"),
            "milestone": _metric(stack, "halo_reward_component_paid_total", component="milestone:page2_reached", site="playground"),
            "success": _metric(stack, "halo_reward_component_contribution", component="success", site="playground"),
            "evaluations": _metric(stack, "halo_reward_evaluations_total", outcome="success", site="playground"),
            "eval_seconds": _metric(stack, "halo_reward_eval_seconds_count", site="playground"),
            "returns": _metric(stack, "halo_reward_episode_return_count", site="playground"),
        }

    before = read()
    await run_rollout(env, reward, "playground-finish", oracle_policy(
        next(r for r in REPLICA_TYPES if r.site_id == "playground").oracles["playground-finish"]))
    gained = {k: v - before[k] for k, v in read().items()}
    assert gained["paid"] >= 2 and gained["total"] == pytest.approx(0.1 * gained["paid"])
    assert gained["milestone"] >= 1
    assert gained["success"] >= 1.0
    assert gained["evaluations"] >= 1 and gained["eval_seconds"] >= 1 and gained["returns"] >= 1


def _metric(stack, name: str, **labels: str) -> float:
    """One series of the reward service's /metrics (0 when absent)."""
    from prometheus_client.parser import text_string_to_metric_families

    text = httpx.get(f"http://127.0.0.1:{stack.reward.metrics_port}/metrics", timeout=5).text
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                return sample.value
    return 0.0
