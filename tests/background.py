"""Work the suite runs beside its tests, on the cores they leave idle (the replica sweep,
tests/sites/sweep_worker.py), and the tests that must have the machine to themselves meanwhile.

A background job runs detached from pytest (nobody's child here, so tests counting the Chromium
processes under pytest never see its) but in pytest's session, under SCHED_IDLE: it yields to
every other task of the same scheduling group. Containers run in cgroups of their own, where
that rule does not reach, so tests that run containers hold `quiet()`: the job is stopped
(SIGSTOP, its whole process tree) meanwhile and continued after.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psutil

from halo.cli.processes import end_group

#: The background job running now, if any (one pytest process at a time).
_running: "BackgroundJob | None" = None


@dataclass
class BackgroundJob:
    pid: int
    log: Path
    paused: int = 0     # nested quiet() holders

    def alive(self) -> bool:
        try:
            return psutil.Process(self.pid).status() != psutil.STATUS_ZOMBIE
        except psutil.Error:
            return False

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:]) if self.log.exists() else "(no log)"

    def _signal_tree(self, sig: int) -> None:
        try:
            procs = [psutil.Process(self.pid), *psutil.Process(self.pid).children(recursive=True)]
        except psutil.Error:
            return
        for proc in procs:
            try:
                proc.send_signal(sig)
            except psutil.Error:
                continue

    def pause(self) -> None:
        self.paused += 1
        if self.paused == 1:
            self._signal_tree(signal.SIGSTOP)

    def resume(self) -> None:
        self.paused = max(0, self.paused - 1)
        if self.paused == 0:
            self._signal_tree(signal.SIGCONT)

    def stop(self) -> None:
        """End the job and everything it started (continued first, should it be stopped)."""
        global _running
        self._signal_tree(signal.SIGCONT)
        if self.alive():
            end_group(self.pid, grace_s=10)
        if _running is self:
            _running = None


def start(argv: list[str], cwd: Path, log: Path) -> BackgroundJob:
    """`argv` in a process group of its own, detached: a launcher starts it and exits, so it is not
    pytest's child. Not in a session of its own: with autogroup scheduling (Linux's default for
    desktops and these machines) a new session is a new scheduling group with a fair share of the
    CPU against pytest's, whatever SCHED_IDLE says inside it."""
    global _running
    launcher = ("import subprocess, sys; "
                "p = subprocess.Popen(sys.argv[2:], process_group=0, stdin=subprocess.DEVNULL, "
                "stdout=open(sys.argv[1], 'wb'), stderr=subprocess.STDOUT); print(p.pid)")
    out = subprocess.run([sys.executable, "-c", launcher, str(log), *argv], cwd=cwd, capture_output=True, text=True,
                         check=True)
    _running = BackgroundJob(int(out.stdout.strip()), log)
    return _running


@contextmanager
def quiet() -> Iterator[None]:
    """The background job (if one runs) stopped for the duration: for tests that run containers."""
    job = _running
    if job is None or not job.alive():
        yield
        return
    job.pause()
    try:
        yield
    finally:
        job.resume()


def lowest_priority() -> None:
    """SCHED_IDLE for the calling process and everything it starts."""
    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))


def wait_for(path: Path, job: BackgroundJob, timeout_s: float, what: str) -> None:
    """Until `path` exists; AssertionError with the job's log when it ends without it or time runs out."""
    deadline = time.monotonic() + timeout_s
    while not path.exists():
        if not job.alive() and not path.exists():
            raise AssertionError(f"{what} (pid {job.pid}) ended without its result; its log ends:\n{job.log_tail()}")
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} is not done after {timeout_s:g} s; its log ends:\n{job.log_tail()}")
        time.sleep(0.5)
