"""Prompt building (bounded history, AXTree budget, formats, adapters) and critic/judge parsing."""

from __future__ import annotations

import base64

import pytest

from halo.agent import actions as A
from halo.agent.context import PastStep, context_from_proto
from halo.agent.formats import ActionFormat
from halo.agent.prompt import ImagePart, PromptOptions, build_prompt
from halo.policy.critique import NEUTRAL_SCORE, critic_prompt, parse_critique, parse_judge
from tests.policy import pages


def test_prompt_has_screenshot_goal_url_and_the_last_five_actions_in_the_answer_syntax():
    history = tuple(PastStep(A.ClickElement(str(i)), error="boom" if i == 7 else "") for i in range(8))
    prompt = build_prompt(pages.context(history), PromptOptions(action_format=ActionFormat.BROWSERGYM))
    system, user = prompt.messages
    assert system.role == "system" and 'click("12")' in system.text
    assert isinstance(user.parts[0], ImagePart) and user.parts[0].data == pages.context().page.screenshot
    text = user.text
    assert pages.GOAL in text and "http://127.0.0.1:8100/playground/" in text
    assert "last 5 of 8" in text and 'click("3")' in text and 'click("2")' not in text
    assert '8. click("7")  -> error: boom' in text
    assert prompt.notes["history_steps_dropped"] == 3
    assert '[4] button "Sign up"' in text


def test_qwen_prompt_declares_the_computer_use_tool_and_writes_history_as_arguments():
    prompt = build_prompt(pages.context((PastStep(pages.FILL_EMAIL),)))
    assert '"name": "computer_use"' in prompt.messages[0].text and "<tool_call>" in prompt.messages[0].text
    assert '1. {"name": "computer_use", "arguments": {"action": "fill", "bid": "3"' in prompt.messages[1].text


def test_axtree_budget_and_skips():
    ctx = pages.context()
    long_tree = "\n".join(f'[{i}] link "item number {i}"' for i in range(2000))
    ctx = type(ctx)(goal=ctx.goal, page=type(ctx.page)(**{**ctx.page.__dict__, "axtree": long_tree}))
    prompt = build_prompt(ctx, PromptOptions(max_axtree_chars=500))
    text = prompt.messages[1].text
    assert '[0] link "item number 0"' in text and '[1999]' not in text and prompt.notes["axtree_chars_dropped"] > 30000
    assert len(text) < 2000
    bare = build_prompt(ctx, PromptOptions(include_axtree=False, include_screenshot=False))
    assert "item number" not in bare.messages[1].text and not any(isinstance(p, ImagePart) for p in bare.messages[1].parts)


def test_openai_and_renderer_message_shapes():
    prompt = build_prompt(pages.context(), PromptOptions(action_format=ActionFormat.JSON))
    messages = prompt.to_openai_messages()
    assert messages[0] == {"role": "system", "content": prompt.messages[0].text}
    image, text = messages[1]["content"]
    assert image["type"] == "image_url" and image["image_url"]["url"].startswith("data:image/png;base64,")
    assert base64.b64decode(image["image_url"]["url"].split(",", 1)[1]) == pages.context().page.screenshot
    assert text["type"] == "text" and pages.GOAL in text["text"]
    rendered = prompt.to_renderer_messages()
    assert rendered[1]["content"][0]["type"] == "image" and rendered[1]["content"][0]["image"].size == (1280, 720)


def test_policy_input_round_trips_through_the_proto():
    ctx = pages.context((PastStep(pages.FILL_EMAIL, error="x", raw_text='fill("3", "bob@example.com")'),))
    from halo.agent.context import context_to_proto

    back = context_from_proto(context_to_proto(ctx))
    assert back.goal == ctx.goal and back.page.elements == ctx.page.elements and back.history == ctx.history
    assert back.page.screenshot == ctx.page.screenshot


def test_critic_prompt_lists_candidates_and_critique_parsing():
    prompt = critic_prompt(pages.context(), [pages.SIGNUP_CLICK, pages.FILL_EMAIL], PromptOptions())
    text = prompt.messages[1].text
    assert '1. {"action": "click", "bid": "4"}' in text and "2. {\"action\": \"fill\"" in text
    assert isinstance(prompt.messages[1].parts[0], ImagePart)
    ok = parse_critique('```json\n{"scores": [0.2, 1.4], "rationale": "fill first"}\n```', 2)
    assert ok.parsed and ok.scores == [0.2, 1.0] and ok.rationale == "fill first"
    wrong_count = parse_critique('{"scores": [0.2]}', 2)
    assert not wrong_count.parsed and wrong_count.scores == [NEUTRAL_SCORE] * 2
    assert not parse_critique("I like the second one", 2).parsed


@pytest.mark.parametrize("text, passed, score, parsed", [
    ('{"passed": true, "score": 0.9, "rationale": "matches"}', True, 0.9, True),
    ("{'passed': False, 'rationale': 'wrong price'}", False, 0.0, True),
    ("Yes. The answer states $4.99.", True, 1.0, True),
    ("no, it names another item", False, 0.0, True),
    ("The answer might be right.", False, 0.0, False),
])
def test_judge_parsing(text, passed, score, parsed):
    verdict = parse_judge(text)
    assert (verdict.passed, verdict.score, verdict.parsed) == (passed, score, parsed)
