"""An infrastructure fault under an episode is an environment failure, never a task outcome, and
the grader is out of the agent's reach.

The sites server here is the test's own (it is stopped and replaced mid-episode); the sessions
run in the shared stack's Chromium through a second SessionManager pointed at it.
"""

from __future__ import annotations

import asyncio
import http.server
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request

import pytest

from halo.agent import actions as A
from halo.env.config import EnvSettings
from halo.env.observe import ObserveOptions
from halo.env.session import SessionManager, Termination
from halo.env.urlpolicy import UrlPolicy
from halo.errors import Unavailable
from halo.sites.server import BackgroundSitesServer, SitesSettings
from halo.tasks.registry import default_registry

TEXT_ONLY = ObserveOptions(screenshot=False)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Answer503(http.server.BaseHTTPRequestHandler):
    """What a proxy in front of a restarting sites server answers: 503 for everything."""

    def _reply(self) -> None:
        body = b"<html><body>upstream unavailable</body></html>"
        self.send_response(503)
        self.send_header("content-type", "text/html")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _reply

    def log_message(self, *args) -> None:
        pass


class OwnSites:
    """A sites server on a fixed port that a test can stop, replace with a 503 answerer, or restart."""

    def __init__(self, data_dir: str = "") -> None:
        self.data_dir = data_dir          # "": in memory, every state is lost when it stops
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.server: BackgroundSitesServer | None = None
        self.http: http.server.ThreadingHTTPServer | None = None

    def start(self) -> None:
        self.server = BackgroundSitesServer(SitesSettings(port=self.port, data_dir=self.data_dir)).start()

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server = None
        if self.http is not None:
            self.http.shutdown()
            self.http.server_close()
            self.http = None

    def answer_503(self) -> None:
        self.stop()
        http.server.ThreadingHTTPServer.allow_reuse_address = True
        self.http = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), _Answer503)
        threading.Thread(target=self.http.serve_forever, daemon=True).start()


@pytest.fixture
async def own(stack):
    """(sites server of this test, a SessionManager on it sharing the stack's browsers)."""
    sites = OwnSites()
    sites.start()
    settings = EnvSettings(port=0, metrics_port=-1, sites_url=sites.url, pool_size=4)
    manager = SessionManager(settings, default_registry(), pool=stack.env_manager.pool)
    try:
        yield sites, manager
    finally:
        for session_id in list(manager._sessions):
            await manager.close_session(session_id)
        sites.stop()


def _bid(obs, role: str, name: str) -> str:
    return next(e.bid for e in obs.elements if e.role == role and e.name == name)


async def _create(manager: SessionManager, task_id: str = "playground-signup"):
    return await manager.create(task_id, options=TEXT_ONLY)


async def test_a_click_while_the_sites_server_is_down_is_an_env_failure(own):
    sites, manager = own
    session, obs = await _create(manager)
    sites.stop()
    out = await manager.step(session.id, A.ClickElement(_bid(obs, "button", "Sign up")), TEXT_ONLY)
    # was: action_ok=True, env_failure=False and an observation of chrome-error://chromewebdata/
    assert out.env_failure and out.done and out.termination is Termination.ENV_FAILURE, out
    assert "did not answer" in out.env_failure_reason and "ERR_CONNECTION_REFUSED" in out.env_failure_reason
    assert manager.env_failures == 1 and session.id not in manager._sessions   # closed, slot freed


async def test_the_env_is_not_ready_while_its_sites_server_does_not_answer(own):
    """What the env service's health status follows (so a trainer waits instead of rolling its step
    out again into the same outage)."""
    sites, manager = own
    assert await manager.readiness() == ""
    sites.stop()
    assert "does not answer" in await manager.readiness()
    sites.answer_503()
    assert "HTTP 503" in await manager.readiness()
    sites.stop()
    sites.start()
    assert await manager.readiness() == ""


