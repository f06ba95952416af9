"""Local LoRA backend fixtures: the tiny random Qwen3-VL (built once per session, shared with
tests/tinker) and a fixed observation rendered by tinker-cookbook's qwen3_vl_instruct renderer."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def tiny_dir(tmp_path_factory) -> str:
    from tests.tinker.fakes import tiny_model_dir

    return tiny_model_dir(tmp_path_factory)


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread():
    """One intra-op thread: many times faster for the tiny model on a loaded machine (restored after)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
