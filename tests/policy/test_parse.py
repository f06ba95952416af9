"""The action parser: all three syntaxes, round trips, safe repairs, typed errors."""

from __future__ import annotations

import pytest

from halo.agent import actions as A
from halo.agent.formats import ActionFormat, format_action
from halo.agent.parse import ParseErrorKind, parse_action

Q, J, B = ActionFormat.QWEN_COMPUTER_USE, ActionFormat.JSON, ActionFormat.BROWSERGYM
N = A.CoordinateSpace.NORMALIZED_1000

ROUND_TRIP = [
    A.ClickElement("12"), A.ClickElement("7", A.MouseButton.RIGHT), A.ClickElement("3", click_count=2),
    A.Fill("3", 'say "hi"\nthen go'), A.SelectOption("9", ("red", "blue")), A.SelectOption("9", ("red",)),
    A.Hover("4"), A.TypeText("hello"), A.TypeText("query", press_enter=True), A.KeyPress("Control+A"),
    A.KeyPress("Enter"), A.Scroll(delta_y=400.0), A.Scroll(delta_x=-200.0), A.Goto("http://127.0.0.1:8100/x"),
    A.GoBack(), A.GoForward(), A.Wait(1500), A.SendMessage("The answer is 42."), A.ReportInfeasible("no such item"),
    A.Noop(),
]


@pytest.mark.parametrize("fmt", [Q, J, B])
@pytest.mark.parametrize("action", ROUND_TRIP, ids=lambda a: A.describe(a)[:40])
def test_every_action_round_trips_through_every_format(action, fmt):
    text = format_action(action, fmt)
    parsed = parse_action(text, fmt)
    assert parsed.valid, (text, parsed.error)
    assert parsed.action == action and parsed.format == fmt and not parsed.repaired


def test_pointer_actions_keep_their_coordinate_convention():
    click = A.ClickAt(A.Point(500, 250, N))
    qwen = parse_action(format_action(click, Q), Q).action
    assert qwen == click  # Qwen keeps the 0..1000 grid; the env scales it to the viewport
    assert qwen.point.to_pixels(1280, 720) == (640.0, 180.0)
    pixels = A.ClickAt(A.Point(640, 360))
    assert parse_action(format_action(pixels, J), J).action == pixels
    assert parse_action(format_action(pixels, B), B).action == pixels
    # a pixel click written for Qwen lands on the 0..1000 grid
    assert parse_action(format_action(pixels, Q), Q).action == A.ClickAt(A.Point(500, 500, N))
    drag = A.Drag(A.Point(10, 20, N), A.Point(900, 800, N))
    assert parse_action(format_action(drag, Q), Q).action == drag


def test_qwen_native_output_with_thinking_text_is_clean():
    text = ('I need to open the search box first.\n<tool_call>\n{"name": "computer_use", "arguments": '
            '{"action": "left_click", "coordinate": [312, 48]}}\n</tool_call>')
    parsed = parse_action(text, Q)
    assert parsed.action == A.ClickAt(A.Point(312, 48, N)) and not parsed.repaired
    keys = parse_action('<tool_call>{"name":"computer_use","arguments":{"action":"key","keys":["ctrl","shift","t"]}}</tool_call>')
    assert keys.action == A.KeyPress("Control+Shift+T")
    done = parse_action('<tool_call>{"name": "computer_use", "arguments": {"action": "terminate", "status": "success"}}</tool_call>')
    assert isinstance(done.action, A.SendMessage)
    # OpenAI-style tool call: arguments as a JSON string
    s = parse_action('<tool_call>{"name": "computer_use", "arguments": "{\\"action\\": \\"answer\\", \\"text\\": \\"ok\\"}"}</tool_call>')
    assert s.action == A.SendMessage("ok")


