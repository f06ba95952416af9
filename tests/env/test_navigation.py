"""An action that starts a navigation returns once the new page has loaded, even when Playwright
hears of the navigation request late; an action that starts none does not wait for one.

Seen in CI on a loaded machine: the `request` event of a form submission's navigation reached
Playwright up to 0.86 s after the page had answered the env's "anything pending?" round trip, the
old page was observed, and an oracle then looked for a listing on a page that was going away.
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
<p id="further-down">the end</p>
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
