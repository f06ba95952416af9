"""Evaluation modes: which gateway route samples the actions, and with which adapter.

| mode          | route (configs/gateway.yaml) | adapter                                             |
| ------------- | ---------------------------- | --------------------------------------------------- |
| gpt5_baseline | gpt (OpenAI, OPENAI_API_KEY) | none                                                |
| qwen3vl_base  | qwen3vl (vLLM)               | none: the base model                                |
| qwen3vl_grpo  | qwen3vl (vLLM)               | LoRA folder checkpoints/qwen3vl_grpo_lora (PEFT)    |
| qwen3vl_mcts  | qwen3vl (vLLM)               | LoRA folder checkpoints/qwen3vl_mcts_lora (PEFT)    |
| embedded      | embedded (CPU)               | optional head weights (--weights .../head.safetensors) |

`--route` swaps the route. A `tinker://` adapter (or a Tinker run's folder, which names its last
sampler weights) is sampled on the `qwen3vl-tinker` route unless `--route` says otherwise.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from halo.runs.layout import CHECKPOINTS_DIR, EMBEDDED_HEAD_FILE, LORA_ADAPTER_DIR, TINKER_CHECKPOINT_INFO

#: The route that samples Tinker weights (configs/gateway.yaml)
TINKER_ROUTE = "qwen3vl-tinker"


@dataclass(frozen=True)
class Mode:
    name: str
    route: str
    adapter_path: str = ""      # default LoRA adapter (a folder on the vLLM host, or tinker://...)
    description: str = ""


MODES: dict[str, Mode] = {m.name: m for m in (
    Mode("gpt5_baseline", "gpt", "", "GPT-5 through the OpenAI API (route gpt, needs OPENAI_API_KEY)"),
    Mode("qwen3vl_base", "qwen3vl", "", "Qwen3-VL base model on vLLM (route qwen3vl)"),
    Mode("qwen3vl_grpo", "qwen3vl", "checkpoints/qwen3vl_grpo_lora", "Qwen3-VL + the GRPO LoRA adapter on vLLM"),
    Mode("qwen3vl_mcts", "qwen3vl", "checkpoints/qwen3vl_mcts_lora", "Qwen3-VL + the MCTS-trained LoRA adapter on vLLM"),
    Mode("embedded", "embedded", "", "the embedded CPU policy (route embedded), optionally with trained head weights"),
)}


@dataclass(frozen=True)
class ResolvedMode:
    """What the harness needs to sample: the route, and the adapter to load there (if any)."""

    mode: str
    route: str
    adapter: str = ""           # adapter name used on the route ("" = the route's base model)
    adapter_path: str = ""      # LoadAdapter(path=...) for vLLM / Tinker
    weights: str = ""           # LoadAdapter(weights=<file bytes>) for the embedded route


def _last_checkpoint(run: Path, holding: str) -> Path:
    """A run folder's newest checkpoints/step-N that holds `holding`."""
    steps = sorted((c for c in (run / CHECKPOINTS_DIR).iterdir() if c.name.startswith("step-") and (c / holding).exists()),
                   key=lambda c: int(c.name.split("-", 1)[1]) if c.name.split("-", 1)[1].isdigit() else -1)
    if not steps:
        raise ValueError(f"{run} has no {CHECKPOINTS_DIR}/step-N/{holding}")
    return steps[-1]


def resolve_weights(path: str) -> Path:
    """A head.safetensors file, a checkpoint folder holding one, or a run folder (its last checkpoint)."""
    p = Path(path)
    if p.is_dir() and (p / CHECKPOINTS_DIR).is_dir():
        p = _last_checkpoint(p, EMBEDDED_HEAD_FILE)
    if p.is_dir():
        p = p / EMBEDDED_HEAD_FILE
    if not p.is_file():
        raise ValueError(f"embedded weights not found: {p}")
    return p


def resolve_adapter(path: str) -> str:
    """A LoRA adapter as the route loads it: a PEFT folder (adapter_config.json), a local_lora
    checkpoint folder holding one (`adapter/`), a Tinker checkpoint folder (its `tinker://`
    sampler weights), or a run folder (its last checkpoint's); `tinker://` paths and folders that
    are not on this machine (another host's vLLM reads them) as they are."""
    if "://" in path or not Path(path).exists():
        return path
    p = Path(path)
    if p.is_dir() and (p / CHECKPOINTS_DIR).is_dir():
        tinker = any((c / TINKER_CHECKPOINT_INFO).exists() for c in (p / CHECKPOINTS_DIR).iterdir())
        p = _last_checkpoint(p, TINKER_CHECKPOINT_INFO if tinker else LORA_ADAPTER_DIR)
    if (p / TINKER_CHECKPOINT_INFO).is_file():
        sampler = json.loads((p / TINKER_CHECKPOINT_INFO).read_text()).get("sampler_path", "")
        if not sampler:
            raise ValueError(f"{path}: the Tinker checkpoint {p.name} records no sampler weights (tinker:// sampler_path)")
        return sampler
    if (p / LORA_ADAPTER_DIR).is_dir() and not (p / "adapter_config.json").exists():
        p = p / LORA_ADAPTER_DIR
    if p.is_dir() and not (p / "adapter_config.json").is_file():
        raise ValueError(f"{path}: no PEFT adapter here (adapter_config.json), nor a local_lora or Tinker checkpoint or run folder")
    return str(p.resolve())   # vLLM on this machine reads the same folder


def resolve_mode(mode: str, *, route: str = "", adapter_path: str | None = None, weights: str = "") -> ResolvedMode:
    """The route and adapter of a mode; `adapter_path=""` forces the base model, None keeps the mode's default."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r} (modes: {', '.join(MODES)})")
    spec = MODES[mode]
    route_given = bool(route)
    route = route or spec.route
    path = spec.adapter_path if adapter_path is None else adapter_path
    if weights:
        if route != "embedded" and spec.route != "embedded":
            raise ValueError(f"--weights loads embedded head weights; mode {mode} samples from route {route!r} (use --adapter)")
        return ResolvedMode(mode, route, adapter=f"{mode}-weights", weights=str(resolve_weights(weights)))
    if path:
        adapter_path = resolve_adapter(path)
        if adapter_path.startswith("tinker://") and not route_given and spec.route == "qwen3vl":
            route = TINKER_ROUTE   # Tinker's weights are sampled on Tinker, not on the vLLM route
        return ResolvedMode(mode, route, adapter=mode, adapter_path=adapter_path)
    return ResolvedMode(mode, route)
