"""Reward service settings (flags / HALO_REWARD_* env vars) and the reward config (configs/rewards.yaml).

The YAML is validated once at start (unknown keys, bad regexes and bad JMESPath queries fail
loudly, before any episode is scored); overrides, per run or per episode, only change numbers.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, ClassVar

import jmespath
import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic_settings import SettingsConfigDict

from halo.agent.actions import ACTION_TYPES
from halo.runtime.errors import InvalidArgument
from halo.runtime.settings import ServiceSettings

#: configs/rewards.yaml of the repository (services/halo/reward/config.py -> repo root).
DEFAULT_CONFIG_PATH = Path(__file__).resolve().parents[3] / "configs" / "rewards.yaml"
#: Every regex of the config is matched case-insensitively, ^/$ at line boundaries (AXTree lines).
REGEX_FLAGS = re.IGNORECASE | re.MULTILINE
MILESTONE_PREFIX = "milestone:"


class RewardSettings(ServiceSettings):
    model_config = SettingsConfigDict(env_prefix="HALO_REWARD_", extra="forbid", cli_kebab_case=True)
    renamed: ClassVar[dict[str, str]] = {"judge_model": "judge_route"}   # --model never names a gateway route

    port: int = Field(50052, description="gRPC port (0 picks a free one)")
    config: str = Field(str(DEFAULT_CONFIG_PATH), description="reward config YAML (weights and milestones)")
    overrides: dict[str, float] = Field(
        default_factory=dict, description='run-wide overrides, e.g. \'{"loop_penalty": -1.0}\' (episodes may override again)'
    )
    episode_ttl_s: float = Field(1800.0, gt=0, description="episodes idle for this long are forgotten")
    max_episodes: int = Field(10000, ge=1, description="open episodes at most (RESOURCE_EXHAUSTED beyond)")
    reap_interval_s: float = Field(30.0, gt=0, description="how often expired episodes are swept")
    judge_target: str = Field("", description="policy gateway host:port for LLM-judge evals (none: FAILED_PRECONDITION)")
    judge_route: str = Field("", description="judge route name on the gateway (its default judge when empty)")
    judge_token: str = Field("", description="bearer token for the gateway (none: the reward service's own auth token)")
    judge_tls_ca: str = Field("", description="PEM root certificate to trust: call the gateway over TLS")
    judge_timeout_s: float = Field(60.0, gt=0, description="deadline of one judge call")
    eval_concurrency: int = Field(4, ge=1, description="eval scripts run at the same time at most")


class Weights(BaseModel):
    """Shaping weights. Names follow the user's rl_config (progress_weight, novelty_bonus, ...)."""

    model_config = ConfigDict(extra="forbid")

    valid_action_bonus: float = 0.1
    action_error_penalty: float = -0.2
    novelty_bonus: float = 0.2
    novelty_cap: float = Field(10, ge=0, description="novelty payments per episode at most; 0 = no cap")
    loop_penalty: float = -0.5
    progress_weight: float = 1.0
    success_bonus: float = 1.0
    strict_success: float = Field(0, ge=0, le=1, description="1: pay success_bonus on strict success (agisdk AND "
                                  "configs/strict_checks.yaml, halo train --success strict); 0: on agisdk's verdict")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _check_regex(value: str) -> str:
    if value:
        try:
            re.compile(value, REGEX_FLAGS)
        except re.error as exc:
            raise ValueError(f"bad regex {value!r}: {exc}") from exc
    return value


class StateCheck(_Strict):
    query: str = ""      # JMESPath over the /finish JSON
    matches: str = ""    # regex the query's value must match (truthiness when empty)
    path: str = ""       # regex over the dotted paths of the JSON's truthy leaves

    @field_validator("matches", "path")
    @classmethod
    def _regex(cls, v: str) -> str:
        return _check_regex(v)

    @field_validator("query")
    @classmethod
    def _jmespath(cls, v: str) -> str:
        if v:
            try:
                jmespath.compile(v)
            except jmespath.exceptions.JMESPathError as exc:
                raise ValueError(f"bad JMESPath {v!r}: {exc}") from exc
        return v

    @model_validator(mode="after")
    def _one_of(self) -> "StateCheck":
        if bool(self.query) == bool(self.path):
            raise ValueError("a state check has exactly one of `query` or `path`")
        if self.matches and not self.query:
            raise ValueError("`matches` goes with `query`")
        return self


