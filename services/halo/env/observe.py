"""Observations: screenshot + accessibility tree with stable element ids (bids).

The AXTree is computed in the page by one JS function (one round trip): it walks the DOM,
gives every element a `data-halo-bid` attribute the first time it is seen (so a bid stays the
same for the life of the element, across observations), and returns the elements worth showing
an agent: interactive ones and those carrying text, with their ARIA role, accessible name,
value, states and box. The text form, one line per element, is what language models read:

    [12] button "Add to Cart"
    [13] textbox "Search" value="headphones" focused
    [14] button "Wifi" pressed

States are the ARIA states a click changes (as Playwright's aria snapshot names them): pressed
(aria-pressed), checked (aria-checked, or a checked native checkbox/radio), selected (aria-selected,
a chosen option), expanded (aria-expanded); each is shown only when true.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import CDPSession, Page

from halo.errors import bounded
from halo.env.timings import Lap, StepTimings

BID_ATTRIBUTE = "data-halo-bid"
#: Longest URL or title an observation carries (the AXTree's names and values are cut in the page).
MAX_PAGE_TEXT_CHARS = 8192

_AXTREE_JS = r"""
(maxElements) => {
  const ATTR = "data-halo-bid";
  const w = window;
  if (w.__haloNextBid === undefined) {
    let max = 0;
    for (const el of document.querySelectorAll("[" + ATTR + "]")) max = Math.max(max, +el.getAttribute(ATTR) || 0);
    w.__haloNextBid = max + 1;
  }
  const IMPLICIT = {A: "link", BUTTON: "button", SELECT: "combobox", TEXTAREA: "textbox", OPTION: "option",
    H1: "heading", H2: "heading", H3: "heading", H4: "heading", H5: "heading", H6: "heading", IMG: "img",
    LI: "listitem", UL: "list", OL: "list", NAV: "navigation", MAIN: "main", HEADER: "banner", FORM: "form",
    TABLE: "table", TR: "row", TD: "cell", TH: "columnheader", LABEL: "label", P: "paragraph", DIALOG: "dialog",
    SUMMARY: "button", ARTICLE: "article", SECTION: "region", ASIDE: "complementary", FOOTER: "contentinfo"};
  const INPUT_ROLES = {button: "button", submit: "button", reset: "button", image: "button", checkbox: "checkbox",
    radio: "radio", range: "slider", number: "spinbutton", search: "searchbox", email: "textbox", tel: "textbox",
    url: "textbox", text: "textbox", password: "textbox", date: "textbox", time: "textbox", "datetime-local": "textbox"};
  const INTERACTIVE_ROLES = new Set(["button", "link", "textbox", "searchbox", "checkbox", "radio", "combobox",
    "option", "slider", "spinbutton", "menuitem", "tab", "switch", "listbox", "menuitemcheckbox", "treeitem"]);
  // A form's named controls shadow its element properties (a field named "children" makes
  // form.children that input): read the DOM through the prototypes' own getters.
  const getter = (proto, prop) => Object.getOwnPropertyDescriptor(proto, prop).get;
  const CHILDREN = getter(Element.prototype, "children"), CHILD_NODES = getter(Node.prototype, "childNodes");
  const TAG = getter(Element.prototype, "tagName");
  const SKIP = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "HEAD", "META", "LINK", "BR", "SVG", "PATH"]);
  const clean = (s) => (s || "").replace(/\s+/g, " ").trim();
  const cut = (s, n) => (s.length > n ? s.slice(0, n - 1) + "…" : s);
  const roleOf = (el) => {
    const explicit = el.getAttribute("role");
    if (explicit) return explicit.split(" ")[0];
    if (el.tagName === "INPUT") return INPUT_ROLES[(el.type || "text").toLowerCase()] || (el.type === "hidden" ? "" : "textbox");
    if (el.tagName === "A" && !el.hasAttribute("href")) return "";
    if (el.isContentEditable && el.parentElement && !el.parentElement.isContentEditable) return "textbox";
    return IMPLICIT[el.tagName] || "";
  };
  const labelText = (el) => {
    const by = el.getAttribute("aria-labelledby");
    if (by) return clean(by.split(/\s+/).map((id) => document.getElementById(id)?.innerText || "").join(" "));
    if (el.labels && el.labels.length) return clean(Array.from(el.labels).map((l) => l.innerText).join(" "));
    return "";
  };
  const nameOf = (el, role) => {
    const aria = el.getAttribute("aria-label");
    if (aria) return clean(aria);
    const lab = labelText(el);
    if (lab) return lab;
    if (el.tagName === "IMG") return clean(el.alt);
    if (el.tagName === "INPUT" && ["button", "submit", "reset"].includes(el.type)) return clean(el.value);
    if (el.tagName === "INPUT" || el.tagName === "TEXTAREA") return clean(el.placeholder || el.title || el.name);
    if (el.tagName === "SELECT") return clean(el.title || el.name);
    const text = clean(el.innerText || el.textContent);
    return text || clean(el.title);
  };
  const ownText = (el) => {
    let t = "";
    for (const n of CHILD_NODES.call(el)) if (n.nodeType === 3) t += n.textContent;
    return clean(t);
  };
  const vw = window.innerWidth, vh = window.innerHeight;
  const out = [];
  const focused = document.activeElement;
  const walk = (el, depth) => {
    if (out.length >= maxElements || SKIP.has(TAG.call(el))) return;
    const style = window.getComputedStyle(el);
    if (style.display === "none" || style.visibility === "hidden" || el.getAttribute("aria-hidden") === "true") return;
    const role = roleOf(el);
    const interactive = INTERACTIVE_ROLES.has(role) || el.hasAttribute("onclick") || el.tabIndex >= 0 && el.tagName !== "BODY" && el.hasAttribute("tabindex");
    const text = ownText(el);
    let shown = false;
    if (interactive || (role && role !== "list" && role !== "form" && (text || role === "img" || role === "heading")) || (text && !role)) {
      let bid = el.getAttribute(ATTR);
      if (!bid) { bid = String(w.__haloNextBid++); el.setAttribute(ATTR, bid); }
      const r = el.getBoundingClientRect();
      const visible = r.width > 0 && r.height > 0 && r.bottom > 0 && r.right > 0 && r.top < vh && r.left < vw;
      let value = "";
      if (el.tagName === "SELECT") value = el.selectedOptions.length ? clean(el.selectedOptions[0].text) : "";
      else if (el.tagName === "INPUT" && (el.type === "checkbox" || el.type === "radio")) value = el.checked ? "checked" : "";
      else if ("value" in el && typeof el.value === "string" && el.tagName !== "BUTTON" && el.tagName !== "LI" && el.tagName !== "OPTION") value = el.value;
      const name = interactive || role === "heading" || role === "img" ? nameOf(el, role) : text;
      const states = [];
      const native = el.tagName === "INPUT" && (el.type === "checkbox" || el.type === "radio");
      if (el.getAttribute("aria-pressed") === "true") states.push("pressed");
      if (el.getAttribute("aria-checked") === "true" || (native && el.checked)) states.push("checked");
      if (el.getAttribute("aria-selected") === "true" || (el.tagName === "OPTION" && el.selected)) states.push("selected");
      if (el.getAttribute("aria-expanded") === "true") states.push("expanded");
      out.push({bid, role: role || "text", name: cut(name, 100), value: cut(value, 100), states,
        x: r.x, y: r.y, width: r.width, height: r.height, visible, interactive: !!interactive,
        focused: el === focused, depth});
      shown = true;
      // An interactive element's children are already in its name.
      if (interactive && role !== "listbox" && role !== "combobox") return;
    }
    for (const child of CHILDREN.call(el)) walk(child, depth + (shown ? 1 : 0));
  };
  if (document.body) walk(document.body, 0);
  return out;
}
"""


@dataclass(frozen=True)
class ElementInfo:
    bid: str
    role: str
    name: str
    value: str
    x: float
    y: float
    width: float
    height: float
    visible: bool
    interactive: bool
    focused: bool
    depth: int
    states: tuple[str, ...] = ()

    @property
    def center(self) -> tuple[float, float]:
        return self.x + self.width / 2, self.y + self.height / 2

    def line(self) -> str:
        parts = [f"{'  ' * self.depth}[{self.bid}] {self.role}"]
        if self.name:
            parts.append(f'"{self.name}"')
        if self.value and not (self.value == "checked" and "checked" in self.states):
            parts.append(f'value="{self.value}"')   # a native checkbox's value="checked" is the state
        parts.extend(self.states)
        if self.focused:
            parts.append("focused")
        if not self.visible:
            parts.append("(offscreen)")
        return " ".join(parts)


def axtree_text(elements: Sequence[ElementInfo]) -> str:
    """The AXTree as language models read it: one `ElementInfo.line` per element."""
    return "\n".join(el.line() for el in elements)


@dataclass
class TabInfo:
    url: str
    title: str
    active: bool


@dataclass
class PageObservation:
    """Plain-Python observation; the gRPC glue converts it to `halo.v1.Observation`."""

    url: str
    title: str
    width: int
    height: int
    screenshot: bytes = b""
    image_format: str = "png"
    elements: tuple[ElementInfo, ...] = ()
    tabs: list[TabInfo] = field(default_factory=list)
    last_action_error: str = ""
    step_index: int = 0
    goal: str = ""
    duration_s: float = 0.0

    @property
    def axtree(self) -> str:
        return axtree_text(self.elements)


@dataclass(frozen=True)
class ObserveOptions:
    image_format: str = "png"      # "png" | "jpeg"
    jpeg_quality: int = 80
    screenshot: bool = True
    axtree: bool = True
    max_elements: int = 400


# An init script of every context: the text caret does not blink (CSS `caret-animation: manual`,
# an inherited property, set on the root so it reaches inputs, iframes' documents (each runs the
# script) and shadow trees alike; a page's own rule for it wins). A blinking caret redraws its page
# twice a second for nobody while the session waits for its next action (a frame to raster,
# composite and send: about a centisecond of CPU a second per idle session with a focused field),
# and a screenshot would show the caret or not by the blink's chance; steady, it always shows
# where typing goes. Added as an adopted style sheet, not a <style> element: no node in the DOM (a
# page that replaces the document's adopted sheets drops it, and its caret blinks again).
STEADY_CARET_JS = """
(() => {
  try {
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(":root { caret-animation: manual; }");
    document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
  } catch (e) {}   // a browser without constructable style sheets: the caret blinks, nothing else changes
})();
"""


# Before the screenshot, in the page (the round trip that reads the AXTree): what Playwright's
# `page.screenshot(animations="disabled")` does in three round trips of its own and a walk of the
# whole DOM. Waits for the document's fonts (no fallback glyphs in the image), finishes finite
# animations and transitions (cancelling infinite ones until `_AFTER_SCREENSHOT_JS` with the same
# `token`, or the next preparation, whichever comes first), and keeps doing so for any that start
# before the capture. The AXTree read after it sees the boxes the screenshot shows.
_PREPARE_SCREENSHOT_JS = r"""
async (token) => {
  if (window.__haloScreenshot) window.__haloScreenshot.undo();
  await document.fonts.ready;
  const resume = new Set();
  const settle = () => {
    for (const a of document.getAnimations()) {
      if (!a.effect || a.playbackRate === 0 || resume.has(a)) continue;
      try {
        if (Number.isFinite(a.effect.getComputedTiming().endTime)) a.finish();
        else { a.cancel(); resume.add(a); }
      } catch (e) {}
    }
  };
  settle();
  document.addEventListener("transitionrun", settle, true);
  document.addEventListener("animationstart", settle, true);
  const undo = () => {
    document.removeEventListener("transitionrun", settle, true);
    document.removeEventListener("animationstart", settle, true);
    for (const a of resume) { try { a.play(); } catch (e) {} }
    delete window.__haloScreenshot;
  };
  window.__haloScreenshot = { token, undo };
}
"""
_AFTER_SCREENSHOT_JS = "(token) => { const s = window.__haloScreenshot; if (s && s.token === token) s.undo(); }"

# The document's title and the AXTree in one round trip (after preparing the page for the
# screenshot when one follows), as one JSON string: Playwright's Python client checks and converts
# an object result value by value (a few milliseconds of the event loop for 400 elements), a
# string it hands over as is. The JSON.stringify the init script saw before any page script ran (a
# page may replace the global one); a page whose Object or Array prototype has a toJSON (that would
# change what stringify writes) gets the plain object back.
# The tree is rebuilt every time (no page-change signal covers every input of it: :hover styles,
# layout, values set by script), but when the result is exactly the string this document returned
# last time, only that reading's tag comes back ("=" + tag), and the caller reuses what it parsed
# then: the unchanged tree is neither sent nor parsed again. A tag names the document (a random id)
# and the reading, so a tag from another document never matches.
_AXTREE_AND_TITLE_JS = f"""async ([maxElements, withTree, screenshotToken, knownTag]) => {{
  if (screenshotToken) await ({_PREPARE_SCREENSHOT_JS})(screenshotToken);
  const result = [document.title, withTree ? ({_AXTREE_JS})(maxElements) : []];
  const stringify = (window.__haloNavigation && window.__haloNavigation.stringify) || JSON.stringify;
  const plain = Object.prototype.toJSON === undefined && Array.prototype.toJSON === undefined;
  if (!plain) return result;
  const text = stringify(result);
  const last = window.__haloLastTree;
  if (last && last.text === text && last.tag === knownTag) return "=" + last.tag;
  const id = last ? last.id : Math.random().toString(36).slice(2);
  const tag = id + ":" + (last ? last.n + 1 : 1);
  window.__haloLastTree = {{ id, n: last ? last.n + 1 : 1, tag, text }};
  return tag + "\\n" + text;
}}"""


@dataclass(frozen=True)
class _Reading:
    tag: str
    title: str
    elements: tuple[ElementInfo, ...]


async def read_elements(page: Page, max_elements: int = 400) -> tuple[ElementInfo, ...]:
    return (await read_title_and_elements(page, max_elements))[1]


async def read_title_and_elements(page: Page, max_elements: int = 400, with_tree: bool = True,
                                  screenshot_token: int = 0) -> tuple[str, tuple[ElementInfo, ...]]:
    """The main document's title (as `page.title()` reads it) and its elements (none unless
    `with_tree`), in one round trip; with a `screenshot_token` (`next_screenshot_token`), first
    prepare the page for `capture` with that token. An unchanged reading is not parsed again: its
    elements come back as the very tuple they came in last time (what derives from them, such as
    their protobuf form, can be reused by identity)."""
    known: _Reading | None = getattr(page, "_halo_last_reading", None)
    result = await page.evaluate(_AXTREE_AND_TITLE_JS, [max_elements, with_tree, screenshot_token, known.tag if known else ""])
    if isinstance(result, str) and result.startswith("=") and known is not None and result[1:] == known.tag:
        return known.title, known.elements
    if isinstance(result, str):
        tag, _, text = result.partition("\n")
        title, raw = json.loads(text)
    else:
        tag, (title, raw) = "", result
    elements = tuple(ElementInfo(**{**item, "states": tuple(item["states"])}) for item in raw)
    setattr(page, "_halo_last_reading", _Reading(tag, title, elements) if tag else None)
    return title, elements


async def _devtools(page: Page) -> CDPSession:
    session = getattr(page, "_halo_devtools", None)
    if session is None:
        session = await page.context.new_cdp_session(page)
        setattr(page, "_halo_devtools", session)
    return session


_restores: set[asyncio.Future] = set()
next_screenshot_token = itertools.count(1).__next__


def _restore_after_screenshot(page: Page, token: int) -> None:
    """Undo the preparation `token` without waiting for it (a round trip off the step): the next
    preparation undoes it first when it reaches the page before this does, and this then leaves
    the newer one alone; a page that closed meanwhile has nothing to undo."""
    restore = asyncio.ensure_future(page.evaluate(_AFTER_SCREENSHOT_JS, token))
    _restores.add(restore)
    restore.add_done_callback(lambda done: (_restores.discard(done), done.cancelled() or done.exception()))


async def capture(page: Page, options: ObserveOptions, token: int) -> bytes:
    """The viewport as Chromium encodes it at the requested format, in one DevTools round trip
    (Playwright's `page.screenshot` adds four: preparing every frame, fonts, layout metrics,
    restoring); the page must have been prepared with `token` (`read_title_and_elements`)."""
    params: dict[str, object] = {"format": options.image_format}
    if options.image_format == "jpeg":
        params["quality"] = options.jpeg_quality
    try:
        result = await (await _devtools(page)).send("Page.captureScreenshot", params)
    finally:
        _restore_after_screenshot(page, token)
    return base64.b64decode(result["data"])


def is_navigation_race(exc: Exception) -> bool:
    """The page navigated while we read it: retry after load, it is nobody's failure."""
    text = str(exc)
    return "Execution context was destroyed" in text or "navigation" in text.lower() and "closed" not in text


