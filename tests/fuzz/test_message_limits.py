"""gRPC message size limits (ServiceSettings.max_message_mb, set by the shared runtime on every service).

A request over the limit is refused with RESOURCE_EXHAUSTED before any handler runs, a response
over it fails the same way instead of being sent, and the service goes on serving normal calls.
The trainer service stands in for all of them: the limit is the runtime's, not the service's.
"""

from __future__ import annotations

import grpc
import pytest
from pydantic import ValidationError

from halo.runtime.server import start_service
from halo.trainer.config import TrainerSettings
from halo.trainer.server import build_service
from halo.v1 import trainer_pb2, trainer_pb2_grpc

MIB = 1024 * 1024


def _trainer(spec):
    async def train(ctx) -> None:  # the runs here only need to exist
        return None

    return train


@pytest.fixture
async def small_limit_trainer(tmp_path):
    settings = TrainerSettings(port=0, metrics_port=-1, runs_dir=str(tmp_path), max_message_mb=1)
    running = await start_service(build_service(settings, resolver=_trainer), settings)
    # the client allows large messages both ways: whatever is refused, the server refused it
    options = [("grpc.max_send_message_length", 64 * MIB), ("grpc.max_receive_message_length", 64 * MIB)]
    try:
        async with grpc.aio.insecure_channel(running.target, options=options) as channel:
            yield trainer_pb2_grpc.TrainerServiceStub(channel)
    finally:
        await running.stop(grace=1)


def _spec(name: str, size: int = 0) -> trainer_pb2.RunSpec:
    return trainer_pb2.RunSpec(name=name, task_ids=["playground-signup"], total_steps=1, mode="x" * size)


async def test_request_over_the_limit_is_refused_and_the_service_keeps_serving(small_limit_trainer):
    stub = small_limit_trainer
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await stub.StartRun(trainer_pb2.StartRunRequest(spec=_spec("too-big", 2 * MIB)), timeout=30)
    assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, refused.value
    assert refused.value.details()
    with pytest.raises(grpc.aio.AioRpcError) as refused_again:  # just over, not only far over
        await stub.GetRun(trainer_pb2.GetRunRequest(run_id="r" * (MIB + 16)), timeout=30)
    assert refused_again.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED

    # under the limit: served, and nothing of the refused call was created
    run = await stub.StartRun(trainer_pb2.StartRunRequest(spec=_spec("fits", MIB // 2)), timeout=30)
    assert run.spec.name == "fits" and len(run.spec.mode) == MIB // 2
    runs = (await stub.ListRuns(trainer_pb2.ListRunsRequest(), timeout=30)).runs
    assert [r.spec.name for r in runs] == ["fits"]


async def test_response_over_the_limit_fails_instead_of_being_sent(small_limit_trainer):
    stub = small_limit_trainer
    for name in ("a", "b", "c"):  # three records of ~0.4 MiB: each fits, the list of all three does not
        await stub.StartRun(trainer_pb2.StartRunRequest(spec=_spec(name, 400 * 1024)), timeout=30)
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await stub.ListRuns(trainer_pb2.ListRunsRequest(), timeout=30)
    assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, refused.value
    page = await stub.ListRuns(trainer_pb2.ListRunsRequest(limit=2), timeout=30)
    assert len(page.runs) == 2


def test_the_limit_must_be_positive():
    with pytest.raises(ValidationError, match="max_message_mb"):
        TrainerSettings(max_message_mb=0)
