"""Step (and CreateSession) return the site's state when asked: no GetState per step.

What the reward service needs of every transition is the replica's state JSON; a client that asks
with `include_state` gets it in the reply, the same text GetState would give, and an unreadable
state is an environment failure of that step, never a task outcome.
"""

from __future__ import annotations

import json

from halo.agent import actions as A
from halo.env.config import EnvSettings
from halo.env.session import SessionManager, Termination
from halo.tasks.registry import default_registry
from halo.v1 import env_pb2 as pb
from tests.env.test_episode_integrity import TEXT_ONLY, OwnSites


def _bid(obs, role: str, name: str) -> str:
    return next(e.bid for e in obs.elements if e.role == role and e.name == name)


async def test_create_and_step_return_the_state_get_state_would(env):
    created = await env.create_session("playground-signup", include_state=True)
    sid = created.session_id
    try:
        assert created.state_json == (await env.get_state(sid)).state_json
        assert json.loads(created.state_json)["initialfinaldiff"]["updated"] == {}
        r = await env.step(sid, A.ClickElement(_bid(created.observation, "button", "Sign up")), include_state=True)
        assert r.action_ok and not r.done
        assert r.state_json == (await env.get_state(sid)).state_json
        assert json.loads(r.state_json)["initialfinaldiff"]["updated"]["signup"]["clicked"] is True
        assert r.final_message == ""
        quiet = await env.step(sid, A.Noop())          # not asked: no state read, none sent
        assert quiet.action_ok and quiet.state_json == ""
        last = await env.step(sid, A.SendMessage("signed up"), include_state=True)
        assert last.done and last.termination == pb.TERMINATION_MESSAGE_SENT
        state = await env.get_state(sid)
        assert (last.state_json, last.final_message) == (state.state_json, state.final_message) == (state.state_json, "signed up")
    finally:
        await env.close_session(sid)


async def test_an_unreadable_state_fails_the_step_as_an_env_failure(stack):
    """The sites server lost the session's state (restarted in memory): a Step that asks for the
    state ends in an environment failure, and the session is closed."""
    sites = OwnSites()
    sites.start()
    manager = SessionManager(EnvSettings(port=0, metrics_port=-1, sites_url=sites.url, pool_size=2), default_registry(),
                             pool=stack.env_manager.pool)
    try:
        session, obs = await manager.create("playground-signup", options=TEXT_ONLY)
        out = await manager.step(session.id, A.Noop(), TEXT_ONLY, include_state=True)
        assert not out.env_failure and json.loads(out.state_json)["task_id"] == "playground-signup"
        sites.stop()
        sites.start()   # in memory: every state is gone
        out = await manager.step(session.id, A.Noop(), TEXT_ONLY, include_state=True)
        assert out.env_failure and out.termination is Termination.ENV_FAILURE, out
        assert "no longer holds this session's state" in out.env_failure_reason
        assert session.id not in manager._sessions
    finally:
        for session_id in list(manager._sessions):
            await manager.close_session(session_id)
        sites.stop()
