"""Model output -> HALO action, for all three output syntaxes, with safe repairs and typed errors.

    parsed = parse_action(text, ActionFormat.QWEN_COMPUTER_USE)
    if parsed.valid: env.step(parsed.action) else: reward the invalid action (parsed.error.kind)

The expected syntax is tried first; when it finds no action syntax at all, the other two are
tried (a model prompted for JSON that answers `click("12")` still produced a well-formed action;
`parsed.format` says which syntax matched). Whatever cannot be repaired safely is an error, never
a guess: validity is a training signal.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from halo.agent import actions as A
from halo.agent import bounds
from halo.agent.formats import SYNTAXES, ActionFormat
from halo.agent.syntax.common import ParseErrorKind, _Invalid

__all__ = ["ParseError", "ParseErrorKind", "ParsedAction", "parse_action"]


@dataclass(frozen=True)
class ParseError:
    kind: ParseErrorKind
    message: str

    def __str__(self) -> str:
        return f"{self.kind.name.lower()}: {self.message}"


@dataclass(frozen=True)
class ParsedAction:
    action: A.Action | None
    error: ParseError | None = None
    format: ActionFormat | None = None
    repairs: tuple[str, ...] = ()

    @property
    def valid(self) -> bool:
        return self.action is not None

    @property
    def repaired(self) -> bool:
        return bool(self.repairs)


def _check_strings(action: A.Action) -> A.Action:
    """Every string must be valid Unicode: a JSON escape like "\\ud800" decodes to a lone surrogate,
    which protobuf (UTF-8) cannot carry."""
    for f in dataclasses.fields(action):
        value = getattr(action, f.name)
        for text in value if isinstance(value, tuple) else (value,):
            if isinstance(text, str):
                try:
                    text.encode("utf-8")
                except UnicodeEncodeError:
                    raise _Invalid(ParseErrorKind.BAD_ARGUMENTS, f"{f.name.rstrip('_')} is not valid Unicode (lone surrogate)") from None
    return action


def _check_bounds(action: A.Action) -> A.Action:
    """The action's inputs are within their bounds (halo.agent.bounds): the env service refuses any
    other with INVALID_ARGUMENT, so a parsed action is always one the env tries."""
    try:
        bounds.check(action)
    except bounds.ActionOutOfBounds as exc:
        raise _Invalid(ParseErrorKind.BAD_ARGUMENTS, str(exc)) from None
    return action


def parse_action(
    text: str, expected: ActionFormat = ActionFormat.QWEN_COMPUTER_USE, width: int = 1280, height: int = 720,
) -> ParsedAction:
    """Parse one completion. Never raises: failures come back as `ParsedAction.error`."""
    if not text or not text.strip():
        return ParsedAction(None, ParseError(ParseErrorKind.EMPTY, "the completion is empty"))
    order = [expected, *[f for f in SYNTAXES if f != expected]]
    first_error: ParseError | None = None
    for fmt in order:
        repairs: list[str] = []
        try:
            action = _check_bounds(_check_strings(SYNTAXES[fmt].parse(text, repairs, width, height)))
        except _Invalid as exc:
            error = ParseError(exc.kind, str(exc))
            if exc.kind != ParseErrorKind.NO_ACTION:
                return ParsedAction(None, error, fmt, tuple(repairs))
            first_error = first_error or error
            continue
        return ParsedAction(action, None, fmt, tuple(dict.fromkeys(repairs)))
    assert first_error is not None
    return ParsedAction(None, ParseError(ParseErrorKind.NO_ACTION, f"no action found in any known syntax ({first_error.message})"))
