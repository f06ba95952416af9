"""Runs on disk: everything a run is lives in its folder, so the service can die and come back.

    runs/<run_id>/run.json          spec, state, completed step, timestamps, error
    runs/<run_id>/events.jsonl      every event (sequence-numbered), replayed by WatchRun
    runs/<run_id>/metrics.jsonl     one line per completed step
    runs/<run_id>/checkpoints/step-000012/   one folder per checkpoint (written, then renamed)
"""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import asdict, dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from halo.runs.spec import RunSpec


class RunState(str, Enum):
    PENDING = "pending"
    RUNNING = "running"
    STOPPING = "stopping"
    STOPPED = "stopped"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    INTERRUPTED = "interrupted"

    @property
    def active(self) -> bool:
        return self in (RunState.PENDING, RunState.RUNNING, RunState.STOPPING)


@dataclass
class RunRecord:
    run_id: str
    spec: RunSpec
    state: RunState = RunState.PENDING
    step: int = 0
    created_at: float = field(default_factory=time.time)
    updated_at: float = field(default_factory=time.time)
    last_metrics: dict[str, float] = field(default_factory=dict)
    error: str = ""
    last_checkpoint_id: str = ""
    output_dir: str = ""


@dataclass
class CheckpointRecord:
    checkpoint_id: str
    run_id: str
    step: int
    path: str
    created_at: float
    metrics: dict[str, float]


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def checkpoint_name(step: int) -> str:
    return f"step-{step:06d}"


class RunStore:
    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)

    def run_dir(self, run_id: str) -> Path:
        return self.root / run_id

    def save(self, record: RunRecord) -> None:
        record.updated_at = time.time()
        data = asdict(record) | {"spec": record.spec.to_dict(), "state": record.state.value}
        folder = self.run_dir(record.run_id)
        folder.mkdir(parents=True, exist_ok=True)
        _atomic_write(folder / "run.json", json.dumps(data, indent=2))

    def load(self, run_id: str) -> RunRecord | None:
        path = self.run_dir(run_id) / "run.json"
        if not path.exists():
            return None
        data = json.loads(path.read_text())
        data["spec"] = RunSpec.from_dict(data["spec"])
        data["state"] = RunState(data["state"])
        return RunRecord(**data)

    def all(self) -> list[RunRecord]:
        records = [self.load(p.name) for p in self.root.iterdir() if (p / "run.json").exists()]
        return sorted((r for r in records if r), key=lambda r: r.created_at, reverse=True)

    # --- events and metrics -----------------------------------------------------------

    def append_event(self, run_id: str, event: dict[str, Any]) -> None:
        with open(self.run_dir(run_id) / "events.jsonl", "a") as f:
            f.write(json.dumps(event) + "\n")
            f.flush()
            os.fsync(f.fileno())

    def events(self, run_id: str) -> list[dict[str, Any]]:
        path = self.run_dir(run_id) / "events.jsonl"
        if not path.exists():
            return []
        events = []
        for line in path.read_text().splitlines():
            try:
                events.append(json.loads(line))
            except json.JSONDecodeError:
                break  # a line cut by a crash: everything before it is intact
        return events

    def append_metrics(self, run_id: str, step: int, metrics: dict[str, float]) -> None:
        with open(self.run_dir(run_id) / "metrics.jsonl", "a") as f:
            f.write(json.dumps({"step": step, **metrics}) + "\n")
            f.flush()
            os.fsync(f.fileno())

    def metrics(self, run_id: str) -> list[dict[str, float]]:
        path = self.run_dir(run_id) / "metrics.jsonl"
        if not path.exists():
            return []
        rows = []
        for line in path.read_text().splitlines():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                break
        return rows

    def truncate_metrics(self, run_id: str, up_to_step: int) -> None:
        """Drop metric lines of steps whose checkpoint never landed (a crash between the two)."""
        rows = [r for r in self.metrics(run_id) if r["step"] <= up_to_step]
        _atomic_write(self.run_dir(run_id) / "metrics.jsonl", "".join(json.dumps(r) + "\n" for r in rows))

    # --- checkpoints ------------------------------------------------------------------

    def checkpoint_dir(self, run_id: str) -> Path:
        return self.run_dir(run_id) / "checkpoints"

    def write_checkpoint(self, run_id: str, step: int, metrics: dict[str, float], save) -> CheckpointRecord:
        root = self.checkpoint_dir(run_id)
        root.mkdir(parents=True, exist_ok=True)
        final = root / checkpoint_name(step)
        tmp = root / (checkpoint_name(step) + ".partial")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        save(tmp)
        record = CheckpointRecord(checkpoint_name(step), run_id, step, str(final), time.time(), metrics)
        (tmp / "checkpoint.json").write_text(json.dumps(asdict(record), indent=2))
        shutil.rmtree(final, ignore_errors=True)
        os.replace(tmp, final)  # the checkpoint exists only once complete
        return record

    def checkpoints(self, run_id: str) -> list[CheckpointRecord]:
        root = self.checkpoint_dir(run_id)
        if not root.exists():
            return []
        found = []
        for folder in sorted(root.iterdir()):
            meta = folder / "checkpoint.json"
            if folder.name.startswith("step-") and not folder.name.endswith(".partial") and meta.exists():
                found.append(CheckpointRecord(**json.loads(meta.read_text())))
        return sorted(found, key=lambda c: c.step)
