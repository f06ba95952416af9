"""Which URLs a session may load: only the task's own site (the pool is no open proxy, and the
grader is out of the agent's reach).

Every request must go to the task's site origin. With `guard` on (the env's `guard_grader`, the
default) two more rules hold, because in RL whatever the agent can reach it learns to exploit:

- the site's control routes (`/config`, `/finish`, `/__halo/...` under the site's root, and the
  sites server's own `/__halo/...`) are refused to every request of the browser context: reading
  `/finish` shows the grader's state, `/config?task_id=...` resets the site to another task. The
  env reads and sets the state through its own channel (the context's API request client, which
  page routing does not see);
- a page (a navigation, in any frame) must be under the site's root: the sites server hosts all
  replicas on one origin, and `/omnizon/` is not part of a GoMail task. Sub-resources outside the
  root stay allowed (they render pages; they are not places to go).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from halo.errors import MAX_QUOTED_CHARS, bounded, quoted

#: First path segments under a site's root that belong to REAL's grading contract, not to the site.
CONTROL_ROUTES = frozenset({"config", "finish", "__halo"})


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def _path_of(url: str) -> str:
    """The path a server routes on: percent-decoded, dot segments and repeated slashes resolved."""
    path = unquote(urlsplit(url).path) or "/"
    normal = posixpath.normpath("/" + path.lstrip("/"))
    return normal if normal == "/" or not path.endswith("/") else normal + "/"


@dataclass(frozen=True)
class UrlPolicy:
    allowed_origins: frozenset[str]
    site_root: str = "/"          # path every page must be under ("/gomail/"), with `guard`
    guard: bool = False           # refuse control routes and pages outside `site_root`

    @classmethod
    def for_urls(cls, *urls: str) -> "UrlPolicy":
        return cls(frozenset(origin_of(u) for u in urls if u))

    @classmethod
    def for_site(cls, base_url: str, guard: bool = True) -> "UrlPolicy":
        """The policy of a task whose site starts at `base_url` (a replica's `/<site>/`, or REAL's host)."""
        root = _path_of(base_url)
        return cls(frozenset({origin_of(base_url)}), root if root.endswith("/") else root + "/", guard)

    def _resource_problem(self, url: str) -> str | None:
        try:
            parts = urlsplit(url)
        except ValueError as exc:   # e.g. an unclosed IPv6 bracket: "http://[::1"
            return f"{quoted(url)} is not a valid URL ({exc})"
        if parts.scheme not in ("http", "https"):
            return f"scheme {quoted(parts.scheme or '(none)')} is not allowed (only http/https on the task's site)"
        if origin_of(url) not in self.allowed_origins:
            return f"{bounded(origin_of(url), MAX_QUOTED_CHARS)} is outside the task's sites ({', '.join(sorted(self.allowed_origins))})"
        if self.guard:
            path = _path_of(url)
            under_root = path[len(self.site_root):] if path.startswith(self.site_root) else None
            first = (under_root if under_root is not None else path.lstrip("/")).split("/", 1)[0].lower()
            if first == "__halo" or (under_root is not None and first in CONTROL_ROUTES):
                return (f"{bounded(path, MAX_QUOTED_CHARS)} is a control route of the grader, not part of the site "
                        "(the env reads and sets the task's state itself; guard_grader)")
        return None

    def check(self, url: str) -> str | None:
        """None when a page may be opened at `url` (goto, a link, a form), else the reason it may not."""
        problem = self._resource_problem(url)
        if problem is None and self.guard and not _path_of(url).startswith(self.site_root):
            if _path_of(url) + "/" == self.site_root:
                return None   # the site's root without its trailing slash
            return (f"{bounded(_path_of(url), MAX_QUOTED_CHARS)} is outside this task's site {self.site_root} "
                    "(another site's replica or the sites server's index; guard_grader)")
        return problem

    def allows(self, url: str) -> bool:
        """Whether the page may fetch `url` as a sub-resource."""
        # data:/blob:/about: sub-resources the site itself creates stay allowed for rendering.
        if url.startswith(("data:", "blob:", "about:")):
            return True
        return self._resource_problem(url) is None

    def needs_routing(self, url: str) -> bool:
        """Whether the pool must look at a request for `url`: refused outright, or allowed only
        as a sub-resource (a page outside the site's root)."""
        if not self.allows(url):
            return True
        return self.guard and not url.startswith(("data:", "blob:", "about:")) and self.check(url) is not None
