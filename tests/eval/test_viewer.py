"""The static trajectory viewer in a real headless Chromium (file:// pages, no server): every step
with its screenshot, the action drawn at the right place on it, rewards, and the final evaluation."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from tests.eval.conftest import SCRIPTED_KINDS, SCRIPTED_SEED, SCRIPTED_TASK


@pytest.fixture
async def page():
    from playwright.async_api import async_playwright

    from halo.env.browsers import CHROMIUM_ARGS, find_chromium

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=find_chromium(), args=CHROMIUM_ARGS)
        try:
            yield await browser.new_page(viewport={"width": 1400, "height": 900})
        finally:
            await browser.close()


GEOMETRY = """([selector, sel]) => {
  const step = document.querySelector(selector);
  step.scrollIntoView();
  const img = step.querySelector('.shot img').getBoundingClientRect();
  const el = step.querySelector(sel).getBoundingClientRect();
  return {ix: img.x, iy: img.y, iw: img.width, ih: img.height, x: el.x, y: el.y, w: el.width, h: el.height};
}"""


def to_image(g: dict, x: float, y: float) -> tuple[float, float]:
    """A point in the 1280x720 screenshot -> CSS pixels of the rendered page."""
    return g["ix"] + x * g["iw"] / 1280, g["iy"] + y * g["ih"] / 720


def coloured(shot: Image.Image, box: tuple[int, int, int, int], test) -> int:
    region = shot.crop(box).convert("RGB")
    return sum(1 for px in region.get_flattened_data() if test(*px))


async def test_episode_page_shows_steps_screenshots_and_overlays(scripted_eval, page):
    store, spec, _ = scripted_eval
    folder = store.episode_dir(spec.eval_id, SCRIPTED_TASK, SCRIPTED_SEED)
    steps = store.steps(spec.eval_id, folder.name)
    await page.goto((folder / "index.html").as_uri())
    await page.wait_for_load_state("load")

    assert await page.eval_on_selector_all("section.step", "els => els.map(e => e.dataset.kind)") == SCRIPTED_KINDS
    images = await page.eval_on_selector_all(
        "section.step .shot img", "els => els.map(i => [i.getAttribute('src'), i.complete, i.naturalWidth, i.naturalHeight])")
    assert images == [[f"step-{i:03d}.jpg", True, 1280, 720] for i in range(len(SCRIPTED_KINDS))]
    raw = await page.eval_on_selector_all("section.step pre.raw-text", "els => els.map(e => e.textContent)")
    assert raw == [s["raw_text"] for s in steps]
    totals = await page.eval_on_selector_all("section.step th.reward-total", "els => els.map(e => parseFloat(e.textContent))")
    assert totals == pytest.approx([round(s["reward"], 2) for s in steps])

    # click at a point given in Qwen3-VL's 0-1000 space: drawn at its pixel position on the screenshot
    point = steps[0]["action"]["click_at"]["point"]
    g = await page.evaluate(GEOMETRY, ["#step-0", "circle.overlay-click"])
    ex, ey = to_image(g, point["x"] / 1000 * 1280, point["y"] / 1000 * 720)
    assert abs(g["x"] + g["w"] / 2 - ex) < 1.5 and abs(g["y"] + g["h"] / 2 - ey) < 1.5, (g, ex, ey)
    shot = Image.open(io.BytesIO(await page.screenshot()))
    red = coloured(shot, (int(ex) - 14, int(ey) - 14, int(ex) + 14, int(ey) + 14), lambda r, g_, b: r > 200 and g_ < 110 and b < 140)
    assert red > 10, "the click marker is not visible on the rendered screenshot"

    # typed text
    assert "Ada Lovelace" in await page.text_content("#step-1 .overlay-text text")

    # click by bid: the element's box
    target = steps[2]["target"]
    assert await page.get_attribute("#step-2 rect.overlay-box", "data-bid") == target["bid"]
    g = await page.evaluate(GEOMETRY, ["#step-2", "rect.overlay-box"])
    x0, y0 = to_image(g, target["x"], target["y"])
    assert abs(g["x"] - x0) < 2.5 and abs(g["y"] - y0) < 2.5 and abs(g["w"] - target["width"] * g["iw"] / 1280) < 3

    # drag: an arrow from the card to the drop zone, visibly blue halfway
    drag = steps[3]["action"]["drag"]
    line = await page.eval_on_selector("#step-3 line.overlay-drag", "l => [l.getAttribute('x1'), l.getAttribute('y1'), "
                                       "l.getAttribute('x2'), l.getAttribute('y2'), l.getAttribute('marker-end')]")
    assert [float(v) for v in line[:4]] == pytest.approx(
        [drag["from"]["x"], drag["from"]["y"], drag["to"]["x"], drag["to"]["y"]], abs=0.1)
    assert line[4] == "url(#arrow)" and await page.locator("marker#arrow").count() == 1
    g = await page.evaluate(GEOMETRY, ["#step-3", "line.overlay-drag"])
    mx, my = to_image(g, (drag["from"]["x"] + drag["to"]["x"]) / 2, (drag["from"]["y"] + drag["to"]["y"]) / 2)
    shot = Image.open(io.BytesIO(await page.screenshot()))
    blue = coloured(shot, (int(mx) - 6, int(my) - 6, int(mx) + 6, int(my) + 6), lambda r, g_, b: b > 200 and r < 110 and 100 < g_ < 190)
    assert blue > 5, "the drag arrow is not visible"

    assert await page.locator("#step-4 line.overlay-scroll").count() == 1
    assert "The card is in the drop zone." in await page.text_content("#step-5 .overlay-message")

    # the final evaluation
    assert (await page.text_content("#final .badge")).strip() == "success"
    assert "pass" in await page.text_content("#final .eval-details")
    assert await page.eval_on_selector("#final img", "i => i.complete && i.naturalWidth") == 1280


async def test_run_index_links_tables_plots_and_episodes(scripted_eval, page):
    store, spec, _ = scripted_eval
    await page.goto((store.eval_dir(spec.eval_id) / "index.html").as_uri())
    rows = await page.eval_on_selector_all("table.sites tr", "rs => rs.map(r => [...r.cells].map(c => c.textContent))")
    assert rows[1][:4] == ["playground", "1", "100%", "1/1"] and rows[-1][0] == "all"
    plots = await page.eval_on_selector_all("img.plot", "is => is.map(i => [i.getAttribute('src'), i.complete && i.naturalWidth > 300])")
    assert plots == [["success_by_site.png", True], ["rewards.png", True]]
    await page.click(f"table.episodes a:has-text('{SCRIPTED_TASK}')")
    await page.wait_for_load_state("load")
    assert page.url.endswith(f"episodes/{SCRIPTED_TASK}--s{SCRIPTED_SEED}/index.html")
    assert await page.locator("section.step").count() == len(SCRIPTED_KINDS)
    await page.click("header a")   # back to the run
    assert page.url.endswith(f"{spec.eval_id}/index.html")
