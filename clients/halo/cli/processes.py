"""Ending a started process together with everything it started.

HALO starts its services (and a local vLLM) with `start_new_session=True`, so each runs as the
leader of its own process group. Some fork workers: vLLM's API server forks an EngineCore
process that holds the model and its KV cache. When the leader dies first (a failed start, a
crash, a kill -9), those workers stay behind in the group, reparented to init, and keep their
memory and ports. So a stop never asks only "is the leader alive?": it ends the whole group and
whatever the leader had started, whether the leader is still there or not.
"""

from __future__ import annotations

import os
import signal
import time


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes whose process group is `pgid`."""
    import psutil

    members = []
    for proc in psutil.process_iter(["pid", "status"]):
        try:
            if os.getpgid(proc.pid) == pgid and proc.info["status"] != psutil.STATUS_ZOMBIE:
                members.append(proc.pid)
        except (ProcessLookupError, PermissionError, psutil.Error):
            continue
    return members


def descendants(pid: int) -> list[int]:
    """Every live process below `pid` (children, their children, ...); [] once `pid` is gone."""
    import psutil

    try:
        return [p.pid for p in psutil.Process(pid).children(recursive=True) if p.status() != psutil.STATUS_ZOMBIE]
    except psutil.Error:
        return []


def alive(pids: list[int]) -> list[int]:
    import psutil

    left = []
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                left.append(pid)
        except psutil.Error:
            continue
    return left


def end_group(leader: int, grace_s: float = 20.0, reap=None) -> list[int]:
    """SIGTERM the process group led by `leader` (and any descendant that left it), wait up to
    `grace_s` for all of them to exit, SIGKILL what is left. `reap` (e.g. Popen.poll) is called while
    waiting so that our own child does not linger as a zombie. Returns the pids that needed SIGKILL."""
    targets = set(group_members(leader)) | set(descendants(leader))
    try:
        os.killpg(leader, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        pass
    for pid in targets:                     # those that moved to a group of their own
        try:
            os.kill(pid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            pass
    deadline = time.monotonic() + grace_s
    while True:
        if reap is not None:
            reap()
        left = alive(sorted(targets | set(group_members(leader))))
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        os.killpg(leader, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    deadline = time.monotonic() + 10.0      # SIGKILL is not instant: wait until they are gone (and reaped)
    while True:
        if reap is not None:
            reap()
        if not alive(sorted(targets | set(group_members(leader)))) or time.monotonic() > deadline:
            return left
        time.sleep(0.05)
