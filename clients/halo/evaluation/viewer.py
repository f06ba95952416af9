"""Static HTML trajectory viewer: open `evals/<eval_id>/index.html` in a browser, no server needed.

The run's page lists the per-site and per-task results, the plots and every episode; each episode
has its own page (`episodes/<task>--s<seed>/index.html`) with, per step, the screenshot the action
was chosen on (relative path) and the action drawn over it as SVG in the screenshot's own pixel
space: the click point, the element box of bid actions, typed text, the drag arrow, the scroll
direction; then the model's raw text, the reward breakdown, timings, and the final evaluation.
Everything is rendered here in Python; the pages have no script.
"""

from __future__ import annotations

import dataclasses
import html
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from halo.agent import actions as A
from halo.evaluation.records import action_from_json, describe_spec
from halo.evaluation.summary import SITE_HEADER, TASK_HEADER, outcome, pct, site_cells, task_cells

CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;background:#f5f6f8;color:#1d2330}
header{background:#1d2330;color:#fff;padding:14px 24px}
header a{color:#9cc3ff}
main{padding:16px 24px;max-width:1500px}
h1{font-size:20px;margin:0 0 4px}
h2{font-size:16px;margin:22px 0 8px}
table{border-collapse:collapse;background:#fff;margin:6px 0}
td,th{border:1px solid #dde1e8;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#eef1f5}
.badge{display:inline-block;border-radius:10px;padding:1px 9px;font-weight:600;font-size:12px}
.success{background:#d8f5df;color:#11652b}.failure{background:#fde0e0;color:#8d1c1c}
.envfail,.unscorable{background:#fff1c9;color:#7a5600}
.step{display:grid;grid-template-columns:minmax(320px,820px) minmax(280px,1fr);gap:16px;background:#fff;
      border:1px solid #dde1e8;border-radius:6px;padding:12px;margin:12px 0}
.shot{position:relative;width:100%;line-height:0;border:1px solid #ccd}
.shot img{display:block;width:100%;height:auto}
.shot.noimg{background:repeating-linear-gradient(45deg,#eee,#eee 10px,#f7f7f7 10px,#f7f7f7 20px)}
.shot svg{position:absolute;left:0;top:0;width:100%;height:100%;pointer-events:none;overflow:visible}
pre{white-space:pre-wrap;word-break:break-word;background:#f3f4f7;border:1px solid #e2e5ea;padding:6px 8px;margin:4px 0;
    max-height:240px;overflow:auto;font-size:12px;line-height:1.35}
.meta{color:#5b6475;font-size:12px}
.err{color:#a11}
.strip a{display:inline-block;min-width:26px;text-align:center;margin:1px;padding:1px 3px;border-radius:3px;
         background:#e4e7ec;color:#1d2330;text-decoration:none;font-size:12px}
.strip a.pos{background:#cdeed6}.strip a.neg{background:#f8d3d3}
img.plot{max-width:100%;background:#fff;border:1px solid #dde1e8;margin:4px 8px 4px 0}
"""

STROKE = "#ff2d55"
BOX = "#ffb000"
ARROW = "#1e90ff"


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _label(x: float, y: float, text: str, cls: str, width: int, height: int, color: str = "#1d2330") -> str:
    """A text label with a dark background, kept inside the screenshot."""
    size = max(14, round(width / 64))
    w = min(width - 4, 0.6 * size * len(text) + 14)
    x = min(max(2.0, x), width - w - 2)
    y = min(max(2.0, y), height - size - 10)
    return (f'<g class="{cls}"><rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{size + 8}" rx="4" fill="{color}" '
            f'fill-opacity="0.85"/><text x="{x + 7:.1f}" y="{y + size:.1f}" font-size="{size}" fill="#fff" '
            f'font-family="monospace">{_e(text)}</text></g>')


def _banner(text: str, cls: str, width: int, height: int) -> str:
    return _label(8, 8, text, cls, width, height)


def _box(target: dict[str, Any] | None, cls: str = "overlay-box") -> tuple[str, tuple[float, float, float, float] | None]:
    if not target or target.get("missing"):
        return "", None
    x, y, w, h = (float(target[k]) for k in ("x", "y", "width", "height"))
    return (f'<rect class="{cls}" data-bid="{_e(target["bid"])}" x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" '
            f'fill="{BOX}" fill-opacity="0.18" stroke="{BOX}" stroke-width="3"/>'), (x, y, w, h)


def _point(p: A.Point, width: int, height: int) -> tuple[float, float]:
    return p.to_pixels(width, height)


def overlay(step: dict[str, Any]) -> str:
    """The SVG elements drawn over one step's screenshot (in its pixel space)."""
    width, height = int(step.get("width") or 1280), int(step.get("height") or 720)
    try:
        action = action_from_json(step.get("action"))
    except Exception:   # a file written by a newer version: show the text, draw nothing
        return _banner(_short(step.get("action_text") or "?"), "overlay-label", width, height)
    if action is None:
        return _banner("unparsed model output: no action (noop)", "overlay-label overlay-invalid", width, height)
    parts: list[str] = []
    match action:
        case A.ClickAt() | A.HoverAt():
            x, y = _point(action.point, width, height)
            hover = isinstance(action, A.HoverAt)
            name = "hover" if hover else ("right click" if action.button == A.MouseButton.RIGHT else
                                          "double click" if action.click_count == 2 else "click")
            dash = ' stroke-dasharray="6 4"' if hover else ""
            parts.append(f'<circle class="overlay-{"hover" if hover else "click"}" data-x="{x:.1f}" data-y="{y:.1f}" cx="{x:.1f}" '
                         f'cy="{y:.1f}" r="16" fill="{STROKE}" fill-opacity="0.25" stroke="{STROKE}" stroke-width="4"{dash}/>')
            parts.append(f'<path d="M{x - 26:.1f} {y:.1f}H{x + 26:.1f}M{x:.1f} {y - 26:.1f}V{y + 26:.1f}" stroke="{STROKE}" stroke-width="2"/>')
            parts.append(_label(x + 22, y + 18, f"{name} ({x:.0f}, {y:.0f})", "overlay-caption", width, height))
        case A.Drag(from_=a, to=b):
            (x1, y1), (x2, y2) = _point(a, width, height), _point(b, width, height)
            parts.append(f'<circle cx="{x1:.1f}" cy="{y1:.1f}" r="9" fill="{ARROW}"/>')
            parts.append(f'<line class="overlay-drag" data-x1="{x1:.1f}" data-y1="{y1:.1f}" data-x2="{x2:.1f}" data-y2="{y2:.1f}" '
                         f'x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{ARROW}" stroke-width="5" '
                         f'marker-end="url(#arrow)"/>')
            parts.append(_label((x1 + x2) / 2 + 10, (y1 + y2) / 2 + 10, "drag", "overlay-caption", width, height))
        case A.Scroll(delta_x=dx, delta_y=dy, at=at):
            x, y = _point(at, width, height) if at is not None else (width / 2, height / 2)
            norm = math.hypot(dx, dy) or 1.0
            length = min(160.0, 40 + norm / 4)
            x2, y2 = x + dx / norm * length, y + dy / norm * length
            parts.append(f'<line class="overlay-scroll" x1="{x:.1f}" y1="{y:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{ARROW}" '
                         f'stroke-width="6" stroke-dasharray="10 6" marker-end="url(#arrow)"/>')
            parts.append(_label(x + 14, y - 40, f"scroll ({dx:g}, {dy:g})", "overlay-caption", width, height))
        case A.ClickElement() | A.Fill() | A.SelectOption() | A.Hover():
            box, rect = _box(step.get("target"))
            kind = A.kind_of(action).replace("_", " ")
            if rect is None:
                parts.append(_banner(f"{kind}: element [{action.bid}] is not on the page", "overlay-label overlay-missing", width, height))
            else:
                x, y, w, h = rect
                parts.append(box)
                text = f"{kind} [{action.bid}]"
                if isinstance(action, A.Fill):
                    parts.append(_label(x, y + h + 6, f'"{_short(action.text, 48)}"', "overlay-text", width, height, "#114a9c"))
                elif isinstance(action, A.SelectOption):
                    text += " → " + _short(", ".join(action.values), 40)
                parts.append(_label(x, y - 34, text, "overlay-caption", width, height))
        case A.TypeText(text=text, press_enter=enter):
            parts.append(_banner(f'type "{_short(text, 70)}"' + (" ⏎" if enter else ""), "overlay-text", width, height))
        case A.KeyPress(keys=keys):
            parts.append(_banner(f"key {keys}", "overlay-label overlay-key", width, height))
        case A.Goto(url=url):
            parts.append(_banner(f"go to {_short(url, 70)}", "overlay-label", width, height))
        case A.SendMessage(text=text):
            parts.append(_banner(f'answer: "{_short(text, 70)}"', "overlay-label overlay-message", width, height))
        case A.ReportInfeasible(reason=reason):
            parts.append(_banner(f"infeasible: {_short(reason, 70)}", "overlay-label overlay-message", width, height))
        case _:
            parts.append(_banner(A.kind_of(action).replace("_", " "), "overlay-label", width, height))
    return "".join(parts)


# defined once per page, referenced by every overlay's drag and scroll lines
MARKER_DEFS = (f'<svg width="0" height="0" style="position:absolute" aria-hidden="true"><defs><marker id="arrow" '
               f'viewBox="0 0 10 10" refX="8" refY="5" markerWidth="5" markerHeight="5" orient="auto-start-reverse">'
               f'<path d="M0 0L10 5L0 10z" fill="{ARROW}"/></marker></defs></svg>')


def pretty(action: A.Action | None) -> str:
    """A short form for people: points as (x, y) (‰ for Qwen3-VL's 0-1000 space), defaults left out."""
    if action is None:
        return "none (noop)"
    args = []
    for f in dataclasses.fields(action):
        value = getattr(action, f.name)
        if value is None or (f.name == "button" and value == A.MouseButton.LEFT) or (f.name == "click_count" and value == 1):
            continue
        if isinstance(value, A.Point):
            unit = "‰" if value.space == A.CoordinateSpace.NORMALIZED_1000 else ""
            value = f"({value.x:g}{unit}, {value.y:g}{unit})"
        elif isinstance(value, A.MouseButton):
            value = value.name.lower()
        elif isinstance(value, tuple):
            value = "[" + ", ".join(map(repr, value)) + "]"
        else:
            value = repr(value)
        args.append(f"{f.name.rstrip('_')}={value}")
    return f"{A.kind_of(action)}({', '.join(args)})"


def _shot(src: str, width: int, height: int, svg_body: str, alt: str) -> str:
    svg = (f'<svg class="overlay" viewBox="0 0 {width} {height}" preserveAspectRatio="none" '
           f'xmlns="http://www.w3.org/2000/svg">{svg_body}</svg>')
    if src:
        return f'<div class="shot"><img src="{_e(src)}" width="{width}" height="{height}" alt="{_e(alt)}">{svg}</div>'
    return f'<div class="shot noimg" style="aspect-ratio:{width}/{height}" title="no screenshot recorded">{svg}</div>'


def _outcome_badge(e: dict[str, Any]) -> str:
    label = outcome(e)
    cls = {"env failure": "envfail"}.get(label, label)
    return f'<span class="badge {cls}">{_e(label)}</span>'


def _page(title: str, header: str, body: str) -> str:
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{_e(title)}</title>'
            f'<meta name="viewport" content="width=device-width, initial-scale=1"><style>{CSS}</style></head>'
            f'<body><header>{header}</header><main>{body}</main></body></html>')


def _rewards_table(step: dict[str, Any]) -> str:
    rows = "".join(f"<tr><td>{_e(k)}</td><td>{v:+.2f}</td></tr>" for k, v in sorted(step.get("components", {}).items()))
    return f'<table class="rewards"><tr><th>reward</th><th class="reward-total">{step["reward"]:+.2f}</th></tr>{rows}</table>'


def _pretty_step(step: dict[str, Any]) -> str:
    try:
        return pretty(action_from_json(step.get("action")))
    except Exception:
        return step.get("action_text") or "none (noop)"


def render_step(step: dict[str, Any]) -> str:
    i = step["step"]
    width, height = int(step.get("width") or 1280), int(step.get("height") or 720)
    shot = _shot(step.get("screenshot", ""), width, height, overlay(step), f"step {i}")
    timing = step.get("timing", {})
    times = " · ".join(f"{k.removesuffix('_s')} {v * 1000:.0f} ms" for k, v in timing.items())
    status = "ok" if step.get("action_ok") else "failed"
    details = [
        f'<h2>step {i}</h2><div class="meta">{_e(step.get("url", ""))}</div>',
        f'<div><b>action</b> <code class="action-text">{_e(_pretty_step(step))}</code> '
        f'<span class="{"" if step.get("action_ok") else "err"}">{status}</span></div>',
    ]
    if step.get("action_error"):
        details.append(f'<div class="err">action error: {_e(step["action_error"])}</div>')
    if step.get("parse_error"):
        details.append(f'<div class="err parse-error">parse error: {_e(step["parse_error"])}</div>')
    details.append(f'<div><b>model output</b></div><pre class="raw-text">{_e(step.get("raw_text", ""))}</pre>')
    details.append(_rewards_table(step))
    extra = f"logprob {step.get('logprob', 0.0):.3f}" + (f" · {step['tokens']} tokens" if step.get("tokens") else "")
    details.append(f'<div class="meta">{_e(times)}<br>{_e(extra)}</div>')
    kind = (step.get("action_text") or "none(").split("(")[0]
    return (f'<section class="step" id="step-{i}" data-step="{i}" data-kind="{_e(kind)}" data-reward="{step["reward"]:.4f}">'
            f'<div>{shot}</div><div>{"".join(details)}</div></section>')


def render_episode(summary: dict[str, Any], steps: Sequence[dict[str, Any]], eval_id: str = "") -> str:
    title = f"{summary['task_id']} seed {summary['seed']}"
    header = (f'<div class="meta"><a href="../../index.html">← {_e(eval_id or "evaluation")}</a></div>'
              f'<h1>{_e(title)} {_outcome_badge(summary)}</h1><div>{_e(summary.get("goal", ""))}</div>')
    strip = "".join(
        f'<a href="#step-{s["step"]}" class="{"pos" if s["reward"] > 0 else "neg" if s["reward"] < 0 else ""}" '
        f'title="{_e(s.get("action_text", ""))} ({s["reward"]:+.2f})">{s["step"]}</a>' for s in steps)
    final = summary.get("final_screenshot", "")
    details = "".join(f"<li>{_e(d)}</li>" for d in summary.get("eval_details", [])) or "<li>none</li>"
    evaluation = (
        f'<section id="final" class="final"><h2>final evaluation {_outcome_badge(summary)}</h2>'
        f'<table><tr><th>return</th><td class="return">{summary["return"]:.2f}</td></tr>'
        f'<tr><th>success bonus</th><td>{summary.get("success_bonus", 0.0):.2f}</td></tr>'
        f'<tr><th>steps</th><td>{summary["length"]}</td></tr>'
        f'<tr><th>valid actions</th><td>{summary["valid_actions"]}/{summary["length"]}</td></tr>'
        f'<tr><th>final message</th><td>{_e(summary.get("final_message", "")) or "–"}</td></tr>'
        f'<tr><th>final URL</th><td>{_e(summary.get("final_url", ""))}</td></tr>'
        + (f'<tr><th>failure</th><td class="err">{_e(summary["env_failure_reason"])}</td></tr>' if summary.get("env_failure") else "")
        + f'</table><div><b>evaluator</b></div><ul class="eval-details">{details}</ul>'
        + (f'<div class="shot final-shot" style="max-width:820px"><img src="{_e(final)}" alt="final page"></div>' if final else "")
        + "</section>"
    )
    body = (MARKER_DEFS + f'<div class="strip">steps: {strip or "none"} <a href="#final">final</a></div>'
            + "".join(render_step(s) for s in steps) + evaluation)
    return _page(title, header, body)


def write_episode_page(folder: Path, summary: dict[str, Any], steps: Sequence[dict[str, Any]], eval_id: str = "") -> Path:
    path = folder / "index.html"
    path.write_text(render_episode(summary, steps, eval_id))
    return path


def write_index_page(folder: Path, spec, episodes: Sequence[dict[str, Any]], sites, tasks) -> Path:
    header = f'<h1>Evaluation {_e(spec.eval_id)}</h1><div>{_e(spec.mode)} · route {_e(spec.route)}</div>'
    spec_rows = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in describe_spec(spec))

    def table(head: list[str], rows: list[list[str]], cls: str) -> str:
        return (f'<table class="{cls}"><tr>' + "".join(f"<th>{_e(h)}</th>" for h in head) + "</tr>"
                + "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows) + "</table>")

    site_table = [[_e(c).replace("**", "") for c in site_cells(r)] for r in sites]
    task_table = [[_e(c) for c in task_cells(r)] for r in tasks]
    ep_cells = [[f'<a href="episodes/{_e(e["key"])}/index.html">{_e(e["task_id"])}</a>', str(e["seed"]), _outcome_badge(e),
                 str(e["length"]), f'{e["return"]:.2f}', pct(e["validity"]) if e["length"] else "–",
                 _e(_short(e.get("final_message", ""), 60))] for e in episodes]
    plots = "".join(f'<img class="plot" src="{p}" alt="{p}">' for p in ("success_by_site.png", "rewards.png") if (folder / p).is_file())
    body = (f"<table>{spec_rows}</table><h2>Success per site</h2>{table(SITE_HEADER, site_table, 'sites')}"
            f"<div>{plots}</div><h2>Per task</h2>"
            + table(TASK_HEADER, task_table, "tasks")
            + f"<h2>Episodes ({len(episodes)})</h2>"
            + table(["task", "seed", "outcome", "steps", "return", "validity", "final message"], ep_cells, "episodes")
            + '<p class="meta"><a href="report.md">report.md</a> · data: episodes/*/steps.jsonl, episode.json</p>')
    path = folder / "index.html"
    path.write_text(_page(f"eval {spec.eval_id}", header, body))
    return path


__all__ = ["overlay", "render_episode", "write_episode_page", "write_index_page"]
