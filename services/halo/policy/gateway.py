"""The gateway core: routes, adapters, concurrency limits, prompt building and parsing.

No protobuf here: the gRPC glue (server.py) converts requests into these calls. Every backend
gets the same treatment: a route's concurrency limit is taken before its backend is called
(RESOURCE_EXHAUSTED when no slot frees within `queue_timeout_s`), the prompt is built by
halo.agent.prompt, and every completion is parsed by halo.agent.parse into a candidate whose
validity, repairs and typed parse error travel with it.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from halo.agent.actions import Action
from halo.agent.context import PolicyContext
from halo.agent.formats import ActionFormat, format_action
from halo.agent.parse import ParseError, parse_action
from halo.agent.prompt import PromptOptions, build_prompt
from halo.policy import metrics
from halo.policy.adapter_names import AdapterNames, AdapterSource, adapter_fingerprint
from halo.policy.backends import build_backend
from halo.policy.backends.base import Backend, SampleParams, TokenPrompt
from halo.policy.config import GatewayConfig, RouteConfig
from halo.policy.critique import JudgeVerdict, critic_prompt, judge_prompt, parse_critique, parse_judge
from halo.runtime.aio import acquire_within
from halo.runtime.errors import FailedPrecondition, HaloError, InvalidArgument, NotFound, ResourceExhausted, Unavailable
from halo.runtime.logging import get_logger

log = get_logger("halo.policy")

MAX_N = 64
MAX_TOKENS = 8192
CRITIC_MAX_TOKENS = 400
JUDGE_MAX_TOKENS = 200


@dataclass(frozen=True)
class PromptOverrides:
    """Per-request prompt options; zero/False fields keep the route's defaults."""

    history_steps: int = 0
    max_axtree_chars: int = 0
    skip_axtree: bool = False
    skip_screenshot: bool = False


@dataclass(frozen=True)
class SampleCall:
    model: str
    ctx: PolicyContext
    adapter: str = ""
    n: int = 1
    temperature: float = 1.0
    top_p: float = 1.0
    max_tokens: int = 0
    seed: int = 0
    logprobs: bool = False
    action_format: ActionFormat | None = None
    prompt: PromptOverrides = PromptOverrides()
    tokens: TokenPrompt | None = None   # a prompt the caller rendered itself: sampled as is, no prompt built
    output_regex: str = ""              # constrain the completion (backends with structured outputs only)


@dataclass
class SampledCandidate:
    text: str
    action: Action | None
    parse_error: ParseError | None = None
    repairs: tuple[str, ...] = ()
    parsed_format: ActionFormat | None = None
    token_ids: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    finish_reason: str = ""

    @property
    def valid(self) -> bool:
        return self.action is not None


@dataclass
class SampleOutcome:
    candidates: list[SampledCandidate]
    route: str
    backend_kind: int
    adapter: str
    adapter_version: int
    prompt_tokens: int
    completion_tokens: int
    backend_seconds: float
    prompt_token_ids: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class AdapterInfo:
    name: str
    version: int
    path: str


@dataclass(frozen=True)
class RouteInfo:
    config: RouteConfig
    kind: int
    adapters: list[str]
    default_adapter: str
    healthy: bool
    endpoint: str = ""      # the backend's URL(s): every engine of a route with several, comma-separated


