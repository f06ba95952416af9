"""Typed async client of the env service."""

from __future__ import annotations

from halo.agent.actions import Action, action_to_proto
from halo.client.base import ServiceClient
from halo.v1 import common_pb2 as cpb
from halo.v1 import env_pb2 as pb
from halo.v1 import env_pb2_grpc as rpc


def observation_options(image_format: str = "png", jpeg_quality: int = 0, screenshot: bool = True, axtree: bool = True) -> cpb.ObservationOptions:
    return cpb.ObservationOptions(
        image_format=cpb.IMAGE_FORMAT_JPEG if image_format == "jpeg" else cpb.IMAGE_FORMAT_PNG,
        jpeg_quality=jpeg_quality, skip_screenshot=not screenshot, skip_axtree=not axtree,
    )


class EnvClient(ServiceClient):
    stub_class = rpc.EnvServiceStub
    stub: rpc.EnvServiceStub

    async def list_tasks(self, site: str = "", replica_only: bool = False, suite: str = "") -> list[cpb.Task]:
        response = await self._read(self.stub.ListTasks, pb.ListTasksRequest(site=site, replica_only=replica_only, suite=suite))
        return list(response.tasks)

    async def get_task(self, task_id: str) -> cpb.Task:
        return await self._read(self.stub.GetTask, pb.GetTaskRequest(task_id=task_id))

    async def create_session(
        self, task_id: str, *, seed: int = 0, source: int = cpb.SITE_SOURCE_UNSPECIFIED,
        observation: cpb.ObservationOptions | None = None, max_steps: int = 0, run_id: str = "",
        labels: dict[str, str] | None = None, timeout_s: float | None = None,
    ) -> pb.CreateSessionResponse:
        request = pb.CreateSessionRequest(
            task_id=task_id, seed=seed, source=source, observation=observation, max_steps=max_steps,
            run_id=run_id, labels=labels or {},
        )
        return await self._call(self.stub.CreateSession, request, timeout_s)

    async def step(
        self, session_id: str, action: Action | cpb.Action, *, raw_text: str = "",
        observation: cpb.ObservationOptions | None = None, timeout_s: float | None = None,
    ) -> pb.StepResponse:
        message = action if isinstance(action, cpb.Action) else action_to_proto(action, raw_text)
        return await self._call(self.stub.Step, pb.StepRequest(session_id=session_id, action=message, observation=observation), timeout_s)

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
        return response.was_open

    async def pool_stats(self) -> pb.PoolStats:
        return await self._read(self.stub.GetPoolStats, pb.GetPoolStatsRequest())
