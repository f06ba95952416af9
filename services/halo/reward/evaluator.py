"""Final task evaluation with REAL's own evaluator (agisdk), on a site's /finish state.

REAL v2 tasks are scored by agisdk's eval scripts (run by `WebCloneEvaluator` in a subprocess
with its 30 s timeout); HALO's own tasks use jmespath evals in the same task-file format.
A task succeeds when every eval passes (REAL's scoring).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import jmespath

from halo.env.tasks import EvalSpec, TaskSpec


@dataclass
class EvalOutcome:
    index: int
    kind: str
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

    @property
    def score(self) -> float:
        return 1.0 if self.success else 0.0


def _agisdk_evaluator(task: TaskSpec):
    from agisdk.REAL.browsergym.webclones.evaluate import WebCloneEvaluator
    from agisdk.REAL.browsergym.webclones.task_config import TaskConfig

    return WebCloneEvaluator(task_config=TaskConfig(task.id, "v2"))


def _run_script(task: TaskSpec, spec: EvalSpec, index: int, state: dict[str, Any], final_message: str) -> EvalOutcome:
    passed, info = _agisdk_evaluator(task).execute_eval_script_subprocess(spec.script, state, final_message)
    return EvalOutcome(
        index, "script", bool(passed), spec.script, output=str(info.get("output", "") or ""),
        error=str(info.get("error", "") or info.get("stderr", "") or ""),
    )


def _run_jmespath(spec: EvalSpec, index: int, state: dict[str, Any]) -> EvalOutcome:
    try:
        value = jmespath.search(spec.query, state)
    except jmespath.exceptions.JMESPathError as exc:
        return EvalOutcome(index, "jmespath", False, spec.query, error=f"bad query: {exc}")
    passed = value == spec.expected_value if spec.expected_value is not None else bool(value)
    return EvalOutcome(index, "jmespath", passed, spec.query, output=json.dumps(value))


def evaluate(task: TaskSpec, state: dict[str, Any], final_message: str = "") -> Evaluation:
    """Score one attempt. LLM-judge evals are the reward service's (they need the gateway)."""
    details: list[EvalOutcome] = []
    for index, spec in enumerate(task.evals):
        if spec.kind == "script":
            details.append(_run_script(task, spec, index, state, final_message))
        elif spec.kind == "jmespath":
            details.append(_run_jmespath(spec, index, state))
        else:
            details.append(EvalOutcome(index, spec.kind, False, spec.description, error=f"{spec.kind} evals need the reward service's judge route"))
    success = bool(details) and all(d.passed for d in details) and task.scorable
    return Evaluation(task.id, success, details, task.scorable)
