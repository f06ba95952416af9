"""MCTS over env snapshots, Agent Q style: one search over one env session.

One search = one env session on one (task, seed). The tree's nodes are page states; its edges
are actions. Every simulation walks from the root:

1. selection: at each expanded node, an edge not yet tried goes first (the critic's favourite
   first: AI self-critique ranks the candidates), otherwise UCB1 over the tried ones,
   `Q + c·sqrt(ln N(s) / N(s, a))` with c = 1.414 and the composite `Q = α·Q_mcts + (1−α)·Q_critic`;
2. expansion: a node is expanded once, with K (default 5) distinct candidate actions sampled
   through the gateway (Sample n=K, duplicates dropped, up to `resample_rounds` more calls to
   reach K) and scored by the gateway's Critique route (`Q_critic` in [0, 1]); progressive
   widening samples K more every `widen_every` visits (default 10; 0 keeps exactly K);
3. simulation: the env is put back at the node (Restore of the node's snapshot, not a replay
   from the start) and the new edge's action is executed once; its reward comes from the reward
   service along that path (a fresh reward episode replays the path's transitions, so novelty,
   loops and milestones are paid as in one linear episode along it, independent of the order the
   tree was explored in) and the new state gets the final evaluation (REAL's evaluator through
   the reward service); a state that passes it, or an episode end, is terminal;
4. backup: the path's rewards plus the leaf value (the success bonus) go up every edge on the
   path: `Q_mcts(s, a)` is the mean return from (s, a) over the simulations through it.

Snapshots capture what the replica's server holds plus the URL. Whatever lives only in the
browser (a typed but unsaved field) is not in them: every node keeps a fingerprint of its
observation (URL + elements' bids, roles, names, values), and when a restored page does not
match it, the node is reached by restoring its parent and replaying the one edge (counted as
`replays`). A replay that still does not match freezes the node: it keeps its value but is not
expanded further (`divergences`). Back and forward go where the tab's history says, which a
restore does not rewind: those edges run in a fresh side session that replays the path from the
start (one linear episode's history), and their child is a leaf (`side_sessions`).

The tree itself (nodes, edges, UCB, backup) is tree.py; the trainer on top of it is recipe.py.
"""

from __future__ import annotations

import random
import time
from typing import Any

from halo.agent import actions as A
from halo.agent.actions import action_from_proto
from halo.agent.context import PastStep, PolicyContext, page_from_proto
from halo.client.env import EnvClient, observation_options
from halo.client.policy import PolicyClient
from halo.client.reward import RewardClient, page_state
from halo.errors import HaloError, Unavailable
from halo.v1 import common_pb2 as cpb
from halo.trainers.mcts.tree import (
    Edge, MCTSConfig, Node, QBounds, SearchResult, SearchStats, backup, fingerprint, iter_nodes, select_edge,
)

MODE = "qwen3vl_mcts"
HISTORY_ACTIONS = (A.GoBack, A.GoForward)   # their outcome depends on the tab's history


class EnvFailure(Exception):
    """The env lost the session (browser crash, site down): the tree is dropped, not learned from."""


# ----------------------------------------------------------------------------- the search

