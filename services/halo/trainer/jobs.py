"""Runs as jobs: start, watch, stop, resume; they outlive the client that started them.

Each run is an asyncio task executing a trainer (`halo.trainers.*`) with a `HostedRun` as its
RunContext. Progress is durable (store.py): when the service dies mid-run, the run is marked
INTERRUPTED on the next start and — by default — resumed from its last checkpoint.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import secrets
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from halo.errors import AlreadyExists, FailedPrecondition, InvalidArgument, NotFound
from halo.runtime.logging import get_logger
from halo.trainer import metrics
from halo.trainer.store import RunRecord, RunState, RunStore, checkpoint_name
from halo.runs.context import SaveFn, ServiceTargets, Trainer
from halo.runs.spec import RunSpec

log = get_logger("halo.trainer.jobs")

TrainerResolver = Callable[[RunSpec], Trainer]

# Run ids name folders under runs_dir: nothing that could leave it (separators, "..") or that the
# file system refuses (NUL, over-long names).
_RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def check_run_id(run_id: str) -> str:
    if not run_id:
        raise InvalidArgument("run_id is required")
    if not _RUN_ID.fullmatch(run_id):
        shown = run_id if len(run_id) <= 60 else run_id[:60] + "..."
        raise InvalidArgument(f"{shown!r} is not a run id (letters, digits, '.', '_' and '-', at most 128)")
    return run_id


@dataclass(eq=False)
class HostedRun:
    """The RunContext a trainer sees; also the live state the manager keeps for watchers."""

    manager: "JobManager"
    record: RunRecord
    services: ServiceTargets
    start_step: int = 0
    last_checkpoint: Path | None = None
    stop_flag: bool = False
    changed: asyncio.Condition = field(default_factory=asyncio.Condition)
    task: asyncio.Task | None = None

    @property
    def run_id(self) -> str:
        return self.record.run_id

    @property
    def spec(self) -> RunSpec:
        return self.record.spec

    @property
    def run_dir(self) -> Path:
        return self.manager.store.run_dir(self.run_id)

    def stop_requested(self) -> bool:
        return self.stop_flag

    async def complete_step(self, step: int, metrics_values: dict[str, float], save: SaveFn) -> None:
        if step != self.record.step + 1:
            raise RuntimeError(f"run {self.run_id}: step {step} reported after step {self.record.step}")
        store = self.manager.store
        if step % self.spec.checkpoint_every == 0 or step == self.spec.total_steps:
            ckpt = await asyncio.to_thread(store.write_checkpoint, self.run_id, step, metrics_values, save)
            self.record.last_checkpoint_id = ckpt.checkpoint_id
            await self.manager.emit(self, "checkpoint", checkpoint_id=ckpt.checkpoint_id, step=step, path=ckpt.path, metrics=metrics_values)
        store.append_metrics(self.run_id, step, metrics_values)
        self.record.step = step
        self.record.last_metrics = dict(metrics_values)
        store.save(self.record)
        metrics.observe_step(self.run_id, step, metrics_values)
        await self.manager.emit(self, "metrics", step=step, values=metrics_values)

    def log(self, message: str, level: str = "info") -> None:
        asyncio.get_running_loop().create_task(self.manager.emit(self, "log", level=level, message=message))


class JobManager:
    def __init__(self, runs_dir: Path, services: ServiceTargets, resolve_trainer: TrainerResolver, auto_resume: bool = True) -> None:
        self.store = RunStore(runs_dir)
        self.services = services
        self.resolve_trainer = resolve_trainer
        self.auto_resume = auto_resume
        self._runs: dict[str, HostedRun] = {}
        self._sequence: dict[str, int] = {}
        self._shutting_down = False

    # --- lifecycle ----------------------------------------------------------------------

    async def start(self) -> None:
        """Recover runs the last process left running: INTERRUPTED, then resumed if configured."""
        for record in self.store.all():
            self._sequence[record.run_id] = len(self.store.events(record.run_id))
            if record.state.active:
                await self._set_state(self._hosted(record), RunState.INTERRUPTED, "the trainer service stopped while this run was active")
            if record.state is RunState.INTERRUPTED and self.auto_resume:
                await self.resume(record.run_id)

    async def close(self) -> None:
        """Graceful: ask every run to stop after its current step, wait for them."""
        self._shutting_down = True
        running = self._running()
        for run in running:
            run.stop_flag = True
        for run in running:
            try:
                await asyncio.wait_for(asyncio.shield(run.task), timeout=30)
            except (TimeoutError, asyncio.CancelledError):
                run.task.cancel()

    async def abort(self) -> None:
        """At once (Ctrl-C on a local run): cancel every run mid-step. Each ends INTERRUPTED and
        resumes from its last checkpoint; the step in flight is lost, no completed one."""
        self._shutting_down = True
        running = self._running()
        for run in running:
            run.task.cancel()
        await asyncio.gather(*(run.task for run in running), return_exceptions=True)

    def _running(self) -> list[HostedRun]:
        return [r for r in self._runs.values() if r.task and not r.task.done()]

    # --- runs -----------------------------------------------------------------------------

    def _hosted(self, record: RunRecord) -> HostedRun:
        run = self._runs.get(record.run_id)
        if run is None:
            run = HostedRun(self, record, self.services)
            self._runs[record.run_id] = run
        return run

    def get(self, run_id: str) -> RunRecord:
        check_run_id(run_id)
        run = self._runs.get(run_id)
        if run is not None:
            return run.record
        record = self.store.load(run_id)
        if record is None:
            raise NotFound(f"unknown run {run_id!r}")
        return record

    def list(self, kind: str = "", limit: int = 0) -> list[RunRecord]:
        records = {r.run_id: r for r in self.store.all()}
        records.update({r.run_id: r.record for r in self._runs.values()})
        found = sorted((r for r in records.values() if not kind or r.spec.kind == kind), key=lambda r: r.created_at, reverse=True)
        return found[:limit] if limit else found

    async def start_run(self, spec: RunSpec) -> RunRecord:
        try:
            spec.validate()
            self.resolve_trainer(spec)
        except ValueError as exc:
            raise InvalidArgument(str(exc)) from exc
        if spec.name and any(r.spec.name == spec.name for r in self.list()):
            raise AlreadyExists(f"a run named {spec.name!r} exists")
        run_id = f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"
        spec.name = spec.name or f"{spec.kind}-{run_id}"
        record = RunRecord(run_id=run_id, spec=spec, output_dir=str(self.store.run_dir(run_id)))
        self.store.save(record)
        self._sequence[run_id] = 0
        run = self._hosted(record)
        await self._launch(run)
        return record

    async def resume(self, run_id: str, total_steps: int = 0) -> RunRecord:
        """Continue a stopped, failed or interrupted run from its last checkpoint with its stored
        spec; `total_steps` > 0 sets how many steps it runs in all (extending a finished run)."""
        record = self.get(run_id)
        run = self._hosted(record)
        if run.task is not None and not run.task.done():
            raise FailedPrecondition(f"run {run_id} is {record.state.value}; only stopped, failed or interrupted runs resume")
        if total_steps and total_steps < record.step:
            raise InvalidArgument(f"total_steps {total_steps} is below the {record.step} steps run {run_id} has completed")
        if record.state is RunState.SUCCEEDED and total_steps <= record.spec.total_steps:
            raise FailedPrecondition(f"run {run_id} already finished all {record.spec.total_steps} steps "
                                     "(give more steps to extend it)")
        if total_steps and total_steps != record.spec.total_steps:
            record.spec.total_steps = total_steps
            self.store.save(record)
        await self._launch(run, resumed=True)
        return run.record

    async def stop(self, run_id: str) -> RunRecord:
        record = self.get(run_id)
        run = self._runs.get(run_id)
        if run is None or run.task is None or run.task.done():
            raise FailedPrecondition(f"run {run_id} is not running ({record.state.value})")
        run.stop_flag = True
        await self._set_state(run, RunState.STOPPING, "stop requested: finishing the current step")
        return run.record

    async def _launch(self, run: HostedRun, resumed: bool = False) -> None:
        checkpoints = self.store.checkpoints(run.run_id)
        last = checkpoints[-1] if checkpoints else None
        run.start_step = last.step if last else 0
        run.last_checkpoint = Path(last.path) if last else None
        run.record.step = run.start_step
        run.record.last_checkpoint_id = last.checkpoint_id if last else ""
        self.store.truncate_metrics(run.run_id, run.start_step)
        run.stop_flag = False
        trainer = self.resolve_trainer(run.spec)
        verb = f"resuming from {checkpoint_name(run.start_step)}" if last else "starting"
        await self._set_state(run, RunState.RUNNING, verb)
        run.task = asyncio.get_running_loop().create_task(self._execute(run, trainer, resumed))

    async def _close_leftovers(self, run: HostedRun) -> None:
        """A resumed run first closes the env sessions its previous life left open (a killed
        trainer service never closed them): they would hold the pool until their idle TTL."""
        from halo.client.env import EnvClient   # the SDK's typed client: the env is reached over gRPC

        try:
            async with EnvClient(self.services.env, token=self.services.token, tls_ca=self.services.tls_ca,
                                 timeout_s=10) as env:
                closed = await env.close_run_sessions(run.run_id)
        except Exception as exc:   # the env service away: the sessions die with its idle TTL
            log.warning("could not close the run's leftover env sessions", run=run.run_id, error=str(exc))
            return
        if closed:
            run.log(f"closed {closed} env session(s) left open by this run's previous life")

    async def _execute(self, run: HostedRun, trainer: Trainer, resumed: bool = False) -> None:
        try:
            if resumed:
                await self._close_leftovers(run)
            await trainer(run)
        except asyncio.CancelledError:
            await self._set_state(run, RunState.INTERRUPTED, "cancelled")
            raise
        except Exception as exc:  # a failing run must never take the service down
            log.exception("run failed", run=run.run_id)
            run.record.error = f"{type(exc).__name__}: {exc}"
            await self._set_state(run, RunState.FAILED, run.record.error)
            return
        if run.record.step >= run.spec.total_steps:
            await self._set_state(run, RunState.SUCCEEDED, f"finished {run.record.step} steps")
        elif self._shutting_down:  # not the user's stop: the next service start resumes it
            await self._set_state(run, RunState.INTERRUPTED, f"service shut down after step {run.record.step}")
        else:
            await self._set_state(run, RunState.STOPPED, f"stopped after step {run.record.step}")

    # --- events ---------------------------------------------------------------------------

    async def _set_state(self, run: HostedRun, state: RunState, message: str) -> None:
        run.record.state = state
        self.store.save(run.record)
        metrics.RUN_STATE.labels(run.run_id).set(list(RunState).index(state))
        await self.emit(run, "state", state=state.value, message=message)

    async def emit(self, run: HostedRun, kind: str, **payload: Any) -> None:
        sequence = self._sequence.get(run.run_id, 0) + 1
        self._sequence[run.run_id] = sequence
        event = {"sequence": sequence, "time": time.time(), "type": kind, **payload}
        self.store.append_event(run.run_id, event)
        async with run.changed:
            run.changed.notify_all()

    async def watch(self, run_id: str, after_sequence: int = 0) -> AsyncIterator[dict[str, Any]]:
        """Past events after `after_sequence`, then live ones, until the run is no longer active."""
        record = self.get(run_id)
        run = self._hosted(record)
        sent = after_sequence
        while True:
            fresh = [e for e in self.store.events(run_id) if e["sequence"] > sent]
            for event in fresh:
                sent = event["sequence"]
                yield event
            if not run.record.state.active and (run.task is None or run.task.done()):
                if not [e for e in self.store.events(run_id) if e["sequence"] > sent]:
                    return
                continue
            async with run.changed:
                # asyncio.timeout, not wait_for: a cancelled watch must not be swallowed (see halo.runtime.aio)
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(5.0):
                        await run.changed.wait()

    def checkpoints(self, run_id: str):
        self.get(run_id)
        return self.store.checkpoints(run_id)
