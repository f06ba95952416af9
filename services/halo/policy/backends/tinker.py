"""Tinker sampling clients (Qwen3-VL-30B-A3B hosted by Thinking Machines).

The prompt is rendered to tokens locally with tinker_cookbook's Qwen3-VL renderer (the same
token layout the Tinker trainer uses, screenshots as ImageChunks), sampled with a
SamplingClient for the base model or a `tinker://` checkpoint, and decoded with the renderer's
parser. Token ids and per-token logprobs come back with every sample, which is what the
importance_sampling / ppo losses need.

Token prompts (SampleRequest.tokens): a trainer that rendered the prompt itself (tinker-cookbook's
RL loop, `halo train --backend tinker --tinker-sampling gateway`) sends its tokens and stop
condition; they become the SDK's ModelInput as they are, so the gateway samples exactly what the
trainer will train on.

Adapters: LoadAdapter(path="tinker://.../sampler_weights/...") creates a sampling client for
that checkpoint under a name; the default is the route's `model_path` or its base model.
"""

from __future__ import annotations

import asyncio
from typing import Any

from halo.agent.context import PolicyContext
from halo.agent.prompt import Prompt
from halo.policy.backends.base import Backend, BackendResult, Completion, SampleParams, TokenPrompt, TransientBackendError
from halo.runtime.errors import FailedPrecondition, HaloError, InvalidArgument, NotFound
from halo.v1 import policy_pb2 as ppb

TINKER_API_KEY_ENV = "TINKER_API_KEY"


