"""A few Chromium processes shared by many isolated browser contexts.

Contexts never share cookies or storage. When a Chromium process dies, every context on it is
lost: the pool marks the process dead (sessions on it report an environment failure), launches
a replacement, and new sessions land on live processes.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import shutil
from dataclasses import dataclass, field

from playwright.async_api import Browser, BrowserContext, Playwright, async_playwright

from halo.env import metrics
from halo.runtime.errors import Unavailable
from halo.runtime.logging import get_logger

log = get_logger("halo.env.browsers")

# Flags for headless Chromium in containers and offline machines (no background traffic that a
# closed network would refuse, no GPU). The sandbox is a setting of its own (BrowserPool.sandbox_mode).
CHROMIUM_ARGS = [
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
    "--hide-scrollbars",
    "--mute-audio",
]


#: what Chromium prints when it cannot create its sandbox's namespaces (a seccomp profile or
#: AppArmor refusing unprivileged user namespaces)
NO_SANDBOX_MESSAGE = "No usable sandbox"


def find_chromium(explicit: str = "") -> str | None:
    """Executable to launch: the configured one, Playwright's own when installed, else Debian's."""
    if explicit:
        return explicit
    if os.environ.get("HALO_CHROMIUM"):
        return os.environ["HALO_CHROMIUM"]
    browsers_root = os.environ.get("PLAYWRIGHT_BROWSERS_PATH") or os.path.expanduser("~/.cache/ms-playwright")
    if os.path.isdir(browsers_root) and any(n.startswith("chromium") for n in os.listdir(browsers_root)):
        return None  # Playwright finds its own build
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


@dataclass(eq=False)
class BrowserSlot:
    index: int
    generation: int
    browser: Browser
    contexts: int = 0
    alive: bool = True


@dataclass
class BrowserPool:
    count: int = 1
    executable: str | None = None
    headless: bool = True
    # Chromium's sandbox (the env setting chromium_sandbox): `on` refuses to run a browser without it;
    # `auto` tries it unless root (where Chromium refuses to sandbox) and, where Chromium says
    # NO_SANDBOX_MESSAGE, runs without it and says so once; `off` passes --no-sandbox
    sandbox_mode: str = "off"
    sandboxed: bool = field(init=False, default=False)   # what the next launch asks for
    restarts: int = 0
    _playwright: Playwright | None = None
    _slots: list[BrowserSlot] = field(default_factory=list)
    _generations: itertools.count = field(default_factory=lambda: itertools.count(1))
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    _closing: bool = False

    def __post_init__(self) -> None:
        self.sandboxed = self.sandbox_mode == "on" or (self.sandbox_mode == "auto" and os.geteuid() != 0)

    async def start(self) -> None:
        self._playwright = await async_playwright().start()
        for index in range(self.count):
            self._slots.append(await self._launch(index))
        log.info("browser pool started", browsers=self.count, executable=self.executable or "playwright",
                 sandbox=self.sandboxed)

    async def _launch(self, index: int) -> BrowserSlot:
        assert self._playwright is not None
        try:
            # chromium_sandbox=False makes Playwright add --no-sandbox; True launches with the sandbox.
            browser = await self._playwright.chromium.launch(
                executable_path=self.executable, headless=self.headless, args=CHROMIUM_ARGS,
                chromium_sandbox=self.sandboxed,
            )
        except Exception as exc:  # launch errors are environment failures, with the reason
            if self.sandboxed and self.sandbox_mode == "auto" and NO_SANDBOX_MESSAGE in str(exc):
                log.warning("Chromium's sandbox is unavailable here (user namespaces refused); running without it. "
                            "Set HALO_ENV_CHROMIUM_SANDBOX=on to refuse that, off to skip the attempt",
                            executable=self.executable or "playwright")
                self.sandboxed = False
                return await self._launch(index)
            hint = ""
            if self.sandboxed:
                hint = (" (the sandbox is on: it needs a non-root user and user namespaces, which Docker's and "
                        "Kubernetes' default seccomp profiles refuse; run with deploy/seccomp/chromium.json, or set "
                        "HALO_ENV_CHROMIUM_SANDBOX=off where another boundary contains the browser)")
            raise Unavailable(f"cannot launch Chromium ({self.executable or 'playwright build'}): {exc}{hint}") from exc
        slot = BrowserSlot(index=index, generation=next(self._generations), browser=browser)
        browser.on("disconnected", lambda _b: self._on_disconnected(slot))
        return slot

    def _on_disconnected(self, slot: BrowserSlot) -> None:
        if not slot.alive:
            return
        slot.alive = False
        if self._closing:
            return
        self.restarts += 1
        metrics.BROWSER_RESTARTS.set(self.restarts)  # dashboards see it at once, not at the next GetPoolStats
        log.warning("chromium died; replacing it", slot=slot.index, generation=slot.generation)
        asyncio.get_running_loop().create_task(self._replace(slot))

    async def _replace(self, dead: BrowserSlot) -> None:
        async with self._lock:
            if self._closing or self._slots[dead.index] is not dead:
                return
            try:
                self._slots[dead.index] = await self._launch(dead.index)
            except Unavailable as exc:
                log.error("could not replace chromium", error=str(exc))

    async def new_context(self, width: int, height: int) -> tuple[BrowserSlot, BrowserContext]:
        async with self._lock:
            for i, slot in enumerate(self._slots):
                if not slot.alive or not slot.browser.is_connected():
                    slot.alive = False
                    self._slots[i] = await self._launch(i)
            slot = min(self._slots, key=lambda s: s.contexts)
            slot.contexts += 1
        try:
            context = await slot.browser.new_context(
                viewport={"width": width, "height": height}, device_scale_factor=1,
                locale="en-US", timezone_id="America/Los_Angeles", reduced_motion="reduce",
            )
        except Exception as exc:
            slot.contexts -= 1
            raise Unavailable(f"cannot open a browser context: {exc}") from exc
        return slot, context

    def release(self, slot: BrowserSlot) -> None:
        slot.contexts = max(0, slot.contexts - 1)

    @property
    def alive_browsers(self) -> int:
        return sum(1 for s in self._slots if s.alive)

    @property
    def slots(self) -> list[BrowserSlot]:
        return list(self._slots)

    async def close(self) -> None:
        self._closing = True
        for slot in self._slots:
            slot.alive = False
            try:
                await slot.browser.close()
            except Exception:
                pass
        if self._playwright is not None:
            await self._playwright.stop()
            self._playwright = None
