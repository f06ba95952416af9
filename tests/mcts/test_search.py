"""MCTS on the real services: sites + env (Chromium) + reward + gateway with the embedded policy.

The critic is the gateway's `embedded` route: the untrained embedded policy's own probabilities
(relative to its top candidate). It is nearly uniform, so what finds the goal here is the search
itself (K sampled candidates, widening, rewards and REAL's evaluation), not an oracle critic.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from types import SimpleNamespace

import pytest

from halo.agent import actions as A
from halo.agent.actions import action_from_proto
from halo.agent.context import PolicyContext
from halo.embedded.policy import enumerate_candidates
from halo.trainers.mcts.search import TreeSearch, search
from halo.trainers.mcts.tree import MCTSConfig, fingerprint, iter_nodes
from halo.rollout.episode import Decision, RolloutConfig, run_episode
from halo.v1 import common_pb2 as cpb
from halo.v1 import env_pb2 as pb

TASK = "playground-finish"          # goal: go to page 2, press Finish (two actions)
TASK_SEED = 0
DEPTH = 2                           # the episode horizon of both the search and the rollouts
CONFIG = MCTSConfig(simulations=50, children=5, ucb_c=1.414, alpha=0.5, max_depth=DEPTH, widen_every=10,
                    critic_model="embedded", seed=1)
#: Attempts at a search or a path's replay that an environment failure (a busy machine, not the
#: path) ended, run again in a fresh session before the test gives up, as `halo tasks verify` and
#: the audit do.
REPLAY_ATTEMPTS = 3


@dataclass
class SeededPolicy:
    """The gateway's embedded policy, sampled with fixed seeds (reproducible rollouts)."""

    gateway: object
    adapter: str
    temperature: float
    seed: int
    calls: int = 0

    async def decide(self, ctx: PolicyContext) -> Decision:
        self.calls += 1
        response = await self.gateway.sample("embedded", input=ctx, n=1, temperature=self.temperature,
                                             adapter=self.adapter, logprobs=True, seed=self.seed * 1000 + self.calls)
        c = response.candidates[0]
        return Decision(action_from_proto(c.action) if c.valid else None, c.text, logprob=sum(c.logprobs))


async def rollouts(clients, adapter: str, temperature: float, seeds: list[int]):
    env, reward, gateway = clients
    config = RolloutConfig(max_steps=DEPTH, screenshots=False)
    return [await run_episode(env, reward, SeededPolicy(gateway, adapter, temperature, s), TASK, TASK_SEED, config)
            for s in seeds]


@pytest.fixture(scope="module")
async def searched(clients):
    """The search, run again (at most REPLAY_ATTEMPTS in all) when an environment failure ended it:
    its seed makes every attempt the same search, so a lost one says nothing of MCTS."""
    env, reward, gateway = clients
    for _ in range(REPLAY_ATTEMPTS - 1):
        result = await search(env, reward, gateway, "embedded", "", TASK, TASK_SEED, CONFIG)
        if not result.env_failure:
            return result
    return await search(env, reward, gateway, "embedded", "", TASK, TASK_SEED, CONFIG)


async def test_search_finds_the_goal_where_the_untrained_policys_rollouts_fail(clients, searched):
    untrained = await rollouts(clients, "", 1.0, seeds=list(range(1, 9)))
    greedy = await rollouts(clients, "", 0.0, seeds=[1])
    assert not any(e.env_failure for e in untrained + greedy)
    assert [e.success for e in untrained] == [False] * 8
    assert not greedy[0].success

    result = searched
    assert not result.env_failure, result.env_failure_reason
    assert result.success and result.found
    path = result.best_path
    names = [next(e.name for e in edge.parent.context.page.elements if e.bid == edge.action.bid) for edge in path]
    assert names[0] in ("Go to page 2", "Open page 2 in a new tab") and names[1] == "Finish", result.describe_best_path()
    stats = result.stats
    assert 0 < stats.solved_at <= CONFIG.simulations
    assert stats.env_steps == result.nodes - 1          # every node was stepped into exactly once...
    assert stats.restores > 0                           # ...and reached again by restoring snapshots
    assert stats.critic_calls >= 1 and result.critic_route == "embedded"

    # an independent check of the final evaluation: the best path in a fresh session scores 1
    env, reward, _ = clients
    created = await env.create_session(TASK, seed=TASK_SEED, max_steps=DEPTH)
    try:
        for edge in path:
            r = await env.step(created.session_id, edge.action)
            assert r.action_ok, r.action_error
        state = await env.get_state(created.session_id)
        assert (await reward.evaluate(TASK, state.state_json, state.final_message)).success
    finally:
        await env.close_session(created.session_id)


class ReplayEnvFailure(RuntimeError):
    """A replay's session ended in an environment failure (the env closed it): it says nothing of the path."""


