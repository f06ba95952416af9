"""A vLLM route samples the plain softmax(logits / T) cut at the request's top_p, whatever defaults the
server or its checkpoint carry: every sampling field travels with every request, and a route cannot
set one behind the caller's back. (The end-to-end check, a learner scoring vLLM's samples of a
checkpoint whose generation_config.json sets Qwen3-VL-Instruct's top_k/top_p/penalties, is
tests/lora/test_vllm_rollouts.py.)"""

from __future__ import annotations

import pytest

from halo.agent.prompt import PromptOptions, build_prompt
from halo.policy.backends.base import SampleParams
from halo.policy.backends.openai_compat import NEUTRAL_SAMPLING, OpenAICompatibleBackend, VllmBackend
from halo.policy.config import SAMPLING_FIELDS, RouteConfig
from tests.policy import pages


def _route(**kw) -> RouteConfig:
    return RouteConfig(name="r", backend="vllm", base_url="http://127.0.0.1:9/v1", served_model="m", **kw)


def _sent(body: dict) -> dict:
    """What the OpenAI SDK puts on the wire: the body with extra_body merged in."""
    return {**{k: v for k, v in body.items() if k != "extra_body"}, **body.get("extra_body", {})}


def test_a_vllm_request_sets_every_sampling_field_to_a_neutral_value():
    prompt = build_prompt(pages.context(), PromptOptions())
    backend = VllmBackend(_route(extra_body={"skip_special_tokens": False}))
    wire = _sent(backend.request_body(prompt, SampleParams(temperature=0.7, top_p=1.0, logprobs=True), "run-v3", 1))
    assert SAMPLING_FIELDS <= set(wire), sorted(SAMPLING_FIELDS - set(wire))
    assert wire["temperature"] == 0.7 and wire["top_p"] == 1.0 and wire["model"] == "run-v3"
    assert {k: wire[k] for k in NEUTRAL_SAMPLING} == {"top_k": -1, "min_p": 0.0, "repetition_penalty": 1.0,
                                                      "presence_penalty": 0.0, "frequency_penalty": 0.0}
    assert wire["skip_special_tokens"] is False and wire["return_token_ids"] is True   # the route's extras kept
    # a caller's top_p below 1 is sent as asked; a generic OpenAI-compatible server gets top_p always too
    assert _sent(backend.request_body(prompt, SampleParams(top_p=0.9), None, 1))["top_p"] == 0.9
    generic = OpenAICompatibleBackend(_route().model_copy(update={"backend": "openai_compatible"}))
    assert generic.request_body(prompt, SampleParams(top_p=1.0), None, 1)["top_p"] == 1.0


@pytest.mark.parametrize("field", sorted(SAMPLING_FIELDS))
def test_a_vllm_route_cannot_pin_a_sampling_field_in_extra_body(field):
    with pytest.raises(ValueError, match=field):
        _route(extra_body={field: 20})
    # other backends keep their provider-specific extras
    RouteConfig(name="r", backend="openai_compatible", base_url="http://x/v1", served_model="m", extra_body={field: 1})
