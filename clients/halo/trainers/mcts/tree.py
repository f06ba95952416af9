"""The search tree of MCTS: nodes (page states), edges (actions), UCB selection, backup, results."""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from typing import Any

from halo.agent import actions as A
from halo.agent.context import PastStep, PolicyContext
from halo.v1 import common_pb2 as cpb
from halo.v1 import reward_pb2 as rpb


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
    success: bool = False               # the final evaluation of this state passed (agisdk's verdict)
    success_strict: bool = False        # and HALO's strict checks too (docs/reference/graders.md)
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
    #: the action's proto as the gateway sent it (raw text included): env, reward and critic get it as it is
    message: cpb.Action | None = field(default=None, repr=False)

    def action_message(self) -> cpb.Action:
        return self.message if self.message is not None else A.action_to_proto(self.action, self.text)

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
    def success_strict(self) -> bool:
        """The best path's end passes strict success too (agisdk AND HALO's strict checks)."""
        path = self.best_path
        return bool(path) and path[-1].child is not None and path[-1].child.success_strict

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
