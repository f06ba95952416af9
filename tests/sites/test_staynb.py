"""StayNB replica: every REAL v2 StayNB task is solved by its oracle and failed by a no-op and by
its labelled near misses, scored by agisdk's own eval scripts through real Chromium and the env
service; plus the picker, guests, filters, wishlist and booking rules those scripts depend on."""

from __future__ import annotations

import datetime as dt

import pytest

from halo.sites.staynb import TASK_IDS, StayNB, stays, trips
from halo.sites.staynb.stays import DESTINATION_BY_LABEL, Filters, by_title
from tests.sites.replica_checks import (
    assert_serves_every_v2_task, assert_verified, natural_task_order, finish_state, score, site_client, verified_fixture,
)

TASKS = natural_task_order(TASK_IDS)


def test_replica_serves_every_v2_staynb_task():
    assert_serves_every_v2_task(StayNB, 11)


verified = verified_fixture(TASKS)


@pytest.mark.parametrize("task_id", TASKS)
async def test_task_verifies_with_agisdk_scripts(verified, task_id):
    assert_verified(verified[task_id])


async def test_oracle_searches_are_what_the_goals_ask(verified):
    def search(task_id: str) -> dict:
        return verified[task_id].oracle.state["initialfinaldiff"]["added"]["search"]

    rome = search("staynb-14")
    assert rome["appliedDates"]["startDate"][:10] == "2025-01-03" and rome["appliedDates"]["endDate"][:10] == "2025-01-05"
    assert rome["appliedFilters"]["bedrooms"] == 2 and rome["appliedFilters"]["amenities"] == ["Wifi"]
    assert rome["appliedGuestCounts"] == {"Adults": 4, "Children": 0, "Infants": 0, "Pets": 0}
    tonight = search("staynb-9")
    assert tonight["appliedDates"]["startDate"][:10] == tonight["appliedDates"]["endDate"][:10] == "2024-07-18"
    assert sorted(tonight["appliedFilters"]["amenities"]) == ["Air conditioning", "Free parking", "Pool", "Wifi"]
    [wishlist] = verified["staynb-6"].oracle.state["initialfinaldiff"]["added"]["wishlist"]["wishlists"].values()
    assert wishlist["name"] == "Cape Town" and [s["title"] for s in wishlist["stays"]] == ["Sea Point family apartment"]
    shared = verified["staynb-19"].oracle.state["initialfinaldiff"]["added"]["shares"]
    assert shared == [{"stayId": by_title("Kitsilano house near the beach").id, "title": "Kitsilano house near the beach",
                       "via": "Messages", "to": "Weekend Crew (group chat)"}]
    assert "removePopup" not in str(verified["staynb-14"].oracle.state)


# --- data and rules ----------------------------------------------------------------------------------


def test_destinations_resolve_and_decoys_stay_apart():
    assert [d.label for d in stays.suggestions("san jose")] == ["San Jose, Costa Rica", "San Jose, California, United States"]
    assert stays.resolve("san jose") is None and stays.resolve("paris").label == "Paris, France"
    assert stays.resolve("AUSTRIA").label == "Austria" and stays.resolve("vienna").label == "Vienna, Austria"
    assert not any("USA" in d.label for d in stays.DESTINATIONS)          # ", usa" would waive staynb-4's wifi check
    assert stays.AMENITIES == ("Wifi", "Free parking", "Air conditioning", "Pool", "Kitchen", "Washer")
    austria = stays.find(DESTINATION_BY_LABEL["Austria"], 3, Filters())
    assert {s.location for s in austria} >= {"Vienna, Austria", "Salzburg, Austria", "Hallstatt, Austria"}
    cape = stays.find(DESTINATION_BY_LABEL["Cape Town, South Africa"], 4, Filters(amenities=("Wifi",)))
    assert by_title("Bo-Kaap studio loft") in cape and by_title("Bo-Kaap studio loft").bedrooms == 1
    assert by_title("Bo-Kaap studio loft") not in stays.find(DESTINATION_BY_LABEL["Cape Town, South Africa"], 4, Filters(bedrooms=2))
    nearby = stays.find(DESTINATION_BY_LABEL["Nearby"], 0, Filters(amenities=("Pool", "Wifi", "Free parking", "Air conditioning")))
    assert by_title("Mill Valley retreat with pool") in nearby
    assert stays.find(DESTINATION_BY_LABEL["Rome, Italy"], 4, Filters(amenities=("Wifi",), bedrooms=2))


