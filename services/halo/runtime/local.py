"""Start the services in this process on free loopback ports (demo, benchmarks, tests).

    async with LocalStack() as stack:
        async with EnvClient(stack.env_target) as env: ...
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from halo.runtime.server import RunningService, start_service
from halo.sites.server import BackgroundSitesServer, SitesSettings


@dataclass
class LocalStack:
    env_overrides: dict[str, Any] = field(default_factory=dict)
    sites: BackgroundSitesServer | None = None
    env: RunningService | None = None

    async def __aenter__(self) -> "LocalStack":
        from halo.env.config import EnvSettings
        from halo.env.server import build_service

        self.sites = BackgroundSitesServer(SitesSettings(port=0)).start()
        settings = EnvSettings(**{"port": 0, "metrics_port": 0, "sites_url": self.sites.url, **self.env_overrides})
        try:
            self.env = await start_service(build_service(settings), settings)
        except BaseException:
            self.sites.stop()
            raise
        return self

    @property
    def env_target(self) -> str:
        assert self.env is not None
        return self.env.target

    @property
    def env_manager(self):
        assert self.env is not None
        return self.env.spec.core

    async def __aexit__(self, *exc: object) -> None:
        if self.env is not None:
            await self.env.stop(grace=1.0)
        if self.sites is not None:
            self.sites.stop()
