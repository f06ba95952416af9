"""Tinker backend fixtures: the tiny Qwen3-VL's tokenizer/image processor behind the real renderer,
and the session's real env + reward services (tests/conftest.py `stack`)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def tiny_dir(tmp_path_factory) -> str:
    from tests.tinker.fakes import tiny_model_dir

    return tiny_model_dir(tmp_path_factory)


@pytest.fixture(scope="session")
def renderer(tiny_dir):
    from halo.trainers.tinker_env import DEFAULT_RENDERER, DEFAULT_TINKER_MODEL, load_renderer

    return load_renderer(DEFAULT_RENDERER, tiny_dir, tiny_dir, DEFAULT_TINKER_MODEL)


@pytest.fixture
def task_config(stack, tiny_dir):
    from halo.trainers.tinker_env import BrowserTaskConfig

    return BrowserTaskConfig(stack.env_target, stack.reward_target, max_steps=2, tokenizer=tiny_dir)


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread():
    """The tiny model's matrices are small: one intra-op thread is many times faster than a pool
    fighting for a loaded 2-core machine (restored afterwards)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
