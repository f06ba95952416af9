"""Property-based fuzzing of the action parser (halo.agent.parse / repair / formats).

Whatever a model writes, `parse_action` returns a ParsedAction and never raises: either a typed
ParseError (kind + non-empty message) or an action that survives the protobuf round trip the env,
reward and gateway services put it through (action_to_proto -> bytes -> action_from_proto).
"""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from halo.agent import actions as A
from halo.agent.formats import ActionFormat, format_action
from halo.agent.parse import ParsedAction, ParseError, ParseErrorKind, parse_action
from halo.agent.repair import close_brackets, find_balanced, loads_lenient, strip_code_fence
from halo.v1 import common_pb2

FORMATS = list(ActionFormat)
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check(parsed: ParsedAction) -> None:
    """The parser's contract, for any input."""
    assert isinstance(parsed, ParsedAction)
    if parsed.valid:
        assert parsed.error is None and parsed.format in FORMATS
        assert type(parsed.action) in A.ACTION_TYPES.values()
        msg = A.action_to_proto(parsed.action, raw_text="fuzz")
        wire = common_pb2.Action.FromString(msg.SerializeToString())
        assert A.action_from_proto(wire) == parsed.action
    else:
        assert parsed.action is None
        assert isinstance(parsed.error, ParseError) and isinstance(parsed.error.kind, ParseErrorKind)
        assert parsed.error.message and str(parsed.error)


def parse_all(text: str) -> None:
    for fmt in FORMATS:
        check(parse_action(text, fmt))


# ------------------------------------------------------------------------------- strategies

# Text a model may write, with the syntax's own characters over-represented.
SYNTAX = list('{}[]()"\':,.\\\n `<>/=-+0123456789eE') + ["<tool_call>", "</tool_call>", "```", "```json\n",
                                                         "computer_use", '"name"', '"arguments"', '"action"',
                                                         "NaN", "Infinity", "True", "None", "click(", "fill("]
model_text = st.one_of(
    st.text(),
    st.lists(st.one_of(st.sampled_from(SYNTAX), st.text(max_size=5)), max_size=60).map("".join),
)

coord = st.floats(min_value=-50, max_value=1400, allow_nan=False)
points = st.builds(A.Point, coord, coord, st.sampled_from(list(A.CoordinateSpace)))
short_text = st.text(max_size=30)
bid = st.text(alphabet="abc0123456789", min_size=1, max_size=4)
buttons = st.sampled_from(list(A.MouseButton))
actions = st.one_of(
    st.builds(A.ClickAt, points, buttons, st.integers(1, 3)),
    st.builds(A.ClickElement, bid, buttons, st.integers(1, 3)),
    st.builds(A.Fill, bid, short_text),
    st.builds(A.SelectOption, bid, st.lists(short_text, min_size=1, max_size=3).map(tuple)),
    st.builds(A.Hover, bid),
    st.builds(A.HoverAt, points),
    st.builds(A.TypeText, short_text, st.booleans()),
    st.builds(A.KeyPress, st.sampled_from(["Enter", "Control+A", "Shift+Tab", "a", "ArrowDown"])),
    st.builds(A.Scroll, st.integers(-2000, 2000).map(float), st.integers(-2000, 2000).map(float), st.none() | points),
    st.builds(A.Drag, points, points),
    st.builds(A.Goto, short_text),
    st.just(A.GoBack()), st.just(A.GoForward()),
    st.builds(A.Wait, st.integers(0, 60_000)),
    st.builds(A.SendMessage, short_text),
    st.builds(A.ReportInfeasible, short_text),
    st.just(A.Noop()),
)

# Actions whose written form reads back exactly in all three syntaxes (no rounding of coordinates,
# no text the surrounding syntax would cut: fences, tags, a trailing newline meaning Enter).
clean_text = st.text(alphabet=st.characters(blacklist_characters="`<\r\n", blacklist_categories=("Cs",)), max_size=30)
exact_actions = st.one_of(
    st.builds(A.ClickElement, bid),
    st.builds(A.Fill, bid, clean_text),
    st.builds(A.SelectOption, bid, st.lists(clean_text, min_size=1, max_size=3).map(tuple)),
    st.builds(A.Hover, bid),
    st.builds(A.TypeText, clean_text),
    st.builds(A.Scroll, st.just(0.0), st.integers(-2000, 2000).filter(bool).map(float)),
    st.builds(A.Goto, clean_text),
    st.just(A.GoBack()), st.just(A.GoForward()),
    st.builds(A.Wait, st.integers(1, 6000).map(lambda n: n * 10)),
    st.builds(A.SendMessage, clean_text),
    st.builds(A.ReportInfeasible, clean_text),
    st.just(A.Noop()),
)

