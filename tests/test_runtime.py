"""The shared service runtime: settings from flags and env vars, bearer-token auth, health."""

from __future__ import annotations

import asyncio

import pytest

from halo.client.trainer import TrainerClient
from halo.cli.registry import resolve_trainer
from halo.errors import Unauthenticated
from halo.runtime.aio import acquire_within
from halo.runtime.server import start_service
from halo.trainer.config import TrainerSettings
from halo.trainer.server import build_service


def test_settings_come_from_flags_over_env_vars_over_defaults(monkeypatch):
    monkeypatch.setenv("HALO_TRAINER_RUNS_DIR", "/from/env")
    monkeypatch.setenv("HALO_TRAINER_PORT", "6000")
    settings = TrainerSettings.from_cli(["--port", "7000"])
    assert settings.port == 7000 and settings.runs_dir == "/from/env"
    assert settings.env_target == "127.0.0.1:50051"  # default that works on one machine
    with pytest.raises(SystemExit):
        TrainerSettings.from_cli(["--no-such-flag", "1"])


async def test_bearer_token_is_required_except_for_health(tmp_path):
    settings = TrainerSettings(port=0, metrics_port=-1, runs_dir=str(tmp_path), auth_token="s3cret")
    running = await start_service(build_service(settings, resolver=resolve_trainer), settings)
    try:
        async with TrainerClient(running.target) as anonymous:
            assert await anonymous.healthy()  # probes (docker healthchecks) need no token
            with pytest.raises(Unauthenticated):
                await anonymous.list_runs()
        async with TrainerClient(running.target, token="wrong") as wrong:
            with pytest.raises(Unauthenticated):
                await wrong.list_runs()
        async with TrainerClient(running.target, token="s3cret") as client:
            assert await client.list_runs() == []
    finally:
        await running.stop(grace=1)


@pytest.mark.parametrize("turns_before_cancel", range(6))
async def test_a_wait_for_a_slot_cancelled_as_the_slot_frees_stays_cancelled(turns_before_cancel):
    """Python 3.11's wait_for swallowed this cancellation for some interleavings: the caller got the
    slot although its RPC was gone (the env service then built a session nobody received)."""
    slots = asyncio.Semaphore(1)
    await slots.acquire()
    waiter = asyncio.create_task(acquire_within(slots, 5.0))
    await asyncio.sleep(0.01)
    slots.release()
    for _ in range(turns_before_cancel):
        await asyncio.sleep(0)
    if waiter.cancel():     # still running: the cancellation must win and the slot be given back
        with pytest.raises(asyncio.CancelledError):
            await waiter
        assert not slots.locked(), "the cancelled waiter kept the slot"
    else:                   # it had already taken the slot and returned: nothing left to cancel
        assert waiter.result() is None and slots.locked()


async def test_a_wait_for_a_slot_times_out_or_takes_a_free_one_at_once():
    slots = asyncio.Semaphore(1)
    await acquire_within(slots, 0)
    with pytest.raises(TimeoutError):
        await acquire_within(slots, 0)
    with pytest.raises(TimeoutError):
        await acquire_within(slots, 0.05)
    slots.release()
    await acquire_within(slots, 0.05)
    assert slots.locked()


async def test_readiness_sets_the_services_health_while_the_process_stays_serving(tmp_path, monkeypatch):
    """The env service without its sites server: its name is NOT_SERVING (a trainer waits for it),
    the process's own status stays SERVING (it is alive: nothing restarts it)."""
    import dataclasses

    from halo.runtime import server as runtime

    monkeypatch.setattr(runtime, "READINESS_INTERVAL_S", 0.05)
    why = ["the sites server does not answer"]

    async def readiness() -> str:
        return why[0]

    settings = TrainerSettings(port=0, metrics_port=-1, runs_dir=str(tmp_path))
    spec = dataclasses.replace(build_service(settings, resolver=resolve_trainer), readiness=readiness)
    running = await start_service(spec, settings)
    try:
        async with TrainerClient(running.target) as client:
            async def until(service_ready: bool) -> None:
                while await client.healthy("halo.v1.TrainerService") != service_ready:
                    await asyncio.sleep(0.02)

            await asyncio.wait_for(until(False), 10)
            assert await client.healthy()
            why[0] = ""
            await asyncio.wait_for(until(True), 10)
    finally:
        await running.stop(grace=1)
    assert running._readiness is not None and running._readiness.cancelled()


def test_on_off_settings_are_flags_and_the_old_true_false_form_still_works(capsys):
    from halo.env.config import EnvSettings

    assert EnvSettings.from_cli(["--no-prime-hints"]).prime_hints is False
    assert EnvSettings.from_cli(["--headless", "--port", "5"]).port == 5
    assert capsys.readouterr().err == ""
    old = EnvSettings.from_cli(["--prime-hints", "false", "--guard-grader=no", "--allow-remote", "true"])
    assert (old.prime_hints, old.guard_grader, old.allow_remote) == (False, False, True)
    assert "--prime-hints false is deprecated; use --no-prime-hints" in capsys.readouterr().err
    both = EnvSettings.from_cli(["--prime-hints", "--headless", "false"])   # a bare flag, then an old-form one
    assert both.prime_hints is True and both.headless is False