async def test_a_goto_while_the_sites_server_is_down_is_an_env_failure(own):
    sites, manager = own
    session, obs = await _create(manager)
    sites.stop()
    out = await manager.step(session.id, A.Goto(f"{sites.url}/playground/page2"), TEXT_ONLY)
    assert out.env_failure and "ERR_CONNECTION_REFUSED" in out.env_failure_reason, out   # was an action error


async def test_a_5xx_of_the_sites_server_is_an_env_failure(own):
    sites, manager = own
    session, obs = await _create(manager, "playground-finish")
    sites.answer_503()
    out = await manager.step(session.id, A.ClickElement(_bid(obs, "link", "Go to page 2")), TEXT_ONLY)
    assert out.env_failure and "HTTP 503" in out.env_failure_reason, out


async def test_a_state_that_no_longer_belongs_to_the_session_is_an_env_failure(own):
    """The sites server restarted without the session's state (no data directory): it serves a
    fresh default state, which agisdk scores 0. The env notices and says so."""
    sites, manager = own
    session, obs = await _create(manager)
    out = await manager.step(session.id, A.ClickElement(_bid(obs, "button", "Sign up")), TEXT_ONLY)
    assert out.action_ok and not out.env_failure
    assert json.loads((await manager.state(session.id)).state_json)["task_id"] == "playground-signup"
    sites.stop()
    sites.start()   # in memory: every state is gone
    with pytest.raises(Unavailable, match="no longer holds this session's state"):
        await manager.state(session.id)
    out = await manager.step(session.id, A.Noop(), TEXT_ONLY)   # the session is over: env failure, not a step
    assert out.env_failure and "no longer holds this session's state" in out.env_failure_reason


async def test_a_page_served_from_another_state_is_an_env_failure(own):
    sites, manager = own
    session, obs = await _create(manager, "playground-finish")
    sites.stop()
    sites.start()
    out = await manager.step(session.id, A.ClickElement(_bid(obs, "link", "Go to page 2")), TEXT_ONLY)
    assert out.env_failure and "no longer holds this session's state" in out.env_failure_reason, out


async def test_the_grader_is_out_of_the_agents_reach(own):
    sites, manager = own
    session, obs = await _create(manager)
    base = f"{sites.url}/playground"
    refused = {
        f"{base}/finish": "control route of the grader",
        f"{base}//finish": "control route of the grader",
        f"{base}/%66inish": "control route of the grader",
        f"{base}/config?task_id=playground-name": "control route of the grader",
        f"{base}/__halo/snapshot": "control route of the grader",
        f"{sites.url}/__halo/health": "control route of the grader",
        f"{sites.url}/gomail/": "outside this task's site /playground/",
        f"{base}/../gomail/": "outside this task's site /playground/",
        f"{sites.url}/": "outside this task's site",
    }
    for url, why in refused.items():
        out = await manager.step(session.id, A.Goto(url), TEXT_ONLY)
        assert not out.action_ok and not out.env_failure, (url, out)
        assert why in out.action_error, (url, out.action_error)
        assert "/finish" not in out.observation.url and "initialfinaldiff" not in out.observation.axtree
    # the page's own scripts cannot read it either; a link to another site's replica is refused
    page = session.page
    fetched = await page.evaluate("() => fetch('/playground/finish').then(r => 'read ' + r.status, e => 'refused')")
    assert fetched == "refused"
    await page.evaluate("() => { const a = document.createElement('a'); a.href = '/gomail/'; a.textContent = 'mail';"
                        " document.body.prepend(a); }")
    obs = await manager.observation(session.id, TEXT_ONLY)
    out = await manager.step(session.id, A.ClickElement(_bid(obs, "link", "mail")), TEXT_ONLY)
    assert not out.action_ok and not out.env_failure and "outside this task's site" in out.action_error, out
    out = await manager.step(session.id, A.Noop(), TEXT_ONLY)   # on the error page the refusal left: still no fault
    assert out.action_ok and not out.env_failure, out
    # ... while the env's own channel still reads the state, and the site's own pages work
    assert json.loads((await manager.state(session.id)).state_json)["task_id"] == "playground-signup"
    out = await manager.step(session.id, A.Goto(f"{base}/page2"), TEXT_ONLY)
    assert out.action_ok, out.action_error


