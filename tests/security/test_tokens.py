"""Nothing open by default: a service bound beyond loopback starts only with a bearer token (or an
explicit --allow-unauthenticated); the token may come from a file (a compose secret, a Kubernetes
Secret volume); the trainer and the reward's judge send the service's own token when given no other."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from halo.cli.serve import main as serve
from halo.reward.config import RewardSettings
from halo.runtime.settings import is_loopback
from halo.trainer.config import TrainerSettings


@pytest.fixture(autouse=True)
def _no_halo_env(monkeypatch):
    import os

    for name in [n for n in os.environ if n.startswith("HALO_")]:
        monkeypatch.delenv(name)


@pytest.mark.parametrize("host, loopback", [
    ("127.0.0.1", True), ("127.0.0.2", True), ("::1", True), ("localhost", True),
    ("0.0.0.0", False), ("::", False), ("10.1.2.3", False), ("env.internal", False),
])
def test_what_counts_as_loopback(host, loopback):
    assert is_loopback(host) is loopback


def test_loopback_needs_no_token_beyond_loopback_does():
    assert TrainerSettings().auth_token == ""                          # halo up, tests: as before
    with pytest.raises(ValidationError, match="--auth-token-file"):
        TrainerSettings(host="0.0.0.0")
    assert TrainerSettings(host="0.0.0.0", auth_token="t").auth_token == "t"
    assert TrainerSettings(host="0.0.0.0", allow_unauthenticated=True).auth_token == ""   # said explicitly


def test_the_token_from_a_file(tmp_path: Path):
    path = tmp_path / "token"
    path.write_text("s3cret\n")
    assert TrainerSettings(host="0.0.0.0", auth_token_file=str(path)).auth_token == "s3cret"
    with pytest.raises(ValidationError, match="not both"):
        TrainerSettings(auth_token="x", auth_token_file=str(path))
    path.write_text("\n")
    with pytest.raises(ValidationError, match="one line"):
        TrainerSettings(auth_token_file=str(path))
    with pytest.raises(ValidationError, match="No such file"):
        TrainerSettings(auth_token_file=str(tmp_path / "absent"))


async def test_one_token_per_deployment_the_callers_send_their_own_by_default(tmp_path: Path, monkeypatch):
    path = tmp_path / "token"
    path.write_text("deployment-token")
    monkeypatch.setenv("HALO_TRAINER_AUTH_TOKEN_FILE", str(path))
    trainer = TrainerSettings(host="0.0.0.0")
    assert (trainer.service_token or trainer.auth_token) == "deployment-token"
    assert TrainerSettings(service_token="other").service_token == "other"   # a token of its own wins

    from halo.reward.core import RewardCore
    from halo.tasks.registry import default_registry

    # (an async test: the reward core opens its judge's grpc.aio channel on the running loop)
    core = RewardCore(RewardSettings(auth_token="deployment-token", judge_target="127.0.0.1:1"), default_registry())
    assert core.judge._metadata == (("authorization", "Bearer deployment-token"),)


def test_halo_serve_says_it_in_one_line_exit_2(capsys):
    assert serve(["env", "--host", "0.0.0.0", "--metrics-port", "-1"]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("halo serve env: --host 0.0.0.0 serves beyond this machine without a token")
    assert "--auth-token-file" in line and "--allow-unauthenticated" in line
