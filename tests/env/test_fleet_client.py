"""The env fleet client (halo.client.fleet) against real env services on loopback: sessions spread
over the replicas and pinned to their owner, a restarted client finds and closes what it left, a
draining replica (health NOT_SERVING) takes no new sessions, and a replica that appears later in
the target takes new ones after the next refresh."""

from __future__ import annotations

import asyncio
import contextlib
import socket

import pytest
from grpc_health.v1 import health_pb2

from halo.agent import actions as A
from halo.client.env import EnvClient
from halo.client.fleet import FleetEnvClient, fleet_members, is_fleet_target, resolve
from halo.errors import NotFound, Unavailable
from halo.v1 import common_pb2 as cpb

TEXT = cpb.ObservationOptions(skip_screenshot=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.asynccontextmanager
async def env_replica(sites_url: str, port: int = 0, pool_size: int = 4):
    """One more env service in this process, on the shared sites server."""
    from halo.env.config import EnvSettings
    from halo.env.server import build_service
    from halo.runtime.server import start_service

    settings = EnvSettings(port=port, metrics_port=-1, sites_url=sites_url, pool_size=pool_size, acquire_timeout_s=10)
    running = await start_service(build_service(settings), settings)
    try:
        yield running
    finally:
        await running.stop(grace=1.0)


@pytest.fixture(scope="module")
async def second(stack):
    async with env_replica(stack.sites.url) as running:
        yield running


def test_the_fleet_client_takes_every_argument_the_single_replica_client_takes():
    """A trainer holds an EnvClient and may be handed a fleet: an argument the fleet's override
    lacks fails only when a fleet target is used (a GRPO run failed on include_state that way)."""
    import inspect

    for name, method in inspect.getmembers(EnvClient, inspect.iscoroutinefunction):
        override = FleetEnvClient.__dict__.get(name)
        if name.startswith("_") or override is None:
            continue
        single = inspect.signature(method).parameters
        fleet = inspect.signature(override).parameters
        assert list(fleet) == list(single), f"FleetEnvClient.{name}{tuple(fleet)} differs from EnvClient's {tuple(single)}"


def test_fleet_targets_are_told_apart_and_malformed_ones_say_why():
    assert not is_fleet_target("127.0.0.1:50051")
    assert is_fleet_target("a:1,b:2") and is_fleet_target("fleet://env.halo.svc:50051")
    assert fleet_members("fleet://env.halo.svc:50051,[::1]:7") == [("env.halo.svc", 50051), ("::1", 7)]
    with pytest.raises(ValueError, match="'b' is not host:port"):
        fleet_members("a:1,b")
    with pytest.raises(ValueError, match="names no replica"):
        fleet_members("fleet://")


async def test_a_name_resolves_to_its_ipv4_addresses_once():
    assert await resolve([("localhost", 5), ("127.0.0.2", 6), ("no-such-host.invalid", 7)]) == {
        "127.0.0.1:5": "localhost", "127.0.0.2:6": "127.0.0.2"}


async def test_sessions_spread_over_replicas_and_stay_with_their_owner(stack, second):
    first = stack.env_target
    target = f"{first},{second.target}"
    fleet = EnvClient(target, timeout_s=60)
    assert isinstance(fleet, FleetEnvClient)
    run_id = "fleet-spread"
    try:
        created = await asyncio.gather(*(fleet.create_session("playground-signup", observation=TEXT, run_id=run_id)
                                         for _ in range(4)))
        assert fleet.placements() == {first: 2, second.target: 2}        # least loaded first: two each
        owners = {c.session_id: fleet._owners[c.session_id].address for c in created}
        for c in created:   # every call goes to the owner: the other replica does not know the session
            step = await fleet.step(c.session_id, A.Noop(), observation=TEXT)
            assert not step.env_failure and step.observation.step_index == 1
            other = second.target if owners[c.session_id] == first else first
            async with EnvClient(other) as direct:
                with pytest.raises(NotFound):
                    await direct.get_state(c.session_id)
        listed = await fleet.list_sessions(run_id=run_id)
        assert sorted(s.session_id for s in listed.sessions) == sorted(owners) and listed.total == 4
        assert (await fleet.pool_stats()).capacity == 8 + 4               # the two pools, summed

        # a restarted trainer: a new client that never saw these sessions routes to them and closes them
        async with EnvClient(target, timeout_s=60) as restarted:
            again = await restarted.observe(created[0].session_id, TEXT)
            assert again.step_index == 1
            assert await restarted.close_run_sessions(run_id) == 4
            with pytest.raises(NotFound, match="open on no replica"):
                await restarted.get_state(created[1].session_id)
    finally:
        await fleet.close()


async def test_a_hint_goes_to_one_replica_and_the_creates_of_its_key_follow_it(stack, second):
    """PrimeSessions primes exactly one key on the replica told: the fleet sends the hint whole to
    one replica and the creates of that key there, where they claim the primed sessions."""
    fleet = EnvClient(f"{stack.env_target},{second.target}", timeout_s=60)
    run_id = "fleet-hint"
    try:
        assert await fleet.prime_sessions("playground-signup", 2, seed=31, observation=TEXT, run_id=run_id) == 2
        (announced,) = fleet._announced.values()
        hinted = announced.replica
        before = await hinted.client.pool_stats()
        deadline = asyncio.get_running_loop().time() + 60
        while (await hinted.client.pool_stats()).primed_sessions < 2:
            assert asyncio.get_running_loop().time() < deadline, "the hinted replica did not prime"
            await asyncio.sleep(0.1)
        # the least loaded replica would be the other one now (the hint counts on the hinted one's load) ...
        created = [await fleet.create_session("playground-signup", seed=31, observation=TEXT, run_id=run_id)
                   for _ in range(2)]
        # ... but the creates of the hinted key go where their sessions are primed, and claim them
        assert {fleet._owners[c.session_id].address for c in created} == {hinted.address}
        after = await hinted.client.pool_stats()
        assert after.primed_starts - before.primed_starts == 2
        assert not fleet._announced or next(iter(fleet._announced.values())).count == 0
        for c in created:
            assert await fleet.close_session(c.session_id)
    finally:
        await fleet.close()


async def test_a_draining_replica_takes_no_new_sessions_but_keeps_serving_its_own(stack, second):
    fleet = EnvClient(f"{stack.env_target},{second.target}", timeout_s=60, refresh_s=0.2)
    draining = None
    try:
        kept = await fleet.create_session("playground-signup", observation=TEXT)
        owner = fleet._owners[kept.session_id].address
        draining = stack.env if owner == stack.env_target else second
        await draining.health.set("", health_pb2.HealthCheckResponse.NOT_SERVING)
        await asyncio.sleep(0.3)
        await fleet.refresh()
        news = [await fleet.create_session("playground-signup", observation=TEXT) for _ in range(3)]
        other = second.target if owner == stack.env_target else stack.env_target
        assert {fleet._owners[n.session_id].address for n in news} == {other}
        assert (await fleet.step(kept.session_id, A.Noop(), observation=TEXT)).observation.step_index == 1
        for n in [kept, *news]:
            assert await fleet.close_session(n.session_id)
    finally:
        if draining is not None:
                await draining.health.set("", health_pb2.HealthCheckResponse.SERVING)
        await fleet.close()


async def test_a_replica_that_appears_takes_new_sessions_and_one_that_dies_takes_only_its_own(stack, second):
    later = free_port()
    fleet = EnvClient(f"{stack.env_target},{second.target},127.0.0.1:{later}", timeout_s=60, refresh_s=0.2)
    try:
        first = [await fleet.create_session("playground-signup", observation=TEXT) for _ in range(2)]
        assert fleet.placements()[f"127.0.0.1:{later}"] == 0               # nothing listens there yet
        async with env_replica(stack.sites.url, port=later) as third:
            # a probe every 0.2 s: the new replica is seen within seconds (a loaded machine slows a probe)
            deadline = asyncio.get_running_loop().time() + 10
            while not (third.target in fleet.replicas and fleet.replicas[third.target].serving):
                assert asyncio.get_running_loop().time() < deadline, "the new replica was not seen in 10 s"
                await asyncio.sleep(0.1)
            on_third = await fleet.create_session("playground-signup", observation=TEXT)
            assert fleet._owners[on_third.session_id].address == third.target   # the empty one is least loaded
        # the third replica is gone with its session: that session fails, the others go on
        with pytest.raises(Unavailable):
            await fleet.step(on_third.session_id, A.Noop(), observation=TEXT)
        assert fleet.sessions_lost == 1
        for s in first:
            assert (await fleet.step(s.session_id, A.Noop(), observation=TEXT)).observation.step_index == 1
        replacement = await fleet.create_session("playground-signup", observation=TEXT)
        assert fleet._owners[replacement.session_id].address != third.target
        for s in [*first, replacement]:
            await fleet.close_session(s.session_id)
    finally:
        await fleet.close()


class PausableProxy:
    """A TCP relay to a real replica that can stop relaying: a probe through it gets no answer in
    time, as from a replica stalled by a loaded machine, while the replica itself stays healthy."""

    def __init__(self, target: str) -> None:
        self.host, port = target.rsplit(":", 1)
        self.port = int(port)
        self.open = asyncio.Event()
        self.open.set()
        self.server: asyncio.AbstractServer | None = None

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.server.sockets[0].getsockname()[1]}"

    async def __aenter__(self) -> "PausableProxy":
        self.server = await asyncio.start_server(self._relay, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc) -> None:
        self.server.close()

    async def _relay(self, reader, writer) -> None:
        upstream_reader, upstream_writer = await asyncio.open_connection(self.host, self.port)

        async def pipe(src, dst) -> None:
            with contextlib.suppress(ConnectionError, asyncio.CancelledError):
                while data := await src.read(65536):
                    await self.open.wait()
                    dst.write(data)
                    await dst.drain()
            dst.close()

        await asyncio.gather(pipe(reader, upstream_writer), pipe(upstream_reader, writer))


