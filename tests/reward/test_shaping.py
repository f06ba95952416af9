"""Unit tests of the shaping core (no gRPC): components, anti-farming, loops, overrides."""

from __future__ import annotations

import pytest

from halo.agent import actions as A
from halo.errors import InvalidArgument
from halo.agent.context import PageElement
from halo.reward.shaping import score_transition
from halo.reward.transition import Transition
from tests.reward.pagekit import BASE, EpisodeDriver, diff, line, page

PAGE2 = BASE + "/page2"


def home(*, scroll: int = 0, name: str = "", plan_select: str = "free", plan_saved: str = "free", saved_name: str = "–",
         signup: str = "Not signed up yet", state: dict | None = None):
    """The playground home page; `scroll` moves a 10-item window over the 40-item list."""
    lines = [
        line(1, "heading", "HALO Playground"),
        line(2, "button", "Sign up"),
        line(3, "text", signup),
        line(4, "textbox", "Name", name),
        line(5, "button", "Save"),
        line(6, "combobox", "Plan", plan_select),
        line(7, "button", "Apply plan"),
        line(8, "text", f"Saved name: {saved_name} · plan: {plan_saved}"),
        line(9, "link", "Go to page 2"),
    ]
    lines += [line(10 + i, "text", f"Item {i + 1:02d}", depth=1, offscreen=not (scroll * 10 <= i < scroll * 10 + 10))
              for i in range(40)]
    return page(BASE + "/", *lines, state=state)


def page2(finished: bool = False, state: dict | None = None):
    return page(PAGE2, line(60, "link", "Back home"), line(61, "button", "Finish"),
                line(62, "text", "Finished!" if finished else "Press Finish when you are done."), state=state)


def names(result) -> list[str]:
    return result.names


# --- basic components --------------------------------------------------------------------------

def test_valid_action_and_novelty():
    d = EpisodeDriver("playground-finish", home())
    r = d.step(A.ClickElement("9"), page2())
    assert names(r) == ["valid_action", "novelty", "milestone:page2_reached"]
    assert r.value_of("valid_action") == pytest.approx(0.1)
    assert r.value_of("novelty") == pytest.approx(0.2)
    assert r.total == pytest.approx(0.1 + 0.2 + 0.3)
    assert r.episode_return == pytest.approx(r.total)


def test_invalid_actions_are_penalised_but_never_called_loops():
    d = EpisodeDriver("playground-signup", home())
    unparsed = [d.step(None, home()) for _ in range(3)]
    assert all(names(r) == ["invalid_action"] and r.total == pytest.approx(-0.2) for r in unparsed)
    rejected = d.step(A.ClickElement("999"), home(), ok=False)
    assert names(rejected) == ["invalid_action"] and "rejected" in rejected.components[0].detail
    again = d.step(A.ClickElement("999"), home(), ok=False)
    assert names(again) == ["invalid_action", "loop"]   # a parsed action that repeats is a loop


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf"), 1e308])
@pytest.mark.parametrize("space", list(A.CoordinateSpace))
def test_points_on_no_page_are_scored_as_the_rejected_actions_they_were(bad: float, space: A.CoordinateSpace):
    """NaN or infinite coordinates (the env answers them with an action error) hit no element and
    are penalised, repeated they are a loop; found by the RPC fuzz, where they were an UNKNOWN error."""
    d = EpisodeDriver("playground-signup", home())
    hover = d.step(A.HoverAt(A.Point(bad, 0.5, space)), home(), ok=False)
    assert names(hover) == ["invalid_action"]
    click = A.ClickAt(A.Point(0.5, bad, space))
    assert names(d.step(click, home(), ok=False)) == ["invalid_action"]
    assert names(d.step(click, home(), ok=False)) == ["invalid_action", "loop"]


def test_a_url_no_browser_could_show_is_a_page_like_any_other():
    """urlsplit raises on an unclosed IPv6 bracket; a client's PageState may carry such a URL
    (a refused goto echoes it) and must be scored, not an UNKNOWN error."""
    d = EpisodeDriver("playground-signup", home())
    bad = page("http://[::1", line(1, "text", "nothing here"))
    first = d.step(A.Goto("http://[::1"), bad)
    assert "novelty" in names(first)
    assert "novelty" not in names(d.step(A.Goto("http://[::1"), bad))   # the same page seen again


def test_returning_to_the_start_page_earns_no_novelty():
    d = EpisodeDriver("playground-signup", home())
    assert "novelty" in names(d.step(A.ClickElement("9"), page2()))
    assert "novelty" not in names(d.step(A.GoBack(), home()))


# --- anti-farming ------------------------------------------------------------------------------

def test_scrolling_back_and_forth_earns_no_novelty_and_is_a_loop():
    d = EpisodeDriver("playground-signup", home(scroll=0))
    down1 = d.step(A.Scroll(0, 300), home(scroll=1))
    up1 = d.step(A.Scroll(0, -300), home(scroll=0))
    down2 = d.step(A.Scroll(0, 300), home(scroll=1))
    up2 = d.step(A.Scroll(0, -300), home(scroll=0))
    assert names(down1) == names(up1) == ["valid_action"]
    assert names(down2) == names(up2) == ["valid_action", "loop"]
    assert down2.value_of("loop") == pytest.approx(-0.5)
    assert d.episode.novelty_paid == 0


