"""Final task evaluation with REAL's own evaluator (agisdk), on a site's /finish state.

REAL v2 tasks are scored by agisdk's eval scripts, run the way `WebCloneEvaluator` runs them (a
subprocess, its 30 s timeout, SUCCESS in stdout) but with the state file in a private folder
(see run_script); jmespath evals (HALO's own tasks use them, in the same task-file
format) go through the same evaluator's `jmespath_verify` + `exact_match`, so a result here is
exactly agisdk's. LLM-judge evals ask the policy gateway's Judge route (judge.py). A task
succeeds when every eval passes (REAL's scoring).

`evaluate()` is the synchronous entry point (tests score stored states with it; judge evals get an
error detail there); `evaluate_async()` is the reward service's, with the judge and a thread pool.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import SimpleNamespace
from typing import Any, TypeVar

from halo.tasks.registry import EvalSpec, TaskSpec, agisdk_v2_dir
from halo.reward.judge import Judge

T = TypeVar("T")

UNPARSED_VERDICT = "the judge's output held no verdict: this attempt cannot be scored"
NO_JUDGE = "llm_judge evals need the reward service's judge route (set --judge-target to the policy gateway)"


@dataclass
class EvalOutcome:
    index: int
    kind: str                 # "script" | "jmespath" | "llm_judge"
    passed: bool
    description: str
    output: str = ""
    error: str = ""


@dataclass
class Evaluation:
    task_id: str
    success: bool
    details: list[EvalOutcome] = field(default_factory=list)
    scorable: bool = True
    duration_s: float = 0.0

    @property
    def score(self) -> float:
        return 1.0 if self.success else 0.0

    @property
    def errors(self) -> list[str]:
        return [d.error for d in self.details if d.error]


@cache
def agisdk_evaluator():
    """agisdk's WebCloneEvaluator, looking up eval scripts where a v2 TaskConfig points it."""
    from agisdk.REAL.browsergym.webclones.evaluate import WebCloneEvaluator

    return WebCloneEvaluator(task_config=SimpleNamespace(eval_scripts_dir=str(agisdk_v2_dir() / "eval_scripts")))


def needs_judge(task: TaskSpec) -> bool:
    return any(spec.kind == "llm_judge" for spec in task.evals)


SCRIPT_TIMEOUT_S = 30  # agisdk's per-script timeout


def run_script(spec: EvalSpec, index: int, state: dict[str, Any], final_message: str) -> EvalOutcome:
    """One eval script, exactly as agisdk's WebCloneEvaluator runs it (same interpreter, the state
    JSON file as argv[1], its 30 s timeout, SUCCESS in stdout), except that the state file sits
    alone in a private temp folder: agisdk writes it to the shared temp dir, and a script that
    reads its siblings (eval_omnizon_28.py) would otherwise score other attempts' files."""
    script = agisdk_v2_dir() / "eval_scripts" / spec.script
    if not script.exists():
        return EvalOutcome(index, "script", False, spec.script, error=f"evaluation script {spec.script} not found in {script.parent}")
    with tempfile.TemporaryDirectory(prefix="halo-eval-") as folder:
        state_file = Path(folder) / f"eval_{script.stem}.json"
        state_file.write_text(json.dumps(state, indent=2))
        try:
            result = subprocess.run([sys.executable, str(script), str(state_file)], capture_output=True, text=True,
                                    timeout=SCRIPT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return EvalOutcome(index, "script", False, spec.script, error=f"timed out after {SCRIPT_TIMEOUT_S} s")
    stdout, stderr = result.stdout.strip(), result.stderr.strip()
    error = f"exit code {result.returncode}: {stderr[-500:]}" if result.returncode != 0 else ""
    return EvalOutcome(index, "script", "SUCCESS" in stdout.upper(), spec.script, output=stdout, error=error)


def run_jmespath(spec: EvalSpec, index: int, state: dict[str, Any]) -> EvalOutcome:
    """agisdk's jmespath eval: the query's value must equal `expected_value` exactly."""
    evaluator = agisdk_evaluator()
    actual, error = evaluator.jmespath_verify(state, spec.query)
    if error:
        return EvalOutcome(index, "jmespath", False, spec.query, error=str(error))
    passed, _info = evaluator.exact_match(actual, spec.expected_value)
    return EvalOutcome(index, "jmespath", bool(passed), spec.query, output=json.dumps(actual, default=str))


async def run_judge(task: TaskSpec, spec: EvalSpec, index: int, final_message: str, judge: Judge | None) -> EvalOutcome:
    rubric = spec.rubric or spec.description
    if judge is None:
        return EvalOutcome(index, "llm_judge", False, rubric, error=NO_JUDGE)
    verdict = await judge.judge(answer=final_message, rubric=rubric, question=task.goal)
    output = f"score={verdict.score:.3f} model={verdict.model} {verdict.rationale}".strip()
    if not verdict.parsed:
        return EvalOutcome(index, "llm_judge", False, rubric, output=output, error=UNPARSED_VERDICT)
    return EvalOutcome(index, "llm_judge", verdict.passed, rubric, output=output)


def _unknown(spec: EvalSpec, index: int) -> EvalOutcome:
    return EvalOutcome(index, spec.kind or "unknown", False, spec.description, error=f"unknown eval type {spec.kind!r}")


def _finish(task: TaskSpec, details: list[EvalOutcome], started: float) -> Evaluation:
    details.sort(key=lambda d: d.index)
    # A judge that gave no verdict says nothing about the agent: the attempt is unscorable.
    scorable = task.scorable and not any(d.error == UNPARSED_VERDICT for d in details)
    success = bool(details) and all(d.passed for d in details) and scorable
    return Evaluation(task.id, success, details, scorable, time.perf_counter() - started)


def evaluate(task: TaskSpec, state: dict[str, Any], final_message: str = "") -> Evaluation:
    """Score one attempt, synchronously. LLM-judge evals get an error detail (they need the gateway)."""
    started = time.perf_counter()
    details: list[EvalOutcome] = []
    for index, spec in enumerate(task.evals):
        if spec.kind == "script":
            details.append(run_script(spec, index, state, final_message))
        elif spec.kind == "jmespath":
            details.append(run_jmespath(spec, index, state))
        elif spec.kind == "llm_judge":
            details.append(EvalOutcome(index, "llm_judge", False, spec.rubric or spec.description, error=NO_JUDGE))
        else:
            details.append(_unknown(spec, index))
    return _finish(task, details, started)


async def _in_thread(fn: Callable[[], T]) -> T:
    return await asyncio.to_thread(fn)


async def evaluate_async(
    task: TaskSpec, state: dict[str, Any], final_message: str = "", judge: Judge | None = None,
    run_blocking: Callable[[Callable[[], T]], Awaitable[T]] = _in_thread,
) -> Evaluation:
    """Score one attempt without blocking the event loop: scripts in threads, evals concurrently."""
    started = time.perf_counter()

    async def one(index: int, spec: EvalSpec) -> EvalOutcome:
        if spec.kind == "script":
            return await run_blocking(lambda: run_script(spec, index, state, final_message))
        if spec.kind == "jmespath":
            return run_jmespath(spec, index, state)
        if spec.kind == "llm_judge":
            return await run_judge(task, spec, index, final_message, judge)
        return _unknown(spec, index)

    details = list(await asyncio.gather(*(one(i, s) for i, s in enumerate(task.evals))))
    return _finish(task, details, started)
