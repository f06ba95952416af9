"""The on-disk layout of an evaluation run (plain files: JSON, JSONL, JPEG, Markdown, PNG, HTML).

    evals/<eval_id>/
        eval.json                       the spec (mode, route, adapter, tasks, seeds, max_steps, ...)
        episodes/<task>--s<seed>/
            episode.json                outcome: success, evaluation details, return, length, validity, timings
            steps.jsonl                 one line per step: action, raw model text, reward breakdown, timing
            step-000.jpg ...            the screenshot each action was chosen on
            final.jpg                   the page after the last action
            index.html                  the trajectory viewer of this episode
        index.html                      the run's viewer: tables, plots, links to every episode
        report.md, success_by_site.png, rewards.png

An episode folder is written under a temporary name and renamed when complete, so a folder with an
`episode.json` is a finished episode: resuming an interrupted eval skips exactly those (episodes
that ended in an environment or backend failure are run again).
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import time
from pathlib import Path
from typing import Any

from halo.agent import actions as A
from halo.agent.context import PageView
from halo.evaluation.records import EvalSpec, action_to_json
from halo.evaluation.viewer import write_episode_page
from halo.rollout.episode import Episode
from halo.v1 import common_pb2 as cpb

SPEC_FILE = "eval.json"
EPISODE_FILE = "episode.json"
STEPS_FILE = "steps.jsonl"


def episode_key(task_id: str, seed: int) -> str:
    return f"{re.sub(r'[^A-Za-z0-9_.-]', '_', task_id)}--s{seed}"


def _jpeg(data: bytes, mime: str) -> bytes:
    """Screenshots are saved as JPEG: the env's own bytes when they already are, re-encoded otherwise."""
    if mime == "image/jpeg" or data[:3] == b"\xff\xd8\xff":
        return data
    from PIL import Image

    out = io.BytesIO()
    Image.open(io.BytesIO(data)).convert("RGB").save(out, "JPEG", quality=85)
    return out.getvalue()


def _target(action: A.Action | None, page: PageView) -> dict[str, Any] | None:
    """The element a bid action addresses, with its box (drawn by the viewer)."""
    bid = getattr(action, "bid", None)
    if bid is None:
        return None
    for e in page.elements:
        if e.bid == bid:
            return {"bid": e.bid, "role": e.role, "name": e.name, "x": e.x, "y": e.y, "width": e.width, "height": e.height}
    return {"bid": bid, "missing": True}


def _r(value: Any) -> Any:
    """Floats rounded to 6 digits (0.30000000000000004 -> 0.3) in numbers, dicts of numbers."""
    if isinstance(value, dict):
        return {k: _r(v) for k, v in value.items()}
    return round(value, 6) if isinstance(value, float) else value


def _write_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")


