"""What the reward core knows about a page, and what counts as "the same state".

Two keys per page:

* `state_key` (novelty, cycles): canonical URL + a digest of the page's *content*: each element's
  depth, role and name with digits masked, and the value of discrete controls (checkbox, select,
  radio). Left out on purpose, so they cannot be farmed for novelty: scroll position (which
  elements are on screen), focus, bids, free-text field values (typing "a", "b", "c" is not three
  new places), numbers in text (a counter that ticks on every click is not a new page) and, when
  the content is known, the URL's query string (it counts through the content it changes).
* `view_key` (loop detection): the state key plus what the agent actually sees change: which
  elements are on screen, focus, field values. Scrolling down a long list three times is three
  different views, so not a loop; scrolling at the bottom of the page, or down/up/down, is.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from halo.agent.context import PageElement

#: Roles whose value is a choice among a few options: part of the state. Free-text values are not.
DISCRETE_VALUE_ROLES = frozenset({"checkbox", "radio", "switch", "combobox", "listbox", "option", "menuitemcheckbox", "tab"})
_DIGITS = re.compile(r"\d+")


def canonical_url(url: str, keep_query: bool = True) -> str:
    """Scheme/host lower-cased, query parameters sorted (their order is not a different page);
    without the query string at all when `keep_query` is false."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:      # not a URL a browser could have shown (e.g. "http://[::1"): compare it as text
        return url.strip()
    query = urlencode(sorted(parse_qsl(parts.query, keep_blank_values=True))) if keep_query else ""
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path or "/", query, parts.fragment))


def _digest(lines: list[str]) -> str:
    return hashlib.blake2b("\n".join(lines).encode(), digest_size=12).hexdigest()


@dataclass(frozen=True, eq=False)
class PageSnapshot:
    """One page as the reward core sees it (from a PageState)."""

    url: str = ""
    title: str = ""
    axtree: str = ""
    state: dict[str, Any] | None = None          # the /finish JSON; None when not sent
    elements: tuple[PageElement, ...] = ()       # as the env sent them (PageState.elements)

    @cached_property
    def state_key(self) -> str:
        # With the page's content at hand the query string only matters through that content:
        # `?x=1`, `?x=2`... on an unchanged page are not new places (and cannot be farmed).
        lines = [canonical_url(self.url, keep_query=not self.elements)]
        if self.elements:
            for el in self.elements:
                value = el.value if el.role in DISCRETE_VALUE_ROLES else ""
                # A toggle's state (pressed, selected, expanded) is part of where the agent is.
                lines.append(f"{el.depth}|{el.role}|{_DIGITS.sub('#', el.name)}|{value}|{','.join(el.states)}")
        else:   # text-less observation: the title is all we have besides the URL
            lines.append(_DIGITS.sub("#", self.title))
        return _digest(lines)

    @cached_property
    def view_key(self) -> str:
        lines = [self.state_key]
        lines += [f"{i}|{int(el.visible)}|{int(el.focused)}|{el.value}" for i, el in enumerate(self.elements)]
        return _digest(lines)

    def element(self, bid: str) -> PageElement | None:
        for el in self.elements:
            if el.bid == bid:
                return el
        return None

    def element_at(self, x: float, y: float) -> PageElement | None:
        """The smallest visible element under a point, interactive ones first (needs boxes)."""
        hits = [el for el in self.elements if el.visible and el.contains(x, y)]
        if not hits:
            return None
        return min(hits, key=lambda el: (not el.interactive, el.area))

    def focused_element(self) -> PageElement | None:
        return next((el for el in self.elements if el.focused), None)

    @cached_property
    def truthy_leaf_paths(self) -> tuple[str, ...]:
        """Dotted paths of the truthy leaves of the state JSON (for `path` milestone checks)."""
        out: list[str] = []
        if self.state is not None:
            _walk_leaves(self.state, "", out)
        return tuple(out)


def _walk_leaves(node: Any, prefix: str, out: list[str]) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            _walk_leaves(value, f"{prefix}.{key}" if prefix else str(key), out)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            _walk_leaves(value, f"{prefix}.{i}" if prefix else str(i), out)
    elif node:
        out.append(prefix)
