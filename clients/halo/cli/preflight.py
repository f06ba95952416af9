"""What `halo train` checks before it starts anything (Chromium, a service, a model): the run's
options, its base model, its device, its sampling route and the engine behind it, its API key.
Each problem is one line that names the flag the user typed; the command then exits 2.

Only what this machine can see is checked: a run submitted to a trainer service (`--submit`) is
checked there, and a gateway given with `--gateway` answers for its own routes.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from halo.errors import InvalidArgument
from halo.runs.spec import RunSpec

#: config.json model types the local_lora learner loads (halo.trainers.lora_model.load_base_model)
QWEN3_VL_TYPES = ("qwen3_vl", "qwen3_vl_moe")
PROBE_TIMEOUT_S = 5.0


class PreflightError(ValueError):
    """A run that cannot work as asked, found before anything started."""


def check_local_run(spec: RunSpec, *, gateway_here: bool) -> None:
    """Raise PreflightError with a one-line reason if the run cannot start as asked."""
    if spec.backend == "local_lora":
        _check_local_lora(spec, gateway_here)
    elif spec.backend == "tinker":
        from halo.trainers.tinker_train import TINKER_API_KEY_ENV

        if not os.environ.get(TINKER_API_KEY_ENV):
            raise PreflightError(f"--backend tinker needs an API key: set {TINKER_API_KEY_ENV} "
                                 "(https://auth.thinkingmachines.ai/sign-up)")


def _check_local_lora(spec: RunSpec, gateway_here: bool) -> None:
    from halo.trainers.lora_options import LocalLoraOptions

    try:
        options = LocalLoraOptions.from_extra(spec.extra)
    except InvalidArgument as exc:
        raise PreflightError(str(exc)) from None
    model_dir = options.model_dir or spec.model
    _check_base_model(model_dir)
    if options.device.startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            raise PreflightError(f"--device {options.device}: this torch ({torch.__version__}) sees no CUDA device; "
                                 "on a GPU machine install a CUDA build of torch (docs/guides/quickstart-gpu.md)")
    if options.serve_route and gateway_here:
        _check_vllm_route(options.serve_route, model_dir)


def _check_base_model(model_dir: str) -> None:
    if not model_dir or model_dir == "embedded":
        raise PreflightError("--backend local_lora needs --base-model: the folder of the Qwen3-VL model to train a LoRA on")
    config = Path(model_dir) / "config.json"
    if not Path(model_dir).is_dir():
        raise PreflightError(f"--base-model {model_dir}: no such folder")
    try:
        model_type = json.loads(config.read_text()).get("model_type", "")
    except (OSError, ValueError):
        raise PreflightError(f"--base-model {model_dir}: no readable config.json (not a Hugging Face model folder)") from None
    if model_type not in QWEN3_VL_TYPES:
        raise PreflightError(f"--base-model {model_dir}: a {model_type or 'unknown'} model, not a Qwen3-VL one "
                             f"(config.json's model_type must be {' or '.join(QWEN3_VL_TYPES)})")


def _check_vllm_route(route: str, model_dir: str) -> None:
    """The route exists in the gateway's table, is a vLLM route, and its vLLM answers with the
    served model, built from the same checkpoint when vLLM reports a local folder."""
    from halo.policy.config import GatewaySettings, load_gateway_config

    table = GatewaySettings().config   # the route table the gateway started here loads (HALO_GATEWAY_CONFIG)
    routes = {r.name: r for r in load_gateway_config(table).routes}
    vllm_routes = sorted(n for n, r in routes.items() if r.backend == "vllm")
    config = routes.get(route)
    if config is None or config.backend != "vllm":
        raise PreflightError(f"--route {route}: {table} has no vLLM route of that name "
                             f"(vLLM routes: {', '.join(vllm_routes) or 'none'})")
    for base_url in config.engine_urls:   # every engine of the route (discovered ones: the name's first answer)
        _check_vllm_engine(route, config, base_url, model_dir)


def _check_vllm_engine(route: str, config, base_url: str, model_dir: str) -> None:
    """One vLLM engine of the route answers, serves the route's model, from the learner's checkpoint."""
    import httpx

    key = config.resolve_api_key()
    try:
        response = httpx.get(base_url.rstrip("/") + "/models", timeout=PROBE_TIMEOUT_S,
                             headers={"Authorization": f"Bearer {key}"} if key else {})
        response.raise_for_status()
        models = {m["id"]: m.get("root", "") for m in response.json().get("data", [])}
    except (httpx.HTTPError, ValueError, KeyError, TypeError) as exc:
        raise PreflightError(f"--route {route}: no vLLM answers at {base_url} ({type(exc).__name__}); start it "
                             f"first (halo up --with-vllm --vllm-checkpoint {model_dir}, or docker compose --profile gpu up)") from None
    served = config.served_model or config.base_model
    if served not in models:
        raise PreflightError(f"--route {route}: the vLLM at {base_url} serves {', '.join(sorted(models)) or 'nothing'}, "
                             f"not {served!r}")
    root = models[served]
    if root and Path(root).is_dir() and Path(root).resolve() != Path(model_dir).resolve():
        raise PreflightError(f"--route {route}: its vLLM at {base_url} serves {root}, but the learner trains --base-model "
                             f"{model_dir}: the sampler and the learner must load the same model")
