"""REAL's `initialfinaldiff`: added / updated / deleted between the initial and final store.

The REAL clones compute it like the `deep-object-diff` package's `detailedDiff`: objects are
compared key by key, recursively; lists are compared like objects keyed by index (the eval scripts
read e.g. `added.order.orders["0"]`... as dicts keyed by strings, which is what JSON gives them);
a deleted key maps to null.
"""

from __future__ import annotations

from typing import Any

Json = Any


def _as_mapping(value: Json) -> dict[str, Json] | None:
    if isinstance(value, dict):
        return value
    if isinstance(value, list):
        return {str(i): v for i, v in enumerate(value)}
    return None


def added_diff(old: Json, new: Json) -> dict[str, Json]:
    old_m, new_m = _as_mapping(old), _as_mapping(new)
    if old_m is None or new_m is None:
        return {}
    out: dict[str, Json] = {}
    for key, value in new_m.items():
        if key not in old_m:
            out[key] = value
        else:
            nested = added_diff(old_m[key], value)
            if nested:
                out[key] = nested
    return out


def deleted_diff(old: Json, new: Json) -> dict[str, Json]:
    old_m, new_m = _as_mapping(old), _as_mapping(new)
    if old_m is None or new_m is None:
        return {}
    out: dict[str, Json] = {}
    for key, value in old_m.items():
        if key not in new_m:
            out[key] = None
        else:
            nested = deleted_diff(value, new_m[key])
            if nested:
                out[key] = nested
    return out


def updated_diff(old: Json, new: Json) -> dict[str, Json]:
    old_m, new_m = _as_mapping(old), _as_mapping(new)
    if old_m is None or new_m is None:
        return {}
    out: dict[str, Json] = {}
    for key, value in new_m.items():
        if key not in old_m:
            continue
        before = old_m[key]
        if _as_mapping(before) is not None and _as_mapping(value) is not None:
            nested = updated_diff(before, value)
            if nested:
                out[key] = nested
        elif before != value or type(before) is not type(value):
            out[key] = value
    return out


def detailed_diff(old: Json, new: Json) -> dict[str, dict[str, Json]]:
    return {"added": added_diff(old, new), "deleted": deleted_diff(old, new), "updated": updated_diff(old, new)}