async def test_the_guard_can_be_turned_off_for_parity_with_hosted_sites(own, stack):
    sites, _ = own
    settings = EnvSettings(port=0, metrics_port=-1, sites_url=sites.url, pool_size=2, guard_grader=False)
    manager = SessionManager(settings, default_registry(), pool=stack.env_manager.pool)
    session, _ = await _create(manager)
    try:
        out = await manager.step(session.id, A.Goto(f"{sites.url}/playground/finish"), TEXT_ONLY)
        assert out.action_ok and "initialfinaldiff" in out.observation.axtree
    finally:
        await manager.close_session(session.id)


def test_policy_paths_are_judged_as_the_server_routes_them():
    policy = UrlPolicy.for_site("http://h:1/gomail/")
    assert policy.check("http://h:1/gomail") is None and policy.check("http://h:1/gomail/email/3?x=1") is None
    for url in ("http://h:1/gomail/finish/", "http://h:1/gomail/FINISH", "http://h:1/gomail/a/../config",
                "http://h:1/gomail%2ffinish", "http://h:1/gomail/__halo/restore"):
        assert "control route" in (policy.check(url) or ""), url
        assert not policy.allows(url), url
    assert policy.allows("http://h:1/static/x.css")   # a sub-resource outside the root renders pages
    assert "outside this task's site" in policy.check("http://h:1/omnizon/")
    assert policy.needs_routing("http://h:1/omnizon/") and not policy.needs_routing("http://h:1/gomail/inbox")
    open_policy = UrlPolicy.for_site("http://h:1/gomail/", guard=False)
    assert open_policy.check("http://h:1/gomail/finish") is None and open_policy.check("http://h:1/omnizon/") is None
    assert "outside the task's sites" in open_policy.check("http://other:1/")


def _start_sites_process(port: int, data_dir) -> subprocess.Popen:
    """`halo serve sites` as its own process (so that it can be killed with -9)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "halo.cli", "serve", "sites", "--port", str(port), "--data-dir", str(data_dir)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"sites server exited: {proc.stderr.read().decode()[-2000:]}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/__halo/health", timeout=2):
                return proc
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise AssertionError("sites server did not start in 60 s")


async def test_a_killed_sites_server_restarted_on_its_data_dir_serves_open_sessions_where_they_were(stack, tmp_path):
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    proc = await asyncio.to_thread(_start_sites_process, port, tmp_path)
    manager = SessionManager(EnvSettings(port=0, metrics_port=-1, sites_url=url, pool_size=2), default_registry(),
                             pool=stack.env_manager.pool)
    try:
        session, obs = await _create(manager)
        snap_id, _ = await manager.snapshot(session.id)            # before signing up
        out = await manager.step(session.id, A.ClickElement(_bid(obs, "button", "Sign up")), TEXT_ONLY)
        assert out.action_ok and "Thanks for signing up" in out.observation.axtree
        before = json.loads((await manager.state(session.id)).state_json)

        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        proc = await asyncio.to_thread(_start_sites_process, port, tmp_path)

        after = json.loads((await manager.state(session.id)).state_json)   # was: UNAVAILABLE, state gone
        assert after == before and after["initialfinaldiff"]["updated"]["signup"]["clicked"] is True
        out = await manager.step(session.id, A.Goto(f"{url}/playground/"), TEXT_ONLY)
        assert out.action_ok and not out.env_failure, out
        assert "Thanks for signing up" in out.observation.axtree       # the page is rendered from the kept state
        await manager.restore(session.id, snap_id, TEXT_ONLY)         # snapshots survive too
        restored = json.loads((await manager.state(session.id)).state_json)
        assert restored["initialfinaldiff"]["updated"] == {}
    finally:
        for session_id in list(manager._sessions):
            await manager.close_session(session_id)
        proc.kill()
        proc.wait()
