"""Infrastructure faults under an episode, seen from the browser context: never a task outcome.

An action can go wrong because the agent asked for something impossible (an action error, shown
to the agent) or because the environment under it failed: the sites server is down or restarting
(`net::ERR_CONNECTION_REFUSED`, a `chrome-error://` page), it answered 5xx, or it no longer holds
this session's state (restarted without it: it serves a fresh default state, which scores 0). A
trainer must not learn from the second kind as if the agent had failed, so the session ends the
episode as an environment failure instead.

`FaultWatcher` listens to one context's requests and keeps the first fault since the last
`reset()` (one action). It also tells the policy's own refusals (a link to another host, aborted
by the pool: `net::ERR_BLOCKED_BY_CLIENT`) apart from faults: those are the agent's doing.

State ownership: the sites server names the task and a per-/config epoch of the state behind
every response of a replica (`STATE_HEADER`, "<epoch>;<task_id>"). The env records it at /config
and compares every document the session loads from that replica, and every /finish it reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlsplit

from playwright.async_api import BrowserContext, Request, Response

from halo.errors import MAX_QUOTED_CHARS, bounded
from halo.env.urlpolicy import UrlPolicy, origin_of

#: Response header of the sites server: "<epoch>;<task_id>" of the state it served the request from.
STATE_HEADER = "x-halo-state"

# Request failures that are not the environment's: a navigation replaced by another, a 204, a
# download (ERR_ABORTED); a request the pool's URL policy refused (ERR_BLOCKED_BY_CLIENT).
_NOT_FAULTS = ("net::ERR_ABORTED", "NS_BINDING_ABORTED")
_REFUSED = "net::ERR_BLOCKED_BY_CLIENT"


def short_url(url: str) -> str:
    return bounded(url, MAX_QUOTED_CHARS)


def state_mismatch(expected: str, served: str | None, site: str) -> str | None:
    """Why `served` (a STATE_HEADER value) is not this session's state, or None when it is."""
    if not expected or served is None or served == expected:
        return None
    epoch, _, task = served.partition(";")
    _, _, want_task = expected.partition(";")
    what = f"task {task or '(none)'!r}" + (f", a new state (epoch {epoch})" if task == want_task else "")
    return (f"the {site} replica no longer holds this session's state (it serves {what} instead of "
            f"{want_task!r}): the sites server was restarted without it or its state was reset")


@dataclass(eq=False)
class FaultWatcher:
    context: BrowserContext
    policy: UrlPolicy
    site_prefix: str = ""        # "http://127.0.0.1:8100/gomail/" for a replica session, "" for a remote one
    expected_state: str = ""     # STATE_HEADER value recorded at /config ("" = not checked)
    fault: str = ""              # first infrastructure fault since reset()
    refused: str = ""            # a main-frame navigation the URL policy refused since reset()
    #: the page shows the browser's error page because the policy refused a navigation, not because
    #: the site failed (kept across actions until another document arrives)
    error_page_is_refusal: bool = False
    _site_origin: str = field(default="", init=False)

    def __post_init__(self) -> None:
        self._site_origin = origin_of(self.site_prefix) if self.site_prefix else ""
        self.context.on("requestfailed", self._on_request_failed)
        self.context.on("response", self._on_response)

    def reset(self) -> None:
        self.fault = self.refused = ""

    def _note(self, fault: str) -> None:
        if not self.fault:
            self.fault = fault

    @staticmethod
    def _is_document(request: Request) -> bool:
        try:
            return request.is_navigation_request() and request.frame.parent_frame is None
        except Exception:   # the frame is already gone (tab closed)
            return False

    def _ours(self, request: Request) -> bool:
        """A request whose failure is the environment's: a page load on the task's sites, or
        anything the page asks of the local replica server."""
        if self._is_document(request):
            return self.policy.allows(request.url)
        return bool(self._site_origin) and origin_of(request.url) == self._site_origin

    def _on_request_failed(self, request: Request) -> None:
        failure = request.failure or "failed"
        if failure.startswith(_NOT_FAULTS):
            return
        if failure.startswith(_REFUSED):
            if self._is_document(request) and not self.refused:
                reason = self.policy.check(request.url) or "outside the task's sites"
                self.refused = f"navigation to {short_url(request.url)} refused: {reason}"
                self.error_page_is_refusal = True
            return
        if self._ours(request):
            self._note(f"the site did not answer {short_url(request.url)}: {failure}")

    def _on_response(self, response: Response) -> None:
        request = response.request
        if self._is_document(request):
            self.error_page_is_refusal = False
        if response.status >= 500 and self._ours(request):
            self._note(f"the site answered HTTP {response.status} for {short_url(request.url)}")
            return
        if self.expected_state and self._is_document(request) and request.url.startswith(self.site_prefix):
            problem = state_mismatch(self.expected_state, response.headers.get(STATE_HEADER), _site_of(self.site_prefix))
            if problem:
                self._note(problem)


def _site_of(prefix: str) -> str:
    return urlsplit(prefix).path.strip("/") or prefix
