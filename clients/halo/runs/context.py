"""The contract between a trainer (GRPO, MCTS, eval) and whatever hosts its run.

A trainer is `async def train(ctx: RunContext) -> None`. It starts at `ctx.start_step` (completed
steps so far), restores itself from `ctx.last_checkpoint` when resuming, and reports each
completed step with `await ctx.complete_step(step, metrics, save)`: the host writes the
checkpoint (`save(folder)`) and then records the step, so a step counts as completed exactly
when its checkpoint exists — after a crash the run resumes there, losing and repeating nothing.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from halo.runs.spec import RunSpec

SaveFn = Callable[[Path], None]


@dataclass(frozen=True)
class ServiceTargets:
    """Where the services a trainer uses are (host:port), and how to reach them: the bearer token
    and, for services that serve TLS, the PEM file of the root certificate to trust."""

    env: str
    reward: str = ""
    gateway: str = ""
    token: str = ""
    tls_ca: str = ""


class RunContext(Protocol):
    run_id: str
    spec: RunSpec
    run_dir: Path
    start_step: int
    last_checkpoint: Path | None
    services: ServiceTargets

    def stop_requested(self) -> bool: ...

    async def complete_step(self, step: int, metrics: dict[str, float], save: SaveFn) -> None: ...

    def log(self, message: str, level: str = "info") -> None: ...


Trainer = Callable[[RunContext], Awaitable[None]]
