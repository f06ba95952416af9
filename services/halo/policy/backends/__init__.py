"""Backends of the policy gateway, one module per kind; `build_backend` picks one for a route."""

from __future__ import annotations

from halo.policy.backends.base import Backend
from halo.policy.config import RouteConfig


def build_backend(route: RouteConfig) -> Backend:
    # Lazy: each backend loads its own heavy dependency (torch + the sentence encoder, tinker,
    # openai) only when a route uses it.
    if route.backend == "embedded":
        from halo.policy.backends.embedded import EmbeddedBackend

        return EmbeddedBackend(route)
    if route.backend == "tinker":
        from halo.policy.backends.tinker import TinkerBackend

        return TinkerBackend(route)
    if route.several_engines:
        from halo.policy.backends.vllm_engines import VllmEngines

        return VllmEngines(route)
    from halo.policy.backends.openai_compat import OpenAICompatibleBackend, VllmBackend

    return VllmBackend(route) if route.backend == "vllm" else OpenAICompatibleBackend(route)
