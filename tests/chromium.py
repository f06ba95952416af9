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
    """Main Chromium processes: those Playwright's driver started, not one Chromium started.

    Not "no --type= flag": a helper the browser has just forked carries the browser's own command
    line until it execs, and an exited one not reaped yet has none."""
    pids = set()
    for proc in chromium_processes(root):
        try:
            parent = proc.parent()
            if proc.status() == psutil.STATUS_ZOMBIE or (parent is not None and "chrom" in parent.name()):
                continue
            cmdline = proc.cmdline()
        except psutil.NoSuchProcess:
            continue
        if cmdline and not any(a.startswith("--type=") for a in cmdline):
            pids.add(proc.pid)
    return pids


def chromium_all_pids(root: psutil.Process | None = None) -> set[int]:
    return {p.pid for p in chromium_processes(root)}


def chromium_renderers(root: psutil.Process) -> list[psutil.Process]:
    """The renderer processes under `root` (one or more per page): what an OOM killer takes first."""
    found = []
    for proc in chromium_processes(root):
        try:
            if "--type=renderer" in proc.cmdline():
                found.append(proc)
        except psutil.NoSuchProcess:
            continue
    return found
