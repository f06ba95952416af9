"""Unit tests of RewardCore (no gRPC): episode lifecycle and TTL, final evaluation, config."""

from __future__ import annotations

import dataclasses

import pytest
import yaml
from pydantic import ValidationError

from halo.agent import actions as A
from halo.tasks.registry import EvalSpec, TaskRegistry, default_registry
from halo.errors import AlreadyExists, FailedPrecondition, InvalidArgument, NotFound, ResourceExhausted
from halo.reward.config import RewardConfig, RewardSettings, load_config
from halo.reward.core import RewardCore
from halo.reward.judge import Verdict
from halo.reward.transition import Transition
from tests.reward.pagekit import BASE, diff, line, page

HOME = page(BASE + "/", line(1, "link", "Go to page 2"))
PAGE2 = page(BASE + "/page2", line(2, "button", "Finish"))


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def core(clock: Clock | None = None, judge=None, registry: TaskRegistry | None = None, **settings) -> RewardCore:
    return RewardCore(
        RewardSettings(**{"port": 0, "episode_ttl_s": 60, "max_episodes": 3, **settings}),
        registry or default_registry(), judge=judge, clock=clock or Clock(),
    )


def click(step: int, bid: str, before, after) -> Transition:
    return Transition(step, A.ClickElement(bid), True, True, before, after)


# --- episodes ----------------------------------------------------------------------------------

def test_episode_lifecycle_and_ttl():
    clock = Clock()
    c = core(clock)
    c.start_episode("a", "playground-finish")
    c.score("a", click(1, "1", HOME, PAGE2))
    clock.now += 59
    c.score("a", click(2, "2", PAGE2, PAGE2))      # used: the TTL restarts
    clock.now += 59
    assert c.config_for("a").weights.loop_penalty == -0.5
    clock.now += 61
    with pytest.raises(NotFound, match="expired"):
        c.score("a", click(3, "2", PAGE2, PAGE2))
    assert c.end_episode("a") is None


def test_end_episode_frees_and_summarises():
    c = core()
    c.start_episode("a", "playground-finish")
    r = c.score("a", click(1, "1", HOME, PAGE2))
    summary = c.end_episode("a")
    assert summary is not None and summary.episode_return == pytest.approx(r.total)
    assert summary.transitions == 1 and summary.milestones_paid == ("page2_reached",)
    assert len(c.episodes) == 0 and c.end_episode("a") is None
    with pytest.raises(NotFound):
        c.score("a", click(2, "1", HOME, PAGE2))


def test_reaping_and_capacity():
    clock = Clock()
    c = core(clock)
    for eid in "abc":
        c.start_episode(eid, "playground-signup")
    with pytest.raises(ResourceExhausted):
        c.start_episode("d", "playground-signup")
    clock.now += 61
    c.start_episode("d", "playground-signup")    # the full store reaps expired episodes first
    assert len(c.episodes) == 1
    assert c.episodes.reap() == 0


def test_start_episode_is_idempotent_but_ids_are_not_reusable():
    c = core()
    first = c.start_episode("a", "playground-signup", {"loop_penalty": -1.0})
    assert c.start_episode("a", "playground-signup", {"loop_penalty": -1.0}) is first
    with pytest.raises(AlreadyExists):
        c.start_episode("a", "playground-finish")
    with pytest.raises(NotFound):
        c.start_episode("b", "no-such-task")
    with pytest.raises(InvalidArgument):
        c.start_episode("", "playground-signup")


def test_initial_page_is_the_baseline():
    c = core()
    ep = c.start_episode("a", "playground-finish", initial=PAGE2)
    assert "page2_reached" in ep.baseline
    r = c.score("a", click(1, "2", HOME, PAGE2))
    assert "novelty" not in r.names and "milestone:page2_reached" not in r.names


