"""TLS + bearer token on a real env service (real Chromium), with certificates made at test time.

A throwaway CA signs a server certificate for 127.0.0.1 / localhost. The env service serves
with it and requires a token; the typed client, `halo health` and the real grpcurl binary reach
it only with the CA (and, for calls other than health, the token).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import ipaddress
import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from pydantic import ValidationError

from halo.agent import actions as A
from halo.client.env import EnvClient, observation_options
from halo.errors import Unauthenticated, Unavailable
from tests.env.test_grpcurl import grpcurl_binary
from tests.other_clients import assert_walked_the_signup_session, build_go_demo

TOKEN = "tls-test-token"
LIGHT = observation_options(screenshot=False)


@dataclass
class Pki:
    ca: Path          # the CA that signed the server certificate
    cert: Path        # server certificate (127.0.0.1, localhost)
    key: Path
    other_ca: Path    # a CA that signed nothing the server has


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _make_ca(common_name: str) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    now = dt.datetime.now(dt.timezone.utc)
    cert = (
        x509.CertificateBuilder().subject_name(_name(common_name)).issuer_name(_name(common_name))
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
                                     key_encipherment=False, data_encipherment=False, key_agreement=False,
                                     encipher_only=False, decipher_only=False), critical=True)
        .sign(key, hashes.SHA256())
    )
    return key, cert


def make_pki(folder: Path) -> Pki:
    ca_key, ca_cert = _make_ca("HALO test CA")
    _, other_cert = _make_ca("some other CA")
    key = ec.generate_private_key(ec.SECP256R1())
    now = dt.datetime.now(dt.timezone.utc)
    cert = (
        x509.CertificateBuilder().subject_name(_name("127.0.0.1")).issuer_name(ca_cert.subject)
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                                                    x509.DNSName("localhost")]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    pki = Pki(folder / "ca.pem", folder / "server.pem", folder / "server.key", folder / "other-ca.pem")
    pki.ca.write_bytes(_pem(ca_cert))
    pki.other_ca.write_bytes(_pem(other_cert))
    pki.cert.write_bytes(_pem(cert))
    pki.key.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()))
    pki.key.chmod(0o600)
    return pki


@pytest.fixture(scope="module")
def pki(tmp_path_factory) -> Pki:
    return make_pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture(scope="module")
async def tls_stack(pki):
    from halo.cli.stack import LocalStack

    overrides = {"pool_size": 2, "acquire_timeout_s": 10, "auth_token": TOKEN, "tls_cert": str(pki.cert), "tls_key": str(pki.key)}
    async with LocalStack(env_overrides=overrides) as stack:
        yield stack


async def test_tls_client_with_ca_and_token_drives_a_session(tls_stack, pki):
    async with EnvClient(tls_stack.env_target, token=TOKEN, tls_ca=pki.ca, timeout_s=60) as env:
        assert await env.healthy("halo.v1.EnvService")
        created = await env.create_session("playground-signup", observation=LIGHT)
        button = next(e for e in created.observation.elements if e.name == "Sign up")
        stepped = await env.step(created.session_id, A.ClickElement(bid=button.bid), observation=LIGHT)
        assert stepped.action_ok
        assert any("Thanks for signing up" in e.name for e in stepped.observation.elements)
        assert await env.close_session(created.session_id) is True
        assert (await env.pool_stats()).active_sessions == 0


async def test_localhost_name_verifies_too(tls_stack, pki):
    port = tls_stack.env_target.rsplit(":", 1)[1]
    async with EnvClient(f"localhost:{port}", token=TOKEN, tls_ca=pki.ca, timeout_s=30) as env:
        assert (await env.get_task("playground-signup")).id == "playground-signup"


async def test_plaintext_client_is_refused_unavailable(tls_stack):
    async with EnvClient(tls_stack.env_target, token=TOKEN, timeout_s=10) as env:
        with pytest.raises(Unavailable):
            await env.create_session("playground-signup", observation=LIGHT)
        assert not await env.healthy()


async def test_tls_client_without_token_is_unauthenticated(tls_stack, pki):
    async with EnvClient(tls_stack.env_target, tls_ca=pki.ca, timeout_s=10) as env:
        with pytest.raises(Unauthenticated, match="bearer token"):
            await env.create_session("playground-signup", observation=LIGHT)
        assert await env.healthy()   # health stays open for probes (over TLS)
    async with EnvClient(tls_stack.env_target, token="wrong", tls_ca=pki.ca, timeout_s=10) as env:
        with pytest.raises(Unauthenticated):
            await env.create_session("playground-signup", observation=LIGHT)
    async with EnvClient(tls_stack.env_target, token=TOKEN, tls_ca=pki.ca, timeout_s=10) as env:
        assert (await env.pool_stats()).active_sessions == 0   # nothing was created behind the refusals


async def test_client_trusting_another_ca_is_refused(tls_stack, pki):
    async with EnvClient(tls_stack.env_target, token=TOKEN, tls_ca=pki.other_ca, timeout_s=10) as env:
        with pytest.raises(Unavailable):
            await env.create_session("playground-signup", observation=LIGHT)
        assert not await env.healthy()


async def test_halo_health_checks_over_tls(tls_stack, pki):
    from halo.cli.launcher import check_health

    target = tls_stack.env_target
    assert await asyncio.to_thread(check_health, target, "halo.v1.EnvService", 5.0, str(pki.ca)) == "SERVING"
    assert (await asyncio.to_thread(check_health, target, "", 3.0)).startswith("UNREACHABLE")
    assert (await asyncio.to_thread(check_health, target, "", 3.0, str(pki.other_ca))).startswith("UNREACHABLE")


async def _grpcurl(*args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(grpcurl_binary(), *args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), timeout=60)
    return proc.returncode, out.decode(), err.decode()


async def test_grpcurl_with_cacert_and_token(tls_stack, pki):
    target, auth = tls_stack.env_target, f"authorization: Bearer {TOKEN}"
    rc, out, err = await _grpcurl("-cacert", str(pki.ca), "-H", auth, target, "list")
    assert rc == 0, err
    assert "halo.v1.EnvService" in out.split()
    rc, out, err = await _grpcurl(
        "-cacert", str(pki.ca), "-H", auth, "-d", json.dumps({"task_id": "playground-signup", "observation": {"skip_screenshot": True}}),
        target, "halo.v1.EnvService/CreateSession",
    )
    assert rc == 0, err
    session_id = json.loads(out)["session_id"]
    rc, out, err = await _grpcurl("-cacert", str(pki.ca), "-H", auth, "-d", json.dumps({"session_id": session_id}),
                                  target, "halo.v1.EnvService/CloseSession")
    assert rc == 0 and json.loads(out)["was_open"] is True, err
    # without the token: Unauthenticated; without the CA (or in plaintext): no connection at all
    rc, _, err = await _grpcurl("-cacert", str(pki.ca), "-d", "{}", target, "halo.v1.EnvService/GetPoolStats")
    assert rc != 0 and "Unauthenticated" in err
    rc, _, err = await _grpcurl("-cacert", str(pki.other_ca), "-H", auth, target, "list")
    assert rc != 0 and "certificate" in err.lower()
    rc, _, err = await _grpcurl("-plaintext", "-H", auth, target, "list")
    assert rc != 0


async def test_go_client_with_ca_and_token_drives_a_session(tls_stack, pki, tmp_path):
    demo = await asyncio.to_thread(build_go_demo, tmp_path)
    target = tls_stack.env_target

    async def go(*args: str) -> tuple[int, str, str]:
        proc = await asyncio.create_subprocess_exec(str(demo), "-target", target, "-timeout", "30s", *args,
                                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err = await asyncio.wait_for(proc.communicate(), timeout=120)
        return proc.returncode, out.decode(), err.decode()

    rc, out, err = await go("-ca", str(pki.ca), "-token", TOKEN)
    assert rc == 0, err
    assert_walked_the_signup_session(json.loads(out))
    rc, _, err = await go("-ca", str(pki.ca))
    assert rc == 1 and err.startswith("env-demo: Unauthenticated:"), err
    rc, _, err = await go("-ca", str(pki.other_ca), "-token", TOKEN, "-timeout", "5s")
    assert rc == 1 and err.startswith(("env-demo: Unavailable:", "env-demo: DeadlineExceeded:")), err


def test_tls_settings_need_both_files(pki):
    from halo.env.config import EnvSettings

    with pytest.raises(ValidationError, match="tls_key"):
        EnvSettings(tls_cert=str(pki.cert))
    with pytest.raises(ValidationError, match="tls_cert"):
        EnvSettings(tls_key=str(pki.key))
    assert EnvSettings(tls_cert=str(pki.cert), tls_key=str(pki.key)).tls_cert == str(pki.cert)


async def test_unreadable_cert_fails_before_the_service_starts(tmp_path, pki):
    from halo.env.config import EnvSettings
    from halo.runtime.server import ServiceSpec, start_service

    started = []
    spec = ServiceSpec("env", ["halo.v1.EnvService"], register=lambda server: None,
                       on_start=lambda: asyncio.sleep(0, started.append(True)))
    settings = EnvSettings(port=0, metrics_port=-1, tls_cert=str(tmp_path / "missing.pem"), tls_key=str(pki.key))
    with pytest.raises(RuntimeError, match="cannot read tls_cert"):
        await start_service(spec, settings)
    (tmp_path / "bad.pem").write_text("not a certificate")
    with pytest.raises(RuntimeError, match="not a PEM file"):
        await start_service(spec, EnvSettings(port=0, metrics_port=-1, tls_cert=str(tmp_path / "bad.pem"), tls_key=str(pki.key)))
    assert not started


async def test_client_rejects_a_missing_ca_file(tmp_path):
    with pytest.raises(ValueError, match="cannot read the TLS CA file"):
        EnvClient("127.0.0.1:1", tls_ca=tmp_path / "nope.pem")


def test_halo_serve_reports_a_half_tls_config(capsys, pki):
    from halo.cli.main import main

    assert main(["serve", "env", "--tls-cert", str(pki.cert)]) == 2
    assert "TLS needs both tls_cert and tls_key" in capsys.readouterr().err


def test_trainer_passes_its_ca_to_the_runs(tmp_path, pki):
    from halo.cli.registry import resolve_trainer
    from halo.trainer.config import TrainerSettings
    from halo.trainer.server import build_service

    settings = TrainerSettings(port=0, runs_dir=str(tmp_path), service_token=TOKEN, service_tls_ca=str(pki.ca))
    services = build_service(settings, resolver=resolve_trainer).core.services   # what every hosted run's clients are built from
    assert (services.token, services.tls_ca) == (TOKEN, str(pki.ca))


async def test_reward_judge_client_speaks_tls(tls_stack, pki):
    """The reward service's gateway client over TLS + token: the handshake and the token pass (the env
    service has no Judge method, so the call ends UNIMPLEMENTED, not UNAVAILABLE or UNAUTHENTICATED)."""
    from halo.reward.config import RewardSettings
    from halo.reward.core import RewardCore

    settings = RewardSettings(judge_target=tls_stack.env_target, judge_token=TOKEN, judge_tls_ca=str(pki.ca), judge_timeout_s=10)
    judge = RewardCore(settings, registry=None).judge
    try:
        with pytest.raises(Unavailable, match="UNIMPLEMENTED"):
            await judge.judge(answer="a", rubric="r")
    finally:
        await judge.close()


async def test_readme_tls_grpcurl_calls_run_as_written(tls_stack, pki):
    """The `-cacert` grpcurl calls of README.md and docs/, with its ca.pem, $TOKEN and default target filled in."""
    import shlex

    from tests.deploy.test_other_languages import README_TARGET, readme_grpcurl_commands

    commands = readme_grpcurl_commands(tls=True)
    assert commands, "README.md and docs/ show no grpcurl call over TLS"
    for command in commands:
        filled = command.replace(README_TARGET, tls_stack.env_target).replace("$TOKEN", TOKEN)
        argv = [str(pki.ca) if a == "ca.pem" else a for a in shlex.split(filled)]
        rc, out, err = await _grpcurl(*argv[1:])
        assert rc == 0, f"{command}\n{err}"
        assert "halo.v1.EnvService" in out.split()
