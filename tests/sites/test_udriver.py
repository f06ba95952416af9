"""UDriver replica: every REAL v2 UDriver task is solved by its oracle and failed by a no-op and by
its labelled wrong attempts, as scored by agisdk's own eval scripts (through real Chromium and the
env service); plus the places, prices and wallet rules those scripts depend on, over HTTP."""

from __future__ import annotations

import runpy

import httpx
import pytest

from halo.tasks.registry import agisdk_v2_dir
from halo.sites.app import create_app
from halo.sites.udriver import TASK_IDS, UDriver, places, rides
from halo.sites.udriver.places import CAR_BY_TYPE, PLACE_BY_ID
from tests.sites import replica_checks
from tests.sites.replica_checks import assert_listed_by_env, assert_serves_every_v2_task, assert_verified, score
from tests.sites.replica_checks import verified_fixture

UDRIVER_TASKS = sorted(TASK_IDS, key=lambda t: int(t.rsplit("-", 1)[1]))


def test_replica_serves_every_v2_udriver_task():
    assert_serves_every_v2_task(UDriver, 14, notes_for_every_task=False)


async def test_env_service_lists_every_task(env):
    await assert_listed_by_env(env, UDriver)


verified = verified_fixture(UDRIVER_TASKS)


@pytest.mark.parametrize("task_id", UDRIVER_TASKS)
async def test_task_verifies_with_agisdk_scripts(verified, task_id):
    assert_verified(verified[task_id])


async def test_oracle_states_carry_what_the_goals_ask(verified):
    def added(task_id: str) -> dict:
        return verified[task_id].oracle.state["initialfinaldiff"]["added"]

    trip = added("udriver-9")["ride"]["trip"]
    assert (trip["car"]["type"], trip["paymentMethod"]["type"], trip["status"]) == ("UdriverXL", "cash", "completed")
    assert added("udriver-9")["user"]["wallet"]["balance"] == rides.START_BALANCE          # cash: no debit
    trip = added("udriver-15")["ride"]["trip"]
    assert trip["car"]["finalPrice"] == 24.0 and added("udriver-15")["user"]["wallet"]["balance"] == 1.5
    [trip] = added("udriver-20")["ride"]["trips"]
    assert trip["car"]["type"] == "UdriverShare"                                             # the cheapest
    assert trip["destination"]["id"] == 717 and trip["pickup"]["name"] == "Club 26 Mix"
    ride = added("udriver-17")["ride"]
    assert (ride["when"], ride["trips"], ride["bookedTrips"]) == ("scheduled", [], [])     # a price, not a booking
    methods = added("udriver-14")["user"]["wallet"]["paymentMethods"]
    assert [m["id"] for m in methods if m["isDefault"]] == ["1"]
    wallet = added("udriver-2")["user"]["wallet"]
    assert wallet["balance"] == 125.5 and wallet["transactions"][-1] == {
        "id": "tx-5", "date": "2024-07-18", "description": "Wallet Top-up", "type": "credit", "amount": 100.0}
    # a no-op shows no balance: the wallet and the ride are written only when shown or changed
    noop = verified["udriver-19"].noop.state["initialfinaldiff"]
    assert set(noop["added"]) == {"config"} and noop["updated"] == {} and noop["deleted"] == {}


# --- places, prices and the wallet -----------------------------------------------------------------


def test_places_keep_the_ids_the_scripts_hard_code():
    expected = {52: "Amber India Restaurant", 129: "22nd & Irving", 201: "Club X", 370: "AI Electronics Center",
                699: "1 Hotel San Francisco", 717: "100 Van Ness", 723: "Fox Plaza Apartments",
                733: "333 Fremont Apartments", 739: "388 Beale Street"}
    assert {i: PLACE_BY_ID[i].name for i in expected} == expected
    assert (PLACE_BY_ID[129].identifier, PLACE_BY_ID[129].street) == ("SPR", "2101 Irving Street")
    assert PLACE_BY_ID[370].identifier == "RF1" and PLACE_BY_ID[733].identifier == "DLO"
    assert PLACE_BY_ID[699].street == "8 Mission Street"
    assert len(places.PLACES) >= 40 and len({p.id for p in places.PLACES}) == len(places.PLACES)
    assert sum(p.name == "7-Eleven" for p in places.PLACES) == 3 and sum(p.name == "Chase Bank" for p in places.PLACES) == 3


def test_few_places_pass_for_22nd_and_irving():
    """udriver-7's script takes any pickup on Irving Street: only the corner and the 7-Eleven beside it are there."""
    is_irving = runpy.run_path(str(agisdk_v2_dir() / "eval_scripts" / "eval_udriver_7.py"), run_name="udriver_7")["is_irving"]
    assert {p.id for p in places.PLACES if is_irving(p.as_store())} == {129, 810}


def _price(a: int, b: int, car: str) -> float:
    return places.price(PLACE_BY_ID[a], PLACE_BY_ID[b], CAR_BY_TYPE[car])["finalPrice"]