def test_run_wide_overrides_apply_to_every_episode():
    c = core(overrides={"loop_penalty": -1.0})
    assert c.config.weights.loop_penalty == -1.0
    assert c.start_episode("a", "playground-signup").config.weights.loop_penalty == -1.0
    assert c.start_episode("b", "playground-signup", {"loop_penalty": -0.3}).config.weights.loop_penalty == -0.3


# --- final evaluation --------------------------------------------------------------------------

async def test_success_bonus_is_paid_once_per_episode():
    c = core()
    c.start_episode("a", "playground-signup")
    solved = diff({"signup": {"clicked": True, "count": 1}})
    import json

    first = await c.evaluate("playground-signup", json.dumps(solved), episode_id="a")
    again = await c.evaluate("playground-signup", json.dumps(solved), episode_id="a")
    assert first.success and first.score == 1.0 and first.success_bonus == 1.0
    assert again.success and again.success_bonus == 0.0
    assert c.end_episode("a").episode_return == pytest.approx(1.0)
    failed = await c.evaluate("playground-signup", json.dumps(diff()))
    assert not failed.success and failed.details[0].output == "null"


async def test_env_failure_is_not_a_verdict():
    c = core()
    result = await c.evaluate("playground-signup", "", env_failure=True)
    assert result.env_failure and not result.success and result.details == []


async def test_state_json_must_be_an_object():
    c = core()
    for bad in ("", "{not json", "[1, 2]"):
        with pytest.raises(InvalidArgument):
            await c.evaluate("playground-signup", bad)
    with pytest.raises(NotFound):
        await c.evaluate("playground-signup", "{}", episode_id="nope")
    c.start_episode("a", "playground-signup")
    with pytest.raises(InvalidArgument, match="not playground-finish"):
        await c.evaluate("playground-finish", "{}", episode_id="a")
    by_episode = await c.evaluate("", "{}", episode_id="a")   # the episode names the task
    assert by_episode.task_id == "playground-signup"


def judge_registry() -> TaskRegistry:
    base = default_registry().get("playground-signup")
    judged = dataclasses.replace(
        base, id="playground-judged", challenge_type="retrieval",
        evals=(EvalSpec("llm_judge", rubric="says the plan is pro", description="answer"),
               EvalSpec("jmespath", query="initialfinaldiff.updated.signup.clicked", expected_value=True)),
    )
    return TaskRegistry([base, judged])


class KeywordJudge:
    """Stands in for the gateway in this unit test only (the gRPC test uses a real gateway server)."""

    async def judge(self, *, answer: str, rubric: str, question: str = "") -> Verdict:
        ok = "pro" in answer.lower()
        return Verdict(ok, 1.0 if ok else 0.0, "keyword", "keyword-judge")


async def test_llm_judge_evals_need_a_judge():
    import json

    state = json.dumps(diff({"signup": {"clicked": True}}))
    with pytest.raises(FailedPrecondition, match="judge"):
        await core(registry=judge_registry()).evaluate("playground-judged", state, "pro")
    c = core(registry=judge_registry(), judge=KeywordJudge())
    good = await c.evaluate("playground-judged", state, "The plan is Pro.")
    bad = await c.evaluate("playground-judged", state, "The plan is free.")
    assert good.success and [d.passed for d in good.details] == [True, True]
    assert not bad.success and [d.passed for d in bad.details] == [False, True]
    assert "keyword-judge" in good.details[0].output


# --- config ------------------------------------------------------------------------------------

def test_shipped_config_has_the_users_numbers():
    config = load_config()
    w = config.weights
    assert (w.valid_action_bonus, w.action_error_penalty, w.novelty_bonus, w.loop_penalty, w.success_bonus) == (
        0.1, -0.2, 0.2, -0.5, 1.0)
    table = config.weight_map()
    # seeds/000's dense-reward table
    assert table["milestone:gomail.compose_opened"] == 0.3 and table["milestone:gomail.message_sent"] == 0.5
    assert table["milestone:gocalendar.create_clicked"] == 0.3 and table["milestone:gocalendar.event_created"] == 0.5
    assert [table[f"milestone:omnizon.{n}"] for n in ("search_results", "product_page", "add_to_cart", "cart_page", "checkout_initiated")] == [
        0.2, 0.3, 0.3, 0.3, 0.4]
    # seeds/002's Zilloft milestones, and the playground's own
    assert {"milestone:zilloft.search", "milestone:zilloft.filters_applied", "milestone:zilloft.listing_viewed"} <= set(table)
    assert {"milestone:playground.name_typed", "milestone:playground.page2_reached"} <= set(table)
    assert yaml.safe_load(config.to_yaml())["weights"]["loop_penalty"] == -0.5


