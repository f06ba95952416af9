"""Run the sites server (uvicorn), as a process (`halo serve sites`) or in a background thread (tests, `halo demo`)."""

from __future__ import annotations

import asyncio
import threading
import time

import uvicorn
from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from halo.sites.app import create_app


class SitesSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="HALO_SITES_", extra="forbid", cli_kebab_case=True)

    host: str = Field("127.0.0.1", description="address to bind")
    port: int = Field(8100, description="HTTP port (0 picks a free one)")
    log_level: str = Field("warning", description="uvicorn log level")
    data_dir: str = Field(
        ".halo/sites",
        description="folder of the durable per-session state (SQLite, WAL): a restarted server serves every open "
        "session where it was; empty keeps state in memory only",
    )

    @classmethod
    def from_cli(cls, argv: list[str] | None) -> "SitesSettings":
        return cls(_cli_parse_args=argv or [], _cli_prog_name="halo serve sites")


def _config(settings: SitesSettings) -> uvicorn.Config:
    return uvicorn.Config(
        create_app(data_dir=settings.data_dir), host=settings.host, port=settings.port, log_level=settings.log_level,
        loop="uvloop", lifespan="off", access_log=False,
    )


def run(settings: SitesSettings) -> None:
    uvicorn.Server(_config(settings)).run()


class BackgroundSitesServer:
    """The sites server on its own thread and event loop; `url` is known once `start()` returns."""

    def __init__(self, settings: SitesSettings | None = None) -> None:
        self.settings = settings or SitesSettings(port=0, data_dir="")
        self._server = uvicorn.Server(_config(self.settings))
        self._thread = threading.Thread(target=self._run, name="halo-sites", daemon=True)

    def _run(self) -> None:
        asyncio.run(self._server.serve())

    def start(self, timeout_s: float = 15.0) -> "BackgroundSitesServer":
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("sites server did not start")
            time.sleep(0.02)
        return self

    @property
    def port(self) -> int:
        return self._server.servers[0].sockets[0].getsockname()[1]

    @property
    def url(self) -> str:
        return f"http://{self.settings.host}:{self.port}"

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)

    def __enter__(self) -> "BackgroundSitesServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