class EvalStore:
    def __init__(self, root: Path | str = "evals") -> None:
        self.root = Path(root)

    # ----------------------------------------------------------------------- runs

    def eval_dir(self, eval_id: str) -> Path:
        if not eval_id or "/" in eval_id or eval_id.startswith("."):
            raise ValueError(f"bad eval id {eval_id!r}")
        return self.root / eval_id

    def exists(self, eval_id: str) -> bool:
        return (self.eval_dir(eval_id) / SPEC_FILE).is_file()

    def save_spec(self, spec: EvalSpec) -> None:
        folder = self.eval_dir(spec.eval_id)
        (folder / "episodes").mkdir(parents=True, exist_ok=True)
        spec.created_at = spec.created_at or time.strftime("%Y-%m-%d %H:%M:%S")
        tmp = folder / f".{SPEC_FILE}.tmp"
        _write_json(tmp, spec.to_dict())
        os.replace(tmp, folder / SPEC_FILE)

    def load_spec(self, eval_id: str) -> EvalSpec:
        path = self.eval_dir(eval_id) / SPEC_FILE
        if not path.is_file():
            known = ", ".join(self.list_ids()[:10]) or "none"
            raise FileNotFoundError(f"no evaluation {eval_id!r} under {self.root} (known: {known})")
        return EvalSpec.from_dict(json.loads(path.read_text()))

    def list_ids(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted((p.name for p in self.root.iterdir() if (p / SPEC_FILE).is_file()), reverse=True)

    # ------------------------------------------------------------------- episodes

    def episode_dir(self, eval_id: str, task_id: str, seed: int) -> Path:
        return self.eval_dir(eval_id) / "episodes" / episode_key(task_id, seed)

    def episodes(self, eval_id: str) -> list[dict[str, Any]]:
        """Summaries of the saved episodes, in (task, seed) order."""
        folder = self.eval_dir(eval_id) / "episodes"
        out = []
        if folder.is_dir():
            for d in folder.iterdir():
                if not d.name.startswith(".") and (d / EPISODE_FILE).is_file():
                    out.append(json.loads((d / EPISODE_FILE).read_text()))
        return sorted(out, key=lambda e: (e["task_id"], e["seed"]))

    def completed(self, eval_id: str) -> set[tuple[str, int]]:
        """Episodes that need no rerun: finished, whatever the task outcome (not infrastructure failures)."""
        return {(e["task_id"], e["seed"]) for e in self.episodes(eval_id) if not e.get("env_failure")}

    def steps(self, eval_id: str, key: str) -> list[dict[str, Any]]:
        path = self.eval_dir(eval_id) / "episodes" / key / STEPS_FILE
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.is_file() else []

    def save_episode(self, eval_id: str, episode: Episode, task: cpb.Task | None = None, *,
                     mode: str = "", error: str = "", started_at: float = 0.0) -> dict[str, Any]:
        """Write one episode (steps, screenshots, outcome) atomically; returns its summary."""

        final = self.episode_dir(eval_id, episode.task_id, episode.seed)
        tmp = final.parent / f".{final.name}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        lines = []
        for i, t in enumerate(episode.transitions):
            page, d = t.context.page, t.decision
            shot = ""
            if page.screenshot:
                shot = f"step-{i:03d}.jpg"
                (tmp / shot).write_bytes(_jpeg(page.screenshot, page.image_mime))
            lines.append(json.dumps({
                "step": i, "url": page.url, "title": page.title, "screenshot": shot,
                "width": page.width, "height": page.height,
                "action": action_to_json(d.action), "action_text": A.describe(d.action) if d.action is not None else "",
                "raw_text": d.raw_text, "parse_error": d.parse_error, "valid": d.action is not None and t.action_ok,
                "action_ok": t.action_ok, "action_error": t.action_error, "reward": _r(t.reward), "components": _r(t.components),
                "logprob": _r(d.logprob), "tokens": d.tokens, "timing": _r(t.timings), "target": _target(d.action, page),
            }, ensure_ascii=False))
        (tmp / STEPS_FILE).write_text("".join(line + "\n" for line in lines))
        final_shot = ""
        if episode.final_page is not None and episode.final_page.screenshot:
            final_shot = "final.jpg"
            (tmp / final_shot).write_bytes(_jpeg(episode.final_page.screenshot, episode.final_page.image_mime))
        summary = {
            "task_id": episode.task_id, "seed": episode.seed, "key": final.name,
            "site": task.site if task is not None else episode.task_id.split("-")[0],
            "goal": task.goal if task is not None else "", "mode": mode,
            "success": episode.success, "success_strict": episode.success_strict, "scorable": episode.scorable,
            "env_failure": episode.env_failure or bool(error), "env_failure_reason": episode.env_failure_reason or error,
            "return": _r(episode.ret), "success_bonus": episode.success_bonus, "length": episode.length,
            "valid_actions": episode.valid_actions, "validity": episode.valid_actions / episode.length if episode.length else 0.0,
            "tokens": episode.tokens, "final_message": episode.final_message, "eval_details": episode.eval_details,
            "final_url": episode.final_page.url if episode.final_page is not None else "", "final_screenshot": final_shot,
            "timings": _r(episode.timings), "started_at": started_at, "finished_at": time.time(),
        }
        _write_json(tmp / EPISODE_FILE, summary)
        write_episode_page(tmp, summary, [json.loads(line) for line in lines], eval_id=eval_id)
        if final.exists():
            shutil.rmtree(final)   # an infrastructure failure being replaced by its rerun
        os.replace(tmp, final)
        return summary
