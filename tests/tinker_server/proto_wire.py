"""Tinker SDK 0.38 protobuf <-> SkyRL 0.3.0 JSON, at the HTTP boundary of SkyRL's Tinker server.

Since tinker 0.25 the SDK sends `forward_backward` as protobuf (`tinker.proto.tinker_public_pb2
.ForwardBackwardRequest`, `Content-Type: application/x-protobuf`, `forward_only` set for
`forward`) and accepts only protobuf for the results of forward_backward and sample (it asks with
`Accept: application/x-protobuf` on `retrieve_future`). skyrl 0.3.0 speaks JSON only: unadapted,
forward_backward answers 500 (retried by the SDK for 360 s) and sample results are refused.

This ASGI middleware, mounted in front of SkyRL's FastAPI app by `skyrl_server.py` (both run in
`.venv-skyrl`, which pins the same tinker as HALO), rewrites exactly those two exchanges with the
SDK's own proto messages and passes everything else through untouched:

    POST /api/v1/forward_backward  proto -> JSON for /api/v1/forward_backward or /api/v1/forward
    POST /api/v1/retrieve_future   JSON result -> proto SampleResponse / ForwardBackwardOutput
                                   (only when the SDK asked for proto)
    POST /api/v1/asample           the promise gains `sample_sequence_ids` (one id per sample,
                                   which the SDK stamps on the sequences; SkyRL sends none)

It fails fast: what it cannot translate (image chunks, which SkyRL's CPU backend would drop and
misalign silently; a zstd body; an unknown dtype) is a 400 with the reason, which the SDK does not
retry, never a 500.
"""

from __future__ import annotations

import json
from typing import Any, Awaitable, Callable

import numpy as np
from tinker.proto import tinker_public_pb2 as pb

PROTO = "application/x-protobuf"
FORWARD_BACKWARD = "/api/v1/forward_backward"
FORWARD = "/api/v1/forward"
RETRIEVE_FUTURE = "/api/v1/retrieve_future"
ASAMPLE = "/api/v1/asample"

_NUMPY_OF = {pb.DTYPE_FLOAT32: np.float32, pb.DTYPE_INT64: np.int64, pb.DTYPE_INT32: np.int32}
_PROTO_OF = {"float32": (pb.DTYPE_FLOAT32, np.float32), "int64": (pb.DTYPE_INT64, np.int64)}
_STOP_REASON = {"stop": pb.STOP_REASON_STOP, "length": pb.STOP_REASON_LENGTH}

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


class Untranslatable(ValueError):
    """A request this adapter cannot express in SkyRL's JSON: answered 400 with the reason."""


# ----------------------------------------------------------------------------- requests

def _tensor_values(tensor: pb.Tensor) -> list[float] | list[int]:
    dtype = _NUMPY_OF.get(tensor.dtype)
    if dtype is None:
        raise Untranslatable(f"tensor dtype {pb.DType.Name(tensor.dtype)} is not supported")
    if tensor.WhichOneof("encoding") == "sparse_csr":
        raise Untranslatable("sparse tensors are not supported by SkyRL's JSON API")
    return np.frombuffer(tensor.dense, dtype=dtype).tolist()


def _chunk_json(chunk: pb.Chunk) -> dict[str, Any]:
    kind = chunk.WhichOneof("chunk")
    if kind == "encoded_text":
        return {"type": "encoded_text", "tokens": np.frombuffer(chunk.encoded_text.tokens, dtype=np.int32).tolist()}
    # SkyRL's CPU (JAX) backend drops image chunks without a word, which shifts every target
    # token against its position; refusing them is the honest answer.
    raise Untranslatable(f"{kind} chunks are not supported: this server is text only (send AXTree-only observations)")


def forward_backward_to_json(body: bytes) -> tuple[str, dict[str, Any]]:
    """(SkyRL path, JSON body) for the SDK's protobuf ForwardBackwardRequest."""
    msg = pb.ForwardBackwardRequest()
    msg.ParseFromString(body)
    config: dict[str, float] = {}
    for key, value in msg.loss_fn_config_v2.items():
        if value.WhichOneof("value") != "number":
            raise Untranslatable(f"loss_fn_config[{key!r}] is text; SkyRL takes numbers only")
        config[key] = value.number
    for key, number in msg.loss_fn_config.items():   # the legacy map the SDK dual-writes
        config.setdefault(key, number)
    data = [
        {
            "model_input": {"chunks": [_chunk_json(c) for c in datum.model_input]},
            "loss_fn_inputs": {name: {"data": _tensor_values(t)} for name, t in datum.loss_fn_inputs.items()},
        }
        for datum in msg.data
    ]
    payload = {"data": data, "loss_fn": msg.loss_fn, "loss_fn_config": config or None}
    if msg.forward_only:
        return FORWARD, {"model_id": msg.model_id, "forward_input": payload}
    return FORWARD_BACKWARD, {"model_id": msg.model_id, "forward_backward_input": payload}


# ---------------------------------------------------------------------------- responses

def sample_to_proto(result: dict[str, Any]) -> bytes:
    msg = pb.SampleResponse()
    for seq in result["sequences"]:
        out = msg.sequences.add()
        out.stop_reason = _STOP_REASON[seq["stop_reason"]]
        out.tokens = np.asarray(seq["tokens"], dtype=np.int32).tobytes()
        if seq.get("logprobs") is not None:
            out.logprobs = np.asarray(seq["logprobs"], dtype=np.float32).tobytes()
    if result.get("prompt_logprobs") is not None:
        # Tinker's contract: one entry per prompt token, the first without a logprob (NaN on the
        # wire; the SDK and the cookbook's DPO drop it with [1:]). SkyRL 0.3.0's JAX backend scores
        # only positions 1..n-1 (logits[:-1] against ids[1:]): one short, so the first is added here
        raw = list(result["prompt_logprobs"])
        if not raw or raw[0] is not None:
            raw = [None, *raw]
        values = [float("nan") if v is None else v for v in raw]
        msg.prompt_logprobs = np.asarray(values, dtype=np.float32).tobytes()
    return msg.SerializeToString()


