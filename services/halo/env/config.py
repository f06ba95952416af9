"""Env service settings (flags `--pool-size 8` or env vars `HALO_ENV_POOL_SIZE=8`)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field
from pydantic_settings import SettingsConfigDict

from halo.runtime.settings import ServiceSettings


class EnvSettings(ServiceSettings):
    model_config = SettingsConfigDict(env_prefix="HALO_ENV_", extra="forbid", cli_kebab_case=True)
    renamed: ClassVar[dict[str, str]] = {"max_steps": "max_actions"}   # one name for an episode's action cap in every halo command

    port: int = Field(50051, description="gRPC port (0 picks a free one)")
    pool_size: int = Field(8, ge=1, description="max concurrent sessions (browser contexts)")
    browsers: int = Field(1, ge=1, description="Chromium processes the contexts are spread over")
    warm_contexts: int = Field(
        8, ge=0,
        description="browser contexts kept opened ahead of CreateSession (at most --pool-size; 0 = open each on "
        "demand); each is handed to one session only and closed with it",
    )
    primed_sessions: int = Field(
        0, ge=0,
        description="sessions prepared ahead (context, /config, start page, first observation) for the exact task, "
        "seed, run and observation a client asks for again and again; a create that matches answers without page "
        "work. Each is handed to one session only; unused ones are closed, never retargeted (0 = off)",
    )
    prime_hints: bool = Field(
        True,
        description="serve PrimeSessions: prepare the sessions a client says it will create next (a GRPO trainer's "
        "next step), only into free slots of the pool, closed unclaimed after the hint's TTL; false = accept the "
        "hints and prime nothing",
    )
    acquire_timeout_s: float = Field(5.0, ge=0, description="how long CreateSession waits for a free slot before RESOURCE_EXHAUSTED")
    session_ttl_s: float = Field(
        60.0, gt=0,
        description="idle sessions (no call, no KeepAlive) are closed after this many seconds: a killed client's "
        "sessions free the pool quickly; the typed clients keep theirs alive during long model calls",
    )
    drain_timeout_s: float = Field(
        0.0, ge=0,
        description="on SIGTERM: refuse new sessions (UNAVAILABLE, so a fleet client creates them on another replica) "
        "and keep serving every call of the open sessions until they are closed or this many seconds pass, then "
        "close the browsers and exit (a second signal exits at once); 0 = exit at once, as on one machine. A pod's "
        "terminationGracePeriodSeconds must cover it (deploy/k8s sets both)",
    )
    pod_name: str = Field(
        "",
        description="this pod's name (Kubernetes downward API): when set inside a cluster, the service keeps the pod's "
        "controller.kubernetes.io/pod-deletion-cost at its number of open sessions, so a scale-down removes the "
        "emptiest pod (needs RBAC to patch pods; halo.env.podcost)",
    )
    pod_namespace: str = Field("", description="this pod's namespace (Kubernetes downward API), with --pod-name")
    max_actions: int = Field(70, ge=1, description="actions per episode at most, when CreateSession asks for none (its max_steps = 0)")
    sites_url: str = Field("http://127.0.0.1:8100", description="base URL of the sites server (local replicas)")
    allow_remote: bool = Field(False, description="allow sessions on the remote REAL sites (needs internet)")
    chromium_path: str = Field("", description="Chromium binary; Playwright's own, else `chromium` on PATH, when empty")
    chromium_sandbox: Literal["auto", "on", "off"] = Field(
        "auto",
        description="Chromium's own sandbox (renderers in user namespaces, under its seccomp-bpf filter): `on` "
        "needs a non-root user and a seccomp profile that allows user namespaces (deploy/seccomp/chromium.json; "
        "Docker's and Kubernetes' default profiles refuse them) and refuses to start without them; `off` passes "
        "--no-sandbox; `auto` tries the sandbox unless the service runs as root (where Chromium refuses it) and runs "
        "without it, with a warning, where the machine refuses user namespaces",
    )
    headless: bool = Field(True, description="run Chromium headless")
    viewport_width: int = Field(1280, description="viewport width in CSS pixels")
    viewport_height: int = Field(720, description="viewport height in CSS pixels")
    action_timeout_ms: float = Field(3000, description="timeout of one element action")
    navigation_timeout_ms: float = Field(15000, description="timeout of a navigation")
    max_wait_ms: int = Field(5000, description="cap on the wait action")
    block_other_hosts: bool = Field(True, description="abort every request to a host outside the task's sites")
    guard_grader: bool = Field(
        True,
        description="keep the grader out of the agent's reach: refuse navigation (and requests) to the sites' control "
        "routes (/config, /finish, /__halo) and pages of another site's replica; off only for parity experiments "
        "with REAL's hosted sites",
    )
