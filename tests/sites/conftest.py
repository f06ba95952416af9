"""One verification sweep for every replica module: all REAL v2 replica tasks (oracle, no-op, and the
wrong attempts `replica_checks.wrong_swept_tasks` picks; every one with HALO_REPLICA_SWEEP=full) run
once, through the session's env service, with one limit on open sessions.

One sweep for all modules, not one per site: a module per site with its own concurrency could ask
for more sessions than the pool holds (and wait on RESOURCE_EXHAUSTED), and would end on a tail
of one slow task with the browsers idle. One sweep keeps `SWEEP_SESSIONS` sessions busy from the
first task to the last.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from halo.cli.verify import VerifyRow
from halo.tasks.registry import default_registry
from tests.sites.replica_checks import FULL_SWEEP, verify_all, wrong_swept_tasks

#: Env sessions the sweep keeps open (the session pool holds 8; four leave each action its share of
#: the cores within the env's 3 s action timeout).
SWEEP_SESSIONS = 4
#: The whole sweep runs in the first verify test's setup (full: 121 tasks, ~310 sessions, ~2200 actions).
SWEEP_TIMEOUT_S = 3000


def pytest_report_header(config):
    scope = "every task's" if FULL_SWEEP else f"{len(wrong_swept_tasks())} tasks'"
    return (f"replica sweep: every task's oracle and no-op, {scope} wrong attempts"
            + ("" if FULL_SWEEP else " (HALO_REPLICA_SWEEP=full or make test-replicas: all)"))


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "replica_rows" in getattr(item, "fixturenames", ()) and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(SWEEP_TIMEOUT_S))


@pytest.fixture(scope="session")
async def replica_rows(env) -> dict[str, VerifyRow]:
    """Every REAL v2 replica task verified once, keyed by task id.

    A stranger's failed attempt lies in the temp dir meanwhile: agisdk writes state files there and
    some scripts (eval_omnizon_28.py) read every *.json / *.txt beside theirs. HALO's evaluator runs
    each script with its state file alone, so no score may change."""
    ids = [t.id for t in default_registry().list(suite="real-v2") if t.replica_available]
    decoy = Path(tempfile.gettempdir()) / "eval_stranger_attempt.txt"
    decoy.write_text("Order unsuccessful")
    try:
        return await verify_all(env, ids, sessions=SWEEP_SESSIONS)
    finally:
        decoy.unlink(missing_ok=True)
