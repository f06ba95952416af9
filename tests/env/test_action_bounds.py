"""Bad input is never an infrastructure fault: an action's inputs outside their bounds
(halo.agent.bounds) are INVALID_ARGUMENT before anything runs, and odd inputs within bounds are
ordinary steps. Neither ever ends in an environment failure or closes the session: a trainer that
rolled such an episode out again would do so forever while its policy kept producing the input.

Real env service on loopback (the session's stack), real Chromium, a real replica (omnizon's
search box and department drop-down)."""

from __future__ import annotations

import asyncio
import json
import math
import re
import time

import grpc
import pytest

from halo.agent import actions as A
from halo.agent import bounds
from halo.agent.parse import parse_action
from halo.agent.syntax.common import ParseErrorKind
from halo.client.env import observation_options
from halo.env.execute import ExecLimits
from halo.errors import InvalidArgument
from halo.v1 import common_pb2 as cpb
from halo.v1 import env_pb2 as pb
from halo.v1 import env_pb2_grpc as rpc
from tests.env.test_grpcurl import grpcurl_binary

TASK = "omnizon-3"
TEXT_ONLY = observation_options(screenshot=False)
FIVE_MB = 5 * 1024 * 1024

NORM = cpb.COORDINATE_SPACE_NORMALIZED_1000


def _point(x: float, y: float, space: int = cpb.COORDINATE_SPACE_PIXELS) -> cpb.Point:
    return cpb.Point(x=x, y=y, space=space)


def _widgets(observation: cpb.Observation) -> tuple[str, str]:
    """The bids of the replica's search box and its department <select>."""
    search = next(e.bid for e in observation.elements if e.role == "searchbox")
    select = next(e.bid for e in observation.elements if e.role == "combobox")
    return search, select


# ------------------------------------------------------------------ the bounds themselves, no browser

#: per kind: the largest action within bounds, and one just past a bound with the refusal's words
EDGES: dict[str, tuple[A.Action, A.Action, str]] = {
    "click_at": (A.ClickAt(A.Point(16_384, 16_384), click_count=3), A.ClickAt(A.Point(10, 10), click_count=4),
                 "click_at.click_count is 4; it must be 1 to 3"),
    "click_element": (A.ClickElement("9" * 32), A.ClickElement("9" * 33), "click_element.bid is 33 characters; at most 32"),
    "fill": (A.Fill("1", "x" * bounds.MAX_FILL_CHARS), A.Fill("1", "x" * FIVE_MB),
             "fill.text is 5,242,880 characters; at most 8,192"),
    "select_option": (A.SelectOption("1", ("v" * 1024,) * 100), A.SelectOption("1", ("v",) * 101),
                      "select_option.values has 101 values; at most 100"),
    "hover": (A.Hover("1"), A.Hover("1" * 40), "hover.bid is 40 characters; at most 32"),
    "hover_at": (A.HoverAt(A.Point(1000, 0, A.CoordinateSpace.NORMALIZED_1000)),
                 A.HoverAt(A.Point(1000.5, 0, A.CoordinateSpace.NORMALIZED_1000)),
                 "hover_at.point.x is 1000.5; it must be a finite number from 0 to 1000"),
    "type_text": (A.TypeText("t" * bounds.MAX_TYPE_CHARS), A.TypeText("t" * 513), "type_text.text is 513 characters; at most 512"),
    "key_press": (A.KeyPress("k" * 64), A.KeyPress("k" * 65), "key_press.keys is 65 characters; at most 64"),
    "scroll": (A.Scroll(-1e6, 1e6), A.Scroll(0, math.nan), "scroll.delta_y is nan"),
    "drag": (A.Drag(A.Point(0, 0), A.Point(16_384, 0)), A.Drag(A.Point(-1, 0), A.Point(5, 5)), "drag.from.x is -1"),
    "goto": (A.Goto("u" * 8192), A.Goto("u" * 8193), "goto.url is 8,193 characters; at most 8,192"),
    "go_back": (A.GoBack(), None, ""),
    "go_forward": (A.GoForward(), None, ""),
    "wait": (A.Wait(60_000), A.Wait(60_001), "wait.milliseconds is 60001; it must be a finite number from 0 to 60000"),
    "send_message": (A.SendMessage("m" * 20_000), A.SendMessage("m" * 20_001), "send_message.text is 20,001 characters"),
    "report_infeasible": (A.ReportInfeasible("r" * 20_000), A.ReportInfeasible("r" * 20_001), "report_infeasible.reason is 20,001"),
    "noop": (A.Noop(), None, ""),
}


