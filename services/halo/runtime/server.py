"""The service runtime every HALO service runs on.

grpc.aio on uvloop, gRPC health checking and server reflection, Prometheus metrics over HTTP,
optional TLS (`tls_cert` + `tls_key`; the metrics endpoint stays plain HTTP) and bearer-token
auth, and graceful shutdown: on SIGTERM/SIGINT the health status turns NOT_SERVING, a service
with a `drain` finishes the work it holds while every call is still served (a second signal cuts
the drain short), then in-flight calls get `shutdown_grace_s` to finish, then the service's own
`on_stop` (closing browsers, flushing runs) runs.

Health names: "" and the service's own names turn NOT_SERVING when the shutdown starts (a fleet
client or a readiness probe sends nothing new); `LIVENESS_SERVICE` stays SERVING until the server
stops, so a liveness probe does not restart a process that is draining.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from prometheus_client import start_http_server

from halo.runtime.logging import configure_logging, get_logger
from halo.runtime.reflection import enable_reflection
from halo.runtime.settings import ServiceSettings
from halo.runtime.validation import EnumValidationInterceptor

log = get_logger("halo.runtime")

HEALTH_SERVICE = "grpc.health.v1.Health"
#: the health name a liveness probe asks: SERVING from start until the server stops, drain included
LIVENESS_SERVICE = "liveness"


@dataclass
class ServiceSpec:
    """What a service contributes to the runtime."""

    name: str                                        # "env", "reward", ...
    grpc_service_names: Sequence[str]                # full names, e.g. "halo.v1.EnvService"
    register: Callable[[grpc.aio.Server], None]      # adds the servicers to the server
    on_start: Callable[[], Awaitable[None]] | None = None
    on_stop: Callable[[], Awaitable[None]] | None = None
    core: Any = None                                 # the service's core object (tests, benchmarks)
    #: why the service cannot serve its RPCs now ("" when it can), polled every READINESS_INTERVAL_S:
    #: it sets the health status of the service's gRPC names (readiness: the env service without its
    #: sites server), while the process's own status "" stays SERVING (liveness: it is up)
    readiness: Callable[[], Awaitable[str]] | None = None
    #: on SIGTERM/SIGINT, while the server still serves every call: stop taking new work (the
    #: service refuses it itself) and return once the work held is done or the service's own
    #: timeout passed; the server then stops as any other
    drain: Callable[[], Awaitable[None]] | None = None


def grpc_service(
    name: str, service: Any, add_servicer: Callable[[Any, grpc.aio.Server], None], servicer: Any, core: Any, *,
    on_start: Callable[[], Awaitable[None]] | None = None, on_stop: Callable[[], Awaitable[None]] | None = None,
    readiness: Callable[[], Awaitable[str]] | None = None, drain: Callable[[], Awaitable[None]] | None = None,
) -> ServiceSpec:
    """The ServiceSpec of one gRPC service: `service` is its descriptor (`pb.DESCRIPTOR.services_by_name[...]`),
    `add_servicer` the generated `add_…Servicer_to_server`. Every HALO server's `build_service` ends here."""
    return ServiceSpec(
        name=name, grpc_service_names=[service.full_name], register=lambda server: add_servicer(servicer, server),
        on_start=on_start, on_stop=on_stop, core=core, readiness=readiness, drain=drain,
    )


class _TokenAuthInterceptor(grpc.aio.ServerInterceptor):
    """Rejects calls without `authorization: Bearer <token>`; health checks stay open for probes."""

    def __init__(self, token: str) -> None:
        self._expected = f"Bearer {token}"

    async def intercept_service(self, continuation, handler_call_details):
        if handler_call_details.method.startswith(f"/{HEALTH_SERVICE}/"):
            return await continuation(handler_call_details)
        metadata = dict(handler_call_details.invocation_metadata or ())
        if metadata.get("authorization") == self._expected:
            return await continuation(handler_call_details)

        async def deny(request, context):
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or wrong bearer token")

        return grpc.unary_unary_rpc_method_handler(deny)


def server_credentials(settings: ServiceSettings) -> grpc.ServerCredentials | None:
    """TLS credentials from `tls_cert` / `tls_key` (PEM files), or None for plaintext."""
    if not settings.tls_cert:
        return None
    pems = {}
    for what in ("tls_cert", "tls_key"):
        path = getattr(settings, what)
        try:
            pems[what] = Path(path).read_bytes()
        except OSError as exc:
            raise RuntimeError(f"cannot read {what} {path!r}: {exc.strerror or exc}") from None
        if b"-----BEGIN" not in pems[what]:
            raise RuntimeError(f"{what} {path!r} is not a PEM file")
    return grpc.ssl_server_credentials([(pems["tls_key"], pems["tls_cert"])])


