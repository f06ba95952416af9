"""An action that starts a navigation returns once the new page has loaded, even when Playwright
hears of the navigation request late; an action that starts none does not wait for one.

Playwright's `request` event of a form submission's navigation may arrive after the page has
answered the env's "anything pending?" round trip; the env must not then observe the old page.
Here the request event is withheld altogether and the server answers slowly, so only the page's
own signals (the Navigation API's `navigate` event, the form's `submit`) can make the env wait.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from playwright.async_api import async_playwright

from halo.agent import actions as A
from halo.env import navigation
from halo.env.browsers import CHROMIUM_ARGS, find_chromium
from halo.env.execute import ExecLimits, execute
from halo.env.observe import BID_ATTRIBUTE
from halo.env.urlpolicy import UrlPolicy

ORIGIN = "http://nav.test"
SLOW_PAGE_S = 1.5
POSTED: list[str] = []   # the page's background requests that reached the server, in order
LIMITS = ExecLimits(action_timeout_ms=3000, navigation_timeout_ms=20000)


def _bid(n: int) -> str:
    return f'{BID_ATTRIBUTE}="{n}"'


START = f"""<!doctype html><title>start</title>
<a {_bid(1)} href="/next">a link</a>
<a {_bid(2)} href="#further-down">a fragment</a>
<a {_bid(3)} href="/report.csv" download>a download</a>
<form action="/next" method="get"><input {_bid(4)} name="q" aria-label="query"><button {_bid(5)}>Search</button></form>
<form action="/next" onsubmit="event.preventDefault(); document.title = 'handled in the page'"><button {_bid(6)}>Handled</button></form>
<button {_bid(7)} type="button" onclick="document.title = 'clicked'">A plain button</button>
<dialog open><form method="dialog"><button {_bid(8)}>Close</button></form></dialog>
<button {_bid(9)} type="button" onclick="save()">Save in the background</button>
<div id="card" style="width:80px;height:40px;background:#08c">card</div>
<div id="zone" style="width:160px;height:60px;border:2px dashed #888">zone</div>
<select {_bid(11)} aria-label="plan"><option>free</option><option>plus</option><option>pro</option></select>
<p id="further-down">the end</p>
<script>
window.seen = [];
for (const kind of ["mousedown", "mouseup", "click"])
  document.querySelector("select").addEventListener(kind, (e) => seen.push(kind + (e.isTrusted ? "" : " (synthetic)")));
async function save() {{ await fetch("/api/save", {{method: "POST"}}); document.title = "saved"; }}
// the playground's pointer drag: the drop is a request, then the page changes
let dragging = false;
document.getElementById("card").addEventListener("mousedown", () => {{ dragging = true; }});
document.addEventListener("mouseup", async (e) => {{
  if (!dragging) return;
  dragging = false;
  const r = document.getElementById("zone").getBoundingClientRect();
  if (e.clientX >= r.left && e.clientX <= r.right && e.clientY >= r.top && e.clientY <= r.bottom) {{
    const xhr = new XMLHttpRequest();   // an XMLHttpRequest, to cover both kinds of request
    xhr.open("POST", "/api/drop");
    xhr.onload = () => {{ document.title = "dropped"; }};
    xhr.send();
  }}
}});
</script>
"""


@pytest.fixture
async def page(monkeypatch):
    # The late event, taken to the limit: Playwright never reports the navigation request.
    monkeypatch.setattr(navigation.NavigationWatcher, "_on_request", lambda self, request: None)

    async def serve(route):
        path = route.request.url.removeprefix(ORIGIN).split("?")[0]
        if path == "/next":
            await asyncio.sleep(SLOW_PAGE_S)
            await route.fulfill(content_type="text/html", body="<title>next</title><h1>The next page</h1>")
        elif path in ("/api/save", "/api/drop"):
            await asyncio.sleep(SLOW_PAGE_S)
            POSTED.append(path)
            await route.fulfill(content_type="application/json", body="{}")
        elif path == "/api/poll":
            await asyncio.sleep(3600)   # a long poll: never answered while the test runs
        elif path == "/loading":
            await route.fulfill(content_type="text/html", body='<title>loading</title><img src="/slow.svg">')
        elif path == "/slow.svg":
            await asyncio.sleep(SLOW_PAGE_S)
            await route.fulfill(content_type="image/svg+xml", body='<svg xmlns="http://www.w3.org/2000/svg"/>')
        elif path == "/report.csv":
            await route.fulfill(content_type="text/csv", body="a,b\n1,2\n")
        else:
            await route.fulfill(content_type="text/html", body=START)

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=find_chromium(), args=CHROMIUM_ARGS)
        try:
            context = await browser.new_context()
            await context.add_init_script(navigation.TRACKER_JS)
            await context.route(f"{ORIGIN}/**", serve)
            page = await context.new_page()
            await page.goto(f"{ORIGIN}/")
            POSTED.clear()
            yield page
        finally:
            await browser.close()


POLICY = UrlPolicy.for_urls(f"{ORIGIN}/")


@pytest.mark.parametrize("actions, url", [
    ([A.ClickElement("1")], "/next"),
    ([A.ClickElement("5")], "/next?q="),
    ([A.Fill("4", "pots"), A.KeyPress("Enter")], "/next?q=pots"),
], ids=["link", "submit button", "enter in a search box"])
async def test_the_action_returns_on_the_loaded_page_it_led_to(page, actions, url):
    for action in actions:
        await execute(page, action, POLICY, LIMITS)
    assert page.url == ORIGIN + url
    assert await page.title() == "next" and await page.inner_text("h1") == "The next page"


@pytest.mark.parametrize("action, url, title", [
    (A.ClickElement("2"), "/#further-down", "start"),
    (A.ClickElement("3"), "/", "start"),
    (A.ClickElement("6"), "/", "handled in the page"),
    (A.ClickElement("7"), "/", "clicked"),
    (A.ClickElement("8"), "/", "start"),
], ids=["fragment link", "download link", "submit the page handles", "plain button", "dialog form"])
async def test_an_action_that_leaves_the_document_in_place_does_not_wait_for_a_navigation(page, action, url, title):
    started = time.perf_counter()
    await execute(page, action, POLICY, LIMITS)
    # waiting for a navigation that never comes would take the whole 20 s navigation timeout
    assert time.perf_counter() - started < LIMITS.navigation_timeout_ms / 1000 / 2
    assert page.url == ORIGIN + url and await page.title() == title


async def test_the_load_state_is_read_where_playwright_keeps_it(page):
    """`settle` asks the driver nothing about a page Playwright already knows has loaded; that knowledge
    is Playwright's client state (`_loaded`). Should a release move it, `_loaded` answers False and
    every step would pay the wait's driver messages again: this test says so first."""
    assert navigation._loaded(page)
    await page.goto(f"{ORIGIN}/loading", wait_until="commit")   # its image keeps 'load' back
    assert not navigation._loaded(page)
    await execute(page, A.Noop(), POLICY, LIMITS)   # the step's settle waits for it
    assert navigation._loaded(page) and await page.evaluate("document.readyState") == "complete"


