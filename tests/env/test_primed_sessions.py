"""Sessions primed ahead for a recurring (task, seed, run, observation): a create that matches is
answered without page work, and still gets a context of its own, set up for exactly its key (no
cookie or site state of another session or run), and a sites server restarted after the priming
is an environment failure of that session, never a task outcome."""

from __future__ import annotations

import json

import pytest

from halo.agent import actions as A
from halo.errors import Unavailable
from tests.env.test_episode_integrity import _bid
from tests.env.test_warm_contexts import TEXT_ONLY, _until, manager_on_own_sites

PRIMED = 2


@pytest.fixture
async def primed_manager(stack):
    """(own sites server, a SessionManager priming PRIMED sessions, no warm contexts, on the stack's browsers)."""
    async with manager_on_own_sites(stack, warm_contexts=0, primed_sessions=PRIMED) as running:
        yield running


async def _sid(session) -> str:
    (sid,) = [c["value"] for c in await session.context.cookies() if c["name"] == "halo_sid"]
    return sid


async def _recurring(manager, task="playground-signup", run_id="run-a"):
    """Two creates one after the other: the second makes the key recurring, so priming starts."""
    for _ in range(2):
        session, _ = await manager.create(task, run_id=run_id, options=TEXT_ONLY)
        await manager.close_session(session.id)


async def test_a_primed_session_is_its_own_and_shows_only_its_tasks_fresh_state(primed_manager):
    _, manager = primed_manager
    await _recurring(manager)
    await _until(lambda: manager.primed.ready == PRIMED)
    contexts, sids = set(), set()
    first, obs = await manager.create("playground-signup", run_id="run-a", options=TEXT_ONLY)
    assert manager.create_timings[-1].primed and manager.created_primed == 1
    assert first.run_id == "run-a" and first.id and obs.goal == first.task.goal and obs.step_index == 0
    # the agent changes the first session's site state ...
    out = await manager.step(first.id, A.ClickElement(_bid(obs, "button", "Sign up")), TEXT_ONLY)
    assert out.action_ok and not out.env_failure
    changed = json.loads((await manager.state(first.id)).state_json)
    second, _ = await manager.create("playground-signup", run_id="run-a", options=TEXT_ONLY)
    assert manager.create_timings[-1].primed
    # ... the second primed session has its own context, cookie and the task's fresh state
    for session in (first, second):
        assert session.context not in contexts
        contexts.add(session.context)
        sid = await _sid(session)
        assert sid not in sids, "a primed session carries another session's site cookie"
        sids.add(sid)
    fresh = json.loads((await manager.state(second.id)).state_json)
    assert fresh["task_id"] == "playground-signup" and fresh != changed
    # another run (or seed, or task) never gets this run's primed sessions
    other, _ = await manager.create("playground-signup", run_id="run-b", options=TEXT_ONLY)
    assert not manager.create_timings[-1].primed and other.run_id == "run-b"
    for session in (first, second, other):
        await manager.close_session(session.id)
    assert manager.created_primed == 2


async def test_primed_sessions_of_a_key_nobody_asks_for_any_more_are_closed_not_retargeted(primed_manager):
    _, manager = primed_manager
    await _recurring(manager, run_id="run-a")
    await _until(lambda: manager.primed.ready == PRIMED)
    old = [p.session.context for p in manager.primed._ready]
    await _recurring(manager, run_id="run-b")   # the wanted key moves to run-b: its creates never get run-a's
    assert all(not t.primed for t in list(manager.create_timings)[-2:])
    await _until(lambda: manager.primed.ready == PRIMED and all(p.key.run_id == "run-b" for p in manager.primed._ready))
    assert manager.primed.disposed == PRIMED   # run-a's, closed unused (one was found by run-b's create: refused)
    assert not {p.session.context for p in manager.primed._ready} & set(old)
    session, _ = await manager.create("playground-signup", run_id="run-b", options=TEXT_ONLY)
    assert manager.create_timings[-1].primed and session.run_id == "run-b"
    await manager.close_session(session.id)


async def test_a_sites_server_restart_after_priming_is_an_env_failure_of_the_primed_session(primed_manager):
    sites, manager = primed_manager
    await _recurring(manager)
    await _until(lambda: manager.primed.ready == PRIMED)
    sites.stop()
    sites.start()   # in memory: the primed sessions' states are gone
    session, _ = await manager.create("playground-signup", run_id="run-a", options=TEXT_ONLY)
    assert manager.create_timings[-1].primed
    with pytest.raises(Unavailable, match="no longer holds this session's state"):
        await manager.state(session.id)
    out = await manager.step(session.id, A.Noop(), TEXT_ONLY)
    assert out.env_failure and "no longer holds this session's state" in out.env_failure_reason


async def test_a_create_of_another_key_gets_the_slot_of_a_primed_session_still_being_prepared(primed_manager):
    """Pool 4: two sessions taken primed, the pool re-primes two more on the last two slots. A create
    of another key arriving meanwhile cancels a preparation for its slot; before, the preparations
    went on, became ready and kept both slots while the create timed out (RESOURCE_EXHAUSTED)."""
    _, manager = primed_manager
    await _recurring(manager)
    await _until(lambda: manager.primed.ready == PRIMED)
    taken = [(await manager.create("playground-signup", run_id="run-a", options=TEXT_ONLY))[0] for _ in range(PRIMED)]
    await _until(lambda: len(manager.primed._preparing) == PRIMED, timeout_s=10)   # re-priming holds the free slots
    other, _ = await manager.create("playground-signup", run_id="run-b", options=TEXT_ONLY)
    assert not manager.create_timings[-1].primed and other.run_id == "run-b"
    for session in [*taken, other]:
        await manager.close_session(session.id)
