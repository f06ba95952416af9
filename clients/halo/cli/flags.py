"""One meaning per flag: helpers every `halo` parser uses for renamed flags and spelled names.

A renamed flag keeps its old spelling as a hidden alias that still works for one release and says,
on stderr, which flag replaces it (`deprecated_alias`). A name with one canonical spelling (a
suite, a backend) accepts the old spellings through `Spelling`, with the same warning. The CLI
reference (`halo docs cli`) lists the old spellings beside the new ones.

A parser built with `track_typed` also records which flags the user typed (`typed_flags`), so that
a command can tell a flag given on purpose from its default (`halo train --resume` does).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable
from typing import Any


def warn(message: str) -> None:
    print(f"halo: {message}", file=sys.stderr)


def renamed(old: str, new: str) -> str:
    """The one-line warning of an old spelling."""
    return f"{old} is deprecated; use {new} (the old spelling goes in the next release)"


#: The Namespace attribute that holds the dests of the flags typed (see `track_typed`).
_TYPED = "_typed_flags"


def _mark_typed(namespace: argparse.Namespace, dest: str) -> None:
    # A new frozenset each time: argparse copies a subparser's namespace into its parent's, and a
    # shared mutable default would leak between parses.
    setattr(namespace, _TYPED, frozenset(getattr(namespace, _TYPED, frozenset())) | {dest})


class _TypedStore(argparse._StoreAction):
    """argparse's plain `store`, which also records that the flag was typed."""

    def __call__(self, parser, namespace, values, option_string=None):
        super().__call__(parser, namespace, values, option_string)
        _mark_typed(namespace, self.dest)


def track_typed(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Make the flags added to `parser` from now on with the default action record being typed."""
    parser.register("action", None, _TypedStore)
    parser.register("action", "store", _TypedStore)
    return parser


def typed_flags(args: argparse.Namespace) -> frozenset[str]:
    """The dests of the flags the user typed (on a parser built with `track_typed`; old spellings count)."""
    return frozenset(getattr(args, _TYPED, frozenset()))


class _DeprecatedAlias(argparse.Action):
    """The old spelling of a flag: stores into the new flag's dest and warns once per use."""

    def __init__(self, option_strings, dest, replacement: str = "", convert: Callable[[Any], Any] | None = None, **kwargs):
        self.replacement = replacement
        self.convert = convert
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        warn(renamed(option_string, self.replacement))
        setattr(namespace, self.dest, self.convert(values) if self.convert else values)
        _mark_typed(namespace, self.dest)


def deprecated_alias(parser: argparse.ArgumentParser, old: str, new: argparse.Action, *,
                     convert: Callable[[Any], Any] | None = None) -> argparse.Action:
    """Accept `old` as a hidden spelling of the flag `new` (same dest and type), with a warning."""
    alias = parser.add_argument(old, dest=new.dest, action=_DeprecatedAlias, replacement=new.option_strings[-1],
                                convert=convert, type=new.type, nargs=new.nargs, metavar=new.metavar,
                                help=argparse.SUPPRESS)
    aliases = getattr(new, "old_spellings", [])
    new.old_spellings = [*aliases, old]   # type: ignore[attr-defined]  # read by halo.cli.reference
    return alias


class Spelling:
    """A `type=` for a flag whose values have one canonical spelling: the old spellings map onto it
    with a warning, anything else is left for `choices` to refuse."""

    def __init__(self, flag: str, canonical: Iterable[str], old: dict[str, str]):
        self.flag, self.canonical, self.old = flag, list(canonical), dict(old)

    def __call__(self, value: str) -> str:
        if value in self.old:
            warn(renamed(f"{self.flag} {value}", f"{self.flag} {self.old[value]}"))
            return self.old[value]
        return value

    def __repr__(self) -> str:   # argparse names the type in its errors
        return "name"


def json_path_help(what: str) -> str:
    return f"also write {what} as JSON to PATH"
