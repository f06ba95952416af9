"""gRPC glue of the env service: protos in, plain Python to the SessionManager, protos out."""

from __future__ import annotations

import time
from collections import OrderedDict

from google.protobuf.duration_pb2 import Duration

from halo.agent.actions import ActionConversionError, action_from_proto
from halo.env import podcost
from halo.env.config import EnvSettings
from halo.env.observe import ElementInfo, ObserveOptions, PageObservation, axtree_text
from halo.env.session import SessionManager, Source, Termination
from halo.tasks.registry import TaskRegistry, TaskSpec, default_registry
from halo.runtime.errors import DeadlineExceeded, InvalidArgument, Unavailable, translate_errors
from halo.runtime.logging import get_logger
from halo.runtime.server import ServiceSpec, grpc_service
from halo.v1 import common_pb2 as cpb
from halo.v1 import env_pb2 as pb
from halo.v1 import env_pb2_grpc as rpc

_EVAL_KINDS = {"script": cpb.EVAL_KIND_SCRIPT, "jmespath": cpb.EVAL_KIND_JMESPATH, "llm_judge": cpb.EVAL_KIND_LLM_JUDGE}
_TERMINATIONS = {
    Termination.NONE: pb.TERMINATION_UNSPECIFIED,
    Termination.MESSAGE_SENT: pb.TERMINATION_MESSAGE_SENT,
    Termination.INFEASIBLE: pb.TERMINATION_INFEASIBLE,
    Termination.MAX_STEPS: pb.TERMINATION_MAX_STEPS,
    Termination.ENV_FAILURE: pb.TERMINATION_ENV_FAILURE,
}
_SOURCES = {Source.REPLICA: cpb.SITE_SOURCE_REPLICA, Source.REMOTE: cpb.SITE_SOURCE_REMOTE}


def task_to_proto(task: TaskSpec) -> cpb.Task:
    return cpb.Task(
        id=task.id, site=task.site, goal=task.goal, remote_url=task.remote_url, difficulty=task.difficulty,
        challenge_type=task.challenge_type, possible=task.possible,
        eval_kinds=[_EVAL_KINDS.get(k, cpb.EVAL_KIND_UNSPECIFIED) for k in task.eval_kinds],
        replica_available=task.replica_available, scorable=task.scorable, notes=task.notes, suite=task.suite,
    )


class _ElementForms:
    """The protobuf form of a reading's elements and its AXTree text, built once per reading: a page
    that did not change comes back as the very tuple of its last reading
    (`observe.read_title_and_elements`), and building 400 elements' messages and lines every step
    would cost the event loop that serves every session milliseconds. Keyed by identity (the entry
    holds the tuple, so its id is not reused while cached); the least recently used go first."""

    def __init__(self, size: int = 128) -> None:
        self._size = size
        self._forms: OrderedDict[int, tuple[tuple[ElementInfo, ...], cpb.Observation]] = OrderedDict()

    def of(self, elements: tuple[ElementInfo, ...]) -> cpb.Observation:
        key = id(elements)
        hit = self._forms.get(key)
        if hit is not None and hit[0] is elements:
            self._forms.move_to_end(key)
            return hit[1]
        form = cpb.Observation(
            axtree=axtree_text(elements),
            elements=[
                cpb.Element(
                    bid=e.bid, role=e.role, name=e.name, value=e.value,
                    bbox=cpb.BoundingBox(x=e.x, y=e.y, width=e.width, height=e.height),
                    visible=e.visible, interactive=e.interactive, focused=e.focused, depth=e.depth, states=e.states,
                )
                for e in elements
            ],
        )
        self._forms[key] = (elements, form)
        if len(self._forms) > self._size:
            self._forms.popitem(last=False)
        return form


_element_forms = _ElementForms()


def observation_to_proto(obs: PageObservation) -> cpb.Observation:
    message = cpb.Observation(
        screenshot=obs.screenshot,
        image_format=cpb.IMAGE_FORMAT_JPEG if obs.image_format == "jpeg" else cpb.IMAGE_FORMAT_PNG,
        width=obs.width, height=obs.height,
        url=obs.url, title=obs.title,
        tabs=[cpb.Tab(url=t.url, title=t.title, active=t.active) for t in obs.tabs],
        last_action_error=obs.last_action_error, step_index=obs.step_index, goal=obs.goal,
    )
    message.MergeFrom(_element_forms.of(tuple(obs.elements)))
    return message


