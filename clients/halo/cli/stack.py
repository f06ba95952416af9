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
    with_env: bool = True                          # sites + env here; False when the env is elsewhere (a fleet)
    with_reward: bool = False                      # also start the reward service (stack.reward_target)
    reward_overrides: dict[str, Any] = field(default_factory=dict)   # RewardSettings fields
    with_gateway: bool = False                     # also start the policy gateway (stack.gateway_target)
    gateway_overrides: dict[str, Any] = field(default_factory=lambda: {"only_routes": ["embedded"]})
    gateway_config: Any = None                     # a GatewayConfig instead of the YAML's route table
    sites_url: str = ""                            # a sites server already running elsewhere (else one starts here)
    sites: BackgroundSitesServer | None = None
    env: RunningService | None = None
    reward: RunningService | None = None
    gateway: RunningService | None = None

    async def __aenter__(self) -> "LocalStack":
        from halo.env.config import EnvSettings
        from halo.env.server import build_service

        try:
            if self.with_env:
                if not self.sites_url:
                    # in memory: this process's sessions die with it, there is nothing to serve after a restart
                    self.sites = BackgroundSitesServer(SitesSettings(port=0, data_dir="")).start()
                    self.sites_url = self.sites.url
                settings = EnvSettings(**{"port": 0, "metrics_port": 0, "sites_url": self.sites_url, **self.env_overrides})
                self.env = await start_service(build_service(settings), settings)
            if self.with_reward:
                await self._start_reward()
            if self.with_gateway:
                await self._start_gateway()
        except BaseException:
            await self.__aexit__()
            raise
        return self

    async def _start_reward(self) -> None:
        from halo.reward.config import RewardSettings
        from halo.reward.server import build_service as build_reward

        settings = RewardSettings(**{"port": 0, "metrics_port": 0, **self.reward_overrides})
        self.reward = await start_service(build_reward(settings), settings)

    async def _start_gateway(self) -> None:
        from halo.policy.config import GatewaySettings
        from halo.policy.server import build_service as build_gateway

        settings = GatewaySettings(**{"port": 0, "metrics_port": 0, **self.gateway_overrides})
        self.gateway = await start_service(build_gateway(settings, config=self.gateway_config), settings)

    @property
    def gateway_target(self) -> str:
        assert self.gateway is not None, "LocalStack(with_gateway=True) starts the policy gateway"
        return self.gateway.target

    @property
    def reward_target(self) -> str:
        assert self.reward is not None, "LocalStack(with_reward=True) starts the reward service"
        return self.reward.target

    @property
    def env_target(self) -> str:
        assert self.env is not None
        return self.env.target

    @property
    def env_manager(self):
        assert self.env is not None
        return self.env.spec.core

    async def __aexit__(self, *exc: object) -> None:
        if self.gateway is not None:
            await self.gateway.stop(grace=1.0)
        if self.reward is not None:
            await self.reward.stop(grace=1.0)
        if self.env is not None:
            await self.env.stop(grace=1.0)
        if self.sites is not None:
            self.sites.stop()
