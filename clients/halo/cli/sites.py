"""`halo sites shots`: a PNG of each replica's main pages at 1280x720, for docs/reference/sites.md and reviews."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path



async def render_shots(out_dir: Path, sites: list[str] | None = None) -> list[Path]:
    # Lazy: Playwright and the replicas load only for this command, not for every `halo …`.
    from playwright.async_api import async_playwright

    from halo.env.browsers import CHROMIUM_ARGS, find_chromium
    from halo.sites.registry import REPLICA_TYPES
    from halo.sites.server import BackgroundSitesServer

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


def run(args: argparse.Namespace) -> int:
    for path in asyncio.run(render_shots(Path(args.out), args.site or None)):
        print(path)
    return 0


def add_parser(sub) -> None:
    sites = sub.add_parser("sites", help="site replicas: screenshots of their main pages")
    sites_sub = sites.add_subparsers(dest="sites_command", required=True)
    shots = sites_sub.add_parser("shots", help="PNG screenshots of each replica's main pages")
    shots.add_argument("--out", default="docs/shots", help="folder for the PNG files")
    shots.add_argument("--site", action="append", default=[], help="only these sites")
    shots.set_defaults(run=run)
