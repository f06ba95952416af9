"""TopWork replica: every REAL v2 TopWork task is solved by its oracle and failed by a no-op and by
its labelled wrong attempts, as scored by agisdk's own eval scripts (through real Chromium and the
env service); plus the store rules and seed facts those scripts depend on, over HTTP."""

from __future__ import annotations

import asyncio
import runpy

import pytest

from halo.tasks.registry import agisdk_v2_dir
from halo.sites.topwork import TASK_IDS, TopWork, board, search_talent
from halo.sites.topwork.talent import DATA_CATEGORY, FREELANCER_BY_ID, SEED_CHATS, SEED_JOBS
from tests.sites.replica_checks import (
    assert_serves_every_v2_task, assert_verified, natural_task_order, finish_state, milestones_by_step, score, site_client,
    site_milestone_names, verified_fixture,
)

TOPWORK_TASKS = natural_task_order(TASK_IDS)


def test_replica_serves_every_v2_topwork_task():
    assert_serves_every_v2_task(TopWork, 12)


verified = verified_fixture(TASK_IDS)


@pytest.mark.parametrize("task_id", TOPWORK_TASKS)
async def test_task_verifies_with_agisdk_scripts(verified, task_id):
    assert_verified(verified[task_id])


async def test_oracle_states_carry_what_the_goals_ask(verified):
    """Beyond the lenient scripts: who was invited, hired and saved, and what was posted."""
    def added(task_id: str) -> dict:
        return verified[task_id].oracle.state["initialfinaldiff"]["added"]

    def new_contacts(task_id: str) -> list[dict]:
        return [c for c in added(task_id)["messages"]["contactList"].values() if "id" in c]

    [dev] = new_contacts("topwork-2")
    assert "Backend" in dev["job"] and dev["messages"][0]["type"] == "invite" and "fitness app" in dev["messages"][0]["message"]
    [py] = new_contacts("topwork-3")
    assert "python" in FREELANCER_BY_ID[py["id"]].skills[0].lower() and FREELANCER_BY_ID[py["id"]].availability == "Available now"
    [offer] = added("topwork-11")["offers"]["offers"].values()
    assert (offer["contractTitle"], offer["freelancerId"], offer["status"]) == ("Project Lead", "kevinpark", "Pending")
    removed = added("topwork-8")["jobs"]["removedJobPosts"]
    assert sorted(j["title"] for j in removed) == ["Data Analyst for Sales Dashboard", "Machine Learning Engineer for Churn Prediction"]
    [job] = added("topwork-13")["jobs"]["jobs"].values()
    assert (job["title"], job["estimateSize"], job["hourlyRateFrom"], job["hourlyRateTo"]) == ("Data Annotator", "Small", 20, 25)
    assert sorted(added("topwork-14")["saved"]["savedFreelancerIds"].values()) == ["ashleycampbell", "brandonmartinez"]
    replies = added("topwork-12")["messages"]["contactList"]
    assert len(replies) == 3 and all("tomorrow" in m["message"].lower() for c in replies.values() for m in c["messages"].values())


# --- the seed and the store rules the scripts depend on ---------------------------------------------


def test_seed_jobs_and_contacts_read_the_way_the_scripts_expect():
    is_data_related = runpy.run_path(str(agisdk_v2_dir() / "eval_scripts" / "eval_topwork_8.py"))["is_data_related"]
    for job in SEED_JOBS:       # no 'HTML'/'Netlify' that would make a web job 'data' by the script's ml/etl/d3 test
        assert is_data_related(job) == (job["category"] == DATA_CATEGORY), job["title"]
    job_of = {fid: FREELANCER_BY_ID[fid].title.lower().replace("-", " ") for fid, _, _ in SEED_CHATS}
    assert not any(w in title for title in job_of.values() for w in ("full stack", "backend", "back end", "python"))
    assert sum(unread for _, unread, _ in SEED_CHATS) == 3
    assert {f.id for f in search_talent("ashley")} == {"ashleycampbell", "ashleycarter"}
    assert {f.id for f in search_talent("brandon")} == {"brandonmartinez", "brandonlee"}
    assert {f.id for f in search_talent("full stack")} == {"jasonmiller", "priyasharma"}


@pytest.fixture
async def http():
    async with site_client(TopWork, "topwork-13", "run-3") as client:
        yield client


async def test_browsing_every_page_passes_no_task(http):
    for path in ["/", "/jobs/new", "/jobs/job-1", "/talent?q=python", "/saved", "/freelancers/jasonmiller",
                 "/freelancers/jasonmiller/invite", "/freelancers/kevinpark/offer", "/messages", "/hires"]:
        assert (await http.get(f"/topwork{path}")).status_code == 200, path
    assert (await http.get("/topwork/freelancers/nobody")).status_code == 404
    state = await finish_state(http, "topwork")
    assert set(state["initialfinaldiff"]["added"]) == {"config"}
    for task_id in TOPWORK_TASKS:
        assert score(task_id, state) == 0.0, task_id


