"""DashDish replica: every REAL v2 DashDish task is solved by its oracle and failed by a no-op and by
its labelled wrong attempts, as scored by agisdk's own eval scripts (through real Chromium and the
env service); plus the fees, cart and menu facts those scripts depend on, over HTTP."""

from __future__ import annotations

import runpy

import httpx
import pytest

from halo.tasks.registry import agisdk_v2_dir
from halo.sites.app import create_app
from halo.sites.dashdish import TASK_IDS, DashDish, menu, orders
from tests.sites import replica_checks
from tests.sites.replica_checks import assert_listed_by_env, assert_serves_every_v2_task, assert_verified, score
from tests.sites.replica_checks import verified_fixture

DASHDISH_TASKS = sorted(TASK_IDS, key=lambda t: int(t.rsplit("-", 1)[1]))


def test_replica_serves_every_v2_dashdish_task():
    assert_serves_every_v2_task(DashDish, 11, notes_for_every_task=False)


async def test_env_service_lists_every_task(env):
    await assert_listed_by_env(env, DashDish)


verified = verified_fixture(DASHDISH_TASKS)


@pytest.mark.parametrize("task_id", DASHDISH_TASKS)
async def test_task_verifies_with_agisdk_scripts(verified, task_id):
    assert_verified(verified[task_id])


async def test_oracle_orders_carry_what_the_goals_ask(verified):
    """Beyond the (lenient) scripts: the placed orders match the goals' budgets and choices."""
    def order(task_id: str) -> dict:
        [placed] = verified[task_id].oracle.state["differences"]["foodOrders"]["added"].values()
        assert verified[task_id].oracle.state["initialfinaldiff"]["added"]["cart"]["foodOrders"] == {"0": placed}
        return placed

    assert order("dashdish-10")["checkoutDetails"]["charges"]["totalAmount"] < 15          # the goal's $15, not the script's $20
    taco = order("dashdish-8")
    assert taco["checkoutDetails"]["charges"]["subtotal"] >= 20                             # $20 of food, before fees
    wings = order("dashdish-17")
    assert wings["checkoutDetails"]["charges"]["deliveryFee"] == round(orders.DELIVERY_FEE + orders.EXPRESS_FEE, 2)
    assert {i["name"] for i in wings["cartItems"]} == {"Lemon Pepper Wings", "Garlic Parmesan Wings"}
    pickup = order("dashdish-26")
    assert pickup["checkoutDetails"]["charges"]["deliveryFee"] == 0 and pickup["checkoutDetails"]["shipping"]["shippingOption"] == "Pickup"
    assert order("dashdish-7")["cartItems"][0]["restaurantName"] == "Wingstop"


# --- the store's rules and the data the scripts depend on -----------------------------------------


def _script(n: int) -> dict:
    return runpy.run_path(str(agisdk_v2_dir() / "eval_scripts" / f"eval_dashdish_{n}.py"), run_name="dashdish_script")


def _line(r: menu.Restaurant, d: menu.Dish) -> dict:
    return {"name": d.name, "description": d.description, "restaurantName": r.name}


