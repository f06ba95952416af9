"""agisdk's own harness environment on the `halo bench env` loop, for the side-by-side figures.

agisdk runs a task as BrowserGym's `BrowserEnv` around a REAL webclones task, one worker process
per task when it runs several (its harness uses Ray): each worker starts its own Playwright, a
Chromium for the task and a second Chromium for its chat window. This module does the same, one
spawned process per environment, on the playground task the other bench modes use (in agisdk's
task-file format, pointed at the local replica), with BrowserGym's high-level action strings.
Every step is agisdk's as shipped: the action, its fixed 0.5 s wait, the DOM-loaded wait, task
validation and the full observation (screenshot, AXTree, DOM snapshot), under Playwright's
`slow_mo` (the task's own 1000 ms unless the caller sets another).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import tempfile
import time
import traceback
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path

#: What agisdk's tasks ask Playwright for (`AbstractBrowserTask.slow_mo`), used when none is given.
AGISDK_SLOW_MO_MS = 1000


@dataclass(frozen=True)
class HarnessWorkerSpec:
    task_file: str              # the task in agisdk's JSON format
    base_url: str               # the replica's start URL (agisdk appends /config and /finish)
    steps: int
    slow_mo_ms: int
    browsers_path: str | None   # PLAYWRIGHT_BROWSERS_PATH for the worker (links to a system Chromium), or None


@dataclass(frozen=True)
class HarnessRun:
    """What one worker reports back: its step latencies (seconds)."""

    latencies: list[float]


class HarnessError(RuntimeError):
    """A worker failed: the message carries its traceback."""


def playwright_browser_links(chromium: str, root: str = "") -> str:
    """A PLAYWRIGHT_BROWSERS_PATH folder whose Chromium builds are links to `chromium`.

    agisdk's chat window launches Chromium with no executable path, so Playwright looks for its
    own build (revision from its browsers.json); where that cannot be downloaded, links to the
    system Chromium stand in for both the full and the headless-shell build.
    """
    import playwright

    browsers = json.loads((Path(playwright.__file__).parent / "driver/package/browsers.json").read_text())["browsers"]
    revision = {b["name"]: b["revision"] for b in browsers}
    folder_root = Path(root or tempfile.mkdtemp(prefix="halo-pw-browsers-"))
    for folder, binary in (
        (f"chromium-{revision['chromium']}/chrome-linux64", "chrome"),
        (f"chromium_headless_shell-{revision['chromium-headless-shell']}/chrome-headless-shell-linux64",
         "chrome-headless-shell"),
    ):
        (folder_root / folder).mkdir(parents=True)
        (folder_root / folder / binary).symlink_to(chromium)
    return str(folder_root)


def write_task_file(raw_task: dict, base_url: str, folder: str) -> str:
    """The HALO task as an agisdk task file whose website URL is the replica."""
    task = dict(raw_task, website=dict(raw_task["website"], url=base_url))
    path = Path(folder) / f"{task['id']}.json"
    path.write_text(json.dumps(task))
    return str(path)


def _make_task_class():
    from agisdk.REAL.browsergym.core.task import AbstractBrowserTask
    from agisdk.REAL.browsergym.webclones.base import AbstractWebCloneTask
    from agisdk.REAL.browsergym.webclones.evaluate import WebCloneEvaluator
    from agisdk.REAL.browsergym.webclones.task_config import TaskConfig

    class ReplicaFileTask(AbstractWebCloneTask):
        """agisdk's webclones task read from a task file (its constructor only takes v1/v2 names)."""

        def __init__(self, seed: int, task_file: str) -> None:
            AbstractBrowserTask.__init__(self, seed)
            self.seed = seed
            self.task_config = TaskConfig(task_file, "v2", is_path=True)
            self.task_name = self.task_id = self.task_config.task_name
            self.task_version = self.task_config.version
            self.canonical_task_id = self.task_config.canonical_id
            self.run_id = "0"   # local scoring only: never a leaderboard submission
            self.evaluator = WebCloneEvaluator(task_config=self.task_config)
            self.goal = self.task_config.get_goal()
            self.url = self.task_config.get_start_url()

    return ReplicaFileTask


