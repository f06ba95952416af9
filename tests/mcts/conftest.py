"""One stack for the MCTS tests: sites + env + reward + policy gateway (embedded route), real Chromium."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
async def mcts_stack():
    from halo.cli.stack import LocalStack

    async with LocalStack(env_overrides={"pool_size": 8, "acquire_timeout_s": 60}, with_reward=True, with_gateway=True) as stack:
        yield stack


@pytest.fixture(scope="session")
async def clients(mcts_stack):
    from halo.client.env import EnvClient
    from halo.client.policy import PolicyClient
    from halo.client.reward import RewardClient

    async with EnvClient(mcts_stack.env_target) as env, RewardClient(mcts_stack.reward_target) as reward, \
            PolicyClient(mcts_stack.gateway_target) as gateway:
        yield env, reward, gateway
