"""The contract holds against hostile input: replies never grow with the request,
every enum of every request is checked, and reflection answers under v1 as well as v1alpha."""

from __future__ import annotations

import asyncio

import grpc
import pytest
from grpc_reflection.v1alpha import reflection_pb2 as refl

from halo.agent import actions as A
from halo.errors import InvalidArgument, NotFound
from halo.runtime.validation import first_bad_enum
from halo.v1 import common_pb2 as cpb
from halo.v1 import env_pb2 as pb
from halo.v1 import policy_pb2, trainer_pb2


def test_first_bad_enum_names_the_field_at_any_depth():
    assert first_bad_enum(pb.StepRequest(session_id="s", action=cpb.Action(noop=cpb.Noop()))) is None
    nested = pb.StepRequest(action=cpb.Action(click_at=cpb.ClickAt(point=cpb.Point(x=1, y=1, space=77))))
    assert first_bad_enum(nested).startswith("action.click_at.point.space: 77 is not a CoordinateSpace value")
    assert first_bad_enum(pb.GetObservationRequest(observation=cpb.ObservationOptions(image_format=42))).startswith(
        "observation.image_format: 42 is not a ImageFormat value"
    )
    run = trainer_pb2.StartRunRequest(spec=trainer_pb2.RunSpec(kind=trainer_pb2.RUN_KIND_GRPO, loss_fn=9))
    assert first_bad_enum(run).startswith("spec.loss_fn: 9 is not a LossFunction value")
    assert first_bad_enum(cpb.Task(eval_kinds=[cpb.EVAL_KIND_SCRIPT, 50])).startswith("eval_kinds[1]: 50 ")
    assert first_bad_enum(policy_pb2.SampleRequest(action_format=-3)).startswith("action_format: -3 ")


async def test_out_of_range_enums_outside_actions_are_invalid_argument(env):
    before = (await env.pool_stats()).sessions_created
    with pytest.raises(InvalidArgument, match=r"source: 99 is not a SiteSource value"):
        await env.create_session("playground-signup", source=99)
    assert (await env.pool_stats()).sessions_created == before   # refused before the handler ran
    created = await env.create_session("playground-signup", observation=cpb.ObservationOptions(skip_screenshot=True))
    try:
        with pytest.raises(InvalidArgument, match=r"observation\.image_format: 42 is not a ImageFormat value"):
            await env.observe(created.session_id, cpb.ObservationOptions(image_format=42))
        with pytest.raises(InvalidArgument, match=r"observation\.image_format: 42"):
            await env.step(created.session_id, A.Noop(), observation=cpb.ObservationOptions(image_format=42))
        # the refused calls did nothing: the step count is still 0
        assert (await env.observe(created.session_id)).step_index == 0
    finally:
        await env.close_session(created.session_id)


async def test_replies_do_not_grow_with_the_request(env):
    created = await env.create_session("playground-signup", observation=cpb.ObservationOptions(skip_screenshot=True))
    sid, base = created.session_id, created.observation.url
    text_only = cpb.ObservationOptions(skip_screenshot=True)
    try:
        huge_url = base + "?q=" + "x" * (3 * 1024 * 1024)   # on the task's own site: only its length is wrong
        with pytest.raises(InvalidArgument) as refused:
            await env.step(sid, A.Goto(huge_url), observation=text_only)
        assert f"goto.url is {len(huge_url):,} characters; at most 8,192" in str(refused.value)
        assert len(str(refused.value)) < 200

        for oversized, field in ((A.ClickElement("1" * 10_000 + "x"), "click_element.bid is 10,001 characters"),
                                 (A.KeyPress("K" * 100_000), "key_press.keys is 100,000 characters"),
                                 (A.SendMessage("y" * 30_000), "send_message.text is 30,000 characters; at most 20,000")):
            with pytest.raises(InvalidArgument, match=field) as refused:
                await env.step(sid, oversized, observation=text_only)
            assert len(str(refused.value)) < 200

        long_bid = "1" * 31 + "x"   # within the bound, not an id: the action error quotes it
        r = await env.step(sid, A.ClickElement(long_bid), observation=text_only)
        assert not r.action_ok and long_bid in r.action_error and len(r.action_error) < 1000

        long_key = "K" * 64   # Playwright's own error quotes the key: cut by the session
        r = await env.step(sid, A.KeyPress(long_key), observation=text_only)
        assert not r.action_ok and len(r.action_error) < 2100, len(r.action_error)
        assert r.observation.last_action_error == r.action_error

        with pytest.raises(NotFound) as unknown:
            await env.step("s" * 1_000_000, A.Noop())
        assert len(str(unknown.value)) < 2500 and "1000000 characters" in str(unknown.value)
    finally:
        await env.close_session(sid)


