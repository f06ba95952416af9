"""What defines a training or evaluation run, as a plain dataclass shared by the CLI (local runs),
the trainer service and the trainers. Defaults are the user's numbers (seeds/000)."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

from google.protobuf import json_format

from halo.v1 import trainer_pb2 as pb

KINDS = {"grpo": pb.RUN_KIND_GRPO, "mcts": pb.RUN_KIND_MCTS, "eval": pb.RUN_KIND_EVAL}
BACKENDS = {"embedded": pb.TRAIN_BACKEND_EMBEDDED, "tinker": pb.TRAIN_BACKEND_TINKER, "local_lora": pb.TRAIN_BACKEND_LOCAL_LORA}
LOSSES = {
    "importance_sampling": pb.LOSS_FUNCTION_IMPORTANCE_SAMPLING, "ppo": pb.LOSS_FUNCTION_PPO,
    "cispo": pb.LOSS_FUNCTION_CISPO, "dro": pb.LOSS_FUNCTION_DRO,
}


def _name_of(table: dict[str, int], value: int, default: str) -> str:
    return next((k for k, v in table.items() if v == value), default)


@dataclass
class RunSpec:
    name: str = ""
    kind: str = "grpo"                      # grpo | mcts | eval
    backend: str = "embedded"               # embedded | tinker | local_lora
    mode: str = "embedded"                  # gpt5_baseline | qwen3vl_base | qwen3vl_grpo | qwen3vl_mcts | embedded
    model: str = "embedded"                 # gateway route
    task_ids: list[str] = field(default_factory=list)
    group_size: int = 8
    groups_per_batch: int = 1
    total_steps: int = 20
    learning_rate: float = 1e-6
    lora_rank: int = 32
    temperature: float = 0.7
    max_tokens: int = 300
    max_steps: int = 70
    loss_fn: str = "importance_sampling"
    seed: int = 0
    reward_overrides: dict[str, float] = field(default_factory=dict)
    checkpoint_every: int = 1
    extra: dict[str, Any] = field(default_factory=dict)

    def validate(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {sorted(KINDS)}, got {self.kind!r}")
        if self.backend not in BACKENDS:
            raise ValueError(f"backend must be one of {sorted(BACKENDS)}, got {self.backend!r}")
        if self.loss_fn not in LOSSES:
            raise ValueError(f"loss_fn must be one of {sorted(LOSSES)}, got {self.loss_fn!r}")
        if not self.task_ids:
            raise ValueError("task_ids must name at least one task (or site)")
        for name in ("group_size", "groups_per_batch", "total_steps", "max_steps", "checkpoint_every"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if not (math.isfinite(self.learning_rate) and self.learning_rate > 0):
            raise ValueError(f"learning_rate must be a finite number > 0, got {self.learning_rate}")
        if not (math.isfinite(self.temperature) and self.temperature >= 0):
            raise ValueError(f"temperature must be a finite number >= 0, got {self.temperature}")
        bad = {k: v for k, v in self.reward_overrides.items() if not math.isfinite(v)}
        if bad:
            raise ValueError(f"reward_overrides must be finite numbers, got {bad}")

    def eval_seeds(self) -> list[int]:
        """The seeds of the run's greedy evaluation (`extra.eval_seeds`), above the training steps'
        layout seeds (drawn below 1000): by default four for GRPO on the embedded policy, whose
        episodes are cheap, and two for every other trainer. One place, so a label can say which."""
        default = [1001, 1002, 1003, 1004] if (self.kind, self.backend) == ("grpo", "embedded") else [1001, 1002]
        return [int(s) for s in self.extra.get("eval_seeds", default)]

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "RunSpec":
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})

    def to_proto(self) -> pb.RunSpec:
        msg = pb.RunSpec(
            name=self.name, kind=KINDS[self.kind], backend=BACKENDS[self.backend], mode=self.mode, model=self.model,
            task_ids=self.task_ids, group_size=self.group_size, groups_per_batch=self.groups_per_batch,
            total_steps=self.total_steps, learning_rate=self.learning_rate, lora_rank=self.lora_rank,
            temperature=self.temperature, max_tokens=self.max_tokens, max_steps=self.max_steps,
            loss_fn=LOSSES[self.loss_fn], seed=self.seed, reward_overrides=self.reward_overrides,
            checkpoint_every=self.checkpoint_every,
        )
        msg.extra.update(self.extra)
        return msg

    @classmethod
    def from_proto(cls, msg: pb.RunSpec) -> "RunSpec":
        """Zero values take the defaults above (proto3 cannot tell 'unset' from 0)."""
        d = cls()
        return cls(
            name=msg.name, kind=_name_of(KINDS, msg.kind, d.kind), backend=_name_of(BACKENDS, msg.backend, d.backend),
            mode=msg.mode or d.mode, model=msg.model or d.model, task_ids=list(msg.task_ids),
            group_size=msg.group_size or d.group_size, groups_per_batch=msg.groups_per_batch or d.groups_per_batch,
            total_steps=msg.total_steps or d.total_steps, learning_rate=msg.learning_rate or d.learning_rate,
            lora_rank=msg.lora_rank or d.lora_rank, temperature=msg.temperature or d.temperature,
            max_tokens=msg.max_tokens or d.max_tokens, max_steps=msg.max_steps or d.max_steps,
            loss_fn=_name_of(LOSSES, msg.loss_fn, d.loss_fn), seed=msg.seed,
            reward_overrides=dict(msg.reward_overrides), checkpoint_every=msg.checkpoint_every or d.checkpoint_every,
            extra=json_format.MessageToDict(msg.extra),
        )