BAD_NUMBERS = ["NaN", "-NaN", "Infinity", "-Infinity", "1e400", "-1e400", "1e308", "9" * 5000, "-1", "-0",
               "0x" + "f" * 5000, "4294967296", "2.5", "0", "1_000", "1e-400", "[1, 2]", '"12"', "null", "true"]
GARBAGE = ["\x00", "\ufeff", "\U0001f600", "é", "\u202e", "\\ud800", "\\", "\\u", '"', "'", "{", "}", "[", "]",
           "(", ")", ",", ":", "```", "<tool_call>", "</tool_call>", "{" * 300, "[" * 2000 + "]" * 2000, "(" * 500]
NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


@st.composite
def mutated(draw, source: st.SearchStrategy[str]) -> str:
    """A written action, damaged the ways model output gets damaged, 1-4 times over."""
    text = draw(source)
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["truncate", "swap_quotes", "swap_one_quote", "number", "insert", "delete",
                                   "duplicate", "wrap", "surrogate"]))
        pos = draw(st.integers(0, len(text)))
        if op == "truncate":
            text = text[:pos]
        elif op == "swap_quotes":
            text = text.translate(str.maketrans({'"': "'", "'": '"'}))
        elif op == "swap_one_quote" and '"' in text:
            i = [m.start() for m in re.finditer('"', text)]
            j = draw(st.sampled_from(i))
            text = text[:j] + draw(st.sampled_from(["'", "`", "\u201c", ""])) + text[j + 1:]
        elif op == "number" and NUMBER.search(text):
            spans = [m.span() for m in NUMBER.finditer(text)]
            a, b = draw(st.sampled_from(spans))
            text = text[:a] + draw(st.sampled_from(BAD_NUMBERS)) + text[b:]
        elif op == "insert":
            text = text[:pos] + draw(st.one_of(st.sampled_from(GARBAGE), st.text(max_size=8))) + text[pos:]
        elif op == "delete" and text:
            end = draw(st.integers(pos, min(len(text), pos + 5)))
            text = text[:pos] + text[end:]
        elif op == "duplicate":
            end = draw(st.integers(pos, len(text)))
            text = text[:end] + text[pos:end] + text[end:]
        elif op == "wrap":
            before, after = draw(st.sampled_from([("```json\n", "\n```"), ("Sure: ", " done."), ("[", "]"),
                                                  ("<tool_call>", ""), ("", "</tool_call>"), ('{"x": ', "}"),
                                                  ("noop(", ")"), ("```", "")]))
            text = before + text + after
        elif op == "surrogate" and '"' in text:
            j = text.rfind('"')
            text = text[:j] + "\\ud83d" + text[j:]
    return text


written = st.builds(format_action, actions, st.sampled_from(FORMATS))

json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=12),
    st.sampled_from(["left", "right", "middle", "success", "failure", "down", "up", "ctrl", "Enter", "12", "[12]",
                     "norm1000", "\ud800", ""]),
)
json_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
                           max_leaves=12)
ARG_NAMES = ["action", "type", "name", "coordinate", "start_coordinate", "keys", "key", "text", "value", "pixels",
             "time", "status", "bid", "options", "option", "values", "url", "button", "click_count", "x", "y",
             "space", "dx", "dy", "delta_x", "delta_y", "direction", "amount", "from", "to", "start", "end",
             "seconds", "ms", "milliseconds", "reason", "press_enter", "message"]
ACTION_NAMES = ["left_click", "click", "double_click", "triple_click", "right_click", "middle_click", "mouse_move",
                "left_click_drag", "type", "key", "scroll", "hscroll", "wait", "answer", "terminate",
                "click_element", "fill", "select_option", "hover_element", "goto", "back", "forward", "press",
                "drag", "send_msg_to_user", "report_infeasible", "hover", "noop", "select", "sleep", "tap"]
argument_objects = st.builds(
    lambda action, args: {"action": action, **args},
    st.sampled_from(ACTION_NAMES) | json_scalars,
    st.dictionaries(st.sampled_from(ARG_NAMES[1:]), json_values, max_size=4),
)


def as_formats(args: dict) -> list[str]:
    body = json.dumps(args, ensure_ascii=False)
    call = ", ".join(repr(v) for k, v in args.items() if k != "action")
    return [
        body,
        "<tool_call>" + json.dumps({"name": "computer_use", "arguments": args}, ensure_ascii=False) + "</tool_call>",
        "<tool_call>" + json.dumps({"name": "computer_use", "arguments": body}) + "</tool_call>",
        f"{args['action']}({call})" if isinstance(args["action"], str) else f"click({call})",
    ]


# ------------------------------------------------------------------------------------ tests

@FUZZ
@given(model_text)
def test_arbitrary_text_never_raises(text):
    parse_all(text)


@FUZZ
@given(mutated(written))
def test_mutated_written_actions_never_raise(text):
    parse_all(text)