def test_menus_hold_the_dishes_the_goals_name_and_their_look_alikes():
    lines = {d.id: (_line(r, d), r, d) for r in menu.RESTAURANTS for d in r.dishes}
    rice = _script(12)["item_contains_rice"]
    sub = _script(11)["is_sub_sandwich_item"]
    rice_items = {i for i, (line, _, _) in lines.items() if rice(line)}
    assert rice_items == {"gn-fried-rice", "gn-teriyaki-bowl", "sb-salmon-don", "sb-katsu"}
    assert "gn-egg-rolls" not in rice_items                               # dashdish-12's wrong attempt
    subs = {i for i, (line, _, _) in lines.items() if sub(line)}
    assert subs == {"pd-italian-sub", "pd-turkey-hoagie", "pd-meatball-hero", "cs-crispy-sandwich", "rh-sandwich"}
    noodles = {i for i, (line, _, _) in lines.items() if "noodle" in f"{line['name']} {line['description']}".lower()}
    assert "bk-green-curry" not in noodles and "gn-dan-dan" in noodles
    fries = {i for i, (line, _, _) in lines.items() if "fries" in f"{line['name']} {line['description']}".lower()}
    assert fries == {"ws-seasoned-fries", "bb-fries"}                     # the onion rings say nothing of fries
    wingstop = menu.RESTAURANT_BY_ID["wingstop"]
    flavours = [d.name for d in wingstop.dishes if d.name.endswith("Wings")]
    assert flavours == ["Lemon Pepper Wings", "Original Hot Wings", "Garlic Parmesan Wings", "Mango Habanero Wings"]
    assert all([(s.label, s.price) for s in d.sizes] == [("10 pc", 12.99), ("20 pc", 29.99)] for d in wingstop.dishes if d.sizes)
    assert menu.RESTAURANT_BY_ID["wing-palace"].dish("wp-lemon-pepper") is not None                     # the decoy
    assert {r.name for r in menu.RESTAURANTS} >= {"Taco Boys", "Taco Town", "Wing Palace", "Rotisserie House"}


def test_fees_follow_the_published_rates():
    state = orders.initial_state()
    wingstop = menu.RESTAURANT_BY_ID["wingstop"]
    orders.add_item(state, wingstop, wingstop.dish("ws-lemon-pepper"), "20 pc", 1)
    charges = state["cart"]["checkoutDetails"]["charges"]
    assert charges == {"subtotal": 29.99, "deliveryFee": 2.99, "serviceFee": 3.0, "tax": 2.62, "tip": 4.5, "totalAmount": 43.1}
    orders.set_options(state, shipping_option="Pickup")
    assert state["cart"]["checkoutDetails"]["charges"]["totalAmount"] == 40.11      # the spec's "20 pc, $40.11"
    orders.set_options(state, shipping_option="Delivery", delivery_option="Express", tip_percent=0)
    assert state["cart"]["checkoutDetails"]["charges"]["deliveryFee"] == 5.98 and state["cart"]["checkoutDetails"]["charges"]["tip"] == 0
    orders.set_options(state, tip_percent=13, shipping_option="Drone")                # not offered: ignored
    assert state["cart"]["checkoutDetails"]["tipPercent"] == 0 and state["cart"]["checkoutDetails"]["shipping"]["shippingOption"] == "Delivery"
    with pytest.raises(orders.CartError):
        orders.add_item(state, wingstop, wingstop.dish("ws-lemon-pepper"), "30 pc", 1)
    with pytest.raises(orders.CartError):
        orders.add_item(state, wingstop, wingstop.dish("ws-lemon-pepper"), "10 pc", 11)


@pytest.fixture
async def http():
    transport = httpx.ASGITransport(app=create_app([DashDish]))
    async with httpx.AsyncClient(transport=transport, base_url="http://sites", follow_redirects=True) as client:
        await client.get("/dashdish/config", params={"run_id": "run-3", "task_id": "dashdish-26"})
        yield client


async def finish_state(http: httpx.AsyncClient) -> dict:
    return await replica_checks.finish_state(http, "dashdish")


