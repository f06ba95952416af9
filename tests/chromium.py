"""Chromium processes under a process (this test process by default): to find a browser to kill."""

from __future__ import annotations

import psutil


def chromium_processes(root: psutil.Process | None = None) -> list[psutil.Process]:
    """Chromium processes started under `root` (through Playwright's driver)."""
    found = []
    for proc in (root or psutil.Process()).children(recursive=True):
        try:
            if "chrom" in proc.name():
                found.append(proc)
        except psutil.NoSuchProcess:
            continue
    return found


def chromium_browser_pids(root: psutil.Process | None = None) -> set[int]:
    """Main Chromium processes (renderers and helpers carry --type=)."""
    pids = set()
    for proc in chromium_processes(root):
        try:
            if not any(a.startswith("--type=") for a in proc.cmdline()):
                pids.add(proc.pid)
        except psutil.NoSuchProcess:
            continue
    return pids


def chromium_all_pids(root: psutil.Process | None = None) -> set[int]:
    return {p.pid for p in chromium_processes(root)}
