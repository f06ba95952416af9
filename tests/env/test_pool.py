"""Pool behaviour: capacity, idle reaping, browser crashes, graceful shutdown, metrics, no leaks."""

from __future__ import annotations

import asyncio
import os
import signal

import httpx
import pytest

from halo.agent import actions as A
from halo.client.env import EnvClient
from halo.errors import NotFound, ResourceExhausted, Unavailable
from halo.cli.stack import LocalStack
from halo.v1 import env_pb2 as pb
from tests.chromium import chromium_all_pids, chromium_browser_pids


@pytest.fixture
async def small_stack():
    before = chromium_browser_pids()
    async with LocalStack(env_overrides={"pool_size": 2, "acquire_timeout_s": 0.3, "session_ttl_s": 300}) as stack:
        stack.own_browser_pids = chromium_browser_pids() - before
        async with EnvClient(stack.env_target) as client:
            stack.client = client
            yield stack


async def test_full_pool_is_resource_exhausted_then_frees(small_stack):
    env = small_stack.client
    a = await env.create_session("playground-signup")
    b = await env.create_session("playground-signup")
    with pytest.raises(ResourceExhausted, match="all 2 sessions are in use"):
        await env.create_session("playground-signup")
    stats = await env.pool_stats()
    assert stats.active_sessions == 2 and stats.capacity == 2
    # a waiting creation gets the slot that a close frees within the wait budget (a budget that a
    # close on a loaded machine fits in: the point is that the waiter is woken, not how fast)
    small_stack.env_manager.settings.acquire_timeout_s = 30
    waiter = asyncio.create_task(env.create_session("playground-signup"))
    await asyncio.sleep(0.05)
    await env.close_session(a.session_id)
    c = await waiter
    for sid in (b.session_id, c.session_id):
        await env.close_session(sid)
    assert (await env.pool_stats()).active_sessions == 0


async def test_idle_sessions_are_reaped(small_stack):
    env, manager = small_stack.client, small_stack.env_manager
    created = await env.create_session("playground-signup")
    manager.settings.session_ttl_s = 0.2
    try:
        await asyncio.sleep(0.3)
        assert await manager.reap_idle() == 1
    finally:
        manager.settings.session_ttl_s = 300
    with pytest.raises(NotFound, match="reaped"):
        await env.step(created.session_id, A.Noop())
    assert (await env.pool_stats()).sessions_reaped == 1


async def test_killed_chromium_is_an_env_failure_and_the_pool_recovers(small_stack):
    env = small_stack.client
    created = await env.create_session("playground-signup")
    assert len(small_stack.own_browser_pids) == 1
    (pid,) = small_stack.own_browser_pids
    os.kill(pid, signal.SIGKILL)
    await asyncio.sleep(0.5)
    result = await env.step(created.session_id, A.Noop())
    assert result.env_failure and result.done
    assert result.termination == pb.TERMINATION_ENV_FAILURE
    assert "died" in result.env_failure_reason or "closed" in result.env_failure_reason
    with pytest.raises(NotFound):
        await env.step(created.session_id, A.Noop())  # the failed session was closed
    stats = await env.pool_stats()
    assert stats.browser_restarts == 1 and stats.env_failures == 1 and stats.active_sessions == 0
    # the replacement browser serves new sessions
    fresh = await env.create_session("playground-signup")
    button = next(e for e in fresh.observation.elements if e.name == "Sign up")
    ok = await env.step(fresh.session_id, A.ClickElement(button.bid))
    assert ok.action_ok and not ok.env_failure
    await env.close_session(fresh.session_id)


async def test_a_browser_that_dies_under_a_new_sessions_first_observation_is_unavailable(small_stack, monkeypatch):
    """A Chromium killed while CreateSession takes its first observation is UNAVAILABLE (an
    environment failure that costs one episode), never UNKNOWN (a raw Playwright error, which
    would fail the whole training run)."""
    manager = small_stack.env_manager
    observe = manager._observe
    (pid,) = small_stack.own_browser_pids

    async def observe_after_the_kill(session, options):
        os.kill(pid, signal.SIGKILL)
        await asyncio.sleep(0.5)
        return await observe(session, options)

    monkeypatch.setattr(manager, "_observe", observe_after_the_kill)
    with pytest.raises(Unavailable, match="could not observe the new session"):
        await small_stack.client.create_session("playground-signup")
    monkeypatch.undo()
    assert (await small_stack.client.pool_stats()).active_sessions == 0