def test_scrolling_down_a_long_page_is_not_a_loop_until_the_bottom():
    d = EpisodeDriver("playground-signup", home(scroll=0))
    for s in (1, 2, 3):
        assert names(d.step(A.Scroll(0, 300), home(scroll=s))) == ["valid_action"]
    assert names(d.step(A.Scroll(0, 300), home(scroll=3))) == ["valid_action"]   # first try at the bottom
    assert names(d.step(A.Scroll(0, 300), home(scroll=3))) == ["valid_action", "loop"]


def test_ticking_counters_and_typed_text_are_not_new_states():
    d = EpisodeDriver("playground-signup", home())
    first = d.step(A.ClickElement("2"), home(signup="Thanks for signing up (1)"))
    assert "novelty" in names(first)
    second = d.step(A.ClickElement("2"), home(signup="Thanks for signing up (2)"))
    third = d.step(A.ClickElement("2"), home(signup="Thanks for signing up (3)"))
    assert "novelty" not in names(second) and "novelty" not in names(third)
    assert "loop" in names(third)   # the same click from the same view, again
    typed = [d.step(A.Fill("4", text), home(signup="Thanks for signing up (3)", name=text)) for text in ("a", "b", "c")]
    assert all("novelty" not in names(r) for r in typed)


def test_junk_query_strings_are_not_new_states():
    d = EpisodeDriver("playground-signup", home())
    junk = [d.step(A.Goto(f"{BASE}/?x={i}"), page(f"{BASE}/?x={i}", *home().axtree.splitlines())) for i in range(3)]
    assert all("novelty" not in names(r) for r in junk)
    # ... while a query that changes the content (a search) is a new state
    results = page(f"{BASE}/search?q=pot", line(1, "link", "Stock Pot"))
    assert "novelty" in names(d.step(A.Goto(f"{BASE}/search?q=pot"), results))


def test_milestone_pays_once_and_undo_redo_earns_nothing():
    d = EpisodeDriver("playground-plan", home(state=diff()))
    chosen = d.step(A.SelectOption("6", ("pro",)), home(plan_select="pro", state=diff()))
    applied = d.step(A.ClickElement("7"), home(plan_select="pro", plan_saved="pro", state=diff({"profile": {"plan": "pro"}})))
    assert "milestone:plan_chosen" in names(chosen)
    assert applied.value_of("milestone:plan_applied") == pytest.approx(0.3)
    # undo: back to free
    d.step(A.SelectOption("6", ("free",)), home(plan_select="free", plan_saved="pro", state=diff({"profile": {"plan": "pro"}})))
    d.step(A.ClickElement("7"), home(state=diff()))
    # redo: the same progress again
    redo_choose = d.step(A.SelectOption("6", ("pro",)), home(plan_select="pro", state=diff()))
    redo_apply = d.step(A.ClickElement("7"), home(plan_select="pro", plan_saved="pro", state=diff({"profile": {"plan": "pro"}})))
    for r in (redo_choose, redo_apply):
        assert not any(n.startswith("milestone:") or n == "novelty" for n in names(r)), names(r)
        assert r.total <= 0.1 + 1e-9
    assert list(d.episode.paid) == ["plan_chosen", "plan_applied"]


def test_milestones_already_true_on_the_first_page_are_never_paid():
    search = "http://shop.test/search?q=cooking+pot"
    d = EpisodeDriver("omnizon-13", page(search, line(1, "link", "Stock Pot 8qt")))
    product = d.step(A.ClickElement("1"), page("http://shop.test/product/212", line(2, "button", "Add to Cart")))
    assert "milestone:product_page" in names(product)
    back = d.step(A.GoBack(), page("http://shop.test/search?q=stock+pot", line(1, "link", "Stock Pot 8qt")))
    assert not any(n.startswith("milestone:") for n in names(back))
    assert "search_results" in d.episode.baseline


def test_the_state_diff_overrules_page_text_on_replicas():
    cart_url = "http://shop.test/cart"
    with_state = EpisodeDriver("omnizon-13", page("http://shop.test/", state=diff()))
    r = with_state.step(A.Goto(cart_url), page(cart_url, line(1, "heading", "Cart"), state=diff()))
    assert "milestone:cart_page" not in names(r)   # the store says the app is still on "/"
    r = with_state.step(A.ClickElement("1"), page(cart_url, line(1, "heading", "Cart"),
                                                  state=diff({"router": {"location": {"pathname": "/cart"}}})))
    assert "milestone:cart_page" in names(r) and "state diff" in r.components[-1].detail
    remote = EpisodeDriver("omnizon-13", page("http://shop.test/"))
    assert "milestone:cart_page" in names(remote.step(A.Goto(cart_url), page(cart_url, line(1, "heading", "Cart"))))