def test_every_action_kind_has_its_edge_cases():
    assert set(EDGES) == set(A.ACTION_TYPES)


@pytest.mark.parametrize("kind", sorted(EDGES))
def test_the_largest_action_within_bounds_passes_and_one_past_names_field_size_and_bound(kind):
    inside, outside, words = EDGES[kind]
    bounds.check(inside)
    if outside is not None:
        with pytest.raises(bounds.ActionOutOfBounds, match=re.escape(words)):
            bounds.check(outside)


def test_the_parser_refuses_what_the_env_would():
    parsed = parse_action(json.dumps({"action": "type", "text": "t" * 513}), width=1280, height=720)
    assert not parsed.valid and parsed.error.kind == ParseErrorKind.BAD_ARGUMENTS
    assert "type_text.text is 513 characters; at most 512" in parsed.error.message
    assert parse_action(json.dumps({"action": "type", "text": "t" * 512})).valid


# ------------------------------------------------------------------ against a live session

async def test_a_5mb_fill_into_a_replica_search_box_is_invalid_argument_and_the_session_goes_on(stack):
    """The call as a client of the raw contract makes it (a generated stub, as grpcurl would)."""
    size = 64 * 1024 * 1024
    options = [("grpc.max_send_message_length", size), ("grpc.max_receive_message_length", size)]
    async with grpc.aio.insecure_channel(stack.env_target, options=options) as channel:
        stub = rpc.EnvServiceStub(channel)
        created = await stub.CreateSession(pb.CreateSessionRequest(task_id=TASK, observation=TEXT_ONLY), timeout=60)
        sid = created.session_id
        search, _ = _widgets(created.observation)
        try:
            huge = cpb.Action(fill=cpb.Fill(bid=search, text="x" * FIVE_MB))
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await stub.Step(pb.StepRequest(session_id=sid, action=huge, observation=TEXT_ONLY), timeout=60)
            assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert "fill.text is 5,242,880 characters; at most 8,192" in refused.value.details()

            stepped = await stub.Step(pb.StepRequest(session_id=sid, action=cpb.Action(fill=cpb.Fill(bid=search, text="headphones")),
                                                     observation=TEXT_ONLY), timeout=60)
            assert stepped.action_ok and not stepped.env_failure, stepped.action_error
            assert stepped.observation.step_index == 1   # the refused fill took no step
            box = next(e for e in stepped.observation.elements if e.bid == search)
            assert box.value == "headphones"
        finally:
            closed = await stub.CloseSession(pb.CloseSessionRequest(session_id=sid), timeout=60)
        assert closed.was_open   # open until closed here: the refusal closed nothing