@dataclass
class RunningService:
    spec: ServiceSpec
    settings: ServiceSettings
    server: grpc.aio.Server
    health: health.aio.HealthServicer
    port: int
    metrics_port: int | None
    _metrics_httpd: object | None = None
    _stopped: bool = field(default=False)
    _readiness: asyncio.Task | None = None

    @property
    def target(self) -> str:
        return f"{self.settings.host}:{self.port}"

    async def not_serving(self) -> None:
        """NOT_SERVING on "" and the service's names (readiness tracking ends); liveness stays SERVING."""
        if self._readiness is not None:
            self._readiness.cancel()
        for name in ("", *self.spec.grpc_service_names):
            await self.health.set(name, health_pb2.HealthCheckResponse.NOT_SERVING)

    async def drain(self) -> None:
        """NOT_SERVING, then the service's own drain (nothing more for a service without one)."""
        log.info("service draining", service=self.spec.name)
        await self.not_serving()
        if self.spec.drain is not None:
            await self.spec.drain()

    async def stop(self, grace: float | None = None) -> None:
        """Graceful shutdown: NOT_SERVING, drain in-flight calls, then the service's on_stop."""
        if self._stopped:
            return
        self._stopped = True
        grace = self.settings.shutdown_grace_s if grace is None else grace
        log.info("service stopping", service=self.spec.name, grace_s=grace)
        if self._readiness is not None:
            self._readiness.cancel()
        await self.health.enter_graceful_shutdown()
        await self.server.stop(grace)
        if self.spec.on_stop is not None:
            await self.spec.on_stop()
        if self._metrics_httpd is not None:
            self._metrics_httpd.shutdown()
            self._metrics_httpd.server_close()
        log.info("service stopped", service=self.spec.name)

    async def wait(self) -> None:
        await self.server.wait_for_termination()


async def start_service(spec: ServiceSpec, settings: ServiceSettings) -> RunningService:
    """Start the gRPC server (and metrics endpoint) for `spec`; returns once it accepts calls."""
    max_bytes = settings.max_message_mb * 1024 * 1024
    credentials = server_credentials(settings)   # before anything starts: a bad path fails fast
    interceptors = [_TokenAuthInterceptor(settings.auth_token)] if settings.auth_token else []
    interceptors.append(EnumValidationInterceptor())   # after auth: a caller without the token learns nothing
    server = grpc.aio.server(
        interceptors=interceptors,
        options=[
            ("grpc.max_receive_message_length", max_bytes),
            ("grpc.max_send_message_length", max_bytes),
            ("grpc.so_reuseport", 0),
        ],
    )
    spec.register(server)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    enable_reflection([*spec.grpc_service_names, HEALTH_SERVICE], server)
    address = f"{settings.host}:{settings.port}"
    port = server.add_insecure_port(address) if credentials is None else server.add_secure_port(address, credentials)
    if port == 0:
        raise RuntimeError(f"cannot bind {settings.host}:{settings.port}")
    if spec.on_start is not None:
        await spec.on_start()
    await server.start()

    httpd, metrics_port = None, None
    if settings.metrics_port >= 0:
        httpd, _thread = start_http_server(settings.metrics_port, addr=settings.host)
        metrics_port = httpd.server_address[1]

    for name in ("", LIVENESS_SERVICE, *spec.grpc_service_names):
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    log.info("service started", service=spec.name, grpc=f"{settings.host}:{port}",
             tls=credentials is not None, auth=bool(settings.auth_token), metrics_port=metrics_port)
    running = RunningService(spec, settings, server, health_servicer, port, metrics_port, httpd)
    if spec.readiness is not None:
        running._readiness = asyncio.get_running_loop().create_task(_track_readiness(spec, health_servicer))
    return running


READINESS_INTERVAL_S = 1.0
#: probes in a row that must fail before the service is NOT_SERVING: on a loaded machine one probe
#: can time out against a dependency that is up, and an outage lasts longer than that
READINESS_FAILURES = 2


async def _track_readiness(spec: ServiceSpec, health_servicer: health.aio.HealthServicer) -> None:
    """Keep the health status of the service's names in step with `spec.readiness`; log each change."""
    assert spec.readiness is not None
    serving, failures = True, 0
    while True:
        try:
            why = await spec.readiness()
        except Exception as exc:   # a probe that fails says the service is not ready, it does not stop probing
            why = f"readiness probe failed: {exc}"
        failures = failures + 1 if why else 0
        if serving != (failures < READINESS_FAILURES):
            serving = not serving
            status = health_pb2.HealthCheckResponse.SERVING if serving else health_pb2.HealthCheckResponse.NOT_SERVING
            for name in spec.grpc_service_names:
                await health_servicer.set(name, status)
            if serving:
                log.info("service ready again", service=spec.name)
            else:
                log.warning("service not ready", service=spec.name, reason=why)
        await asyncio.sleep(READINESS_INTERVAL_S)


async def serve_until_signalled(spec: ServiceSpec, settings: ServiceSettings) -> None:
    """Run a service until SIGTERM/SIGINT, drain it (`spec.drain`; a second signal cuts the drain
    short), then shut it down gracefully."""
    running = await start_service(spec, settings)
    signals = asyncio.Queue[int]()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, signals.put_nowait, sig)
    waiter = asyncio.create_task(running.wait())
    signalled = asyncio.create_task(signals.get())
    try:
        await asyncio.wait({waiter, signalled}, return_when=asyncio.FIRST_COMPLETED)
        if signalled.done() and spec.drain is not None:
            draining = asyncio.create_task(running.drain())
            again = asyncio.create_task(signals.get())
            await asyncio.wait({draining, again, waiter}, return_when=asyncio.FIRST_COMPLETED)
            if not draining.done():
                log.warning("drain cut short", service=spec.name, by="signal" if again.done() else "server ended")
            for task in (draining, again):
                task.cancel()
            await asyncio.gather(draining, again, return_exceptions=True)
        await running.stop()
    finally:
        waiter.cancel()
        signalled.cancel()


def run(spec_factory: Callable[[ServiceSettings], ServiceSpec], settings: ServiceSettings) -> None:
    """Entry point used by `halo serve <service>`: uvloop + structured logs + signal handling."""
    import uvloop

    configure_logging(settings.log_level, settings.log_format)

    async def main() -> None:
        await serve_until_signalled(spec_factory(settings), settings)

    uvloop.run(main())
