"""Omnizon replica: every task verified through real Chromium + the env service and scored by
agisdk's own eval scripts, plus the shop's behaviour over HTTP (search, filters, cart, checkout, /finish)."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys

import httpx
import pytest

from halo.tasks.registry import agisdk_v2_dir, default_registry
from halo.sites.app import create_app
from halo.sites.omnizon import TASK_IDS, Omnizon, catalog, shop
from tests.sites.replica_checks import assert_verified, verified_fixture

OMNIZON_TASKS = sorted(TASK_IDS, key=lambda t: int(t.rsplit("-", 1)[1]))


def test_replica_serves_every_v2_omnizon_task():
    v2 = {t.id for t in default_registry().list(site="omnizon", suite="real-v2")}
    assert TASK_IDS == v2
    assert all(default_registry().get(t).replica_available for t in TASK_IDS)
    assert set(Omnizon.oracles) == set(Omnizon.wrong_attempts) == TASK_IDS


verified = verified_fixture(OMNIZON_TASKS)


@pytest.mark.parametrize("task_id", OMNIZON_TASKS)
def test_task_oracle_scores_1_noop_and_wrong_attempt_score_0(verified, task_id):
    # omnizon-28: eval_omnizon_28.py also reads every *.json / *.txt next to the state file (agisdk
    # writes it to the shared temp dir; see test_eval_28_reads_sibling_files_of_the_state_file). The
    # sweep leaves a stranger's failed attempt there (tests/sites/conftest.py): HALO's evaluator
    # runs each script with its state file alone, so the score holds.
    assert_verified(verified[task_id])


# --- the shop over HTTP (no browser) ------------------------------------------------------------

@pytest.fixture
async def http():
    transport = httpx.ASGITransport(app=create_app([Omnizon]))
    async with httpx.AsyncClient(transport=transport, base_url="http://sites", follow_redirects=True) as client:
        r = await client.get("/omnizon//config?run_id=1&task_id=v2.omnizon-3&latency=0")
        assert r.status_code == 200
        yield client


async def finish_state(http: httpx.AsyncClient) -> dict:
    r = await http.get("/omnizon//finish")
    body = re.search(r"<pre>(.*)</pre>", r.text, re.S)
    assert body, r.text[:200]
    return json.loads(html.unescape(body.group(1)))


def result_ids(page: str) -> list[str]:
    """Product ids of the result cards, in page order."""
    return re.findall(r'<h2 class="oz-card-title"><a href="/omnizon/product/(\d+)"', page)


async def test_search_price_range_brand_and_sort_filter_the_results(http):
    r = await http.get("/omnizon/search", params={"q": "headphones"})
    everything = result_ids(r.text)
    assert "5" in everything and "1" in everything and "8" in everything   # $89.99, $349.99, $14.99
    r = await http.get("/omnizon/search", params={"q": "headphones", "min": "24", "max": "100"})
    in_range = result_ids(r.text)
    assert in_range and all(24 <= catalog.product(i).price <= 100 for i in in_range)
    assert "1" not in in_range and "8" not in in_range and "5" in in_range
    r = await http.get("/omnizon/search", params={"q": "headphones", "brand": "Sony", "sort": "price-desc"})
    assert result_ids(r.text) == ["1", "5"]
    r = await http.get("/omnizon/search", params={"q": "headphones", "sort": "price-asc"})
    prices = [catalog.product(i).price for i in result_ids(r.text)]
    assert prices == sorted(prices)
    state = await finish_state(http)
    flt = state["initialfinaldiff"]["updated"]["filter"]
    assert flt["searchQuery"] == flt["searchInputValue"] == "headphones" and flt["sortBy"] == "price-asc"
    assert state["initialfinaldiff"]["updated"]["router"]["location"]["pathname"] == "/search"


async def test_department_links_and_search_words_narrow_results(http):
    r = await http.get("/omnizon/search", params={"category": "furniture"})
    ids = result_ids(r.text)
    assert ids and all(catalog.product(i).category == "furniture" for i in ids)
    r = await http.get("/omnizon/search", params={"q": "queen bed frame"})
    assert result_ids(r.text) == ["163"]
    r = await http.get("/omnizon/search", params={"q": "PS5 controllers"})
    assert result_ids(r.text) == ["16", "185"]          # the controller and its charging dock
    r = await http.get("/omnizon/search", params={"q": "zzzz"})
    assert result_ids(r.text) == [] and "No results" in r.text


async def test_cart_merges_updates_and_deletes_lines(http):
    await http.post("/omnizon/cart/add", data={"product_id": "91", "quantity": "1"})
    r = await http.post("/omnizon/cart/add", data={"product_id": "91", "quantity": "2"})
    assert "Added to Cart" in r.text and 'aria-label="Cart, 3 items"' in r.text
    await http.post("/omnizon/cart/add", data={"product_id": "212", "quantity": "1"})
    await http.post("/omnizon/cart/update", data={"product_id": "91", "quantity": "1"})
    r = await http.post("/omnizon/cart/delete", data={"product_id": "212"})
    assert 'aria-label="Cart, 1 items"' in r.text
    state = await finish_state(http)
    assert state["initialfinaldiff"]["added"]["cart"]["items"] == {
        "0": {"id": "91", "title": catalog.product("91").title, "brand": "Hudson Durable Goods", "price": 24.99, "quantity": 1}
    }
    r = await http.post("/omnizon/cart/add", data={"product_id": "nope", "quantity": "1"})
    assert r.status_code == 400


async def test_cart_checkout_places_one_order_and_empties_the_cart(http):
    await http.post("/omnizon/cart/add", data={"product_id": "159", "quantity": "1"})
    await http.post("/omnizon/cart/add", data={"product_id": "155", "quantity": "1"})
    r = await http.post("/omnizon/checkout/start")
    assert str(r.url).endswith("/omnizon/checkout") and "Place your order" in r.text
    r = await http.post("/omnizon/checkout/place", data={"payment": "mc-8810", "delivery": "one-day"})
    assert str(r.url).endswith("/omnizon/confirmation") and "Order placed, thank you!" in r.text
    diff = (await finish_state(http))["initialfinaldiff"]
    assert diff["updated"]["router"]["location"]["pathname"] == "/confirmation"
    assert "cart" not in diff["added"]        # emptied again
    [order] = diff["added"]["order"]["orders"].values()
    assert [(i["id"], i["quantity"]) for i in order["items"]] == [("159", 1), ("155", 1)]
    expected = shop.summarize(order["items"], shop.DELIVERY_BY_ID["one-day"])
    assert order["total"] == expected.total and order["shipping"] == 12.99
    assert order["paymentMethod"] == "Mastercard ending in 8810" and order["deliveryDate"] == "Tuesday, July 15"
    assert order["orderNumber"] == shop.order_number(shop.HISTORY_COUNT)


async def test_buy_now_orders_only_that_item_and_keeps_the_cart(http):
    await http.post("/omnizon/cart/add", data={"product_id": "60", "quantity": "1"})
    r = await http.post("/omnizon/buy-now", data={"product_id": "16", "quantity": "2"})
    assert "PlayStation DualSense" in r.text and "Quantity: 2" in r.text
    await http.post("/omnizon/checkout/place", data={"payment": "visa-4242", "delivery": "standard"})
    diff = (await finish_state(http))["initialfinaldiff"]
    [order] = diff["added"]["order"]["orders"].values()
    assert order["items"] == [{"id": "16", "title": catalog.product("16").title, "brand": "PlayStation", "price": 69.99, "quantity": 2}]
    assert diff["added"]["cart"]["items"]["0"]["id"] == "60"
    assert "buyNow" not in diff["updated"].get("order", {})       # back to None after the order
    # "Proceed to checkout" after an abandoned Buy Now buys the cart, not the old Buy Now item
    await http.post("/omnizon/buy-now", data={"product_id": "212", "quantity": "1"})
    await http.post("/omnizon/checkout/start")
    await http.post("/omnizon/checkout/place", data={"payment": "visa-4242", "delivery": "standard"})
    orders = (await finish_state(http))["initialfinaldiff"]["added"]["order"]["orders"]
    assert [i["id"] for i in orders[str(shop.HISTORY_COUNT + 1)]["items"]] == ["60"]


async def test_nothing_to_order_places_nothing(http):
    r = await http.post("/omnizon/checkout/place", data={"payment": "visa-4242", "delivery": "standard"})
    assert str(r.url).endswith("/omnizon/cart") and "Your Omnizon Cart is empty" in r.text
    await http.post("/omnizon/cart/add", data={"product_id": "4", "quantity": "1"})
    r = await http.post("/omnizon/checkout/place", data={"payment": "bitcoin", "delivery": "standard"})
    assert "unknown payment method" in r.text
    assert "order" not in (await finish_state(http))["initialfinaldiff"]["added"]


async def test_pages_render_and_unknown_products_are_404(http):
    for path in ("/omnizon/", "/omnizon/product/114", "/omnizon/cart", "/omnizon/orders", "/omnizon/confirmation"):
        r = await http.get(path)
        assert r.status_code == 200, path
    assert (await http.get("/omnizon/product/99999")).status_code == 404
    r = await http.get("/omnizon/img/212.svg")
    assert r.headers["content-type"].startswith("image/svg+xml") and "<svg" in r.text
    assert "113-2837461-9920417" in (await http.get("/omnizon/orders")).text     # the account's history


def test_catalog_keeps_the_product_ids_the_eval_scripts_hard_code():
    def title(pid: str) -> str:
        return catalog.product(pid).title.lower()

    assert "ps5" in title("16") and "controller" in title("16")
    assert all(catalog.product(i).price < 100 for i in ("16", "192", "193"))
    assert "gaming" in title("192") or "controller" in title("193")
    assert "pot" in title("212") and "pot" in title("215")
    assert "apron" in title("91")
    assert "sports balls" in title("114") and "pack" in title("114")
    assert all("neck pillow" in title(i) for i in ("167", "170"))
    assert title("159").startswith("40 inch") and "desk" in title("159")
    # no other product the goals would also describe (the scripts accept only the ids above)
    assert [p.id for p in catalog.PRODUCTS if "apron" in p.title.lower()] == ["91"]
    assert {p.id for p in catalog.PRODUCTS if "neck pillow" in p.title.lower()} == {"167", "170"}
    assert {p.id for p in catalog.PRODUCTS if p.kind in ("pot", "dutchoven")} == {"212", "215"}


def _run_eval_28(state_path) -> str:
    script = agisdk_v2_dir() / "eval_scripts" / "eval_omnizon_28.py"
    out = subprocess.run([sys.executable, str(script), str(state_path)], capture_output=True, text=True, timeout=30)
    return out.stdout.strip()


async def test_eval_28_reads_sibling_files_of_the_state_file(http, tmp_path):
    """Why omnizon-28 carries a caveat: its script greps every *.json/*.txt beside the state file."""
    r = await http.post("/omnizon/buy-now", data={"product_id": "218", "quantity": "1"})
    await http.post("/omnizon/checkout/place", data={"payment": "visa-4242", "delivery": "standard"})
    state = await finish_state(http)
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "state.json").write_text(json.dumps(state))
    assert _run_eval_28(alone / "state.json") == "SUCCESS"
    (alone / "notes.txt").write_text("previous run was unsuccessful")
    assert _run_eval_28(alone / "state.json") == "FAILURE"          # a stranger's file fails a right answer
    noop = tmp_path / "noop"
    noop.mkdir()
    (noop / "state.json").write_text(json.dumps({"initialfinaldiff": {"added": {}, "deleted": {}, "updated": {}}, "differences": {}}))
    assert _run_eval_28(noop / "state.json") == "FAILURE"
    (noop / "other_attempt.json").write_text(json.dumps(state))
    assert _run_eval_28(noop / "state.json") == "SUCCESS"           # ...and another attempt's file passes a no-op
