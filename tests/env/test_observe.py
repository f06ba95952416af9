"""The page observer reads forms whose named controls shadow DOM properties.

A form element exposes its controls by name as properties: with a field named `children` (a
booking form's guest counts), `form.children` is that input, and the observer's walk crashed
with "el.children is not iterable" on the whole page.
"""

from __future__ import annotations

import asyncio
import contextlib

from playwright.async_api import async_playwright

from halo.env.browsers import CHROMIUM_ARGS, find_chromium
from halo.env.observe import read_elements

SHADOWING_FORM = """<!doctype html><title>guests</title>
<form aria-label="Guests">
  <label>Adults <input name="adults" value="2"></label>
  <label>Children <input name="children" value="1"></label>
  <label>Notes <input name="childNodes" value=""></label>
  <label>Kind <input name="tagName" value="x"></label>
  <p>Text inside the form</p>
  <button>Search</button>
</form>"""


async def test_controls_named_children_do_not_hide_the_form_contents():
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=find_chromium(), args=CHROMIUM_ARGS)
        try:
            page = await browser.new_page()
            await page.set_content(SHADOWING_FORM)
            assert await page.evaluate("typeof document.forms[0].children.length") == "undefined"   # shadowed
            elements = await read_elements(page)
        finally:
            await browser.close()
    found = {(e.role, e.name, e.value) for e in elements}
    assert ("textbox", "Children", "1") in found and ("textbox", "Adults", "2") in found
    assert ("textbox", "Notes", "") in found and ("button", "Search", "") in found
    assert any(e.name == "Text inside the form" for e in elements)


STATEFUL_CONTROLS = """<!doctype html><title>states</title>
<button aria-pressed="true">Wifi</button><button aria-pressed="false">Pool</button>
<div role="tablist"><a role="tab" href="#" aria-selected="true">Event</a><a role="tab" href="#" aria-selected="false">Task</a></div>
<button aria-expanded="true">Price</button><button aria-expanded="false">Beds</button>
<a role="checkbox" aria-checked="true" href="#">Sony</a>
<label><input type="checkbox" checked> Kitchen</label><label><input type="radio" name="r"> Any</label>
<select aria-label="Size"><option>S</option><option selected>M</option></select>"""


async def test_aria_states_are_read_and_shown_in_the_text_form():
    """What a toggle, tab, disclosure or choice is set to is part of what the agent reads."""
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=find_chromium(), args=CHROMIUM_ARGS)
        try:
            page = await browser.new_page()
            await page.set_content(STATEFUL_CONTROLS)
            elements = await read_elements(page)
        finally:
            await browser.close()
    states = {e.name: e.states for e in elements}
    assert states["Wifi"] == ("pressed",) and states["Pool"] == ()
    assert states["Event"] == ("selected",) and states["Task"] == ()
    assert states["Price"] == ("expanded",) and states["Beds"] == ()
    assert states["Sony"] == ("checked",) and states["Kitchen"] == ("checked",) and states["Any"] == ()
    assert states["M"] == ("selected",) and states["S"] == ()
    lines = {e.name: e.line() for e in elements}
    assert lines["Wifi"].endswith('button "Wifi" pressed') and lines["Pool"].endswith('button "Pool"')
    assert lines["Kitchen"].endswith('checkbox "Kitchen" checked')   # the state, not also value="checked"


PATCHED_JSON = """<!doctype html><title>patched</title>
<script>
  JSON.stringify = () => "[]";                                  // a page that replaces the global
</script>
<label>Name <input value="Ada"></label><button>Go</button>"""

TO_JSON = """<!doctype html><title>tojson</title>
<script>Array.prototype.toJSON = function () { return "not an array"; };</script>
<label>Name <input value="Ada"></label><button>Go</button>"""


async def test_the_axtree_survives_a_page_that_patches_json():
    """The AXTree comes back as a JSON string (cheaper to receive): a page that replaces
    JSON.stringify or gives arrays a toJSON must not change what the observer reads."""
    from halo.env.navigation import TRACKER_JS
    from halo.env.observe import read_title_and_elements

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=find_chromium(), args=CHROMIUM_ARGS)
        try:
            context = await browser.new_context()
            await context.add_init_script(TRACKER_JS)   # as every context of the pool has it
            page = await context.new_page()
            pages = {"/patched": PATCHED_JSON, "/tojson": TO_JSON}

            async def serve(route):
                await route.fulfill(body=pages[route.request.url.removeprefix("http://halo.test")], content_type="text/html")

            await page.route("http://halo.test/*", serve)
            read = {}
            for path in pages:
                await page.goto(f"http://halo.test{path}")
                read[path.strip("/")] = await read_title_and_elements(page)
        finally:
            await browser.close()
    for name, (title, elements) in read.items():
        assert title == name
        assert {(e.role, e.name, e.value) for e in elements} >= {("textbox", "Name", "Ada"), ("button", "Go", "")}, name


@contextlib.asynccontextmanager
async def _page_showing(content: str):
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=find_chromium(), args=CHROMIUM_ARGS)
        try:
            page = await browser.new_page(viewport={"width": 1280, "height": 720})
            await page.set_content(content)
            yield page
        finally:
            await browser.close()


ANIMATED = """<!doctype html><title>animated</title>
<style>
  @keyframes slide { from { left: 0px; } to { left: 600px; } }
  @keyframes spin { to { transform: rotate(360deg); } }
  body { margin: 0; background: white; }
  #box { position: absolute; top: 0; left: 0; width: 100px; height: 100px; background: rgb(255, 0, 0);
         animation: slide 60s linear forwards; }
  #spinner { position: absolute; top: 300px; left: 0; width: 20px; height: 20px; animation: spin 1s linear infinite; }
</style>
<div id="box"></div><div id="spinner"></div>"""


