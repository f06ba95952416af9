"""Shared fixtures: real services on loopback (ephemeral ports), real Chromium."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="session")
async def stack():
    """Sites server + env service + reward service in this process, shared by the whole test session."""
    from halo.cli.stack import LocalStack

    async with LocalStack(env_overrides={"pool_size": 8, "acquire_timeout_s": 10}, with_reward=True) as running:
        yield running


@pytest.fixture(scope="session")
async def env(stack):
    from halo.client.env import EnvClient

    async with EnvClient(stack.env_target, timeout_s=60) as client:
        yield client


@pytest.fixture(scope="session")
async def reward(stack):
    from halo.client.reward import RewardClient

    async with RewardClient(stack.reward_target, timeout_s=60) as client:
        yield client
