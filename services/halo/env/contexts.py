"""Browser contexts ready for a session: opened on demand (cold), or taken from a warm pool.

A session's context is more than Chromium's `new_context`: the URL guard's route, the navigation
tracker's init script and the first page. `open_context` does all of it; `WarmContexts` keeps a
few such contexts opened ahead of time, so that CreateSession starts from a ready page instead of
waiting for Chromium (opening the context is the largest phase of a cold start; `halo bench env`
measures the phases).

Isolation holds because a warm context is handed out once and closed with its session, never
returned to the pool: no cookie (the sites server's `halo_sid`, first set at the session's
/config), storage, cache or history of one session can reach another. A warm context has loaded
nothing (its page is about:blank) and its guard refuses every request until the session names
its site.
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass

from playwright.async_api import BrowserContext, Page, Route
from playwright.async_api import Error as PlaywrightError

from halo.env import metrics, navigation, observe
from halo.env.browsers import BrowserPool, BrowserSlot
from halo.env.config import EnvSettings
from halo.env.urlpolicy import UrlPolicy, origin_of
from halo.runtime.errors import Unavailable
from halo.runtime.logging import get_logger

log = get_logger("halo.env.contexts")


class RouteGuard:
    """Aborts what the policy refuses: any request to another host or a control route, and a
    page (navigation) outside the task's site; the page sees net::ERR_BLOCKED_BY_CLIENT.
    Until a session sets `policy` (a warm context not yet handed out) every request is refused.
    `env_visit` lets the env's own visit of a hosted site's /config through."""

    def __init__(self, policy: UrlPolicy | None = None) -> None:
        self.policy = policy
        self.env_visit = False

    def needs_routing(self, url: str) -> bool:
        return self.policy is None or self.policy.needs_routing(url)

    async def handle(self, route: Route) -> None:
        policy = self.policy
        if policy is None:
            await route.abort("blockedbyclient")
            return
        request = route.request
        refused = not policy.allows(request.url) or (
            request.is_navigation_request() and policy.check(request.url) is not None
        )
        if refused and not (self.env_visit and origin_of(request.url) in policy.allowed_origins):
            await route.abort("blockedbyclient")
        else:
            await route.fallback()


@dataclass(eq=False)
class ReadyContext:
    """A fresh context with its first page, routing and init script in place, on `slot`."""

    slot: BrowserSlot
    context: BrowserContext
    page: Page
    guard: RouteGuard
    warm: bool = False        # opened ahead of time by WarmContexts
    crashed: bool = False     # its page's renderer died (killed, out of memory) while it waited

    @property
    def usable(self) -> bool:
        return self.slot.alive and self.slot.browser.is_connected() and not self.crashed and not self.page.is_closed()


async def open_context(pool: BrowserPool, settings: EnvSettings) -> ReadyContext:
    """A new context, set up as every session needs it; Unavailable when Chromium cannot give one."""
    slot, context = await pool.new_context(settings.viewport_width, settings.viewport_height)
    try:
        guard = RouteGuard()
        if settings.block_other_hosts or settings.guard_grader:
            await context.route(guard.needs_routing, guard.handle)
        # the tracker lets actions wait for the navigations they start; the steady caret spares idle
        # sessions a redraw twice a second (one script: one round trip)
        await context.add_init_script(navigation.TRACKER_JS + observe.STEADY_CARET_JS)
        page = await context.new_page()
    except BaseException as exc:
        await close_quietly(context)
        pool.release(slot)
        if isinstance(exc, Exception) and not isinstance(exc, Unavailable):
            raise Unavailable(f"cannot prepare a browser context: {str(exc).splitlines()[0]}") from exc
        raise
    ready = ReadyContext(slot, context, page, guard)

    def on_crash(_page: Page) -> None:
        ready.crashed = True

    page.on("crash", on_crash)
    return ready


#: How long a page has to answer a liveness check before its renderer counts as dead or wedged.
RESPONSIVE_TIMEOUT_S = 2.0


async def responsive(page: Page, timeout_s: float = RESPONSIVE_TIMEOUT_S) -> bool:
    """Whether the page's renderer runs a trivial script within `timeout_s`: a crashed one fails at
    once, a wedged one does not answer."""
    try:
        await asyncio.wait_for(page.evaluate("1"), timeout_s)
    except (PlaywrightError, TimeoutError):
        return False
    return True


async def quiet_moment(busy, max_defer_s: float) -> None:
    """Wait while `busy()` (a CreateSession under way), at most `max_defer_s`: background work that
    prepares for later creates must not take the cores from the creates it exists to speed up."""
    waited = 0.0
    while busy() and waited < max_defer_s:
        await asyncio.sleep(0.02)
        waited += 0.02


async def cancel_filler(task: asyncio.Task | None) -> None:
    """Stop a background filler loop (its errors no longer matter: the pool is closing)."""
    if task is not None:
        task.cancel()
        try:
            await task
        except (asyncio.CancelledError, Exception):
            pass


async def close_quietly(context: BrowserContext) -> None:
    try:
        await context.close()
    except Exception:
        pass   # its browser is gone already: nothing left to close


class WarmContexts:
    """Up to `size` contexts opened ahead of CreateSession, each handed out once.

    `take()` never waits: it returns a warm context or None (the caller opens one cold). Every take
    wakes the filler, which opens replacements one at a time in the background, and only while no
    CreateSession is under way (`busy()`, deferred up to MAX_DEFER_S): a refill competing for the
    two cores with the sessions being created (page load, first observation) would slow down exactly
    the calls it exists to speed up. Contexts whose Chromium or page renderer died are closed
    instead of handed out.
    """

    #: longest a refill waits for the creates under way to finish before it opens a context anyway
    #: (under a steady stream of creates it must not starve)
    MAX_DEFER_S = 3.0

    def __init__(self, pool: BrowserPool, settings: EnvSettings, size: int, busy=lambda: False) -> None:
        self.pool = pool
        self.settings = settings
        self.size = size
        self._busy = busy
        self._ready: deque[ReadyContext] = deque()
        self._wanted = asyncio.Event()
        self._filler: asyncio.Task | None = None
        self.taken = 0        # sessions that started on a warm context
        self.missed = 0       # sessions that found none ready and opened one cold
        self.discarded = 0    # warm contexts closed unused (their Chromium died)

    @property
    def ready(self) -> int:
        return len(self._ready)

    @property
    def full(self) -> bool:
        """Every warm context is open (so none is being opened: the refill opens only below size)."""
        return len(self._ready) >= self.size

    async def wait_full(self, timeout_s: float) -> bool:
        """Wait up to `timeout_s` for the refill to finish (a context still being opened would look
        like a leftover to a leak check); whether it did."""
        deadline = asyncio.get_running_loop().time() + timeout_s
        while not self.full and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.1)
        return self.full

    def contexts(self) -> list[BrowserContext]:
        """The ready contexts: the pool's stock, which a leak check must not count as leftovers."""
        return [ready.context for ready in self._ready]

    def start(self) -> None:
        if self.size > 0:
            self._filler = asyncio.get_running_loop().create_task(self._fill_forever())
            self._wanted.set()

    async def resize(self, size: int) -> None:
        """Keep `size` warm contexts from now on (0: open every session's on demand)."""
        self.size = size
        while len(self._ready) > size:
            ready = self._ready.pop()
            await close_quietly(ready.context)
            self.pool.release(ready.slot)
        if size > 0 and self._filler is None:
            self.start()
        self._changed()

    def take(self) -> ReadyContext | None:
        while self._ready:
            ready = self._ready.popleft()
            if ready.usable:
                self.taken += 1
                self._changed()
                return ready
            self.discard(ready)
        if self.size > 0:
            self.missed += 1
        self._changed()
        return None

    def _changed(self) -> None:
        metrics.WARM_CONTEXTS.set(len(self._ready))
        self._wanted.set()

    def discard(self, ready: ReadyContext) -> None:
        """Close a context that was taken from the pool but must not be used (its page died)."""
        self.discarded += 1
        self.pool.release(ready.slot)
        asyncio.get_running_loop().create_task(close_quietly(ready.context))

    async def _fill_forever(self) -> None:
        while True:
            await self._wanted.wait()
            self._wanted.clear()
            while len(self._ready) < self.size:
                await quiet_moment(self._busy, self.MAX_DEFER_S)
                try:
                    ready = await open_context(self.pool, self.settings)
                except Unavailable as exc:   # Chromium is being replaced: try again shortly
                    log.warning("could not open a warm context", error=str(exc))
                    await asyncio.sleep(1.0)
                    continue
                ready.warm = True
                self._ready.append(ready)
                metrics.WARM_CONTEXTS.set(len(self._ready))

    async def close(self) -> None:
        await cancel_filler(self._filler)
        while self._ready:
            ready = self._ready.popleft()
            await close_quietly(ready.context)
            self.pool.release(ready.slot)
        metrics.WARM_CONTEXTS.set(0)
