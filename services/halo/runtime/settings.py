"""Configuration shared by every service: flags and HALO_* environment variables, one declaration.

Each service subclasses `ServiceSettings` with its own env prefix (HALO_ENV_, HALO_REWARD_, ...).
Values come from, in order: command-line flags (`--port 50051`), environment variables
(`HALO_ENV_PORT=50051`), then the defaults here, which work on one machine.
"""

from __future__ import annotations

import sys
from typing import Literal, Self

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


_BOOL_WORDS = {"true": True, "1": True, "yes": True, "on": True, "false": False, "0": False, "no": False, "off": False}


class ServiceSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="HALO_", extra="forbid", cli_kebab_case=True, cli_implicit_flags=True)

    host: str = Field("127.0.0.1", description="address to bind the gRPC server to")
    port: int = Field(50051, description="gRPC port (0 picks a free one)")
    metrics_port: int = Field(0, description="Prometheus /metrics HTTP port (0 picks a free one, -1 disables)")
    log_level: Literal["debug", "info", "warning", "error"] = Field("info", description="log level")
    log_format: Literal["console", "json"] = Field("console", description="structured log rendering")
    shutdown_grace_s: float = Field(10.0, description="seconds in-flight calls get to finish on shutdown")
    max_message_mb: int = Field(16, ge=1, description="largest gRPC message accepted or sent, in MiB")
    auth_token: str = Field("", description="when set, every call must carry 'authorization: Bearer <token>'")
    tls_cert: str = Field("", description="PEM certificate (chain) file: serve gRPC over TLS (needs --tls-key; metrics stay plain HTTP)")
    tls_key: str = Field("", description="PEM private key file of --tls-cert")

    @model_validator(mode="after")
    def _tls_pair(self) -> Self:
        if bool(self.tls_cert) != bool(self.tls_key):
            missing, given = ("tls_key", "tls_cert") if self.tls_cert else ("tls_cert", "tls_key")
            raise ValueError(f"TLS needs both tls_cert and tls_key: {given} is set but {missing} is not")
        return self

    @classmethod
    def from_cli(cls, argv: list[str] | None) -> Self:
        """Parse `argv` as flags on top of env vars and defaults (`--help` lists them). An on/off
        setting is `--x` / `--no-x`; the older `--x true|false` is still accepted, with a warning."""
        return cls(_cli_parse_args=cls._on_off_flags(argv or []), _cli_prog_name=f"halo serve {cls.service_name()}")

    @classmethod
    def _on_off_flags(cls, argv: list[str]) -> list[str]:
        """`--x true` / `--x=false` of an on/off setting as `--x` / `--no-x`; everything else as it is
        (a value that is no yes/no word is left for the parser to refuse)."""
        on_off = {"--" + name.replace("_", "-") for name, info in cls.model_fields.items() if info.annotation is bool}
        out: list[str] = []
        i = 0
        while i < len(argv):
            arg = argv[i]
            i += 1
            flag, eq, value = arg.partition("=")
            if flag in on_off and not eq and i < len(argv) and argv[i].lower() in _BOOL_WORDS:
                value, eq, i = argv[i], "=", i + 1
            if flag not in on_off or not eq or value.lower() not in _BOOL_WORDS:
                out.append(arg)
                continue
            new = flag if _BOOL_WORDS[value.lower()] else "--no-" + flag.removeprefix("--")
            print(f"warning: {flag} {value} is deprecated; use {new}", file=sys.stderr)
            out.append(new)
        return out

    @classmethod
    def service_name(cls) -> str:
        return cls.__name__.removesuffix("Settings").lower()
