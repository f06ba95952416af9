"""Evaluation harness: `halo eval` runs a policy mode on REAL tasks through the services, saves every
episode (steps JSONL + JPEG screenshots) under `evals/<eval_id>/`, and writes a Markdown report
with PNG plots and a static HTML trajectory viewer.

    modes.py     mode -> gateway route + adapter (gpt5_baseline, qwen3vl_base/grpo/mcts, embedded)
    store.py     the on-disk layout of an eval: spec, episodes, steps, screenshots (resume = skip saved)
    harness.py   the loop: tasks x seeds over N workers, each episode through rollout.run_episode
    report.py    per-task / per-site tables, Markdown report, plots, side-by-side comparison
    viewer.py    static HTML pages: the run's index and one page per episode with actions drawn on screenshots
    hosted.py    an eval as a trainer-service job (RunSpec kind "eval")
    cli.py       `halo eval ...`
"""
