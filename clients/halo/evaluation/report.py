"""Tables, Markdown reports and plots of evaluation runs, and two runs side by side.

Success rate counts finished, scorable episodes only: an infrastructure failure (browser crash,
backend down) or a task agisdk cannot score says nothing about the policy. Validity is the share of
steps whose model output parsed into an action the page accepted.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from halo.evaluation.records import EvalSpec, describe_spec
from halo.evaluation.store import EvalStore
from halo.evaluation.summary import (ALL, SITE_HEADER, TASK_HEADER, Row, group_by, mean_of, site_cells, num, outcome, pct, site_rows,
                                     task_cells, task_rows)
from halo.evaluation.viewer import write_episode_page, write_index_page

def _md_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
    return "\n".join(lines)


# ------------------------------------------------------------------------------- plots

def _plt():
    import matplotlib

    matplotlib.use("Agg")  # no display on servers and CI
    import matplotlib.pyplot as plt

    return plt


def plot_success_by_site(rows: Sequence[Row], out: Path, title: str = "") -> Path:
    plt = _plt()
    fig, ax = plt.subplots(figsize=(max(5, 1.1 * len(rows) + 2), 4))
    names = [r.name for r in rows]
    values = [_rate(r) for r in rows]
    bars = ax.bar(names, values, color=["tab:gray" if r.name == ALL else "tab:green" for r in rows], label="success (agisdk)")
    # strict success never exceeds agisdk's: its bar drawn over agisdk's shows both
    ax.bar(names, [_rate(r, strict=True) for r in rows], fill=False, hatch="//", edgecolor="black", label="strict success")
    for bar, r in zip(bars, rows):
        ax.annotate(f"{pct(r.success_rate)}\n{r.successes}/{r.scored}\nstrict {pct(r.success_rate_strict)}",
                    (bar.get_x() + bar.get_width() / 2, bar.get_height()), ha="center", va="bottom", fontsize=8)
    ax.legend(fontsize=8, loc="upper right")
    ax.set_ylim(0, 1.3)
    ax.set_ylabel("success rate")
    ax.set_title(title or "success per site")
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out


def _rate(r: Row | None, strict: bool = False) -> float:
    """A row's success rate for a bar: 0 where nothing was scored (or the side has no such row)."""
    if r is None:
        return 0.0
    rate = r.success_rate_strict if strict else r.success_rate
    return 0.0 if math.isnan(rate) else rate


def plot_rewards(episodes: Sequence[dict[str, Any]], steps: dict[str, list[dict[str, Any]]], out: Path, title: str = "") -> Path:
    """Left: cumulative reward along each episode (thin) and its per-site mean (thick). Right: returns."""
    plt = _plt()
    fig, (ax_curve, ax_hist) = plt.subplots(1, 2, figsize=(11, 4))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, (site, eps) in enumerate(group_by([e for e in episodes if not e.get("env_failure")], "site").items()):
        color = colors[i % len(colors)]
        curves = []
        for e in eps:
            total, curve = 0.0, [0.0]
            for s in steps.get(e["key"], []):
                total += s["reward"]
                curve.append(total)
            curve[-1] += e.get("success_bonus", 0.0)   # the success bonus is paid at the end
            curves.append(curve)
            ax_curve.plot(range(len(curve)), curve, color=color, alpha=0.25, linewidth=0.8)
        longest = max((len(c) for c in curves), default=0)
        mean = [mean_of([c[min(k, len(c) - 1)] for c in curves]) for k in range(longest)]
        ax_curve.plot(range(longest), mean, color=color, linewidth=2.2, label=f"{site} (mean of {len(curves)})")
    from matplotlib.ticker import MaxNLocator

    ax_curve.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax_curve.set_xlabel("step")
    ax_curve.set_ylabel("cumulative reward")
    ax_curve.grid(alpha=0.3)
    if ax_curve.lines:
        ax_curve.legend(fontsize=8)
    finished = [e for e in episodes if not e.get("env_failure")]
    wins = [e["return"] for e in finished if e["success"]]
    losses = [e["return"] for e in finished if not e["success"]]
    if wins or losses:
        ax_hist.hist([wins, losses], bins=12, stacked=True, color=["tab:green", "tab:red"],
                     label=[f"success ({len(wins)})", f"failure ({len(losses)})"])
        ax_hist.legend(fontsize=8)
    ax_hist.set_xlabel("episode return")
    ax_hist.set_ylabel("episodes")
    ax_hist.grid(alpha=0.3)
    fig.suptitle(title or "rewards")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out