async def replay_once(env, actions: list[A.Action]) -> tuple[str, dict]:
    created = await env.create_session(TASK, seed=TASK_SEED, max_steps=DEPTH)
    try:
        obs = created.observation
        for action in actions:
            stepped = await env.step(created.session_id, action)
            if stepped.env_failure:
                raise ReplayEnvFailure(f"{A.describe(action)}: {stepped.env_failure_reason}")
            obs = stepped.observation
        state = json.loads((await env.get_state(created.session_id)).state_json)
        return fingerprint(obs), state["initialfinaldiff"]
    finally:
        await env.close_session(created.session_id)


async def replay_in_fresh_session(env, node) -> tuple[str, dict]:
    """The fingerprint and state diff `node`'s path leads to from a fresh session; a replay lost to
    an environment failure is run again (at most REPLAY_ATTEMPTS in all), one that differs is not."""
    actions = [step.action for step in node.path_history]
    for _ in range(REPLAY_ATTEMPTS - 1):
        try:
            return await replay_once(env, actions)
        except ReplayEnvFailure:
            continue
    return await replay_once(env, actions)


class _FlakyEnv:
    """An env whose first `lost` sessions end their first step in an environment failure."""

    def __init__(self, lost: int) -> None:
        self.lost, self.created, self.closed = lost, 0, 0

    async def create_session(self, task_id, seed, max_steps):
        self.created += 1
        return pb.CreateSessionResponse(session_id=str(self.created), observation=cpb.Observation(url="/start"))

    async def step(self, session_id, action):
        if int(session_id) <= self.lost:
            return pb.StepResponse(env_failure=True, env_failure_reason="the machine was busy")
        return pb.StepResponse(action_ok=True, observation=cpb.Observation(url="/page2"))

    async def get_state(self, session_id):
        return pb.GetStateResponse(state_json=json.dumps({"initialfinaldiff": {"added": {}}}))

    async def close_session(self, session_id):
        self.closed += 1


async def test_a_replay_lost_to_an_env_failure_runs_again_and_one_lost_every_time_raises():
    node = SimpleNamespace(path_history=[SimpleNamespace(action=A.Noop())])
    env = _FlakyEnv(lost=REPLAY_ATTEMPTS - 1)
    assert await replay_in_fresh_session(env, node) == (fingerprint(cpb.Observation(url="/page2")), {"added": {}})
    assert env.created == env.closed == REPLAY_ATTEMPTS
    env = _FlakyEnv(lost=REPLAY_ATTEMPTS)
    with pytest.raises(ReplayEnvFailure, match="the machine was busy"):
        await replay_in_fresh_session(env, node)
    assert env.created == env.closed == REPLAY_ATTEMPTS


async def test_every_branch_matches_a_fresh_linear_replay_of_its_path(clients, searched):
    """Exploring siblings through snapshot/restore leaked nothing between branches, and back/forward
    (which follow the tab's history, not rewound by a restore) went where one linear episode goes."""
    env = clients[0]
    nodes = [n for n in iter_nodes(searched.root) if n.depth >= 1 and (n.depth == 1 or n.success)]
    assert len(nodes) >= 10
    backs = [n for n in iter_nodes(searched.root) if n.parent_edge and isinstance(n.parent_edge.action, A.GoBack)]
    assert backs and searched.stats.side_sessions == len(backs)    # run in side sessions...
    assert all(n.frozen and not n.edges for n in backs)            # ...whose children stay leaves
    limit = asyncio.Semaphore(4)

    async def check(node):
        async with limit:
            return node, await replay_in_fresh_session(env, node)

    for node, (fp, diff) in await asyncio.gather(*(check(n) for n in nodes)):
        assert fp == node.fingerprint, [A.describe(s.action) for s in node.path_history]
        assert diff == json.loads(node.state_json)["initialfinaldiff"], [A.describe(s.action) for s in node.path_history]