class PageCheck(_Strict):
    url: str = ""
    title: str = ""
    axtree: str = ""

    @field_validator("url", "title", "axtree")
    @classmethod
    def _regex(cls, v: str) -> str:
        return _check_regex(v)

    @model_validator(mode="after")
    def _not_empty(self) -> "PageCheck":
        if not (self.url or self.title or self.axtree):
            raise ValueError("a page check needs url, title or axtree")
        return self


class ActionCheck(_Strict):
    kinds: tuple[str, ...] = ()
    target: str = ""
    text: str = ""

    @field_validator("target", "text")
    @classmethod
    def _regex(cls, v: str) -> str:
        return _check_regex(v)

    @field_validator("kinds")
    @classmethod
    def _known_kinds(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [k for k in v if k not in ACTION_TYPES]
        if unknown:
            raise ValueError(f"unknown action kinds {unknown} (known: {sorted(ACTION_TYPES)})")
        return v


class MilestoneSpec(_Strict):
    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    reward: float
    description: str = ""
    tasks: tuple[str, ...] = ()
    state: tuple[StateCheck, ...] = ()
    page: tuple[PageCheck, ...] = ()
    action: tuple[ActionCheck, ...] = ()

    @model_validator(mode="after")
    def _detectable(self) -> "MilestoneSpec":
        if not (self.state or self.page or self.action):
            raise ValueError(f"milestone {self.name} has no state, page or action check")
        return self


class RewardConfig(BaseModel):
    """The whole reward config: weights plus the milestones of every site."""

    model_config = ConfigDict(extra="forbid")

    version: int = 1
    weights: Weights = Field(default_factory=Weights)
    milestones: dict[str, tuple[MilestoneSpec, ...]] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _unique_names(self) -> "RewardConfig":
        for site, specs in self.milestones.items():
            names = [s.name for s in specs]
            dupes = {n for n in names if names.count(n) > 1}
            if dupes:
                raise ValueError(f"duplicate milestone names on {site}: {sorted(dupes)}")
        return self

    # --- reading -----------------------------------------------------------------------------

    def milestones_for(self, site: str, task_id: str) -> tuple[MilestoneSpec, ...]:
        return tuple(m for m in self.milestones.get(site, ()) if not m.tasks or task_id in m.tasks)

    def weight_map(self) -> dict[str, float]:
        """Every number an override can change: weights by name, milestones as milestone:site.name."""
        out = {name: float(value) for name, value in self.weights.model_dump().items()}
        for site, specs in self.milestones.items():
            for spec in specs:
                out[f"{MILESTONE_PREFIX}{site}.{spec.name}"] = spec.reward
        return out

    def to_yaml(self) -> str:
        return yaml.safe_dump(self.model_dump(mode="json", exclude_defaults=False), sort_keys=False)

    # --- overriding --------------------------------------------------------------------------

    def with_overrides(self, overrides: dict[str, float]) -> "RewardConfig":
        """A copy with some numbers replaced; unknown names raise InvalidArgument (typos fail loudly)."""
        if not overrides:
            return self
        known = self.weight_map()
        unknown = sorted(k for k in overrides if k not in known)
        if unknown:
            raise InvalidArgument(
                f"unknown reward override(s) {unknown}; known: weights {sorted(Weights.model_fields)} "
                f"or milestone:<site>.<name> (GetRewardConfig lists them)"
            )
        weight_updates = {k: v for k, v in overrides.items() if not k.startswith(MILESTONE_PREFIX)}
        try:
            weights = Weights.model_validate({**self.weights.model_dump(), **weight_updates})
        except ValueError as exc:
            raise InvalidArgument(f"bad reward override: {exc}") from None
        milestones = {
            site: tuple(
                spec.model_copy(update={"reward": overrides.get(f"{MILESTONE_PREFIX}{site}.{spec.name}", spec.reward)})
                for spec in specs
            )
            for site, specs in self.milestones.items()
        }
        return RewardConfig(version=self.version, weights=weights, milestones=milestones)


def load_config(path: str | Path = DEFAULT_CONFIG_PATH) -> RewardConfig:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"reward config {path} not found (set --config or HALO_REWARD_CONFIG)")
    raw: Any = yaml.safe_load(path.read_text())
    return RewardConfig.model_validate(raw or {})
