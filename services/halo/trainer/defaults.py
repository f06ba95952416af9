"""The trainer service's own defaults for what a submitted run leaves open.

A deployment knows things its users should not have to repeat: which gateway route reaches the
vLLM it runs, which checkpoint that vLLM serves, whether this trainer has a GPU. The trainer service
fills them into a local_lora run that does not name them (`extra.serve_route`, the base model,
`extra.device`) when it accepts the run, so the stored spec says what the run really used (a
resume replays it) and a spec that names its own keeps it. Compose's gpu profile and the Kubernetes
`trainer-gpu` component set them (deploy/services.yaml).
"""

from __future__ import annotations

from pathlib import Path

from halo.errors import FailedPrecondition
from halo.runs.spec import RunSpec
from halo.trainer.config import TrainerSettings

#: RunSpec.model when `halo train` was given no --base-model: names no checkpoint
_NO_MODEL = ("", "embedded")


def local_checkpoint(name: str) -> str:
    """The folder of checkpoint `name`: itself when it is a folder, else a Hugging Face id looked up
    in the local Hugging Face cache (HF_HOME: the volume vLLM downloaded it into), never fetched."""
    if Path(name).is_dir():
        return name
    from huggingface_hub import snapshot_download   # lazy: only a run that needs a default pays for it
    from huggingface_hub.errors import LocalEntryNotFoundError

    try:
        return snapshot_download(name, local_files_only=True)
    except (LocalEntryNotFoundError, ValueError) as exc:
        raise FailedPrecondition(
            f"the trainer's default base model {name!r} is neither a folder nor in its Hugging Face cache "
            "(vLLM downloads it there when it starts: wait for vLLM to be ready, or name --base-model)") from exc


def apply_run_defaults(spec: RunSpec, settings: TrainerSettings) -> RunSpec:
    """`spec` with the service's local_lora defaults in what it leaves empty (other backends: as it is)."""
    if spec.backend != "local_lora":
        return spec
    extra = spec.extra
    if settings.local_lora_route and not extra.get("serve_route") and extra.get("sampler") != "local":
        extra["serve_route"] = settings.local_lora_route
    if settings.local_lora_base_model and not extra.get("model_dir") and spec.model in _NO_MODEL:
        extra["model_dir"] = local_checkpoint(settings.local_lora_base_model)
    if settings.local_lora_device and not extra.get("device"):
        extra["device"] = settings.local_lora_device
    return spec