class TreeSearch:
    """One MCTS over one env session; a pure client of env, reward and the gateway."""

    def __init__(self, env: EnvClient, reward: RewardClient, gateway: PolicyClient, model: str, adapter: str,
                 config: MCTSConfig) -> None:
        self.env, self.reward, self.gateway = env, reward, gateway
        self.model, self.adapter, self.config = model, adapter, config
        self.options = observation_options(config.image_format, 80, screenshot=config.screenshots)
        self.stats = SearchStats()
        self.bounds = QBounds()
        self.critic_route = ""
        self._ids = 0
        self._at: Node | None = None    # the node the session is at now
        self._session = ""
        self._task_id = ""
        self._seed = 0
        self.goal = ""
        self.root: Node | None = None

    async def open(self, task_id: str, seed: int) -> Node:
        """A session on (task, seed) and the root node (its snapshot taken)."""
        cfg = self.config
        created = await self.env.create_session(task_id, seed=seed, max_steps=cfg.max_depth, observation=self.options,
                                                run_id=cfg.run_id, labels={"trainer": "mcts"}, include_state=True)
        self._session, self._task_id, self._seed, self.goal = created.session_id, task_id, seed, created.task.goal
        if not created.task.replica_available:
            await self.close()
            raise HaloError(f"MCTS needs snapshots, which only local replicas have; task {task_id} has none")
        obs = created.observation
        snapshot = await self.env.snapshot(self._session)
        root = Node(self._next_id(), 0, PolicyContext(created.task.goal, page_from_proto(obs)),
                    page_state(obs, created.state_json), fingerprint(obs), snapshot_id=snapshot.snapshot_id,
                    state_json=created.state_json)
        self.root = self._at = root
        return root

    async def close(self) -> None:
        if self._session:
            try:
                await self.env.close_session(self._session)
            except HaloError:
                pass  # the env already closed it (env failure)
            self._session = ""

    async def run(self, task_id: str, seed: int) -> SearchResult:
        started = time.perf_counter()
        cfg = self.config
        result = SearchResult(task_id, seed, "", None, cfg, self.stats)
        try:
            root = result.root = await self.open(task_id, seed)
            result.goal = self.goal
            for i in range(cfg.simulations):
                if root.terminal or root.frozen:
                    break
                await self.simulate()
                self.stats.simulations = i + 1
                if not self.stats.solved_at and any(n.success for n in iter_nodes(root)):
                    self.stats.solved_at = i + 1
        except (EnvFailure, Unavailable) as exc:
            result.env_failure, result.env_failure_reason = True, str(exc)
        finally:
            self.stats.seconds = time.perf_counter() - started
            result.critic_route = self.critic_route
            await self.close()
        return result

    @property
    def session_id(self) -> str:
        return self._session

    def _next_id(self) -> int:
        self._ids += 1
        return self._ids - 1

    # --- one simulation (open() first) ----------------------------------------------------------------------

    async def simulate(self) -> None:
        cfg = self.config
        node = self.root
        assert node is not None
        path: list[Edge] = []
        while True:
            if node.terminal or node.frozen:
                leaf = node.value
                break
            if not node.expanded or self._should_widen(node):
                await self.expand(node)
            if not node.edges:          # nothing the policy can do here
                node.terminal = True
                leaf = node.value
                break
            edge = select_edge(node, cfg.alpha, cfg.ucb_c, self.bounds)
            path.append(edge)
            if edge.child is None:
                child = await self.execute(edge)
                if child is None:       # the parent could not be reached faithfully: it is frozen now
                    path.pop()
                    leaf = node.value
                    break
                leaf = child.value
                break
            node = edge.child
        backup(path, leaf)
        for edge in path:
            self.bounds.update(edge.q(cfg.alpha))

    def _should_widen(self, node: Node) -> bool:
        cfg = self.config
        return (cfg.widen_every > 0 and len(node.edges) < cfg.children_cap
                and node.visits >= cfg.widen_every * (node.widenings + 1))

    async def expand(self, node: Node) -> None:
        """K new distinct candidates from the policy (Sample n=K), ranked by the critic (Critique)."""
        cfg = self.config
        if node.expanded:
            node.widenings += 1
        target = min(cfg.children, cfg.children_cap - len(node.edges))
        seen = {e.action for e in node.edges}
        fresh: list[tuple[A.Action, str, float, cpb.Action]] = []   # action, text, logprob, its proto
        for round_ in range(1 + cfg.resample_rounds):
            seed = random.Random(f"{cfg.seed}:{self._task_id}:{node.id}:{node.widenings}:{round_}").randrange(1, 2**31)
            response = await self.gateway.sample(self.model, input=node.context, n=cfg.children,
                                                  temperature=cfg.temperature, adapter=self.adapter, logprobs=True, seed=seed)
            self.stats.sample_calls += 1
            for c in response.candidates:
                if not c.valid:
                    self.stats.invalid_candidates += 1
                    continue
                action = action_from_proto(c.action)
                if action in seen:
                    continue
                seen.add(action)
                fresh.append((action, c.text, sum(c.logprobs), c.action))
                if len(fresh) >= target:
                    break
            if len(fresh) >= target:
                break
        if fresh:
            verdict = await self.gateway.critique(node.context, [m for _, _, _, m in fresh], model=cfg.critic_model)
            self.stats.critic_calls += 1
            self.stats.critic_unparsed += not verdict.parsed
            self.critic_route = verdict.model
            for (action, text, logprob, message), score in zip(fresh, verdict.scores, strict=True):
                node.edges.append(Edge(node, action, text, logprob, float(score), message=message))
        node.expanded = True
        self.stats.expansions += 1

    # --- moving the session around the tree ----------------------------------------------------

    async def _step(self, action: A.Action | cpb.Action, text: str = "", session: str = "", include_state: bool = False) -> Any:
        """One action (a proto goes as it is); `include_state`: the reply carries the replica's state."""
        result = await self.env.step(session or self._session, action, raw_text=text, observation=self.options,
                                     include_state=include_state)
        if result.env_failure:
            raise EnvFailure(result.env_failure_reason or "environment failure")
        return result

    async def reach(self, node: Node) -> bool:
        """Put the session at `node`: restore its snapshot, or restore its parent and replay one edge."""
        if self._at is node:
            return True
        if node.frozen:
            return False
        self._at = None
        if node.snapshot_id and node.restore_faithful:
            obs = await self.env.restore(self._session, node.snapshot_id, observation=self.options)
            self.stats.restores += 1
            if fingerprint(obs) == node.fingerprint:
                self._at = node
                return True
            node.restore_faithful = False  # browser-only state: it will not come back with a restore
            self.stats.restore_mismatches += 1
        edge = node.parent_edge
        if edge is None or not await self.reach(edge.parent):
            node.frozen = True
            return False
        result = await self._step(edge.action_message())
        self.stats.replays += 1
        self._at = None
        if fingerprint(result.observation) != node.fingerprint:
            self.stats.divergences += 1
            node.frozen = True
            return False
        self._at = node
        return True

    async def execute(self, edge: Edge) -> Node | None:
        """Take a new edge: its child state, its path-faithful reward, the evaluation of the new state."""
        parent = edge.parent
        if isinstance(edge.action, HISTORY_ACTIONS):
            return await self._execute_in_side_session(edge)
        if not await self.reach(parent):
            return None
        result = await self._step(edge.action_message(), include_state=True)
        self.stats.env_steps += 1
        self._at = None
        child = await self._child(edge, result)
        if not child.terminal:
            child.snapshot_id = (await self.env.snapshot(self._session)).snapshot_id
        self._at = child
        return child

    async def _execute_in_side_session(self, edge: Edge) -> Node:
        """Back/forward go where the tab's history says, and a restore does not rewind that history:
        run the edge in a fresh session that replays the path from the start (the history of one
        linear episode). The child cannot be restored in the tree's session: it is a leaf (frozen)."""
        cfg = self.config
        created = await self.env.create_session(self._task_id, seed=self._seed, max_steps=cfg.max_depth,
                                                observation=self.options, run_id=cfg.run_id, labels={"trainer": "mcts"})
        side = created.session_id
        try:
            for step in edge.parent.path_history:
                await self._step(step.message if step.message is not None else step.action, step.raw_text, side)
            self.stats.replays += len(edge.parent.path_history)
            result = await self._step(edge.action_message(), session=side, include_state=True)
            self.stats.env_steps += 1
            self.stats.side_sessions += 1
        finally:
            try:
                await self.env.close_session(side)
            except HaloError:
                pass
        child = await self._child(edge, result)
        child.frozen = True
        return child

    async def _child(self, edge: Edge, result: Any) -> Node:
        """The node an executed edge led to (`result`: its Step reply, with the state), with its reward and evaluation."""
        cfg = self.config
        parent = edge.parent
        obs = result.observation
        history = parent.path_history + (PastStep(edge.action, result.action_error, edge.text, edge.action_message()),)
        child = Node(
            self._next_id(), parent.depth + 1,
            PolicyContext(parent.context.goal, page_from_proto(obs), history[-cfg.history_steps:] if cfg.history_steps else ()),
            page_state(obs, result.state_json), fingerprint(obs), parent_edge=edge, path_history=history,
            state_json=result.state_json, final_message=result.final_message, done=result.done,
        )
        edge.child, edge.action_ok, edge.action_error = child, result.action_ok, result.action_error
        await self._score(child)
        child.terminal = child.done or (child.success and cfg.solved_is_terminal)
        return child

    async def _score(self, child: Node) -> None:
        """The reward of the edge into `child` as one linear episode along the path would pay it,
        and the final evaluation of `child`'s state (success bonus = leaf value)."""
        cfg = self.config
        path: list[Edge] = []
        node = child
        while node.parent_edge is not None:
            path.append(node.parent_edge)
            node = node.parent_edge.parent
        path.reverse()
        root = self.root
        assert root is not None
        episode_id = f"mcts-{self._session}-{child.id}"
        await self.reward.start_episode(episode_id, self._task_id, overrides=cfg.reward_overrides, initial=root.page)
        try:
            breakdown = None
            for i, edge in enumerate(path):
                assert edge.child is not None
                breakdown = await self.reward.score_transition(
                    episode_id, i, edge.action_message(), edge.parent.page, edge.child.page, action_ok=edge.action_ok,
                    done=edge.child.done,
                )
            assert breakdown is not None
            last = path[-1]
            last.reward = breakdown.total
            last.components = {c.name: c.value for c in breakdown.components}
            if cfg.evaluate_leaves or child.done:
                evaluation = await self.reward.evaluate(self._task_id, child.state_json, child.final_message,
                                                        episode_id=episode_id)
                self.stats.evaluations += 1
                child.success = evaluation.success
                child.success_strict = evaluation.success_strict
                child.value = evaluation.success_bonus if evaluation.success else 0.0
        finally:
            try:
                await self.reward.end_episode(episode_id)
            except HaloError:
                pass


