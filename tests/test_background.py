"""tests/background.py: a job started beside the tests is detached, stopped while a test holds
quiet() (its whole process tree), continued after, and ended with everything it started."""

from __future__ import annotations

import sys
import time

import psutil

from tests import background

#: A job with a child of its own, as the sweep has Chromium: both must stop and continue.
_JOB = "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); time.sleep(60)"


def _statuses(job: background.BackgroundJob) -> set[str]:
    root = psutil.Process(job.pid)
    return {p.status() for p in [root, *root.children(recursive=True)]}


def _within(seconds: float, condition) -> bool:
    """Whether `condition()` holds within `seconds` (signals reach a process soon, not at once)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_a_job_is_detached_stopped_while_quiet_and_ended_with_its_children(tmp_path):
    job = background.start([sys.executable, "-c", _JOB], tmp_path, tmp_path / "job.log")
    try:
        assert _within(10, lambda: psutil.Process(job.pid).children())
        assert job.pid not in {p.pid for p in psutil.Process().children(recursive=True)}   # nobody's child here
        tree = [job.pid, *(p.pid for p in psutil.Process(job.pid).children(recursive=True))]
        assert len(tree) == 2
        with background.quiet():
            with background.quiet():          # nested holders: continued only when the last one leaves
                assert _within(5, lambda: _statuses(job) == {psutil.STATUS_STOPPED})
            assert _statuses(job) == {psutil.STATUS_STOPPED}
        assert _within(5, lambda: psutil.STATUS_STOPPED not in _statuses(job))
    finally:
        job.stop()
    assert not [pid for pid in tree if psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE]
    with background.quiet():                  # nothing running: a no-op
        pass
