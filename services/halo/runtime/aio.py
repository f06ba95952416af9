"""asyncio helpers that keep a cancelled RPC cancelled.

Python 3.11's `asyncio.wait_for` swallows a cancellation that arrives just as the awaited call
completes (bpo-42130, fixed in 3.12): a client whose deadline expired while it waited for a pool
slot got the slot anyway, and the server went on to build a session nobody would ever receive,
holding the slot until the idle TTL. `asyncio.timeout` cancels the waiting task itself and tells
its own expiry apart from a cancellation from outside, so the latter always propagates.
"""

from __future__ import annotations

import asyncio


async def acquire_within(semaphore: asyncio.Semaphore, timeout_s: float) -> None:
    """Take one slot of `semaphore`, or raise TimeoutError after `timeout_s` (<= 0: only a slot free now)."""
    if timeout_s <= 0:
        if semaphore.locked():
            raise TimeoutError
        await semaphore.acquire()   # free: returns at once
        return
    async with asyncio.timeout(timeout_s):
        # Semaphore.acquire gives back a slot it was handed if it is cancelled after all
        await semaphore.acquire()
