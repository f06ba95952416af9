"""A Step never hangs, whatever came before it: a scroll too large for Chromium's input pipeline is
refused (INVALID_ARGUMENT) before it reaches the page, and a page whose renderer stopped answering
ends the step as an environment failure within the step budget (ExecLimits.step_budget_s), the
session closed."""

from __future__ import annotations

import time

import pytest

from halo.agent import actions as A
from halo.agent.bounds import MAX_SCROLL_PX
from halo.errors import InvalidArgument
from tests.env.test_warm_contexts import TEXT_ONLY, manager_on_own_sites


async def test_a_scroll_out_of_range_is_refused_and_the_page_keeps_taking_keys(stack):
    async with manager_on_own_sites(stack, warm_contexts=0) as (_, manager):
        session, _ = await manager.create("playground-signup", options=TEXT_ONLY)
        for delta in (1e308, float("inf"), float("nan"), -(MAX_SCROLL_PX + 1)):
            with pytest.raises(InvalidArgument, match="scroll.delta_x is"):
                await manager.step(session.id, A.Scroll(delta_x=delta), TEXT_ONLY)
        # a wheel of ~1e308 px reaching Chromium left every later key press unanswered
        outcome = await manager.step(session.id, A.KeyPress(keys="\\"), TEXT_ONLY)
        assert outcome.action_ok and not outcome.env_failure, outcome
        outcome = await manager.step(session.id, A.Scroll(delta_y=MAX_SCROLL_PX), TEXT_ONLY)
        assert outcome.action_ok, outcome
        await manager.close_session(session.id)


async def test_a_wedged_renderer_is_an_environment_failure_within_the_step_budget(stack):
    async with manager_on_own_sites(stack, warm_contexts=0, action_timeout_ms=500, navigation_timeout_ms=1000,
                                    max_wait_ms=500) as (_, manager):
        budget = manager.limits.step_budget_s
        session, _ = await manager.create("playground-signup", options=TEXT_ONLY)
        await session.page.evaluate("setTimeout(() => { for (;;) {} }, 0)")   # the renderer's main thread never returns
        started = time.monotonic()
        outcome = await manager.step(session.id, A.KeyPress(keys="a"), TEXT_ONLY)
        took = time.monotonic() - started
        assert outcome.env_failure and "did not answer" in outcome.env_failure_reason, outcome
        assert took < budget + 10, f"the step took {took:.1f}s, budget {budget:g}s"   # closing the context included
        assert session.id not in manager._sessions   # closed: its slot is free for the next create


_STALLING_AND_COVERED = """() => {
  document.body.insertAdjacentHTML("beforeend",
    '<button data-halo-bid="9001" id="stalls">stalls</button>' +
    '<div style="position: relative"><button data-halo-bid="9002">covered</button>' +
    '<div style="position: absolute; inset: 0; background: white"></div></div>');
  // the page answers the press only after two seconds: the click is dispatched, never refused
  document.getElementById("stalls").addEventListener("mousedown", () => { const t = Date.now(); while (Date.now() - t < 2000) {} });
}"""


async def test_an_element_action_that_outlasts_its_timeout_unrefused_is_an_environment_failure(stack):
    """A timeout is the agent's error only when the page refused the action (the element covered,
    hidden, disabled, ...); one the page never answered in time is the machine's: an environment
    failure, so that a slow machine never turns a right action into a wrong one."""
    async with manager_on_own_sites(stack, warm_contexts=0, action_timeout_ms=500) as (_, manager):
        session, _ = await manager.create("playground-signup", options=TEXT_ONLY)
        await session.page.evaluate(_STALLING_AND_COVERED)
        outcome = await manager.step(session.id, A.ClickElement(bid="9002"), TEXT_ONLY)
        assert not outcome.action_ok and not outcome.env_failure, outcome     # covered: the agent's to see
        assert "timed out" in outcome.action_error, outcome
        outcome = await manager.step(session.id, A.ClickElement(bid="9001"), TEXT_ONLY)
        assert outcome.env_failure and "never refused it" in outcome.env_failure_reason, outcome
        assert session.id not in manager._sessions
