"""Typed async client of the trainer service."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc

from halo.client.base import ServiceClient
from halo.errors import from_rpc_error
from halo.runs.spec import RunSpec
from halo.v1 import trainer_pb2 as pb
from halo.v1 import trainer_pb2_grpc as rpc


class TrainerClient(ServiceClient):
    stub_class = rpc.TrainerServiceStub
    stub: rpc.TrainerServiceStub

    async def start_run(self, spec: RunSpec) -> pb.Run:
        return await self._call(self.stub.StartRun, pb.StartRunRequest(spec=spec.to_proto()))

    async def get_run(self, run_id: str) -> pb.Run:
        return await self._read(self.stub.GetRun, pb.GetRunRequest(run_id=run_id))

    async def list_runs(self, limit: int = 0) -> list[pb.Run]:
        return list((await self._read(self.stub.ListRuns, pb.ListRunsRequest(limit=limit))).runs)

    async def stop_run(self, run_id: str) -> pb.Run:
        return await self._call(self.stub.StopRun, pb.StopRunRequest(run_id=run_id))

    async def resume_run(self, run_id: str, total_steps: int = 0) -> pb.Run:
        """Continue a run from its last checkpoint; `total_steps` > 0 extends it to that many steps."""
        return await self._call(self.stub.ResumeRun, pb.ResumeRunRequest(run_id=run_id, total_steps=total_steps))

    async def list_checkpoints(self, run_id: str) -> list[pb.Checkpoint]:
        return list((await self._read(self.stub.ListCheckpoints, pb.ListCheckpointsRequest(run_id=run_id))).checkpoints)

    async def watch(self, run_id: str, after_sequence: int = 0) -> AsyncIterator[pb.RunEvent]:
        """Events of a run until it ends (no deadline: runs last). Reconnect with the last sequence."""
        call = self.stub.WatchRun(pb.WatchRunRequest(run_id=run_id, after_sequence=after_sequence), metadata=self._metadata)
        try:
            async for event in call:
                yield event
        except grpc.aio.AioRpcError as exc:
            raise from_rpc_error(exc) from None