def observe_options(msg: cpb.ObservationOptions) -> ObserveOptions:
    if msg.jpeg_quality > 100:
        raise InvalidArgument(f"jpeg_quality must be 1..100, got {msg.jpeg_quality}")
    return ObserveOptions(
        image_format="jpeg" if msg.image_format == cpb.IMAGE_FORMAT_JPEG else "png",
        jpeg_quality=msg.jpeg_quality or 80,
        screenshot=not msg.skip_screenshot,
        axtree=not msg.skip_axtree,
    )


def _source(value: int) -> Source | None:
    return {cpb.SITE_SOURCE_REPLICA: Source.REPLICA, cpb.SITE_SOURCE_REMOTE: Source.REMOTE}.get(value)


def _duration(seconds: float) -> Duration:
    d = Duration()
    d.FromNanoseconds(int(seconds * 1e9))
    return d


#: PrimeSessions' bounds: a hint's TTL by default and at most, and the largest count it may name
PRIME_TTL_S = 120.0
PRIME_MAX_TTL_S = 600.0
PRIME_MAX_COUNT = 1024


def _prime_ttl_s(request: pb.PrimeSessionsRequest) -> float:
    if not request.HasField("ttl"):
        return PRIME_TTL_S
    ttl_s = request.ttl.ToNanoseconds() / 1e9
    if ttl_s <= 0 or ttl_s > PRIME_MAX_TTL_S:
        raise InvalidArgument(f"ttl must be more than 0 and at most {PRIME_MAX_TTL_S:g}s (unset: {PRIME_TTL_S:g}s), got {ttl_s:g}s")
    return ttl_s


log = get_logger("halo.env.server")

#: CreateSession's refusal while the replica drains: UNAVAILABLE, which a fleet client (halo.client.fleet)
#: answers by marking the replica not serving and creating the session on the next replica; the
#: words say so to anyone else reading it
DRAINING = "draining: this env replica is shutting down and takes no new session; create it on another replica"


def _require_session_id(session_id: str) -> str:
    if not session_id:
        raise InvalidArgument("session_id is required")
    return session_id