@pytest.mark.parametrize("broken", [
    {"weights": {"loop_penality": -1}},
    {"milestones": {"x": [{"name": "a", "reward": 1, "page": [{"url": "("}]}]}},
    {"milestones": {"x": [{"name": "a", "reward": 1, "state": [{"query": "a..b"}]}]}},
    {"milestones": {"x": [{"name": "a", "reward": 1}]}},
    {"milestones": {"x": [{"name": "a", "reward": 1, "action": [{"kinds": ["teleport"]}]}]}},
    {"milestones": {"x": [{"name": "a", "reward": 1, "page": [{"url": "a"}]}, {"name": "a", "reward": 2, "page": [{"url": "b"}]}]}},
])
def test_broken_configs_fail_at_load(broken):
    with pytest.raises((ValidationError, ValueError)):
        RewardConfig.model_validate(broken)


def test_config_file_from_settings(tmp_path):
    custom = tmp_path / "rewards.yaml"
    custom.write_text(yaml.safe_dump({"weights": {"loop_penalty": -1.0}, "milestones": {}}))
    c = core(config=str(custom))
    assert c.config.weights.loop_penalty == -1.0 and c.config.weights.novelty_bonus == 0.2
    assert c.start_episode("a", "playground-finish").milestones == ()


def _removed(*jobs: tuple[str, str]) -> str:
    import json

    posts = [{"id": f"job-{i}", "title": title, "category": category} for i, (title, category) in enumerate(jobs)]
    return json.dumps({"initialfinaldiff": {"added": {"jobs": {"removedJobPosts": posts}}, "updated": {}, "deleted": {}},
                       "differences": {}})


async def test_strict_success_is_agisdk_and_the_tasks_checks_and_pays_only_where_asked():
    """topwork-8 ("remove data related job postings"): agisdk's script passes one of the two data
    postings removed; strict success does not. The success bonus follows the episode's verdict."""
    c = core()
    half = _removed(("Data Analyst for Sales Dashboard", "Data Science & Analytics"))
    both = _removed(("Data Analyst for Sales Dashboard", "Data Science & Analytics"),
                    ("Machine Learning Engineer for Churn Prediction", "Data Science & Analytics"))
    c.start_episode("agisdk", "topwork-8")
    c.start_episode("strict", "topwork-8", {"strict_success": 1.0})
    lenient = await c.evaluate("topwork-8", half, episode_id="agisdk")
    assert lenient.success and not lenient.success_strict and lenient.success_bonus == 1.0
    assert lenient.strict_failed and "every data posting" in lenient.strict_failed[0]
    refused = await c.evaluate("topwork-8", half, episode_id="strict")
    assert refused.success and not refused.success_strict and refused.success_bonus == 0.0
    solved = await c.evaluate("topwork-8", both, episode_id="strict")
    assert solved.success and solved.success_strict and solved.success_bonus == 1.0 and solved.strict_failed == []
    nothing = await c.evaluate("topwork-8", _removed())
    assert not nothing.success and not nothing.success_strict   # strict never grants what agisdk refuses
    plain = await c.evaluate("playground-signup", json_state({"signup": {"clicked": True, "count": 1}}))
    assert plain.success and plain.success_strict                # no checks: strict is agisdk's verdict


def json_state(added: dict) -> str:
    import json

    return json.dumps(diff(added))
