"""NetworkIn replica: every REAL v2 NetworkIn task is solved by its oracle and failed by a no-op and
by its labelled wrong attempts, as scored by agisdk's own eval scripts (through real Chromium and the
env service); plus the store rules those scripts depend on, over HTTP."""

from __future__ import annotations

import asyncio
import re

import pytest

from halo.reward.evaluator import evaluate
from halo.sites.networkin import TASK_IDS, NetworkIn, network
from halo.sites.networkin.people import CONNECTIONS, MEMBER_BY_ID
from tests.sites.replica_checks import (
    assert_serves_every_v2_task, assert_verified, natural_task_order, finish_state, milestones_by_step, score, site_client,
    site_milestone_names, verified_fixture,
)

NETWORKIN_TASKS = natural_task_order(TASK_IDS)


def test_replica_serves_every_v2_networkin_task():
    assert_serves_every_v2_task(NetworkIn, 10)


verified = verified_fixture(TASK_IDS)


@pytest.mark.parametrize("task_id", NETWORKIN_TASKS)
async def test_task_verifies_with_agisdk_scripts(verified, task_id):
    assert_verified(verified[task_id])


async def test_env_state_mirror_changes_no_other_verdict(verified):
    """networkin-19 reads the diff under env_state; without that copy the other nine score the same
    (every attempt's state, oracle, no-op and wrong), and networkin-19's oracle fails."""
    for task_id, row in verified.items():
        for attempt in [row.oracle, row.noop, *row.wrong.values()]:
            assert attempt.state["env_state"] == {"initialfinaldiff": attempt.state["initialfinaldiff"]}
            bare = {k: v for k, v in attempt.state.items() if k != "env_state"}
            expected = 0.0 if task_id == "networkin-19" else attempt.score
            assert evaluate(row.task, bare).score == expected, (task_id, attempt.kind)


async def test_oracle_states_carry_what_the_goals_ask(verified):
    """Beyond the lenient scripts: the people, companies and events the oracles pick fit the goals."""
    def diff(task_id: str, part: str = "added") -> dict:
        return verified[task_id].oracle.state["initialfinaldiff"][part]

    assert diff("networkin-1")["followedCompanies"] == {"microsoft": True, "google": True, "openai": True}
    assert diff("networkin-5", "updated")["ui"]["messaging"]["selectedChat"]["headline"].startswith("Software Engineer")
    ethan = MEMBER_BY_ID["ethanbrooks"]
    assert ethan.location.startswith("New York") and ethan.industry == "Technology"
    assert "ethanbrooks" in diff("networkin-6")["ui"]["messaging"]["chatroomData"]
    assert sorted(diff("networkin-10")["contactList"].values()) == ["ethanbrooks", "mayarodriguez", "oliviamartinez"]
    shared = diff("networkin-11")["ui"]["messaging"]["chatroomData"]
    assert sorted(shared) == ["alexchen", "priyapatel"]
    assert diff("networkin-25") == {"config": diff("networkin-25")["config"], "events": {"attendance": {"ai-agents-summit": True}}}
    assert list(diff("networkin-27")["contactList"].values()) == ["oliviamartinez"]


# --- the store rules the scripts depend on ------------------------------------------------------------


@pytest.fixture
async def http():
    async with site_client(NetworkIn, "networkin-25", "run-3") as client:
        yield client


async def test_browsing_every_page_passes_no_task(http):
    """networkin-25 passes on any stored '/event(s)/' string or attend-like key: viewing must store neither."""
    for path in ["/", "/mynetwork", "/my-network/events", "/my-network/events?id=nyc-tech-mixer", "/messaging",
                 "/in/oliviamartinez", "/company/microsoft", "/feed/send?post=post-1", "/search/results/companies"]:
        assert (await http.get(f"/networkin{path}")).status_code == 200, path
    state = await finish_state(http, "networkin")
    assert set(state["initialfinaldiff"]["added"]) == {"config"}
    assert state["initialfinaldiff"]["updated"]["router"]["location"]["pathname"] == "/search/results/companies"
    for task_id in NETWORKIN_TASKS:
        assert score(task_id, state) == 0.0, task_id


async def test_connect_appends_a_contact_and_a_new_accepted_chat(http):
    await http.post("/networkin/api/connect", data={"member": "oliviamartinez", "back": "/mynetwork"})
    await http.post("/networkin/api/connect", data={"member": "oliviamartinez", "back": "/mynetwork"})   # once only
    await http.post("/networkin/api/connect", data={"member": "alexchen", "back": "/"})                 # already connected
    added = (await finish_state(http, "networkin"))["initialfinaldiff"]["added"]
    assert added["contactList"] == {str(len(CONNECTIONS)): "oliviamartinez"}        # a dict, as the scripts read it
    room = added["ui"]["messaging"]["chatroomData"]["oliviamartinez"]
    assert [m["message"] for m in room["messages"]] == ["Connection request sent", "Olivia Martinez accepted your connection request"]