async def test_metrics_endpoint_counts_steps(small_stack):
    env = small_stack.client
    created = await env.create_session("playground-signup")
    await env.step(created.session_id, A.Noop())
    await env.close_session(created.session_id)
    port = small_stack.env.metrics_port
    async with httpx.AsyncClient() as http:
        body = (await http.get(f"http://127.0.0.1:{port}/metrics")).text
    assert 'halo_env_steps_total{action="noop",outcome="ok",site="playground"}' in body
    assert "halo_env_step_seconds_bucket" in body and "halo_env_sessions_active" in body


async def _warm_pool_full(manager, timeout_s: float = 60.0) -> None:
    """Wait for the background refill of the warm contexts (opened ahead of CreateSession)."""
    for _ in range(int(timeout_s / 0.05)):
        if manager.warm.ready == manager.warm.size:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"the warm pool holds {manager.warm.ready} of {manager.warm.size} contexts")


async def test_create_close_cycles_leak_nothing(small_stack):
    env, manager = small_stack.client, small_stack.env_manager
    warm = await env.create_session("playground-signup")
    await env.close_session(warm.session_id)
    await _warm_pool_full(manager)
    await asyncio.sleep(0.3)
    baseline = len(chromium_all_pids())
    for _ in range(15):
        created = await env.create_session("playground-signup")
        await env.step(created.session_id, A.Scroll(0, 100))
        await env.close_session(created.session_id)
    await asyncio.sleep(0.5)
    await _warm_pool_full(manager)
    stats = await env.pool_stats()
    assert stats.active_sessions == 0
    # what stays open is the warm contexts the pool reports, opened for the next sessions, never used
    assert sum(slot.contexts for slot in manager.pool.slots) == stats.warm_contexts == manager.warm.ready
    assert sum(len(slot.browser.contexts) for slot in manager.pool.slots) == stats.warm_contexts
    assert len(chromium_all_pids()) <= baseline + 1  # renderers are gone with their contexts


async def test_a_create_cancelled_just_as_a_slot_frees_leaves_no_session(small_stack):
    """A client whose deadline expires while it waits for a full pool: the cancellation reaches the
    server's create just as a slot frees. With asyncio.wait_for (Python 3.11) it was swallowed for
    some interleavings, and a session nobody would receive held the slot until the idle TTL."""
    manager = small_stack.env_manager
    for turns_before_cancel in range(4):
        for _ in range(manager.settings.pool_size):     # the pool is full
            await manager._slots.acquire()
        create = asyncio.create_task(manager.create("playground-signup"))
        await asyncio.sleep(0.05)                       # waiting for a slot (acquire timeout 0.3 s)
        manager._slots.release()
        for _ in range(turns_before_cancel):
            await asyncio.sleep(0)
        create.cancel()
        with pytest.raises(asyncio.CancelledError):
            session, _ = await create
            await manager.close_session(session.id)     # the leak: keep the pool usable for the next turn
        assert manager.active == 0, f"turn {turns_before_cancel}: the cancelled create registered a session"
        for _ in range(manager.settings.pool_size - 1):
            manager._slots.release()
        assert manager._slots._value == manager.settings.pool_size, "a slot was lost"


async def test_graceful_shutdown_drains_in_flight_steps_and_closes_browsers():
    before = chromium_browser_pids()
    stack = await LocalStack(env_overrides={"pool_size": 2}).__aenter__()
    own = chromium_browser_pids() - before
    try:
        env = EnvClient(stack.env_target)
        created = await env.create_session("playground-signup")
        slow_step = asyncio.create_task(env.step(created.session_id, A.Wait(1500)))
        await asyncio.sleep(0.3)
        await stack.env.stop(grace=10)
        result = await slow_step  # finished during the grace period, not cut off
        assert result.action_ok
        with pytest.raises(Unavailable):
            await env.get_task("playground-signup")
        await env.close()
    finally:
        await stack.__aexit__(None, None, None)
    await asyncio.sleep(0.5)
    assert not (own & chromium_browser_pids()), "Chromium outlived the service"
