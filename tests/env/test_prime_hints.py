"""PrimeSessions: a client announces the sessions of a key it will create soon and the env service
prepares them ahead. Over real gRPC on loopback, real Chromium, a real sites server: the next
creates of that key claim primed sessions (the service's stats say so), a hint never costs a
create of another key its slot, unclaimed primed sessions are closed after the hint's TTL, bad
hints are INVALID_ARGUMENT, and a trainer facing an env without the RPC stops hinting quietly."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import grpc
import pytest

from halo.client.env import EnvClient, observation_options
from halo.env.server import EnvServicer
from halo.env.session import SessionManager
from halo.errors import InvalidArgument, NotFound
from halo.rollout.episode import RolloutConfig, episode_observation
from halo.rollout.priming import SessionPrimer
from halo.v1 import env_pb2_grpc as rpc
from tests.env.test_warm_contexts import _until, manager_on_own_sites

TASK = "playground-signup"
TEXT_ONLY = observation_options(screenshot=False)


@asynccontextmanager
async def served(manager: SessionManager, servicer: type[EnvServicer] = EnvServicer) -> AsyncIterator[EnvClient]:
    """`manager` behind a real gRPC server on loopback, and a client of it."""
    server = grpc.aio.server()
    rpc.add_EnvServiceServicer_to_server(servicer(manager), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        async with EnvClient(f"127.0.0.1:{port}", timeout_s=60, keepalive_s=0) as client:
            yield client
    finally:
        await server.stop(0)


@pytest.fixture
async def hinted(stack):
    """(manager, client): no warm contexts, no recurring priming (only hints prime), a pool of 4."""
    async with manager_on_own_sites(stack, warm_contexts=0) as (_, manager), served(manager) as client:
        yield manager, client


async def test_a_hint_makes_the_next_creates_of_its_key_claim_primed_sessions(hinted):
    manager, env = hinted
    assert await env.prime_sessions(TASK, 2, seed=7, observation=TEXT_ONLY, run_id="run-h") == 2
    await _until(lambda: manager.primed.ready == 2)
    assert (await env.pool_stats()).primed_sessions == 2
    # another seed, run or observation is another key: it never gets them
    other = await env.create_session(TASK, seed=8, observation=TEXT_ONLY, run_id="run-h")
    stats = await env.pool_stats()
    assert stats.primed_starts == 0 and stats.primed_sessions == 2
    first = await env.create_session(TASK, seed=7, observation=TEXT_ONLY, run_id="run-h")
    second = await env.create_session(TASK, seed=7, observation=TEXT_ONLY, run_id="run-h")
    stats = await env.pool_stats()
    assert stats.primed_starts == 2 and stats.primed_sessions == 0 and stats.sessions_created == 3
    assert [t.primed for t in list(manager.create_timings)[-3:]] == [False, True, True]
    assert first.observation.goal and first.session_id != second.session_id
    # the hint announced two creates: a third is an ordinary one, and nothing is primed for it after
    third = await env.create_session(TASK, seed=7, observation=TEXT_ONLY, run_id="run-h")
    assert not manager.create_timings[-1].primed and (await env.pool_stats()).primed_starts == 2
    await asyncio.sleep(1.0)
    assert manager.primed.ready == 0 and not manager.primed._wants
    for created in (other, first, second, third):
        assert await env.close_session(created.session_id)


async def test_a_hint_never_costs_a_create_of_another_key_its_slot(stack):
    async with manager_on_own_sites(stack, warm_contexts=0, pool_size=2, acquire_timeout_s=1.0) as (_, manager), \
            served(manager) as env:
        assert await env.prime_sessions(TASK, 2, seed=1, observation=TEXT_ONLY) == 2
        await _until(lambda: manager.primed.ready == 2)
        assert manager._slots.locked(), "primed sessions hold the pool's slots"
        # the pool is full of primed sessions of key A: creates of key B evict them instead of waiting
        sessions = [await env.create_session(TASK, seed=2, observation=TEXT_ONLY) for _ in range(2)]
        stats = await env.pool_stats()
        assert stats.active_sessions == 2 and stats.primed_starts == 0 and stats.primed_unclaimed == 2
        assert stats.primed_sessions == 0
        # and with the pool full of sessions, the hint is taken but nothing is primed (no slot is free)
        assert await env.prime_sessions(TASK, 2, seed=3, observation=TEXT_ONLY) == 2
        await asyncio.sleep(1.0)
        assert manager.primed.ready == 0 and manager.active == 2
        for created in sessions:
            await env.close_session(created.session_id)
        await _until(lambda: manager.primed.ready == 2)   # slots free again: the hint is served


async def test_unclaimed_primed_sessions_are_closed_after_the_hints_ttl(hinted):
    manager, env = hinted
    assert await env.prime_sessions(TASK, 2, seed=4, observation=TEXT_ONLY, ttl_s=10.0) == 2
    await _until(lambda: manager.primed.ready >= 1)
    pages = [p.session.page for p in manager.primed._ready]
    await _until(lambda: manager.primed.ready == 0 and not manager.primed._preparing, timeout_s=40)
    stats = await env.pool_stats()
    assert stats.primed_unclaimed >= len(pages) and stats.primed_starts == 0 and stats.active_sessions == 0
    await _until(lambda: all(page.is_closed() for page in pages), timeout_s=10)
    assert manager._slots._value == manager.settings.pool_size, "an expired primed session kept its slot"
    assert not manager.primed._wants
    # the expired hint's key is an ordinary create now
    created = await env.create_session(TASK, seed=4, observation=TEXT_ONLY)
    assert not manager.create_timings[-1].primed
    await env.close_session(created.session_id)


async def test_bad_hints_are_invalid_argument_and_never_grow_the_reply(hinted):
    manager, env = hinted
    for bad in (dict(task_id="", count=1), dict(task_id=TASK, count=0), dict(task_id=TASK, count=5000),
                dict(task_id=TASK, count=1, ttl_s=601.0)):
        with pytest.raises(InvalidArgument):
            await env.prime_sessions(bad.pop("task_id"), bad.pop("count"), **bad)
    with pytest.raises(InvalidArgument, match="jpeg_quality"):
        await env.prime_sessions(TASK, 1, observation=observation_options("jpeg", jpeg_quality=101))
    with pytest.raises(NotFound) as unknown:
        await env.prime_sessions("x" * 100_000, 1)
    assert len(str(unknown.value)) < 5_000
    assert manager.primed.ready == 0 and not manager.primed._wants


async def test_a_trainer_stops_hinting_quietly_when_the_env_does_not_serve_the_rpc(hinted):
    manager, _ = hinted

    class EnvBeforeHints(EnvServicer):   # an env service built before PrimeSessions: the generated UNIMPLEMENTED
        PrimeSessions = rpc.EnvServiceServicer.PrimeSessions

    config = RolloutConfig(max_steps=3, screenshots=False, run_id="run-old")
    async with served(manager, EnvBeforeHints) as old_env:
        primer = SessionPrimer(old_env, config)
        primer.announce([(TASK, 1), (TASK, 2)], 4)
        await asyncio.gather(*primer._pending)
        assert not primer.enabled and primer.sent == 0
        primer.announce([(TASK, 3)], 4)
        assert not primer._pending, "hints went on after UNIMPLEMENTED"
    async with served(manager) as env:   # the same hints to an env that serves them: the episode's key
        primer = SessionPrimer(env, config)
        primer.announce([(TASK, 5), (TASK, 5)], 1)
        await asyncio.gather(*primer._pending)
        assert primer.enabled and primer.sent == 1 and primer.accepted == 2
        await _until(lambda: manager.primed.ready == 2)
        created = await env.create_session(TASK, seed=5, observation=episode_observation(config), run_id="run-old")
        assert manager.create_timings[-1].primed
        await env.close_session(created.session_id)
