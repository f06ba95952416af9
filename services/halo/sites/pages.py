"""Helpers for server-rendered replicas whose app "boots" on its first page (REAL v2's travel clones).

REAL's clones keep their run configuration in the store: the first render after /config writes
`config.<key> = {run_id, task_id}`, which every eval script then sees in `added.config`. Forms
post and answer 303 to the page that shows the result; query values come from people, so they
are parsed leniently (a bad number is "not given", never an error page).
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from halo.sites.replica import Replica


def to_int(raw: Any, default: int | None = None, lo: int | None = None, hi: int | None = None) -> int | None:
    """An integer from a form or query value, clamped to [lo, hi]; `default` when it is not one."""
    try:
        value = int(str(raw).strip().replace(",", ""))
    except (TypeError, ValueError):
        return default
    if lo is not None:
        value = max(lo, value)
    if hi is not None:
        value = min(hi, value)
    return value


def safe_back(value: Any, default: str = "/") -> str:
    """A site-relative path to return to (never another origin)."""
    text = str(value or "")
    if not text.startswith("/") or text.startswith("//") or "\\" in text:
        return default
    return text


def one_line(raw: Any, limit: int = 120) -> str:
    """Typed text with its whitespace collapsed, at most `limit` characters (no reply grows with input)."""
    return " ".join(str(raw or "").split())[:limit]


class BootingReplica(Replica):
    """A replica whose pages boot the app (config.<config_key>) and answer forms with 303s."""

    #: the key under `config` the app writes on its first render (defaults to the site id)
    config_key: str = ""

    def boot(self, request: Request) -> dict[str, Any]:
        """This context's store, with the app's run configuration written on first use."""
        session = self.session(request)
        config = session.state.setdefault("config", {})
        key = self.config_key or self.site_id
        if key not in config:
            config[key] = {"run_id": session.run_id, "task_id": session.task_id}
        return session.state

    def show(self, request: Request, template: str, status_code: int = 200, **context: Any) -> Response:
        self.boot(request)
        response = self.render(request, template, **context)
        response.status_code = status_code
        return response

    def see_other(self, path: str) -> Response:
        return RedirectResponse(self.url(path), status_code=303)
