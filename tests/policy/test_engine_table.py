"""A vLLM route with several engines, without vLLM: the route table's rules and the engine table's
pure functions (which engine takes a request, what a DNS answer becomes). The engines themselves
are tested against two real vLLM servers in tests/lora/test_vllm_engines.py."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from pydantic import ValidationError

from halo.policy.backends import build_backend
from halo.policy.backends.openai_compat import VllmBackend
from halo.policy.backends.vllm_engines import Engine, EngineBackend, VllmEngines, pick_engine, resolved_urls
from halo.policy.config import RouteConfig

A, B = "http://127.0.0.1:8001/v1", "http://127.0.0.1:8002/v1"


def _route(**kw) -> RouteConfig:
    return RouteConfig(**{"name": "r", "backend": "vllm", "served_model": "m", **kw})


def _engine(url: str, up: bool = True, in_flight: int = 0) -> Engine:
    return Engine(url, EngineBackend(_route(base_url=url)), up=up, in_flight=in_flight)


def test_one_url_keeps_the_single_engine_backend_and_a_list_gets_the_fleet():
    single = build_backend(_route(base_url=A))
    assert type(single) is VllmBackend and single.endpoint() == A
    fleet = build_backend(_route(base_url=[A, B]))
    assert isinstance(fleet, VllmEngines) and list(fleet.engines) == [A, B]
    assert fleet.endpoint() == f"{A},{B}"
    # discovery fills the table from DNS at start, not from the URL as written
    assert isinstance(build_backend(_route(base_url=A, discover_engines=True)), VllmEngines)


@pytest.mark.parametrize("kw, message", [
    (dict(backend="openai_compatible", base_url=[A, B]), "only a vllm route may name several engines"),
    (dict(base_url=[A, A]), "empty or repeated"),
    (dict(base_url=[A, ""]), "empty or repeated"),
    (dict(backend="openai_compatible", base_url=A, discover_engines=True), "discover_engines is for vllm"),
    (dict(base_url=[A], engine_refresh_s=0), "greater than 0"),
])
def test_a_route_table_that_misuses_several_engines_is_refused(kw, message):
    with pytest.raises(ValidationError, match=message):
        _route(**kw)


def test_the_least_busy_engine_in_rotation_takes_the_request():
    rng = random.Random(0)
    engines = [_engine(A, in_flight=3), _engine(B, in_flight=1), _engine("http://c:1/v1", up=False)]
    assert pick_engine(engines, rng).url == B
    engines[1].up = False
    assert pick_engine(engines, rng).url == A
    engines[0].up = False
    assert pick_engine(engines, rng) is None


def test_ties_are_broken_at_random_and_load_evens_out():
    rng = random.Random(1)
    engines = [_engine(A), _engine(B)]
    assert {pick_engine(engines, rng).url for _ in range(50)} == {A, B}
    taken = Counter()
    for _ in range(100):   # requests that stay in flight: each goes to the emptier engine
        engine = pick_engine(engines, rng)
        engine.in_flight += 1
        taken[engine.url] += 1
    assert taken == {A: 50, B: 50}


def test_every_address_of_a_dns_answer_is_one_engine():
    assert resolved_urls("http://vllm:8000/v1", ["10.0.0.2", "10.0.0.3", "10.0.0.2"]) == [
        "http://10.0.0.2:8000/v1", "http://10.0.0.3:8000/v1"]
    assert resolved_urls("https://vllm.ns.svc/v1", ["fd00::5"]) == ["https://[fd00::5]:443/v1"]
    assert resolved_urls("http://vllm/v1", ["10.0.0.9"]) == ["http://10.0.0.9:80/v1"]


async def test_discovery_resolves_the_host_to_its_engines():
    fleet = VllmEngines(_route(base_url="http://localhost:9/v1", discover_engines=True, engine_refresh_s=60))
    assert fleet.engines == {}
    await fleet._discover()
    assert "http://127.0.0.1:9/v1" in fleet.engines
    await fleet.close()