async def test_cart_is_one_store_and_an_order_empties_it(http):
    await http.get("/dashdish/")
    await http.post("/dashdish/api/cart/add", data={"dish": "wp-lemon-pepper", "size": "10 pc", "quantity": "1"})
    r = await http.post("/dashdish/api/cart/add", data={"dish": "ws-lemon-pepper", "size": "10 pc", "quantity": "2"})
    assert "new cart was started" in r.text
    await http.post("/dashdish/api/cart/add", data={"dish": "ws-lemon-pepper", "size": "10 pc", "quantity": "1"})
    state = await finish_state(http)
    [line] = state["initialfinaldiff"]["added"]["cart"]["cartItems"].values()
    assert (line["restaurantName"], line["quantity"], line["price"]) == ("Wingstop", 3, 12.99)
    await http.post("/dashdish/api/cart/update", data={"line": line["id"], "quantity": "1"})
    await http.post("/dashdish/api/checkout/options", data={"shippingOption": "Pickup"})
    r = await http.post("/dashdish/api/checkout/place")
    assert "Order placed" in r.text and "ready for pickup" in r.text
    state = await finish_state(http)
    assert state["initialfinaldiff"]["added"]["config"] == {"dashdish": {"run_id": "run-3", "task_id": "dashdish-26"}}
    assert "cartItems" not in state["initialfinaldiff"]["added"]["cart"]                 # emptied again
    assert score("dashdish-26", state) == 1.0 and score("dashdish-7", state) == 1.0
    r = await http.post("/dashdish/api/checkout/place")
    assert "your cart is empty" in r.text and len((await finish_state(http))["differences"]["foodOrders"]["added"]) == 1


async def test_no_op_scores_zero_everywhere(http):
    await http.get("/dashdish/")
    state = await finish_state(http)
    assert state["differences"] == {"foodOrders": {"added": {}}}
    for task_id in DASHDISH_TASKS:
        assert score(task_id, state) == 0.0, task_id


async def test_lenient_scripts_pass_orders_the_goals_would_not(http):
    """Why dashdish-10 carries a caveat: fries and a shake for $15.67 is over the goal's $15."""
    await http.post("/dashdish/api/cart/add", data={"dish": "bb-fries", "quantity": "1"})
    await http.post("/dashdish/api/cart/add", data={"dish": "bb-shake", "quantity": "1"})
    await http.post("/dashdish/api/checkout/place")
    state = await finish_state(http)
    [placed] = state["differences"]["foodOrders"]["added"].values()
    assert placed["checkoutDetails"]["charges"]["totalAmount"] == 15.67 and score("dashdish-10", state) == 1.0


async def test_search_finds_dishes_and_stores(http):
    r = await http.get("/dashdish/search", params={"q": "  lemon   pepper wings "})
    assert r.text.count("Lemon Pepper Wings</a>") == 2                      # Wingstop's and Wing Palace's
    assert "Wingstop" in r.text and "Wing Palace" in r.text
    r = await http.get("/dashdish/search", params={"cuisine": "Mexican"})
    assert "Taco Boys" in r.text and "Taco Town" in r.text and "Wingstop" not in r.text
    stores, dishes = menu.search("Chicken SANDWICHES")
    assert [d.name for _, d in dishes] == ["Crispy Chicken Sandwich", "Rotisserie Chicken Sandwich"]
    assert [r.name for r in stores] == ["Cluck Shack", "Rotisserie House"]            # stores by their dishes too
    assert {d.name for _, d in menu.search("fries")[1]} == {"Seasoned Fries", "French Fries"}      # not fried corn
    assert menu.search("   ") == ([], [])
    assert (await http.get("/dashdish/store/nowhere")).status_code == 404


async def test_reward_milestones_fire_in_order_along_the_oracle(env, reward):
    """configs/rewards.yaml's dashdish milestones: cart, checkout, order, in the order the oracle earns them;
    browsing without ordering earns none of the state ones."""
    from tests.reward.rollouts import oracle_policy, run_rollout

    from halo.sites.dashdish.oracles import OPEN_CART, search, store

    run = await run_rollout(env, reward, "dashdish-26", oracle_policy(DashDish.oracles["dashdish-26"]))
    assert run.evaluation.success
    paid = [c for c in run.components if c.startswith("milestone:")]
    assert paid == ["milestone:add_to_cart", "milestone:checkout_page", "milestone:order_placed"]
    wander = await run_rollout(env, reward, "dashdish-26", oracle_policy([*search("wings"), store("Wingstop"), OPEN_CART]))
    assert not wander.evaluation.success
    assert [c for c in wander.components if c.startswith("milestone:")] == []
