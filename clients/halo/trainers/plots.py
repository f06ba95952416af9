"""Reward and success curves of a run, as one PNG (written at the end of `halo train`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


def plot_curves(rows: Sequence[dict[str, float]], out: Path, title: str = "", eval_label: str = "greedy eval",
                sampled: str = "") -> Path:
    """`eval_label` names what the greedy evaluation covers (which tasks, which seeds): the plot
    must not call an evaluation on the training tasks held-out. `sampled` names what a step's
    sampled reward and success cover (its episodes, on training seeds), under the plots."""
    kind = " (sampled)" if sampled else ""
    import matplotlib

    matplotlib.use("Agg")  # no display on servers and CI
    import matplotlib.pyplot as plt

    steps = [r["step"] for r in rows]
    fig, (ax_reward, ax_success) = plt.subplots(1, 2, figsize=(11, 4))
    ax_reward.plot(steps, [r.get("mean_reward", 0.0) for r in rows], marker="o", label=f"mean episode reward{kind}")
    ax_reward.set_xlabel("training step")
    ax_reward.set_ylabel("reward")
    ax_reward.grid(alpha=0.3)
    ax_reward.legend()
    ax_success.plot(steps, [r.get("success_rate", 0.0) for r in rows], marker="o", color="tab:green", label="success rate (agisdk, sampled)" if sampled else "success rate (agisdk)")
    if any("success_rate_strict" in r for r in rows):
        ax_success.plot(steps, [r.get("success_rate_strict", 0.0) for r in rows], marker="^", linestyle="--", color="tab:olive",
                        label=f"strict success rate{kind}")
    for key, style, label in (("eval_success_rate", dict(marker="s", color="tab:purple"), eval_label),
                              ("eval_success_rate_strict", dict(marker="D", linestyle="--", color="tab:pink"), f"{eval_label}, strict")):
        if any(key in r for r in rows):
            ev = [(0, r[f"{key}_untrained"]) for r in rows if f"{key}_untrained" in r]
            ev += [(r["step"], r[key]) for r in rows if key in r]
            ax_success.plot([s for s, _ in ev], [v for _, v in ev], label=label, **style)
    ax_success.set_ylim(-0.05, 1.05)
    ax_success.set_xlabel("training step")
    ax_success.set_ylabel("success rate")
    ax_success.grid(alpha=0.3)
    ax_success.legend(fontsize="small")
    fig.suptitle(title)
    if sampled:
        fig.text(0.5, 0.01, f"sampled curves: {sampled}", ha="center", fontsize="small")
    fig.tight_layout(rect=(0, 0.04 if sampled else 0, 1, 1))
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out