async def test_reflection_is_served_as_v1_and_v1alpha(stack):
    async with grpc.aio.insecure_channel(stack.env_target) as channel:
        for package in ("grpc.reflection.v1", "grpc.reflection.v1alpha"):
            call = channel.stream_stream(
                f"/{package}.ServerReflection/ServerReflectionInfo",
                request_serializer=refl.ServerReflectionRequest.SerializeToString,
                response_deserializer=refl.ServerReflectionResponse.FromString,
            )
            requests = [
                refl.ServerReflectionRequest(list_services=""),
                refl.ServerReflectionRequest(file_containing_symbol="grpc.reflection.v1.ServerReflection"),
            ]
            listed, described = [r async for r in call(iter(requests), timeout=30)]
            names = {s.name for s in listed.list_services_response.service}
            assert {"halo.v1.EnvService", "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection",
                    "grpc.reflection.v1alpha.ServerReflection"} <= names, (package, names)
            assert not described.HasField("error_response"), described.error_response
            from google.protobuf import descriptor_pb2

            files = [descriptor_pb2.FileDescriptorProto.FromString(b)
                     for b in described.file_descriptor_response.file_descriptor_proto]
            assert any(f.package == "grpc.reflection.v1" and f.service[0].name == "ServerReflection" for f in files)


async def test_list_sessions_by_run_and_labels_keep_alive_and_close_a_runs_leftovers(stack):
    from halo.client.env import EnvClient

    text_only = cpb.ObservationOptions(skip_screenshot=True)
    async with EnvClient(stack.env_target, timeout_s=60, keepalive_s=0.2) as client:
        a = await client.create_session("playground-signup", run_id="run-a", labels={"group": "1"}, observation=text_only)
        b = await client.create_session("playground-name", run_id="run-a", labels={"group": "2"}, observation=text_only)
        other = await client.create_session("playground-signup", run_id="run-b", observation=text_only)
        try:
            listed = await client.list_sessions(run_id="run-a")
            assert {s.session_id for s in listed.sessions} == {a.session_id, b.session_id} and listed.total == 2
            assert [s.task_id for s in (await client.list_sessions(run_id="run-a", labels={"group": "2"})).sessions] == ["playground-name"]
            assert (await client.list_sessions(run_id="run-a", limit=1)).total == 2

            # the client keeps what it holds open alive on its own (a long model call between steps)
            manager = stack.env_manager
            touched = manager.get(a.session_id).last_used
            await asyncio.sleep(1.0)
            assert manager.get(a.session_id).last_used > touched
            alive = await client.keep_alive([a.session_id, "gone"])
            assert (alive.alive, alive.unknown) == (1, 1)

            assert await client.close_run_sessions("run-a") == 2   # a resumed run's first act
            assert (await client.list_sessions(run_id="run-a")).total == 0
            assert (await client.list_sessions(run_id="run-b")).total == 1
            with pytest.raises(ValueError):
                await client.close_run_sessions("")
        finally:
            await client.close_session(other.session_id)
