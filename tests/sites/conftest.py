"""One verification sweep for every replica module: all REAL v2 replica tasks (oracle, no-op, and the
wrong attempts `replica_checks.wrong_swept_tasks` picks; every one with HALO_REPLICA_SWEEP=full) run
once, through an env service, with one limit on open sessions.

The sweep starts as soon as the tests are collected, in a process of its own at the lowest CPU
priority (sweep_worker.py): it runs on the cores the earlier tests leave idle, and the replica
modules' `replica_rows` waits for what is left of it (tests/background.py: detached, and stopped
while tests run containers).

One sweep for all modules, not one per site: a module per site with its own concurrency could ask
for more sessions than the pool holds (and wait on RESOURCE_EXHAUSTED), and would end on a tail
of one slow task with the browsers idle. One sweep keeps `SWEEP_SESSIONS` sessions busy from the
first task to the last.
"""

from __future__ import annotations

import pickle
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from halo.cli.verify import VerifyRow
from tests import background
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


_SWEEP = pytest.StashKey[tuple[background.BackgroundJob, Path]]()


def pytest_collection_finish(session):
    """Start the sweep as soon as a collected test needs it."""
    if any("replica_rows" in getattr(item, "fixturenames", ()) for item in session.items):
        folder = Path(tempfile.mkdtemp(prefix="halo-replica-sweep-"))
        job = background.start([sys.executable, "-m", "tests.sites.sweep_worker", str(folder / "rows.pickle")],
                               session.config.rootpath, folder / "sweep.log")
        session.config.stash[_SWEEP] = (job, folder)


def pytest_sessionfinish(session):
    """End the sweep if it still runs (an interrupted session); its folder goes unless it failed."""
    job, folder = session.config.stash.get(_SWEEP, (None, None))
    if job is not None:
        job.stop()
        if (folder / "rows.pickle").exists():
            shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def replica_rows(request) -> dict[str, VerifyRow]:
    """Every REAL v2 replica task verified once, keyed by task id (from the background sweep)."""
    job, folder = request.config.stash[_SWEEP]   # started at collection, since this test needs it
    rows = folder / "rows.pickle"
    try:
        background.wait_for(rows, job, SWEEP_TIMEOUT_S, "the replica sweep")
    except AssertionError as exc:
        pytest.fail(str(exc))
    return pickle.loads(rows.read_bytes())
