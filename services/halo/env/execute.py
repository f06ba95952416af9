"""Execute one action of the action space on a Playwright page.

The action's inputs are within their bounds (halo.agent.bounds: the session refuses any other
before it gets here). Impossible actions (unknown bid, point outside the viewport, blocked URL,
timeouts the page caused) raise `ActionFailed` with a message meant for the agent; the session
turns it into `last_action_error` and stays usable.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Locator, Page
from playwright.async_api import TimeoutError as PlaywrightTimeout

from halo.agent import actions as A
from halo.errors import quoted
from halo.env.navigation import mark_requests, settle, watcher_for
from halo.env.observe import BID_ATTRIBUTE
from halo.env.timings import Lap, StepTimings
from halo.env.urlpolicy import UrlPolicy


class ActionFailed(Exception):
    """The action could not be carried out; the message is shown to the agent."""


class ActionStalled(Exception):
    """The action ran out of time although the page never refused it (its element was found and
    no check failed): the machine or the browser was too slow, which is the environment's fault,
    not the agent's. The session ends in an environment failure (dropped or retried, never scored)."""


#: What Playwright's call log says when the page itself refused an action for the whole timeout:
#: a check that failed on the element (not visible / enabled / stable / editable, covered by
#: another element, outside the viewport, detached) or an option that is missing or disabled.
#: A timeout whose log holds none of these never got an answer from the page in time.
_REFUSALS = ("element is not ", "intercepts pointer events", "element is outside of the viewport",
             "element was detached", "did not find some options", "option being selected is not enabled")


def page_refused(call_log: str) -> bool:
    """Whether a Playwright timeout's message shows the page refusing the action (the agent's
    doing) rather than the action never finishing (the machine's)."""
    return any(refusal in call_log for refusal in _REFUSALS)


@dataclass(frozen=True)
class ExecLimits:
    action_timeout_ms: float = 3000
    navigation_timeout_ms: float = 15000
    max_wait_ms: int = 5000

    #: Step budget added per typed character: a type_text is one key event after another, each
    #: answered by the page (4 ms a key on a quiet machine, 25 ms at a load of 22 on 2 cores), so
    #: the longest type (halo.agent.bounds.MAX_TYPE_CHARS) gets 15 s more and the budget still
    #: tells a wedged page from a slow one.
    type_key_allowance_ms: float = 30

    @property
    def step_budget_s(self) -> float:
        """Longest a whole step (action, the waits it starts, observation) may take: an element
        action, a navigation and the longest wait, with 2 s to spare. A page that takes longer is
        wedged (its renderer stopped answering): an environment failure, never a hung call."""
        return (self.action_timeout_ms + self.navigation_timeout_ms + self.max_wait_ms) / 1000 + 2.0

    def step_budget_for(self, action: A.Action) -> float:
        """The step budget of `action`: `step_budget_s`, plus the typing allowance of a type_text."""
        if isinstance(action, A.TypeText):
            return self.step_budget_s + len(action.text) * self.type_key_allowance_ms / 1000
        return self.step_budget_s


_BUTTONS = {A.MouseButton.LEFT: "left", A.MouseButton.RIGHT: "right", A.MouseButton.MIDDLE: "middle"}


def _pixels(page: Page, point: A.Point) -> tuple[float, float]:
    vp = page.viewport_size or {"width": 1280, "height": 720}
    x, y = point.to_pixels(vp["width"], vp["height"])
    if not (0 <= x <= vp["width"] and 0 <= y <= vp["height"]):
        unit = "0..1000" if point.space == A.CoordinateSpace.NORMALIZED_1000 else "pixels"
        raise ActionFailed(f"point ({point.x:g}, {point.y:g}) is outside the {vp['width']}x{vp['height']} viewport ({unit})")
    return x, y


def _bid_selector(bid: str) -> str:
    if not bid or not bid.strip().isdigit():
        raise ActionFailed(f"bid {quoted(bid)} is not an element id (expected a number from the AXTree)")
    return f'[{BID_ATTRIBUTE}="{bid.strip()}"]'


def _target_selector(action: A.Action) -> str:
    """The selector of the element an element action targets ("" for other actions); a malformed
    bid fails here, before the action touches the page."""
    match action:
        case A.ClickElement(bid=bid) | A.Fill(bid=bid) | A.SelectOption(bid=bid) | A.Hover(bid=bid):
            return _bid_selector(bid)
    return ""