class Route:
    def __init__(self, config: RouteConfig, backend: Backend) -> None:
        self.config = config
        self.backend = backend
        self.adapters: dict[str, AdapterInfo] = {}
        self.default_adapter: str = ""
        self.healthy = False
        self.start_error: str = ""
        self._versions: dict[str, int] = {}
        self.names = AdapterNames()   # kept only when the backend caches prompts by adapter name
        self._slots = asyncio.Semaphore(config.max_concurrency)
        self._adapter_lock = asyncio.Lock()

    @property
    def name(self) -> str:
        return self.config.name

    def next_version(self, name: str) -> int:
        self._versions[name] = self._versions.get(name, 0) + 1
        return self._versions[name]

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one of the route's concurrency slots; RESOURCE_EXHAUSTED if none frees in time."""
        if self.start_error:
            raise Unavailable(f"route {self.name!r} failed to start: {self.start_error}")
        timeout = self.config.queue_timeout_s
        try:
            await acquire_within(self._slots, timeout)
        except TimeoutError:
            metrics.REJECTIONS.labels(self.name).inc()
            raise ResourceExhausted(
                f"route {self.name!r}: all {self.config.max_concurrency} backend slots busy for {timeout:g}s"
            ) from None
        metrics.IN_FLIGHT.labels(self.name).inc()
        try:
            yield
        finally:
            metrics.IN_FLIGHT.labels(self.name).dec()
            self._slots.release()

    def resolve_adapter(self, requested: str) -> AdapterInfo | None:
        name = requested or self.default_adapter
        if not name:
            return None
        try:
            return self.adapters[name]
        except KeyError:
            raise NotFound(f"route {self.name!r} has no adapter {name!r} (loaded: {sorted(self.adapters) or 'none'})") from None


