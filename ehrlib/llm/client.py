"""The client every stage calls: cache, concurrency limit, timeout, retries, usage.

A `Backend` only translates records to one provider's wire format and back and
raises `LLMCallError` (marked transient or not). Everything around the call lives
here, once, so all backends behave the same:

    cache hit? -> return it (no network)
    semaphore (per client, per event loop) -> per-call timeout -> backend
    rate limiter (requests/tokens per minute, shared per endpoint and model)
    transient failure (429, 5xx, 408, timeout, dropped connection) -> exponential
    backoff with jitter (honouring Retry-After), up to `RetryPolicy.max_attempts`;
    the same HTTP 500 twice in a row is deterministic (a server refusing the request's
    shape), so it is not retried further; 4xx are never retried
    cannot connect (refused, no such host, no TCP answer) before any call of this client
    was answered -> `UNREACHABLE_ATTEMPTS` quick attempts, then `EndpointUnreachable`, which
    every later call raises at once: a dead endpoint stops the run within seconds instead
    of failing every note after its full backoff; credentials refused (HTTP 401/403, or no
    Google token) before any success -> `EndpointUnreachable` at once, for the same reason
    success -> cache write (only a reply the caller's ``accept`` check passes: a malformed
    or truncated reply is never stored, and one already stored is not replayed), usage record
    finish_reason "length" (the reply hit max_tokens) -> one retry with a larger budget,
    then a failure of kind "truncated" that says so (never a schema error downstream)

google-genai's own retry is left off (its default) so retries are counted here.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import random
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from ehrlib.errors import ConfigError, EndpointUnreachable
from ehrlib.llm.cache import ResponseCache, cache_key
from ehrlib.llm.errors import LLMCallError
from ehrlib.llm.phi import EndpointVerdict, check_phi
from ehrlib.llm.ratelimit import RateLimiter
from ehrlib.llm.records import GenerationConfig, LLMResponse, Message, ToolSpec
from ehrlib.llm.usage import UsageLedger

__all__ = ["Accept", "Backend", "RetryPolicy", "Client", "run_sync", "is_truncated", "estimate_tokens"]

T = TypeVar("T")
#: attempts (and the delay between them) before an endpoint never reached counts as down
UNREACHABLE_ATTEMPTS = 3
UNREACHABLE_DELAY_S = 1.0
_TRUNCATED = frozenset({"length", "max_tokens", "MAX_TOKENS"})


def is_truncated(response: LLMResponse) -> bool:
    """The reply stopped at the token limit (OpenAI "length", Gemini MAX_TOKENS)."""
    return (response.finish_reason or "") in _TRUNCATED


#: ``accept(reply) -> problem | None``: why a reply cannot be used (it is then not cached)
Accept = Callable[[LLMResponse], "str | None"]


def _problem(response: LLMResponse, accept: Accept | None) -> str | None:
    """Why ``response`` must not be cached or replayed: cut at the token limit, or refused by ``accept``."""
    if is_truncated(response):
        return f"truncated (finish_reason {response.finish_reason!r})"
    return accept(response) if accept is not None else None


def estimate_tokens(messages: Sequence[Message], tools: Sequence[ToolSpec] | None = None) -> int:
    """A cheap upper-side estimate of a request's prompt tokens (~3.5 characters per token
    for English and JSON), for rate limits and context budgets; servers report the truth.
    """
    chars = sum(len(m.text) + sum(len(r.content) for r in m.tool_results)
                + sum(len(str(c.args)) + len(c.name) for c in m.tool_calls) + 8 for m in messages)
    if tools:
        chars += sum(len(t.description) + len(str(t.parameters_json_schema)) + len(t.name) for t in tools)
    return int(chars / 3.5) + 1


class Backend(Protocol):
    """One provider's translation layer. `endpoint` is the URL requests go to."""

    name: str
    endpoint: str

    async def send(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None,
        config: GenerationConfig,
        timeout_s: float,
    ) -> LLMResponse:
        """Send one request; raise a transport or API error for the client to retry or report."""

    def describe(self) -> dict[str, Any]:
        """Endpoint facts for the run manifest (never credentials)."""


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Exponential backoff with additive jitter: delay_n = min(max, initial * base**n) + U(0, jitter)."""

    max_attempts: int = 5
    initial_s: float = 1.0
    max_s: float = 60.0
    exp_base: float = 2.0
    jitter_s: float = 1.0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ConfigError("retry max_attempts must be at least 1")

    def delay(self, failed_attempts: int, retry_after: float | None, rng: random.Random) -> float:
        """Seconds before the next attempt: exponential backoff with jitter, at least the server's Retry-After."""
        base = min(self.max_s, self.initial_s * self.exp_base ** (failed_attempts - 1))
        delay = base + rng.uniform(0, self.jitter_s)
        if retry_after is not None:
            delay = max(delay, min(retry_after, self.max_s))
        return delay


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine from sync code, also inside Jupyter (where a loop is already running)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


