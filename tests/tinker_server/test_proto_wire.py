"""The tinker-proto <-> SkyRL-JSON wire adapter against the SDK's own encoders and decoders
(no server needed: runs in the default test run; the real server is test_real_tinker_server.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import tinker
from tinker.proto.request_conv import forward_backward_request_to_proto
from tinker.proto.response_conv import deserialize_forward_backward_output, deserialize_sample_response
from tinker.types import ForwardBackwardInput, ForwardBackwardRequest

from tests.tinker_server.proto_wire import (
    FORWARD, FORWARD_BACKWARD, TinkerProtoWire, Untranslatable, forward_backward_to_json, result_to_proto,
)


def _request(chunks, loss_fn="ppo", config=None, forward_only=False) -> bytes:
    datum = tinker.Datum(
        model_input=tinker.ModelInput(chunks=chunks),
        loss_fn_inputs={"target_tokens": tinker.TensorData.from_numpy(np.array([5, 6, 7], dtype=np.int64)),
                        "advantages": tinker.TensorData.from_numpy(np.array([0.0, 0.5, -1.5], dtype=np.float32))},
    )
    request = ForwardBackwardRequest(
        model_id="m-1", seq_id=3, forward_backward_input=ForwardBackwardInput(data=[datum], loss_fn=loss_fn, loss_fn_config=config))
    msg = forward_backward_request_to_proto(request)
    msg.forward_only = forward_only
    return msg.SerializeToString()


def test_forward_backward_proto_becomes_skyrls_json():
    body = _request([tinker.EncodedTextChunk(tokens=[1, 2, 3])], config={"clip_low_threshold": 0.8})
    path, payload = forward_backward_to_json(body)
    assert path == FORWARD_BACKWARD and payload["model_id"] == "m-1"
    fb = payload["forward_backward_input"]
    assert fb["loss_fn"] == "ppo" and fb["loss_fn_config"] == {"clip_low_threshold": pytest.approx(0.8)}
    (datum,) = fb["data"]
    assert datum["model_input"] == {"chunks": [{"type": "encoded_text", "tokens": [1, 2, 3]}]}
    assert datum["loss_fn_inputs"]["target_tokens"] == {"data": [5, 6, 7]}
    assert datum["loss_fn_inputs"]["advantages"] == {"data": [0.0, 0.5, -1.5]}
    json.dumps(payload)   # plain JSON all the way down

    path, payload = forward_backward_to_json(_request([tinker.EncodedTextChunk(tokens=[4])], loss_fn="importance_sampling",
                                                      forward_only=True))
    assert path == FORWARD and payload["forward_input"]["loss_fn_config"] is None


def test_image_chunks_are_refused_with_the_reason():
    body = _request([tinker.types.ImageChunk(data=b"\xff\xd8", format="jpeg", expected_tokens=4), tinker.EncodedTextChunk(tokens=[1])])
    with pytest.raises(Untranslatable, match="text only"):
        forward_backward_to_json(body)


def test_results_become_the_protos_the_sdk_decodes():
    sample = result_to_proto({"sequences": [{"stop_reason": "length", "tokens": [9, 8], "logprobs": [-0.5, -1.25]},
                                            {"stop_reason": "stop", "tokens": [7], "logprobs": [-2.0]}],
                              "prompt_logprobs": [-3.0, -0.5]})   # SkyRL's: positions 1..n-1 of a 3-token prompt
    decoded = deserialize_sample_response(sample)
    assert [list(s.tokens) for s in decoded.sequences] == [[9, 8], [7]]
    assert [s.stop_reason for s in decoded.sequences] == ["length", "stop"]
    assert list(decoded.sequences[0].logprobs) == [-0.5, -1.25]
    first, *rest = decoded.prompt_logprobs
    assert (first is None or np.isnan(first)) and rest == [-3.0, -0.5]   # one per prompt token, the first has none
    already = deserialize_sample_response(result_to_proto({"sequences": [], "prompt_logprobs": [None, -3.0]}))
    assert len(already.prompt_logprobs) == 2 and already.prompt_logprobs[1] == -3.0   # a list with its first entry stays

    outputs = [{"logprobs": {"data": [-1.0, -2.0], "dtype": "float32", "shape": [2]},
                "elementwise_loss": {"data": [0.5, 0.25], "dtype": "float32", "shape": [2]}},
               {"logprobs": {"data": [-3.0], "dtype": "float32", "shape": [1]},
                "elementwise_loss": {"data": [0.125], "dtype": "float32", "shape": [1]}}]
    fb = deserialize_forward_backward_output(
        result_to_proto({"loss_fn_output_type": "scalar", "loss_fn_outputs": outputs, "metrics": {"loss:sum": 1.5}}))
    assert fb.metrics == {"loss:sum": 1.5} and len(fb.loss_fn_outputs) == 2
    assert fb.loss_fn_outputs[0]["logprobs"].tolist() == [-1.0, -2.0]
    assert fb.loss_fn_outputs[1]["elementwise_loss"].tolist() == [0.125]
    # SkyRL leaves out loss:sum (the SDK's forward_backward_custom needs it): the per-token losses' sum
    summed = deserialize_forward_backward_output(result_to_proto({"loss_fn_output_type": "scalar", "loss_fn_outputs": outputs}))
    assert summed.metrics == {"loss:sum": 0.875}
    assert result_to_proto({"metrics": {}}) is None   # optim_step & co. stay JSON


async def test_the_middleware_rewrites_only_the_sdks_proto_exchanges():
    """An ASGI app standing in for SkyRL records what reaches it (no FastAPI needed)."""
    seen: list[tuple[str, dict]] = []

    async def skyrl(scope, receive, send):
        body = (await receive()).get("body", b"")
        seen.append((scope["path"], json.loads(body) if body else {}))
        result = {"sequences": [{"stop_reason": "stop", "tokens": [1], "logprobs": [-0.1]}]}
        out = json.dumps(result if scope["path"] == "/api/v1/retrieve_future" else {"request_id": "7", "future_id": "7"}).encode()
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": out})

    async def call(path, body, headers):
        sent: list[dict] = []
        scope = {"type": "http", "method": "POST", "path": path, "raw_path": path.encode(), "headers": headers}
        messages = iter([{"type": "http.request", "body": body, "more_body": False}])
        await TinkerProtoWire(skyrl)(scope, lambda: _next(messages), _append(sent))
        return sent

    sent = await call("/api/v1/forward_backward", _request([tinker.EncodedTextChunk(tokens=[1])], forward_only=True),
                      [(b"content-type", b"application/x-protobuf")])
    assert seen[-1][0] == FORWARD and "forward_input" in seen[-1][1] and sent[0]["status"] == 200
    sent = await call("/api/v1/retrieve_future", b'{"request_id": "1"}', [(b"accept", b"application/x-protobuf")])
    assert dict(sent[0]["headers"])[b"content-type"] == b"application/x-protobuf"
    assert list(deserialize_sample_response(sent[1]["body"]).sequences[0].tokens) == [1]
    sent = await call("/api/v1/retrieve_future", b'{"request_id": "1"}', [(b"accept", b"application/json")])
    assert json.loads(sent[1]["body"])["sequences"]   # JSON asked, JSON answered
    sent = await call("/api/v1/forward_backward", _request([tinker.types.ImageChunk(data=b"x", format="png", expected_tokens=1)]),
                      [(b"content-type", b"application/x-protobuf")])
    assert sent[0]["status"] == 400 and b"text only" in sent[1]["body"]
    # the SDK needs one sequence id per sample in the asample promise; SkyRL's has none
    sent = await call("/api/v1/asample", b'{"num_samples": 3, "prompt": {"chunks": []}}', [(b"content-type", b"application/json")])
    assert seen[-1] == ("/api/v1/asample", {"num_samples": 3, "prompt": {"chunks": []}})   # the body reached SkyRL as sent
    promise = json.loads(sent[1]["body"])
    assert promise["request_id"] == "7" and promise["sample_sequence_ids"] == ["7:0", "7:1", "7:2"]


async def _next(messages):
    return next(messages)


def _append(sent):
    async def send(message):
        sent.append(message)
    return send
