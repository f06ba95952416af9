"""Warm browser contexts (opened ahead of CreateSession): each goes to one session only, pool
stats count them, and a warm start keeps every guarantee of a cold one (a sites server that is
down is still an environment failure at CreateSession)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from halo.env.config import EnvSettings
from halo.env.observe import ObserveOptions
from halo.env.session import SessionManager
from halo.errors import Unavailable
from halo.tasks.registry import default_registry
from tests.env.test_episode_integrity import OwnSites

TEXT_ONLY = ObserveOptions(screenshot=False)
WARM = 2


async def _until(predicate, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "the warm pool did not fill in time"
        await asyncio.sleep(0.05)


@asynccontextmanager
async def manager_on_own_sites(stack, **settings) -> AsyncIterator[tuple[OwnSites, SessionManager]]:
    """(own sites server, a SessionManager with these EnvSettings on the stack's browsers), its warm
    contexts and primed sessions running. Not `manager.start()/close()`: the pool is the stack's."""
    sites = OwnSites()
    sites.start()
    env_settings = EnvSettings(**{"port": 0, "metrics_port": -1, "sites_url": sites.url, "pool_size": 4, **settings})
    manager = SessionManager(env_settings, default_registry(), pool=stack.env_manager.pool)
    manager.warm.start()
    manager.primed.start()
    try:
        yield sites, manager
    finally:
        for session_id in list(manager._sessions):
            await manager.close_session(session_id)
        await manager.primed.close()
        await manager.warm.close()
        sites.stop()


@pytest.fixture
async def warm_manager(stack):
    """(own sites server, a SessionManager with WARM warm contexts on the stack's browsers)."""
    async with manager_on_own_sites(stack, warm_contexts=WARM) as running:
        yield running


async def test_a_warm_context_is_never_handed_to_a_second_session(warm_manager):
    _, manager = warm_manager
    contexts, sids = set(), set()
    for _ in range(2 * WARM + 2):   # more sessions than warm contexts: the pool refills in between
        await _until(lambda: manager.warm.ready == WARM)
        session, _ = await manager.create("playground-signup", options=TEXT_ONLY)
        assert session.context not in contexts, "a context went to a second session"
        contexts.add(session.context)
        cookies = [c["value"] for c in await session.context.cookies() if c["name"] == "halo_sid"]
        assert len(cookies) == 1 and cookies[0] not in sids, "the new session carries an earlier session's site cookie"
        sids.add(cookies[0])
        await manager.close_session(session.id)
        assert all(ctx not in {r.context for r in manager.warm._ready} for ctx in contexts)   # closed, not returned
    assert manager.warm.taken == 2 * WARM + 2 and manager.stats()["warm_starts"] == manager.warm.taken


async def test_pool_stats_count_warm_contexts_and_how_sessions_started(warm_manager):
    _, manager = warm_manager
    await _until(lambda: manager.warm.ready == WARM)
    stats = manager.stats()
    assert stats["warm_contexts"] == WARM and stats["warm_starts"] == 0 and stats["cold_starts"] == 0
    # the warm contexts are real contexts on the pool's browsers, counted where sessions are placed
    assert sum(slot.contexts for slot in manager.pool.slots) >= WARM
    sessions = [(await manager.create("playground-signup", options=TEXT_ONLY))[0] for _ in range(WARM + 1)]
    stats = manager.stats()
    # WARM began on warm contexts; the refill waits while a create is setting up, so the last
    # one found none ready (unless a refill slipped in between, which makes it warm too)
    assert stats["warm_starts"] + stats["cold_starts"] == WARM + 1 and stats["warm_starts"] >= WARM
    for session in sessions:
        await manager.close_session(session.id)
    await _until(lambda: manager.warm.ready == WARM)
    assert manager.stats()["warm_contexts"] == WARM


async def test_a_warm_start_still_refuses_when_the_sites_server_is_down(warm_manager):
    sites, manager = warm_manager
    await _until(lambda: manager.warm.ready == WARM)
    sites.stop()
    with pytest.raises(Unavailable, match="could not set up task"):
        await manager.create("playground-signup", options=TEXT_ONLY)
    assert manager.active == 0 and manager.warm.taken == 1
    assert manager._slots._value == manager.settings.pool_size, "the failed create kept its slot"


async def test_a_warm_context_whose_browser_died_is_not_handed_out(warm_manager):
    _, manager = warm_manager
    await _until(lambda: manager.warm.ready == WARM)
    dead = manager.warm._ready[0]
    dead.slot.alive = False           # what the pool marks when that Chromium disconnects
    try:
        ready = manager.warm.take()
        assert ready is not dead and manager.warm.discarded >= 1
    finally:
        dead.slot.alive = True
    if ready is not None:   # a live one behind it (another slot's, or the same browser's in this test)
        await ready.context.close()
        manager.pool.release(ready.slot)