async def _element(page: Page, bid: str, found: bool | None = None):
    """The element `bid` names; `found`: whether the page already said it has one (None: ask it)."""
    locator = page.locator(_bid_selector(bid))
    if found is False or found is None and await locator.count() == 0:
        raise ActionFailed(f"no element with bid {bid} on this page")
    return locator.first


# Before a left click, in the page: does it open a new tab (a target=_blank link)? And, on a native
# drop-down (a <select> without `multiple` or `size`), keep the press from opening Chromium's
# popup list: the trusted mousedown / mouseup / click still reach the page and the select gets
# the focus. Why: before it acknowledges that mousedown, Chromium builds the popup (a widget of
# its own, shown through the browser process, a document laying out every option, its own
# compositor frame), so that press costs several times a button's (`halo bench clicks` measures
# it; docs/benchmarks.md) and would be the first to reach the action timeout on a busy machine.
# The agent never sees that popup (headless screenshots show the page only); the options are in
# the observation and `select_option` chooses one.
# Resolves to [opens a tab, popup suppressed]; `_END_CLICK` takes the suppression off again.
_PREPARE_CLICK = """(el, left) => {
  let guarded = false;
  if (left && el.tagName === "SELECT" && !el.multiple && el.size <= 1) {
    const keepClosed = (e) => { e.preventDefault(); el.focus(); };
    el.addEventListener("mousedown", keepClosed, true);
    window.__haloEndClick = () => el.removeEventListener("mousedown", keepClosed, true);
    guarded = true;
  }
  const a = el.closest("a[href]");
  return [!!a && a.target === "_blank", guarded];
}"""
_PREPARE_CLICK_AT = (
    "([x, y, left]) => { const el = document.elementFromPoint(x, y); if (!el) return [false, false];"
    f" return ({_PREPARE_CLICK})(el, left); }}"
)
_END_CLICK = "() => { if (window.__haloEndClick) { window.__haloEndClick(); delete window.__haloEndClick; } }"


@contextlib.asynccontextmanager
async def _native_popup_kept_closed(page: Page, guarded: bool):
    try:
        yield
    finally:
        if guarded:
            with contextlib.suppress(PlaywrightError):   # a click that navigated took the listener with the page
                await page.evaluate(_END_CLICK)


@contextlib.asynccontextmanager
async def _maybe_new_tab(page: Page, expected: bool, limits: ExecLimits):
    """Wait for the tab a target=_blank link opens, so the next observation shows it."""
    if not expected:
        yield
        return
    try:
        async with page.context.expect_page(timeout=limits.navigation_timeout_ms) as info:
            yield
        new_page = await info.value
        await new_page.wait_for_load_state("load", timeout=limits.navigation_timeout_ms)
    except PlaywrightTimeout:
        pass


async def click_element(page: Page, el: Locator, button: A.MouseButton, clicks: int, limits: ExecLimits) -> None:
    """A click on an element, as the env clicks (a native select's popup kept closed, a new tab waited for)."""
    left = button == A.MouseButton.LEFT
    opens_tab, guarded = await el.evaluate(_PREPARE_CLICK, left)
    async with _native_popup_kept_closed(page, guarded), _maybe_new_tab(page, opens_tab and left, limits):
        # no_wait_after: the click is done once dispatched; a navigation it starts is `settle`'s to
        # wait for, under the navigation timeout. Left to Playwright, that wait counts against the
        # action timeout, and a click that happened is reported as timed out whenever the page
        # loads slowly.
        await el.click(button=_BUTTONS[button], click_count=clicks, timeout=limits.action_timeout_ms, no_wait_after=True)


