"""Session-aware drain of the env service, with real processes (issue 36, item 1).

Two `halo serve env` processes on one sites server. SIGTERM to a replica holding two sessions:
health turns NOT_SERVING (liveness stays SERVING), a new create through a fleet client that still
believes the replica serves is refused with DRAINING and lands on the other replica, the held
sessions step to their end and close, and the process exits after the last close; a second SIGTERM
cuts a drain short. A replica whose client never closes exits when --drain-timeout-s passes,
serving the held session until then.
"""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from grpc_health.v1 import health_pb2

from halo.agent import actions as A
from halo.client.env import EnvClient
from halo.client.fleet import FleetEnvClient
from halo.errors import ResourceExhausted, Unavailable
from halo.v1 import common_pb2 as cpb
from halo.v1 import env_pb2 as pb

from tests.env.test_fleet_client import free_port

TEXT = cpb.ObservationOptions(skip_screenshot=True)
TASK = "playground-signup"
#: a Chromium and a Python service starting on a loaded 2-core machine: seconds idle, a minute loaded
START_PATIENCE_S = 180.0


@dataclass
class EnvProcess:
    """`halo serve env` in a process of its own, with the flags a test names."""

    sites_url: str
    flags: list[str] = field(default_factory=list)   # --metrics-port -1 unless one is named
    port: int = field(default_factory=free_port)
    proc: asyncio.subprocess.Process | None = None

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    async def start(self) -> None:
        halo = str(Path(sys.executable).parent / "halo")
        metrics = [] if "--metrics-port" in self.flags else ["--metrics-port", "-1"]
        self.proc = await asyncio.create_subprocess_exec(
            halo, "serve", "env", "--port", str(self.port), "--sites-url", self.sites_url,
            "--log-level", "warning", "--warm-contexts", "0", *metrics, *self.flags,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
        )
        async with EnvClient(self.target) as client:
            deadline = asyncio.get_running_loop().time() + START_PATIENCE_S
            while not await client.healthy("halo.v1.EnvService", timeout_s=1):
                assert self.proc.returncode is None, "the env service exited while starting"
                assert asyncio.get_running_loop().time() < deadline, "the env service did not become healthy"
                await asyncio.sleep(0.2)

    def terminate(self) -> None:
        assert self.proc is not None
        self.proc.terminate()   # SIGTERM, as the kubelet sends it

    async def exited(self, timeout_s: float) -> int:
        assert self.proc is not None
        return await asyncio.wait_for(self.proc.wait(), timeout_s)

    async def kill(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.kill()
            await self.proc.wait()


async def health(client: EnvClient, service: str) -> int:
    return (await client._health.Check(health_pb2.HealthCheckRequest(service=service), timeout=5)).status


@pytest.fixture(scope="module")
def sites():
    from halo.sites.server import BackgroundSitesServer, SitesSettings

    server = BackgroundSitesServer(SitesSettings(port=0, data_dir="")).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.mark.timeout(600)
async def test_a_draining_replica_serves_its_sessions_to_the_end_sends_creates_elsewhere_and_exits(sites):
    drained = EnvProcess(sites.url, ["--pool-size", "8", "--drain-timeout-s", "300"])
    other = EnvProcess(sites.url, ["--pool-size", "2", "--drain-timeout-s", "300"])
    await drained.start()   # one after the other: two Chromiums starting at once crawl on 2 cores
    await other.start()
    fleet = FleetEnvClient(f"{drained.target},{other.target}", timeout_s=120, refresh_s=3600)
    try:
        async with EnvClient(drained.target, timeout_s=120) as a, EnvClient(other.target, timeout_s=120) as b:
            held = [await a.create_session(TASK, observation=TEXT) for _ in range(2)]
            busy = await b.create_session(TASK, observation=TEXT)
            # the fleet's one look (refresh_s is an hour): the drained replica is the less loaded
            # (2 of 8 against 1 of 2), and it will not look again before the create below
            await fleet.refresh()
            assert fleet._choose(set()).address == drained.target

            drained.terminate()
            while await health(a, "") == health_pb2.HealthCheckResponse.SERVING:
                await asyncio.sleep(0.05)
            assert await health(a, "halo.v1.EnvService") == health_pb2.HealthCheckResponse.NOT_SERVING
            assert await health(a, "liveness") == health_pb2.HealthCheckResponse.SERVING   # no restart mid-drain
            with pytest.raises(Unavailable, match="draining"):
                await a.create_session(TASK, observation=TEXT)
            assert await a.prime_sessions(TASK, 2, observation=TEXT) == 0

            # the fleet still believes the drained replica serves: the refusal sends the create on
            placed = await fleet.create_session(TASK, observation=TEXT)
            assert fleet._owners[placed.session_id].address == other.target
            assert not fleet.replicas[drained.target].serving and fleet.sessions_lost == 0

            # the held sessions are served to their end: steps, observations, state, the last message
            for session in held:
                step = await a.step(session.session_id, A.Noop(), observation=TEXT)
                assert not step.env_failure and step.observation.step_index == 1
                end = await a.step(session.session_id, A.SendMessage("done"), observation=TEXT)
                assert end.done and end.termination == pb.TERMINATION_MESSAGE_SENT and not end.env_failure
                assert (await a.get_state(session.session_id)).done
            assert await a.close_session(held[0].session_id)
            await asyncio.sleep(1.0)   # ten polls of the drain: one session still open keeps it running
            assert drained.proc.returncode is None
            assert (await a.observe(held[1].session_id, TEXT)).step_index == 2
            assert await a.close_session(held[1].session_id)
            assert await drained.exited(120) == 0   # after the last close, its browsers closed


            # the other replica holds two sessions; SIGTERM drains it, a second SIGTERM (kubectl delete
            # --grace-period=0, a user's second Ctrl-C) cuts the 300 s drain short
            other.terminate()
            while await health(b, "") == health_pb2.HealthCheckResponse.SERVING:
                await asyncio.sleep(0.05)
            assert (await b.get_state(busy.session_id)).task_id   # draining: still served
            other.terminate()
            assert await other.exited(120) == 0
    finally:
        await fleet.close()
        await drained.kill()
        await other.kill()


def metric(text: str, name: str) -> float:
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(name + " "))


