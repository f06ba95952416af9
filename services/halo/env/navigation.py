"""Waiting for the navigation an action started, so the next observation shows the page it led to.

A click on a link or a submit button, or Enter in a search box, starts a navigation that the
action itself does not wait for (clicks use `no_wait_after`: a slow page load must not turn a
click that happened into a timed-out one). Playwright's `request` event for that navigation is
sent by Chromium's browser process and can arrive well after a round trip to the page, so it
cannot tell whether a navigation started: waiting on it alone would observe the old page, and
the agent's next step would aim at elements of a page that is already going away.

The page itself knows at once: the Navigation API's `navigate` event fires in the document when
a navigation starts, and a form's `submit` event fires before the submission's navigation task
runs. `TRACKER_JS` (an init script in every context of the pool) records both; `settle` asks the
page after the action, waits in the page for a submission still to turn into a navigation, and
then waits for Chromium to commit the new document and load it.

The same holds for the requests a page's own scripts send (`fetch`, `XMLHttpRequest`): a drop
handler that POSTs to the site and then updates the page leaves both the site's state and the
page unchanged when the action returns, and a state read (`/finish`) right after the action
could come before the POST reaches the server: a task done would score 0. The tracker numbers
the page's requests while they are in flight; `execute`
marks where an action begins (`mark_requests`), and when the action starts no navigation,
`settle` waits in the page for the requests started since the mark (not a long poll the page
had open before) and for the page's handlers of their answers to run.
"""

from __future__ import annotations

import asyncio
import contextlib

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page
from playwright.async_api import TimeoutError as PlaywrightTimeout

TRACKER_JS = """
(() => {
  if (window.__haloNavigation) return;
  // stringify: the browser's own, kept before any page script can replace it (observe.py)
  const tracker = window.__haloNavigation = { started: [], submits: [], requests: 0, mark: 0, inflight: new Set(),
                                              stringify: JSON.stringify };
  if (window.navigation) window.navigation.addEventListener("navigate", (e) => tracker.started.push(e));
  window.addEventListener("submit", (e) => tracker.submits.push(e));
  // the page's own requests, each by number while it is in flight (answered, failed or aborted ends it)
  const begin = () => { const id = ++tracker.requests; tracker.inflight.add(id); return id; };
  const end = (id) => tracker.inflight.delete(id);
  const fetch = window.fetch;
  if (fetch) window.fetch = function (...args) {
    const id = begin();
    try {
      const answer = fetch.apply(this, args);
      answer.then(() => end(id), () => end(id));
      return answer;
    } catch (e) { end(id); throw e; }
  };
  const send = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.send = function (...args) {
    const id = begin();
    this.addEventListener("loadend", () => end(id), { once: true });
    try { return send.apply(this, args); } catch (e) { end(id); throw e; }
  };
})();
"""

# Resolves to true when the action started a navigation of this document (cross-document, not
# cancelled, not a download), after giving a form submission the page has not yet turned into a
# navigation up to `wait_ms` to do so. Clears what it has seen, so each action is judged alone.
_LEAVING_JS = """
async (waitMs) => {
  const tracker = window.__haloNavigation;
  const turn = () => new Promise((r) => setTimeout(r, 0));
  await turn();   // input events handled, tasks they queued have had their turn
  if (!tracker) return false;
  const navigates = (form, submitter) => {
    const method = ((submitter && submitter.getAttribute("formmethod")) || form.method || "get").toLowerCase();
    const target = (submitter && submitter.getAttribute("formtarget")) || form.target || "_self";
    return method !== "dialog" && ["", "_self"].includes(target);
  };
  const submitting = () => tracker.submits.some((e) => !e.defaultPrevented && navigates(e.target, e.submitter));
  const started = () => tracker.started.some((e) => !e.defaultPrevented && e.downloadRequest === null && !e.destination.sameDocument);
  const deadline = performance.now() + waitMs;
  while (submitting() && !started() && performance.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  const leaving = started();
  tracker.started.length = 0;
  tracker.submits.length = 0;
  return leaving;
}
"""

# Before an action: requests in flight now are the page's own business (a long poll), not the action's.
# With a selector (an element action's target), resolves in the same round trip to whether an
# element of the main document matches it.
_MARK_JS = """(selector) => {
  const t = window.__haloNavigation;
  if (t) t.mark = t.requests;
  return !selector || document.querySelector(selector) !== null;
}"""

