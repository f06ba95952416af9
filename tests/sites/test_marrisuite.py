"""MarriSuite replica: marrisuite-8 is solved by its oracle and failed by a no-op and by its wrong
attempts (Santa Barbara, a booking, two rooms), scored by agisdk's own script through real Chromium
and the env service; plus the store rules the text-scanning script depends on, over HTTP."""

from __future__ import annotations

import pytest

from halo.tasks.registry import default_registry
from halo.sites.marrisuite import TASK_IDS, MarriSuite, hotels
from tests.sites.replica_checks import assert_verified, finish_state, score, site_client, verified_fixture


def test_replica_serves_the_v2_marrisuite_task():
    [task] = default_registry().list(site="marrisuite", suite="real-v2")
    assert task.id in TASK_IDS and task.replica_available and task.scorable and task.notes
    assert set(MarriSuite.oracles) == set(MarriSuite.wrong_attempts) == TASK_IDS


verified = verified_fixture(TASK_IDS)


def test_task_verifies_with_agisdk_script(verified):
    rows = verified
    assert_verified(rows["marrisuite-8"])
    assert set(rows["marrisuite-8"].wrong) == {"Santa Barbara instead of Goleta", "books a Goleta hotel instead of showing them",
                                               "two rooms"}
    search = rows["marrisuite-8"].oracle.state["initialfinaldiff"]["added"]["search"]
    assert search == {"destination": "Goleta, California, USA", "checkIn": "2024-07-26", "checkOut": "2024-07-28",
                      "rooms": 1, "adults": 1, "summary": "1 Room, 1 Adult"}


@pytest.fixture
async def http():
    async with site_client(MarriSuite, "marrisuite-8", "r1") as client:
        yield client


async def test_search_stores_ids_only_and_the_no_op_holds_only_the_config(http):
    await http.get("/marrisuite/")
    state = await finish_state(http, "marrisuite")
    assert state["initialfinaldiff"] == {"added": {"config": {"marrisuite": {"run_id": "r1", "task_id": "marrisuite-8"}}},
                                         "deleted": {}, "updated": {}}
    assert score("marrisuite-8", state) == 0.0
    r = await http.get("/marrisuite/search", params={"destination": "santa barbara", "checkIn": "2024-07-26", "checkOut": "2024-07-28"})
    assert "4 hotels available in Santa Barbara, California, USA" in r.text and "Goleta" not in r.text.split("<main")[1]
    added = (await finish_state(http, "marrisuite"))["initialfinaldiff"]["added"]
    assert added["searchResults"] == {"hotelIds": ["h-201", "h-202", "h-203", "h-204"], "count": 4, "sortBy": "recommended"}
    assert "goleta" not in str(added).lower()                 # the whole state is read as text
    r = await http.get("/marrisuite/search", params={"destination": "Goleta", "sort": "price_low"})
    prices = [h.price for h in hotels.search_hotels(hotels.CITIES[0], "price_low")]
    assert prices == sorted(prices) and len(prices) == 6 and "6 hotels available in Goleta" in r.text
    state = await finish_state(http, "marrisuite")
    assert state["initialfinaldiff"]["added"]["search"]["checkIn"] == "2024-07-26"       # next weekend by default
    assert score("marrisuite-8", state) == 1.0


async def test_unknown_places_store_nothing_and_booking_confirms(http):
    r = await http.get("/marrisuite/search", params={"destination": "Atlantis"})
    assert "We couldn't find" in r.text
    assert "search" not in (await finish_state(http, "marrisuite"))["initialfinaldiff"]["added"]
    assert (await http.get("/marrisuite/hotel/nope")).status_code == 404
    r = await http.post("/marrisuite/book", data={"hotel": "h-102", "checkIn": "2024-07-26", "checkOut": "2024-07-28", "rooms": "1"})
    assert "Your reservation is confirmed" in r.text and "MS0074190" in r.text
    [reservation] = (await finish_state(http, "marrisuite"))["initialfinaldiff"]["added"]["reservations"]
    assert reservation["hotelId"] == "h-102" and reservation["status"] == "Reservation confirmed" and reservation["total"] == 478
    assert hotels.next_weekend() == (hotels.dt.date(2024, 7, 26), hotels.dt.date(2024, 7, 28))


async def test_reward_milestone_follows_the_oracle_and_not_a_wander(env, reward):
    from halo.agent import actions as A
    from halo.sites.oracle import Target
    from tests.reward.rollouts import oracle_policy, run_rollout

    run = await run_rollout(env, reward, "marrisuite-8", oracle_policy(MarriSuite.oracles["marrisuite-8"]))
    assert run.evaluation.success and [c for c in run.components if c.startswith("milestone:")] == ["milestone:search_run"]
    wander = [A.Fill(Target("textbox", "Destination"), "Goleta"), A.ClickElement(Target("link", "My Trips"))]
    run = await run_rollout(env, reward, "marrisuite-8", oracle_policy(wander))
    assert not run.evaluation.success and not [c for c in run.components if c.startswith("milestone:")]