@pytest.mark.timeout(600)
async def test_demand_is_published_and_a_client_that_never_closes_meets_the_drain_timeout(sites):
    """A full pool publishes the creates that wait and those refused (an autoscaler's demand signal,
    beyond the sessions open); then SIGTERM with a session its client never closes: served until the
    drain timeout, then the process exits."""
    metrics_port = free_port()
    replica = EnvProcess(sites.url, ["--pool-size", "1", "--acquire-timeout-s", "4", "--drain-timeout-s", "6",
                                     "--session-ttl-s", "3600", "--metrics-port", str(metrics_port)])
    await replica.start()
    try:
        async with EnvClient(replica.target, timeout_s=120) as client, httpx.AsyncClient(timeout=5) as http:
            async def scrape() -> str:
                return (await http.get(f"http://127.0.0.1:{metrics_port}/metrics")).text

            session = await client.create_session(TASK, observation=TEXT)
            waiting = asyncio.create_task(client.create_session(TASK, observation=TEXT))
            while metric(await scrape(), "halo_env_creates_waiting") != 1:
                assert not waiting.done(), "the second create ended before it was seen waiting"
                await asyncio.sleep(0.05)
            with pytest.raises(ResourceExhausted):
                await waiting
            text = await scrape()
            assert metric(text, "halo_env_creates_waiting") == 0
            assert metric(text, "halo_env_pool_rejections_total") == 1

            replica.terminate()
            while await health(client, "") == health_pb2.HealthCheckResponse.SERVING:
                await asyncio.sleep(0.05)
            # draining, and the session is still served (the client just never closes it)
            assert (await client.step(session.session_id, A.Noop(), observation=TEXT)).observation.step_index == 1
            assert replica.proc.returncode is None
            assert await replica.exited(120) == 0   # the idle TTL is an hour: only the drain timeout ends it
    finally:
        await replica.kill()