async def test_one_unanswered_probe_keeps_a_replica_consecutive_ones_take_it_out(stack, second, monkeypatch):
    from halo.client import fleet as fleet_module

    monkeypatch.setattr(fleet_module, "PROBE_TIMEOUT_S", 0.3)
    async with PausableProxy(second.target) as proxy:
        fleet = EnvClient(f"{stack.env_target},{proxy.target}", timeout_s=60, refresh_s=3600)
        try:
            await fleet.refresh()
            stalled = fleet.replicas[proxy.target]
            assert stalled.serving
            proxy.open.clear()                     # the replica stalls: probes get no answer
            for failed in range(1, fleet_module.EJECT_AFTER_FAILED_PROBES):
                await fleet.refresh()
                assert stalled.serving and stalled.failed_probes == failed, "one slow answer took a healthy replica out"
            proxy.open.set()                       # it answers again: the count starts over
            await fleet.refresh()
            assert stalled.serving and stalled.failed_probes == 0
            proxy.open.clear()
            for _ in range(fleet_module.EJECT_AFTER_FAILED_PROBES):
                await fleet.refresh()
            assert not stalled.serving             # unanswered probes in a row: no new sessions there
            created = await fleet.create_session("playground-signup", observation=TEXT)
            assert fleet._owners[created.session_id].address == stack.env_target
            await fleet.close_session(created.session_id)
            proxy.open.set()
            await fleet.refresh()
            assert stalled.serving                 # back at the first answered probe
        finally:
            proxy.open.set()
            await fleet.close()