class EnvServicer(rpc.EnvServiceServicer):
    def __init__(self, manager: SessionManager) -> None:
        self.manager = manager
        #: set by `drain`: CreateSession refuses (DRAINING), PrimeSessions accepts nothing; every call
        #: of an open session is served as before
        self.draining = False

    async def drain(self, timeout_s: float) -> bool:
        """Take no new session, give up what was prepared ahead (warm contexts, primed sessions), and
        wait until every open session is closed (True) or `timeout_s` passes (False)."""
        self.draining = True
        log.info("env draining", open_sessions=self.manager.active, timeout_s=timeout_s)
        await self.manager.primed.close()
        await self.manager.warm.close()
        idle = await self.manager.wait_idle(timeout_s)
        if idle:
            log.info("env drained: every session closed")
        else:
            log.warning("env drain timed out: closing the sessions still open", open_sessions=self.manager.active)
        return idle

    @translate_errors
    async def ListTasks(self, request, context):
        tasks = self.manager.registry.list(request.site, request.replica_only, request.suite)
        return pb.ListTasksResponse(tasks=[task_to_proto(t) for t in tasks])

    @translate_errors
    async def GetTask(self, request, context):
        return task_to_proto(self.manager.registry.get(request.task_id))

    @translate_errors
    async def CreateSession(self, request, context):
        if self.draining:
            raise Unavailable(DRAINING)
        if not request.task_id:
            raise InvalidArgument("task_id is required (see ListTasks)")
        session, obs = await self.manager.create(
            request.task_id, seed=request.seed, source=_source(request.source), max_steps=request.max_steps,
            run_id=request.run_id, labels=dict(request.labels), options=observe_options(request.observation),
        )
        state_json = ""
        if request.include_state:
            try:
                state_json = await self.manager.replica_state(session.id)
            except BaseException:
                # the reply will not reach the client: free the slot now (as for an expired deadline below)
                await self.manager.close_session(session.id, reason="abandoned")
                raise
        remaining = context.time_remaining()
        if remaining is not None and remaining <= 0:
            # The deadline passed just as the setup finished (too late for a cancellation): the reply
            # would be dropped and the id never reach the client, so free the slot now, not at the idle TTL.
            await self.manager.close_session(session.id, reason="abandoned")
            raise DeadlineExceeded(f"the session for {request.task_id} was ready after the client's deadline")
        return pb.CreateSessionResponse(
            session_id=session.id, task=task_to_proto(session.task), observation=observation_to_proto(obs),
            state_json=state_json,
        )

    @translate_errors
    async def Step(self, request, context):
        _require_session_id(request.session_id)
        if not request.HasField("action"):
            raise InvalidArgument("action is required")
        try:
            action = action_from_proto(request.action)
        except ActionConversionError as exc:
            raise InvalidArgument(str(exc)) from exc
        out = await self.manager.step(request.session_id, action, observe_options(request.observation), request.include_state)
        response = pb.StepResponse(
            action_ok=out.action_ok, action_error=out.action_error, done=out.done,
            termination=_TERMINATIONS[out.termination], env_failure=out.env_failure,
            env_failure_reason=out.env_failure_reason,
            action_duration=_duration(out.action_s), observation_duration=_duration(out.observe_s),
            state_json=out.state_json, final_message=out.final_message,
        )
        if out.observation is not None:
            response.observation.CopyFrom(observation_to_proto(out.observation))
        return response

    @translate_errors
    async def GetObservation(self, request, context):
        obs = await self.manager.observation(_require_session_id(request.session_id), observe_options(request.observation))
        return observation_to_proto(obs)

    @translate_errors
    async def GetState(self, request, context):
        st = await self.manager.state(_require_session_id(request.session_id))
        return pb.GetStateResponse(
            state_json=st.state_json, final_message=st.final_message, done=st.done,
            termination=_TERMINATIONS[st.termination], step_index=st.step_index, task_id=st.task_id,
            source=_SOURCES[st.source],
        )

    @translate_errors
    async def Snapshot(self, request, context):
        snapshot_id, record = await self.manager.snapshot(_require_session_id(request.session_id))
        return pb.SnapshotResponse(snapshot_id=snapshot_id, url=record.url, step_index=record.step_index)

    @translate_errors
    async def Restore(self, request, context):
        obs = await self.manager.restore(
            _require_session_id(request.session_id), request.snapshot_id, observe_options(request.observation)
        )
        return pb.RestoreResponse(observation=observation_to_proto(obs))

    @translate_errors
    async def CloseSession(self, request, context):
        return pb.CloseSessionResponse(was_open=await self.manager.close_session(_require_session_id(request.session_id)))

    @translate_errors
    async def ListSessions(self, request, context):
        sessions = self.manager.list_sessions(request.run_id, dict(request.labels))
        limit = request.limit or self.manager.settings.pool_size
        now = time.monotonic()
        return pb.ListSessionsResponse(
            sessions=[
                pb.SessionInfo(session_id=s.id, task_id=s.task.id, run_id=s.run_id, labels=s.labels,
                               step_index=s.step_index, idle_s=now - s.last_used)
                for s in sessions[:limit]
            ],
            total=len(sessions),
        )

    @translate_errors
    async def KeepAlive(self, request, context):
        alive = self.manager.keep_alive(list(request.session_ids))
        return pb.KeepAliveResponse(alive=alive, unknown=len(request.session_ids) - alive)

    @translate_errors
    async def PrimeSessions(self, request, context):
        if not request.task_id:
            raise InvalidArgument("task_id is required (see ListTasks)")
        if not 1 <= request.count <= PRIME_MAX_COUNT:
            raise InvalidArgument(f"count must be 1..{PRIME_MAX_COUNT}, got {request.count}")
        if self.draining:   # a hint, not a create: nothing is prepared here, the creates go elsewhere
            return pb.PrimeSessionsResponse(accepted=0)
        accepted = self.manager.prime(
            request.task_id, request.seed, _source(request.source), request.run_id,
            observe_options(request.observation), request.count, _prime_ttl_s(request),
        )
        return pb.PrimeSessionsResponse(accepted=accepted)

    @translate_errors
    async def GetPoolStats(self, request, context):
        return pb.PoolStats(**self.manager.stats())


def build_service(settings: EnvSettings, registry: TaskRegistry | None = None) -> ServiceSpec:
    manager = SessionManager(settings, registry or default_registry())
    servicer = EnvServicer(manager)
    cost = podcost.for_pod(settings.pod_namespace, settings.pod_name, lambda: manager.active)

    async def start() -> None:
        await manager.start()
        if cost is not None:
            cost.start()

    async def stop() -> None:
        if cost is not None:
            await cost.close()
        await manager.close()

    async def drain() -> None:
        await servicer.drain(settings.drain_timeout_s)

    return grpc_service("env", pb.DESCRIPTOR.services_by_name["EnvService"], rpc.add_EnvServiceServicer_to_server,
                        servicer, manager, on_start=start, on_stop=stop, readiness=manager.readiness, drain=drain)
