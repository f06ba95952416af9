"""OpenDining replica: every REAL v2 OpenDining task is solved by its oracle and failed by a no-op
and by its labelled near misses, scored by agisdk's own eval scripts through real Chromium and the
env service; plus the store shape and seed facts those scripts depend on, over HTTP."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from halo.tasks.registry import agisdk_v2_dir
from halo.sites.opendining import TASK_IDS, OpenDining, restaurants
from halo.sites.opendining.restaurants import TODAY, by_name
from tests.sites.replica_checks import (
    assert_serves_every_v2_task, assert_verified, natural_task_order, finish_state, score, site_client, verified_fixture,
)

TASKS = natural_task_order(TASK_IDS)


def test_replica_serves_every_v2_opendining_task():
    assert_serves_every_v2_task(OpenDining, 11)


verified = verified_fixture(TASKS)


@pytest.mark.parametrize("task_id", TASKS)
async def test_task_verifies_with_agisdk_scripts(verified, task_id):
    assert_verified(verified[task_id])


async def test_oracle_reservations_are_what_the_goals_ask(verified):
    """Beyond the (sometimes lenient) scripts: the booked table is the one the goal names."""
    def detail(task_id: str) -> dict:
        [entry] = verified[task_id].oracle.state["initialfinaldiff"]["added"]["booking"]["bookingDetails"].values()
        return entry

    river = detail("opendining-12")
    assert river["restaurant"]["id"] == "cd4f81d3-3c75-4c67-b47b-e7f013f6ae9d" and river["date"].startswith("2025-09-29")
    assert (river["time"], river["guests"]) == ("3:00 PM", "5 people")
    haight = detail("opendining-17")
    assert haight["restaurant"]["neighborhood"] == "Haight-Ashbury" and haight["date"].startswith("2024-09-22")
    assert haight["optionals"]["occasion"] == "Business Meal" and haight["guests"] == "6 people"
    embarcadero = detail("opendining-7")
    assert embarcadero["restaurant"]["neighborhood"] == "Embarcadero" and embarcadero["restaurant"]["rating"] > 3
    assert detail("opendining-5")["restaurant"]["rating"] >= 4 and detail("opendining-6")["date"].startswith("2024-07-18")
    booking = verified["opendining-24"].oracle.state["initialfinaldiff"]["added"]["booking"]
    assert booking["index"] == by_name("Nonna's Kitchen").id and booking["bookingCompleted"] is True and booking["loading"] is False
    [alert] = verified["opendining-20"].oracle.state["initialfinaldiff"]["added"]["notification"]["notifications"].values()
    assert (alert["restaurantName"], alert["time"]) == ("Evening Delight", "5:00 PM")
    assert "booking" not in verified["opendining-20"].oracle.state["initialfinaldiff"]["added"]


# --- the data the goals and the scripts depend on -------------------------------------------------


def test_only_embarcadero_restaurants_read_as_waterfront_to_opendining_7():
    import runpy

    script = runpy.run_path(str(agisdk_v2_dir() / "eval_scripts" / "eval_opendining_7.py"))
    for r in restaurants.RESTAURANTS:
        assert script["is_embarcadero_restaurant"](r.as_store()) == (r.neighborhood == "Embarcadero"), r.name


def test_seed_has_the_tables_the_goals_need_and_their_decoys():
    def open_at(name: str, time: str, day: dt.date = TODAY, party: int = 2) -> bool | None:
        return dict(restaurants.slot_grid(by_name(name), day, party)).get(time)

    assert open_at("Evening Delight", "5:00 PM") is False and open_at("Evening Delight", "5:30 PM") is True
    assert open_at("River View Cafe", "3:00 PM", dt.date(2025, 9, 29), 5) is True
    assert open_at("Haight Street Supper Club", "8:30 PM", dt.date(2024, 9, 22), 6) is True
    assert open_at("Trattoria Bella", "3:00 PM") is True and open_at("Nonna's Kitchen", "3:00 PM") is None   # closed at 3
    assert open_at("Sunrise Griddle", "8:30 AM") is True and by_name("Early Bird Pancakes").rating < 3
    assert restaurants.slot_grid(by_name("Trattoria Bella"), TODAY, 9) == []             # over its party limit
    assert restaurants.slot_grid(by_name("Trattoria Bella"), dt.date(2026, 1, 2), 2) == []  # past the picker's range
    assert all(r.rating >= 3.5 for r in restaurants.top_rated()) and by_name("Midnight Noodle Bar") not in restaurants.top_rated()
    assert [r.name for r in restaurants.find(cuisine="Italian")] == ["Trattoria Bella", "Nonna's Kitchen", "Osteria Verde"]
    assert restaurants.parse_time_label(restaurants.time_label(13 * 60 + 30)) == 13 * 60 + 30
    assert restaurants.time_label(12 * 60) == "12:00 PM" and restaurants.time_label(7 * 60) == "7:00 AM"


# --- over HTTP ---------------------------------------------------------------------------------------


@pytest.fixture
async def http():
    async with site_client(OpenDining, "opendining-1", "r9") as client:
        yield client


async def test_no_op_holds_only_the_config(http):
    await http.get("/opendining/")
    state = await finish_state(http, "opendining")
    assert state["initialfinaldiff"] == {"added": {"config": {"open_dining": {"run_id": "r9", "task_id": "opendining-1"}}},
                                         "deleted": {}, "updated": {}}
    assert all(score(t, state) == 0.0 for t in TASKS)


async def test_reservations_add_the_booking_fields_and_append_details(http):
    trattoria, liberty = by_name("Trattoria Bella"), by_name("Liberty Grill")
    page = (await http.get(f"/opendining/restaurant/{trattoria.id}", params={"party": "3", "date": "2024-07-19"})).text
    assert "Friday, July 19, 2024" in page and 'aria-label="3:00 PM"' in page and "3 people" in page
    r = await http.post("/opendining/reserve", data={"restaurant": trattoria.id, "party": "3", "date": "2024-07-19",
                                                      "time": "3:00 PM", "occasion": "Anniversary", "specialRequest": "window"})
    assert "Reservation confirmed at Trattoria Bella" in r.text
    await http.post("/opendining/reserve", data={"restaurant": liberty.id, "party": "2", "date": "2024-07-18", "time": "7:00 PM",
                                                  "occasion": "None"})
    booking = (await finish_state(http, "opendining"))["initialfinaldiff"]["added"]["booking"]
    assert set(booking) == {"bookingDetails", "index", "date", "time", "guests", "loading", "bookingCompleted"}
    assert booking["index"] == liberty.id and booking["time"] == "7:00 PM" and booking["guests"] == "2 people"
    first, second = booking["bookingDetails"]["0"], booking["bookingDetails"]["1"]
    assert first["restaurant"] == trattoria.as_store() and first["date"].startswith("2024-07-19") and first["guests"] == "3 people"
    assert first["optionals"] == {"occasion": "Anniversary", "specialRequest": "window"} and second["optionals"]["occasion"] == ""


async def test_a_taken_or_impossible_table_is_an_error_and_notify_me_watches_taken_times(http):
    evening = by_name("Evening Delight")
    page = (await http.get(f"/opendining/restaurant/{evening.id}")).text
    assert 'aria-label="Notify me at 5:00 PM"' in page and 'aria-label="5:30 PM"' in page
    r = await http.post("/opendining/reserve", data={"restaurant": evening.id, "party": "2", "date": "2024-07-18", "time": "5:00 PM"})
    assert r.status_code == 409 and "has no table for 2 people at 5:00 PM" in r.text
    state = await finish_state(http, "opendining")
    assert state["initialfinaldiff"]["added"]["config"]["open_dining"]["error_booking"] is True
    assert "booking" not in state["initialfinaldiff"]["added"]
    await http.post("/opendining/notify", data={"restaurant": evening.id, "party": "2", "date": "2024-07-18", "time": "5:30 PM"})
    r = await http.post("/opendining/notify", data={"restaurant": evening.id, "party": "2", "date": "2024-07-18", "time": "5:00 PM"})
    assert "notify you if a table opens at 5:00 PM" in r.text
    notes = (await finish_state(http, "opendining"))["initialfinaldiff"]["added"]["notification"]["notifications"]
    assert list(notes.values()) == [{"restaurantId": evening.id, "restaurantName": "Evening Delight",
                                     "date": "2024-07-18T07:00:00.000Z", "time": "5:00 PM", "guests": "2 people"}]


async def test_search_filters_and_pages(http):
    r = await http.get("/opendining/search", params={"cuisine": "Italian", "rating": "4", "neighborhood": "bogus"})
    names = re.findall(r'class="name" href="[^"]+">([^<]+)<', r.text)
    assert names == ["Trattoria Bella", "Nonna&#39;s Kitchen"] and "2 restaurants · Italian" in r.text
    home = (await http.get("/opendining/")).text
    assert "Top rated restaurants" in home and "Midnight Noodle Bar" not in home.split("More to explore")[0]
    assert (await http.get("/opendining/restaurant/nope")).status_code == 404
    assert (await http.get(f"/opendining/img/{by_name('Golden Lotus').id}.svg")).text.startswith("<svg")
    picker = (await http.get(f"/opendining/restaurant/{by_name('River View Cafe').id}")).text
    assert 'max="2025-12-31"' in picker and 'min="2024-07-18"' in picker


async def test_reward_milestones_follow_the_oracle_and_not_a_wander(env, reward):
    from halo.agent import actions as A
    from halo.sites.oracle import Target
    from tests.reward.rollouts import oracle_policy, run_rollout

    run = await run_rollout(env, reward, "opendining-2", oracle_policy(OpenDining.oracles["opendining-2"]))
    assert run.evaluation.success
    assert [c for c in run.components if c.startswith("milestone:")] == ["milestone:restaurant_page", "milestone:reservation_made"]
    run = await run_rollout(env, reward, "opendining-20", oracle_policy(OpenDining.oracles["opendining-20"]))
    assert [c for c in run.components if c.startswith("milestone:")] == ["milestone:restaurant_page", "milestone:notify_set"]
    wander = [A.SelectOption(Target("combobox", "Cuisine"), ("American",)), A.ClickElement(Target("button", "Let's go")),
              A.ClickElement(Target("link", "My reservations"))]
    run = await run_rollout(env, reward, "opendining-2", oracle_policy(wander))
    assert not run.evaluation.success and not [c for c in run.components if c.startswith("milestone:")]
