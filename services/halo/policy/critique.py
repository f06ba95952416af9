"""Critic and judge prompts, and reading their verdicts back.

Critique (MCTS self-critique, Agent Q style): the critic sees the page like the policy does and
scores each candidate action in [0, 1]. Judge (REAL's LLM-judge evals): a yes/no grading of the
agent's final answer against a rubric. Both ask for a small JSON object and accept a plain
"yes"/"no" verdict for the judge; an unusable reply is reported as `parsed = False`, never
turned into a confident score.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from halo.agent.actions import Action
from halo.agent.context import PolicyContext
from halo.agent.formats import ActionFormat, format_action
from halo.agent.prompt import ChatMessage, Prompt, PromptOptions, TextPart, build_prompt
from halo.agent.repair import find_balanced, loads_lenient, strip_code_fence

NEUTRAL_SCORE = 0.5

CRITIC_SYSTEM = (
    "You are a critic of a web agent's next action. Given the page, the goal and the candidate "
    "actions, score each candidate between 0 (useless or harmful) and 1 (clearly the best next step "
    "towards the goal). Reply with one JSON object and nothing else:\n"
    '{"scores": [<one number per candidate, in order>], "rationale": "<one or two sentences>"}'
)

JUDGE_SYSTEM = (
    "You grade a web agent's final answer. Decide whether the answer satisfies the rubric. "
    "Reply with one JSON object and nothing else:\n"
    '{"passed": true or false, "score": <0..1>, "rationale": "<one sentence>"}'
)


@dataclass(frozen=True)
class CritiqueVerdict:
    scores: list[float]
    rationale: str
    parsed: bool


@dataclass(frozen=True)
class JudgeVerdict:
    passed: bool
    score: float
    rationale: str
    parsed: bool


def critic_prompt(ctx: PolicyContext, candidates: list[Action], options: PromptOptions) -> Prompt:
    """The policy's own view of the page (screenshot, goal, history, AXTree) + the numbered candidates."""
    base = build_prompt(ctx, PromptOptions(**{**options.__dict__, "action_format": ActionFormat.JSON}))
    user = base.messages[1]
    listed = "\n".join(
        f"{i}. {format_action(a, ActionFormat.JSON, ctx.page.width, ctx.page.height)}" for i, a in enumerate(candidates, 1)
    )
    text = user.text.rsplit("\n", 1)[0]  # drop the "what is the next action?" line
    text += f"\nCandidate actions ({len(candidates)}):\n{listed}\nScore every candidate."
    parts = tuple(p for p in user.parts if not isinstance(p, TextPart)) + (TextPart(text),)
    return Prompt(messages=(ChatMessage("system", (TextPart(CRITIC_SYSTEM),)), ChatMessage("user", parts)),
                  action_format=ActionFormat.JSON)


def judge_prompt(question: str, answer: str, rubric: str) -> Prompt:
    text = (f"Task given to the agent: {question or '(not given)'}\n"
            f"The agent's final answer: {answer}\n"
            f"Rubric (what a correct answer contains): {rubric}\n"
            "Does the answer satisfy the rubric?")
    return Prompt(messages=(ChatMessage("system", (TextPart(JUDGE_SYSTEM),)), ChatMessage("user", (TextPart(text),))),
                  action_format=ActionFormat.JSON)


def _json_object(text: str) -> dict | None:
    body, _ = strip_code_fence(text)
    span = find_balanced(body, "{")
    if span is None:
        return None
    try:
        value, _ = loads_lenient(body[span[0]:span[1]])
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _clamp(value: float) -> float:
    return min(1.0, max(0.0, value))


def parse_critique(text: str, count: int) -> CritiqueVerdict:
    obj = _json_object(text)
    scores = obj.get("scores") if obj else None
    if (isinstance(scores, list) and len(scores) == count
            and all(isinstance(s, (int, float)) and not isinstance(s, bool) for s in scores)):
        return CritiqueVerdict([_clamp(float(s)) for s in scores], str(obj.get("rationale", "")), True)
    return CritiqueVerdict([NEUTRAL_SCORE] * count, f"unusable critic output: {text[:300]}", False)


_VERDICT_WORD = re.compile(r"^\W*(yes|no|pass|passed|fail|failed|true|false|correct|incorrect)\b", re.IGNORECASE)


def parse_judge(text: str) -> JudgeVerdict:
    obj = _json_object(text)
    if obj is not None and isinstance(obj.get("passed"), bool):
        passed = obj["passed"]
        score = obj.get("score")
        score = _clamp(float(score)) if isinstance(score, (int, float)) and not isinstance(score, bool) else float(passed)
        return JudgeVerdict(passed, score, str(obj.get("rationale", "")), True)
    match = _VERDICT_WORD.match(text.strip())
    if match:
        passed = match.group(1).lower() in ("yes", "pass", "passed", "true", "correct")
        return JudgeVerdict(passed, float(passed), text.strip()[:500], True)
    return JudgeVerdict(False, 0.0, f"no verdict in the judge's output: {text[:300]}", False)
