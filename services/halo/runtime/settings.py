"""Configuration shared by every service: flags and HALO_* environment variables, one declaration.

Each service subclasses `ServiceSettings` with its own env prefix (HALO_ENV_, HALO_REWARD_, ...).
Values come from, in order: command-line flags (`--port 50051`), environment variables
(`HALO_ENV_PORT=50051`), then the defaults here, which work on one machine.
"""

from __future__ import annotations

import ipaddress
import os
import sys
from pathlib import Path
from typing import Any, ClassVar, Literal, Self

from pydantic import Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class SettingsError(ValueError):
    """A service's settings or the files they name are wrong: the service does not start, and the
    message (one line, naming the flag or the file) says why."""


_BOOL_WORDS = {"true": True, "1": True, "yes": True, "on": True, "false": False, "0": False, "no": False, "off": False}


class ServiceSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="HALO_", extra="forbid", cli_kebab_case=True, cli_implicit_flags=True)

    #: Settings that were renamed, old field name -> new. The old flag (`--old-name`, `--no-old-name`),
    #: environment variable (`HALO_X_OLD_NAME`) and keyword still set the new setting, with a warning,
    #: so deployments written for the old name keep working.
    renamed: ClassVar[dict[str, str]] = {}

    host: str = Field("127.0.0.1", description="address to bind the gRPC server to")
    port: int = Field(50051, description="gRPC port (0 picks a free one)")
    metrics_port: int = Field(0, description="Prometheus /metrics HTTP port (0 picks a free one, -1 disables)")
    log_level: Literal["debug", "info", "warning", "error"] = Field("info", description="log level")
    log_format: Literal["console", "json"] = Field("console", description="structured log rendering")
    shutdown_grace_s: float = Field(10.0, description="seconds in-flight calls get to finish on shutdown")
    max_message_mb: int = Field(16, ge=1, description="largest gRPC message accepted or sent, in MiB")
    auth_token: str = Field("", description="when set, every call must carry 'authorization: Bearer <token>'")
    auth_token_file: str = Field("", description="a file holding the token (a compose secret, a Kubernetes Secret volume); "
                                                 "instead of --auth-token")
    allow_unauthenticated: bool = Field(False, description="serve beyond loopback (--host) without a token: only on a "
                                                           "network that nothing untrusted reaches")
    tls_cert: str = Field("", description="PEM certificate (chain) file: serve gRPC over TLS (needs --tls-key; metrics stay plain HTTP)")
    tls_key: str = Field("", description="PEM private key file of --tls-cert")

    @model_validator(mode="after")
    def _tls_pair(self) -> Self:
        if bool(self.tls_cert) != bool(self.tls_key):
            missing, given = ("tls_key", "tls_cert") if self.tls_cert else ("tls_cert", "tls_key")
            raise ValueError(f"TLS needs both tls_cert and tls_key: {given} is set but {missing} is not")
        return self

    @model_validator(mode="after")
    def _token(self) -> Self:
        """The token from --auth-token-file; none at all is refused when the service binds beyond
        loopback: anyone who reaches the port could drive its browsers or start jobs."""
        if self.auth_token_file:
            if self.auth_token:
                raise ValueError("give the token once: --auth-token or --auth-token-file, not both")
            self.auth_token = read_token(self.auth_token_file, "--auth-token-file")
        if not self.auth_token and not self.allow_unauthenticated and not is_loopback(self.host):
            raise ValueError(f"--host {self.host} serves beyond this machine without a token: set --auth-token or "
                             "--auth-token-file (every call must then carry it), or --allow-unauthenticated on a "
                             "network nothing untrusted reaches")
        return self

    @model_validator(mode="before")
    @classmethod
    def _old_names(cls, data: Any) -> Any:
        """A renamed setting given by its old keyword or environment variable: moved onto the new name,
        unless the new name is given too (then the new one wins)."""
        if not isinstance(data, dict) or not cls.renamed:
            return data
        data = dict(data)
        for old, new in cls.renamed.items():
            old_var, new_var = cls.env_variable(old), cls.env_variable(new)
            if old in data:
                _deprecated(old, new)
                value = data.pop(old)
                data.setdefault(new, value)
            elif old_var in os.environ:
                _deprecated(old_var, new_var)
                if new not in data:
                    data[new] = os.environ[old_var]
        return data

    @classmethod
    def env_variable(cls, field: str) -> str:
        return (cls.model_config.get("env_prefix", "") + field).upper()

    @classmethod
    def from_cli(cls, argv: list[str] | None) -> Self:
        """Parse `argv` as flags on top of env vars and defaults (`--help` lists them). An on/off
        setting is `--x` / `--no-x`; the older `--x true|false` is still accepted, with a warning."""
        argv = cls._on_off_flags(cls._renamed_flags(argv or []))
        return cls(_cli_parse_args=argv, _cli_prog_name=f"halo serve {cls.service_name()}")

    @classmethod
    def _renamed_flags(cls, argv: list[str]) -> list[str]:
        """The old flag of a renamed setting (`--old`, `--old=v`, `--no-old`) as the new one."""
        flags = {}
        for old, new in cls.renamed.items():
            old_flag, new_flag = "--" + old.replace("_", "-"), "--" + new.replace("_", "-")
            flags[old_flag] = new_flag
            flags["--no-" + old_flag.removeprefix("--")] = "--no-" + new_flag.removeprefix("--")
        out = []
        for arg in argv:
            flag, eq, value = arg.partition("=")
            if flag in flags:
                _deprecated(flag, flags[flag])
                arg = flags[flag] + eq + value
            out.append(arg)
        return out

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
            _deprecated(f"{flag} {value}", new)
            out.append(new)
        return out

    @classmethod
    def service_name(cls) -> str:
        return cls.__name__.removesuffix("Settings").lower()


def is_loopback(host: str) -> bool:
    """Whether binding `host` keeps a port on this machine (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:   # a hostname: whatever it resolves to, assume it reaches beyond
        return False


def read_token(path: str, flag: str) -> str:
    """A bearer token kept in a file (its only line, surrounding whitespace dropped)."""
    try:
        token = Path(path).read_text().strip()
    except OSError as exc:
        raise ValueError(f"{flag} {path}: {exc.strerror or exc}") from None
    if not token or len(token.splitlines()) != 1:
        raise ValueError(f"{flag} {path}: the file must hold the token on one line")
    return token


def _deprecated(old: str, new: str) -> None:
    print(f"warning: {old} is deprecated; use {new}", file=sys.stderr)