def is_transient(exc: Exception) -> bool:
    """Worth another try: a navigation race, or a compositor that has no frame ready for the
    screenshot yet (a page just navigated to, whose first frame is still being drawn)."""
    return is_navigation_race(exc) or "Unable to capture screenshot" in str(exc)


async def observe(page: Page, options: ObserveOptions, tabs: list[TabInfo], attempts: int = 3,
                  timings: StepTimings | None = None) -> PageObservation:
    """The page's observation; `timings` gets the AXTree, screenshot and observe phases."""
    for attempt in range(attempts):
        try:
            return await _observe_once(page, options, tabs, timings)
        except PlaywrightError as exc:
            if attempt == attempts - 1 or not is_transient(exc):
                raise
            await page.wait_for_load_state("load")
            await asyncio.sleep(0.1 * (attempt + 1))
    raise AssertionError("unreachable")


async def _observe_once(page: Page, options: ObserveOptions, tabs: list[TabInfo],
                        timings: StepTimings | None) -> PageObservation:
    clock = Lap()
    viewport = page.viewport_size or {"width": 1280, "height": 720}
    token = next_screenshot_token() if options.screenshot else 0
    title, elements = await read_title_and_elements(page, options.max_elements, options.axtree, token)
    axtree_s = clock.lap()
    screenshot = await capture(page, options, token) if options.screenshot else b""   # encoded once, by Chromium
    screenshot_s = clock.lap()
    duration_s = clock.total()
    if timings is not None:
        timings.axtree_s, timings.screenshot_s, timings.observe_s = axtree_s, screenshot_s, duration_s
    return PageObservation(
        url=bounded(page.url, MAX_PAGE_TEXT_CHARS),    # a GET form can put a megabyte into the URL
        title=bounded(title, MAX_PAGE_TEXT_CHARS),
        width=viewport["width"],
        height=viewport["height"],
        screenshot=screenshot,
        image_format=options.image_format,
        elements=elements,
        tabs=tabs,
        duration_s=duration_s,
    )
