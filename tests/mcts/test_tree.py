"""The search tree's arithmetic and the preference/DPO pieces, without services."""

from __future__ import annotations

import math

import pytest
import torch

from halo.agent import actions as A
from halo.agent.context import PageElement, PageView, PolicyContext
from halo.trainers.mcts.search import Edge, MCTSConfig, Node, QBounds, SearchResult, SearchStats, backup, best_path, select_edge
from halo.trainers.mcts.preferences import dpo_loss, labeled_comparisons, preference_pairs
from halo.v1 import reward_pb2 as rpb

GOAL = 'Go to page 2 and press "Finish".'


def node(i: int, depth: int = 0, parent: Edge | None = None, **kw) -> Node:
    page = PageView(url=f"http://site/{i}", elements=(PageElement("1", "button", "Finish"), PageElement("2", "link", "Back")))
    return Node(i, depth, PolicyContext(GOAL, page), rpb.PageState(url=page.url), f"fp{i}", parent_edge=parent, **kw)


def edge(parent: Node, bid: str, *, critic: float = 0.5, visits: int = 0, value_sum: float = 0.0, reward: float = 0.0) -> Edge:
    e = Edge(parent, A.ClickElement(bid), f'{{"action": "click", "bid": "{bid}"}}', critic=critic, visits=visits,
             value_sum=value_sum, reward=reward)
    parent.edges.append(e)
    return e


def test_composite_q_mixes_search_value_and_critic():
    root = node(0)
    e = edge(root, "1", critic=0.2, visits=4, value_sum=2.0)
    assert e.q_mcts == 0.5
    assert e.q(0.5) == pytest.approx(0.35)
    assert e.q(1.0) == 0.5 and e.q(0.0) == 0.2


def test_untried_edges_go_first_in_critic_order_then_ucb1():
    root = node(0)
    tried = edge(root, "1", critic=0.9, visits=1, value_sum=1.0)
    low = edge(root, "2", critic=0.1)
    high = edge(root, "3", critic=0.8)
    root.visits = 1
    assert select_edge(root, 0.5, 1.414) is high          # the critic ranks the untried candidates
    high.visits, high.value_sum = 1, 0.0
    assert select_edge(root, 0.5, 1.414) is low
    low.visits, low.value_sum = 1, 0.0
    # all tried: UCB1 = Q + c sqrt(ln N / n): the less visited of equal-Q edges wins, more value wins
    root.visits = 10
    tried.visits, tried.value_sum = 6, 3.0
    high.visits, high.value_sum = 2, 0.0
    low.visits, low.value_sum = 2, 2.0     # Q = .5 * 1.0 + .5 * .1 = .55 > high's .5 * 0 + .5 * .8
    scores = {e: e.q(0.5) + 1.414 * math.sqrt(math.log(10) / e.visits) for e in root.edges}
    assert select_edge(root, 0.5, 1.414) is max(scores, key=scores.get) is low
    assert select_edge(root, 1.0, 0.0) is low              # pure exploitation of Q_mcts (1.0 vs .5 vs 0)
    assert select_edge(root, 0.0, 0.0) is tried            # of the critic alone (.9 vs .1 vs .8)


def test_q_bounds_normalise_to_unit_interval():
    b = QBounds()
    assert b.normalize(0.7) == 0.7                          # nothing seen yet: unchanged
    for q in (0.2, 1.2, 0.7):
        b.update(q)
    assert b.normalize(0.2) == 0.0 and b.normalize(1.2) == 1.0 and b.normalize(0.7) == pytest.approx(0.5)


def test_backup_gives_each_edge_its_return_to_the_leaf():
    root = node(0)
    e1 = edge(root, "1", reward=0.3)
    child = node(1, 1, e1)
    e1.child = child
    e2 = edge(child, "2", reward=0.1)
    leaf = node(2, 2, e2)
    e2.child = leaf
    backup([e1, e2], 1.0)
    assert (e1.visits, e1.value_sum) == (1, pytest.approx(1.4))
    assert (e2.visits, e2.value_sum) == (1, pytest.approx(1.1))
    assert root.visits == 1 and child.visits == 1
    backup([e1], 0.0)
    assert e1.q_mcts == pytest.approx((1.4 + 0.3) / 2)