class TinkerBackend(Backend):
    kind = ppb.BACKEND_KIND_TINKER

    def __init__(self, route) -> None:
        super().__init__(route)
        self.renderer: Any = None
        self.tokenizer: Any = None
        self._service: Any = None
        self._base_client: Any = None
        self._adapters: dict[str, Any] = {}
        self._client_lock = asyncio.Lock()

    async def start(self) -> None:
        # Without a key the route cannot sample anyway; loading the tokenizer from the hub would
        # only stall an offline start. It is loaded on first use instead.
        if self.route.resolve_api_key() or self._env_key():
            await asyncio.to_thread(self._load_renderer)

    async def _ensure_renderer(self) -> None:
        if self.renderer is None:
            async with self._client_lock:
                if self.renderer is None:
                    await asyncio.to_thread(self._load_renderer)

    def _load_renderer(self) -> None:
        from tinker_cookbook import renderers
        from tinker_cookbook.image_processing_utils import get_image_processor
        from tinker_cookbook.tokenizer_utils import get_tokenizer

        options = self.route.tinker
        tokenizer_name = options.tokenizer or self.route.base_model
        self.tokenizer = get_tokenizer(tokenizer_name)
        image_processor = get_image_processor(options.image_processor or tokenizer_name)
        self.renderer = renderers.get_renderer(options.renderer, self.tokenizer, image_processor, model_name=self.route.base_model)

    def service_client(self) -> Any:
        """The SDK's ServiceClient (lazy: no network until a call)."""
        if self._service is None:
            import tinker

            key = self.route.resolve_api_key() or self._env_key()
            if not key:
                raise FailedPrecondition(f"route {self.route.name!r} needs a Tinker API key: set {self.route.api_key_env or TINKER_API_KEY_ENV}")
            kwargs: dict[str, Any] = {"api_key": key}
            if self.route.tinker.service_url:
                kwargs["base_url"] = self.route.tinker.service_url
            self._service = tinker.ServiceClient(**kwargs)
        return self._service

    @staticmethod
    def _env_key() -> str:
        import os

        return os.environ.get(TINKER_API_KEY_ENV, "")

    async def _create_sampling_client(self, *, model_path: str = "") -> Any:
        service = self.service_client()
        kwargs = {"model_path": model_path} if model_path else {"base_model": self.route.base_model}
        try:
            return await service.create_sampling_client(**kwargs)
        except HaloError:
            raise
        except Exception as exc:  # the SDK's connection/API errors
            raise TransientBackendError(f"creating a Tinker sampling client failed: {exc}") from None

    async def _client_for(self, adapter: str | None) -> Any:
        if adapter is not None:
            try:
                return self._adapters[adapter]
            except KeyError:
                raise NotFound(f"route {self.route.name!r} has no adapter {adapter!r} (loaded: {sorted(self._adapters)})") from None
        async with self._client_lock:
            if self._base_client is None:
                self._base_client = await self.with_retries(
                    "create_sampling_client", lambda: self._create_sampling_client(model_path=self.route.tinker.model_path)
                )
            return self._base_client

    def build_model_input(self, prompt: Prompt) -> Any:
        if self.renderer is None:
            raise FailedPrecondition(f"route {self.route.name!r}: the Qwen3-VL renderer is not loaded yet")
        return self.renderer.build_generation_prompt(prompt.to_renderer_messages())

    def decode(self, tokens: list[int]) -> str:
        """The raw completion text. HALO's parser reads the <tool_call> blocks itself (it records
        repairs and typed errors, where the renderer's own parser would drop a malformed call)."""
        text = self.tokenizer.decode(tokens, skip_special_tokens=False)
        for stop in ("<|im_end|>", "<|endoftext|>"):
            text = text.split(stop, 1)[0]
        return text

    async def sample(self, prompt: Prompt | None, ctx: PolicyContext | None, params: SampleParams,
                     adapter: str | None) -> BackendResult:
        assert prompt is not None
        client = await self._client_for(adapter)
        await self._ensure_renderer()
        model_input = await asyncio.to_thread(self.build_model_input, prompt)
        return await self._sample(client, model_input, self.sampling_params(params), params)

    async def sample_tokens(self, prompt: TokenPrompt, params: SampleParams, adapter: str | None) -> BackendResult:
        import tinker

        client = await self._client_for(adapter)
        await self._ensure_renderer()   # its tokenizer decodes the completion for the raw text
        chunks: list[Any] = [
            tinker.types.ImageChunk(data=c.image, format=c.image_format or "png", expected_tokens=c.image_tokens) if c.image
            else tinker.types.EncodedTextChunk(tokens=list(c.tokens))
            for c in prompt.chunks
        ]
        stop = list(prompt.stop_token_ids) or list(prompt.stop) or None
        return await self._sample(client, tinker.ModelInput(chunks=chunks), self.sampling_params(params, stop), params)

    def sampling_params(self, params: SampleParams, stop: Any = None) -> Any:
        import tinker

        return tinker.SamplingParams(
            max_tokens=params.max_tokens, temperature=params.temperature, top_p=params.top_p,
            seed=params.seed or None, stop=stop if stop is not None else self.renderer.get_stop_sequences(),
        )

    async def _sample(self, client: Any, model_input: Any, sampling: Any, params: SampleParams) -> BackendResult:
        async def call() -> Any:
            try:
                return await asyncio.wait_for(
                    client.sample(prompt=model_input, num_samples=params.n, sampling_params=sampling),
                    timeout=self.route.timeout_s,
                )
            except asyncio.TimeoutError:
                raise TransientBackendError("Tinker sample timed out", timeout=True) from None
            except HaloError:
                raise
            except Exception as exc:
                raise TransientBackendError(f"Tinker sample failed: {exc}") from None

        response = await self.with_retries("sample", call)
        completions = [
            Completion(
                text=self.decode(list(seq.tokens)), finish_reason=str(seq.stop_reason),
                token_ids=list(seq.tokens), logprobs=list(seq.logprobs or []),
            )
            for seq in response.sequences
        ]
        prompt_ids = [t for chunk in model_input.chunks for t in getattr(chunk, "tokens", [])]
        return BackendResult(
            completions=completions, prompt_tokens=model_input.length,
            completion_tokens=sum(len(c.token_ids) for c in completions),
            prompt_token_ids=prompt_ids if params.logprobs else [],
        )

    async def load_adapter(self, name: str, path: str, weights: bytes) -> None:
        if weights or not path.startswith("tinker://"):
            raise InvalidArgument("LoadAdapter on a Tinker route needs path=tinker://... (a sampler checkpoint)")
        self._adapters[name] = await self.with_retries("create_sampling_client", lambda: self._create_sampling_client(model_path=path))

    async def unload_adapter(self, name: str) -> None:
        self._adapters.pop(name, None)

    async def healthy(self) -> bool:
        return self.renderer is not None and bool(self.route.resolve_api_key() or self._env_key())