async def search(env: EnvClient, reward: RewardClient, gateway: PolicyClient, model: str, adapter: str,
                 task_id: str, seed: int, config: MCTSConfig) -> SearchResult:
    return await TreeSearch(env, reward, gateway, model, adapter, config).run(task_id, seed)


def config_from_spec(spec, run_id: str = "") -> MCTSConfig:
    """MCTSConfig from a RunSpec: `extra` keys named like the config's fields, depth = max_steps."""
    extra = spec.extra
    model = spec.model

    def get(name: str, default: Any) -> Any:
        return type(default)(extra[name]) if name in extra else default

    d = MCTSConfig()
    return MCTSConfig(
        simulations=get("simulations", d.simulations), children=get("children", d.children),
        ucb_c=get("ucb_c", d.ucb_c), alpha=get("alpha", d.alpha),
        max_depth=int(extra.get("depth", spec.max_steps)), temperature=spec.temperature,
        resample_rounds=get("resample_rounds", d.resample_rounds), widen_every=get("widen_every", d.widen_every),
        max_children=get("max_children", d.max_children),
        critic_model=str(extra.get("critic", model)),  # the embedded route's own scores when none is named
        evaluate_leaves=get("evaluate_leaves", d.evaluate_leaves),
        solved_is_terminal=get("solved_is_terminal", d.solved_is_terminal),
        reward_overrides=dict(spec.reward_overrides), run_id=run_id, seed=spec.seed,
    )