async def test_grpcurl_sees_the_5mb_fill_refused_with_invalid_argument(stack, env):
    created = await env.create_session(TASK, observation=TEXT_ONLY)
    search, _ = _widgets(created.observation)
    try:
        request = json.dumps({"session_id": created.session_id, "action": {"fill": {"bid": search, "text": "x" * FIVE_MB}}})
        proc = await asyncio.create_subprocess_exec(
            grpcurl_binary(), "-plaintext", "-d", "@", stack.env_target, "halo.v1.EnvService/Step",
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        _, err = await asyncio.wait_for(proc.communicate(request.encode()), timeout=60)
        assert proc.returncode != 0
        assert "InvalidArgument" in err.decode() and "fill.text is 5,242,880 characters" in err.decode(), err.decode()[:500]
        assert (await env.observe(created.session_id, TEXT_ONLY)).step_index == 0
    finally:
        assert await env.close_session(created.session_id)


def _odd_actions(search: str, select: str) -> list[cpb.Action]:
    """Oversized, empty and odd inputs of every action kind (the last one ends the episode)."""
    nan, inf = math.nan, math.inf
    odd_text = "\x00\x01\x1b\x7f\u202e日本語🎉\u200b\t"
    actions = [cpb.Action(**{kind: body}) for kind, body in [
        ("click_at", cpb.ClickAt(point=_point(nan, 10))),
        ("click_at", cpb.ClickAt(point=_point(-inf, 10))),
        ("click_at", cpb.ClickAt(point=_point(1e300, -1e300))),
        ("click_at", cpb.ClickAt(point=_point(1001, 5, NORM))),
        ("click_at", cpb.ClickAt(point=_point(5000, 10))),            # within bounds, off this viewport
        ("click_at", cpb.ClickAt(point=_point(0, 0), click_count=2**32 - 1)),
        ("click_element", cpb.ClickElement(bid="")),
        ("click_element", cpb.ClickElement(bid="１２")),                 # full-width digits
        ("click_element", cpb.ClickElement(bid="9" * 100_000)),
        ("click_element", cpb.ClickElement(bid=search, click_count=1000)),
        ("fill", cpb.Fill(bid=search, text="x" * FIVE_MB)),
        ("fill", cpb.Fill(bid=search, text="x" * (bounds.MAX_FILL_CHARS + 1))),
        ("fill", cpb.Fill(bid=search, text="")),
        ("fill", cpb.Fill(bid=search, text=odd_text)),
        ("fill", cpb.Fill(bid=select, text="not a text field")),
        ("fill", cpb.Fill(bid="", text="x")),
        ("select_option", cpb.SelectOption(bid=select)),
        ("select_option", cpb.SelectOption(bid=select, values=["x"] * 10_000)),
        ("select_option", cpb.SelectOption(bid=select, values=["y" * 100_000])),
        ("select_option", cpb.SelectOption(bid=select, values=["", odd_text])),
        ("select_option", cpb.SelectOption(bid=search, values=["a"])),
        ("hover", cpb.Hover(bid="")),
        ("hover", cpb.Hover(bid="12\n")),
        ("hover", cpb.Hover(bid="1" * 1_000)),
        ("hover_at", cpb.HoverAt(point=_point(nan, nan))),
        ("hover_at", cpb.HoverAt(point=_point(1000, 1000, NORM))),
        ("type_text", cpb.TypeText(text="t" * FIVE_MB)),
        ("type_text", cpb.TypeText(text="t" * (bounds.MAX_TYPE_CHARS + 1))),
        ("type_text", cpb.TypeText(text="")),
        ("type_text", cpb.TypeText(text=odd_text + "\r\n")),
        ("key_press", cpb.KeyPress(keys="")),
        ("key_press", cpb.KeyPress(keys="K" * 1_000_000)),
        ("key_press", cpb.KeyPress(keys="\x00")),
        ("key_press", cpb.KeyPress(keys="Control+")),
        ("key_press", cpb.KeyPress(keys="🎉")),
        ("key_press", cpb.KeyPress(keys="Control+Shift+Alt+Meta+ArrowDown")),
        ("scroll", cpb.Scroll(delta_y=nan)),
        ("scroll", cpb.Scroll(delta_x=-inf)),
        ("scroll", cpb.Scroll(delta_y=1e308)),
        ("scroll", cpb.Scroll(delta_y=bounds.MAX_SCROLL_PX, at=_point(-5, 1e9))),
        ("scroll", cpb.Scroll(delta_y=-bounds.MAX_SCROLL_PX, at=_point(500, 500, NORM))),
        ("drag", cpb.Drag(**{"from": _point(nan, 0), "to": _point(5, 5)})),
        ("drag", cpb.Drag(**{"from": _point(5, 5), "to": _point(1e12, 5)})),
        ("drag", cpb.Drag(**{"from": _point(0, 0, NORM), "to": _point(1000, 1000, NORM)})),
        ("goto", cpb.Goto(url="")),
        ("goto", cpb.Goto(url="/" + "u" * FIVE_MB)),
        ("goto", cpb.Goto(url="\x00javascript:alert(1)")),
        ("goto", cpb.Goto(url="/omnizon/🎉?q=日本語")),
        ("go_back", cpb.GoBack()),
        ("go_forward", cpb.GoForward()),
        ("wait", cpb.Wait(milliseconds=2**32 - 1)),
        ("wait", cpb.Wait(milliseconds=0)),
        ("send_message", cpb.SendMessage(text="m" * FIVE_MB)),
        ("report_infeasible", cpb.ReportInfeasible(reason="r" * (bounds.MAX_MESSAGE_CHARS + 1))),
        ("noop", cpb.Noop()),
        ("report_infeasible", cpb.ReportInfeasible(reason=odd_text)),
    ]]
    assert {a.WhichOneof("kind") for a in actions} == set(A.ACTION_TYPES)
    return actions


async def test_odd_inputs_of_every_action_kind_are_refused_or_stepped_never_an_env_failure(env):
    created = await env.create_session(TASK, observation=TEXT_ONLY)
    sid = created.session_id
    search, select = _widgets(created.observation)
    refused, stepped = [], []
    try:
        for action in _odd_actions(search, select):
            what = str(action)[:200]
            try:
                r = await env.step(sid, action, observation=TEXT_ONLY)
            except InvalidArgument as exc:
                refused.append(action.WhichOneof("kind"))
                assert len(str(exc)) < 300, what   # names the field, its size and the bound, not the input
            else:
                stepped.append(action.WhichOneof("kind"))
                assert not r.env_failure, (what, r.env_failure_reason)
                assert len(r.action_error) < 2100, what
                assert r.observation.step_index == len(stepped), what   # a refused action took no step
        assert r.done and r.termination == pb.TERMINATION_INFEASIBLE   # the last, odd-but-bounded reason ends it
        state = await env.get_state(sid)                               # open until closed: its state reads
        assert state.done and state.step_index == len(stepped)
        assert {"fill", "type_text", "key_press", "scroll", "goto", "select_option", "wait", "send_message"} <= set(refused)
    finally:
        assert await env.close_session(sid)


async def test_the_longest_fill_and_type_within_bounds_finish_far_inside_their_timeouts(env):
    """The worst case the bounds allow: the longest fill, then the longest type into the field it
    filled (every keystroke into a long value is slower)."""
    created = await env.create_session(TASK, observation=TEXT_ONLY)
    sid = created.session_id
    search, _ = _widgets(created.observation)
    try:
        started = time.monotonic()
        filled = await env.step(sid, A.Fill(search, "f" * bounds.MAX_FILL_CHARS), observation=TEXT_ONLY)
        fill_s = time.monotonic() - started
        assert filled.action_ok and not filled.env_failure, filled.action_error
        await env.step(sid, A.KeyPress("End"), observation=TEXT_ONLY)
        started = time.monotonic()
        typed = await env.step(sid, A.TypeText("t" * bounds.MAX_TYPE_CHARS), observation=TEXT_ONLY)
        type_s = time.monotonic() - started
        assert typed.action_ok and not typed.env_failure, (typed.action_error, typed.env_failure_reason)
        print(f"longest fill: step {fill_s:.2f}s, action {filled.action_duration.ToNanoseconds() / 1e9:.2f}s (timeout 3 s); "
              f"longest type into the filled field: step {type_s:.2f}s, action {typed.action_duration.ToNanoseconds() / 1e9:.2f}s "
              f"(its step budget {ExecLimits().step_budget_for(A.TypeText('t' * bounds.MAX_TYPE_CHARS)):g} s)")
    finally:
        await env.close_session(sid)
