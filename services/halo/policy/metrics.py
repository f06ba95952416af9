"""Prometheus metrics of the policy gateway (scraped from the runtime's /metrics)."""

from prometheus_client import Counter, Gauge, Histogram

REQUESTS = Counter("halo_gateway_requests_total", "gateway calls", ["route", "method", "outcome"])
BACKEND_SECONDS = Histogram(
    "halo_gateway_backend_seconds", "time spent in the backend per call", ["route"],
    buckets=(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120),
)
OVERHEAD_SECONDS = Histogram(
    "halo_gateway_overhead_seconds", "gateway time around the backend call (prompt, parse, queueing)", ["route"],
    buckets=(0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1),
)
CANDIDATES = Counter("halo_gateway_candidates_total", "sampled candidates", ["route", "valid"])
REPAIRS = Counter("halo_gateway_repairs_total", "candidates that needed a repair", ["route", "repair"])
IN_FLIGHT = Gauge("halo_gateway_in_flight", "backend calls in flight", ["route"])
REJECTIONS = Counter("halo_gateway_rejections_total", "calls refused because the route's concurrency limit was full", ["route"])
ADAPTER_LOADS = Counter("halo_gateway_adapter_loads_total", "adapters loaded", ["route"])

# vLLM routes with several engines (halo.policy.backends.vllm_engines); `engine` is host:port
ENGINE_IN_FLIGHT = Gauge("halo_gateway_engine_in_flight", "requests in flight on one engine of a route", ["route", "engine"])
ENGINE_SECONDS = Histogram(
    "halo_gateway_engine_seconds", "time of one engine's answered calls", ["route", "engine"],
    buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120),
)
ENGINE_ERRORS = Counter("halo_gateway_engine_errors_total", "transient failures of one engine (each takes it out of rotation)",
                        ["route", "engine"])
ENGINE_UP = Gauge("halo_gateway_engine_up", "1 while the engine is in the route's rotation", ["route", "engine"])
ENGINE_FAILOVERS = Counter("halo_gateway_engine_failovers_total", "requests tried again on another engine after a failure",
                           ["route"])