@pytest.mark.parametrize("text, fmt, action, repairs", [
    ('```json\n{"action": "click", "bid": "12"}\n```', J, A.ClickElement("12"), {"code_fence"}),
    ('Sure! {"action": "click", "bid": "12"} That should open it.', J, A.ClickElement("12"), {"surrounding_prose"}),
    ("{'action': 'fill', 'bid': '3', 'text': \"it's\"}", J, A.Fill("3", "it's"), {"single_quotes"}),
    ('{"action": "type", "text": "x", "press_enter": True}', J, A.TypeText("x", True), {"python_literals"}),
    ('{"action": "click", "bid": "12",}', J, A.ClickElement("12"), {"trailing_comma"}),
    ('{"action": "click", "bid": "[12]"}', J, A.ClickElement("12"), {"bid_brackets"}),
    ('<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [1, 2]}', Q,
     A.ClickAt(A.Point(1, 2, N)), {"missing_close_tag", "closed_brackets"}),
    ("<tool_call>\n{'name': 'computer_use', 'arguments': {'action': 'answer', 'text': 'done'}}\n</tool_call>", Q,
     A.SendMessage("done"), {"single_quotes"}),
    ('```json\n{"name": "computer_use", "arguments": {"action": "scroll", "pixels": -300}}\n```', Q,
     A.Scroll(delta_y=300.0), {"code_fence", "missing_tool_call_tags"}),
    ('I will click the button.\nclick("12")\nThis submits the form.', B, A.ClickElement("12"), {"surrounding_prose"}),
    ("```python\nfill('3', 'hello')\n```", B, A.Fill("3", "hello"), {"code_fence"}),
    ('send_msg_to_user("The price is $5"', B, A.SendMessage("The price is $5"), {"closed_brackets"}),
])
def test_safe_repairs_are_applied_and_recorded(text, fmt, action, repairs):
    parsed = parse_action(text, fmt)
    assert parsed.valid, parsed.error
    assert parsed.action == action
    assert set(parsed.repairs) == repairs and parsed.repaired


def test_other_syntaxes_are_accepted_and_reported():
    parsed = parse_action('click("12")', J)
    assert parsed.action == A.ClickElement("12") and parsed.format == B
    parsed = parse_action('{"action": "click", "bid": "5"}', Q)
    assert parsed.action == A.ClickElement("5") and parsed.format == J


@pytest.mark.parametrize("text, fmt, kind", [
    ("", Q, ParseErrorKind.EMPTY),
    ("   \n", J, ParseErrorKind.EMPTY),
    ("I am not sure what to do here.", Q, ParseErrorKind.NO_ACTION),
    ('{"action": "click", "bid": 12 13}', J, ParseErrorKind.MALFORMED),
    ('<tool_call>{"name": "computer_use", "arguments": {"action": "fly"}}</tool_call>', Q, ParseErrorKind.UNKNOWN_ACTION),
    ('<tool_call>{"name": "browser", "arguments": {"action": "left_click"}}</tool_call>', Q, ParseErrorKind.UNKNOWN_ACTION),
    ('{"action": "teleport", "to": "mars"}', J, ParseErrorKind.UNKNOWN_ACTION),
    ('<tool_call>{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [1500, 20]}}</tool_call>', Q,
     ParseErrorKind.BAD_ARGUMENTS),
    ('<tool_call>{"name": "computer_use", "arguments": {"action": "left_click"}}</tool_call>', Q, ParseErrorKind.BAD_ARGUMENTS),
    ('{"action": "fill", "text": "no bid"}', J, ParseErrorKind.BAD_ARGUMENTS),
    ('{"action": "click", "x": 5000, "y": 10}', J, ParseErrorKind.BAD_ARGUMENTS),
    ("fill(\"3\")", B, ParseErrorKind.BAD_ARGUMENTS),
    ("click(some_variable)", B, ParseErrorKind.MALFORMED),
    ('tab_focus(2)', B, ParseErrorKind.UNKNOWN_ACTION),
    ('<tool_call>{"name": "computer_use", "arguments": {"action": "type", "text": "unfinished', Q, ParseErrorKind.MALFORMED),
])
def test_unrepairable_output_gives_a_typed_error(text, fmt, kind):
    parsed = parse_action(text, fmt)
    assert not parsed.valid and parsed.action is None
    assert parsed.error is not None and parsed.error.kind == kind, parsed.error
    assert parsed.error.message
