"""Prometheus metrics of the env service (scraped from the runtime's /metrics)."""

from prometheus_client import Counter, Gauge, Histogram

SESSIONS_ACTIVE = Gauge("halo_env_sessions_active", "open env sessions")
POOL_CAPACITY = Gauge("halo_env_pool_capacity", "max concurrent env sessions")
SESSIONS_CREATED = Counter("halo_env_sessions_created_total", "sessions created", ["site"])
SESSIONS_CLOSED = Counter("halo_env_sessions_closed_total", "sessions closed", ["reason"])
POOL_REJECTIONS = Counter("halo_env_pool_rejections_total", "CreateSession refused because the pool was full")
#: demand the pool cannot serve yet: with the open sessions and the refusals, what an autoscaler scales on
CREATES_WAITING = Gauge("halo_env_creates_waiting", "CreateSession calls waiting for a free slot of the pool")
STEPS = Counter("halo_env_steps_total", "steps executed", ["site", "action", "outcome"])
STEP_SECONDS = Histogram(
    "halo_env_step_seconds", "Step latency (action + observation)", ["action"],
    buckets=(0.01, 0.025, 0.05, 0.1, 0.2, 0.35, 0.5, 0.75, 1, 2, 5, 10),
)
OBSERVE_SECONDS = Histogram(
    "halo_env_observe_seconds", "time to build an observation",
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.35, 0.5, 1, 2),
)
ENV_FAILURES = Counter("halo_env_failures_total", "environment failures (browser/site), not task failures", ["reason"])
BROWSER_RESTARTS = Gauge("halo_env_browser_restarts", "Chromium processes replaced after a crash")
CREATE_SECONDS = Histogram(
    "halo_env_create_seconds", "CreateSession latency (slot to first observation), by where the context came from",
    ["context"], buckets=(0.025, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1, 2, 5),
)
CREATE_PHASE_SECONDS = Histogram(
    "halo_env_create_phase_seconds", "time of one phase of CreateSession (slot, context, config, navigate, observe)",
    ["phase"], buckets=(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.35, 0.5, 1, 2),
)
WARM_CONTEXTS = Gauge("halo_env_warm_contexts", "browser contexts opened ahead of CreateSession, ready now")
STEP_PHASE_SECONDS = Histogram(
    "halo_env_step_phase_seconds",
    "time of one phase of Step (action, settle, axtree, screenshot, observe, state; halo.env.timings.StepTimings)",
    ["phase"], buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.35, 0.5, 1, 2, 5),
)
