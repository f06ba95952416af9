"""An env fleet behind one target: several env service replicas, sessions pinned to their replica.

A fleet target is either

- an explicit list `host:port,host:port,...`, or
- `fleet://name:port` (also `fleet://a:1,b:2`): every address the name resolves to is one replica,
  which is what a Kubernetes headless Service gives (one A record per ready pod).

`EnvClient(target)` returns a `FleetEnvClient` for such a target, so every client that opens env
sessions (trainers, evaluation, the trainer service, `halo train/eval --env`) takes one unchanged.

Routing, with no load balancer in between:

- A new session goes to the least loaded serving replica (ties: the one this client placed fewer
  sessions on since the last refresh, then at random). Load is the replica's
  `active_sessions / capacity` from GetPoolStats at the last refresh, plus the sessions this client
  placed there since (and those it is creating there now: a refresh that races a burst of creates
  keeps counting them), so one client spreads a burst of creates evenly (a GRPO step opens all its
  sessions at once) and several clients, each spreading its own, do not pile onto one replica.
- Every later call of a session goes to the replica that created it (`owner`). The client keeps
  that map; a session it does not know (a restarted trainer's) is found by asking every replica
  (KeepAlive of that one id), and a resumed run closes what its previous life left open with
  `close_run_sessions`, which asks every replica. So nothing needs the map to survive a restart,
  and session ids stay the service's own (16 random hex digits: no clash across replicas).
- The name is resolved again every `refresh_s` (5 s, or $HALO_FLEET_REFRESH_S; grpc's own DNS
  resolver would wait up to 30 minutes), together with every replica's gRPC health and pool stats: a new replica takes new
  sessions within seconds; a replica answering NOT_SERVING (draining) takes none from that probe
  on, and one whose probes fail (no answer within the probe's timeout) takes none once
  `EJECT_AFTER_FAILED_PROBES` probes in a row failed: one slow answer from a loaded machine is not
  a dead replica (the consecutive-failure rule of Envoy's outlier detection). A call that finds a
  replica away stops new sessions there at once, until a probe says it serves. A replica that
  never answered a probe takes no session; its first failed probe is retried at once. Either
  way it keeps serving the sessions it holds; a replica that left the resolution is dropped once
  it holds none of this client's sessions.
- A PrimeSessions hint (a trainer announcing the sessions of a key it will create soon) goes to
  one replica, the least loaded counting the sessions already announced to each, whole: the env
  primes for exactly the key it was told, so the creates of that key must land where the hint did.
  The client remembers it (key -> replica, creates still announced, until the hint's TTL) and sends
  the creates of that key there first (the next replica on RESOURCE_EXHAUSTED or UNAVAILABLE, as
  any create). One replica per key, not the count split over all of them: a GRPO group is one key,
  and a step's groups are spread over the replicas group by group, which balances them as well.
- Replicas share nothing. One that dies takes only its own sessions: their calls fail
  (UNAVAILABLE), which the episode loop turns into environment failures, and `sessions_lost`
  counts them; new sessions avoid it from the first failed call on.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import ipaddress
import logging
import os
import random
import socket
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import grpc
from grpc_health.v1 import health_pb2

from halo.client.base import DEFAULT_TIMEOUT_S, open_channel
from halo.client.env import EnvClient
from halo.errors import DeadlineExceeded, HaloError, NotFound, ResourceExhausted, Unavailable
from halo.v1 import common_pb2 as cpb
from halo.v1 import env_pb2 as pb

T = TypeVar("T")
log = logging.getLogger("halo.client.fleet")

FLEET_SCHEME = "fleet://"
DEFAULT_REFRESH_S = 5.0
PROBE_TIMEOUT_S = 2.0
#: Probes in a row that must fail (no answer in time) before a replica that served takes no new sessions.
EJECT_AFTER_FAILED_PROBES = 3


def is_fleet_target(target: str) -> bool:
    """True for `fleet://...` and for a comma-separated list of addresses."""
    return target.startswith(FLEET_SCHEME) or "," in target


def fleet_members(target: str) -> list[tuple[str, int]]:
    """The (host, port) pairs a fleet target names; ValueError with the reason when malformed."""
    body = target[len(FLEET_SCHEME):] if target.startswith(FLEET_SCHEME) else target
    members = []
    for item in (part.strip() for part in body.split(",")):
        if not item:
            continue
        host, sep, port = item.rpartition(":")
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f"fleet target {target!r}: {item!r} is not host:port")
        members.append((host.strip("[]"), int(port)))
    if not members:
        raise ValueError(f"fleet target {target!r} names no replica")
    return members


def _address(ip: str, port: int) -> str:
    return f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}"


async def resolve(members: list[tuple[str, int]]) -> dict[str, str]:
    """Replica address (ip:port) -> the host name it came from, for every member.

    A name with IPv4 addresses gives only those (`localhost` also resolves to ::1, which would
    count one server twice). A name that does not resolve now gives nothing: its replicas are
    away until it does.
    """
    loop = asyncio.get_running_loop()
    out: dict[str, str] = {}
    for host, port in members:
        with contextlib.suppress(ValueError):
            out[_address(str(ipaddress.ip_address(host)), port)] = host
            continue
        try:
            infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError:
            continue
        v4 = [i[4][0] for i in infos if i[0] == socket.AF_INET]
        for ip in dict.fromkeys(v4 or [i[4][0] for i in infos]):
            out[_address(ip, port)] = host
    return out


@dataclass
class Replica:
    """One env service replica as this client sees it."""

    address: str                     # ip:port
    client: EnvClient
    listed: bool = True              # in the latest resolution of the fleet target
    serving: bool = False            # health SERVING at the last answered probe, no call failed since, and
                                     # fewer than EJECT_AFTER_FAILED_PROBES probes in a row unanswered
    failed_probes: int = 0           # probes in a row that got no answer
    answered: bool = False           # some probe of this replica got an answer
    capacity: int = 0                # pool size, from GetPoolStats
    active: int = 0                  # sessions open there at the last probe (every client's)
    placed: int = 0                  # sessions this client created there since that probe
    creating: int = 0                # CreateSession calls of this client under way there
    created: int = 0                 # sessions this client created there, in all
    sessions: set[str] = field(default_factory=set)   # this client's open sessions there
    announced: int = 0               # creates this client hinted there (PrimeSessions) and has not made yet

    @property
    def load(self) -> float:
        return (self.active + self.placed + self.creating + self.announced) / max(self.capacity, 1)


@dataclass
class Announced:
    """Creates of one key hinted to a replica (PrimeSessions) and not made yet."""
    replica: Replica
    count: int
    until: float     # monotonic: the hint's TTL


class FleetEnvClient(EnvClient):
    """EnvClient over a fleet of env replicas (see the module's docstring)."""

    is_fleet_target = staticmethod(is_fleet_target)

    def __init__(
        self, target: str, *, keepalive_s: float = 20.0, token: str = "", timeout_s: float = DEFAULT_TIMEOUT_S,
        channel: grpc.aio.Channel | None = None, max_message_mb: int = 16, tls_ca: str | Path = "",
        refresh_s: float | None = None,
    ) -> None:
        if channel is not None:
            raise ValueError("a fleet target opens one channel per replica: pass no channel")
        # no ServiceClient.__init__: the fleet has no channel of its own
        self.target = target
        self.timeout_s = timeout_s
        self.keepalive_s = keepalive_s
        self.refresh_s = float(os.environ.get("HALO_FLEET_REFRESH_S", DEFAULT_REFRESH_S)) if refresh_s is None else refresh_s
        self.members = fleet_members(target)
        self._client_args = dict(token=token, timeout_s=timeout_s, keepalive_s=keepalive_s)
        self._max_bytes = max_message_mb * 1024 * 1024
        self._tls_ca = tls_ca
        self.replicas: dict[str, Replica] = {}
        self._owners: dict[str, Replica] = {}
        self._lost: set[str] = set()
        self._refreshed_at = float("-inf")
        self._refreshing: asyncio.Task | None = None
        self._first_refresh = asyncio.Event()
        self._dropped: list[EnvClient] = []
        self._announced: dict[tuple, Announced] = {}   # session key -> where its creates were hinted

    # -- what the fleet reports ------------------------------------------------------------------

    @property
    def sessions_lost(self) -> int:
        """Sessions whose calls failed because their replica went away (died, unreachable, too slow)."""
        return len(self._lost)

    def placements(self) -> dict[str, int]:
        """Sessions this client created on each replica it has known (address -> count)."""
        return {r.address: r.created for r in self.replicas.values()}

    # -- resolution and probing ------------------------------------------------------------------

    def _replica_client(self, address: str, host: str) -> EnvClient:
        options: list[tuple[str, object]] = [
            ("grpc.max_receive_message_length", self._max_bytes), ("grpc.max_send_message_length", self._max_bytes),
        ]
        if self._tls_ca:
            options.append(("grpc.ssl_target_name_override", host))   # the certificate names the host, not the pod IP
        channel = open_channel(address, tls_ca=self._tls_ca, options=options)
        client = EnvClient(address, channel=channel, **self._client_args)
        client._owns_channel = True   # made here for this replica alone: close it with the client
        return client

    async def refresh(self) -> None:
        """Resolve the target again and probe every listed replica's health and pool stats."""
        found = await resolve(self.members)
        for address, host in found.items():
            if address not in self.replicas:
                self.replicas[address] = Replica(address, self._replica_client(address, host))
        for replica in self.replicas.values():
            replica.listed = replica.address in found
        await asyncio.gather(*(self._probe(r) for r in self.replicas.values() if r.listed or r.sessions))
        # a replica that never answered gets a second chance at once: a new replica's first answer,
        # slow on a loaded machine, should not keep it out of the sessions opened right now
        await asyncio.gather(*(self._probe(r) for r in self.replicas.values()
                               if r.listed and not r.answered and r.failed_probes == 1))
        for address in [a for a, r in self.replicas.items() if not r.listed and not r.sessions]:
            self._dropped.append(self.replicas.pop(address).client)   # closed with the fleet (calls may be in flight)
        self._refreshed_at = time.monotonic()

    async def _probe(self, replica: Replica) -> None:
        client = replica.client
        # Sessions created while the probe is under way may be missing from its stats: they stay
        # counted as placed (a burst of creates racing a refresh would otherwise all see load 0)
        created_before = replica.created
        try:
            # "" is the whole server: NOT_SERVING from the moment a graceful shutdown (drain) starts
            health = await client._health.Check(health_pb2.HealthCheckRequest(service=""), timeout=PROBE_TIMEOUT_S)
            serving = health.status == health_pb2.HealthCheckResponse.SERVING
            stats = await client._call(client.stub.GetPoolStats, pb.GetPoolStatsRequest(), PROBE_TIMEOUT_S) if serving else None
        except (grpc.aio.AioRpcError, HaloError):
            replica.failed_probes += 1
            if replica.failed_probes >= EJECT_AFTER_FAILED_PROBES:
                replica.serving = False
            return
        replica.failed_probes, replica.answered = 0, True
        replica.serving = serving
        if stats is not None:
            replica.capacity, replica.active = stats.capacity, stats.active_sessions
            replica.placed = replica.created - created_before

    async def _fresh(self) -> None:
        """The first call resolves and probes (awaited) and starts the refresh loop: every `refresh_s`
        after that, in the background, so a call never waits for DNS or probes again."""
        if self._refreshing is None:
            self._refreshing = asyncio.get_running_loop().create_task(self._refresh_forever())
        if self._refreshed_at == float("-inf"):
            await self._first_refresh.wait()

    async def _refresh_forever(self) -> None:
        while True:
            try:
                await self.refresh()
            except Exception as exc:   # DNS down, a replica misbehaving: keep what we know, try again
                log.warning("env fleet %s: refresh failed: %s", self.target, exc)
                self._refreshed_at = time.monotonic()
            self._first_refresh.set()
            await asyncio.sleep(self.refresh_s)

    def _failed(self, replica: Replica, session_id: str = "") -> None:
        """A call to `replica` found it away: no new sessions there until a probe says it serves."""
        replica.serving = False
        if session_id:
            self._lost.add(session_id)
            # no more keep-alives for it: if the replica is only slow, its idle TTL reaps the session
            replica.client._open.discard(session_id)

    # -- routing -----------------------------------------------------------------------------------

    def _choose(self, exclude: set[str]) -> Replica | None:
        """The least loaded serving replica; ties go to the one this client placed fewer sessions on
        since the last probe (replicas of different sizes reach equal load with unequal counts: 2 of 8
        and 1 of 4), then at random."""
        candidates = [r for r in self.replicas.values() if r.listed and r.serving and r.address not in exclude]
        if not candidates:
            return None
        random.shuffle(candidates)
        return min(candidates, key=lambda r: (r.load, r.placed + r.creating))

    async def _owner(self, session_id: str) -> Replica:
        owner = self._owners.get(session_id)
        if owner is not None:
            return owner
        if session_id in self._lost:
            raise Unavailable(f"session {session_id}: its env replica went away")
        # a session this client did not create (a restarted trainer's): ask every replica
        await self._fresh()

        async def holds(replica: Replica) -> bool:
            try:
                return (await replica.client.keep_alive([session_id])).alive > 0
            except HaloError:
                return False

        replicas = list(self.replicas.values())
        for replica, held in zip(replicas, await asyncio.gather(*(holds(r) for r in replicas))):
            if held:
                self._owners[session_id] = replica
                replica.sessions.add(session_id)
                return replica
        raise NotFound(f"session {session_id} is open on no replica of {self.target}")

    def _forget(self, session_id: str) -> None:
        owner = self._owners.pop(session_id, None)
        if owner is not None:
            owner.sessions.discard(session_id)

    async def _on_owner(self, session_id: str, call: Callable[[EnvClient], Awaitable[T]]) -> T:
        """`call` on the session's replica; a replica that fails the call is marked away."""
        owner = await self._owner(session_id)
        try:
            return await call(owner.client)
        except (Unavailable, DeadlineExceeded):
            self._failed(owner, session_id)
            raise
        except NotFound:
            self._forget(session_id)
            raise

    async def _on_any(self, call: Callable[[EnvClient], Awaitable[T]]) -> T:
        """`call` on a serving replica (the task registry is the same on all), the next one on UNAVAILABLE."""
        await self._fresh()
        replicas = sorted((r for r in self.replicas.values() if r.serving), key=lambda r: r.load)
        if not replicas:
            raise Unavailable(f"no env replica of {self.target} is serving")
        for replica in replicas:
            try:
                return await call(replica.client)
            except Unavailable:
                self._failed(replica)
                if replica is replicas[-1]:
                    raise
        raise AssertionError("unreachable")

    # -- the EnvClient API -------------------------------------------------------------------------

    async def close(self) -> None:
        if self._refreshing is not None:
            self._refreshing.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._refreshing
        for client in [*(r.client for r in self.replicas.values()), *self._dropped]:
            await client.close()

    async def healthy(self, service: str = "", timeout_s: float = 5.0) -> bool:
        """True when at least one replica serves."""
        await self.refresh()
        return any(r.serving for r in self.replicas.values())

    async def list_tasks(self, site: str = "", replica_only: bool = False, suite: str = "") -> list[cpb.Task]:
        return await self._on_any(lambda c: c.list_tasks(site, replica_only, suite))

    async def get_task(self, task_id: str) -> cpb.Task:
        return await self._on_any(lambda c: c.get_task(task_id))

    @staticmethod
    def _session_key(task_id: str, seed: int, source: int, observation: cpb.ObservationOptions | None, run_id: str) -> tuple:
        """What makes creates interchangeable for the env's primed sessions (services' SessionKey)."""
        options = (observation or cpb.ObservationOptions()).SerializeToString(deterministic=True)
        return task_id.removeprefix("v2."), seed, source, options, run_id

    def _hinted_replica(self, key: tuple) -> Replica | None:
        """The replica the creates of `key` were announced to, while that hint holds (one create spent)."""
        announced = self._announced.get(key)
        if announced is None:
            return None
        replica = announced.replica
        if time.monotonic() > announced.until or announced.count <= 0 or self.replicas.get(replica.address) is not replica:
            replica.announced -= announced.count
            del self._announced[key]
            return None
        announced.count -= 1
        replica.announced -= 1
        return replica if replica.serving else None

    async def prime_sessions(
        self, task_id: str, count: int, *, seed: int = 0, source: int = cpb.SITE_SOURCE_UNSPECIFIED,
        observation: cpb.ObservationOptions | None = None, run_id: str = "", ttl_s: float = 0.0,
    ) -> int:
        """The hint goes whole to the least loaded serving replica (sessions announced there counted),
        and the creates of this key go there first (see the module's docstring). Unimplemented is
        raised as it comes (a fleet of older replicas)."""
        await self._fresh()
        key = self._session_key(task_id, seed, source, observation, run_id)
        if (earlier := self._announced.pop(key, None)) is not None:   # a new hint replaces it, as on the service
            earlier.replica.announced -= earlier.count
        replica = self._choose(set())
        if replica is None:
            raise Unavailable(f"no env replica of {self.target} is serving")
        accepted = await replica.client.prime_sessions(task_id, count, seed=seed, source=source, observation=observation,
                                                       run_id=run_id, ttl_s=ttl_s)
        if accepted:
            # the service's default TTL when none was given (120 s): the client forgets the hint then too
            self._announced[key] = Announced(replica, accepted, time.monotonic() + (ttl_s or 120.0))
            replica.announced += accepted
        return accepted

    async def create_session(
        self, task_id: str, *, seed: int = 0, source: int = cpb.SITE_SOURCE_UNSPECIFIED,
        observation: cpb.ObservationOptions | None = None, max_steps: int = 0, run_id: str = "",
        labels: dict[str, str] | None = None, timeout_s: float | None = None, wait_for_slot_s: float = 0.0,
        include_state: bool = False,
    ) -> pb.CreateSessionResponse:
        """A new session on the replica its key was hinted to (prime_sessions), else the least loaded
        serving replica; a replica that is full or away is skipped for the next one. When all are
        full, waits for a slot for up to `wait_for_slot_s`."""
        deadline = time.monotonic() + wait_for_slot_s
        delay = 0.5
        hinted = self._hinted_replica(self._session_key(task_id, seed, source, observation, run_id))
        while True:
            await self._fresh()
            tried: set[str] = set()
            full = 0
            while (replica := hinted if hinted is not None else self._choose(tried)) is not None:
                hinted = None   # the hinted replica first, once
                tried.add(replica.address)
                replica.creating += 1
                try:
                    created = await replica.client.create_session(
                        task_id, seed=seed, source=source, observation=observation, max_steps=max_steps,
                        run_id=run_id, labels=labels, timeout_s=timeout_s, include_state=include_state)
                except ResourceExhausted:
                    replica.active = max(replica.active, replica.capacity)   # full until the next probe says otherwise
                    full += 1
                    continue
                except Unavailable:
                    self._failed(replica)
                    continue
                finally:
                    replica.creating -= 1
                replica.created += 1
                replica.placed += 1
                replica.sessions.add(created.session_id)
                self._owners[created.session_id] = replica
                return created
            if not full:
                raise Unavailable(f"no env replica of {self.target} is serving "
                                  f"({len(self.replicas)} known: {', '.join(sorted(self.replicas)) or 'none resolved'})")
            if time.monotonic() + delay > deadline:
                raise ResourceExhausted(f"every serving env replica of {self.target} is full ({full} tried)")
            await asyncio.sleep(delay)
            delay = min(delay * 2, 5.0)
            await self.refresh()   # slots free up elsewhere: look again before the next try

    async def step(self, session_id: str, action, *, raw_text: str = "",
                   observation: cpb.ObservationOptions | None = None, timeout_s: float | None = None,
                   include_state: bool = False) -> pb.StepResponse:
        response = await self._on_owner(session_id, lambda c: c.step(
            session_id, action, raw_text=raw_text, observation=observation, timeout_s=timeout_s,
            include_state=include_state))
        if response.env_failure:
            self._forget(session_id)   # the replica closed it
        return response

    async def observe(self, session_id: str, observation: cpb.ObservationOptions | None = None) -> cpb.Observation:
        return await self._on_owner(session_id, lambda c: c.observe(session_id, observation))

    async def get_state(self, session_id: str) -> pb.GetStateResponse:
        return await self._on_owner(session_id, lambda c: c.get_state(session_id))

    async def snapshot(self, session_id: str) -> pb.SnapshotResponse:
        return await self._on_owner(session_id, lambda c: c.snapshot(session_id))

    async def restore(self, session_id: str, snapshot_id: str, observation: cpb.ObservationOptions | None = None) -> cpb.Observation:
        return await self._on_owner(session_id, lambda c: c.restore(session_id, snapshot_id, observation))

    async def close_session(self, session_id: str) -> bool:
        try:
            return await self._on_owner(session_id, lambda c: c.close_session(session_id))
        finally:
            self._forget(session_id)

    async def _on_each(self, call: Callable[[EnvClient], Awaitable[T]]) -> list[T]:
        """`call` on every replica that answers (one that is away holds nothing worth listing)."""
        await self._fresh()

        async def one(replica: Replica) -> T | None:
            try:
                return await call(replica.client)
            except (Unavailable, DeadlineExceeded):
                self._failed(replica)
                return None

        results = await asyncio.gather(*(one(r) for r in list(self.replicas.values())))
        return [r for r in results if r is not None]

    async def list_sessions(self, run_id: str = "", labels: dict[str, str] | None = None, limit: int = 0) -> pb.ListSessionsResponse:
        answers = await self._on_each(lambda c: c.list_sessions(run_id, labels, limit))
        sessions = [s for a in answers for s in a.sessions]
        return pb.ListSessionsResponse(sessions=sessions[:limit] if limit else sessions, total=sum(a.total for a in answers))

    async def keep_alive(self, session_ids: list[str]) -> pb.KeepAliveResponse:
        by_owner: dict[str, list[str]] = collections.defaultdict(list)
        for session_id in session_ids:
            if (owner := self._owners.get(session_id)) is not None:
                by_owner[owner.address].append(session_id)
        answers = await asyncio.gather(*(self.replicas[a].client.keep_alive(ids) for a, ids in by_owner.items()
                                         if a in self.replicas), return_exceptions=True)
        alive = sum(a.alive for a in answers if isinstance(a, pb.KeepAliveResponse))
        return pb.KeepAliveResponse(alive=alive, unknown=len(session_ids) - alive)

    async def close_run_sessions(self, run_id: str) -> int:
        """Close every session created with `run_id` on every replica that answers."""
        if not run_id:
            raise ValueError("close_run_sessions needs a run_id (an empty one would match every session)")
        return sum(await self._on_each(lambda c: c.close_run_sessions(run_id)))

    async def pool_stats(self) -> pb.PoolStats:
        """The fleet's pool: the sum over the replicas that answer (every field is a count, so a
        field added to PoolStats is summed too)."""
        total = pb.PoolStats()
        for stats in await self._on_each(lambda c: c.pool_stats()):
            for field_ in pb.PoolStats.DESCRIPTOR.fields:
                setattr(total, field_.name, getattr(total, field_.name) + getattr(stats, field_.name))
        return total


EnvClient.fleet_class = FleetEnvClient   # EnvClient(target) gives this class for a fleet target

__all__ = ["FleetEnvClient", "Replica", "is_fleet_target", "fleet_members", "resolve", "FLEET_SCHEME"]
