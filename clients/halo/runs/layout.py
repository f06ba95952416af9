"""Names inside a run folder that more than one app reads (the trainer service owns the folder:
run.json, events.jsonl, metrics.jsonl, checkpoints/step-N/; docs/reference/run-folder.md)."""

from __future__ import annotations

CHECKPOINTS_DIR = "checkpoints"
#: A Tinker run's host checkpoint: where its weights are on Tinker (state_path, sampler_path: tinker://...)
TINKER_CHECKPOINT_INFO = "tinker.json"
#: A local_lora checkpoint's PEFT adapter folder (what vLLM loads)
LORA_ADAPTER_DIR = "adapter"
#: An embedded checkpoint's head weights
EMBEDDED_HEAD_FILE = "head.safetensors"
