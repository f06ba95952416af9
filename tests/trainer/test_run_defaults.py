"""The trainer service's defaults for submitted local_lora runs (halo.trainer.defaults): what compose's
gpu profile and the Kubernetes trainer-gpu component set (HALO_TRAINER_LOCAL_LORA_*), so that
`halo train --submit HOST:PORT --backend local_lora --suite ...` needs no --route, --base-model or
--device; a spec that names its own keeps them, and the stored spec says what the run used."""

from __future__ import annotations

import asyncio
from pathlib import Path

import huggingface_hub.constants
import pytest

from halo.client.trainer import TrainerClient
from halo.errors import FailedPrecondition
from halo.runtime.server import start_service
from halo.runs.spec import RunSpec
from halo.trainer.config import TrainerSettings
from halo.trainer.defaults import apply_run_defaults
from halo.trainer.server import build_service

MODEL_ID = "Qwen/Qwen3-VL-8B-Instruct"


@pytest.fixture
def hf_cache(tmp_path, monkeypatch) -> Path:
    """A Hugging Face cache holding MODEL_ID's snapshot, as vLLM leaves it after its download."""
    cache = tmp_path / "hf-cache" / "hub"
    snapshot = cache / "models--Qwen--Qwen3-VL-8B-Instruct" / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text('{"model_type": "qwen3_vl"}')
    (cache / "models--Qwen--Qwen3-VL-8B-Instruct" / "refs").mkdir()
    (cache / "models--Qwen--Qwen3-VL-8B-Instruct" / "refs" / "main").write_text("abc123")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(cache))
    return snapshot


def settings(**kw) -> TrainerSettings:
    return TrainerSettings(**{"local_lora_route": "qwen3vl", "local_lora_base_model": MODEL_ID, "local_lora_device": "cuda", **kw})


def lora_spec(**kw) -> RunSpec:
    return RunSpec(backend="local_lora", task_ids=["playground-signup"], **kw)


def test_an_open_local_lora_spec_gets_the_route_the_served_checkpoint_and_the_device(hf_cache):
    spec = apply_run_defaults(lora_spec(), settings())   # what `halo train --submit --backend local_lora` sends
    assert spec.extra == {"serve_route": "qwen3vl", "model_dir": str(hf_cache), "device": "cuda"}


def test_a_folder_is_taken_as_it_is(tmp_path):
    spec = apply_run_defaults(lora_spec(), settings(local_lora_base_model=str(tmp_path)))
    assert spec.extra["model_dir"] == str(tmp_path)


def test_what_the_spec_names_wins(tmp_path, hf_cache):
    named = lora_spec(model=str(tmp_path), extra={"serve_route": "other", "device": "cpu"})
    assert apply_run_defaults(named, settings()).extra == {"serve_route": "other", "device": "cpu"}
    own_dir = lora_spec(extra={"model_dir": str(tmp_path)})
    assert apply_run_defaults(own_dir, settings()).extra["model_dir"] == str(tmp_path)
    local = lora_spec(extra={"sampler": "local"})   # in-process sampling: no route to add
    assert "serve_route" not in apply_run_defaults(local, settings()).extra


def test_other_backends_and_an_unset_service_change_nothing(hf_cache):
    embedded = RunSpec(task_ids=["playground-signup"])
    assert apply_run_defaults(embedded, settings()).extra == {}
    assert apply_run_defaults(lora_spec(), TrainerSettings()).extra == {}


def test_a_default_checkpoint_that_is_not_cached_is_refused_not_downloaded(tmp_path, monkeypatch):
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "empty"))
    with pytest.raises(FailedPrecondition, match="neither a folder nor in its Hugging Face cache"):
        apply_run_defaults(lora_spec(), settings())


async def test_the_service_stores_the_filled_spec(tmp_path, hf_cache):
    seen: list[RunSpec] = []

    def resolver(spec: RunSpec):
        seen.append(spec)

        async def train(ctx) -> None:
            return None

        return train

    service_settings = settings(port=0, metrics_port=-1, runs_dir=str(tmp_path / "runs"))
    running = await start_service(build_service(service_settings, resolver=resolver), service_settings)
    try:
        async with TrainerClient(running.target) as client:
            run = await client.start_run(lora_spec(total_steps=1))
            for _ in range(100):
                if (await client.get_run(run.run_id)).state not in (1, 2):   # pending, running
                    break
                await asyncio.sleep(0.05)
            stored = RunSpec.from_proto((await client.get_run(run.run_id)).spec)
    finally:
        await running.stop()
    assert stored.extra == {"serve_route": "qwen3vl", "model_dir": str(hf_cache), "device": "cuda"}
    assert seen and seen[0].extra["device"] == "cuda"