async def _centre(page, selector: str) -> A.Point:
    box = await page.locator(selector).bounding_box()
    return A.Point(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)


async def test_an_action_returns_once_the_requests_it_made_the_page_send_are_answered(page):
    """A drop is a request the page sends on mouseup: the action returns only once it is answered,
    so a state read right after the action sees what the drop did (else the drag oracle could score 0)."""
    await execute(page, A.ClickElement("9"), POLICY, LIMITS)
    assert POSTED == ["/api/save"] and await page.title() == "saved"
    await execute(page, A.Drag(await _centre(page, "#card"), await _centre(page, "#zone")), POLICY, LIMITS)
    assert POSTED == ["/api/save", "/api/drop"] and await page.title() == "dropped"


async def test_a_request_in_flight_before_the_action_does_not_hold_it(page):
    await page.evaluate("() => { fetch('/api/poll'); }")   # the page's long poll, never answered
    started = time.perf_counter()
    await execute(page, A.ClickElement("7"), POLICY, LIMITS)
    assert time.perf_counter() - started < LIMITS.navigation_timeout_ms / 1000 / 2
    assert await page.title() == "clicked"


@pytest.mark.parametrize("action", [A.ClickElement("11"), "at its centre"], ids=["by bid", "at a point"])
async def test_a_click_on_a_native_select_reaches_the_page_without_opening_the_popup(page, action):
    """Chromium builds a native <select>'s popup list before it acknowledges the press, which makes
    select clicks the slowest clicks (`halo bench clicks`), and the agent never sees that popup: the
    env's click opens none. The click is still a real one: trusted events, the focus; the list stays closed."""
    if action == "at its centre":
        action = A.ClickAt(await _centre(page, "select"))
    await execute(page, action, POLICY, LIMITS)
    assert await page.evaluate("seen") == ["mousedown", "mouseup", "click"]
    assert await page.evaluate("document.activeElement.tagName") == "SELECT"
    # a closed drop-down takes the arrow key itself; an open popup list would only move its highlight
    await execute(page, A.KeyPress("ArrowDown"), POLICY, LIMITS)
    assert await page.evaluate("document.querySelector('select').value") == "plus"
    # the suppression ends with the click: a press on the select outside an action opens the list again
    assert await page.evaluate("window.__haloEndClick") is None


async def test_a_scroll_returns_scrolled_once_the_requests_its_scroll_handler_sent_are_answered(page):
    """A wheel scrolls in a later frame, and an infinite-scroll page fetches in its scroll handler:
    the step waits for that frame and then for the fetch, in settle's one round trip."""
    await page.evaluate("""() => {
      document.body.style.height = "5000px";
      addEventListener("scroll", () => { if (!window.fetched) { window.fetched = true; save(); } });
    }""")
    await execute(page, A.Scroll(0, 300), POLICY, LIMITS)
    assert POSTED == ["/api/save"] and await page.evaluate("scrollY") == 300
    assert await page.title() == "saved"