def search_metrics(results: list[SearchResult]) -> dict[str, float]:
    kept = [r for r in results if not r.env_failure]
    n = len(kept) or 1
    total = lambda name: float(sum(getattr(r.stats, name) for r in kept))  # noqa: E731
    paths = [r.best_path for r in kept]
    return {
        "searches": float(len(kept)), "env_failures": float(len(results) - len(kept)),
        "search_success_rate": sum(r.success for r in kept) / n,   # best path passes the evaluation
        "success_rate": sum(r.success for r in kept) / n,          # the same, under the name GRPO runs and dashboards use
        "success_rate_strict": sum(r.success_strict for r in kept) / n,   # best path passes strict success too
        "found_success_rate": sum(r.found for r in kept) / n,      # some node passes it
        "best_path_length": sum(len(p) for p in paths) / n,
        "best_path_q": sum(p[0].q(r.config.alpha) for r, p in zip(kept, paths) if p) / n,
        "tree_nodes": sum(r.nodes for r in kept) / n,
        "simulations": total("simulations"), "env_steps": total("env_steps"), "restores": total("restores"),
        "restore_mismatches": total("restore_mismatches"), "replays": total("replays"),
        "divergences": total("divergences"), "critic_calls": total("critic_calls"),
        "invalid_candidates": total("invalid_candidates"), "search_s": total("seconds"),
    }
