"""The env service through gRPC, against real Chromium and the playground replica."""

from __future__ import annotations

import json

import pytest

from halo.agent import actions as A
from halo.client.env import observation_options
from halo.errors import FailedPrecondition, InvalidArgument, NotFound
from halo.v1 import common_pb2 as cpb
from halo.v1 import env_pb2 as pb


def by_name(obs: cpb.Observation, role: str, name: str) -> cpb.Element:
    matches = [e for e in obs.elements if e.role == role and e.name == name]
    assert matches, f"no {role} {name!r} in:\n{obs.axtree}"
    return matches[0]


async def test_list_tasks_has_all_real_v2_tasks_and_flags(env):
    tasks = await env.list_tasks(suite="real-v2")
    assert len(tasks) == 121
    by_site = {}
    for t in tasks:
        by_site[t.site] = by_site.get(t.site, 0) + 1
    assert by_site["gomail"] == 21 and by_site["omnizon"] == 10 and by_site["marrisuite"] == 1
    calendar11 = await env.get_task("v2.gocalendar-11")
    assert not calendar11.scorable and "empty" in calendar11.notes
    assert all(t.eval_kinds == [cpb.EVAL_KIND_SCRIPT] for t in tasks)
    replica = await env.list_tasks(replica_only=True)
    assert {t.id for t in replica} >= {"playground-signup", "playground-finish"}
    assert all(t.replica_available for t in replica)


async def test_unknown_task_and_session_are_not_found(env):
    with pytest.raises(NotFound):
        await env.get_task("nope-1")
    with pytest.raises(NotFound):
        await env.create_session("nope-1")
    with pytest.raises(NotFound):
        await env.step("deadbeef", A.Noop())
    with pytest.raises(NotFound):
        await env.get_state("deadbeef")


async def test_create_observe_step_state_close(env):
    created = await env.create_session("playground-signup")
    obs = created.observation
    assert obs.width == 1280 and obs.height == 720
    assert obs.screenshot.startswith(b"\x89PNG")
    assert obs.url.endswith("/playground/") and obs.goal == created.task.goal
    assert "[" in obs.axtree and "Sign up" in obs.axtree
    button = by_name(obs, "button", "Sign up")
    result = await env.step(created.session_id, A.ClickElement(button.bid))
    assert result.action_ok and not result.done and not result.env_failure
    assert result.observation.step_index == 1
    assert any("Thanks for signing up" in e.name for e in result.observation.elements)
    # the same element keeps its bid across observations
    assert by_name(result.observation, "button", "Sign up").bid == button.bid
    state = json.loads((await env.get_state(created.session_id)).state_json)
    assert state["initialfinaldiff"]["updated"]["signup"]["clicked"] is True
    assert await env.close_session(created.session_id) is True
    assert await env.close_session(created.session_id) is False  # idempotent
    with pytest.raises(NotFound):
        await env.step(created.session_id, A.Noop())


async def test_jpeg_and_text_only_observations(env):
    created = await env.create_session("playground-signup", observation=observation_options("jpeg", 50))
    try:
        assert created.observation.screenshot.startswith(b"\xff\xd8")
        assert created.observation.image_format == cpb.IMAGE_FORMAT_JPEG
        text_only = await env.observe(created.session_id, observation_options(screenshot=False))
        assert text_only.screenshot == b"" and text_only.axtree
    finally:
        await env.close_session(created.session_id)