def test_prices_are_calibrated_to_the_credits():
    by_name = {p.name: p.id for p in places.PLACES}
    for a, b in [("Aaha Indian Cuisine", "Casa Loma Hotel"), ("Club X", "Fox Plaza Apartments"), ("1 Hotel San Francisco", "100 Van Ness")]:
        assert _price(by_name[a], by_name[b], places.DEFAULT_CAR) <= rides.START_BALANCE, (a, b)
    assert _price(739, 52, "UdriverXL") == 24.0
    fox = [_price(201, 723, c.type) for c in places.CARS]
    assert min(fox) <= rides.START_BALANCE < max(fox) and _price(201, 723, "UdriverXL") > rides.START_BALANCE
    assert min(places.CARS, key=lambda c: _price(809, 717, c.type)).type == "UdriverShare"


def test_autocomplete_reads_like_a_search_box():
    names = lambda q: [p.name for p in places.suggest(q)]  # noqa: E731
    assert names("1030 post st") == ["1030 Post Street Apartments"]
    assert names("7-eleven") == ["7-Eleven"] * 3
    assert names("  Fox   Plaza ") == ["Fox Plaza Apartments"]
    assert set(names("casa loma")) == {"Casa Loma Hotel", "Casa Loma Cafe"}
    assert names("") == [] and names("atlantis") == []


@pytest.fixture
async def http():
    transport = httpx.ASGITransport(app=create_app([UDriver]))
    async with httpx.AsyncClient(transport=transport, base_url="http://sites", follow_redirects=True) as client:
        await client.get("/udriver/config", params={"run_id": "run-5", "task_id": "udriver-11"})
        yield client


async def finish_state(http: httpx.AsyncClient) -> dict:
    return await replica_checks.finish_state(http, "udriver")


async def route(http: httpx.AsyncClient, pickup: int, dropoff: int) -> httpx.Response:
    await http.post("/udriver/api/ride/place", data={"which": "pickup", "place": str(pickup)})
    return await http.post("/udriver/api/ride/place", data={"which": "dropoff", "place": str(dropoff)})


async def test_wallet_refuses_rides_it_cannot_pay_for(http):
    page = await route(http, 201, 723)
    assert "UDriver Credits" in page.text and "$25.50" in page.text and "Not enough credits" in page.text
    await http.post("/udriver/api/ride/car", data={"car": "UdriverXL"})
    r = await http.post("/udriver/api/ride/request")
    assert "Not enough UDriver Credits" in r.text
    state = await finish_state(http)
    assert state["initialfinaldiff"]["added"]["ride"]["trips"] == [] and score("udriver-11", state) == 0.0
    await http.post("/udriver/api/ride/car", data={"car": "UdriverX"})
    r = await http.post("/udriver/api/ride/request")
    assert "You have arrived at Fox Plaza Apartments" in r.text
    state = await finish_state(http)
    assert score("udriver-11", state) == 1.0
    assert state["initialfinaldiff"]["added"]["user"]["wallet"]["balance"] == 7.5


async def test_schedule_and_top_up_rules(http):
    await route(http, 733, 808)
    r = await http.post("/udriver/api/ride/when", data={"when": "scheduled", "day": "7/18/2024", "time": "9:30 AM"})
    assert "a pickup today must be after 10:00 AM" in r.text
    r = await http.post("/udriver/api/ride/when", data={"when": "scheduled", "day": "7/30/2024", "time": "3:30 PM"})
    assert "choose a pickup day" in r.text
    await http.post("/udriver/api/ride/when", data={"when": "scheduled", "day": "7/18/2024", "time": "3:30 PM"})
    assert score("udriver-17", await finish_state(http)) == 1.0
    for bad in ("-5", "abc", "0", "1e9", "10.001"):
        r = await http.post("/udriver/api/wallet/topup", data={"amount": bad, "method": "1"})
        assert r.status_code == 200 and "u-error" in r.text, bad
    r = await http.post("/udriver/api/wallet/topup", data={"amount": "100", "method": "cash"})
    assert "add funds with a card" in r.text
    await http.post("/udriver/api/wallet/topup", data={"amount": "100", "method": "1"})
    assert score("udriver-2", await finish_state(http)) == 1.0


async def test_no_op_scores_zero_everywhere(http):
    await http.get("/udriver/")
    state = await finish_state(http)
    assert state["initialfinaldiff"]["added"]["config"]["udriver"]["cars"]["UdriverShare"] == {"multiplier": 0.8, "discount": 0.0}
    for task_id in UDRIVER_TASKS:
        assert score(task_id, state) == 0.0, task_id


async def test_reward_milestones_fire_in_order_along_the_oracle(env, reward):
    """configs/rewards.yaml's udriver milestones: pickup, dropoff, price, booking in order; the wallet shown
    (not changed) earns nothing."""
    from tests.reward.rollouts import oracle_policy, run_rollout

    from halo.sites.udriver.oracles import WALLET

    run = await run_rollout(env, reward, "udriver-16", oracle_policy(UDriver.oracles["udriver-16"]))
    assert run.evaluation.success
    paid = [c for c in run.components if c.startswith("milestone:")]
    assert paid == ["milestone:pickup_set", "milestone:dropoff_set", "milestone:price_shown", "milestone:ride_booked"]
    wander = await run_rollout(env, reward, "udriver-2", oracle_policy([WALLET]))
    assert not wander.evaluation.success and [c for c in wander.components if c.startswith("milestone:")] == []
    topped = await run_rollout(env, reward, "udriver-2", oracle_policy(UDriver.oracles["udriver-2"]))
    assert topped.evaluation.success and [c for c in topped.components if c.startswith("milestone:")] == ["milestone:wallet_changed"]