def test_drafts_are_not_sent_messages():
    d = EpisodeDriver("gomail-12", page("http://mail.test/", state=diff()))
    draft = {"email": {"emails": {"90": {"to": ["charles.davis@example.com"], "sent": False, "draft": True}}}}
    r = d.step(A.ClickElement("3"), page("http://mail.test/", state=diff(added=draft)))
    assert "milestone:message_sent" not in names(r)
    sent = {"email": {"emails": {"91": {"to": ["charles.davis@example.com"], "sent": True, "draft": False}}}}
    r = d.step(A.ClickElement("4"), page("http://mail.test/sent", state=diff(added={**draft, **sent})))
    assert r.value_of("milestone:message_sent") == pytest.approx(0.5)


def test_action_milestones_resolve_bids_and_click_points():
    editor = page("http://cal.test/", line(1, "textbox", "Add title", "Gym"), line(5, "button", "Save"))
    failed = EpisodeDriver("gocalendar-12", editor)
    assert "milestone:save_clicked" not in names(failed.step(A.ClickElement("5"), editor, ok=False))
    by_bid = EpisodeDriver("gocalendar-12", editor)
    assert "milestone:save_clicked" in names(by_bid.step(A.ClickElement("5"), page("http://cal.test/", line(9, "text", "Event saved"))))

    boxes = (
        PageElement("1", "dialog", "Event", x=0, y=0, width=1280, height=720, interactive=False),
        PageElement("5", "button", "Save", x=100, y=100, width=80, height=30, interactive=True),
    )
    pixels = EpisodeDriver("gocalendar-12", page("http://cal.test/", elements=boxes))
    r = pixels.step(A.ClickAt(A.Point(120, 110)), page("http://cal.test/?saved=1", elements=boxes))
    assert "milestone:save_clicked" in names(r)
    qwen = EpisodeDriver("gocalendar-12", page("http://cal.test/", elements=boxes))
    r = qwen.step(A.ClickAt(A.Point(120 / 1.28, 110 / 0.72, A.CoordinateSpace.NORMALIZED_1000)), page("http://cal.test/?s=1", elements=boxes))
    assert "milestone:save_clicked" in names(r)
    # the same element clicked by bid and then by coordinates is the same action: a loop
    r = qwen.step(A.ClickElement("5"), page("http://cal.test/?s=1", elements=boxes))
    r = qwen.step(A.ClickAt(A.Point(150, 120)), page("http://cal.test/?s=1", elements=boxes))
    assert "loop" in names(r)


def test_cycling_between_two_states_is_a_loop():
    d = EpisodeDriver("playground-signup", home())
    assert "loop" not in names(d.step(A.ClickElement("9"), page2()))
    assert "loop" not in names(d.step(A.GoBack(), home()))
    cycle = d.step(A.GoForward(), page2())
    assert "loop" in names(cycle) and "cycling" in cycle.components[-1].detail


# --- env failures, retries ---------------------------------------------------------------------

def test_env_failure_scores_zero_and_leaves_the_memory_alone():
    d = EpisodeDriver("playground-finish", home())
    failed = d.step(A.ClickElement("9"), page("about:blank"), env_failure=True)
    assert failed.env_failure and failed.total == 0.0 and names(failed) == ["env_failure"]
    assert d.episode.transitions == 0 and d.episode.env_failures == 1
    retried = d.step(A.ClickElement("9"), page2())
    assert {"novelty", "milestone:page2_reached"} <= set(names(retried))


def test_an_immediate_retry_of_the_same_transition_is_not_paid_twice():
    d = EpisodeDriver("playground-finish", home())
    t = Transition(step_index=1, action=A.ClickElement("9"), action_parsed=True, action_ok=True, before=home(), after=page2())
    first = score_transition(d.episode, t)
    again = score_transition(d.episode, t)
    assert again == first and d.episode.episode_return == pytest.approx(first.total)


# --- overrides ---------------------------------------------------------------------------------

def test_per_episode_overrides():
    d = EpisodeDriver("playground-plan", home(state=diff()), overrides={
        "loop_penalty": -1.0, "milestone:playground.plan_applied": 0.9, "progress_weight": 2.0, "novelty_cap": 1,
    })
    r = d.step(A.ClickElement("7"), home(plan_saved="pro", state=diff({"profile": {"plan": "pro"}})))
    assert r.value_of("milestone:plan_applied") == pytest.approx(1.8)   # 0.9 x progress_weight 2
    r = d.step(A.ClickElement("9"), page2(state=diff({"profile": {"plan": "pro"}})))
    assert "novelty" not in names(r)   # capped at one
    d.step(A.GoBack(), home(plan_saved="pro", state=diff({"profile": {"plan": "pro"}})))
    r = d.step(A.GoForward(), page2(state=diff({"profile": {"plan": "pro"}})))
    assert r.value_of("loop") == pytest.approx(-1.0)


@pytest.mark.parametrize("bad", [{"loop_penalti": -1.0}, {"milestone:omnizon.nope": 1.0}, {"novelty_cap": -1}])
def test_bad_overrides_are_invalid_argument(bad):
    with pytest.raises(InvalidArgument):
        EpisodeDriver("playground-plan", home(), overrides=bad)
