"""A Step never hangs, whatever came before it: a scroll too large for Chromium's input pipeline is
refused before it reaches the page, and a page whose renderer stopped answering ends the step as
an environment failure within the step budget (ExecLimits.step_budget_s), the session closed."""

from __future__ import annotations

import time

from halo.agent import actions as A
from halo.env.execute import MAX_SCROLL_PX
from tests.env.test_warm_contexts import TEXT_ONLY, manager_on_own_sites


async def test_a_scroll_out_of_range_is_refused_and_the_page_keeps_taking_keys(stack):
    async with manager_on_own_sites(stack, warm_contexts=0) as (_, manager):
        session, _ = await manager.create("playground-signup", options=TEXT_ONLY)
        for delta in (1e308, float("inf"), float("nan"), -(MAX_SCROLL_PX + 1)):
            outcome = await manager.step(session.id, A.Scroll(delta_x=delta), TEXT_ONLY)
            assert not outcome.action_ok and "out of range" in outcome.action_error, outcome
            assert not outcome.env_failure
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