async def test_post_job_form_requires_every_choice_and_a_sane_range(http):
    base = {"title": "Data Annotator", "description": "Verita AI labels data", "category": DATA_CATEGORY,
            "estimateSize": "Small", "estimateTime": "1 to 3 months", "estimateLevelExperience": "Entry",
            "estimateHireOpportunity": "no", "hourlyRateFrom": "25", "hourlyRateTo": "20", "mode": "post"}
    r = await http.post("/topwork/api/jobs", data=base)
    assert "The top of the range must be at least the bottom" in r.text
    r = await http.post("/topwork/api/jobs", data={**base, "hourlyRateFrom": "20", "hourlyRateTo": "25", "estimateTime": "2 weeks"})
    assert 'role="alert">Choose one' in r.text          # only Upwork's three durations exist
    page = (await http.get("/topwork/jobs/new")).text
    assert " checked" not in page                          # nothing preselected (topwork-13 must choose)
    state = await finish_state(http, "topwork")
    assert "jobs" not in state["initialfinaldiff"]["added"]
    await http.post("/topwork/api/jobs", data={**base, "hourlyRateFrom": "20", "hourlyRateTo": "25"})
    state = await finish_state(http, "topwork")
    [job] = state["initialfinaldiff"]["added"]["jobs"]["jobs"].values()   # appended: a dict of added items
    assert job["status"] == "published" and score("topwork-13", state) == 1.0


async def test_offer_copies_share_one_id_and_a_new_contact_is_appended_whole(http):
    await http.post("/topwork/api/offer", data={"freelancer": "jasonmiller", "contractTitle": "Project Lead",
                                               "hourlyRate": "75", "startDate": "2024-07-22", "description": "Lead it"})
    added = (await finish_state(http, "topwork"))["initialfinaldiff"]["added"]
    [contact] = added["messages"]["contactList"].values()
    assert {"id", "name", "job", "messages", "offer"} <= set(contact) and added["messages"]["selectedChatId"] == "jasonmiller"
    ids = {added["offers"]["offers"]["0"]["id"], contact["offer"]["id"], contact["messages"][0]["offer"]["id"]}
    assert len(ids) == 1
    r = await http.post("/topwork/api/offer", data={"freelancer": "jasonmiller", "contractTitle": "", "hourlyRate": "abc", "startDate": ""})
    assert "Add a contract title" in r.text and "Enter an hourly rate" in r.text


async def test_removing_a_post_closes_it_and_lists_it_as_removed(http):
    await http.post("/topwork/api/jobs/remove", data={"job": "job-3"})
    await http.post("/topwork/api/jobs/remove", data={"job": "job-3"})     # already removed: no second copy
    diff = (await finish_state(http, "topwork"))["initialfinaldiff"]
    assert [j["id"] for j in diff["added"]["jobs"]["removedJobPosts"]] == ["job-3"]     # a list, as the script reads it
    assert diff["updated"]["jobs"]["jobs"] == {"2": {"status": "closed"}} and diff["deleted"] == {}
    assert "Logo Design for Artisan Bakery" not in (await http.get("/topwork/")).text
    assert board.invite_text(FREELANCER_BY_ID["jasonmiller"]).startswith("Hi Jason, I'd like to invite you")


# --- dense rewards (configs/rewards.yaml) ---------------------------------------------------------------


def test_milestones_are_the_specs():
    assert site_milestone_names("topwork") == {"message_sent", "job_posted", "offer_sent", "saved", "job_removed"}


async def test_milestones_fire_along_oracles_and_not_for_drafts_or_wandering(env, reward):
    """topwork-11: the offer and its message on the Send step; topwork-13: the published post on the
    Post step, a draft pays nothing; topwork-14: each save pays once; a walk through the pages pays none."""
    from halo.agent import actions as A
    from halo.sites.oracle import Target
    from halo.sites.topwork.oracles import ANNOTATOR, post_job
    from tests.reward.rollouts import oracle_policy, run_rollout

    def paid(run) -> list[str]:
        return [m for step in milestones_by_step(run.breakdowns) for m in step]

    rehire, annotator, draft, saving, wandering = await asyncio.gather(
        run_rollout(env, reward, "topwork-11", oracle_policy(TopWork.oracles["topwork-11"])),
        run_rollout(env, reward, "topwork-13", oracle_policy(TopWork.oracles["topwork-13"])),
        run_rollout(env, reward, "topwork-13", oracle_policy(post_job(*ANNOTATOR, "No, not at this time", 20, 25, draft=True))),
        run_rollout(env, reward, "topwork-14", oracle_policy(TopWork.oracles["topwork-14"])),
        run_rollout(env, reward, "topwork-12", oracle_policy([
            A.ClickElement(Target("link", contains="Find talent")), A.ClickElement(Target("link", "Jason Miller")),
            A.ClickElement(Target("link", "Invite to job")), A.ClickElement(Target("link", contains="My hires")),
            A.ClickElement(Target("link", contains="Messages")), A.ClickElement(Target("link", contains="Mike Chen"))])),
    )
    assert all(run.evaluation.success for run in (rehire, annotator, saving))
    assert milestones_by_step(rehire.breakdowns)[-1] == ["message_sent", "offer_sent"] and len(paid(rehire)) == 2
    assert milestones_by_step(annotator.breakdowns)[-1] == ["job_posted"] and paid(annotator) == ["job_posted"]
    assert paid(draft) == [] and not draft.evaluation.success
    assert paid(saving) == ["saved"]
    assert paid(wandering) == [] and not wandering.evaluation.success
