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


class RecordingProxy:
    """A pass-through HTTP proxy in front of a real vLLM that records the JSON body of every POST
    (`requests`, `path` included, and for a chat completion the model vLLM's answer names, `served`):
    a test sees what the gateway asked vLLM for (which model or adapter name) and what answered,
    while the real server answers everything. Not a fake: every answer is vLLM's."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/").removesuffix("/v1")
        self.requests: list[dict] = []
        self._server = None
        self._thread = None
        self.port = 0

    def start(self) -> "RecordingProxy":
        import threading
        import time

        import uvicorn
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import Response
        from starlette.routing import Route

        # A fresh connection per request: a kept-alive one that vLLM's server closed meanwhile fails
        # the next forward with ReadError, and a pass-through must add no failure of its own.
        client = httpx.AsyncClient(base_url=self.upstream, timeout=300, limits=httpx.Limits(max_keepalive_connections=0))

        async def forward(request: Request) -> Response:
            import json

            body = await request.body()
            record = None
            if request.method == "POST" and body:
                try:
                    record = {"path": request.url.path, **{k: v for k, v in json.loads(body).items() if k != "messages"}}
                    self.requests.append(record)
                except ValueError:
                    pass
            upstream = await client.request(request.method, request.url.path, params=request.query_params, content=body,
                                            headers={"content-type": request.headers.get("content-type", "application/json")})
            if record is not None and record["path"].endswith("/chat/completions") and upstream.status_code == 200:
                try:   # the model vLLM says answered (an adapter's name when it served one)
                    record["served"] = json.loads(upstream.content).get("model")
                except ValueError:
                    pass
            return Response(upstream.content, status_code=upstream.status_code,
                            media_type=upstream.headers.get("content-type"))

        app = Starlette(routes=[Route("/{path:path}", forward, methods=["GET", "POST"])])
        self._server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off"))
        self._thread = threading.Thread(target=self._server.run, name="vllm-proxy", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("RecordingProxy did not start")
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
