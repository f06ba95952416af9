"""The JSON records of an evaluation that every module of it shares: its spec and its actions."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from google.protobuf import json_format

from halo.agent import actions as A
from halo.v1 import common_pb2 as cpb


@dataclass
class EvalSpec:
    eval_id: str
    mode: str
    route: str
    adapter: str = ""                 # adapter name on the route ("" = base model)
    adapter_path: str = ""
    weights: str = ""
    tasks: list[str] = field(default_factory=list)      # as asked for: task ids, site names or "all"
    task_ids: list[str] = field(default_factory=list)   # expanded on the first run, kept for resumes
    seeds: list[int] = field(default_factory=lambda: [0])
    max_steps: int = 70
    workers: int = 4
    temperature: float = 0.0
    screenshots: bool = True
    reward_overrides: dict[str, float] = field(default_factory=dict)
    created_at: str = ""

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "EvalSpec":
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


def describe_spec(spec: EvalSpec) -> list[tuple[str, str]]:
    adapter = spec.adapter_path or spec.weights or "none (base model)"
    return [
        ("mode", spec.mode), ("route", spec.route), ("adapter", adapter), ("tasks", ", ".join(spec.tasks)),
        ("task ids", str(len(spec.task_ids))), ("seeds", ", ".join(map(str, spec.seeds))), ("max actions", str(spec.max_steps)),
        ("workers", str(spec.workers)), ("temperature", f"{spec.temperature:g}"), ("started", spec.created_at),
    ]


def action_to_json(action: A.Action | None) -> dict[str, Any] | None:
    """The action as halo.v1.Action JSON (round-trips through `action_from_json`)."""
    if action is None:
        return None
    return json_format.MessageToDict(A.action_to_proto(action), preserving_proto_field_name=True)


def action_from_json(data: dict[str, Any] | None) -> A.Action | None:
    if not data:
        return None
    return A.action_from_proto(json_format.ParseDict(data, cpb.Action()))
