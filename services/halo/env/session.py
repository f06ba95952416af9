"""Sessions and the pool that holds them: the core of the env service, free of gRPC.

One session = one task attempt = one isolated browser context. The manager bounds how many are
open (waiting up to `acquire_timeout_s` for a slot, then ResourceExhausted), reaps idle ones
after a TTL, and turns browser deaths into environment failures instead of task failures.
"""

from __future__ import annotations

import asyncio
import html
import json
import re
import secrets
import time
from collections import deque
from dataclasses import dataclass, field
from enum import Enum
from typing import ClassVar

import httpx
from playwright.async_api import BrowserContext, Page
from playwright.async_api import Error as PlaywrightError

from halo.agent import actions as A
from halo.agent import bounds
from halo.env import metrics
from halo.env.browsers import BrowserPool, BrowserSlot, find_chromium
from halo.env.config import EnvSettings
from halo.env.contexts import ReadyContext, RouteGuard, WarmContexts, close_quietly, open_context, responsive
from halo.env.faults import STATE_HEADER, FaultWatcher, state_mismatch
from halo.env.execute import ActionFailed, ActionStalled, ExecLimits, execute
from halo.env.observe import MAX_PAGE_TEXT_CHARS, ObserveOptions, PageObservation, TabInfo, observe
from halo.env.primed import Prepared, PrimedSessions, SessionKey
from halo.env.timings import Lap, StepTimings
from halo.env.urlpolicy import UrlPolicy
from halo.runtime.aio import acquire_within
from halo.errors import bounded, quoted
from halo.runtime.errors import FailedPrecondition, InvalidArgument, NotFound, ResourceExhausted, Unavailable
from halo.runtime.logging import get_logger
from halo.tasks.registry import TaskRegistry, TaskSpec

log = get_logger("halo.env.session")

_PRE = re.compile(r"<pre[^>]*>(.*?)</pre>", re.S | re.I)
#: How Playwright words a connection the peer reset (Node: ECONNRESET, "socket hang up").
_CONNECTION_RESET = ("ECONNRESET", "socket hang up")


class Source(Enum):
    REPLICA = "replica"
    REMOTE = "remote"


class Termination(Enum):
    NONE = "none"
    MESSAGE_SENT = "message_sent"
    INFEASIBLE = "infeasible"
    MAX_STEPS = "max_steps"
    ENV_FAILURE = "env_failure"


@dataclass
class StepOutcome:
    observation: PageObservation | None
    action_ok: bool
    action_error: str
    done: bool
    termination: Termination
    env_failure: bool = False
    env_failure_reason: str = ""
    action_s: float = 0.0
    observe_s: float = 0.0
    state_json: str = ""               # the site's state after the action, when asked for (replicas)
    final_message: str = ""            # the final answer, once it ended the episode
    timings: StepTimings = field(default_factory=StepTimings)   # where the step's time went


@dataclass
class CreateTimings:
    """Where one CreateSession's time went (seconds), for `halo bench env` and the create histogram."""
    slot_s: float = 0.0       # waiting for a free session slot
    context_s: float = 0.0    # browser context + page + routing (cold), or taking a warm one
    config_s: float = 0.0     # the replica's /config (fresh state for this context)
    navigate_s: float = 0.0   # loading the start page
    observe_s: float = 0.0    # the first observation (AXTree + screenshot)
    total_s: float = 0.0
    warm: bool = False        # the context came from the warm pool
    primed: bool = False      # the whole session (context, /config, start page, observation) was prepared ahead

    PHASES: ClassVar[tuple[str, ...]] = ("slot", "context", "config", "navigate", "observe")


@dataclass
class SnapshotRecord:
    site_snapshot_id: str
    url: str
    step_index: int


@dataclass
class SessionState:
    state_json: str
    final_message: str
    done: bool
    termination: Termination
    step_index: int
    task_id: str
    source: Source