def forward_backward_to_proto(result: dict[str, Any]) -> bytes:
    """SkyRL's per-datum `{name: {data, dtype, shape}}` dicts as one batched ArrayRecord."""
    msg = pb.ForwardBackwardOutput(loss_fn_output_type=result.get("loss_fn_output_type") or "ArrayRecord")
    for key, value in (result.get("metrics") or {}).items():
        msg.metrics[key] = float(value)
    outputs = result.get("loss_fn_outputs") or []
    if "loss:sum" not in msg.metrics and outputs and all("elementwise_loss" in d for d in outputs):
        # Tinker reports the summed loss, and the SDK's forward_backward_custom pops it (KeyError
        # without it); SkyRL 0.3.0 sends only the per-token losses, whose sum it is
        msg.metrics["loss:sum"] = float(sum(np.sum(d["elementwise_loss"]["data"]) for d in outputs))
    if outputs:
        record = msg.loss_fn_outputs.add(num_datums=len(outputs))
        for name in outputs[0]:
            proto_dtype, np_dtype = _PROTO_OF[outputs[0][name].get("dtype", "float32")]
            arrays = [np.asarray(datum[name]["data"], dtype=np_dtype).ravel() for datum in outputs]
            offsets = np.cumsum([0] + [a.nbytes for a in arrays]).astype(np.int64)
            field = record.fields[name]
            field.dtype, field.data, field.offsets = proto_dtype, b"".join(a.tobytes() for a in arrays), offsets.tobytes()
    return msg.SerializeToString()


def result_to_proto(result: Any) -> bytes | None:
    """The proto for a completed future's JSON result, None when it is neither kind the SDK wants as proto."""
    if isinstance(result, dict) and "sequences" in result:
        return sample_to_proto(result)
    if isinstance(result, dict) and "loss_fn_outputs" in result:
        return forward_backward_to_proto(result)
    return None


# --------------------------------------------------------------------------- middleware

async def _read_body(receive: Receive) -> bytes:
    body, more = b"", True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    return body


def _header(scope: Scope, name: bytes) -> str:
    return next((v.decode("latin-1") for k, v in scope["headers"] if k.lower() == name), "")


def _content_type(headers: list) -> str:
    return next((v.decode("latin-1") for k, v in headers if k.lower() == b"content-type"), "application/json")


def _replay(body: bytes) -> Receive:
    """A `receive` that hands the app this body once (then a disconnect, as ASGI servers do)."""
    sent = False

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return receive


async def _reply(send: Send, status: int, body: bytes, content_type: str) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", content_type.encode()), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


class TinkerProtoWire:
    """ASGI middleware: the SDK's protobuf exchanges in, SkyRL's JSON app behind."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]]) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            return await self.app(scope, receive, send)
        path = scope["path"]
        if path == FORWARD_BACKWARD and _header(scope, b"content-type").startswith(PROTO):
            return await self._forward_backward(scope, receive, send)
        if path == RETRIEVE_FUTURE and PROTO in _header(scope, b"accept"):
            return await self._retrieve_future(scope, receive, send)
        if path == ASAMPLE:
            return await self._asample(scope, receive, send)
        return await self.app(scope, receive, send)

    async def _asample(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await _read_body(receive)
        try:
            num_samples = int(json.loads(body).get("num_samples", 1))
        except Exception:
            num_samples = 1   # SkyRL validates the body itself and answers 422
        status, headers, answer = await self._call_app(scope, _replay(body))
        if status == 200:
            promise = json.loads(answer)
            promise.setdefault("sample_sequence_ids", [f"{promise['request_id']}:{i}" for i in range(num_samples)])
            answer = json.dumps(promise).encode()
        await _reply(send, status, answer, _content_type(headers))

    async def _call_app(self, scope: Scope, receive: Receive) -> tuple[int, list, bytes]:
        """Run the app and capture its whole answer (status, headers, body)."""
        start: dict[str, Any] = {}
        chunks: list[bytes] = []

        async def capture(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        await self.app(scope, receive, capture)
        return start.get("status", 500), start.get("headers", []), b"".join(chunks)

    async def _forward_backward(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await _read_body(receive)
        try:
            if _header(scope, b"content-encoding"):
                raise Untranslatable(f"Content-Encoding {_header(scope, b'content-encoding')} is not supported")
            path, payload = forward_backward_to_json(body)
        except Exception as exc:   # a malformed body included: 400, which the SDK does not retry
            return await _reply(send, 400, json.dumps({"detail": f"tinker proto wire: {exc}"}).encode(), "application/json")
        new_body = json.dumps(payload).encode()
        headers = [(k, v) for k, v in scope["headers"] if k.lower() not in (b"content-type", b"content-length")]
        headers += [(b"content-type", b"application/json"), (b"content-length", str(len(new_body)).encode())]
        await self.app(dict(scope, path=path, raw_path=path.encode(), headers=headers), _replay(new_body), send)

    async def _retrieve_future(self, scope: Scope, receive: Receive, send: Send) -> None:
        status, headers, body = await self._call_app(scope, receive)
        proto = None
        if status == 200:
            try:
                proto = result_to_proto(json.loads(body))
            except Exception as exc:
                return await _reply(send, 400, json.dumps({"detail": f"tinker proto wire: bad result: {exc}"}).encode(), "application/json")
        if proto is not None:
            return await _reply(send, 200, proto, PROTO)
        await _reply(send, status, body, _content_type(headers))