async def test_the_screenshot_shows_finished_animations_and_leaves_infinite_ones_running():
    """One DevTools capture at the requested format, of a page whose finite animations were
    finished first (as Playwright's animations="disabled"); an infinite one runs again after."""
    import asyncio
    import io

    from PIL import Image

    from halo.env.observe import ObserveOptions, observe

    async with _page_showing(ANIMATED) as page:
        jpeg = await observe(page, ObserveOptions(image_format="jpeg", jpeg_quality=90), [])
        png = await observe(page, ObserveOptions(image_format="png"), [])
        for _ in range(50):   # observe does not wait for the restore
            states = await page.evaluate("() => document.getAnimations().map((a) => a.playState)")
            if "running" in states:
                break
            await asyncio.sleep(0.02)
    assert jpeg.screenshot.startswith(b"\xff\xd8") and png.screenshot.startswith(b"\x89PNG")
    image = Image.open(io.BytesIO(png.screenshot)).convert("RGB")
    assert image.size == (1280, 720)
    assert image.getpixel((650, 50)) == (255, 0, 0) and image.getpixel((50, 50)) == (255, 255, 255)   # at its end
    assert sorted(states) == ["finished", "running"], states   # the slide finished; the spinner spins again


CHANGING = """<!doctype html><title>changing</title>
<input aria-label="Name"><label><input type="checkbox"> Kitchen</label><button>Go</button>
<p id="note">first</p><div style="height: 3000px"></div>"""


async def test_an_unchanged_tree_is_reused_and_any_change_gives_the_rebuilt_one():
    """The reading that repeats the last one exactly is not sent or parsed again; after any change
    (a value or checked state set by script, focus, scroll, text) the reading is what a fresh
    walk of the page gives."""
    from halo.env.observe import _AXTREE_JS, ElementInfo, read_title_and_elements

    async def fresh(page) -> tuple[ElementInfo, ...]:
        raw = await page.evaluate(_AXTREE_JS, 400)
        return tuple(ElementInfo(**{**item, "states": tuple(item["states"])}) for item in raw)

    changes = [
        "document.querySelector('input').value = 'Ada'",          # no event, no mutation
        "document.querySelector('[type=checkbox]').checked = true",
        "document.querySelector('button').focus()",
        "scrollTo(0, 200)",
        "document.getElementById('note').textContent = 'second'",
        "document.title = 'renamed'",
    ]
    async with _page_showing(CHANGING) as page:
        first = await read_title_and_elements(page)
        reading = page._halo_last_reading
        again = await read_title_and_elements(page)
        assert again == first and page._halo_last_reading is reading   # reused
        assert again[1] is first[1]   # the same tuple: what derives from it (its protobuf form) is reused too
        for change in changes:
            await page.evaluate(change)
            title, elements = await read_title_and_elements(page)
            assert page._halo_last_reading is not reading, change
            reading = page._halo_last_reading
            assert elements == await fresh(page) and title == await page.title(), change
        await page.goto("about:blank")
        await page.set_content(CHANGING)   # another document (a new window): its reading is sent whole
        assert await read_title_and_elements(page) == first and page._halo_last_reading is not reading


CARETS = """<!doctype html><title>carets</title>
<input id="main" value="typed">
<iframe srcdoc="<input id=inner value=framed>"></iframe>
<div id="host"></div>
<input id="own" style="caret-animation: auto" value="the page's own rule">
<script>
  document.getElementById("host").attachShadow({mode: "open"}).innerHTML = '<input id="shadowed" value="in a shadow root">';
  const sheet = new CSSStyleSheet();
  sheet.replaceSync("#main { color: rgb(0, 128, 0); }");
  document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];   // the page's own sheets still apply
</script>"""


async def test_the_caret_is_steady_in_every_document_and_shadow_tree_and_the_page_keeps_its_own_rules(stack):
    """Every context's pages have a caret that does not blink: an idle session does not redraw its page
    twice a second, and screenshots taken at any moment show the caret the same way."""
    from halo.env.config import EnvSettings
    from halo.env.contexts import close_quietly, open_context
    from halo.env.observe import ObserveOptions, observe

    pool = stack.env_manager.pool
    ready = await open_context(pool, EnvSettings(port=0, metrics_port=-1, block_other_hosts=False, guard_grader=False))
    try:
        page = ready.page
        await page.goto("data:text/html," + CARETS.replace("#", "%23"))
        await page.wait_for_function("document.getElementById('host').shadowRoot !== null")
        caret = "(el) => getComputedStyle(el).caretAnimation"
        assert await page.eval_on_selector("#main", caret) == "manual"
        assert await page.frame_locator("iframe").locator("#inner").evaluate(caret) == "manual"
        assert await page.evaluate(f"({caret})(document.getElementById('host').shadowRoot.getElementById('shadowed'))") == "manual"
        assert await page.eval_on_selector("#own", caret) == "auto"                     # the page's rule wins
        assert await page.eval_on_selector("#main", "(el) => getComputedStyle(el).color") == "rgb(0, 128, 0)"
        assert await page.evaluate("document.querySelectorAll('style').length") == 0     # no node added

        await page.focus("#main")
        shots = []
        for _ in range(4):   # a blinking caret (on and off every 500 ms) would differ between some of these
            shots.append((await observe(page, ObserveOptions(image_format="png", axtree=False), [])).screenshot)
            await asyncio.sleep(0.3)
        assert len(set(shots)) == 1
    finally:
        await close_quietly(ready.context)
        pool.release(ready.slot)
