"""Page plumbing shared by the replicas built like REAL's React clones (the travel, social and jobs
sites): the app boots into the store on its first page after /config (`config.<key>` =
{run_id, task_id}, which every eval script then sees in `added.config`), records the page it shows
(`router.location`), answers a form with a 303 to the page that shows the result (optionally with a
one-line notice), and lists people by name and initials. Query values come from people, so they are
parsed leniently (a bad number is "not given", never an error page) and no page grows with its input.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from halo.sites.replica import Replica

NOTICE_LIMIT = 200


def boot(state: dict[str, Any], key: str, run_id: str, task_id: str) -> None:
    """The app reads its run configuration on its first page load (REAL's clones keep it in the store)."""
    state.setdefault("config", {}).setdefault(key, {"run_id": run_id, "task_id": task_id})


def set_location(state: dict[str, Any], pathname: str, search: str = "") -> None:
    state["router"]["location"] = {"pathname": pathname, "search": search}


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
    return text if text.startswith("/") and not text.startswith("//") and "\\" not in text else default


def one_line(raw: Any, limit: int = 120) -> str:
    """Typed text with its whitespace collapsed, at most `limit` characters (no reply grows with input)."""
    return " ".join(str(raw or "").split())[:limit]


def toggle(items: list[Any], value: Any) -> bool:
    """Add `value` to the list or take it out; True when it is in afterwards."""
    if value in items:
        items.remove(value)
        return False
    items.append(value)
    return True


class Named:
    """For records with a `name`: the first name and the initials an avatar shows."""

    name: str

    @property
    def first_name(self) -> str:
        return self.name.split()[0]

    @property
    def initials(self) -> str:
        return "".join(part[0] for part in self.name.split()[:2])


class BootingReplica(Replica):
    """A replica whose pages boot the app (config.<config_key>) and answer forms with 303s."""

    #: the key under `config` the app writes on its first render (defaults to the site id)
    config_key: str = ""

    def boot(self, request: Request) -> dict[str, Any]:
        """This context's store, with the app's run configuration written on first use."""
        session = self.session(request)
        boot(session.state, self.config_key or self.site_id, session.run_id, session.task_id)
        return session.state

    def show(self, request: Request, template: str, status_code: int = 200, **context: Any) -> Response:
        self.boot(request)
        response = self.render(request, template, **context)
        response.status_code = status_code
        return response

    def see_other(self, path: str) -> Response:
        return RedirectResponse(self.url(path), status_code=303)


class StorePages(Replica):
    """A replica whose pages boot the app, record the location and show the notice a form left."""

    not_found_template: str = ""

    def page_context(self, state: dict[str, Any]) -> dict[str, Any]:
        """What every page of the site shows beyond the page's own context (badges, counts)."""
        return {}

    def show(self, request: Request, pathname: str, template: str, status_code: int = 200, **context: Any) -> Response:
        session = self.session(request)
        state = session.state
        boot(state, self.site_id, session.run_id, session.task_id)
        query = request.url.query
        set_location(state, pathname, f"?{query}" if query else "")
        response = self.render(request, template, here=pathname + (f"?{query}" if query else ""),
                               notice=request.query_params.get("notice", "")[:NOTICE_LIMIT],
                               **self.page_context(state), **context)
        response.status_code = status_code
        return response

    def redirect(self, path: str, notice: str = "") -> Response:
        if notice:
            path += ("&" if "?" in path else "?") + urlencode({"notice": notice[:NOTICE_LIMIT]})
        return RedirectResponse(self.url(path), status_code=303)

    def not_found(self, request: Request, what: str) -> Response:
        return self.show(request, request.url.path.removeprefix(f"/{self.site_id}") or "/", self.not_found_template,
                         status_code=404, what=what)
