"""`halo bench clicks`: how long a click on a native <select> takes, with Chromium's popup and without.

A trusted press on a <select> makes Chromium build the popup list (a widget of its own, shown
through the browser process, a document laying out every option) before it acknowledges the
press. The env clicks elements with `halo.env.execute.click_element`, which keeps that popup
closed; this bench puts, in the same pages and interleaved, Playwright's own click on the select
(the popup opens), the env's click on it, and the env's click on a button, `pages` pages at a
time in one Chromium, and prints p50 / p95 / max of each. Run it on a loaded and on an idle
machine: the popup shows in the tail.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from halo.agent import actions as A
from halo.env.browsers import CHROMIUM_ARGS, find_chromium
from halo.env.execute import ExecLimits, click_element
from halo.env.observe import BID_ATTRIBUTE

console = Console()
ORIGIN = "http://clicks.test"
MODES = ("select: Playwright's click (popup)", "select: the env's click", "button: the env's click")


def _page(options: int) -> str:
    choices = "".join(f"<option>option {i}</option>" for i in range(options))
    return (f'<!doctype html><title>clicks</title><select {BID_ATTRIBUTE}="1" aria-label="choice">{choices}</select>'
            f'<p><button {BID_ATTRIBUTE}="2" type="button">a button</button></p>')


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def run_clicks_bench(clicks: int, pages: int, options: int, json_path: str) -> int:
    from playwright.async_api import async_playwright   # lazy: the bench alone needs Playwright here

    limits = ExecLimits(action_timeout_ms=60_000)   # measured, not cut off
    times: dict[str, list[float]] = {mode: [] for mode in MODES}

    async def one_page(browser) -> None:
        context = await browser.new_context(viewport={"width": 1280, "height": 720})
        await context.route(f"{ORIGIN}/**", lambda route: route.fulfill(content_type="text/html", body=_page(options)))
        page = await context.new_page()
        await page.goto(f"{ORIGIN}/")
        select, button = page.locator(f'[{BID_ATTRIBUTE}="1"]'), page.locator(f'[{BID_ATTRIBUTE}="2"]')
        for _ in range(clicks):
            for mode in MODES:
                started = time.perf_counter()
                if mode == MODES[0]:
                    await select.click(no_wait_after=True, timeout=limits.action_timeout_ms)
                else:
                    await click_element(page, select if mode == MODES[1] else button, A.MouseButton.LEFT, 1, limits)
                times[mode].append(time.perf_counter() - started)
                await button.click(no_wait_after=True, timeout=60_000)   # closes a popup, as the agent's next click would
        await context.close()

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=find_chromium(), args=CHROMIUM_ARGS)
        try:
            await asyncio.gather(*(one_page(browser) for _ in range(pages)))
        finally:
            await browser.close()

    rows = {mode: {"clicks": len(v), "p50_ms": 1000 * _quantile(v, 0.5), "p95_ms": 1000 * _quantile(v, 0.95),
                   "max_ms": 1000 * max(v)} for mode, v in times.items()}
    table = Table(title=f"click latency: {pages} page(s) at once, {clicks} clicks each, a {options}-option select")
    for column in ("what", "clicks", "p50 ms", "p95 ms", "max ms"):
        table.add_column(column, justify="left" if column == "what" else "right")
    for mode, row in rows.items():
        table.add_row(mode, str(row["clicks"]), f"{row['p50_ms']:.0f}", f"{row['p95_ms']:.0f}", f"{row['max_ms']:.0f}")
    console.print(table)
    if json_path:
        Path(json_path).write_text(json.dumps({"pages": pages, "clicks": clicks, "options": options, "rows": rows}, indent=2))
    return 0
