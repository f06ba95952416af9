"""State an agent can see: every oracle click that changes a replica's state (its /finish JSON)
changes what the agent reads too (the accessibility tree: roles, names, values and ARIA states).

A toggle, a segmented choice, a saved heart or a picked day whose click only restyled the page
(a CSS class) leaves the agent blind to its own action: a pixel-free policy cannot tell whether
its click took. The walk runs oracles through the session's env service, text-only, and compares
the page's accessible content (bids and boxes aside) before and after each click that changed the
state. Representative tasks, not all 121: per site, oracles that go through its toggles, pickers,
filters and saved marks."""

from __future__ import annotations

import sys
from dataclasses import dataclass

import pytest

from halo.agent import actions as A
from halo.client.env import EnvClient, observation_options
from halo.sites.oracle import Target, resolve
from halo.sites.registry import attempts_for
from halo.tasks.registry import default_registry

_TEXT_ONLY = observation_options(screenshot=False)

#: What the page shows, as the DOM says it (not the accessibility tree): each rendered element's
#: tag, classes, own text and form state. A click that changes this and leaves the accessible
#: content as it was restyled the page for the eye alone.
_DOM_STATE_JS = r"""() => {
  const out = [];
  const CHILDREN = Object.getOwnPropertyDescriptor(Element.prototype, "children").get;  // a form's fields shadow .children
  const walk = (el) => {
    if (el.tagName === "SCRIPT" || el.tagName === "STYLE") return;
    const style = getComputedStyle(el);
    if (style.display === "none" || style.visibility === "hidden") return;
    let text = "";
    for (const n of el.childNodes) if (n.nodeType === 3) text += n.textContent;
    const form = el.tagName === "INPUT" ? `${el.checked}|${el.value}` : "";
    out.push(`${el.tagName}.${el.className && el.className.baseVal === undefined ? el.className : ""}|${text.trim()}|${form}`);
    for (const child of CHILDREN.call(el)) walk(child);
  };
  if (document.body) walk(document.body);
  return out;
}"""

#: Per site, tasks whose oracles click its stateful controls (one or two each; about 70 actions).
WALKED = [
    "omnizon-3",        # search, product, cart
    "gomail-1",         # folders, message actions
    "gocalendar-10",    # event editor tabs
    "zilloft-5",        # search pills (expanded), saved homes
    "marrisuite-8",
    "opendining-4",     # party size, time slots
    "staynb-1",         # date picker days, guest steppers, bedroom radios
    "staynb-9",         # one-day pick, amenity checkboxes
    "networkin-13",
    "topwork-8",
    "dashdish-1",       # delivery options, tips
    "udriver-2",        # ride choices
]


def accessible(elements) -> list[tuple[str, str, str, tuple[str, ...]]]:
    """What the agent reads of a page, bids and boxes aside."""
    return [(e.role, e.name, e.value, tuple(e.states)) for e in elements]


@dataclass
class Blind:
    step: int
    action: str

    def __str__(self) -> str:
        return f"step {self.step}: {self.action} changed the state but nothing the agent reads"


async def dom_state(stack, session_id: str) -> list[str]:
    page = stack.env_manager.get(session_id).page   # the in-process env service's live page
    return await page.evaluate(_DOM_STATE_JS)


async def blind_clicks(stack, env: EnvClient, task_id: str) -> list[Blind]:
    """The oracle's clicks that changed what the page shows and left the accessible content as it was."""
    task = default_registry().get(task_id)
    oracle, _ = attempts_for(task.site, task.id)
    assert oracle, task_id
    created = await env.create_session(task.id, observation=_TEXT_ONLY)
    session, obs = created.session_id, created.observation
    blind: list[Blind] = []
    try:
        state = await dom_state(stack, session)
        for index, step in enumerate(oracle):
            action = resolve(step, obs.elements)
            result = await env.step(session, action, observation=_TEXT_ONLY)
            assert not result.env_failure, result.env_failure_reason
            assert result.action_ok, (index, A.describe(action), result.action_error)
            after = await dom_state(stack, session)
            clicked = isinstance(step, (A.ClickElement, A.ClickAt))
            if clicked and after != state and accessible(result.observation.elements) == accessible(obs.elements):
                blind.append(Blind(index, A.describe(step)))
            obs, state = result.observation, after
    finally:
        await env.close_session(session)
    return blind


@pytest.mark.parametrize("task_id", WALKED)
async def test_oracle_clicks_show_in_the_accessibility_tree(stack, env, task_id):
    blind = await blind_clicks(stack, env, task_id)
    assert not blind, [str(b) for b in blind]


async def test_toggle_states_reach_the_axtree_text(env):
    """A picked day, a chosen bedroom count and a checked amenity read as states in the text form
    and the structured elements (staynb-1's oracle up to its bedroom choice, then a Wifi tick)."""
    oracle, _ = attempts_for("staynb", "staynb-1")
    upto = next(i for i, step in enumerate(oracle) if getattr(step.bid, "name", "") == "Bedrooms: 2")
    created = await env.create_session("staynb-1", observation=_TEXT_ONLY)
    session, obs = created.session_id, created.observation
    try:
        for step in [*oracle[:upto + 1], A.ClickElement(Target("checkbox", "Wifi"))]:
            obs = (await env.step(session, resolve(step, obs.elements), observation=_TEXT_ONLY)).observation
        lines = obs.axtree.splitlines()
        for shown in ('radio "Bedrooms: 2" checked', 'checkbox "Wifi" checked'):
            assert any(shown in line for line in lines), (shown, obs.axtree)
        assert not any('checkbox "Pool"' in line and "checked" in line for line in lines)
        states = {e.name: list(e.states) for e in obs.elements}
        assert states["Bedrooms: 2"] == ["checked"] and states["Bedrooms: 1"] == [] and states["Wifi"] == ["checked"]
    finally:
        await env.close_session(session)


async def test_the_walk_finds_a_toggle_the_tree_hides(stack, env, monkeypatch):
    """The check can fail: read without ARIA states (as the AXTree was read before), staynb-9's
    amenity ticks change the page and nothing the agent reads."""
    monkeypatch.setattr(sys.modules[__name__], "accessible", lambda els: [(e.role, e.name) for e in els])
    blind = await blind_clicks(stack, env, "staynb-9")
    assert {"Pool", "Wifi", "Free parking", "Air conditioning"} <= {b.action.split("name='")[1].split("'")[0] for b in blind}