class Client:
    """`LLMClient` implementation wrapping one backend."""

    def __init__(
        self,
        backend: Backend,
        config: GenerationConfig,
        *,
        cache: ResponseCache | None = None,
        cache_salt: str = "",
        retry: RetryPolicy = RetryPolicy(),
        timeout_s: float = 300.0,
        max_concurrency: int = 4,
        ledger: UsageLedger | None = None,
        source_kind: str | None = None,
        safe_hosts: Sequence[str] = (),
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        seed: int | None = None,
        limiter: RateLimiter | None = None,
        context_window: int | None = None,
        max_tokens_retry: int | str | None = "double",
        preset: str | None = None,
    ) -> None:
        if timeout_s <= 0:
            raise ConfigError("timeout_s must be positive")
        if max_concurrency < 1:
            raise ConfigError("max_concurrency must be at least 1")
        self.backend_impl = backend
        self.backend = backend.name
        self.config = config
        self.cache = cache
        self.cache_salt = cache_salt
        self.retry = retry
        self.timeout_s = timeout_s
        self.max_concurrency = max_concurrency
        self.ledger = ledger if ledger is not None else UsageLedger()
        self.safe_hosts = tuple(safe_hosts)
        self.phi_verdict: EndpointVerdict | None = None
        if source_kind is not None:
            self.phi_verdict = self.check_phi(source_kind)
        self._sleep = sleep
        self._rng = random.Random(seed)
        self._semaphores: dict[asyncio.AbstractEventLoop, asyncio.Semaphore] = {}
        self._sem_lock = threading.Lock()
        self.limiter = limiter
        self.context_window = context_window
        self.max_tokens_retry = max_tokens_retry
        self.preset = preset or backend.name
        self.network_calls = 0
        self.retries = 0
        self.truncation_retries = 0
        self.stale_cache_hits = 0
        #: an answer came back from the endpoint (it exists: later connection errors are transient)
        self.reached = False
        #: why the endpoint counts as down (every call then fails at once)
        self.down: str | None = None

    def check_phi(self, source_kind: str) -> EndpointVerdict:
        """Raise PHIError unless data of `source_kind` may go to this client's endpoint."""
        return check_phi(source_kind, self.backend_impl.endpoint, safe_hosts=self.safe_hosts)

    def _semaphore(self) -> asyncio.Semaphore:
        # asyncio primitives bind to one event loop; the sync wrapper may start a new
        # loop per call (and Jupyter has its own), so keep one semaphore per loop.
        loop = asyncio.get_running_loop()
        with self._sem_lock:
            for old in [lp for lp in self._semaphores if lp.is_closed()]:
                del self._semaphores[old]
            sem = self._semaphores.get(loop)
            if sem is None:
                sem = self._semaphores[loop] = asyncio.Semaphore(self.max_concurrency)
            return sem

    async def _generate(self, messages: Sequence[Message], tools: Sequence[ToolSpec] | None,
                        cfg: GenerationConfig, stage: str | None, note_id: str | None,
                        accept: Accept | None = None) -> LLMResponse:
        msgs = tuple(messages)
        if not msgs:
            raise ConfigError("generate() needs at least one message")
        key = cache_key(self.backend, msgs, tools, cfg, salt=self.cache_salt) if self.cache is not None else None
        if self.cache is not None and key is not None:
            hit = self.cache.get(key)
            if hit is not None and _problem(hit, accept) is not None:
                # stored by an older version that cached unusable replies: ask the server again
                self.stale_cache_hits += 1
                hit = None
            if hit is not None:
                # The reply keeps its original usage (identical output); the ledger
                # records the hit's real latency, which is ~0.
                self.ledger.record(backend=self.backend, model=cfg.model,
                                   usage=dataclasses.replace(hit.usage, latency_ms=0.0),
                                   cached=True, stage=stage, note_id=note_id)
                return hit
        try:
            response, attempts = await self._call_with_retries(msgs, tools, cfg)
        except LLMCallError as exc:
            self.ledger.record_failure(exc.kind, str(exc), stage)
            raise
        if self.cache is not None and key is not None and _problem(response, accept) is None:
            self.cache.put(key, self.backend, cfg.model, response)
        self.ledger.record(backend=self.backend, model=cfg.model, usage=response.usage,
                           cached=False, attempts=attempts, stage=stage, note_id=note_id)
        return response

    def _larger_budget(self, cfg: GenerationConfig) -> int | None:
        if self.max_tokens_retry in (None, 0, "none", False) or cfg.max_tokens is None:
            return None
        if self.max_tokens_retry == "double":
            bigger = cfg.max_tokens * 2
        else:
            bigger = int(self.max_tokens_retry)
        if self.context_window:
            bigger = min(bigger, self.context_window // 2)
        return bigger if bigger > cfg.max_tokens else None

    async def generate(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] | None = None,
        config: GenerationConfig | None = None,
        stage: str | None = None,
        note_id: str | None = None,
        accept: Accept | None = None,
    ) -> LLMResponse:
        """One model call. Raises LLMCallError when it fails for good (kind "truncated"
        when the reply hit the token limit even after one retry with a larger budget).

        ``accept(reply)`` returns why a reply cannot be used (None when it can): such a
        reply is returned but never cached, so a rerun asks the server again.
        """
        cfg = config or self.config
        response = await self._generate(messages, tools, cfg, stage, note_id, accept)
        if not is_truncated(response):
            return response
        bigger = self._larger_budget(cfg)
        if bigger is not None:
            self.truncation_retries += 1
            cfg = cfg.replace(max_tokens=bigger)
            response = await self._generate(messages, tools, cfg, stage, note_id, accept)
            if not is_truncated(response):
                return response
        message = (f"the reply was cut off at the token limit (max_tokens={cfg.max_tokens}, finish_reason "
                   f"{response.finish_reason!r}); raise llm.max_tokens (thinking models spend part of it "
                   "on reasoning) or shorten the request")
        self.ledger.record_failure("truncated", message, stage)
        raise LLMCallError(message, kind="truncated")

    async def _call_with_retries(
        self, msgs: tuple[Message, ...], tools: Sequence[ToolSpec] | None, cfg: GenerationConfig
    ) -> tuple[LLMResponse, int]:
        attempt = 0
        previous: tuple[int | None, str] | None = None
        while True:
            attempt += 1
            if self.down is not None:
                raise EndpointUnreachable(self.down)
            try:
                async with self._semaphore():
                    self.network_calls += 1
                    response = await self._one_call(msgs, tools, cfg)
                self.reached = True
                return response, attempt
            except LLMCallError as exc:
                if not self.reached and (exc.kind == "auth" or exc.status in (401, 403)):
                    # the credentials are refused before anything worked: every call would be
                    self.down = (f"{self.backend} endpoint {self.backend_impl.endpoint} authentication failed: "
                                 f"{exc}")
                    self.ledger.record_failure("auth", self.down)
                    raise EndpointUnreachable(self.down) from exc
                if exc.status is not None:
                    self.reached = True   # an HTTP answer: the server is there
                if exc.kind == "unreachable" and not self.reached:
                    if attempt >= UNREACHABLE_ATTEMPTS:
                        self.down = (f"{self.backend} endpoint {self.backend_impl.endpoint} is unreachable "
                                     f"after {attempt} attempts: {exc}")
                        self.ledger.record_failure("unreachable", self.down)
                        raise EndpointUnreachable(self.down) from exc
                    self.retries += 1
                    await self._sleep(UNREACHABLE_DELAY_S)
                    continue
                signature = (exc.status, str(exc))
                # 500 (not 502/503/504: gateways and overload) with the same text twice is the
                # server refusing this request's shape, e.g. llama-cpp-python's validation errors
                repeated = (exc.status == 500 or exc.kind == "bad_reply") and signature == previous
                previous = signature
                if not exc.transient or repeated or attempt >= self.retry.max_attempts:
                    exc.attempts = attempt
                    if exc.transient:
                        why = "the same error twice (a deterministic refusal)" if repeated else \
                            f"{attempt} attempts"
                        raise LLMCallError(
                            f"{self.backend} call failed after {why}: {exc}",
                            status=exc.status, transient=True, attempts=attempt, kind=exc.kind,
                        ) from exc
                    raise
                self.retries += 1
                await self._sleep(self.retry.delay(attempt, exc.retry_after, self._rng))

    async def _one_call(
        self, msgs: tuple[Message, ...], tools: Sequence[ToolSpec] | None, cfg: GenerationConfig
    ) -> LLMResponse:
        booked = None
        if self.limiter is not None:
            booked = await self.limiter.acquire(estimate_tokens(msgs, tools) + (cfg.max_tokens or 0), self._sleep)
        start = time.perf_counter()
        try:
            # The backend applies the timeout to its HTTP request; this outer bound
            # is a backstop for transports that ignore it.
            response = await asyncio.wait_for(
                self.backend_impl.send(msgs, tools, cfg, self.timeout_s), self.timeout_s + 5.0
            )
        except TimeoutError as exc:
            raise LLMCallError(f"{self.backend} call timed out after {self.timeout_s:g} s",
                               transient=True, kind="timeout") from exc
        if booked is not None and self.limiter is not None:
            u = response.usage
            self.limiter.settle(booked, u.input_tokens + u.output_tokens + u.thinking_tokens)
        latency = (time.perf_counter() - start) * 1000.0
        usage = response.usage
        return LLMResponse(
            text=response.text,
            tool_calls=response.tool_calls,
            usage=dataclasses.replace(usage, latency_ms=latency),
            raw=response.raw,
            cached=False,
            finish_reason=response.finish_reason,
        )

    def generate_sync(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] | None = None,
        config: GenerationConfig | None = None,
        stage: str | None = None,
        note_id: str | None = None,
        accept: Accept | None = None,
    ) -> LLMResponse:
        """Blocking ``generate``, for callers outside an event loop."""
        return run_sync(self.generate(messages, tools=tools, config=config, stage=stage, note_id=note_id,
                                      accept=accept))

    def manifest(self) -> dict[str, Any]:
        """What the run manifest records about this client (no secrets)."""
        return {
            "backend": self.backend,
            **self.backend_impl.describe(),
            "config": self.config.to_dict(),
            "timeout_s": self.timeout_s,
            "max_concurrency": self.max_concurrency,
            "retry": {"max_attempts": self.retry.max_attempts, "initial_s": self.retry.initial_s,
                      "max_s": self.retry.max_s},
            "cache": self.cache.stats() if self.cache is not None else None,
            "cache_salt": self.cache_salt,
            "preset": self.preset,
            "network_calls": self.network_calls,
            "retries": self.retries,
            "truncation_retries": self.truncation_retries,
            "stale_cache_hits": self.stale_cache_hits,
            "failures": self.ledger.failure_summary(),
            "context_window": self.context_window,
            "rate_limit": self.limiter.describe() if self.limiter is not None else None,
            "phi": None if self.phi_verdict is None else {
                "endpoint_host": self.phi_verdict.host, "reason": self.phi_verdict.reason},
            "usage": self.ledger.totals(),
        }
