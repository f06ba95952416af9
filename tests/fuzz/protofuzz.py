"""Hypothesis strategies that build any protobuf message from its descriptor.

    requests(pb.StepRequest.DESCRIPTOR, hints={"session_id": st.just("@session")})

Every field is either left unset or filled: strings (nasty ones included: empty, NUL, path
traversal, very long, unknown ids), bytes, integers over the field's whole range (0, -1 and the
extremes over-represented), floats with NaN and infinities, enums with out-of-range values,
nested messages (to a depth limit), repeated fields with a few items, maps, and at most one member
of each oneof. `hints` maps a field name to extra values for that field (wherever it is nested):
known ids, real task names, small bounds for fields whose large values legitimately mean long work.
"""

from __future__ import annotations

from collections.abc import Mapping

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from google.protobuf.message_factory import GetMessageClass
from hypothesis import strategies as st

FD = FieldDescriptor

_INT_RANGES = {
    FD.TYPE_INT32: (-(2**31), 2**31 - 1), FD.TYPE_SINT32: (-(2**31), 2**31 - 1), FD.TYPE_SFIXED32: (-(2**31), 2**31 - 1),
    FD.TYPE_INT64: (-(2**63), 2**63 - 1), FD.TYPE_SINT64: (-(2**63), 2**63 - 1), FD.TYPE_SFIXED64: (-(2**63), 2**63 - 1),
    FD.TYPE_UINT32: (0, 2**32 - 1), FD.TYPE_FIXED32: (0, 2**32 - 1),
    FD.TYPE_UINT64: (0, 2**64 - 1), FD.TYPE_FIXED64: (0, 2**64 - 1),
}

NASTY_STRINGS = [
    "", " ", "\x00", "a\x00b", "..", "../../../etc/passwd", "/etc/passwd", "/", ".", "~", "x" * 300,
    "\u202e\U0001f600é", "null", "{}", '{"a": 1}', "[", "None", "-1", "1e400", "NaN", "%s%n", "' OR 1=1 --",
    "<script>alert(1)</script>", "http://", "v2.", "a/b", "\\", "\n", "nonexistent-id-0000",
]


def _ints(lo: int, hi: int) -> st.SearchStrategy[int]:
    edges = sorted({v for v in (0, 1, 2, -1, 3, 100, lo, hi, hi - 1) if lo <= v <= hi})
    return st.one_of(st.sampled_from(edges), st.integers(max(lo, -5), min(hi, 1000)), st.integers(lo, hi))


def _scalar(field: FieldDescriptor) -> st.SearchStrategy:
    t = field.type
    if t in _INT_RANGES:
        return _ints(*_INT_RANGES[t])
    if t == FD.TYPE_DOUBLE:
        return st.one_of(st.sampled_from([0.0, -0.0, 1.0, -1.0, 0.5, 1e308, float("nan"), float("inf"), float("-inf")]),
                         st.floats())
    if t == FD.TYPE_FLOAT:
        return st.floats(width=32)
    if t == FD.TYPE_BOOL:
        return st.booleans()
    if t == FD.TYPE_STRING:
        return st.one_of(st.sampled_from(NASTY_STRINGS), st.text(max_size=24))
    if t == FD.TYPE_BYTES:
        return st.one_of(st.just(b""), st.binary(max_size=64))
    if t == FD.TYPE_ENUM:
        known = [v.number for v in field.enum_type.values]
        return st.one_of(st.sampled_from(known), st.integers(-3, max(known) + 3), st.integers(-(2**31), 2**31 - 1))
    raise TypeError(f"unsupported field type {t} ({field.full_name})")


def _either(hint: st.SearchStrategy, base: st.SearchStrategy) -> st.SearchStrategy:
    """The hint or the generic values, the hint first: hypothesis starts from (and shrinks to) first
    branches, so short runs reach past the id checks into the services' real work."""
    return st.one_of(hint, base)