class PolicyGateway:
    def __init__(self, config: GatewayConfig, backends: dict[str, Backend] | None = None) -> None:
        """`backends` replaces the built ones by route name (tests inject SDK-level fakes there)."""
        self.config = config
        backends = backends or {}
        self.routes = {r.name: Route(r, backends.get(r.name) or build_backend(r)) for r in config.routes}
        self._health_task: asyncio.Task | None = None

    # ------------------------------------------------------------------ lifecycle

    async def start(self, health_interval_s: float = 30.0) -> None:
        async def start_route(route: Route) -> None:
            try:
                await route.backend.start()
            except Exception as exc:  # a broken route must not take the others down
                route.start_error = f"{type(exc).__name__}: {exc}"
                log.error("route failed to start", route=route.name, error=route.start_error)

        await asyncio.gather(*(start_route(r) for r in self.routes.values()))
        await self.probe_health()
        self._health_task = asyncio.create_task(self._health_loop(health_interval_s))

    async def _health_loop(self, interval: float) -> None:
        while True:
            await asyncio.sleep(interval)
            await self.probe_health()

    async def probe_health(self) -> None:
        async def probe(route: Route) -> None:
            try:
                route.healthy = not route.start_error and await route.backend.healthy()
            except Exception:  # a probe never fails the gateway
                route.healthy = False

        await asyncio.gather(*(probe(r) for r in self.routes.values()))

    async def close(self) -> None:
        if self._health_task is not None:
            self._health_task.cancel()
        await asyncio.gather(*(r.backend.close() for r in self.routes.values()), return_exceptions=True)

    # -------------------------------------------------------------------- helpers

    def route(self, name: str) -> Route:
        if not name:
            raise InvalidArgument("model (a route name) is required; see ListModels")
        try:
            return self.routes[name]
        except KeyError:
            raise NotFound(f"no model route {name!r} (routes: {', '.join(sorted(self.routes))})") from None

    @staticmethod
    def _prompt_options(route: Route, fmt: ActionFormat, overrides: PromptOverrides) -> PromptOptions:
        base = route.config.prompt_options(fmt)
        return PromptOptions(
            action_format=fmt,
            history_steps=overrides.history_steps or base.history_steps,
            max_axtree_chars=overrides.max_axtree_chars or base.max_axtree_chars,
            include_axtree=base.include_axtree and not overrides.skip_axtree,
            include_screenshot=base.include_screenshot and not overrides.skip_screenshot,
        )

    @staticmethod
    def _validate(call: SampleCall) -> None:
        if not 1 <= call.n <= MAX_N:
            raise InvalidArgument(f"n must be 1..{MAX_N}, got {call.n}")
        if call.temperature < 0 or not 0 < call.top_p <= 1:
            raise InvalidArgument(f"temperature must be >= 0 and top_p in (0, 1] (got {call.temperature}, {call.top_p})")
        if call.max_tokens > MAX_TOKENS:
            raise InvalidArgument(f"max_tokens must be <= {MAX_TOKENS}, got {call.max_tokens}")
        if call.tokens is not None and call.tokens.length == 0:
            raise InvalidArgument("tokens: the token prompt is empty")

    # ------------------------------------------------------------------------ rpcs

    async def sample(self, call: SampleCall) -> SampleOutcome:
        started = time.perf_counter()
        self._validate(call)
        route = self.route(call.model)
        adapter = route.resolve_adapter(call.adapter)
        fmt = call.action_format or route.config.format
        backend = route.backend
        params = SampleParams(
            n=call.n, temperature=call.temperature, top_p=call.top_p, max_tokens=call.max_tokens or route.config.max_tokens,
            seed=call.seed, logprobs=call.logprobs, output_regex=call.output_regex,
        )
        if call.output_regex and not backend.constrains_output:
            raise FailedPrecondition(f"route {route.name!r} ({route.config.backend}) cannot constrain its output to a "
                                     "regex (output_regex needs a vLLM route)")
        adapter_name = adapter.name if adapter else None
        if call.tokens is not None:
            run = functools.partial(backend.sample_tokens, call.tokens, params, adapter_name)
        else:
            prompt = None if backend.chooses_actions else build_prompt(call.ctx, self._prompt_options(route, fmt, call.prompt))
            run = functools.partial(backend.sample, prompt, call.ctx, params, adapter_name)
        outcome = "ok"
        try:
            async with route.slot():
                backend_started = time.perf_counter()
                result = await run()
                backend_seconds = time.perf_counter() - backend_started
        except HaloError as exc:
            outcome = type(exc).__name__
            raise
        finally:
            metrics.REQUESTS.labels(route.name, "Sample", outcome).inc()
        width, height = call.ctx.page.width, call.ctx.page.height
        candidates = []
        for completion in result.completions:
            if completion.action is not None:
                # the backend chose the action itself: write it in the syntax the caller asked for
                text = format_action(completion.action, fmt, width, height)
                candidate = SampledCandidate(text, completion.action, parsed_format=fmt)
            else:
                parsed = parse_action(completion.text, fmt, width, height)
                candidate = SampledCandidate(completion.text, parsed.action, parsed.error, parsed.repairs, parsed.format)
                for repair in parsed.repairs:
                    metrics.REPAIRS.labels(route.name, repair).inc()
            candidate.token_ids, candidate.logprobs = completion.token_ids, completion.logprobs
            candidate.finish_reason = completion.finish_reason
            metrics.CANDIDATES.labels(route.name, str(candidate.valid).lower()).inc()
            candidates.append(candidate)
        metrics.BACKEND_SECONDS.labels(route.name).observe(backend_seconds)
        metrics.OVERHEAD_SECONDS.labels(route.name).observe(time.perf_counter() - started - backend_seconds)
        return SampleOutcome(
            candidates=candidates, route=route.name, backend_kind=backend.kind, adapter=adapter.name if adapter else "",
            adapter_version=adapter.version if adapter else 0, prompt_tokens=result.prompt_tokens,
            completion_tokens=result.completion_tokens, backend_seconds=backend_seconds,
            prompt_token_ids=result.prompt_token_ids if call.logprobs else [],
        )

    async def critique(self, model: str, ctx: PolicyContext, candidates: list[Action]) -> tuple[list[float], str, str, bool]:
        """(scores in [0, 1], rationale, route name, parsed)."""
        if not candidates:
            raise InvalidArgument("critique needs at least one candidate action")
        name = model or self.config.default_critic
        if not name:
            raise FailedPrecondition("no critic route: name one in CritiqueRequest.model or set default_critic")
        route = self.route(name)
        async with route.slot():
            native = await route.backend.score_actions(ctx, candidates, route.default_adapter or None)
            if native is not None:
                metrics.REQUESTS.labels(route.name, "Critique", "ok").inc()
                return native, "probabilities of the embedded policy, relative to its top candidate", route.name, True
            if route.backend.chooses_actions:
                raise FailedPrecondition(f"route {route.name!r} cannot critique")
            prompt = critic_prompt(ctx, candidates, route.config.prompt_options())
            params = SampleParams(n=1, temperature=0.0, max_tokens=CRITIC_MAX_TOKENS)
            result = await route.backend.sample(prompt, ctx, params, route.default_adapter or None)
        text = result.completions[0].text if result.completions else ""
        verdict = parse_critique(text, len(candidates))
        metrics.REQUESTS.labels(route.name, "Critique", "ok" if verdict.parsed else "unparsed").inc()
        return verdict.scores, verdict.rationale, route.name, verdict.parsed

    async def judge(self, model: str, question: str, answer: str, rubric: str) -> tuple[JudgeVerdict, str]:
        if not rubric:
            raise InvalidArgument("judge needs a rubric")
        name = model or self.config.default_judge
        if not name:
            raise FailedPrecondition("no judge route: name one in JudgeRequest.model or set default_judge")
        route = self.route(name)
        if route.backend.chooses_actions:
            raise FailedPrecondition(f"route {route.name!r} ({route.config.backend}) cannot judge: it has no language model")
        params = SampleParams(n=1, temperature=0.0, max_tokens=JUDGE_MAX_TOKENS)
        async with route.slot():
            result = await route.backend.sample(judge_prompt(question, answer, rubric), None, params, route.default_adapter or None)
        verdict = parse_judge(result.completions[0].text if result.completions else "")
        metrics.REQUESTS.labels(route.name, "Judge", "ok" if verdict.parsed else "unparsed").inc()
        return verdict, route.name

    async def load_adapter(self, model: str, name: str, path: str, weights: bytes, make_default: bool) -> int:
        """Load weights under `name` on a route; the adapter's version under that name.

        On a route whose backend caches prompts by adapter name (vLLM), a name once loaded takes
        only the same weights again, FAILED_PRECONDITION otherwise (halo.policy.adapter_names);
        a refused load changes nothing. Other routes replace the weights under a loaded name."""
        if not name:
            raise InvalidArgument("adapter name is required")
        route = self.route(model)
        if route.start_error:
            raise Unavailable(f"route {route.name!r} failed to start: {route.start_error}")
        async with route._adapter_lock:  # loads under one route are serialised; samples are not blocked
            source = None
            if route.backend.caches_prompts_by_adapter_name:
                source = AdapterSource(path, await asyncio.to_thread(adapter_fingerprint, path) if path else None)
                refusal = route.names.refusal(name, source)
                if refusal:
                    raise FailedPrecondition(f"route {route.name!r}: {refusal}")
            await route.backend.load_adapter(name, path, weights)
            if source is not None:
                route.names.loaded(name, source)
            version = route.next_version(name)
            route.adapters[name] = AdapterInfo(name, version, path)
            if make_default:
                route.default_adapter = name
        metrics.ADAPTER_LOADS.labels(route.name).inc()
        log.info("adapter loaded", route=route.name, adapter=name, version=version, inline_bytes=len(weights), path=path)
        return version

    async def unload_adapter(self, model: str, name: str) -> bool:
        route = self.route(model)
        async with route._adapter_lock:
            if name not in route.adapters:
                return False
            await route.backend.unload_adapter(name)
            del route.adapters[name]
            route.names.unloaded(name)
            if route.default_adapter == name:
                route.default_adapter = ""
        return True

    def list_models(self) -> list[RouteInfo]:
        return [
            RouteInfo(r.config, r.backend.kind, sorted(r.adapters), r.default_adapter, r.healthy, r.backend.endpoint())
            for r in self.routes.values()
        ]