NODE_SCRIPT = r"""
const halo = require('./halo');
(async () => {
  const env = halo.envFleet(process.argv[1]);
  const a = await env.call('CreateSession', {task_id: 'playground-signup', observation: {skip_screenshot: true}});
  const b = await env.call('CreateSession', {task_id: 'playground-signup', observation: {skip_screenshot: true}});
  const owners = [a, b].map((c) => env.owners.get(c.session_id).address);
  const stepped = await env.call('Step', {session_id: b.session_id, action: {noop: {}}, observation: {skip_screenshot: true}});
  const listed = await env.call('ListSessions', {run_id: ''});
  for (const c of [a, b]) await env.call('CloseSession', {session_id: c.session_id});
  env.close();
  console.log(JSON.stringify({owners, step_index: stepped.observation.step_index, listed: listed.total}));
})().catch((err) => { console.error(err.message); process.exit(1); });
"""


async def test_the_node_client_spreads_sessions_over_an_explicit_list(stack, second):
    import json
    import shutil
    from pathlib import Path

    node_dir = Path(__file__).resolve().parents[2] / "clients" / "node"
    target = f"{stack.env_target},{second.target}"
    proc = await asyncio.create_subprocess_exec(
        shutil.which("node") or "node", "-e", NODE_SCRIPT, target, cwd=node_dir,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, err.decode()
    result = json.loads(out)
    assert sorted(result["owners"]) == sorted([stack.env_target, second.target])   # one on each: least loaded
    assert result["step_index"] == 1 and result["listed"] >= 2


def test_halo_train_refuses_a_malformed_fleet_and_env_with_submit():
    import subprocess
    import sys
    from pathlib import Path

    halo = str(Path(sys.executable).parent / "halo")
    bad = subprocess.run([halo, "train", "--env", "10.0.0.5:50051,10.0.0.6"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "'10.0.0.6' is not host:port" in bad.stderr
    both = subprocess.run([halo, "train", "--env", "a:1,b:2", "--submit", "t:1"], capture_output=True, text=True, timeout=120)
    assert both.returncode == 2 and "--env is for a local run" in both.stderr
