"""`halo sites shots`: a PNG of each replica's main pages at 1280x720, for the README and reviews."""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import async_playwright

from halo.env.browsers import CHROMIUM_ARGS, find_chromium
from halo.sites.registry import REPLICA_TYPES
from halo.sites.server import BackgroundSitesServer


async def render_shots(out_dir: Path, sites: list[str] | None = None) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    with BackgroundSitesServer() as server:
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=find_chromium(), args=CHROMIUM_ARGS)
            for cls in REPLICA_TYPES:
                if sites and cls.site_id not in sites:
                    continue
                context = await browser.new_context(viewport={"width": 1280, "height": 720})
                page = await context.new_page()
                task = sorted(cls.task_ids)[0] if cls.task_ids else ""
                await page.goto(f"{server.url}/{cls.site_id}/config?run_id=shots&task_id={task}")
                for name, path in cls.showcase_pages:
                    await page.goto(f"{server.url}/{cls.site_id}{path}")
                    target = out_dir / f"{cls.site_id}-{name}.png"
                    await page.screenshot(path=str(target))
                    written.append(target)
                await context.close()
            await browser.close()
    return written
