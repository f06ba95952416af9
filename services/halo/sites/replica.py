"""What a site replica provides to the sites server.

A replica is a small web app (Starlette routes + Jinja templates) over a server-side store. The
server owns the REAL contract (`/config`, `/finish`, snapshots) and the per-context sessions; the
replica owns its pages, its initial store for each task and, where its eval scripts read it,
the `differences` section of /finish.
"""

from __future__ import annotations

import abc
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.routing import BaseRoute
from starlette.templating import Jinja2Templates

from halo.sites.oracle import OracleStep, WrongAttempts
from halo.sites.store import SESSION_COOKIE, SessionStore, SiteSession

SHARED_TEMPLATES = Path(__file__).parent / "templates"


class Replica(abc.ABC):
    #: site id as REAL names it ("omnizon", "gomail", ...) and the URL prefix it is served under
    site_id: str
    #: display name
    title: str
    #: task ids (without the "v2." prefix) this replica serves
    task_ids: frozenset[str] = frozenset()
    #: task id -> oracle steps that solve it (only UI actions an agent could take)
    oracles: dict[str, list[OracleStep]] = {}
    #: task id -> plausible but wrong attempts by label ("wrong product", "wrong recipient"), each must score 0
    wrong_attempts: dict[str, WrongAttempts] = {}
    #: (name, path) of the main pages, rendered by `halo sites shots`
    showcase_pages: list[tuple[str, str]] = [("home", "/")]

    def __init__(self, store: SessionStore) -> None:
        self.store = store
        here = Path(__import__(type(self).__module__, fromlist=["_"]).__file__).parent
        self.templates = Jinja2Templates(directory=[str(here / "templates"), str(SHARED_TEMPLATES)])

    @abc.abstractmethod
    def initial_state(self, task_id: str, seed: int) -> dict[str, Any]:
        """The store a task starts from (deterministic for a (task, seed) pair)."""

    @abc.abstractmethod
    def routes(self) -> list[BaseRoute]:
        """Pages and APIs, with paths relative to the site prefix ("/", "/cart", "/api/...")."""

    def differences(self, session: SiteSession) -> dict[str, Any]:
        """The /finish `differences` section; empty unless a site's eval scripts read it."""
        return {}

    def finish_payload(self, session: SiteSession) -> dict[str, Any]:
        """The JSON the /finish page shows: REAL's state diff, plus what a site's scripts read elsewhere."""
        return session.finish_payload(self.differences(session))

    # --- helpers for route handlers -------------------------------------------------------

    def session(self, request: Request) -> SiteSession:
        """This browser context's session on this site; started with the default task if /config was skipped."""
        sid = request.cookies.get(SESSION_COOKIE) or request.state.new_sid
        session = self.store.get(sid, self.site_id)
        if session is None:
            session = self.store.start(sid, self.site_id, "", "0", 0, self.initial_state("", 0))
        return session

    def url(self, path: str = "/") -> str:
        """Site-absolute path for links in templates."""
        return f"/{self.site_id}{path}"

    def render(self, request: Request, template: str, **context: Any):
        session = self.session(request)
        return self.templates.TemplateResponse(
            request, template, {"site": self, "state": session.state, "session": session, **context}
        )