@FUZZ
@given(argument_objects)
def test_random_arguments_in_every_syntax_never_raise(args):
    for text in as_formats(args):
        parse_all(text)


@FUZZ
@given(mutated(st.builds(as_formats, argument_objects).flatmap(st.sampled_from)))
def test_mutated_random_arguments_never_raise(text):
    parse_all(text)


@FUZZ
@given(actions, st.sampled_from(FORMATS))
def test_every_written_action_parses_back_valid(action, fmt):
    parsed = parse_action(format_action(action, fmt), fmt)
    check(parsed)
    if not isinstance(action, (A.ClickAt, A.HoverAt, A.Drag)) and not (isinstance(action, A.Scroll) and action.at):
        # pointer actions may leave the viewport or the 0..1000 grid (a typed error, checked above)
        assert parsed.valid, (action, parsed.error)


@FUZZ
@given(exact_actions, st.sampled_from(FORMATS))
def test_written_actions_read_back_exactly(action, fmt):
    text = format_action(action, fmt)
    parsed = parse_action(text, fmt)
    assert parsed.valid and parsed.action == action and parsed.format == fmt and not parsed.repaired, (text, parsed)


@FUZZ
@given(model_text, st.sampled_from(["{", "[", "("]))
def test_repair_helpers_never_raise(text, opener):
    body, _ = strip_code_fence(text)
    span = find_balanced(text, opener)
    assert span is None or 0 <= span[0] < span[1] <= len(text)
    closed, changed = close_brackets(text)
    assert closed.startswith(text) and changed == (closed != text)
    try:
        loads_lenient(text)
    except ValueError as exc:
        assert str(exc)


# Inputs that must parse to a typed result or a typed error, never an exception: the cases the fuzz
# generates rarely, kept as fixed examples.
REGRESSIONS = [
    '{"action": "wait", "seconds": NaN}',                                   # int(NaN): ValueError
    '{"action": "scroll", "dy": ' + "9" * 400 + "}",                         # float(huge int): OverflowError
    "noop(1e400)",                                                          # int(inf): OverflowError
    "noop(-1)",                                                             # Wait(-1): proto uint32 ValueError
    '{"action": "wait", "ms": 5000000000}',                                 # over uint32
    '<tool_call>{"name": "computer_use", "arguments": {"action": "wait", "time": -3}}</tool_call>',
    '<tool_call>{"name": "computer_use", "arguments": {"action": "click_element", "bid": "1", "click_count": 0}}</tool_call>',
    '<tool_call>{"name": "computer_use", "arguments": {"action": "click_element", "bid": "1", "click_count": -2}}</tool_call>',
    '<tool_call>{"name": "computer_use", "arguments": "{\\"action\\": ' + "9" * 5000 + '}"}</tool_call>',  # digit limit
    '<tool_call>{"name": "computer_use", "arguments": "' + "[" * 100_000 + '"}</tool_call>',  # RecursionError
    '{"action": "fill", "bid": "1", "text": "\\ud800"}',                      # lone surrogate: proto UnicodeEncodeError
    '{"action": "select_option", "bid": "1", "options": ["ok", "\\udfff"]}',
    "click({1, []})",                                                       # literal_eval TypeError
    "click({[]: 1})",
    "click(0x" + "f" * 5000 + ")",                                           # str(huge int): ValueError
    'click("1", 0x' + "f" * 5000 + ")",
    '{"action": "scroll", "dy": Infinity}',                                 # accepted as a valid, infinite scroll
]


def test_regressions_found_by_the_fuzz():
    for text in REGRESSIONS:
        for fmt in FORMATS:
            parsed = parse_action(text, fmt)
            check(parsed)
            assert not parsed.valid, (text, parsed.action)
            assert parsed.error.kind in (ParseErrorKind.BAD_ARGUMENTS, ParseErrorKind.MALFORMED), (text, parsed.error)


@pytest.mark.parametrize("fmt", FORMATS)
def test_pointer_actions_on_no_page_are_written_and_read_back_as_errors(fmt):
    """A history may hold an action the env rejected for NaN or infinite coordinates (the RPC fuzz sent
    such a point): writing it into a prompt must not raise, and reading it back is a typed error."""
    for value in (float("nan"), float("inf"), -float("inf")):
        for space in A.CoordinateSpace:
            bad = A.Point(value, 1.0, space)
            for action in (A.ClickAt(bad), A.HoverAt(bad), A.Drag(bad, A.Point(1.0, value, space))):
                parsed = parse_action(format_action(action, fmt), fmt)
                check(parsed)
                assert not parsed.valid, (action, parsed.action)
            # the JSON and BrowserGym scrolls carry no position: only Qwen's writes (and rejects) it
            check(parse_action(format_action(A.Scroll(0.0, 100.0, bad), fmt), fmt))