async def test_search_records_history_once_and_keeps_keywords_in_the_location(http):
    r = await http.get("/networkin/search/results/people", params={"keywords": "new york tech"})
    names = re.findall(r'class="n-name" href="/networkin/in/([^"]+)"', r.text)
    assert names and all(MEMBER_BY_ID[n].location.startswith("New York") and "tech" in
                         f"{MEMBER_BY_ID[n].headline} {MEMBER_BY_ID[n].industry}".lower() for n in names)
    await http.get("/networkin/search/results/people", params={"keywords": "new york tech", "location": "New York, NY"})
    state = await finish_state(http, "networkin")
    assert list(state["initialfinaldiff"]["added"]["searchHistory"].values()) == [{"searchTerm": "new york tech", "type": "people"}]
    assert state["initialfinaldiff"]["updated"]["router"]["location"]["search"] == "?keywords=new+york+tech&location=New+York%2C+NY"
    assert {m.id for m in network.search_people("olivia martin")} == {"oliviamartinez", "oliviamartin"}   # the decoy shows too
    r = await http.get("/networkin/search/results/people", params={"keywords": "", "location": "New York, NY", "industry": "Technology"})
    names = re.findall(r'class="n-name" href="/networkin/in/([^"]+)"', r.text)
    assert "ethanbrooks" in names and "isabellarossi" not in names and "liamobrien" not in names   # filters alone: no keywords
    state = await finish_state(http, "networkin")
    assert len(state["initialfinaldiff"]["added"]["searchHistory"]) == 1          # an empty search box is no search
    assert score("networkin-6", state) == 0.0                                     # no invitation yet


async def test_posts_append_and_shares_point_at_the_post(http):
    await http.post("/networkin/api/post", data={"text": "  "})                     # empty: nothing posted
    await http.post("/networkin/api/post", data={"text": "Networking night! DM me"})
    await http.post("/networkin/api/share", data={"post": "post-9", "to": ["alexchen", "oliviamartinez"]})  # Olivia is no connection
    added = (await finish_state(http, "networkin"))["initialfinaldiff"]["added"]
    assert list(added["feedPosts"]) == ["8"]                                         # old posts keep their index
    assert added["ui"]["feed"]["postDynamicData"]["post-9"]["type"] == "self-post"
    [(key, shared)] = added["ui"]["messaging"]["chatroomData"]["alexchen"]["messages"].items()
    assert shared["type"] == "post" and shared["postData"]["id"] == "post-9" and shared["authorId"] == "divgarg"
    assert "oliviamartinez" not in added["ui"]["messaging"]["chatroomData"]


# --- dense rewards (configs/rewards.yaml) ---------------------------------------------------------------


def test_milestones_are_the_specs():
    assert site_milestone_names("networkin") == {"searched", "connected", "message_sent", "post_created",
                                                  "company_followed", "event_attended"}


async def test_milestones_fire_in_order_along_oracles_and_not_while_wandering(env, reward):
    """networkin-6: the search, then the message; networkin-11: the post, then its sending (a post message);
    a walk through the same pages that changes nothing pays none; connecting is no message."""
    from halo.agent import actions as A
    from halo.sites.oracle import Target
    from tests.reward.rollouts import oracle_policy, run_rollout

    def paid(run) -> list[str]:
        return [m for step in milestones_by_step(run.breakdowns) for m in step]

    runs = await asyncio.gather(
        run_rollout(env, reward, "networkin-6", oracle_policy(NetworkIn.oracles["networkin-6"])),
        run_rollout(env, reward, "networkin-11", oracle_policy(NetworkIn.oracles["networkin-11"])),
        run_rollout(env, reward, "networkin-6", oracle_policy([
            A.ClickElement(Target("link", contains="My Network")), A.ClickElement(Target("link", "Ethan Brooks")),
            A.ClickElement(Target("link", "Message")), A.ClickElement(Target("link", contains="Events")),
            A.Scroll(0, 300), A.ClickElement(Target("link", contains="Home"))])),
        run_rollout(env, reward, "networkin-6", oracle_policy([
            A.ClickElement(Target("link", contains="My Network")), A.ClickElement(Target("button", "Invite Ethan Brooks to connect"))])),
    )
    search_then_message, post_then_share, wandering, connecting = runs
    assert search_then_message.evaluation.success and post_then_share.evaluation.success
    steps = milestones_by_step(search_then_message.breakdowns)
    assert paid(search_then_message) == ["searched", "message_sent"] and steps[1] == ["searched"] and steps[-1] == ["message_sent"]
    assert paid(post_then_share) == ["post_created", "message_sent"]
    assert milestones_by_step(post_then_share.breakdowns)[-1] == ["message_sent"]      # paid when the post is sent
    assert paid(wandering) == [] and not wandering.evaluation.success
    assert paid(connecting) == ["connected"]
