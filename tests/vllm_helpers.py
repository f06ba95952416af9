"""Helpers for tests that talk to a real vLLM (tests/conftest.py's session server)."""

from __future__ import annotations

from pathlib import Path

import httpx


def served_adapters(server) -> dict[str, str]:
    """The LoRA adapters vLLM serves now, name -> path (its /v1/models lists them with their root)."""
    models = httpx.get(server.base_url + "/models", timeout=10).json()["data"]
    return {m["id"]: m["root"] for m in models if m.get("parent")}


def random_adapter(model_dir: str, folder: Path, seed: int = 0, rank: int = 4) -> Path:
    """A PEFT adapter for the tiny Qwen3-VL with random (non-zero) A and B, on the learner's target
    modules: loaded by vLLM it must change the model's outputs."""
    import torch
    from peft import LoraConfig, get_peft_model

    from halo.trainers.lora_learner import DEFAULT_TARGET_MODULES, load_base_model

    torch.manual_seed(seed)
    model = get_peft_model(load_base_model(model_dir), LoraConfig(
        r=rank, lora_alpha=rank * 4, target_modules=DEFAULT_TARGET_MODULES, lora_dropout=0.0, init_lora_weights=False,
    ))
    model.save_pretrained(str(folder))
    return folder
