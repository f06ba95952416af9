"""One meaning per flag: helpers every `halo` parser uses for renamed flags and spelled names.

A renamed flag keeps its old spelling as a hidden alias that still works and says, on stderr, which
flag replaces it (`deprecated_alias`). A name with one canonical spelling (a suite, a backend)
accepts the old spellings through `Spelling`, with the same warning. The CLI reference
(`halo docs cli`) lists the old spellings beside the new ones.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable
from typing import Any


def warn(message: str) -> None:
    print(f"halo: {message}", file=sys.stderr)


class _DeprecatedAlias(argparse.Action):
    """The old spelling of a flag: stores into the new flag's dest and warns once per use."""

    def __init__(self, option_strings, dest, replacement: str = "", convert: Callable[[Any], Any] | None = None, **kwargs):
        self.replacement = replacement
        self.convert = convert
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        warn(f"{option_string} is deprecated; use {self.replacement}")
        setattr(namespace, self.dest, self.convert(values) if self.convert else values)


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
            warn(f"{self.flag} {value} is deprecated; use {self.flag} {self.old[value]}")
            return self.old[value]
        return value

    def __repr__(self) -> str:   # argparse names the type in its errors
        return "name"


def json_path_help(what: str) -> str:
    return f"also write {what} as JSON to PATH"
