"""Which URLs a session may load: only the task's own site origins (the pool is no open proxy)."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


@dataclass(frozen=True)
class UrlPolicy:
    allowed_origins: frozenset[str]

    @classmethod
    def for_urls(cls, *urls: str) -> "UrlPolicy":
        return cls(frozenset(origin_of(u) for u in urls if u))

    def check(self, url: str) -> str | None:
        """None when `url` may be loaded, else the reason it may not."""
        try:
            parts = urlsplit(url)
        except ValueError as exc:   # e.g. an unclosed IPv6 bracket: "http://[::1"
            return f"{url!r} is not a valid URL ({exc})"
        if parts.scheme not in ("http", "https"):
            return f"scheme {parts.scheme or '(none)'!r} is not allowed (only http/https on the task's site)"
        if origin_of(url) not in self.allowed_origins:
            return f"{origin_of(url)} is outside the task's sites ({', '.join(sorted(self.allowed_origins))})"
        return None

    def allows(self, url: str) -> bool:
        # data:/blob:/about: sub-resources the site itself creates stay allowed for rendering.
        if url.startswith(("data:", "blob:", "about:")):
            return True
        return self.check(url) is None
