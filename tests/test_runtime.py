"""The shared service runtime: settings from flags and env vars, bearer-token auth, health."""

from __future__ import annotations

import pytest

from halo.client.trainer import TrainerClient
from halo.errors import Unauthenticated
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
    running = await start_service(build_service(settings), settings)
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
