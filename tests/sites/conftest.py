"""One verification sweep for every replica module: all REAL v2 replica tasks (oracle, no-op, and the
wrong attempts `replica_checks.wrong_swept_tasks` picks; every one with HALO_REPLICA_SWEEP=full) run
once, through an env service, with one limit on open sessions.

The sweep starts as soon as the tests are collected, in a process of its own at the lowest CPU
priority (sweep_worker.py): it runs on the cores the earlier tests leave idle, and the replica
modules' `replica_rows` waits for what is left of it. The process is detached from this one, so
that tests counting the Chromium processes under pytest never see the sweep's.

One sweep for all modules, not one per site: a module per site with its own concurrency could ask
for more sessions than the pool holds (and wait on RESOURCE_EXHAUSTED), and would end on a tail
of one slow task with the browsers idle. One sweep keeps `SWEEP_SESSIONS` sessions busy from the
first task to the last.
"""

from __future__ import annotations

import pickle
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

from halo.cli.processes import end_group
from halo.cli.verify import VerifyRow
from tests.sites.replica_checks import FULL_SWEEP, wrong_swept_tasks

#: How long the first replica test waits for the sweep after it starts waiting (full: 121 tasks, ~310
#: sessions, ~2200 actions).
SWEEP_TIMEOUT_S = 3000


def pytest_report_header(config):
    scope = "every task's" if FULL_SWEEP else f"{len(wrong_swept_tasks())} tasks'"
    return (f"replica sweep: every task's oracle and no-op, {scope} wrong attempts"
            + ("" if FULL_SWEEP else " (HALO_REPLICA_SWEEP=full or make test-replicas: all)"))


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "replica_rows" in getattr(item, "fixturenames", ()) and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(SWEEP_TIMEOUT_S))


@dataclass
class BackgroundSweep:
    pid: int
    rows: Path
    log: Path
    folder: Path

    def alive(self) -> bool:
        try:
            return psutil.Process(self.pid).status() != psutil.STATUS_ZOMBIE
        except psutil.Error:
            return False

    def wait(self, timeout_s: float) -> dict[str, VerifyRow]:
        deadline = time.monotonic() + timeout_s
        while not self.rows.exists():
            if not self.alive():
                if self.rows.exists():
                    break
                pytest.fail(f"the replica sweep (pid {self.pid}) ended without its rows; its log ends:\n{self.log_tail()}")
            if time.monotonic() > deadline:
                pytest.fail(f"the replica sweep is not done after {timeout_s:g} s; its log ends:\n{self.log_tail()}")
            time.sleep(0.5)
        return pickle.loads(self.rows.read_bytes())

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:]) if self.log.exists() else "(no log)"

    def stop(self) -> None:
        """End the sweep if it still runs (an interrupted session); its folder goes unless it failed."""
        if self.alive():
            end_group(self.pid, grace_s=10)
        if self.rows.exists():
            shutil.rmtree(self.folder, ignore_errors=True)


_SWEEP = pytest.StashKey[BackgroundSweep]()


def start_sweep(rootdir: Path) -> BackgroundSweep:
    """sweep_worker.py in a new session, detached from pytest (a launcher starts it and exits, so
    that it is nobody's child here)."""
    folder = Path(tempfile.mkdtemp(prefix="halo-replica-sweep-"))
    rows, log = folder / "rows.pickle", folder / "sweep.log"
    launcher = ("import subprocess, sys; "
                "p = subprocess.Popen(sys.argv[2:], start_new_session=True, stdin=subprocess.DEVNULL, "
                "stdout=open(sys.argv[1], 'wb'), stderr=subprocess.STDOUT); print(p.pid)")
    out = subprocess.run([sys.executable, "-c", launcher, str(log), sys.executable, "-m", "tests.sites.sweep_worker", str(rows)],
                         cwd=rootdir, capture_output=True, text=True, check=True)
    return BackgroundSweep(int(out.stdout.strip()), rows, log, folder)


def pytest_collection_finish(session):
    if any("replica_rows" in getattr(item, "fixturenames", ()) for item in session.items):
        session.config.stash[_SWEEP] = start_sweep(session.config.rootpath)


def pytest_sessionfinish(session):
    sweep = session.config.stash.get(_SWEEP, None)
    if sweep is not None:
        sweep.stop()


@pytest.fixture(scope="session")
def replica_rows(request) -> dict[str, VerifyRow]:
    """Every REAL v2 replica task verified once, keyed by task id (from the background sweep)."""
    sweep = request.config.stash.get(_SWEEP, None)
    if sweep is None:   # collected without any test that needs it: cannot happen, but say so
        pytest.fail("the replica sweep was not started at collection")
    return sweep.wait(SWEEP_TIMEOUT_S)
