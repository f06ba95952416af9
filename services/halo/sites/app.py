"""The sites server: every replica under `/<site>/` on one HTTP server, with REAL's contract.

    GET  /<site>/config?run_id=…&task_id=…[&seed=…]   start a fresh state for that task (this context)
    GET  /<site>/finish                               <pre>{state JSON}</pre> (initialfinaldiff, differences)
    POST /<site>/__halo/snapshot                      {"snapshot_id": …}  (tree search; not for agents)
    POST /<site>/__halo/restore?snapshot_id=…         back to a snapshot
    GET  /__halo/health                               liveness

REAL's v2 start URLs end in "/", so agisdk asks for `//config` and `//finish`: repeated slashes
are collapsed before routing.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from halo.sites.registry import REPLICA_TYPES
from halo.sites.replica import Replica
from halo.sites.store import SESSION_COOKIE, STATE_HEADER, SessionStore

_SLASHES = re.compile(r"/{2,}")


class _CollapseSlashes:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and "//" in scope["path"]:
            scope = dict(scope, path=_SLASHES.sub("/", scope["path"]))
        await self.app(scope, receive, send)


class _SessionCookie:
    """Gives every browser context a `halo_sid` cookie on its first request, and names behind every
    response of a replica the task and epoch of the state it was served from (STATE_HEADER): the
    env compares them with what /config made, so a state that is gone (a sites server restarted
    without it) is an environment failure, never a task outcome."""

    def __init__(self, app: ASGIApp, store: SessionStore) -> None:
        self.app = app
        self.store = store

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        has_cookie = SESSION_COOKIE in request.cookies
        new_sid = SessionStore.new_sid()
        scope.setdefault("state", {})["new_sid"] = new_sid

        sid = request.cookies.get(SESSION_COOKIE) or new_sid
        site = scope["path"].lstrip("/").split("/", 1)[0]

        async def send_with_cookie(message):
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                if not has_cookie:
                    cookie = f"{SESSION_COOKIE}={new_sid}; Path=/; HttpOnly; SameSite=Lax"
                    headers.append((b"set-cookie", cookie.encode()))
                session = self.store.get(sid, site) if site else None
                if session is not None:
                    self.store.save(sid, site)   # durable before the page that shows the change is sent
                    headers.append((STATE_HEADER.encode(), session.state_tag.encode()))
                message = dict(message, headers=headers)
            await send(message)

        await self.app(scope, receive, send_with_cookie)


def _sid(request: Request) -> str:
    return request.cookies.get(SESSION_COOKIE) or request.state.new_sid


def _canonical_task(task_id: str) -> str:
    return task_id.split(".", 1)[1] if task_id.startswith("v2.") else task_id


def _contract_routes(replica: Replica) -> list[Route]:
    store = replica.store

    async def config(request: Request) -> Response:
        task_id = _canonical_task(request.query_params.get("task_id", ""))
        if task_id and replica.task_ids and task_id not in replica.task_ids:
            return HTMLResponse(f"<p>unknown task {html.escape(task_id)} for {replica.site_id}</p>", status_code=404)
        try:
            seed = int(request.query_params.get("seed", "0"))
        except ValueError:
            return HTMLResponse("<p>seed must be an integer</p>", status_code=400)
        run_id = request.query_params.get("run_id", "0")
        store.start(_sid(request), replica.site_id, task_id, run_id, seed, replica.initial_state(task_id, seed))
        return HTMLResponse(f"<p>{html.escape(replica.title)} configured for task {html.escape(task_id) or '(none)'}</p>")

    async def finish(request: Request) -> Response:
        session = replica.session(request)
        payload = replica.finish_payload(session)
        body = html.escape(json.dumps(payload, indent=2))
        return HTMLResponse(f"<!doctype html><html><head><title>finish</title></head><body><pre>{body}</pre></body></html>")

    async def snapshot(request: Request) -> Response:
        session = replica.session(request)
        return JSONResponse({"snapshot_id": store.snapshot(session)})

    async def restore(request: Request) -> Response:
        session = replica.session(request)
        snapshot_id = request.query_params.get("snapshot_id", "")
        if not store.restore(session, snapshot_id):
            return JSONResponse({"error": f"unknown snapshot {snapshot_id!r}"}, status_code=404)
        return JSONResponse({"restored": snapshot_id})

    return [
        Route("/config", config),
        Route("/finish", finish),
        Route("/__halo/snapshot", snapshot, methods=["POST"]),
        Route("/__halo/restore", restore, methods=["POST"]),
    ]


def create_app(
    replica_types: Iterable[type[Replica]] | None = None, store: SessionStore | None = None, data_dir: str = "",
) -> Starlette:
    store = store or SessionStore(data_dir or None)
    replicas = [cls(store) for cls in (replica_types or REPLICA_TYPES)]

    async def health(request: Request) -> Response:
        return JSONResponse({"ok": True, "sites": [r.site_id for r in replicas], "sessions": len(store)})

    async def index(request: Request) -> Response:
        links = "".join(f'<li><a href="/{r.site_id}/">{html.escape(r.title)}</a></li>' for r in replicas)
        return HTMLResponse(f"<!doctype html><title>HALO sites</title><h1>HALO replicas</h1><ul>{links}</ul>")

    async def forget(request: Request) -> Response:
        return JSONResponse({"dropped": store.drop(_sid(request))})

    routes = [
        Route("/", index),
        Route("/__halo/health", health),
        Route("/__halo/forget", forget, methods=["POST"]),
    ]
    for replica in replicas:
        routes.append(Mount(f"/{replica.site_id}", routes=[*_contract_routes(replica), *replica.routes()]))
    app = Starlette(routes=routes)
    app.state.store = store
    app.state.replicas = {r.site_id: r for r in replicas}
    app.add_middleware(_SessionCookie, store=store)
    app.add_middleware(_CollapseSlashes)
    return app
