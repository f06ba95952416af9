"""Prometheus metrics of the reward service (scraped from the runtime's /metrics).

Component values can be negative (penalties). prometheus-client exports no `_sum` for histograms
with negative buckets, and counters cannot go down, so the running totals are gauges that only
ever `inc()` by the (signed) value: mean = contribution / paid, per site and component.
"""

from prometheus_client import Counter, Gauge, Histogram

_REWARD_BUCKETS = (-1.0, -0.5, -0.2, -0.1, 0.0, 0.1, 0.2, 0.3, 0.5, 1.0, 2.0)

COMPONENT_PAID = Counter("halo_reward_component_paid_total", "times a reward component was paid", ["site", "component"])
COMPONENT_CONTRIBUTION = Gauge(
    "halo_reward_component_contribution", "running sum of a reward component's values", ["site", "component"],
)
TRANSITION_REWARD = Histogram(
    "halo_reward_transition_reward", "total reward of a scored transition", ["site"], buckets=_REWARD_BUCKETS,
)
TRANSITIONS = Counter("halo_reward_transitions_total", "transitions scored", ["site", "outcome"])  # scored | env_failure
EPISODE_RETURN = Histogram(
    "halo_reward_episode_return", "episode return when an episode ends", ["site"],
    buckets=(-5, -2, -1, -0.5, 0, 0.5, 1, 1.5, 2, 3, 5, 10),
)
EPISODE_RETURN_SUM = Gauge("halo_reward_episode_return_cumulative", "running sum of ended episodes' returns", ["site"])
EPISODES_OPEN = Gauge("halo_reward_episodes_open", "episodes in memory")
EPISODES_ENDED = Counter("halo_reward_episodes_ended_total", "episodes closed", ["reason"])  # ended | expired
EVAL_SECONDS = Histogram(
    "halo_reward_eval_seconds", "final evaluation latency", ["site"],
    buckets=(0.01, 0.025, 0.05, 0.1, 0.2, 0.35, 0.5, 1, 2, 5, 10, 30, 60),
)
# outcome: success | failure | env_failure (not a task failure) | unscorable
EVALUATIONS = Counter("halo_reward_evaluations_total", "final evaluations", ["site", "outcome"])
EVAL_ERRORS = Counter("halo_reward_eval_errors_total", "evals that could not run (timeout, crash)", ["site", "kind"])