# ------------------------------------------------------------------------------ report

def write_report(store: EvalStore, eval_id: str) -> Path:
    """report.md + success_by_site.png + rewards.png + the HTML viewer index; returns report.md."""
    spec = store.load_spec(eval_id)
    folder = store.eval_dir(eval_id)
    episodes = store.episodes(eval_id)
    steps = {e["key"]: store.steps(eval_id, e["key"]) for e in episodes}
    sites, tasks = site_rows(episodes), task_rows(episodes)
    planned = len(spec.task_ids) * len(spec.seeds)
    plot_success_by_site(sites, folder / "success_by_site.png", title=f"{eval_id}: success per site")
    plot_rewards(episodes, steps, folder / "rewards.png", title=f"{eval_id}: rewards")
    lines = [f"# Evaluation `{eval_id}`", ""]
    lines += [_md_table(["", ""], [[k, v] for k, v in describe_spec(spec)]), ""]
    status = "complete" if len(store.completed(eval_id)) >= planned else f"partial: {len(store.completed(eval_id))}/{planned} episodes"
    lines += [f"Episodes: {len(episodes)} saved of {planned} planned ({status}). "
              "Success rate counts finished, scorable episodes; env failures are listed apart and rerun on resume.", ""]
    lines += ["## Success per site", "", _md_table(SITE_HEADER, [site_cells(r) for r in sites]), ""]
    lines += ["![success per site](success_by_site.png)", "", "## Rewards", "", "![rewards](rewards.png)", ""]
    lines += ["## Per task", "", _md_table(TASK_HEADER + ["env failures"], [task_cells(r) + [str(r.env_failures)] for r in tasks]), ""]
    lines += ["## Episodes", "", _md_table(
        ["task", "seed", "outcome", "steps", "return", "validity", "viewer"],
        [[e["task_id"], str(e["seed"]), outcome(e), str(e["length"]), f"{e['return']:.2f}", pct(e["validity"]) if e["length"] else "–",
          f"[steps](episodes/{e['key']}/index.html)"] for e in episodes]), ""]
    lines += ["Trajectory viewer: [index.html](index.html) (a static page: open it in a browser).", ""]
    path = folder / "report.md"
    path.write_text("\n".join(lines))
    write_index_page(folder, spec, episodes, sites, tasks)
    return path


def rebuild(store: EvalStore, eval_id: str) -> Path:
    """Re-render every episode page of an eval from its saved data (after a viewer change)."""
    for e in store.episodes(eval_id):
        write_episode_page(store.eval_dir(eval_id) / "episodes" / e["key"], e, store.steps(eval_id, e["key"]), eval_id)
    write_report(store, eval_id)
    return store.eval_dir(eval_id) / "index.html"


# ----------------------------------------------------------------------------- compare

@dataclass(frozen=True)
class Comparison:
    a: EvalSpec
    b: EvalSpec
    sites: list[tuple[str, Row | None, Row | None]]
    tasks: list[tuple[str, Row | None, Row | None]]   # tasks whose success count differs, or run by one side only


def compare(store: EvalStore, eval_a: str, eval_b: str) -> Comparison:
    a, b = store.load_spec(eval_a), store.load_spec(eval_b)
    ea, eb = store.episodes(eval_a), store.episodes(eval_b)
    sa, sb = {r.name: r for r in site_rows(ea)}, {r.name: r for r in site_rows(eb)}
    names = sorted((set(sa) | set(sb)) - {ALL}) + [ALL]
    ta, tb = {r.name: r for r in task_rows(ea)}, {r.name: r for r in task_rows(eb)}
    differ = [t for t in sorted(set(ta) | set(tb))
              if t not in ta or t not in tb or (ta[t].successes, ta[t].scored) != (tb[t].successes, tb[t].scored)]
    return Comparison(a, b, [(n, sa.get(n), sb.get(n)) for n in names], [(t, ta.get(t), tb.get(t)) for t in differ])


