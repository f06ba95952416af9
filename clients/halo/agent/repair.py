"""Safe, named repairs of model output before it is parsed.

Each function returns the repaired text and whether it changed anything, so the parser can
record which repairs a candidate needed ("repaired" is part of every candidate: a trainer may
want to reward clean output more than repaired output). Only repairs that cannot change the
meaning of a well-intended action live here: code fences, prose around the payload, Python-style
quotes and literals, trailing commas, and closing brackets missing at the very end.
"""

from __future__ import annotations

import json
import re
from typing import Any

_FENCE = re.compile(r"```[a-zA-Z0-9_+-]*\s*\n?(.*?)(?:```|$)", re.DOTALL)


def strip_code_fence(text: str) -> tuple[str, bool]:
    """The body of the first ``` fenced block (a missing closing fence is tolerated)."""
    match = _FENCE.search(text)
    if match is None:
        return text, False
    return match.group(1).strip(), True


def find_balanced(text: str, opener: str, start: int = 0) -> tuple[int, int] | None:
    """(start, end) of the first balanced `{...}`/`[...]`/`(...)` from `start`, string-aware.

    When the text ends before the bracket closes, end is len(text) (the caller may close it).
    """
    begin = text.find(opener, start)
    if begin < 0:
        return None
    stack: list[str] = []
    quote: str | None = None
    escaped = False
    for i in range(begin, len(text)):
        ch = text[i]
        if quote is not None:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = None
            continue
        if ch in "\"'":
            quote = ch
        elif ch in "{[(":
            stack.append({"{": "}", "[": "]", "(": ")"}[ch])
        elif ch in "}])":
            if not stack or stack[-1] != ch:
                return None  # mismatched: not something we can safely repair
            stack.pop()
            if not stack:
                return begin, i + 1
    return begin, len(text)


def close_brackets(fragment: str) -> tuple[str, bool]:
    """Append the closers of brackets left open at the end (output cut by max_tokens)."""
    stack: list[str] = []
    quote: str | None = None
    escaped = False
    for ch in fragment:
        if quote is not None:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = None
            continue
        if ch in "\"'":
            quote = ch
        elif ch in "{[(":
            stack.append({"{": "}", "[": "]", "(": ")"}[ch])
        elif ch in "}])" and stack and stack[-1] == ch:
            stack.pop()
    if quote is not None:
        return fragment, False  # cut inside a string: the value is unknown, do not guess
    if not stack:
        return fragment, False
    return fragment + "".join(reversed(stack)), True


def _requote(text: str) -> str:
    """Rewrite single-quoted strings as JSON double-quoted ones (escapes respected)."""
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == '"':
            j = i + 1
            while j < len(text) and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif ch == "'":
            j = i + 1
            buf: list[str] = []
            while j < len(text) and text[j] != "'":
                if text[j] == "\\" and j + 1 < len(text):
                    buf.append(text[j + 1] if text[j + 1] == "'" else text[j:j + 2])
                    j += 2
                    continue
                buf.append('\\"' if text[j] == '"' else text[j])
                j += 1
            out.append('"' + "".join(buf) + '"')
            i = j + 1
        else:
            out.append(ch)
            i += 1
    return "".join(out)


_PY_LITERALS = re.compile(r'("(?:[^"\\]|\\.)*")|\b(True|False|None)\b')
_TRAILING_COMMA = re.compile(r'("(?:[^"\\]|\\.)*")|,\s*([}\]])')


def _python_literals_to_json(text: str) -> str:
    mapping = {"True": "true", "False": "false", "None": "null"}
    return _PY_LITERALS.sub(lambda m: m.group(1) or mapping[m.group(2)], text)


def _drop_trailing_commas(text: str) -> str:
    return _TRAILING_COMMA.sub(lambda m: m.group(1) or m.group(2), text)


def loads_lenient(fragment: str) -> tuple[Any, list[str]]:
    """json.loads, then the same after quote/literal/trailing-comma repairs.

    Returns (value, repairs applied). Raises ValueError when no repair makes it JSON.
    """
    try:
        return json.loads(fragment), []
    except (ValueError, RecursionError):  # JSONDecodeError; also ints over Python's digit limit, deep nesting
        pass
    repairs: list[str] = []
    candidate = fragment
    for name, fix in (("single_quotes", _requote), ("python_literals", _python_literals_to_json),
                      ("trailing_comma", _drop_trailing_commas)):
        fixed = fix(candidate)
        if fixed != candidate:
            repairs.append(name)
            candidate = fixed
            try:
                return json.loads(candidate), repairs
            except (ValueError, RecursionError):
                continue
    raise ValueError(f"not JSON even after repairs ({', '.join(repairs) or 'none applicable'})")
