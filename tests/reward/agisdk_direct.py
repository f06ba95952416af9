"""agisdk's WebCloneEvaluator called directly, the reference the reward service must agree with."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from halo.tasks.registry import SUITE_REAL, TaskSpec


def agisdk_verdict(task: TaskSpec, state: dict[str, Any], final_message: str) -> tuple[bool, list[bool]]:
    """(success, passed per eval) as agisdk's own `WebCloneEvaluator.evaluate` scores the attempt."""
    from agisdk.REAL.browsergym.webclones.evaluate import WebCloneEvaluator
    from agisdk.REAL.browsergym.webclones.task_config import TaskConfig

    if task.suite == SUITE_REAL:
        config = TaskConfig(task.id, "v2")
    else:
        # HALO's own tasks use agisdk's task-file format: load the same JSON through agisdk.
        folder = Path(tempfile.mkdtemp(prefix="halo-agisdk-"))
        path = folder / f"{task.id}.json"
        path.write_text(json.dumps(task.raw))
        config = TaskConfig(str(path), "v2", is_path=True)
    reward, _done, _message, info = WebCloneEvaluator(task_config=config).evaluate(state, final_message)
    return reward > 0, [bool(result[0]) for result in info["results"]]
