"""A vLLM route served by several engines: one route, requests spread, adapters on every engine.

A route whose `base_url` is a list (or that sets `discover_engines`: every address the host
resolves to is one engine, as compose's `engines-N` profiles and a Kubernetes headless Service
publish them) samples from all of them as one backend:

- routing: each request goes to the engine in rotation with the fewest requests outstanding
  (ties at random);
- failure: a transient failure of an engine (connection refused or reset, 5xx, 429, timeout) takes
  it out of rotation at once and the request is tried again on another engine (counted in
  halo_gateway_engine_failovers_total); the route's `retries` bound the attempts, so a request
  never loops; with no engine in rotation a request is UNAVAILABLE, naming the engines;
- return: every `engine_refresh_s` engines are probed (GET /v1/models; with `discover_engines`
  the DNS name is looked up again first). An engine out of rotation that answers is first given
  every adapter loaded on the route (same names, same paths) and rejoins only when all loaded;
  an engine in rotation that no longer lists one of them (it restarted) is taken out and comes
  back the same way. An engine is never served stale;
- adapters: LoadAdapter loads on every engine in rotation at once and returns when all have
  answered; an engine that failed the load leaves the rotation (if none took it, the call fails and
  nothing is recorded). UnloadAdapter refuses new requests for the name, waits (up to the route's
  `timeout_s`) for the requests in flight with it to end, then unloads it on every engine.

Each engine is a VllmBackend of its own (the route with that engine's URL) making one attempt
per call; the retries across engines happen here.
"""

from __future__ import annotations

import asyncio
import random
import socket
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import httpx

from halo.agent.context import PolicyContext
from halo.agent.prompt import Prompt
from halo.policy import metrics
from halo.policy.backends.base import Backend, BackendResult, SampleParams, TransientBackendError
from halo.policy.backends.openai_compat import VllmBackend
from halo.policy.config import RouteConfig
from halo.runtime.errors import DeadlineExceeded, HaloError, InvalidArgument, NotFound, Unavailable
from halo.runtime.logging import get_logger
from halo.v1 import policy_pb2 as ppb

log = get_logger("halo.policy.engines")

T = TypeVar("T")

PROBE_TIMEOUT_S = 5.0


class EngineBackend(VllmBackend):
    """One engine of a fleet: one attempt per call (a TransientBackendError reaches the fleet,
    which tries another engine)."""

    async def with_retries(self, what: str, call: Callable[[], Awaitable[T]]) -> T:
        return await call()


@dataclass
class Engine:
    url: str
    backend: EngineBackend
    up: bool = False                  # in rotation
    in_flight: int = 0
    served: int = 0                   # calls it answered
    errors: int = 0                   # transient failures
    adapters: dict[str, str] = field(default_factory=dict)   # loaded here by the fleet: name -> path
    down_reason: str = "not probed yet"

    @property
    def label(self) -> str:
        """host:port, the metrics' `engine` label."""
        return urlsplit(self.url).netloc


def pick_engine(engines: Iterable[Engine], rng: random.Random) -> Engine | None:
    """The engine in rotation with the fewest requests outstanding (ties at random); None if none is up."""
    ready = [e for e in engines if e.up]
    if not ready:
        return None
    least = min(e.in_flight for e in ready)
    return rng.choice([e for e in ready if e.in_flight == least])


