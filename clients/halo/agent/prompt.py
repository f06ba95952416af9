"""One prompt builder for every VLM path (vLLM, OpenAI-compatible APIs, Tinker).

A step's prompt is fresh each time, never a growing chat: system prompt (the action syntax),
then one user turn with the screenshot, the goal, the URL, the last N actions (written in the
same syntax the model must answer in) with their errors, and the AXTree cut to a character
budget. That keeps a step at a few thousand tokens across a 70-step episode (seeds: ~3-5K).

`Prompt` is backend-neutral; `to_openai_messages` and `to_renderer_messages` (tinker_cookbook's
message dicts) adapt it.
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass, field

from halo.agent.actions import describe
from halo.agent.context import DEFAULT_HISTORY_STEPS, PolicyContext
from halo.agent.formats import SYSTEM_PROMPTS, ActionFormat, format_action

DEFAULT_MAX_AXTREE_CHARS = 6000   # ~1.5-2K tokens; the screenshot is ~900 more at 1280x720
MAX_HISTORY_ACTION_CHARS = 300    # one long `fill` must not eat the budget
MAX_ERROR_CHARS = 200


@dataclass(frozen=True)
class PromptOptions:
    action_format: ActionFormat = ActionFormat.QWEN_COMPUTER_USE
    history_steps: int = DEFAULT_HISTORY_STEPS
    max_axtree_chars: int = DEFAULT_MAX_AXTREE_CHARS
    include_axtree: bool = True
    include_screenshot: bool = True


@dataclass(frozen=True)
class TextPart:
    text: str


@dataclass(frozen=True)
class ImagePart:
    data: bytes
    mime: str = "image/png"

    def data_url(self) -> str:
        return f"data:{self.mime};base64,{base64.b64encode(self.data).decode('ascii')}"


@dataclass(frozen=True)
class ChatMessage:
    role: str  # "system" | "user" | "assistant"
    parts: tuple[TextPart | ImagePart, ...]

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.parts if isinstance(p, TextPart))


@dataclass(frozen=True)
class Prompt:
    messages: tuple[ChatMessage, ...]
    action_format: ActionFormat = ActionFormat.QWEN_COMPUTER_USE
    notes: dict[str, int] = field(default_factory=dict)  # what was cut: {"axtree_chars_dropped": n, ...}

    def to_openai_messages(self) -> list[dict]:
        """OpenAI chat messages; images travel inline as base64 data URLs (vLLM accepts them)."""
        out: list[dict] = []
        for message in self.messages:
            if all(isinstance(p, TextPart) for p in message.parts):
                out.append({"role": message.role, "content": message.text})
                continue
            content = []
            for part in message.parts:
                if isinstance(part, ImagePart):
                    content.append({"type": "image_url", "image_url": {"url": part.data_url()}})
                else:
                    content.append({"type": "text", "text": part.text})
            out.append({"role": message.role, "content": content})
        return out

    def to_renderer_messages(self) -> list[dict]:
        """tinker_cookbook renderer messages: {"role", "content": str | [{"type": "image"|"text", ...}]}."""
        from PIL import Image

        out: list[dict] = []
        for message in self.messages:
            if all(isinstance(p, TextPart) for p in message.parts):
                out.append({"role": message.role, "content": message.text})
                continue
            content = []
            for part in message.parts:
                if isinstance(part, ImagePart):
                    image = Image.open(io.BytesIO(part.data))
                    image.load()
                    content.append({"type": "image", "image": image.convert("RGB")})
                else:
                    content.append({"type": "text", "text": part.text})
            out.append({"role": message.role, "content": content})
        return out


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"


def cut_axtree(axtree: str, limit: int) -> tuple[str, int]:
    """Keep whole lines up to `limit` characters; returns (text, characters dropped)."""
    if len(axtree) <= limit:
        return axtree, 0
    kept: list[str] = []
    used = 0
    for line in axtree.splitlines():
        if used + len(line) + 1 > limit:
            break
        kept.append(line)
        used += len(line) + 1
    return "\n".join(kept), len(axtree) - used


def history_lines(ctx: PolicyContext, options: PromptOptions) -> list[str]:
    recent = ctx.recent_history(options.history_steps)
    first = len(ctx.history) - len(recent) + 1
    lines = []
    for number, step in enumerate(recent, start=first):
        try:
            written = format_action(step.action, options.action_format, ctx.page.width, ctx.page.height)
        except TypeError:
            written = describe(step.action)
        if options.action_format == ActionFormat.QWEN_COMPUTER_USE:
            # the tool-call wrapper adds nothing in a list of past steps: show the arguments only
            written = written.removeprefix("<tool_call>\n").removesuffix("\n</tool_call>")
        line = f"{number}. {_cut(written, MAX_HISTORY_ACTION_CHARS)}"
        if step.error:
            line += f"  -> error: {_cut(step.error, MAX_ERROR_CHARS)}"
        lines.append(line)
    return lines


def build_prompt(ctx: PolicyContext, options: PromptOptions = PromptOptions()) -> Prompt:
    page = ctx.page
    notes: dict[str, int] = {}
    text = [f"Goal: {ctx.goal}", f"Current URL: {page.url or '(none)'}"]
    if page.title:
        text.append(f"Page title: {page.title}")
    past = history_lines(ctx, options)
    dropped_steps = len(ctx.history) - len(past)
    if past:
        header = f"Previous actions (last {len(past)} of {len(ctx.history)}):" if dropped_steps else "Previous actions:"
        text += [header, *past]
        if dropped_steps:
            notes["history_steps_dropped"] = dropped_steps
    else:
        text.append("Previous actions: none (this is the first step).")
    if page.last_action_error:
        text.append(f"The last action failed: {_cut(page.last_action_error, MAX_ERROR_CHARS)}")
    if options.include_axtree and page.axtree:
        tree, dropped = cut_axtree(page.axtree, options.max_axtree_chars)
        text += ["Accessibility tree ([bid] role \"name\"):", tree]
        if dropped:
            text.append(f"(… {dropped} more characters of the tree not shown)")
            notes["axtree_chars_dropped"] = dropped
    if options.action_format == ActionFormat.QWEN_COMPUTER_USE:
        text.append("What is the next action? Answer with one computer_use tool call.")
    elif options.action_format == ActionFormat.JSON:
        text.append("What is the next action? Answer with one JSON object.")
    else:
        text.append("What is the next action? Answer with one action call.")
    parts: list[TextPart | ImagePart] = []
    if options.include_screenshot and page.screenshot:
        parts.append(ImagePart(page.screenshot, page.image_mime))
    parts.append(TextPart("\n".join(text)))
    return Prompt(
        messages=(ChatMessage("system", (TextPart(SYSTEM_PROMPTS[options.action_format]),)), ChatMessage("user", tuple(parts))),
        action_format=options.action_format, notes=notes,
    )