def test_the_picker_sets_one_day_then_a_range_and_steppers_bring_an_adult():
    q = trips.Query()
    trips.pick_day(q, dt.date(2024, 7, 18))
    assert q.checkin == q.checkout == dt.date(2024, 7, 18)              # the first click: a one-night search
    trips.pick_day(q, dt.date(2024, 7, 21))
    assert (q.checkin, q.checkout) == (dt.date(2024, 7, 18), dt.date(2024, 7, 21))
    trips.pick_day(q, dt.date(2024, 7, 25))                               # after a full range: start again
    assert q.checkin == q.checkout == dt.date(2024, 7, 25)
    trips.pick_day(q, dt.date(2024, 7, 1))                                # the past is not offered
    assert q.checkin == dt.date(2024, 7, 25)
    trips.step_guests(q, "Children", +1)
    assert q.guests == {"Adults": 1, "Children": 1, "Infants": 0, "Pets": 0} and q.guests_label() == "2 guests"
    trips.step_guests(q, "Adults", -1)
    assert q.guests["Adults"] == 1                                         # an adult stays while children come


def test_card_validation_errors():
    assert not any(trips.card_errors("4242 4242 4242 4242", "12/27", "123", "94103").values())
    errors = trips.card_errors("4242 4242 4242 4241", "13/27", "12", "9410")
    assert all(errors.values())
    assert trips.card_errors("4242424242424242", "06/24", "123", "94103")["expiration"] == "This card has expired."


# --- over HTTP ---------------------------------------------------------------------------------------


@pytest.fixture
async def http():
    async with site_client(StayNB, "staynb-9", "r3") as client:
        yield client


async def test_no_op_holds_only_the_config_and_drafts_write_nothing(http):
    await http.get("/staynb/")
    await http.get("/staynb/", params={"where": "Paris", "pick": "2024-08-02", "open": "dates"})
    r = await http.get("/staynb/", params={"where": "Paris", "checkin": "2024-08-02", "checkout": "2024-08-02", "step": "Adults:+"})
    assert 'aria-label="Who: 1 guest"' in r.text and 'aria-label="Check in: Aug 2"' in r.text
    state = await finish_state(http, "staynb")
    assert state["initialfinaldiff"] == {"added": {"config": {"staynb": {"run_id": "r3", "task_id": "staynb-9"}}},
                                         "deleted": {}, "updated": {}}
    assert all(score(t, state) == 0.0 for t in TASKS)


async def test_search_needs_a_destination_from_the_list_and_records_filters(http):
    r = await http.get("/staynb/", params={"where": "San Jose", "go": "1"})
    assert "Choose a destination from the list." in r.text and "search" not in (await finish_state(http, "staynb"))["initialfinaldiff"]["added"]
    r = await http.get("/staynb/s", params=[("where", "Rome, Italy"), ("checkin", "2025-01-03"), ("checkout", "2025-01-05"),
                                            ("adults", "4"), ("bedrooms", "2"), ("amenities", "Wifi"), ("amenities", "Sauna"), ("go", "1")])
    assert str(r.url).endswith("/staynb/s?where=Rome%2C+Italy&checkin=2025-01-03&checkout=2025-01-05&adults=4&amenities=Wifi&bedrooms=2")
    assert "Trastevere two-bedroom with terrace" in r.text
    search = (await finish_state(http, "staynb"))["initialfinaldiff"]["added"]["search"]
    assert search["appliedFilters"] == {"amenities": ["Wifi"], "bedrooms": 2, "beds": 0, "bathrooms": 0, "minPrice": 0, "maxPrice": 0}
    assert search["recentSearches"] == [{"destination": "Rome, Italy", "guests": "4 guests",
                                         "dates": {"startDate": "2025-01-03T07:00:00.000Z", "endDate": "2025-01-05T07:00:00.000Z"}}]
    assert score("staynb-14", await finish_state(http, "staynb")) == 1.0
    picker = (await http.get("/staynb/", params={"open": "dates", "month": "2025-01"})).text
    assert 'aria-label="Friday, January 3, 2025"' in picker and "February 2025" in picker