async def test_restore_keeps_branches_independent_and_replays_browser_only_state(clients):
    """Two siblings from the root of playground-name: typing a name (browser-only until saved) and
    signing up (server state). Each is reached again by restore, and steps from it see only its own branch."""
    env, reward, gateway = clients
    ts = TreeSearch(env, reward, gateway, "embedded", "", MCTSConfig(max_depth=3, critic_model="embedded"))
    root = await ts.open("playground-name", 0)
    try:
        bid = {e.name: e.bid for e in root.context.page.elements}
        from halo.trainers.mcts.tree import Edge

        typed_edge, signup_edge = Edge(root, A.Fill(bid["Name"], "Ada Lovelace")), Edge(root, A.ClickElement(bid["Sign up"]))
        root.edges, root.expanded = [typed_edge, signup_edge], True
        typed = await ts.execute(typed_edge)
        signed = await ts.execute(signup_edge)          # restores the root first
        assert typed.context.page.elements != signed.context.page.elements
        assert typed_edge.components.get("milestone:name_typed", 0) > 0
        assert "milestone:name_typed" not in signup_edge.components     # rewards are per path
        assert ts.stats.restores == 1 and ts.stats.replays == 0

        # back to the typed branch: its snapshot cannot hold the unsaved text -> restore root + replay the fill
        assert await ts.reach(typed)
        assert ts.stats.restore_mismatches == 1 and ts.stats.replays == 1 and not typed.restore_faithful
        name_box = next(e for e in (await env.observe(ts.session_id)).elements if e.bid == bid["Name"])
        assert name_box.value == "Ada Lovelace"
        save = Edge(typed, A.ClickElement(bid["Save"]))
        typed.edges, typed.expanded = [save], True
        saved = await ts.execute(save)
        assert saved.success and saved.terminal           # name saved: playground-name passes
        diff = json.loads(saved.state_json)["initialfinaldiff"]["updated"]
        assert diff["profile"]["name"] == "Ada Lovelace" and "signup" not in diff

        # and the sign-up branch never saw the name
        assert await ts.reach(signed)
        assert ts.stats.restore_mismatches == 1           # its server-side state restores faithfully
        state = json.loads((await env.get_state(ts.session_id)).state_json)["initialfinaldiff"]["updated"]
        assert state["signup"]["clicked"] is True and "profile" not in state
    finally:
        await ts.close()


async def test_preference_pairs_are_well_formed(searched):
    from halo.trainers.mcts.preferences import preference_pairs

    pairs = preference_pairs(searched, margin=0.05)
    assert len(pairs) >= 3
    nodes = {n.id: n for n in iter_nodes(searched.root)}
    for p in pairs:
        node = nodes[p.node_id]
        assert p.context is node.context                                   # one state for both actions
        by_action = {e.action: e for e in node.edges}
        chosen, rejected = by_action[p.chosen], by_action[p.rejected]
        assert chosen.visits > 0 and rejected.visits > 0 and p.chosen != p.rejected
        assert p.q_chosen == chosen.q(CONFIG.alpha) > rejected.q(CONFIG.alpha) == p.q_rejected
        assert p.gap >= 0.05
        assert max(e.q(CONFIG.alpha) for e in node.edges if e.visits) == p.q_chosen  # the best sibling is chosen
        candidates = {c.action for c in enumerate_candidates(p.context)}
        assert p.chosen in candidates and p.rejected in candidates       # the embedded learner can score both
    best_first = searched.best_path[0]
    assert any(p.node_id == searched.root.id and p.chosen == best_first.action for p in pairs)


async def test_dpo_raises_chosen_over_rejected_and_the_trained_policy_solves_the_task(clients, searched):
    from halo.embedded.policy import EmbeddedPolicy, head_from_bytes
    from halo.trainers.embedded_learner import EmbeddedLearner
    from halo.trainers.mcts.preferences import preference_pairs

    pairs = preference_pairs(searched, margin=0.05)
    learner = await asyncio.to_thread(EmbeddedLearner, 2e-2, 0)   # seed 0 = the gateway's untrained head
    reference = head_from_bytes(learner.weights())

    def margins() -> list[float]:
        out = []
        for p in pairs:
            features = learner.policy.featurize(p.context)
            index = {c.action: i for i, c in enumerate(features.candidates)}
            logp = EmbeddedPolicy.log_probs(learner.head, features.tensor).detach()
            out.append(float(logp[index[p.chosen]] - logp[index[p.rejected]]))
        return out

    before = await asyncio.to_thread(margins)
    history = [await asyncio.to_thread(learner.dpo_update, pairs, reference, 0.1, 1.0) for _ in range(30)]
    after = await asyncio.to_thread(margins)
    assert history[0]["dpo_loss"] == pytest.approx(0.6931, abs=1e-3)    # starts at the reference: log 2
    assert history[-1]["dpo_loss"] < 0.6 and history[-1]["pairs_trained"] == len(pairs)
    assert all(a > b for a, b in zip(after, before)), list(zip(before, after))
    assert history[-1]["dpo_accuracy"] == 1.0

    # Agent Q's claim at toy scale: the greedy policy after DPO follows the searched path
    env, reward, gateway = clients
    await gateway.load_adapter("embedded", "mcts-dpo", weights=learner.weights())
    try:
        trained = await rollouts(clients, "mcts-dpo", 0.0, seeds=[1])
    finally:
        await gateway.unload_adapter("embedded", "mcts-dpo")
    assert trained[0].success, [t.decision.raw_text for t in trained[0].transitions]