async def test_every_action_kind_executes(env):
    created = await env.create_session("playground-drag")
    sid, obs = created.session_id, created.observation
    try:
        name_box = by_name(obs, "textbox", "Name")
        r = await env.step(sid, A.Fill(name_box.bid, "Grace"))
        assert r.action_ok and by_name(r.observation, "textbox", "Name").value == "Grace"
        r = await env.step(sid, A.ClickElement(name_box.bid))
        r = await env.step(sid, A.KeyPress("End"))
        r = await env.step(sid, A.TypeText(" Hopper"))
        assert by_name(r.observation, "textbox", "Name").value == "Grace Hopper"
        plan = by_name(r.observation, "combobox", "Plan")
        r = await env.step(sid, A.SelectOption(plan.bid, ("pro",)))
        assert by_name(r.observation, "combobox", "Plan").value == "pro"
        r = await env.step(sid, A.Hover(plan.bid))
        assert r.action_ok
        r = await env.step(sid, A.HoverAt(A.Point(500, 500, A.CoordinateSpace.NORMALIZED_1000)))
        assert r.action_ok
        # drag the card onto the zone, by pixel coordinates from the element boxes
        card, zone = by_name(r.observation, "text", "Card"), by_name(r.observation, "text", "Drop here")
        start = A.Point(card.bbox.x + card.bbox.width / 2, card.bbox.y + card.bbox.height / 2)
        end = A.Point(zone.bbox.x + zone.bbox.width / 2, zone.bbox.y + zone.bbox.height / 2)
        r = await env.step(sid, A.Drag(start, end))
        assert r.action_ok
        state = json.loads((await env.get_state(sid)).state_json)
        assert state["initialfinaldiff"]["updated"]["board"]["dropped"] is True
        # Qwen3-VL normalised click on the Sign up button
        button = by_name(r.observation, "button", "Sign up")
        nx = (button.bbox.x + button.bbox.width / 2) / 1280 * 1000
        ny = (button.bbox.y + button.bbox.height / 2) / 720 * 1000
        r = await env.step(sid, A.ClickAt(A.Point(nx, ny, A.CoordinateSpace.NORMALIZED_1000)))
        assert r.action_ok and any("Thanks for signing up" in e.name for e in r.observation.elements)
        r = await env.step(sid, A.Scroll(0, 300))
        assert r.action_ok
        link = by_name(r.observation, "link", "Go to page 2")
        r = await env.step(sid, A.ClickElement(link.bid))
        assert r.observation.url.endswith("/page2")
        r = await env.step(sid, A.GoBack())
        assert r.observation.url.endswith("/playground/")
        r = await env.step(sid, A.GoForward())
        assert r.observation.url.endswith("/page2")
        r = await env.step(sid, A.Goto(r.observation.url.replace("/page2", "/")))
        assert r.action_ok and r.observation.url.endswith("/playground/")
        r = await env.step(sid, A.ClickElement(name_box.bid, click_count=2))
        assert r.action_ok
        r = await env.step(sid, A.ClickElement(plan.bid, button=A.MouseButton.RIGHT))
        assert r.action_ok
        r = await env.step(sid, A.Wait(50))
        assert r.action_ok
        r = await env.step(sid, A.Noop())
        assert r.action_ok and not r.done
        r = await env.step(sid, A.SendMessage("All done"))
        assert r.done and r.termination == pb.TERMINATION_MESSAGE_SENT and not r.env_failure
        state = await env.get_state(sid)
        assert state.final_message == "All done" and state.done
        with pytest.raises(FailedPrecondition):
            await env.step(sid, A.Noop())
    finally:
        await env.close_session(sid)


async def test_new_tab_becomes_active(env):
    created = await env.create_session("playground-finish")
    try:
        link = by_name(created.observation, "link", "Open page 2 in a new tab")
        r = await env.step(created.session_id, A.ClickElement(link.bid))
        assert r.action_ok
        assert len(r.observation.tabs) == 2
        assert r.observation.url.endswith("/page2")
        assert [t.active for t in r.observation.tabs] == [False, True]
    finally:
        await env.close_session(created.session_id)


async def test_bad_actions_are_errors_in_the_observation_not_crashes(env):
    created = await env.create_session("playground-signup")
    sid = created.session_id
    try:
        cases = [
            (A.ClickElement("9999"), "no element with bid 9999"),
            (A.ClickElement("abc"), "not an element id"),
            (A.ClickAt(A.Point(5000, 10)), "outside the 1280x720 viewport"),
            (A.Goto("file:///etc/passwd"), "scheme 'file' is not allowed"),
            (A.Goto("http://example.com/"), "outside the task's sites"),
            (A.Goto("javascript:alert(1)"), "not allowed"),
            (A.Goto("http://[::1"), "is not a valid URL"),   # urlsplit raises on it: was an UNKNOWN RPC error (RPC fuzz)
            (A.KeyPress(""), "needs a key"),
            (A.KeyPress("NotAKey"), "key_press failed"),
            (A.SelectOption(by_name(created.observation, "button", "Sign up").bid, ("x",)), "select_option"),
            # inputs outside their bounds (click_count 4, 5,000 typed characters, a normalized x of
            # 1001) are INVALID_ARGUMENT, not action errors: tests/env/test_action_bounds.py
        ]
        for i, (action, expected) in enumerate(cases, start=1):
            r = await env.step(sid, action)
            assert not r.action_ok and not r.env_failure and not r.done, action
            assert expected in r.action_error, (action, r.action_error)
            assert r.observation.last_action_error == r.action_error
            assert r.observation.step_index == i
        # still usable
        r = await env.step(sid, A.ClickElement(by_name(r.observation, "button", "Sign up").bid))
        assert r.action_ok and r.observation.last_action_error == ""
    finally:
        await env.close_session(sid)