async def test_wishlists_hold_stays_as_a_list_and_reserve_then_pay(http):
    sea_point, studio = by_title("Sea Point family apartment"), by_title("Bo-Kaap studio loft")
    r = await http.post("/staynb/wishlist/create", data={"stay": sea_point.id, "back": "/s?where=Cape+Town%2C+South+Africa", "name": ""})
    assert "Give your wishlist a name." in r.text or 'aria-label="Add to wishlist"' in r.text
    await http.post("/staynb/wishlist/create", data={"stay": sea_point.id, "back": "/s", "name": "Cape Town"})
    await http.post("/staynb/wishlist/add", data={"stay": studio.id, "back": "/s", "wishlist": "wl-1"})
    wishlists = (await finish_state(http, "staynb"))["initialfinaldiff"]["added"]["wishlist"]["wishlists"]
    assert [s["id"] for s in wishlists["wl-1"]["stays"]] == [sea_point.id, studio.id]      # a list, as staynb-6 reads it
    assert wishlists["wl-1"]["stays"][0]["rooms"] == {"bedrooms": 2, "beds": 3, "bathrooms": 2, "guests": 6}
    r = await http.post("/staynb/reserve", data={"stay": sea_point.id})
    assert "Add your check-in and check-out dates" in r.text
    r = await http.post("/staynb/reserve", data={"stay": sea_point.id, "checkin": "2024-10-01", "checkout": "2024-10-06", "adults": "4"})
    assert "Confirm and pay" in r.text and "$725" in r.text
    r = await http.post("/staynb/pay", data={"cardNumber": "1234", "expiration": "12/27", "cvv": "123", "zipcode": "94103"})
    assert r.status_code == 400 and "Check your card number." in r.text
    booking = (await finish_state(http, "staynb"))["initialfinaldiff"]["updated"]["booking"]
    assert booking["isBooking"] is True and booking["errors"] == {"cardNumber": "Check your card number."}
    r = await http.post("/staynb/pay", data={"cardNumber": "4242 4242 4242 4242", "expiration": "12/27", "cvv": "123", "zipcode": "94103"})
    assert "Your reservation is confirmed" in r.text
    diff = (await finish_state(http, "staynb"))["initialfinaldiff"]
    [confirmed] = diff["added"]["booking"]["bookingDetails"].values()
    assert confirmed["stayId"] == sea_point.id and confirmed["total"] == 725 + 102 and confirmed["card"] == "•••• 4242"
    assert "booking" not in diff["updated"]          # isBooking, currentBooking and errors are back as they started


async def test_pages_render_and_unknown_ones_are_404(http):
    for _, path in StayNB.showcase_pages:
        assert (await http.get("/staynb" + path)).status_code == 200, path
    assert (await http.get("/staynb/rooms/1")).status_code == 404
    assert (await http.get("/staynb/book/40100")).status_code == 404           # no booking under way
    stay = (await http.get(f"/staynb/rooms/{by_title('Kitsilano house near the beach').id}?dialog=share&stay=40100")).text
    assert 'aria-label="Send to Weekend Crew (group chat)"' in stay


async def test_reward_milestones_follow_the_oracle_and_not_a_wander(env, reward):
    """configs/rewards.yaml's staynb milestones: a correct path earns search, dates, filters and the
    wishlist in that order; opening panels and pages without searching earns none."""
    from halo.agent import actions as A
    from halo.sites.oracle import Target
    from tests.reward.rollouts import oracle_policy, run_rollout

    run = await run_rollout(env, reward, "staynb-6", oracle_policy(StayNB.oracles["staynb-6"]))
    assert run.evaluation.success
    paid = [c for c in run.components if c.startswith("milestone:")]
    assert paid == ["milestone:search_applied", "milestone:dates_set", "milestone:filters_applied", "milestone:wishlisted"]
    wander = [A.ClickElement(Target("button", contains="Check in")), A.ClickElement(Target("button", "Next month")),
              A.ClickElement(Target("button", "Thursday, August 1, 2024")), A.ClickElement(Target("button", contains="Who:")),
              A.ClickElement(Target("button", "Increase Adults")), A.ClickElement(Target("link", "Wishlists"))]
    run = await run_rollout(env, reward, "staynb-6", oracle_policy(wander))
    assert not run.evaluation.success and not [c for c in run.components if c.startswith("milestone:")]
