"""Prometheus metrics of training runs (one series per run and metric name)."""

from prometheus_client import Gauge

RUN_STEP = Gauge("halo_train_step", "completed training steps", ["run"])
RUN_METRIC = Gauge("halo_train_metric", "last value of a run's step metric", ["run", "metric"])
RUN_STATE = Gauge("halo_train_run_state", "run state (index in pending, running, stopping, stopped, succeeded, failed, interrupted)", ["run"])


def observe_step(run_id: str, step: int, values: dict[str, float]) -> None:
    RUN_STEP.labels(run_id).set(step)
    for name, value in values.items():
        RUN_METRIC.labels(run_id, name).set(value)
