"""Shared plumbing of the typed async clients: channel (plaintext or TLS), auth metadata, deadlines,
error mapping."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, Self, TypeVar

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from tenacity import retry_if_exception_type, stop_after_attempt, wait_exponential, AsyncRetrying

from halo.errors import DeadlineExceeded, HaloError, Unavailable, from_rpc_error, rpc_message

T = TypeVar("T")

DEFAULT_TIMEOUT_S = 60.0


def channel_credentials(tls_ca: str | Path) -> grpc.ChannelCredentials:
    """TLS credentials trusting the root certificate(s) in the PEM file `tls_ca`."""
    try:
        pem = Path(tls_ca).read_bytes()
    except OSError as exc:
        raise ValueError(f"cannot read the TLS CA file {str(tls_ca)!r}: {exc.strerror or exc}") from None
    if b"-----BEGIN CERTIFICATE-----" not in pem:
        raise ValueError(f"the TLS CA file {str(tls_ca)!r} holds no PEM certificate")
    return grpc.ssl_channel_credentials(root_certificates=pem)


def open_channel(target: str, *, tls_ca: str | Path = "", options: Sequence[tuple[str, object]] = ()) -> grpc.aio.Channel:
    """A grpc.aio channel to `target`: TLS trusting `tls_ca` when given, plaintext otherwise."""
    if tls_ca:
        return grpc.aio.secure_channel(target, channel_credentials(tls_ca), options=list(options))
    return grpc.aio.insecure_channel(target, options=list(options))


class ServiceClient:
    """Base of EnvClient, RewardClient, ...: owns (or borrows) a grpc.aio channel.

    Every call has a deadline (`timeout_s`, per call overridable); failed calls raise the
    HaloError subclass of their status (NotFound, ResourceExhausted, Unavailable, ...).
    Idempotent reads are retried on UNAVAILABLE with exponential backoff.

    `tls_ca` (a PEM file of the root certificate(s) to trust) makes the channel TLS; the server's
    certificate must name the host of `target`. `token` is sent as `authorization: Bearer <token>`
    on every call, over either kind of channel.

    A call that outlives its own deadline raises DeadlineExceeded naming that deadline and
    `deadline_hint` (the setting that raises it, e.g. a trainer's `--sample-timeout-s`), so that a
    slow backend is told apart from a server-side timeout, which comes with the server's message.
    """

    stub_class: type = object

    def __init__(
        self, target: str, *, token: str = "", timeout_s: float = DEFAULT_TIMEOUT_S,
        channel: grpc.aio.Channel | None = None, max_message_mb: int = 16, tls_ca: str | Path = "",
        deadline_hint: str = "",
    ) -> None:
        self.target = target
        self.timeout_s = timeout_s
        self.deadline_hint = deadline_hint
        self._owns_channel = channel is None
        max_bytes = max_message_mb * 1024 * 1024
        self.channel = channel or open_channel(target, tls_ca=tls_ca, options=[
            ("grpc.max_receive_message_length", max_bytes), ("grpc.max_send_message_length", max_bytes),
        ])
        self._metadata = (("authorization", f"Bearer {token}"),) if token else None
        self.stub = self.stub_class(self.channel)
        self._health = health_pb2_grpc.HealthStub(self.channel)

    async def _call(self, method: Callable[..., Awaitable[T]], request: Any, timeout_s: float | None = None) -> T:
        deadline = timeout_s or self.timeout_s
        started = time.monotonic()
        try:
            return await method(request, timeout=deadline, metadata=self._metadata)
        except grpc.aio.AioRpcError as exc:
            error = from_rpc_error(exc)
            if isinstance(error, DeadlineExceeded) and time.monotonic() - started >= deadline:
                raise self._own_deadline(method, deadline) from None
            raise error from None

    def _own_deadline(self, method: Any, deadline: float) -> DeadlineExceeded:
        name = getattr(method, "_method", b"") or b""
        name = (name.decode() if isinstance(name, bytes) else str(name)).rsplit("/", 1)[-1] or "the call"
        hint = f"; {self.deadline_hint}" if self.deadline_hint else ""
        return DeadlineExceeded(rpc_message(grpc.StatusCode.DEADLINE_EXCEEDED, f"{name} to {self.target} got no answer "
                                            f"within this client's deadline of {deadline:g}s{hint}"))

    async def _read(self, method: Callable[..., Awaitable[T]], request: Any, timeout_s: float | None = None) -> T:
        """An idempotent call: retried on UNAVAILABLE (3 tries, 0.2 s -> 2 s backoff)."""
        async for attempt in AsyncRetrying(
            retry=retry_if_exception_type(Unavailable), stop=stop_after_attempt(3),
            wait=wait_exponential(multiplier=0.2, max=2), reraise=True,
        ):
            with attempt:
                return await self._call(method, request, timeout_s)
        raise AssertionError("unreachable")

    async def healthy(self, service: str = "", timeout_s: float = 5.0) -> bool:
        try:
            response = await self._health.Check(health_pb2.HealthCheckRequest(service=service), timeout=timeout_s)
        except grpc.aio.AioRpcError:
            return False
        return response.status == health_pb2.HealthCheckResponse.SERVING

    async def close(self) -> None:
        if self._owns_channel:
            await self.channel.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


__all__ = ["ServiceClient", "HaloError", "channel_credentials", "open_channel"]
