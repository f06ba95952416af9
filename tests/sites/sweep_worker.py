"""The replica sweep in a process of its own, on the cores the rest of the suite leaves idle.

`python -m tests.sites.sweep_worker ROWS` verifies every REAL v2 replica task (`replica_checks.verify_all`:
oracle, no-op and the swept wrong attempts) through an env service and sites server of its own, and
writes the rows, pickled, to ROWS (atomically: a reader sees all of them or none).

The suite's own tests leave a quarter to a half of the two cores idle while they wait on image
builds, engine starts and subprocesses; the sweep is CPU work that no test waits on until the
replica modules run. This process therefore runs under SCHED_IDLE (inherited by its Chromium): it
gets the CPU only when nothing else wants it, so the tests beside it run as they would alone.
A starved step may then wait minutes for the CPU, which says nothing about a replica: this env
service's timeouts are set past any such wait (the 3 s action timeout and 30 s script timeout are
properties of the env and of agisdk, tested elsewhere, not of the replicas checked here).
"""

from __future__ import annotations

import asyncio
import os
import pickle
import sys
import tempfile
from pathlib import Path

from tests import background

#: Timeouts of this process's env service and scripts: past any wait for an idle core.
STARVED_TIMEOUT_S = 1800


async def sweep(rows_path: Path) -> None:
    from halo.cli.stack import LocalStack
    from halo.client.env import EnvClient
    from halo.reward import evaluator
    from halo.tasks.registry import default_registry
    from tests.sites.replica_checks import verify_all

    evaluator.SCRIPT_TIMEOUT_S = STARVED_TIMEOUT_S   # a starved script is slow, not failed (see the module docstring)
    overrides = {"pool_size": 8, "acquire_timeout_s": STARVED_TIMEOUT_S, "session_ttl_s": STARVED_TIMEOUT_S,
                 "action_timeout_ms": STARVED_TIMEOUT_S * 1000, "navigation_timeout_ms": STARVED_TIMEOUT_S * 1000}
    ids = [t.id for t in default_registry().list(suite="real-v2") if t.replica_available]
    # A stranger's failed attempt lies in the temp dir meanwhile: agisdk writes state files there and
    # some scripts (eval_omnizon_28.py) read every *.json / *.txt beside theirs. HALO's evaluator runs
    # each script with its state file alone, so no score may change.
    decoy = Path(tempfile.gettempdir()) / f"eval_stranger_attempt_{os.getpid()}.txt"
    decoy.write_text("Order unsuccessful")
    try:
        async with LocalStack(env_overrides=overrides) as stack:
            async with EnvClient(stack.env_target, timeout_s=STARVED_TIMEOUT_S) as env:
                rows = await verify_all(env, ids, sessions=4)
    finally:
        decoy.unlink(missing_ok=True)
    partial = rows_path.with_suffix(".partial")
    partial.write_bytes(pickle.dumps(rows))
    partial.replace(rows_path)


def main() -> None:
    background.lowest_priority()   # inherited by Chromium, the Playwright driver and agisdk's scripts
    asyncio.run(sweep(Path(sys.argv[1])))


if __name__ == "__main__":
    main()
