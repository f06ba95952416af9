"""`kill -USR1` on a halo process prints its stacks (threads and asyncio tasks) and leaves it running."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

HALO = str(Path(sys.executable).parent / "halo")


def test_sigusr1_prints_the_stacks_of_a_waiting_halo_process_and_it_keeps_running():
    proc = subprocess.Popen([HALO, "serve", "reward", "--host", "127.0.0.1", "--port", "0", "--metrics-port", "-1"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    seen = ""
    try:
        deadline = time.monotonic() + 60
        while "service started" not in seen:   # its event loop is serving
            assert proc.poll() is None and time.monotonic() < deadline, seen
            seen += proc.stderr.readline()
        proc.send_signal(signal.SIGUSR1)
        time.sleep(1)
        assert proc.poll() is None, seen
    finally:
        proc.kill()
        rest = proc.communicate(timeout=30)[1]
    err = seen + rest
    assert "most recent call first" in err and "asyncio task(s):" in err and "Stack for <Task" in err, err
