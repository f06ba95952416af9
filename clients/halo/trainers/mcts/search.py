"""MCTS over env snapshots, Agent Q style, and the trainer built on it (run kind "mcts").

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

Training (`train_embedded`): each step searches `groups_per_batch` tasks with the run's current
policy, turns sibling actions with different composite Q into step-level preference pairs
(preferences.py) and takes DPO steps on the embedded policy's scoring head against a frozen
reference head (the run's initial weights). New weights go to the gateway as the run's adapter
and into the step's checkpoint (head.safetensors, the `qwen3vl_mcts` adapter of the embedded
backend), exactly like GRPO.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import math
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from halo.agent import actions as A
from halo.agent.actions import action_from_proto
from halo.agent.context import PastStep, PolicyContext, page_from_proto
from halo.client.env import EnvClient, observation_options
from halo.client.policy import PolicyClient
from halo.client.reward import RewardClient, page_state
from halo.errors import HaloError, Unavailable
from halo.v1 import common_pb2 as cpb
from halo.v1 import reward_pb2 as rpb

MODE = "qwen3vl_mcts"
HISTORY_ACTIONS = (A.GoBack, A.GoForward)   # their outcome depends on the tab's history


@dataclass(frozen=True)
class MCTSConfig:
    """Search settings; defaults are the user's numbers (seeds/000: 50 simulations, c = 1.414, 5 children)."""

    simulations: int = 50
    children: int = 5                   # K: candidate actions per expansion
    ucb_c: float = 1.414
    alpha: float = 0.5                  # composite Q = alpha * Q_mcts + (1 - alpha) * Q_critic
    max_depth: int = 8                  # actions from the root; the session ends there (max_steps)
    temperature: float = 1.0            # sampling temperature of the candidate proposals
    resample_rounds: int = 2            # extra Sample calls when n=K gave fewer than K distinct actions
    widen_every: int = 10               # progressive widening: K more candidates every this many visits (0: off)
    max_children: int = 0               # cap with widening (0: 4 K)
    critic_model: str = ""              # gateway route for Critique ("" = the gateway's default critic)
    evaluate_leaves: bool = True        # final evaluation of every new state (else only at episode ends)
    solved_is_terminal: bool = True     # a state that passes the evaluation is not expanded further
    screenshots: bool = False           # the embedded policy reads the AXTree only
    image_format: str = "jpeg"
    history_steps: int = 5
    reward_overrides: dict[str, float] = field(default_factory=dict)
    run_id: str = ""
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("simulations", "children", "max_depth"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if not 0.0 <= self.alpha <= 1.0:
            raise ValueError(f"alpha must be in [0, 1], got {self.alpha}")
        if self.ucb_c < 0:
            raise ValueError(f"ucb_c must be >= 0, got {self.ucb_c}")

    @property
    def children_cap(self) -> int:
        return self.max_children or 4 * self.children


# ------------------------------------------------------------------------------- the tree

@dataclass(eq=False)
class Node:
    id: int
    depth: int
    context: PolicyContext              # what the policy sees here (goal, page, last actions)
    page: rpb.PageState                 # what the reward service sees here
    fingerprint: str
    parent_edge: "Edge | None" = None
    path_history: tuple[PastStep, ...] = ()
    snapshot_id: str = ""               # "" for terminal nodes (never restored)
    state_json: str = ""
    final_message: str = ""
    done: bool = False                  # the episode ended here (message sent, max steps)
    success: bool = False               # the final evaluation of this state passed
    value: float = 0.0                  # leaf value: the success bonus when it passed
    terminal: bool = False
    frozen: bool = False                # could not be reached again faithfully
    restore_faithful: bool = True       # False once a restore of its snapshot missed browser-only state
    expanded: bool = False
    widenings: int = 0
    visits: int = 0
    edges: list["Edge"] = field(default_factory=list)

    @property
    def url(self) -> str:
        return self.context.page.url


@dataclass(eq=False)
class Edge:
    parent: Node
    action: A.Action
    text: str = ""                      # the candidate as the gateway wrote it
    logprob: float = 0.0                # log pi(action | state) under the sampling policy
    critic: float = 0.5                 # Q_critic in [0, 1]
    child: Node | None = None
    reward: float = 0.0                 # shaped reward of the transition (reward service)
    components: dict[str, float] = field(default_factory=dict)
    action_ok: bool = True
    action_error: str = ""
    visits: int = 0
    value_sum: float = 0.0

    @property
    def q_mcts(self) -> float:
        return self.value_sum / self.visits if self.visits else 0.0

    def q(self, alpha: float) -> float:
        """Composite Q = alpha * Q_mcts + (1 - alpha) * Q_critic."""
        return alpha * self.q_mcts + (1.0 - alpha) * self.critic


@dataclass
class QBounds:
    """Min and max composite Q seen in the tree: UCB1 wants values in [0, 1], shaped returns are not
    (MuZero's min-max normalisation)."""

    low: float = math.inf
    high: float = -math.inf

    def update(self, q: float) -> None:
        self.low, self.high = min(self.low, q), max(self.high, q)

    def normalize(self, q: float) -> float:
        return (q - self.low) / (self.high - self.low) if self.high > self.low else q


def select_edge(node: Node, alpha: float, c: float, bounds: QBounds | None = None) -> Edge:
    """UCB1 over normalised composite Q. Untried edges go first, the critic's best first (ties: the policy's)."""
    untried = [e for e in node.edges if e.visits == 0]
    if untried:
        return max(untried, key=lambda e: (e.critic, e.logprob))
    bounds = bounds or QBounds()
    log_n = math.log(max(node.visits, 1))
    return max(node.edges, key=lambda e: bounds.normalize(e.q(alpha)) + c * math.sqrt(log_n / e.visits))


def backup(path: list[Edge], leaf_value: float) -> None:
    """Each edge gets the return from it to the leaf: its reward, the rewards below it, the leaf value."""
    ret = leaf_value
    for edge in reversed(path):
        ret += edge.reward
        edge.visits += 1
        edge.value_sum += ret
        edge.parent.visits += 1


def best_path(root: Node, alpha: float) -> list[Edge]:
    """From the root, the tried edge with the highest composite Q (ties: more visits), to a leaf."""
    path: list[Edge] = []
    node: Node | None = root
    while node is not None:
        tried = [e for e in node.edges if e.visits > 0 and e.child is not None]
        if not tried:
            break
        edge = max(tried, key=lambda e: (e.q(alpha), e.visits))
        path.append(edge)
        node = edge.child
    return path


def iter_nodes(root: Node):
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(e.child for e in reversed(node.edges) if e.child is not None)


def fingerprint(obs: cpb.Observation) -> str:
    """What must match for a restored page to be the node's page (focus and boxes may differ)."""
    lines = [obs.url] + [f"{e.bid}|{e.role}|{e.name}|{e.value}" for e in obs.elements]
    return hashlib.sha1("\n".join(lines).encode()).hexdigest()


@dataclass
class SearchStats:
    simulations: int = 0
    env_steps: int = 0                  # new edges executed
    restores: int = 0
    restore_mismatches: int = 0         # a restore lost browser-only state: replayed from the parent
    replays: int = 0                    # edges executed again to reach a node
    divergences: int = 0                # a replay did not reproduce the node: frozen
    side_sessions: int = 0              # back/forward edges run in a fresh session replaying the path
    expansions: int = 0
    sample_calls: int = 0
    critic_calls: int = 0
    critic_unparsed: int = 0
    evaluations: int = 0
    invalid_candidates: int = 0
    solved_at: int = 0                  # simulation (1-based) that first reached a passing state; 0: never
    seconds: float = 0.0

    def as_dict(self) -> dict[str, float]:
        return {k: float(v) for k, v in self.__dict__.items()}


@dataclass
class SearchResult:
    task_id: str
    seed: int
    goal: str
    root: Node | None
    config: MCTSConfig
    stats: SearchStats
    env_failure: bool = False
    env_failure_reason: str = ""
    critic_route: str = ""

    @property
    def best_path(self) -> list[Edge]:
        return best_path(self.root, self.config.alpha) if self.root is not None else []

    @property
    def success(self) -> bool:
        """The best path ends in a state that passes REAL's evaluation."""
        path = self.best_path
        return bool(path) and path[-1].child is not None and path[-1].child.success

    @property
    def found(self) -> bool:
        """Some node of the tree passes the evaluation."""
        return self.root is not None and any(n.success for n in iter_nodes(self.root))

    @property
    def nodes(self) -> int:
        return sum(1 for _ in iter_nodes(self.root)) if self.root is not None else 0

    def describe_best_path(self) -> list[dict[str, Any]]:
        return [
            {"action": A.describe(e.action), "text": e.text, "q": round(e.q(self.config.alpha), 4),
             "q_mcts": round(e.q_mcts, 4), "q_critic": round(e.critic, 4), "visits": e.visits,
             "reward": round(e.reward, 4), "url": e.parent.url, "success": bool(e.child and e.child.success)}
            for e in self.best_path
        ]


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
                                                run_id=cfg.run_id, labels={"trainer": "mcts"})
        self._session, self._task_id, self._seed, self.goal = created.session_id, task_id, seed, created.task.goal
        if not created.task.replica_available:
            await self.close()
            raise HaloError(f"MCTS needs snapshots, which only local replicas have; task {task_id} has none")
        obs = created.observation
        state = await self.env.get_state(self._session)
        snapshot = await self.env.snapshot(self._session)
        root = Node(self._next_id(), 0, PolicyContext(created.task.goal, page_from_proto(obs)),
                    page_state(obs, state.state_json), fingerprint(obs), snapshot_id=snapshot.snapshot_id,
                    state_json=state.state_json)
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
        fresh: list[tuple[A.Action, str, float]] = []
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
                fresh.append((action, c.text, sum(c.logprobs)))
                if len(fresh) >= target:
                    break
            if len(fresh) >= target:
                break
        if fresh:
            verdict = await self.gateway.critique(node.context, [a for a, _, _ in fresh], model=cfg.critic_model)
            self.stats.critic_calls += 1
            self.stats.critic_unparsed += not verdict.parsed
            self.critic_route = verdict.model
            for (action, text, logprob), score in zip(fresh, verdict.scores, strict=True):
                node.edges.append(Edge(node, action, text, logprob, float(score)))
        node.expanded = True
        self.stats.expansions += 1

    # --- moving the session around the tree ----------------------------------------------------

    async def _step(self, action: A.Action, text: str, session: str = "") -> Any:
        result = await self.env.step(session or self._session, action, raw_text=text, observation=self.options)
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
        result = await self._step(edge.action, edge.text)
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
        cfg = self.config
        parent = edge.parent
        if isinstance(edge.action, HISTORY_ACTIONS):
            return await self._execute_in_side_session(edge)
        if not await self.reach(parent):
            return None
        result = await self._step(edge.action, edge.text)
        self.stats.env_steps += 1
        self._at = None
        state = await self.env.get_state(self._session)
        child = await self._child(edge, result, state)
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
                await self._step(step.action, step.raw_text, side)
            self.stats.replays += len(edge.parent.path_history)
            result = await self._step(edge.action, edge.text, side)
            self.stats.env_steps += 1
            self.stats.side_sessions += 1
            state = await self.env.get_state(side)
        finally:
            try:
                await self.env.close_session(side)
            except HaloError:
                pass
        child = await self._child(edge, result, state)
        child.frozen = True
        return child

    async def _child(self, edge: Edge, result: Any, state: Any) -> Node:
        """The node an executed edge led to, with its reward and evaluation."""
        cfg = self.config
        parent = edge.parent
        obs = result.observation
        history = parent.path_history + (PastStep(edge.action, result.action_error, edge.text),)
        child = Node(
            self._next_id(), parent.depth + 1,
            PolicyContext(parent.context.goal, page_from_proto(obs), history[-cfg.history_steps:] if cfg.history_steps else ()),
            page_state(obs, state.state_json), fingerprint(obs), parent_edge=edge, path_history=history,
            state_json=state.state_json, final_message=state.final_message, done=result.done,
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
                    episode_id, i, edge.action, edge.parent.page, edge.child.page, action_ok=edge.action_ok,
                    raw_text=edge.text, done=edge.child.done,
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


# ----------------------------------------------------------------------------- the trainer

def search_metrics(results: list[SearchResult]) -> dict[str, float]:
    kept = [r for r in results if not r.env_failure]
    n = len(kept) or 1
    total = lambda name: float(sum(getattr(r.stats, name) for r in kept))  # noqa: E731
    paths = [r.best_path for r in kept]
    return {
        "searches": float(len(kept)), "env_failures": float(len(results) - len(kept)),
        "search_success_rate": sum(r.success for r in kept) / n,   # best path passes the evaluation
        "success_rate": sum(r.success for r in kept) / n,          # the same, under the name GRPO runs and dashboards use
        "found_success_rate": sum(r.found for r in kept) / n,      # some node passes it
        "best_path_length": sum(len(p) for p in paths) / n,
        "best_path_q": sum(p[0].q(r.config.alpha) for r, p in zip(kept, paths) if p) / n,
        "tree_nodes": sum(r.nodes for r in kept) / n,
        "simulations": total("simulations"), "env_steps": total("env_steps"), "restores": total("restores"),
        "restore_mismatches": total("restore_mismatches"), "replays": total("replays"),
        "divergences": total("divergences"), "critic_calls": total("critic_calls"),
        "invalid_candidates": total("invalid_candidates"), "search_s": total("seconds"),
    }


async def train_embedded(ctx) -> None:
    """kind=mcts, backend=embedded: search -> step-level preference pairs -> DPO on the scoring head."""
    from halo.embedded.policy import ScoringHead, head_from_bytes, head_to_bytes
    from halo.trainers.embedded_learner import DEFAULT_LR, EmbeddedLearner
    from halo.trainers.grpo import evaluate_greedy, expand_tasks
    from halo.trainers.mcts.preferences import preference_pairs
    from halo.rollout.episode import RolloutConfig

    spec = ctx.spec
    extra = spec.extra
    lr = spec.learning_rate if spec.learning_rate > 1e-5 else DEFAULT_LR  # 1e-6 is LoRA's default, not the head's
    learner = await asyncio.to_thread(EmbeddedLearner, lr, spec.seed)
    reference: ScoringHead
    if ctx.last_checkpoint is not None:
        learner.load(ctx.last_checkpoint)
        reference = head_from_bytes((ctx.last_checkpoint / "reference.safetensors").read_bytes())
    else:
        reference = head_from_bytes(learner.weights())  # frozen: the run's initial policy
    reference_bytes = head_to_bytes(reference)
    config = config_from_spec(spec, ctx.run_id)
    beta = float(extra.get("dpo_beta", 0.1))
    margin = float(extra.get("pair_margin", 0.05))
    update_epochs = max(1, int(extra.get("update_epochs", 4)))
    concurrency = max(1, int(extra.get("concurrency", spec.groups_per_batch)))
    eval_every = int(extra.get("eval_every", 0))
    eval_seeds = [int(s) for s in extra.get("eval_seeds", [1001, 1002])]
    adapter = f"run-{ctx.run_id}"
    services = ctx.services
    async with EnvClient(services.env, token=services.token, tls_ca=services.tls_ca) as env, \
            RewardClient(services.reward, token=services.token, tls_ca=services.tls_ca) as reward, \
            PolicyClient(services.gateway, token=services.token, tls_ca=services.tls_ca) as gateway:
        tasks = await expand_tasks(env, spec.task_ids)
        await gateway.load_adapter(spec.model, adapter, weights=learner.weights())
        rollout_config = RolloutConfig(max_steps=config.max_depth, screenshots=False,
                                       reward_overrides=spec.reward_overrides, run_id=ctx.run_id)
        ctx.log(f"MCTS: {config.simulations} simulations, K={config.children}, c={config.ucb_c}, alpha={config.alpha}, "
                f"depth {config.max_depth}; critic route {config.critic_model!r}; DPO beta={beta}")
        baseline: dict[str, float] = {}
        if eval_every and ctx.start_step == 0:
            baseline["eval_success_rate_untrained"] = await evaluate_greedy(
                env, reward, gateway, spec.model, adapter, tasks, eval_seeds, rollout_config, concurrency)
        limit = asyncio.Semaphore(concurrency)
        try:
            for step in range(ctx.start_step + 1, spec.total_steps + 1):
                if ctx.stop_requested():
                    return
                started = time.perf_counter()
                rng = random.Random(f"{spec.seed}:{step}")  # the batch of a step is the same after a resume
                batch = [(rng.choice(tasks), rng.randrange(1_000)) for _ in range(spec.groups_per_batch)]

                async def one(task_id: str, seed: int) -> SearchResult:
                    async with limit:
                        step_config = dataclasses.replace(config, seed=config.seed * 1_000_003 + step)
                        return await search(env, reward, gateway, spec.model, adapter, task_id, seed, step_config)

                results = await asyncio.gather(*(one(t, s) for t, s in batch))
                pairs = [p for r in results if not r.env_failure for p in preference_pairs(r, margin=margin)]
                update: dict[str, float] = {"pairs": float(len(pairs))}
                for _ in range(update_epochs):
                    update |= await asyncio.to_thread(learner.dpo_update, pairs, reference, beta, spec.temperature)
                await gateway.load_adapter(spec.model, adapter, weights=learner.weights())
                metrics = search_metrics(results) | update
                if eval_every and (step % eval_every == 0 or step == spec.total_steps):
                    metrics["eval_success_rate"] = await evaluate_greedy(
                        env, reward, gateway, spec.model, adapter, tasks, eval_seeds, rollout_config, concurrency)
                metrics |= {"step_s": time.perf_counter() - started} | baseline
                baseline = {}
                summary = [{"task_id": r.task_id, "seed": r.seed, "success": r.success, "found": r.found,
                            "env_failure": r.env_failure, "critic_route": r.critic_route,
                            "stats": r.stats.as_dict(), "best_path": r.describe_best_path()} for r in results]

                def save(folder: Path, summary=summary) -> None:
                    learner.save(folder)
                    (folder / "reference.safetensors").write_bytes(reference_bytes)
                    (folder / "adapter.json").write_text(json.dumps(
                        {"mode": MODE, "backend": "embedded", "route": spec.model, "weights": "head.safetensors",
                         "reference": "reference.safetensors", "loss": "dpo", "dpo_beta": beta}, indent=2))
                    (folder / "search.json").write_text(json.dumps(summary, indent=2))

                await ctx.complete_step(step, metrics, save)
        finally:
            try:
                await gateway.unload_adapter(spec.model, adapter)
            except Exception:
                pass  # the gateway may be gone; its adapters die with it