async def test_a_click_whose_navigation_outlasts_the_action_timeout_is_a_click_that_happened(stack, env):
    """A submit whose page loads slower than the 3 s action timeout is a click that happened, not a
    timed-out one: Playwright's click would wait for the navigation it starts under the action
    timeout, so the env clicks without that wait and waits for the navigation itself (navigation
    timeout). A slow page is not the agent's fault."""
    import asyncio

    created = await env.create_session("playground-signup")
    sid = created.session_id
    try:
        async def slow_post(route):
            await asyncio.sleep(4.5)   # > the 3 s action timeout, < the 15 s navigation timeout
            await route.continue_()

        await stack.env_manager.get(sid).context.route("**/api/signup", slow_post)
        r = await env.step(sid, A.ClickElement(by_name(created.observation, "button", "Sign up").bid))
        assert r.action_ok, r.action_error
        assert "Thanks for signing up" in r.observation.axtree   # the observation is of the loaded page
        state = json.loads((await env.get_state(sid)).state_json)
        assert state["initialfinaldiff"]["updated"]["signup"]["clicked"] is True
    finally:
        await env.close_session(sid)


async def test_malformed_requests_are_invalid_argument(env):
    created = await env.create_session("playground-signup")
    try:
        with pytest.raises(InvalidArgument, match="no kind set"):
            await env.step(created.session_id, cpb.Action())
        with pytest.raises(InvalidArgument, match="session_id is required"):
            await env.step("", A.Noop())
        with pytest.raises(InvalidArgument, match="jpeg_quality"):
            await env.observe(created.session_id, cpb.ObservationOptions(jpeg_quality=101))
        bad_space = cpb.Action(click_at=cpb.ClickAt(point=cpb.Point(x=1, y=1, space=77)))
        with pytest.raises(InvalidArgument, match=r"action\.click_at\.point\.space: 77 is not a CoordinateSpace value"):
            await env.step(created.session_id, bad_space)
    finally:
        await env.close_session(created.session_id)


async def test_remote_sites_need_explicit_opt_in(env):
    from halo.tasks.registry import default_registry

    # a REAL task no replica serves yet (replicas for the remaining sites are being added)
    remote = next((t.id for t in default_registry().list(suite="real-v2") if not t.replica_available), None)
    if remote is None:
        pytest.skip("every REAL v2 task has a local replica")
    with pytest.raises(FailedPrecondition, match="no local replica"):
        await env.create_session(remote, source=cpb.SITE_SOURCE_REPLICA)
    with pytest.raises(FailedPrecondition, match="remote sites are off"):
        await env.create_session(remote)


async def test_max_steps_ends_the_episode(env):
    created = await env.create_session("playground-signup", max_steps=2)
    try:
        r = await env.step(created.session_id, A.Noop())
        assert not r.done
        r = await env.step(created.session_id, A.Noop())
        assert r.done and r.termination == pb.TERMINATION_MAX_STEPS
    finally:
        await env.close_session(created.session_id)


async def test_snapshot_restore_branches_are_independent(env):
    created = await env.create_session("playground-name")
    sid, obs = created.session_id, created.observation
    try:
        snap = await env.snapshot(sid)
        name = by_name(obs, "textbox", "Name")
        r = await env.step(sid, A.Fill(name.bid, "Branch A"))
        r = await env.step(sid, A.ClickElement(by_name(r.observation, "button", "Save").bid))
        link = by_name(r.observation, "link", "Go to page 2")
        r = await env.step(sid, A.ClickElement(link.bid))
        assert r.observation.url.endswith("/page2")
        branch_a = json.loads((await env.get_state(sid)).state_json)
        assert branch_a["initialfinaldiff"]["updated"]["profile"]["name"] == "Branch A"

        restored = await env.restore(sid, snap.snapshot_id)
        assert restored.url == snap.url and restored.step_index == 0
        state = json.loads((await env.get_state(sid)).state_json)
        assert "profile" not in state["initialfinaldiff"]["updated"]
        r = await env.step(sid, A.Fill(by_name(restored, "textbox", "Name").bid, "Branch B"))
        r = await env.step(sid, A.ClickElement(by_name(r.observation, "button", "Save").bid))
        state = json.loads((await env.get_state(sid)).state_json)
        assert state["initialfinaldiff"]["updated"]["profile"]["name"] == "Branch B"
        with pytest.raises(NotFound):
            await env.restore(sid, "nope")
    finally:
        await env.close_session(sid)


async def test_sessions_are_isolated(env):
    a = await env.create_session("playground-signup")
    b = await env.create_session("playground-signup")
    try:
        await env.step(a.session_id, A.ClickElement(by_name(a.observation, "button", "Sign up").bid))
        state_a = json.loads((await env.get_state(a.session_id)).state_json)
        state_b = json.loads((await env.get_state(b.session_id)).state_json)
        assert state_a["initialfinaldiff"]["updated"]["signup"]["clicked"] is True
        assert state_b["initialfinaldiff"]["updated"] == {}
    finally:
        await env.close_session(a.session_id)
        await env.close_session(b.session_id)