def small_tree() -> SearchResult:
    """root --a(Q .9)--> n1 --x(Q 1)--> n3 (success)
            --b(Q .2)--> n2      --y(Q 0.03)
            --c(untried)"""
    root = node(0)
    a = edge(root, "1", critic=0.5, visits=3, value_sum=2.7)
    b = edge(root, "2", critic=0.5, visits=2, value_sum=0.4)
    edge(root, "3", critic=0.9)
    n1, n2 = node(1, 1, a), node(2, 1, b)
    a.child, b.child = n1, n2
    x = edge(n1, "1", visits=2, value_sum=2.0)
    y = edge(n1, "2", visits=1, value_sum=0.03)
    x.child, y.child = node(3, 2, x, success=True, terminal=True), node(4, 2, y)
    return SearchResult("playground-finish", 0, GOAL, root, MCTSConfig(alpha=0.5), SearchStats())


def test_best_path_follows_the_highest_composite_q():
    result = small_tree()
    path = best_path(result.root, 0.5)
    assert [e.action for e in path] == [A.ClickElement("1"), A.ClickElement("1")]
    assert result.success and result.found


def test_preference_pairs_share_the_state_and_order_by_q():
    result = small_tree()
    pairs = preference_pairs(result, margin=0.05)
    assert {(p.node_id, p.chosen, p.rejected) for p in pairs} == {
        (0, A.ClickElement("1"), A.ClickElement("2")), (1, A.ClickElement("1"), A.ClickElement("2"))}
    for p in pairs:
        assert p.q_chosen - p.q_rejected >= 0.05 and p.chosen != p.rejected
        assert p.context is next(n for n in [result.root, result.root.edges[0].child] if n.id == p.node_id).context
    assert preference_pairs(result, margin=0.9) == [p for p in pairs if p.gap >= 0.9]  # the margin filters
    untried = A.ClickElement("3")
    assert all(untried not in (p.chosen, p.rejected) for p in pairs)  # no Q_mcts, no pair
    result.env_failure = True
    assert preference_pairs(result) == []


def test_dpo_loss_is_log2_at_the_reference_and_pushes_chosen_up():
    chosen = torch.tensor([-1.0, -2.0], requires_grad=True)
    rejected = torch.tensor([-1.5, -0.5], requires_grad=True)
    loss, metrics = dpo_loss(chosen, rejected, chosen.detach(), rejected.detach(), beta=0.1)
    assert loss.item() == pytest.approx(math.log(2))
    assert metrics["dpo_margin"] == 0.0
    loss.backward()
    assert (chosen.grad < 0).all() and (rejected.grad > 0).all()   # descent raises chosen, lowers rejected
    better, m = dpo_loss(chosen.detach() + 1, rejected.detach(), chosen.detach(), rejected.detach(), beta=0.1)
    assert better.item() < math.log(2) and m["dpo_accuracy"] == 1.0


def test_pairs_become_tinker_cookbook_comparisons():
    from halo.agent.formats import ActionFormat

    pairs = preference_pairs(small_tree())
    comparisons = labeled_comparisons(pairs, ActionFormat.JSON)
    assert len(comparisons) == len(pairs)
    for pair, labeled in zip(pairs, comparisons):
        assert labeled.label == "A"
        prompt = labeled.comparison.prompt_conversation
        assert prompt[0]["role"] == "system" and GOAL in str(prompt[-1]["content"])
        assert labeled.comparison.completion_A[0]["content"] == f'{{"action": "click", "bid": "{pair.chosen.bid}"}}'
        assert labeled.comparison.completion_B[0]["content"] == f'{{"action": "click", "bid": "{pair.rejected.bid}"}}'


def test_spec_extras_configure_the_search_and_kind_mcts_resolves():
    from halo.trainers.mcts.search import config_from_spec, train_embedded
    from halo.cli.registry import resolve_trainer
    from halo.runs.spec import RunSpec

    spec = RunSpec(kind="mcts", task_ids=["playground-finish"], max_steps=3, temperature=1.0,
                   extra={"simulations": 12.0, "children": 3, "alpha": 0.7, "widen_every": 0})
    config = config_from_spec(spec, "run1")
    assert (config.simulations, config.children, config.alpha, config.max_depth, config.widen_every) == (12, 3, 0.7, 3, 0)
    assert config.ucb_c == 1.414 and config.critic_model == "embedded" and config.run_id == "run1"
    defaults = config_from_spec(RunSpec(kind="mcts", task_ids=["t"]))
    assert (defaults.simulations, defaults.children, defaults.ucb_c) == (50, 5, 1.414)
    assert resolve_trainer(spec) is train_embedded
    with pytest.raises(ValueError):
        MCTSConfig(alpha=1.5)