def resolved_urls(url: str, addresses: Iterable[str]) -> list[str]:
    """`url` once per address (its host replaced, port, scheme and path kept), in order, without repeats."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    out: list[str] = []
    for address in addresses:
        host = f"[{address}]" if ":" in address else address
        candidate = urlunsplit(parts._replace(netloc=f"{host}:{port}"))
        if candidate not in out:
            out.append(candidate)
    return out


class VllmEngines(Backend):
    kind = ppb.BACKEND_KIND_VLLM
    constrains_output = True
    caches_prompts_by_adapter_name = True

    def __init__(self, route: RouteConfig) -> None:
        super().__init__(route)
        self.engines: dict[str, Engine] = {}
        self.adapters: dict[str, str] = {}        # loaded on every engine in rotation: name -> path
        self._adapter_lock = asyncio.Lock()       # loads, unloads and rejoins, one at a time
        self._adapter_in_flight: dict[str, int] = {}
        self._unloading: set[str] = set()
        self._retired: list[Engine] = []          # gone from DNS, closed once idle
        self._discovery_failing = ""              # the last lookup error while it lasts: logged once, not each refresh
        self._rng = random.Random()
        self._task: asyncio.Task | None = None
        if not route.discover_engines:
            for url in route.engine_urls:
                self._add(url)

    # ------------------------------------------------------------------ engine table

    def _add(self, url: str) -> Engine:
        engine = Engine(url, EngineBackend(self.route.model_copy(update={"base_url": url, "discover_engines": False})))
        self.engines[url] = engine
        metrics.ENGINE_UP.labels(self.route.name, engine.label).set(0)
        metrics.ENGINE_IN_FLIGHT.labels(self.route.name, engine.label).set(0)
        return engine

    def _take_out(self, engine: Engine, reason: str) -> None:
        engine.down_reason = reason
        if engine.up:
            engine.up = False
            metrics.ENGINE_UP.labels(self.route.name, engine.label).set(0)
            log.warning("engine out of rotation", route=self.route.name, engine=engine.url, reason=reason)

    def describe(self) -> str:
        if not self.engines:
            return f"no engine found at {self.route.endpoint}"
        return "; ".join(f"{e.url} {'up' if e.up else 'out: ' + e.down_reason}" for e in self.engines.values())

    def endpoint(self) -> str:
        return ",".join(self.engines) or self.route.endpoint

    async def _discover(self) -> None:
        """Look the route's hosts up again; every address is one engine (new ones join through the probe)."""
        loop = asyncio.get_running_loop()
        found: list[str] = []
        for url in self.route.engine_urls:
            parts = urlsplit(url)
            port = parts.port or (443 if parts.scheme == "https" else 80)
            try:
                infos = await loop.getaddrinfo(parts.hostname, port, type=socket.SOCK_STREAM)
            except OSError as exc:   # keep the table as it is: a DNS hiccup is no reason to drop engines
                # once per outage (a stack without vLLM, say compose without its gpu profile, would
                # otherwise log it every refresh); a later success logs the recovery
                if self._discovery_failing != str(exc):
                    log.warning("engine discovery failed", route=self.route.name, host=parts.hostname, error=str(exc))
                self._discovery_failing = str(exc)
                return
            if self._discovery_failing:
                log.info("engine discovery answers again", route=self.route.name, host=parts.hostname)
                self._discovery_failing = ""
            found += [u for u in resolved_urls(url, [info[4][0] for info in infos]) if u not in found]
        for url in found:
            if url not in self.engines:
                log.info("engine discovered", route=self.route.name, engine=url)
                self._add(url)
        for url in [u for u in self.engines if u not in found]:
            engine = self.engines.pop(url)
            self._take_out(engine, "gone from DNS")
            metrics.ENGINE_UP.remove(self.route.name, engine.label)
            metrics.ENGINE_IN_FLIGHT.remove(self.route.name, engine.label)
            log.info("engine gone from DNS", route=self.route.name, engine=url)
            self._retired.append(engine)

    async def _probe(self, engine: Engine) -> None:
        try:
            response = await engine.backend._admin().get("models", timeout=min(PROBE_TIMEOUT_S, self.route.timeout_s))
        except httpx.TimeoutException:
            return   # busy, not gone: an engine in rotation stays; one out of it waits for the next probe
        except httpx.HTTPError as exc:
            self._take_out(engine, f"does not answer: {type(exc).__name__}")
            return
        if response.status_code != 200:
            self._take_out(engine, f"/v1/models answered {response.status_code}")
            return
        try:
            served = {m.get("id"): m.get("root") for m in response.json().get("data", [])}
        except (ValueError, AttributeError):
            served = {}
        if engine.up:
            missing = sorted(set(self.adapters) - set(served))
            if missing:   # restarted since it loaded them: it rejoins with them reloaded
                self._take_out(engine, f"lost adapters {missing}")
                engine.adapters.clear()
            return
        await self._rejoin(engine, served)

    async def _rejoin(self, engine: Engine, served: dict[str, str]) -> None:
        """Give an answering engine every adapter of the route it does not serve from the same path
        (`served`: its /v1/models, name -> path), then put it in rotation."""
        async with self._adapter_lock:
            if engine.up or self.engines.get(engine.url) is not engine:
                return
            try:
                for stale in [n for n in engine.adapters if n not in self.adapters]:
                    await engine.backend.unload_adapter(stale)
                    del engine.adapters[stale]
                for name, path in self.adapters.items():
                    if served.get(name) != path:   # a restarted engine has none of them
                        await engine.backend.load_adapter(name, path, b"")
                    engine.adapters[name] = path
            except (HaloError, TransientBackendError) as exc:
                engine.down_reason = f"answers, but reloading its adapters failed: {exc}"
                log.warning("engine cannot rejoin", route=self.route.name, engine=engine.url, error=str(exc))
                return
            engine.up = True
            engine.down_reason = ""
            metrics.ENGINE_UP.labels(self.route.name, engine.label).set(1)
            log.info("engine in rotation", route=self.route.name, engine=engine.url, adapters=sorted(self.adapters))

    async def refresh(self) -> None:
        """One round: DNS (discover_engines), then every engine probed; engines gone from DNS closed once idle."""
        if self.route.discover_engines:
            await self._discover()
        await asyncio.gather(*(self._probe(e) for e in list(self.engines.values())))
        for engine in [e for e in self._retired if e.in_flight == 0]:
            self._retired.remove(engine)
            await engine.backend.close()

    async def _refresh_loop(self) -> None:
        while True:
            await asyncio.sleep(self.route.engine_refresh_s)
            try:
                await self.refresh()
            except Exception as exc:  # the loop outlives any one round
                log.error("engine refresh failed", route=self.route.name, error=f"{type(exc).__name__}: {exc}")

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        await self.refresh()
        self._task = asyncio.create_task(self._refresh_loop())

    async def healthy(self) -> bool:
        return any(e.up for e in self.engines.values())

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None
        engines = list(self.engines.values()) + self._retired
        await asyncio.gather(*(e.backend.close() for e in engines), return_exceptions=True)

    # ------------------------------------------------------------------ sampling

    async def _routed(self, adapter: str | None, call: Callable[[Backend], Awaitable[T]]) -> T:
        """`call` on the least busy engine, then on another after each transient failure."""
        if adapter and adapter in self._unloading:
            raise NotFound(f"route {self.route.name!r}: adapter {adapter!r} is being unloaded")
        tries = self.route.retries + 1
        last: TransientBackendError | None = None
        failed: list[str] = []
        if adapter:
            self._adapter_in_flight[adapter] = self._adapter_in_flight.get(adapter, 0) + 1
        try:
            for attempt in range(tries):
                engine = pick_engine(self.engines.values(), self._rng)
                if engine is None:
                    break
                if attempt:
                    metrics.ENGINE_FAILOVERS.labels(self.route.name).inc()
                engine.in_flight += 1
                metrics.ENGINE_IN_FLIGHT.labels(self.route.name, engine.label).inc()
                started = time.perf_counter()
                try:
                    result = await call(engine.backend)
                except TransientBackendError as exc:
                    last = exc
                    failed.append(f"{engine.url}: {exc}")
                    self._call_failed(engine, str(exc))
                    continue
                except NotFound:
                    if not adapter or adapter not in self.adapters:
                        raise
                    # the route's adapter is missing there: the engine restarted since it loaded it
                    last = TransientBackendError(f"has lost adapter {adapter!r}")
                    failed.append(f"{engine.url}: lost adapter {adapter!r}")
                    self._call_failed(engine, f"lost adapter {adapter!r}")
                    engine.adapters.clear()
                    continue
                finally:
                    engine.in_flight -= 1
                    if self.engines.get(engine.url) is engine:   # not an engine gone from DNS meanwhile
                        metrics.ENGINE_IN_FLIGHT.labels(self.route.name, engine.label).dec()
                engine.served += 1
                metrics.ENGINE_SECONDS.labels(self.route.name, engine.label).observe(time.perf_counter() - started)
                return result
        finally:
            if adapter:
                self._adapter_in_flight[adapter] -= 1
                if not self._adapter_in_flight[adapter]:
                    del self._adapter_in_flight[adapter]
        if last is None or len(failed) < tries:
            tried = f" (failed: {'; '.join(failed)})" if failed else ""
            raise Unavailable(f"route {self.route.name!r}: no vLLM engine in rotation{tried}; engines: {self.describe()}")
        if last.timeout:
            raise DeadlineExceeded(f"route {self.route.name!r}: timed out on {tries} attempt(s) of "
                                   f"{self.route.timeout_s:g}s: {'; '.join(failed)}")
        raise Unavailable(f"route {self.route.name!r}: {tries} attempt(s) failed: {'; '.join(failed)}; "
                          f"engines: {self.describe()}")

    def _call_failed(self, engine: Engine, reason: str) -> None:
        """A call found `engine` failing: counted, and the engine out of rotation until a probe brings it back."""
        engine.errors += 1
        metrics.ENGINE_ERRORS.labels(self.route.name, engine.label).inc()
        self._take_out(engine, reason)

    async def sample(self, prompt: Prompt | None, ctx: PolicyContext | None, params: SampleParams,
                     adapter: str | None) -> BackendResult:
        return await self._routed(adapter, lambda backend: backend.sample(prompt, ctx, params, adapter))

    # ------------------------------------------------------------------ adapters

    def in_flight_with(self, adapter: str) -> int:
        return self._adapter_in_flight.get(adapter, 0)

    async def load_adapter(self, name: str, path: str, weights: bytes) -> None:
        if weights:
            raise InvalidArgument("vLLM loads LoRA adapters from a path (a PEFT folder on the vLLM host), not inline weights")
        if not path:
            raise InvalidArgument("LoadAdapter on a vLLM route needs `path` (PEFT adapter folder)")
        async with self._adapter_lock:
            targets = [e for e in self.engines.values() if e.up]
            if not targets:
                raise Unavailable(f"route {self.route.name!r}: no vLLM engine in rotation to load {name!r} on; "
                                  f"engines: {self.describe()}")
            outcomes = await asyncio.gather(*(e.backend.load_adapter(name, path, weights) for e in targets),
                                            return_exceptions=True)
            loaded = [e for e, out in zip(targets, outcomes) if not isinstance(out, BaseException)]
            failures = [(e, out) for e, out in zip(targets, outcomes) if isinstance(out, BaseException)]
            for engine, exc in failures:
                if not isinstance(exc, (HaloError, TransientBackendError)):
                    raise exc
                # an engine that took the adapter where others did not, or that did not answer, leaves
                # the rotation; an adapter no engine takes is the adapter's fault, not theirs
                if loaded or isinstance(exc, TransientBackendError):
                    self._take_out(engine, f"failed to load adapter {name!r}: {exc}")
            if not loaded:
                engine, exc = failures[0]
                if isinstance(exc, TransientBackendError):
                    raise Unavailable(f"route {self.route.name!r}: no engine loaded {name!r} ({engine.url}: {exc})")
                raise exc
            for engine in loaded:
                engine.adapters[name] = path
            self.adapters[name] = path

    async def unload_adapter(self, name: str) -> None:
        self._unloading.add(name)   # new requests for it are refused from here on
        try:
            deadline = time.monotonic() + self.route.timeout_s
            while self.in_flight_with(name) and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            if self.in_flight_with(name):
                log.warning("unloading an adapter with requests in flight", route=self.route.name, adapter=name,
                            in_flight=self.in_flight_with(name), waited_s=self.route.timeout_s)
            async with self._adapter_lock:
                self.adapters.pop(name, None)
                holders = [e for e in list(self.engines.values()) + self._retired if name in e.adapters]
                outcomes = await asyncio.gather(*(e.backend.unload_adapter(name) for e in holders), return_exceptions=True)
                for engine, out in zip(holders, outcomes):
                    del engine.adapters[name]
                    if isinstance(out, BaseException):   # an engine that does not answer holds nothing we serve
                        log.warning("adapter unload failed on an engine", route=self.route.name, engine=engine.url,
                                    adapter=name, error=str(out))
        finally:
            self._unloading.discard(name)

    def engine_rows(self) -> list[dict[str, Any]]:
        """Per engine: url, up, in_flight, served, errors, adapters (for reports and tests)."""
        return [{"url": e.url, "up": e.up, "in_flight": e.in_flight, "served": e.served, "errors": e.errors,
                 "adapters": sorted(e.adapters)} for e in self.engines.values()]
