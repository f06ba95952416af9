"""Which trainer runs a spec: (kind, backend) -> `async def train(ctx)`."""

from __future__ import annotations

from halo.trainers.context import Trainer
from halo.trainers.spec import RunSpec


def resolve_trainer(spec: RunSpec) -> Trainer:
    if spec.kind == "grpo" and spec.backend == "embedded":
        from halo.trainers.grpo import train_embedded

        return train_embedded
    raise ValueError(f"no trainer for kind={spec.kind!r} backend={spec.backend!r} yet (available: grpo/embedded)")