async def execute(page: Page, action: A.Action, policy: UrlPolicy, limits: ExecLimits,
                  timings: StepTimings | None = None) -> None:
    """Carry `action` out and wait for what it started (`settle`); `timings` gets the action and
    settle phases."""
    clock = Lap()
    ended_before = watcher_for(page).ended
    # one round trip marks the page's requests and, for an element action, finds its target
    found = await mark_requests(page, _target_selector(action))
    try:
        await _execute(page, action, policy, limits, found)
    except PlaywrightTimeout as exc:
        if not page_refused(str(exc)):
            raise ActionStalled(f"the {A.kind_of(action)} did not finish in time although the page never refused it "
                                f"({str(exc).splitlines()[0]}): the browser or the machine is too slow") from exc
        raise ActionFailed(f"{A.kind_of(action)} timed out: {str(exc).splitlines()[0]}") from exc
    except PlaywrightError as exc:
        if "Target page, context or browser has been closed" in str(exc) or "Target closed" in str(exc):
            raise  # the browser is gone: not the agent's fault, handled by the session as env failure
        raise ActionFailed(f"{A.kind_of(action)} failed: {str(exc).splitlines()[0]}") from exc
    if timings is not None:
        timings.action_s = clock.lap()
    await settle(page, ended_before, limits.navigation_timeout_ms, frame=isinstance(action, A.Scroll))
    if timings is not None:
        timings.settle_s = clock.lap()


def _clicks(count: int) -> int:
    return max(1, count)   # 0 means 1 (bounds.MAX_CLICK_COUNT caps it)


async def _execute(page: Page, action: A.Action, policy: UrlPolicy, limits: ExecLimits, found: bool | None = None) -> None:
    t = limits.action_timeout_ms
    match action:
        case A.ClickAt(point=point, button=button, click_count=count):
            clicks, (x, y) = _clicks(count), _pixels(page, point)
            left = button == A.MouseButton.LEFT
            opens_tab, guarded = await page.evaluate(_PREPARE_CLICK_AT, [x, y, left])
            async with _native_popup_kept_closed(page, guarded), _maybe_new_tab(page, opens_tab and left, limits):
                await page.mouse.click(x, y, button=_BUTTONS[button], click_count=clicks)
        case A.ClickElement(bid=bid, button=button, click_count=count):
            clicks, el = _clicks(count), await _element(page, bid, found)
            await click_element(page, el, button, clicks, limits)
        case A.Fill(bid=bid, text=text):
            el = await _element(page, bid, found)
            await el.fill(text, timeout=t)
        case A.SelectOption(bid=bid, values=values):
            el = await _element(page, bid, found)
            if not values:
                raise ActionFailed("select_option needs at least one value")
            await el.select_option(list(values), timeout=t, no_wait_after=True)  # as for clicks
        case A.Hover(bid=bid):
            el = await _element(page, bid, found)
            await el.hover(timeout=t)
        case A.HoverAt(point=point):
            await page.mouse.move(*_pixels(page, point))
        case A.TypeText(text=text, press_enter=enter):
            await page.keyboard.type(text)
            if enter:
                await page.keyboard.press("Enter")
        case A.KeyPress(keys=keys):
            if not keys.strip():
                raise ActionFailed("key_press needs a key, e.g. 'Enter' or 'Control+A'")
            await page.keyboard.press(keys.strip())
        case A.Scroll(delta_x=dx, delta_y=dy, at=at):
            vp = page.viewport_size or {"width": 1280, "height": 720}
            x, y = _pixels(page, at) if at is not None else (vp["width"] / 2, vp["height"] / 2)
            await page.mouse.move(x, y)
            await page.mouse.wheel(dx, dy)   # applied in a later frame: `settle` waits for one
        case A.Drag(from_=start, to=end):
            x1, y1 = _pixels(page, start)
            x2, y2 = _pixels(page, end)
            await page.mouse.move(x1, y1)
            await page.mouse.down()
            await page.mouse.move(x2, y2, steps=8)
            await page.mouse.up()
        case A.Goto(url=url):
            reason = policy.check(url)
            if reason is not None:
                raise ActionFailed(f"goto refused: {reason}")
            await page.goto(url, timeout=limits.navigation_timeout_ms)
        case A.GoBack():
            await page.go_back(timeout=limits.navigation_timeout_ms)
        case A.GoForward():
            await page.go_forward(timeout=limits.navigation_timeout_ms)
        case A.Wait(milliseconds=ms):
            await asyncio.sleep(min(max(ms, 0), limits.max_wait_ms) / 1000)
        case A.SendMessage() | A.ReportInfeasible() | A.Noop():
            pass
        case _:
            raise ActionFailed(f"unsupported action {action!r}")