def _loop_actions(name_bid: str, plan_bid: str) -> list[str]:
    """The bench loop (fill, scroll down, scroll up, hover) in BrowserGym's action syntax."""
    return [f"fill('{name_bid}', 'Ada')", "scroll(0, 300)", "scroll(0, -300)", f"hover('{plan_bid}')"]


def _worker(spec: HarnessWorkerSpec, conn: Connection) -> None:
    """One agisdk environment: reset, report ready, step on "go", report, close on "close"."""
    env = None
    try:
        if spec.browsers_path:
            os.environ["PLAYWRIGHT_BROWSERS_PATH"] = spec.browsers_path
        import logging

        logging.disable(logging.WARNING)  # agisdk logs every task start and action at INFO
        from agisdk.REAL.browsergym.core.env import BrowserEnv

        env = BrowserEnv(
            task_entrypoint=_make_task_class(), task_kwargs={"task_file": spec.task_file},
            headless=True, slow_mo=spec.slow_mo_ms,
        )
        env.reset(seed=0)
        # BrowserGym marks every element with a `bid` attribute: the same two fields the other modes use
        loop = _loop_actions(env.page.get_attribute("#name", "bid"), env.page.get_attribute("#plan", "bid"))
        conn.send("ready")
        if conn.recv() != "go":  # the parent gave up (another worker failed): close without stepping
            return
        latencies = []
        for i in range(spec.steps):
            start = time.perf_counter()
            obs, _reward, _terminated, _truncated, _info = env.step(loop[i % len(loop)])
            latencies.append(time.perf_counter() - start)
            if obs["last_action_error"]:
                raise HarnessError(f"step {i} ({loop[i % len(loop)]}): {obs['last_action_error']}")
        conn.send(HarnessRun(latencies))
        conn.recv()  # "close": the parent has measured memory with every environment open
    except BaseException:
        conn.send(HarnessError(traceback.format_exc()))
    finally:
        if env is not None:
            try:
                env.close()
            except Exception:
                pass
        conn.close()


class HarnessWorkers:
    """N agisdk environments in N spawned processes, started, stepped and closed together."""

    def __init__(self, specs: list[HarnessWorkerSpec]) -> None:
        ctx = multiprocessing.get_context("spawn")   # a fresh interpreter per worker, like a Ray worker
        self._conns: list[Connection] = []
        self._procs = []
        for spec in specs:
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_worker, args=(spec, child), daemon=True)
            proc.start()
            child.close()
            self._conns.append(parent)
            self._procs.append(proc)

    def _gather(self, timeout_s: float) -> list[object]:
        replies = []
        for conn in self._conns:
            if not conn.poll(timeout_s):
                raise HarnessError(f"an agisdk worker did not answer within {timeout_s:g}s")
            reply = conn.recv()
            if isinstance(reply, HarnessError):
                raise reply
            replies.append(reply)
        return replies

    def wait_ready(self, timeout_s: float) -> None:
        self._gather(timeout_s)

    def run(self, timeout_s: float) -> list[HarnessRun]:
        for conn in self._conns:
            conn.send("go")
        return self._gather(timeout_s)  # type: ignore[return-value]

    @property
    def alive(self) -> int:
        """Worker processes still running."""
        return sum(proc.is_alive() for proc in self._procs)

    def close(self, timeout_s: float = 60.0) -> None:
        for conn in self._conns:
            try:
                conn.send("close")
            except (BrokenPipeError, OSError):
                pass
        for proc in self._procs:
            proc.join(timeout_s)
            if proc.is_alive():
                proc.kill()
                proc.join()
        for conn in self._conns:
            conn.close()