def _delta(ra: Row | None, rb: Row | None) -> str:
    if ra is None or rb is None or math.isnan(ra.success_rate) or math.isnan(rb.success_rate):
        return "–"
    d = rb.success_rate - ra.success_rate
    return f"{d:+.0%}" if d else "0%"


def comparison_cells(c: Comparison) -> tuple[list[str], list[list[str]]]:
    A, B = c.a.eval_id, c.b.eval_id
    header = ["site", f"success {A}", f"success {B}", "Δ success", f"strict {A}", f"strict {B}", f"steps {A}", f"steps {B}",
              f"validity {A}", f"validity {B}", f"episodes {A}", f"episodes {B}"]
    rows = []
    for name, ra, rb in c.sites:
        cell = lambda r, f: "–" if r is None else f(r)  # noqa: E731
        rows.append([name, cell(ra, lambda r: pct(r.success_rate)), cell(rb, lambda r: pct(r.success_rate)), _delta(ra, rb),
                     cell(ra, lambda r: pct(r.success_rate_strict)), cell(rb, lambda r: pct(r.success_rate_strict)),
                     cell(ra, lambda r: num(r.mean_steps)), cell(rb, lambda r: num(r.mean_steps)),
                     cell(ra, lambda r: pct(r.validity)), cell(rb, lambda r: pct(r.validity)),
                     cell(ra, lambda r: str(r.episodes)), cell(rb, lambda r: str(r.episodes))])
    return header, rows


def plot_comparison(c: Comparison, out: Path) -> Path:
    plt = _plt()
    names = [n for n, _, _ in c.sites]
    fig, ax = plt.subplots(figsize=(max(5, 1.4 * len(names) + 2), 4))
    width = 0.4
    for offset, side, label, color in ((-width / 2, 1, c.a.eval_id, "tab:blue"), (width / 2, 2, c.b.eval_id, "tab:orange")):
        xs = [i + offset for i in range(len(names))]
        ax.bar(xs, [_rate(entry[side]) for entry in c.sites], width, label=f"{label} ({getattr(c, 'ab'[side - 1]).mode})", color=color)
        # strict success (never above agisdk's) hatched over each bar
        ax.bar(xs, [_rate(entry[side], strict=True) for entry in c.sites], width, fill=False, hatch="//", edgecolor="black",
               label="strict success" if side == 1 else None)
    ax.set_xticks(range(len(names)), names)
    ax.set_ylim(0, 1.1)
    ax.set_ylabel("success rate")
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out


def write_comparison(store: EvalStore, c: Comparison, out_dir: Path) -> Path:
    """compare.md + compare.png in out_dir; returns compare.md."""
    out_dir.mkdir(parents=True, exist_ok=True)
    png = plot_comparison(c, out_dir / "compare.png")
    header, rows = comparison_cells(c)
    lines = [f"# `{c.a.eval_id}` vs `{c.b.eval_id}`", ""]
    lines += [_md_table(["", c.a.eval_id, c.b.eval_id],
                        [[k, va, vb] for (k, va), (_, vb) in zip(describe_spec(c.a), describe_spec(c.b))]), ""]
    lines += ["## Success per site", "", _md_table(header, rows), "", f"![comparison]({png.name})", ""]
    if c.tasks:
        lines += ["## Tasks that differ", "", _md_table(
            ["task", c.a.eval_id, c.b.eval_id, f"strict {c.a.eval_id}", f"strict {c.b.eval_id}"],
            [[t, "–" if ra is None else f"{ra.successes}/{ra.scored}", "–" if rb is None else f"{rb.successes}/{rb.scored}",
              "–" if ra is None else f"{ra.successes_strict}/{ra.scored}", "–" if rb is None else f"{rb.successes_strict}/{rb.scored}"]
             for t, ra, rb in c.tasks]), ""]
    path = out_dir / "compare.md"
    path.write_text("\n".join(lines))
    return path
