"""Typed async client of the env service.

The client keeps the sessions it opened alive: while any is open, a background task sends one
KeepAlive for all of them every `keepalive_s` (20 s; the service's idle TTL is 60 s by default),
so a long model call between two steps never loses a session, while the sessions of a client that
died (killed, crashed) are reaped within the TTL instead of holding the pool.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import ClassVar

from halo.agent.actions import Action, action_to_proto
from halo.client.base import ServiceClient
from halo.errors import HaloError, ResourceExhausted
from halo.v1 import common_pb2 as cpb
from halo.v1 import env_pb2 as pb
from halo.v1 import env_pb2_grpc as rpc


def observation_options(image_format: str = "png", jpeg_quality: int = 0, screenshot: bool = True, axtree: bool = True) -> cpb.ObservationOptions:
    return cpb.ObservationOptions(
        image_format=cpb.IMAGE_FORMAT_JPEG if image_format == "jpeg" else cpb.IMAGE_FORMAT_PNG,
        jpeg_quality=jpeg_quality, skip_screenshot=not screenshot, skip_axtree=not axtree,
    )


class EnvClient(ServiceClient):
    """The env service's typed client. A fleet target (`host:port,host:port` or `fleet://name:port`)
    gives a `halo.client.fleet.FleetEnvClient`: sessions spread over the replicas, each pinned to its own."""

    stub_class = rpc.EnvServiceStub
    stub: rpc.EnvServiceStub

    #: the class a fleet target gets: set by halo.client.fleet, which the halo.client package imports
    fleet_class: ClassVar[type[EnvClient] | None] = None

    def __new__(cls, target: str, *args, **kwargs):
        fleet = EnvClient.fleet_class
        if cls is EnvClient and fleet is not None and fleet.is_fleet_target(target):
            return super().__new__(fleet)
        return super().__new__(cls)

    def __init__(self, target: str, *, keepalive_s: float = 20.0, **kwargs) -> None:
        super().__init__(target, **kwargs)
        self.keepalive_s = keepalive_s
        self._open: set[str] = set()
        self._keepalive: asyncio.Task | None = None

    def _opened(self, session_id: str) -> None:
        self._open.add(session_id)
        if self.keepalive_s > 0 and (self._keepalive is None or self._keepalive.done()):
            self._keepalive = asyncio.get_running_loop().create_task(self._keep_alive_forever())

    async def _keep_alive_forever(self) -> None:
        while self._open:
            await asyncio.sleep(self.keepalive_s)
            if self._open:
                with contextlib.suppress(HaloError):   # the service is away: the episode's own calls say so
                    await self.keep_alive(sorted(self._open))

    async def close(self) -> None:
        if self._keepalive is not None:
            self._keepalive.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._keepalive
        await super().close()

    async def list_tasks(self, site: str = "", replica_only: bool = False, suite: str = "") -> list[cpb.Task]:
        response = await self._read(self.stub.ListTasks, pb.ListTasksRequest(site=site, replica_only=replica_only, suite=suite))
        return list(response.tasks)

    async def get_task(self, task_id: str) -> cpb.Task:
        return await self._read(self.stub.GetTask, pb.GetTaskRequest(task_id=task_id))

    async def create_session(
        self, task_id: str, *, seed: int = 0, source: int = cpb.SITE_SOURCE_UNSPECIFIED,
        observation: cpb.ObservationOptions | None = None, max_steps: int = 0, run_id: str = "",
        labels: dict[str, str] | None = None, timeout_s: float | None = None, wait_for_slot_s: float = 0.0,
        include_state: bool = False,
    ) -> pb.CreateSessionResponse:
        """A new session. RESOURCE_EXHAUSTED (pool full) is retried for up to `wait_for_slot_s`.
        `include_state`: the reply carries a replica's state JSON too (no GetState needed)."""
        request = pb.CreateSessionRequest(
            task_id=task_id, seed=seed, source=source, observation=observation, max_steps=max_steps,
            run_id=run_id, labels=labels or {}, include_state=include_state,
        )
        deadline = time.monotonic() + wait_for_slot_s
        delay = 0.5
        while True:
            try:
                created = await self._call(self.stub.CreateSession, request, timeout_s)
                break
            except ResourceExhausted:
                # the pool is momentarily full (a group finishing, a dead client's sessions not yet
                # reaped): wait and try again rather than fail the run
                if time.monotonic() + delay > deadline:
                    raise
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
        self._opened(created.session_id)
        return created

    async def prime_sessions(
        self, task_id: str, count: int, *, seed: int = 0, source: int = cpb.SITE_SOURCE_UNSPECIFIED,
        observation: cpb.ObservationOptions | None = None, run_id: str = "", ttl_s: float = 0.0,
    ) -> int:
        """A hint: `count` create_session calls with this key (task, seed, source, observation, run_id:
        the same arguments they will pass) come soon, so the service prepares those sessions ahead.
        Returns how many it accepted; unclaimed ones are closed after `ttl_s` (the service's
        default when 0). Unimplemented from an env service older than the hint."""
        request = pb.PrimeSessionsRequest(task_id=task_id, seed=seed, source=source, observation=observation,
                                          run_id=run_id, count=count)
        if ttl_s > 0:
            request.ttl.FromNanoseconds(int(ttl_s * 1e9))
        return (await self._read(self.stub.PrimeSessions, request)).accepted

    async def step(
        self, session_id: str, action: Action | cpb.Action, *, raw_text: str = "",
        observation: cpb.ObservationOptions | None = None, timeout_s: float | None = None, include_state: bool = False,
    ) -> pb.StepResponse:
        """One action. A proto `action` goes as it is (a gateway candidate needs no conversion);
        `include_state`: the reply carries a replica's state JSON after the action (no GetState needed)."""
        message = action if isinstance(action, cpb.Action) else action_to_proto(action, raw_text)
        request = pb.StepRequest(session_id=session_id, action=message, observation=observation, include_state=include_state)
        response = await self._call(self.stub.Step, request, timeout_s)
        if response.env_failure:
            self._open.discard(session_id)   # the service closed it
        return response

    async def observe(self, session_id: str, observation: cpb.ObservationOptions | None = None) -> cpb.Observation:
        return await self._call(self.stub.GetObservation, pb.GetObservationRequest(session_id=session_id, observation=observation))

    async def get_state(self, session_id: str) -> pb.GetStateResponse:
        return await self._read(self.stub.GetState, pb.GetStateRequest(session_id=session_id))

    async def snapshot(self, session_id: str) -> pb.SnapshotResponse:
        return await self._call(self.stub.Snapshot, pb.SnapshotRequest(session_id=session_id))

    async def restore(self, session_id: str, snapshot_id: str, observation: cpb.ObservationOptions | None = None) -> cpb.Observation:
        response = await self._call(
            self.stub.Restore, pb.RestoreRequest(session_id=session_id, snapshot_id=snapshot_id, observation=observation)
        )
        return response.observation

    async def close_session(self, session_id: str) -> bool:
        response = await self._read(self.stub.CloseSession, pb.CloseSessionRequest(session_id=session_id))
        self._open.discard(session_id)
        return response.was_open

    async def list_sessions(self, run_id: str = "", labels: dict[str, str] | None = None, limit: int = 0) -> pb.ListSessionsResponse:
        return await self._read(self.stub.ListSessions, pb.ListSessionsRequest(run_id=run_id, labels=labels or {}, limit=limit))

    async def keep_alive(self, session_ids: list[str]) -> pb.KeepAliveResponse:
        return await self._read(self.stub.KeepAlive, pb.KeepAliveRequest(session_ids=session_ids))

    async def close_run_sessions(self, run_id: str) -> int:
        """Close every session created with `run_id` (what a previous life of the run left open)."""
        if not run_id:
            raise ValueError("close_run_sessions needs a run_id (an empty one would match every session)")
        closed = 0
        while True:
            listed = await self.list_sessions(run_id=run_id)
            if not listed.sessions:
                return closed
            for info in listed.sessions:
                closed += await self.close_session(info.session_id)

    async def pool_stats(self) -> pb.PoolStats:
        return await self._read(self.stub.GetPoolStats, pb.GetPoolStatsRequest())
