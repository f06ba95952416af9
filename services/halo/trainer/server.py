"""gRPC glue of the trainer service.

The service runs whatever trainer its `resolver` maps a spec to; `halo serve trainer` injects the
apps' registry (halo.cli.registry), so this service never imports a trainer.
"""

from __future__ import annotations

from pathlib import Path

from google.protobuf.timestamp_pb2 import Timestamp

from halo.errors import InvalidArgument, translate_errors
from halo.runs.context import ServiceTargets
from halo.runs.spec import KINDS, RunSpec
from halo.runtime.server import ServiceSpec, grpc_service
from halo.trainer.config import TrainerSettings
from halo.trainer.defaults import apply_run_defaults
from halo.trainer.jobs import JobManager, TrainerResolver
from halo.trainer.store import CheckpointRecord, RunRecord, RunState
from halo.v1 import trainer_pb2 as pb
from halo.v1 import trainer_pb2_grpc as rpc

_STATES = {
    RunState.PENDING: pb.RUN_STATE_PENDING, RunState.RUNNING: pb.RUN_STATE_RUNNING,
    RunState.STOPPING: pb.RUN_STATE_STOPPING, RunState.STOPPED: pb.RUN_STATE_STOPPED,
    RunState.SUCCEEDED: pb.RUN_STATE_SUCCEEDED, RunState.FAILED: pb.RUN_STATE_FAILED,
    RunState.INTERRUPTED: pb.RUN_STATE_INTERRUPTED,
}


def _ts(seconds: float) -> Timestamp:
    ts = Timestamp()
    ts.FromNanoseconds(int(seconds * 1e9))
    return ts


def run_to_proto(r: RunRecord) -> pb.Run:
    return pb.Run(
        run_id=r.run_id, spec=r.spec.to_proto(), state=_STATES[r.state], step=r.step,
        created_at=_ts(r.created_at), updated_at=_ts(r.updated_at), last_metrics=r.last_metrics,
        error=r.error, last_checkpoint_id=r.last_checkpoint_id, output_dir=r.output_dir,
    )


def checkpoint_to_proto(c: CheckpointRecord) -> pb.Checkpoint:
    return pb.Checkpoint(
        checkpoint_id=c.checkpoint_id, run_id=c.run_id, step=c.step, path=c.path,
        created_at=_ts(c.created_at), metrics=c.metrics,
    )


def event_to_proto(run_id: str, e: dict) -> pb.RunEvent:
    msg = pb.RunEvent(run_id=run_id, sequence=e["sequence"], time=_ts(e["time"]))
    if e["type"] == "metrics":
        msg.metrics.CopyFrom(pb.StepMetrics(step=e["step"], values=e["values"]))
    elif e["type"] == "state":
        msg.state_change.CopyFrom(pb.StateChange(state=_STATES[RunState(e["state"])], message=e["message"]))
    elif e["type"] == "checkpoint":
        msg.checkpoint.CopyFrom(pb.Checkpoint(
            checkpoint_id=e["checkpoint_id"], run_id=run_id, step=e["step"], path=e["path"],
            created_at=_ts(e["time"]), metrics=e.get("metrics", {}),
        ))
    else:
        msg.log.CopyFrom(pb.LogLine(level=e.get("level", "info"), message=e.get("message", "")))
    return msg


class TrainerServicer(rpc.TrainerServiceServicer):
    def __init__(self, jobs: JobManager, settings: TrainerSettings | None = None) -> None:
        self.jobs = jobs
        self.settings = settings or TrainerSettings()

    @translate_errors
    async def StartRun(self, request, context):
        try:
            spec = RunSpec.from_proto(request.spec)
        except ValueError as exc:  # e.g. NaN or Infinity in `extra`, which JSON (the run's record) cannot hold
            raise InvalidArgument(f"spec: {exc}") from None
        return run_to_proto(await self.jobs.start_run(apply_run_defaults(spec, self.settings)))

    @translate_errors
    async def GetRun(self, request, context):
        return run_to_proto(self.jobs.get(request.run_id))

    @translate_errors
    async def ListRuns(self, request, context):
        kind = next((k for k, v in KINDS.items() if v == request.kind), "")
        return pb.ListRunsResponse(runs=[run_to_proto(r) for r in self.jobs.list(kind, request.limit)])

    @translate_errors
    async def StopRun(self, request, context):
        return run_to_proto(await self.jobs.stop(request.run_id))

    @translate_errors
    async def ResumeRun(self, request, context):
        return run_to_proto(await self.jobs.resume(request.run_id, total_steps=request.total_steps))

    @translate_errors
    async def WatchRun(self, request, context):
        if not request.run_id:
            raise InvalidArgument("run_id is required")
        async for event in self.jobs.watch(request.run_id, request.after_sequence):
            yield event_to_proto(request.run_id, event)

    @translate_errors
    async def ListCheckpoints(self, request, context):
        return pb.ListCheckpointsResponse(checkpoints=[checkpoint_to_proto(c) for c in self.jobs.checkpoints(request.run_id)])


def build_service(settings: TrainerSettings, *, resolver: TrainerResolver) -> ServiceSpec:
    targets = ServiceTargets(settings.env_target, settings.reward_target, settings.gateway_target,
                             settings.service_token or settings.auth_token, settings.service_tls_ca)
    jobs = JobManager(Path(settings.runs_dir), targets, resolver, settings.auto_resume)
    return grpc_service("trainer", pb.DESCRIPTOR.services_by_name["TrainerService"], rpc.add_TrainerServiceServicer_to_server,
                        TrainerServicer(jobs, settings), jobs, on_start=jobs.start, on_stop=jobs.close)
