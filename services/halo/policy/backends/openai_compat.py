"""OpenAI-compatible chat completions (any provider, `transformers serve`, ...) and vLLM.

Screenshots go inline as base64 data URLs. `n` is sent as is when the backend honours it
(`native_n`), otherwise the gateway fans out n single-sample calls concurrently (and tops up a
backend that silently returns fewer choices than asked). vLLM adds token ids and per-token
logprobs (`return_token_ids`, `return_tokens_as_token_ids`) and LoRA adapters loaded at run
time through its `/v1/load_lora_adapter` and `/v1/unload_lora_adapter` endpoints (the server
runs with `--enable-lora` and VLLM_ALLOW_RUNTIME_LORA_UPDATING=True); an adapter is sampled by
using its name as the request's model, vLLM's convention. A name serves one set of weights for the
gateway's lifetime (vLLM's prefix cache is keyed by it: halo.policy.adapter_names).
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import openai

from halo.agent.context import PolicyContext
from halo.agent.prompt import Prompt
from halo.policy.backends.base import Backend, BackendResult, Completion, SampleParams, TransientBackendError
from halo.runtime.errors import FailedPrecondition, HaloError, InvalidArgument, NotFound, Unavailable
from halo.v1 import policy_pb2 as ppb

_TOKEN_ID_PREFIX = "token_id:"

#: vLLM's sampling fields at the values that leave the distribution untouched (top_k -1: off, in
#: every vLLM version; 0.32 also reads 0 as off). A vLLM route sends them on every request and a
#: route's extra_body may not set them (RouteConfig refuses it): a sampled token's logprob is then
#: log softmax(logits / T), what a learner computes.
NEUTRAL_SAMPLING: dict[str, float] = {
    "top_k": -1, "min_p": 0.0, "repetition_penalty": 1.0, "presence_penalty": 0.0, "frequency_penalty": 0.0,
}


def _extra(obj: Any, name: str) -> Any:
    """A non-standard field of an OpenAI SDK object (vLLM extras such as token_ids)."""
    value = getattr(obj, name, None)
    if value is None and getattr(obj, "model_extra", None):
        value = obj.model_extra.get(name)
    return value


class OpenAICompatibleBackend(Backend):
    kind = ppb.BACKEND_KIND_OPENAI_COMPATIBLE

    def __init__(self, route) -> None:
        super().__init__(route)
        self._client: openai.AsyncOpenAI | None = None

    def client(self) -> openai.AsyncOpenAI:
        key = self.route.resolve_api_key()
        if self.route.api_key_env and not key:
            raise FailedPrecondition(f"route {self.route.name!r} needs an API key: set {self.route.api_key_env}")
        if self._client is None:
            # the gateway retries itself (tenacity, per route), so the SDK's own retries are off
            self._client = openai.AsyncOpenAI(
                base_url=self.route.base_url, api_key=key or "EMPTY", max_retries=0, timeout=self.route.timeout_s,
            )
        return self._client

    def model_for(self, adapter: str | None) -> str:
        return self.route.model_name

    def extra_body(self, params: SampleParams) -> dict[str, Any]:
        return dict(self.route.extra_body)

    def request_body(self, prompt: Prompt, params: SampleParams, adapter: str | None, n: int) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model_for(adapter), "messages": prompt.to_openai_messages(),
            "temperature": params.temperature, "max_tokens": params.max_tokens,
        }
        body["top_p"] = params.top_p   # always: a server's own default (a checkpoint's 0.8) would truncate
        if n > 1:
            body["n"] = n
        if params.seed:
            body["seed"] = params.seed
        if params.logprobs and self.route.returns_logprobs:
            body["logprobs"] = True
        extra = self.extra_body(params)
        if extra:
            body["extra_body"] = extra
        return body

    async def _create(self, body: dict[str, Any]) -> Any:
        client = self.client()
        try:
            return await client.chat.completions.create(**body)
        except openai.APITimeoutError as exc:
            raise TransientBackendError(f"timed out: {exc}", timeout=True) from None
        except openai.APIConnectionError as exc:
            raise TransientBackendError(f"cannot connect to {self.route.base_url}: {exc}") from None
        except (openai.RateLimitError, openai.InternalServerError) as exc:
            raise TransientBackendError(f"{exc.status_code}: {exc.message}") from None
        except openai.NotFoundError as exc:
            raise NotFound(f"route {self.route.name!r}: the backend has no model {body['model']!r} ({exc.message})") from None
        except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
            raise FailedPrecondition(f"route {self.route.name!r}: credentials rejected ({exc.message})") from None
        except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
            raise InvalidArgument(f"route {self.route.name!r}: the backend rejected the request: {exc.message}") from None
        except openai.APIStatusError as exc:
            raise Unavailable(f"route {self.route.name!r}: backend error {exc.status_code}: {exc.message}") from None

    def _completion(self, choice: Any) -> Completion:
        text = choice.message.content or ""
        token_ids = list(_extra(choice, "token_ids") or [])
        logprobs: list[float] = []
        content = getattr(choice.logprobs, "content", None) if choice.logprobs is not None else None
        if content:
            logprobs = [float(entry.logprob) for entry in content]
            if not token_ids and all(entry.token.startswith(_TOKEN_ID_PREFIX) for entry in content):
                token_ids = [int(entry.token[len(_TOKEN_ID_PREFIX):]) for entry in content]
        return Completion(text=text, finish_reason=choice.finish_reason or "", token_ids=token_ids, logprobs=logprobs)

    async def _one_call(self, prompt: Prompt, params: SampleParams, adapter: str | None, n: int, seed_offset: int = 0) -> BackendResult:
        if seed_offset and params.seed:
            params = SampleParams(**{**params.__dict__, "seed": params.seed + seed_offset})
        body = self.request_body(prompt, params, adapter, n)
        response = await self.with_retries("chat completion", lambda: self._create(body))
        usage = response.usage
        return BackendResult(
            completions=[self._completion(c) for c in sorted(response.choices, key=lambda c: c.index)],
            prompt_tokens=usage.prompt_tokens if usage else 0,
            completion_tokens=usage.completion_tokens if usage else 0,
            prompt_token_ids=list(_extra(response, "prompt_token_ids") or []),
        )

    async def sample(self, prompt: Prompt | None, ctx: PolicyContext | None, params: SampleParams,
                     adapter: str | None) -> BackendResult:
        assert prompt is not None
        if params.n == 1 or self.route.native_n:
            result = await self._one_call(prompt, params, adapter, params.n)
            missing = params.n - len(result.completions)
        else:
            result, missing = BackendResult(completions=[]), params.n
        if missing > 0:
            # fan out single-sample calls (distinct seeds keep seeded requests reproducible and varied)
            extra = await asyncio.gather(*[
                self._one_call(prompt, params, adapter, 1, seed_offset=len(result.completions) + i) for i in range(missing)
            ])
            for part in extra:
                result.completions += part.completions
                result.completion_tokens += part.completion_tokens
                result.prompt_tokens = result.prompt_tokens or part.prompt_tokens
                result.prompt_token_ids = result.prompt_token_ids or part.prompt_token_ids
        return result

    async def healthy(self) -> bool:
        try:
            await asyncio.wait_for(self.client().models.list(), timeout=5.0)
        except (HaloError, openai.OpenAIError, asyncio.TimeoutError):
            return False
        return True

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None


class VllmBackend(OpenAICompatibleBackend):
    kind = ppb.BACKEND_KIND_VLLM
    constrains_output = True
    caches_prompts_by_adapter_name = True

    def __init__(self, route) -> None:
        super().__init__(route)
        self._http: httpx.AsyncClient | None = None

    def model_for(self, adapter: str | None) -> str:
        return adapter or self.route.model_name

    def request_body(self, prompt: Prompt, params: SampleParams, adapter: str | None, n: int) -> dict[str, Any]:
        """Every sampling field explicit (NEUTRAL_SAMPLING plus temperature and top_p): the tokens are
        drawn from softmax(logits / T) cut only at top_p, whatever defaults the server or its
        checkpoint's generation_config.json carry, so the learner can score the same distribution."""
        body = super().request_body(prompt, params, adapter, n)
        body.update(presence_penalty=NEUTRAL_SAMPLING["presence_penalty"],
                    frequency_penalty=NEUTRAL_SAMPLING["frequency_penalty"])
        extra = dict(body.get("extra_body") or {})
        extra.update({k: NEUTRAL_SAMPLING[k] for k in ("top_k", "min_p", "repetition_penalty")})
        body["extra_body"] = extra
        return body

    def extra_body(self, params: SampleParams) -> dict[str, Any]:
        extra = super().extra_body(params)
        if params.logprobs:
            # token ids of the completion (and prompt) and logprob tokens as "token_id:N": exact ids for
            # importance ratios, no detokenize/retokenize round trip
            extra.setdefault("return_token_ids", True)
            extra.setdefault("return_tokens_as_token_ids", True)
        if params.output_regex:
            # vLLM >= 0.11's structured outputs (xgrammar / guidance / outlines, the server's choice):
            # the logits of every token the regex cannot continue with are masked before sampling,
            # so the returned logprobs are those of the renormalised, masked distribution
            extra["structured_outputs"] = {"regex": params.output_regex}
        return extra

    def _admin(self) -> httpx.AsyncClient:
        if self._http is None:
            key = self.route.resolve_api_key()
            headers = {"Authorization": f"Bearer {key}"} if key else {}
            self._http = httpx.AsyncClient(base_url=self.route.base_url.rstrip("/") + "/", timeout=self.route.timeout_s, headers=headers)
        return self._http

    async def _post(self, endpoint: str, payload: dict[str, Any]) -> httpx.Response:
        async def call() -> httpx.Response:
            try:
                response = await self._admin().post(endpoint, json=payload)
            except httpx.TimeoutException as exc:
                raise TransientBackendError(f"{endpoint} timed out: {exc}", timeout=True) from None
            except httpx.TransportError as exc:
                raise TransientBackendError(f"cannot connect to {self.route.base_url}: {exc}") from None
            if response.status_code >= 500 or response.status_code == 429:
                raise TransientBackendError(f"{endpoint}: {response.status_code} {response.text[:200]}")
            return response

        return await self.with_retries(endpoint, call)

    @staticmethod
    def _endpoint_missing(response: httpx.Response) -> bool:
        # FastAPI's own 404 for a route that does not exist, as opposed to vLLM's "adapter not found"
        return response.status_code in (404, 405) and response.text.strip() in ('{"detail":"Not Found"}', '{"detail":"Method Not Allowed"}')

    async def load_adapter(self, name: str, path: str, weights: bytes) -> None:
        if weights:
            raise InvalidArgument("vLLM loads LoRA adapters from a path (a PEFT folder on the vLLM host), not inline weights")
        if not path:
            raise InvalidArgument("LoadAdapter on a vLLM route needs `path` (PEFT adapter folder)")
        # vLLM refuses a name it holds: unload it first. The gateway reloads a name only with the
        # weights first loaded under it (halo.policy.adapter_names): the same weights come back.
        await self.unload_adapter(name, missing_ok=True)
        response = await self._post("load_lora_adapter", {"lora_name": name, "lora_path": path})
        if self._endpoint_missing(response):
            raise FailedPrecondition(
                f"vLLM at {self.route.base_url} does not allow runtime LoRA loading "
                "(start it with --enable-lora and VLLM_ALLOW_RUNTIME_LORA_UPDATING=True)"
            )
        if response.status_code >= 400:
            raise InvalidArgument(f"vLLM refused adapter {name!r} from {path!r}: {response.text[:300]}")

    async def unload_adapter(self, name: str, missing_ok: bool = True) -> None:
        response = await self._post("unload_lora_adapter", {"lora_name": name})
        if self._endpoint_missing(response):
            raise FailedPrecondition(f"vLLM at {self.route.base_url} does not allow runtime LoRA unloading")
        if response.status_code >= 400 and not missing_ok:
            raise NotFound(f"vLLM has no adapter {name!r}: {response.text[:200]}")

    async def close(self) -> None:
        await super().close()
        if self._http is not None:
            await self._http.aclose()
            self._http = None
