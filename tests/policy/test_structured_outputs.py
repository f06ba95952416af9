"""Constrained sampling: HALO's action grammar as a regex (halo.agent.grammar), sent to vLLM as
structured outputs (SampleRequest.output_regex), refused by backends that cannot honour it. (The
end-to-end check, vLLM sampling under the grammar and a local_lora run learning through it, is
tests/lora/test_local_lora_learns.py.)"""

from __future__ import annotations

import re

import pytest

from halo.agent import actions as A
from halo.agent.formats import ActionFormat, format_action
from halo.agent.grammar import action_regex, choice_regex, escape
from halo.agent.parse import parse_action
from halo.agent.prompt import PromptOptions, build_prompt
from halo.policy.backends.base import SampleParams
from halo.policy.backends.openai_compat import VllmBackend
from halo.policy.config import GatewayConfig, RouteConfig
from halo.policy.gateway import PolicyGateway, SampleCall
from halo.runtime.errors import FailedPrecondition
from tests.policy import pages

QWEN = ActionFormat.QWEN_COMPUTER_USE


def _every_kind() -> list[A.Action]:
    """One action of each kind the Qwen writer has a form for (and the variants it writes)."""
    def point(x: float, y: float) -> A.Point:
        return A.Point(x, y, A.CoordinateSpace.NORMALIZED_1000)

    return [
        A.ClickAt(point(500, 20)), A.ClickAt(point(0, 1000), A.MouseButton.RIGHT), A.ClickAt(point(3, 4), click_count=2),
        A.HoverAt(point(10, 10)), A.Drag(point(1, 2), point(999, 998)), A.TypeText('say "hi"\\ now'),
        A.TypeText("search", press_enter=True), A.KeyPress("Control+A"), A.Scroll(0, 400), A.Scroll(-120, 0),
        A.Wait(1500), A.Noop(), A.SendMessage("42 items"), A.ReportInfeasible("no such page"), A.ClickElement("12"),
        A.Hover("a7"), A.Fill("3", "Ada Lovelace"), A.SelectOption("7", ("pro", "plus")), A.Goto("https://example.com/a?b=1"),
        A.GoBack(), A.GoForward(),
    ]


@pytest.mark.parametrize("action", _every_kind(), ids=lambda a: type(a).__name__)
def test_every_action_the_qwen_writer_writes_is_in_the_grammar_and_parses_back(action):
    text = format_action(action, QWEN)
    assert re.fullmatch(action_regex(QWEN), text), text
    assert parse_action(text, QWEN).valid


@pytest.mark.parametrize("text", [
    "click the button",                                                               # prose
    'click("12")',                                                                    # another syntax
    '<tool_call>\n{"name": "computer_use", "arguments": {"action": "click_element", "bid": "12"}}\n</tool_call> ok',
    '<tool_call>\n{"name": "computer_use", "arguments": {"action": "fly", "bid": "12"}}\n</tool_call>',
    '<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [5000, 1]}}\n</tool_call>',
])
def test_the_grammar_refuses_what_is_not_one_written_action(text):
    assert not re.fullmatch(action_regex(QWEN), text)


def test_a_choice_regex_admits_exactly_its_menu_and_other_syntaxes_have_no_grammar_yet():
    menu = [A.ClickElement("4"), A.ClickElement("61"), A.Fill("3", "a.b (c)")]
    regex = choice_regex(QWEN, menu)
    for action in menu:
        assert re.fullmatch(regex, format_action(action, QWEN))
    assert not re.fullmatch(regex, format_action(A.ClickElement("6"), QWEN))
    assert not re.fullmatch(regex, format_action(A.ClickElement("611"), QWEN))
    assert re.fullmatch(choice_regex(ActionFormat.BROWSERGYM, menu), 'fill("3", "a.b (c)")')
    assert escape("a\n(b)*") == "a\\n\\(b\\)\\*"
    with pytest.raises(ValueError, match="at least one"):
        choice_regex(QWEN, [])
    with pytest.raises(ValueError, match="BROWSERGYM"):
        action_regex(ActionFormat.BROWSERGYM)


def _route(backend: str = "vllm") -> RouteConfig:
    return RouteConfig(name="r", backend=backend, base_url="http://127.0.0.1:9/v1", served_model="m")


def test_a_vllm_request_carries_the_regex_as_structured_outputs():
    prompt = build_prompt(pages.context(), PromptOptions())
    backend = VllmBackend(_route())
    constrained = backend.request_body(prompt, SampleParams(logprobs=True, output_regex="(a|b)"), None, 1)
    assert constrained["extra_body"]["structured_outputs"] == {"regex": "(a|b)"}
    free = backend.request_body(prompt, SampleParams(logprobs=True), None, 1)
    assert "structured_outputs" not in free["extra_body"]


async def test_a_route_that_cannot_constrain_its_output_refuses_a_regex():
    gateway = PolicyGateway(GatewayConfig(routes=[_route("openai_compatible")]))
    try:
        with pytest.raises(FailedPrecondition, match="cannot constrain its output"):
            await gateway.sample(SampleCall(model="r", ctx=pages.context(), output_regex="(a|b)"))
    finally:
        await gateway.close()