class _Builder:
    def __init__(self, hints: Mapping[str, st.SearchStrategy], max_depth: int, max_items: int, oneof_set: bool) -> None:
        self.hints = hints
        self.oneof_set = oneof_set
        self.max_depth = max_depth
        self.max_items = max_items
        self._cache: dict[tuple[str, int], st.SearchStrategy] = {}

    def value(self, field: FieldDescriptor, depth: int) -> st.SearchStrategy:
        """One value of the field's type (one item of a repeated field)."""
        if field.type == FD.TYPE_MESSAGE:
            return self.message(field.message_type, depth + 1)
        return _scalar(field)

    def field(self, field: FieldDescriptor, depth: int) -> st.SearchStrategy:
        """What the field is set to: a value, a list of items, or a dict for a map."""
        if field.type == FD.TYPE_MESSAGE and field.message_type.GetOptions().map_entry:
            key = _scalar(field.message_type.fields_by_name["key"])
            value = self.value(field.message_type.fields_by_name["value"], depth)
            return st.dictionaries(key, value, max_size=self.max_items)
        if field.is_repeated:
            return st.lists(self.value(field, depth), max_size=self.max_items)
        return self.value(field, depth)

    def hinted(self, field: FieldDescriptor, depth: int, may_be_unset: bool = True) -> st.SearchStrategy:
        """The field's strategy; a hint (whole lists for repeated fields, dicts for maps) about half the time."""
        base = self.field(field, depth)
        if may_be_unset:
            base = base | st.none()
        hint = self.hints.get(field.name)
        return base if hint is None else _either(hint, base)

    def message(self, descriptor: Descriptor, depth: int = 0) -> st.SearchStrategy[Message]:
        key = (descriptor.full_name, depth)
        if key not in self._cache:
            self._cache[key] = st.deferred(lambda: self._build(descriptor, depth))
        return self._cache[key]

    def _build(self, descriptor: Descriptor, depth: int) -> st.SearchStrategy[Message]:
        cls = GetMessageClass(descriptor)
        if depth > self.max_depth:
            return st.just(cls())
        plain = [f for f in descriptor.fields if f.containing_oneof is None or _synthetic(f)]
        oneofs = [o for o in descriptor.oneofs if not (len(o.fields) == 1 and _synthetic(o.fields[0]))]
        parts = {f.name: self.hinted(f, depth) for f in plain}
        for oneof in oneofs:
            choices = [st.tuples(st.just(f.name), self.hinted(f, depth, may_be_unset=False)) for f in oneof.fields]
            parts["\x00oneof:" + oneof.name] = st.one_of(choices) if self.oneof_set else st.one_of(choices) | st.none()
        return st.fixed_dictionaries(parts).map(lambda values: _fill(cls(), descriptor, values))


def _synthetic(field: FieldDescriptor) -> bool:
    """A proto3 `optional` field's own one-member oneof."""
    oneof = field.containing_oneof
    return oneof is not None and len(oneof.fields) == 1 and oneof.name == "_" + field.name


def _fill(msg: Message, descriptor: Descriptor, values: dict) -> Message:
    for name, value in values.items():
        if value is None:
            continue
        if name.startswith("\x00oneof:"):
            name, value = value
        _set(msg, descriptor.fields_by_name[name], value)
    return msg


def _set(msg: Message, field: FieldDescriptor, value) -> None:
    target = getattr(msg, field.name)
    if field.type == FD.TYPE_MESSAGE and field.message_type.GetOptions().map_entry:
        if field.message_type.fields_by_name["value"].type == FD.TYPE_MESSAGE:
            for k, v in value.items():
                target[k].CopyFrom(v)
        else:
            target.update(value)
    elif field.is_repeated:
        target.extend(value)
    elif field.type == FD.TYPE_MESSAGE:
        target.CopyFrom(value)
    else:
        setattr(msg, field.name, value)


def requests(descriptor: Descriptor, hints: Mapping[str, st.SearchStrategy] | None = None,
             max_depth: int = 3, max_items: int = 3, oneof_set: bool = False) -> st.SearchStrategy[Message]:
    """Messages of `descriptor`'s type, filled as the module docstring says (`oneof_set`: every
    oneof has a member set, e.g. an Action always has a kind)."""
    return _Builder(hints or {}, max_depth, max_items, oneof_set).message(descriptor)