@dataclass(eq=False)
class Session:
    id: str
    task: TaskSpec
    source: Source
    base_url: str
    slot: BrowserSlot
    context: BrowserContext
    page: Page
    policy: UrlPolicy
    guard: RouteGuard
    faults: FaultWatcher
    max_steps: int
    step_index: int = 0
    done: bool = False
    termination: Termination = Termination.NONE
    final_message: str = ""
    last_error: str = ""
    env_failure: str = ""
    last_used: float = field(default_factory=time.monotonic)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    snapshots: dict[str, SnapshotRecord] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    run_id: str = ""

    def touch(self) -> None:
        self.last_used = time.monotonic()

    def tabs(self) -> list[TabInfo]:
        return [TabInfo(url=bounded(p.url, MAX_PAGE_TEXT_CHARS), title="", active=p is self.page) for p in self.context.pages]


class SessionManager:
    def __init__(self, settings: EnvSettings, registry: TaskRegistry, pool: BrowserPool | None = None) -> None:
        self.settings = settings
        self.registry = registry
        self.pool = pool or BrowserPool(
            count=settings.browsers, executable=_executable(settings), headless=settings.headless,
            sandbox_mode=settings.chromium_sandbox,
        )
        self.limits = ExecLimits(settings.action_timeout_ms, settings.navigation_timeout_ms, settings.max_wait_ms)
        self._sessions: dict[str, Session] = {}
        self._slots = asyncio.Semaphore(settings.pool_size)
        self._reaper: asyncio.Task | None = None
        self._probe: httpx.AsyncClient | None = None   # readiness's HTTP client
        self._creating = 0   # CreateSession calls under way
        self.warm = WarmContexts(self.pool, settings, min(settings.warm_contexts, settings.pool_size),
                                 busy=lambda: self._creating > 0)
        self.primed = PrimedSessions(settings.primed_sessions, self._prepare, self._dispose,
                                     busy=lambda: self._creating > 0, claim_slot=self._claim_free_slot,
                                     release_slot=self._slots.release,
                                     hint_limit=settings.pool_size if settings.prime_hints else 0)
        self.created = 0
        self.created_warm = 0   # of those, sessions that began on a warm context
        self.created_primed = 0   # of those, sessions prepared ahead (PrimedSessions)
        self.reaped = 0
        self.env_failures = 0
        #: the phases of the latest CreateSession calls (`halo bench env` reads them in process)
        self.create_timings: deque[CreateTimings] = deque(maxlen=4096)
        #: the phases of the latest completed steps (`halo bench env` reads them in process)
        self.step_timings: deque[StepTimings] = deque(maxlen=16384)
        metrics.POOL_CAPACITY.set(settings.pool_size)

    # --- lifecycle ------------------------------------------------------------------------

    async def start(self) -> None:
        await self.pool.start()
        self.warm.start()
        self.primed.start()
        self._reaper = asyncio.get_running_loop().create_task(self._reap_forever())

    async def readiness(self) -> str:
        """Why new replica sessions cannot be served now ("" when they can): the sites server does
        not answer. The env service's health status follows it, so a trainer whose episodes failed
        because the sites server went away waits for it to come back instead of rolling its step
        out again into the same outage."""
        if self._probe is None:   # one client for every probe: a new one builds an SSL context on the event loop
            self._probe = httpx.AsyncClient(timeout=2.0)
        try:
            response = await self._probe.get(f"{self.settings.sites_url.rstrip('/')}/__halo/health")
        except httpx.HTTPError as exc:
            return f"the sites server at {self.settings.sites_url} does not answer: {exc!r}"
        if response.status_code != 200:
            return f"the sites server at {self.settings.sites_url} answered HTTP {response.status_code}"
        return ""

    async def close(self) -> None:
        if self._reaper is not None:
            self._reaper.cancel()
        await self.primed.close()
        await self.warm.close()
        for session_id in list(self._sessions):
            await self.close_session(session_id, reason="shutdown")
        await self.pool.close()
        if self._probe is not None:
            await self._probe.aclose()

    async def wait_idle(self, timeout_s: float, poll_s: float = 0.1) -> bool:
        """Wait until no session is open and no CreateSession is under way (True), or `timeout_s`
        passes (False). A drain waits on it: held sessions end by CloseSession, the idle TTL, or
        an environment failure, and every call of theirs is served meanwhile."""
        deadline = time.monotonic() + timeout_s
        while self._sessions or self._creating:
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(poll_s)
        return True

    async def _reap_forever(self) -> None:
        interval = max(0.05, min(30.0, self.settings.session_ttl_s / 4))
        while True:
            await asyncio.sleep(interval)
            await self.reap_idle()

    async def reap_idle(self) -> int:
        now = time.monotonic()
        idle = [s.id for s in self._sessions.values() if now - s.last_used > self.settings.session_ttl_s and not s.lock.locked()]
        for session_id in idle:
            await self.close_session(session_id, reason="idle_ttl")
            self.reaped += 1
        return len(idle)

    # --- sessions -------------------------------------------------------------------------

    def get(self, session_id: str) -> Session:
        session = self._sessions.get(session_id)
        if session is None:
            raise NotFound(f"unknown session {quoted(session_id)} (closed, reaped after {self.settings.session_ttl_s:g}s idle, or never created)")
        return session

    @property
    def active(self) -> int:
        return len(self._sessions)

    def _resolve_source(self, task: TaskSpec, source: Source | None) -> tuple[Source, str]:
        if source is None:
            source = Source.REPLICA if task.replica_available else Source.REMOTE
        if source is Source.REPLICA:
            if not task.replica_available:
                raise FailedPrecondition(
                    f"task {task.id} has no local replica yet; ask for the remote site explicitly (source=REMOTE) "
                    "on a machine with internet"
                )
            return source, f"{self.settings.sites_url.rstrip('/')}/{task.site}/"
        if not self.settings.allow_remote:
            raise FailedPrecondition(
                f"task {task.id} would use the remote REAL site {task.remote_url}; remote sites are off "
                "(start the env service with --allow-remote)"
            )
        return source, task.remote_url

    async def create(
        self, task_id: str, seed: int = 0, source: Source | None = None, max_steps: int = 0,
        run_id: str = "", labels: dict[str, str] | None = None, options: ObserveOptions = ObserveOptions(),
    ) -> tuple[Session, PageObservation]:
        # the warm pool refills only while no create is under way: a context opened now would take
        # the cores from this create's page load and first observation
        self._creating += 1
        try:
            return await self._create(task_id, seed, source, max_steps, run_id, labels, options)
        finally:
            self._creating -= 1

    async def _create(
        self, task_id: str, seed: int, source: Source | None, max_steps: int, run_id: str,
        labels: dict[str, str] | None, options: ObserveOptions,
    ) -> tuple[Session, PageObservation]:
        task = self.registry.get(task_id)
        source, base_url = self._resolve_source(task, source)
        timings, clock = CreateTimings(), Lap()
        key = SessionKey(task.id, seed, source, run_id, options)
        self.primed.asked(key, time.monotonic())
        prepared = self.primed.take(key)   # it holds a slot already: the session takes it over
        needs_slot = prepared is None
        if prepared is not None and not await responsive(prepared.session.page):
            # its renderer died after the take's checks (a crash event not delivered yet): a dead
            # page is never handed out; its slot serves the fresh session set up below
            log.warning("primed session's page does not answer: set up anew", task=task.id)
            await asyncio.shield(self._dispose(prepared.session))
            prepared = None
        if needs_slot:
            if self._slots.locked():
                self.primed.evict()   # the pool is full: a primed session of another key gives its slot up
            metrics.CREATES_WAITING.inc()
            try:
                await acquire_within(self._slots, self.settings.acquire_timeout_s)
            except TimeoutError:
                metrics.POOL_REJECTIONS.inc()
                raise ResourceExhausted(
                    f"all {self.settings.pool_size} sessions are in use (waited {self.settings.acquire_timeout_s:g}s); "
                    "close sessions or raise --pool-size"
                ) from None
            finally:
                metrics.CREATES_WAITING.dec()
        timings.slot_s = clock.lap()
        if prepared is not None:   # set up ahead for exactly this key: only the caller's names are left
            session = prepared.session
            session.id, session.labels, session.max_steps = secrets.token_hex(8), dict(labels or {}), max_steps or self.settings.max_actions
            session.touch()
            timings.primed = timings.warm = True
            timings.context_s = clock.lap()
            self._register(session, timings)
            timings.total_s = clock.total()
            self._record_create(timings)
            self.primed.finished(key)
            return session, prepared.observation
        ready: ReadyContext | None = None
        try:
            # a warm context (opened ahead, never used by anyone) when one is ready, else a cold one
            ready = self.warm.take() or await open_context(self.pool, self.settings)
            while True:
                timings.warm = ready.warm
                session = self._session_on(ready, task, source, base_url, max_steps, labels, run_id)
                timings.context_s = clock.lap()
                try:
                    await self._setup_task(session, seed, run_id or "0", timings, clock)
                    break
                except PlaywrightError as exc:
                    if not ready.warm or await responsive(ready.page):
                        raise   # the context was fine: what failed is the site or the task's set-up
                    # a warm context can die while it waits (its renderer killed before the crash
                    # event arrived): the session starts again on a fresh context, never on it
                    log.warning("warm context failed its set-up: opening a fresh one", task=task.id,
                                error=str(exc).splitlines()[0])
                    stale, ready = ready, None
                    self.warm.discard(stale)
                    ready = await open_context(self.pool, self.settings)
        except BaseException as exc:
            if ready is not None:
                await close_quietly(ready.context)
                self.pool.release(ready.slot)
            self._slots.release()
            if isinstance(exc, PlaywrightError):
                metrics.ENV_FAILURES.labels("setup").inc()
                raise Unavailable(f"could not set up task {task.id} at {base_url}: {str(exc).splitlines()[0]}") from exc
            raise
        self._register(session, timings)
        try:
            observation = await self._observe(session, options)
        except BaseException as exc:
            # The caller never learns the id (its deadline expired and the call was cancelled, or the
            # first observation failed): close now instead of holding the slot until the idle TTL.
            await asyncio.shield(self.close_session(session.id, reason="abandoned"))
            if isinstance(exc, PlaywrightError):   # the browser died under the new session: an env failure
                metrics.ENV_FAILURES.labels("setup").inc()
                raise Unavailable(f"could not observe the new session of task {task.id}: {str(exc).splitlines()[0]}") from exc
            raise
        timings.observe_s = clock.lap()
        timings.total_s = clock.total()
        self._record_create(timings)
        self.primed.finished(key)
        return session, observation

    def prime(self, task_id: str, seed: int, source: Source | None, run_id: str, options: ObserveOptions,
              count: int, ttl_s: float) -> int:
        """PrimeSessions: prepare `count` sessions of this key ahead (see PrimedSessions.hint); returns
        how many were accepted. An unknown task is NotFound and a refused source FailedPrecondition,
        as the create would say."""
        task = self.registry.get(task_id)
        source, _ = self._resolve_source(task, source)
        return self.primed.hint(SessionKey(task.id, seed, source, run_id, options), count, ttl_s)

    async def _claim_free_slot(self) -> bool:
        """A session slot for a primed session, only when one is free and no create waits for one."""
        try:
            await acquire_within(self._slots, 0)
        except TimeoutError:
            return False
        return True

    def _session_on(self, ready: ReadyContext, task: TaskSpec, source: Source, base_url: str, max_steps: int,
                    labels: dict[str, str] | None, run_id: str) -> Session:
        """A session on a ready context, its URL policy and fault watcher in place (no page work yet)."""
        policy = UrlPolicy.for_site(base_url, guard=self.settings.guard_grader)
        ready.guard.policy = policy
        faults = FaultWatcher(ready.context, policy, site_prefix=base_url if source is Source.REPLICA else "")
        session = Session(
            id=secrets.token_hex(8), task=task, source=source, base_url=base_url, slot=ready.slot,
            context=ready.context, page=ready.page, policy=policy, guard=ready.guard, faults=faults,
            max_steps=max_steps or self.settings.max_actions, labels=dict(labels or {}), run_id=run_id,
        )
        self._watch(session)
        return session

    def _register(self, session: Session, timings: CreateTimings) -> None:
        self._sessions[session.id] = session
        self.created += 1
        self.created_warm += timings.warm   # counted with `created` (a take whose set-up failed is no session)
        self.created_primed += timings.primed
        metrics.SESSIONS_CREATED.labels(session.task.site).inc()
        metrics.SESSIONS_ACTIVE.set(self.active)
        log.info("session created", session=session.id, task=session.task.id, source=session.source.value,
                 primed=timings.primed, **session.labels)

    async def _prepare(self, key: SessionKey) -> Prepared:
        """A session for `key` set up ahead, exactly as a create would (PrimedSessions): its own
        context, /config with the key's seed and run, the start page, the first observation."""
        task = self.registry.get(key.task_id)
        _, base_url = self._resolve_source(task, key.source)
        ready = await open_context(self.pool, self.settings)
        session = self._session_on(ready, task, key.source, base_url, 0, None, key.run_id)
        session.id = ""   # named when a create takes it
        try:
            await self._setup_task(session, key.seed, key.run_id or "0", CreateTimings(), Lap())
            observation = await self._observe(session, key.options)
        except BaseException:
            await asyncio.shield(self._dispose(session))
            raise
        return Prepared(key, session, observation)

    async def _dispose(self, session: Session) -> None:
        """Close a session's context, after asking its replica to forget its state (a primed session
        nobody took, or a closed one)."""
        try:
            if session.source is Source.REPLICA and session.slot.alive:
                await session.context.request.post(f"{self.settings.sites_url.rstrip('/')}/__halo/forget", timeout=2000)
        except Exception:
            pass  # the site forgetting this context is an optimisation, never a reason to fail a close
        try:
            await session.context.close()
        except Exception:
            pass
        self.pool.release(session.slot)

    def _record_create(self, timings: CreateTimings) -> None:
        self.create_timings.append(timings)
        for phase in CreateTimings.PHASES:
            metrics.CREATE_PHASE_SECONDS.labels(phase).observe(getattr(timings, f"{phase}_s"))
        metrics.CREATE_SECONDS.labels("warm" if timings.warm else "cold").observe(timings.total_s)

    def _watch(self, session: Session) -> None:
        def on_page(page: Page) -> None:  # a link with target=_blank: the new tab becomes active
            session.page = page
            page.on("crash", lambda _p: self._mark_failed(session, "page crashed"))

        session.context.on("page", on_page)
        session.page.on("crash", lambda _p: self._mark_failed(session, "page crashed"))

    def _mark_failed(self, session: Session, reason: str) -> None:
        if not session.env_failure:
            session.env_failure = reason

    async def _setup_task(self, session: Session, seed: int, run_id: str, timings: CreateTimings, clock: Lap) -> None:
        """REAL's task setup: /config for this task (fresh state for this context), then the start page."""
        task_ref = f"v2.{session.task.id}" if session.task.suite == "real-v2" else session.task.id
        config_url = f"{session.base_url}/config?run_id={run_id}&task_id={task_ref}&latency=0&seed={seed}"
        if session.source is Source.REPLICA:
            response = await session.context.request.get(config_url, timeout=self.settings.navigation_timeout_ms)
            if not response.ok:
                raise PlaywrightError(f"/config answered HTTP {response.status}: {(await response.text())[:200]}")
            # the task and epoch of the state /config just made: every later page must be served from it
            session.faults.expected_state = response.headers.get(STATE_HEADER, "")
        else:
            # REAL's hosted sites are configured by visiting /config: the env's own visit, not the agent's
            session.guard.env_visit = True
            try:
                await session.page.goto(config_url, timeout=self.settings.navigation_timeout_ms)
            finally:
                session.guard.env_visit = False
        timings.config_s = clock.lap()
        await session.page.goto(session.base_url, timeout=self.settings.navigation_timeout_ms)
        if session.faults.fault:
            raise PlaywrightError(session.faults.fault)
        timings.navigate_s = clock.lap()

    def _check_alive(self, session: Session) -> None:
        if not session.slot.alive and not session.env_failure:
            session.env_failure = "browser process died"

    async def _fail(self, session: Session, reason: str) -> StepOutcome:
        self.env_failures += 1
        metrics.ENV_FAILURES.labels(_reason_label(reason)).inc()
        log.warning("environment failure", session=session.id, task=session.task.id, reason=reason)
        await self.close_session(session.id, reason="env_failure")
        return StepOutcome(None, False, "", True, Termination.ENV_FAILURE, True, reason)

    async def step(self, session_id: str, action: A.Action, options: ObserveOptions = ObserveOptions(),
                   include_state: bool = False) -> StepOutcome:
        """Execute `action` and observe; with `include_state`, also read a replica's state JSON (what the
        reward service scores each transition on), so a client needs no GetState per step.

        An action outside its bounds (halo.agent.bounds) is InvalidArgument before anything runs: the
        step is not taken and the session stays as it was. So an action that runs out of time (an
        environment failure) always had inputs within bounds, which finish far inside the timeouts."""
        try:
            bounds.check(action)
        except bounds.ActionOutOfBounds as exc:
            raise InvalidArgument(str(exc)) from None
        session = self.get(session_id)
        async with session.lock:
            session.touch()
            self._check_alive(session)
            if session.env_failure:
                return await self._fail(session, session.env_failure)
            if session.done:
                raise FailedPrecondition(f"episode of session {session_id} is over ({session.termination.value}); create a new session")
            kind = A.kind_of(action)
            started = time.perf_counter()
            timings = StepTimings()
            error = ""
            session.faults.reset()
            budget_s = self.limits.step_budget_for(action)
            deadline = asyncio.get_running_loop().time() + budget_s
            try:
                async with asyncio.timeout_at(deadline):
                    await execute(session.page, action, session.policy, self.limits, timings)
            except ActionFailed as exc:
                error = bounded(str(exc))   # errors quote the action's input: the reply must not grow with it
            except (ActionStalled, PlaywrightError, TimeoutError) as exc:
                return await self._fail(session, self._page_fault(session, exc, kind, budget_s, "action", "browser error"))
            self._check_alive(session)
            fault = session.env_failure or self._infrastructure_fault(session)
            if fault:
                return await self._fail(session, fault)
            if session.faults.refused and not error:
                error = session.faults.refused   # a link or form to a refused place: the agent's doing
            action_s = time.perf_counter() - started
            session.step_index += 1
            session.last_error = error
            termination = Termination.NONE
            if error:
                pass   # a failed action ends nothing
            elif isinstance(action, A.SendMessage):
                session.final_message, termination = action.text, Termination.MESSAGE_SENT
            elif isinstance(action, A.ReportInfeasible):
                session.final_message, termination = action.reason, Termination.INFEASIBLE
            if session.step_index >= session.max_steps and termination is Termination.NONE:
                termination = Termination.MAX_STEPS
            if termination is not Termination.NONE:
                session.done, session.termination = True, termination
            # the state is read while the page is observed: both read what the settled action left
            # (its requests have reached the server), and neither changes what the other reads
            state_read = asyncio.ensure_future(self._timed_state(session, timings)) if include_state else None
            try:
                try:
                    async with asyncio.timeout_at(deadline):
                        obs = await self._observe(session, options, timings)
                except (PlaywrightError, TimeoutError) as exc:
                    return await self._fail(session, self._page_fault(session, exc, kind, budget_s, "observation", "observation failed"))
                state_json = ""
                if state_read is not None:
                    try:
                        state_json = await state_read
                    except Unavailable as exc:   # the grader's state is unreadable: the environment failed
                        return await self._fail(session, session.env_failure or f"state: {str(exc).splitlines()[0]}")
            finally:
                if state_read is not None and not state_read.done():
                    state_read.cancel()   # the step failed before it needed the state
            outcome = "ok" if not error else "error"
            timings.total_s = time.perf_counter() - started
            self._record_step(timings)
            metrics.STEPS.labels(session.task.site, kind, outcome).inc()
            metrics.STEP_SECONDS.labels(kind).observe(timings.total_s)
            return StepOutcome(obs, not error, error, session.done, termination, action_s=action_s, observe_s=obs.duration_s,
                               state_json=state_json, final_message=session.final_message if session.done else "",
                               timings=timings)

    async def _timed_state(self, session: Session, timings: StepTimings) -> str:
        clock = Lap()
        try:
            return await self._replica_state(session)
        finally:
            timings.state_s = clock.total()

    def _record_step(self, timings: StepTimings) -> None:
        self.step_timings.append(timings)
        for phase in StepTimings.PHASES[:-1]:
            metrics.STEP_PHASE_SECONDS.labels(phase).observe(getattr(timings, f"{phase}_s"))

    def _page_fault(self, session: Session, exc: Exception, kind: str, budget_s: float, phase: str, what: str) -> str:
        """Why a step's `phase` failed the environment: its browser died, its page outlasted the
        step budget (TimeoutError: the renderer is wedged), its action stalled (ActionStalled says how),
        or Playwright's own error (`what`: ...)."""
        self._check_alive(session)
        if session.env_failure:
            return session.env_failure
        if isinstance(exc, ActionStalled):
            return str(exc)
        if isinstance(exc, TimeoutError):
            return (f"the page did not answer: the {kind} step's {phase} outlasted the step budget of "
                    f"{budget_s:g}s (its renderer is wedged)")
        return f"{what}: {str(exc).splitlines()[0]}"

    def _infrastructure_fault(self, session: Session) -> str:
        """Why the environment, not the agent, failed this action ("" when it did not)."""
        if session.faults.fault:
            return session.faults.fault
        if session.page.url.startswith("chrome-error://") and not session.faults.error_page_is_refusal:
            return f"the page is the browser's error page ({session.page.url}): the site did not answer"
        return ""

    async def _observe(self, session: Session, options: ObserveOptions, timings: StepTimings | None = None) -> PageObservation:
        obs = await observe(session.page, options, session.tabs(), timings=timings)
        obs.last_action_error = session.last_error
        obs.step_index = session.step_index
        obs.goal = session.task.goal
        metrics.OBSERVE_SECONDS.observe(obs.duration_s)
        return obs

    async def _observe_or_unavailable(self, session: Session, options: ObserveOptions) -> PageObservation:
        """An observation outside Step: a page that cannot be read is UNAVAILABLE (retryable), not UNKNOWN."""
        try:
            return await self._observe(session, options)
        except PlaywrightError as exc:
            self._check_alive(session)
            raise Unavailable(f"could not observe session {session.id}: {str(exc).splitlines()[0]}") from exc

    async def observation(self, session_id: str, options: ObserveOptions = ObserveOptions()) -> PageObservation:
        session = self.get(session_id)
        async with session.lock:
            session.touch()
            self._check_alive(session)
            if session.env_failure:
                await self._fail(session, session.env_failure)
                raise Unavailable(f"session {session_id} lost its browser ({session.env_failure}); it was closed")
            return await self._observe_or_unavailable(session, options)

    async def state(self, session_id: str) -> SessionState:
        session = self.get(session_id)
        async with session.lock:
            session.touch()
            try:
                state_json = await self._fetch_finish(session)
            except PlaywrightError as exc:
                raise Unavailable(f"cannot read the site's /finish state: {str(exc).splitlines()[0]}") from exc
            return SessionState(
                state_json, session.final_message, session.done, session.termination, session.step_index,
                session.task.id, session.source,
            )

    async def replica_state(self, session_id: str) -> str:
        """The state JSON of a replica session, "" on a remote site (CreateSession's include_state)."""
        session = self.get(session_id)
        async with session.lock:
            session.touch()
            return await self._replica_state(session)

    async def _replica_state(self, session: Session) -> str:
        """The state JSON of a replica session ("" on a remote site: its /finish is a page to load, GetState's job)."""
        if session.source is not Source.REPLICA:
            return ""
        try:
            return await self._fetch_finish(session)
        except PlaywrightError as exc:
            raise Unavailable(f"cannot read the site's /finish state: {str(exc).splitlines()[0]}") from exc

    async def _fetch_finish(self, session: Session) -> str:
        finish_url = f"{session.base_url}/finish"
        if session.source is Source.REPLICA:
            response = await self._get_once_more_on_reset(session, finish_url)
            if not response.ok:
                raise Unavailable(f"the site answered HTTP {response.status} for /finish")
            body = await response.text()
            problem = state_mismatch(session.faults.expected_state, response.headers.get(STATE_HEADER), session.task.site)
            if problem:
                self._mark_failed(session, problem)
                raise Unavailable(f"session {session.id}: {problem} (an environment failure, not a task outcome)")
        else:  # remote sites render /finish client-side: read it in a background tab, like agisdk
            page = await session.context.new_page()
            try:
                await page.goto(finish_url, timeout=self.settings.navigation_timeout_ms)
                body = await page.content()
            finally:
                await page.close()
        match = _PRE.search(body)
        if match is None:
            raise Unavailable(f"{finish_url} has no <pre> state block")
        text = html.unescape(match.group(1))
        json.loads(text)  # validate: a broken state is an env failure, not silently passed on
        return text

    async def _get_once_more_on_reset(self, session: Session, url: str):
        """GET `url` in the session's context; asked once more when the connection was reset. The
        request context keeps connections alive, and one the sites server has just closed as idle
        fails with ECONNRESET before the server read the request: a race of the transport, not a
        fault of the replica. A GET of /finish only reads, so asking again on a new connection is
        safe; a server that is really away fails the second time too, and that stays an
        environment failure."""
        try:
            return await session.context.request.get(url, timeout=self.settings.navigation_timeout_ms)
        except PlaywrightError as exc:
            if not any(sign in str(exc) for sign in _CONNECTION_RESET):
                raise
            return await session.context.request.get(url, timeout=self.settings.navigation_timeout_ms)

    async def snapshot(self, session_id: str) -> tuple[str, SnapshotRecord]:
        session = self.get(session_id)
        async with session.lock:
            session.touch()
            self._require_replica(session, "snapshot")
            response = await session.context.request.post(f"{session.base_url}/__halo/snapshot")
            if not response.ok:
                raise Unavailable(f"site snapshot failed: HTTP {response.status}")
            record = SnapshotRecord((await response.json())["snapshot_id"], session.page.url, session.step_index)
            snapshot_id = secrets.token_hex(6)
            session.snapshots[snapshot_id] = record
            return snapshot_id, record

    async def restore(self, session_id: str, snapshot_id: str, options: ObserveOptions = ObserveOptions()) -> PageObservation:
        session = self.get(session_id)
        async with session.lock:
            session.touch()
            self._require_replica(session, "restore")
            record = session.snapshots.get(snapshot_id)
            if record is None:
                raise NotFound(f"unknown snapshot {quoted(snapshot_id)} for session {session_id}")
            response = await session.context.request.post(
                f"{session.base_url}/__halo/restore?snapshot_id={record.site_snapshot_id}"
            )
            if not response.ok:
                raise Unavailable(f"site restore failed: HTTP {response.status}")
            try:
                await session.page.goto(record.url, timeout=self.settings.navigation_timeout_ms)
            except PlaywrightError as exc:
                self._check_alive(session)
                raise Unavailable(f"restore could not load {record.url}: {str(exc).splitlines()[0]}") from exc
            session.step_index = record.step_index
            session.done, session.termination, session.final_message, session.last_error = False, Termination.NONE, "", ""
            return await self._observe_or_unavailable(session, options)

    def _require_replica(self, session: Session, what: str) -> None:
        if session.source is not Source.REPLICA:
            raise FailedPrecondition(f"{what} needs a local replica; session {session.id} runs on the remote site")

    async def close_session(self, session_id: str, reason: str = "client") -> bool:
        session = self._sessions.pop(session_id, None)
        if session is None:
            return False
        await self._dispose(session)
        self._slots.release()
        metrics.SESSIONS_CLOSED.labels(reason).inc()
        metrics.SESSIONS_ACTIVE.set(self.active)
        log.info("session closed", session=session_id, reason=reason)
        return True

    def list_sessions(self, run_id: str = "", labels: dict[str, str] | None = None) -> list[Session]:
        """Open sessions of a run and/or carrying all of `labels`, oldest first."""
        wanted = (labels or {}).items()
        return [
            s for s in self._sessions.values()
            if (not run_id or s.run_id == run_id) and all(s.labels.get(k) == v for k, v in wanted)
        ]

    def keep_alive(self, session_ids: list[str]) -> int:
        """Restart the idle TTL of these sessions; returns how many are open."""
        alive = 0
        for session_id in session_ids:
            session = self._sessions.get(session_id)
            if session is not None:
                session.touch()
                alive += 1
        return alive

    def stats(self) -> dict[str, int]:
        metrics.BROWSER_RESTARTS.set(self.pool.restarts)
        return {
            "capacity": self.settings.pool_size, "active_sessions": self.active,
            "browsers": self.pool.alive_browsers, "sessions_created": self.created,
            "sessions_reaped": self.reaped, "browser_restarts": self.pool.restarts,
            "env_failures": self.env_failures, "warm_contexts": self.warm.ready,
            "warm_starts": self.created_warm, "cold_starts": self.created - self.created_warm,
            "primed_sessions": self.primed.ready, "primed_starts": self.created_primed,
            "primed_unclaimed": self.primed.disposed,
        }


def _reason_label(reason: str) -> str:
    return "browser_died" if "died" in reason or "crash" in reason else "browser_error"


def _executable(settings: EnvSettings) -> str | None:
    return find_chromium(settings.chromium_path)
