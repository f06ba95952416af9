"""`halo serve NAME [flags]`: run one service in this process until SIGTERM/SIGINT.

Each service is imported only when it is the one asked for (a service pulls in its own heavy
dependencies: Playwright for env, torch and transformers for the gateway), and the trainer service
gets its trainer registry from here (`halo.cli.registry`): the service never imports the apps.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any


def _env() -> tuple[Any, Callable]:
    from halo.env.config import EnvSettings
    from halo.env.server import build_service

    return EnvSettings, build_service


def _reward() -> tuple[Any, Callable]:
    from halo.reward.config import RewardSettings
    from halo.reward.server import build_service

    return RewardSettings, build_service


def _gateway() -> tuple[Any, Callable]:
    from halo.policy.config import GatewaySettings
    from halo.policy.server import build_service

    return GatewaySettings, build_service


def _trainer() -> tuple[Any, Callable]:
    from halo.cli.registry import resolve_trainer
    from halo.trainer.config import TrainerSettings
    from halo.trainer.server import build_service

    return TrainerSettings, lambda settings: build_service(settings, resolver=resolve_trainer)


# gRPC services: name -> () -> (settings class, settings -> ServiceSpec). Add new services here.
GRPC_SERVICES: dict[str, Callable[[], tuple[Any, Callable]]] = {
    "env": _env, "reward": _reward, "gateway": _gateway, "trainer": _trainer,
}


def main(argv: list[str]) -> int:
    names = ["sites", *GRPC_SERVICES]
    if not argv or argv[0] not in names:
        print(f"usage: halo serve {{{','.join(names)}}} [--flag value ...]   (halo serve env --help)", file=sys.stderr)
        return 2
    name, flags = argv[0], argv[1:]
    if name == "sites":
        from halo.sites.server import SitesSettings, run

        run(SitesSettings.from_cli(flags))
        return 0
    from pydantic import ValidationError

    from halo.runtime.server import run
    from halo.runtime.settings import SettingsError

    settings_cls, factory = GRPC_SERVICES[name]()
    try:
        settings = settings_cls.from_cli(flags)
    except ValidationError as exc:   # e.g. --tls-cert without --tls-key: one line per problem, no traceback
        for error in exc.errors():
            print(f"halo serve {name}: {_setting_named(settings_cls, error['loc'])}{error['msg'].removeprefix('Value error, ')}", file=sys.stderr)
        return 2
    try:
        run(factory, settings)
    except SettingsError as exc:   # a file the settings name is wrong (a route table): the service never started
        print(f"halo serve {name}: {exc}", file=sys.stderr)
        return 2
    return 0


def _setting_named(settings_cls: Any, loc: tuple) -> str:
    """`--pool-size (HALO_ENV_POOL_SIZE): ` for a setting's error: the flag and the variable that set
    it, never the internal field name; '' for an error of the settings as a whole."""
    if not loc:
        return ""
    field = str(loc[0])
    prefix = settings_cls.model_config.get("env_prefix", "")
    return f"--{field.replace('_', '-')} ({prefix}{field.upper()}): "