# Resolves once every request the page started since the mark and had in flight when called has
# ended (those it starts meanwhile are not waited for: a page that polls must not hold the action)
# and the page's handlers of their answers have had their turn, or after `waitMs`; to the number
# still pending.
_REQUESTS_JS = """
async (waitMs) => {
  const tracker = window.__haloNavigation;
  if (!tracker || !tracker.inflight) return 0;
  const turn = () => new Promise((r) => setTimeout(r, 0));
  const waiting = [...tracker.inflight].filter((id) => id > tracker.mark);
  const pending = () => waiting.filter((id) => tracker.inflight.has(id)).length;
  const deadline = performance.now() + waitMs;
  while (pending() && performance.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  await turn();   // `await fetch(...)` continuations run before the observation
  return pending();
}
"""

# One round trip after an action: true when it started a navigation (`_LEAVING_JS`); otherwise false
# once the requests it started have been answered and handled (`_REQUESTS_JS`). With `frame`, after
# an animation frame first (a wheel's scroll is applied in the frame after its event).
_SETTLE_JS = f"""
async ([graceMs, waitMs, frame]) => {{
  if (frame) await new Promise((r) => requestAnimationFrame(() => r()));
  if (await ({_LEAVING_JS})(graceMs)) return true;
  await ({_REQUESTS_JS})(waitMs);
  return false;
}}
"""

SUBMIT_GRACE_MS = 1000    # a submission's navigation task runs within a few ms; this bounds a page that cancels it late


class NavigationWatcher:
    """Counts the main frame's navigations that ended: committed (`framenavigated`), failed, or
    answered without a new document (HTTP 204/205); notes navigation requests Playwright saw."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.requested = False       # a navigation request reached Playwright and has not ended yet
        self.ended = 0
        self._changed = asyncio.Event()
        page.on("request", self._on_request)
        page.on("framenavigated", self._on_navigated)
        page.on("requestfailed", self._on_request_failed)
        page.on("response", self._on_response)

    def _is_main_navigation(self, request) -> bool:
        return request.is_navigation_request() and request.frame == self.page.main_frame

    def _on_request(self, request) -> None:
        if self._is_main_navigation(request):
            self.requested = True

    def _on_navigated(self, frame) -> None:
        if frame == self.page.main_frame:
            self._end()

    def _on_request_failed(self, request) -> None:   # aborted, blocked, or turned into a download
        if self._is_main_navigation(request):
            self._end()

    def _on_response(self, response) -> None:
        if response.status in (204, 205) and self._is_main_navigation(response.request):
            self._end()   # no new document will come

    def _end(self) -> None:
        self.requested = False
        self.ended += 1
        self._changed.set()
        self._changed = asyncio.Event()

    async def ended_after(self, ended_before: int, timeout_s: float) -> bool:
        """Wait until a navigation ends after the count `ended_before`; False when none did in time."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout_s):
                while self.ended <= ended_before:
                    await self._changed.wait()
        return self.ended > ended_before


def watcher_for(page: Page) -> NavigationWatcher:
    watcher = getattr(page, "_halo_navigation", None)
    if watcher is None:
        watcher = NavigationWatcher(page)
        setattr(page, "_halo_navigation", watcher)
    return watcher


async def mark_requests(page: Page, selector: str = "") -> bool | None:
    """Before an action: the page's requests in flight now are not the action's to wait for. With
    `selector`, also whether an element of the main document matches it, in the same round trip;
    None when the page could not answer (it is going away: nothing to mark, nothing known)."""
    try:
        return await page.evaluate(_MARK_JS, selector)
    except PlaywrightError:
        return None


async def settle(page: Page, ended_before: int, navigation_timeout_ms: float, frame: bool = False) -> None:
    """Let a navigation the action started commit and reach 'load'; when it started none, let the
    requests it made the page send (since `mark_requests`) be answered and handled. One round trip
    to the page when the action started no navigation; `frame`: let the page draw a frame first
    (what a wheel needs to have scrolled), in that same round trip."""
    watcher = watcher_for(page)
    try:
        leaving = await page.evaluate(_SETTLE_JS, [SUBMIT_GRACE_MS, navigation_timeout_ms, frame])
    except PlaywrightError:
        if page.is_closed():
            return
        leaving = True    # the document went away under us: a navigation is under way
    if leaving or watcher.requested:
        await watcher.ended_after(ended_before, navigation_timeout_ms / 1000)
    if not _loaded(page):
        with contextlib.suppress(PlaywrightTimeout, PlaywrightError):
            await page.wait_for_load_state("load", timeout=navigation_timeout_ms)


def _loaded(page: Page) -> bool:
    """Whether the main frame has reached 'load' as Playwright's client last heard: exactly what
    `wait_for_load_state("load")` checks first, without the three driver messages its waiter sends
    even when it need not wait (most steps start no navigation). Where a Playwright release keeps
    that state elsewhere, the answer is False and the wait itself decides, as before."""
    frame = getattr(page.main_frame, "_impl_obj", None)
    states = getattr(frame, "_load_states", None)
    return isinstance(states, set) and "load" in states
