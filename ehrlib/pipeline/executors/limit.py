"""Requests- and tokens-per-minute limits that bind a whole Ray cluster, not one worker.

A quota (Gemini, Azure, a shared vLLM gateway) counts every request of the project, so
N workers each keeping their own per-minute budget would send N times the limit. Here
one :class:`SlidingWindow` per endpoint lives in a Ray actor; every worker books a
request there before it goes on the network (:class:`LimitedBackend` wraps the client's
backend, so response-cache hits and local work book nothing, while each retry books
again — the server counts it too).

The interface is the per-process limiter's in ``ehrlib.llm`` (``try_acquire`` →
``(wait_s, entry)``, ``settle(entry, tokens)``, ``describe()``, async ``acquire``):
:class:`RayLimiter` is that limiter seen from a worker, with the window held remotely.
"""
from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

from ehrlib.llm.ratelimit import WINDOW_S, RateLimiter

__all__ = ["Limiter", "SlidingWindow", "RayLimiter", "LimitedBackend", "estimate_tokens"]


class Limiter(Protocol):
    """What a client needs from a rate limiter (the shape of ``ehrlib.llm``'s own)."""

    def try_acquire(self, tokens: int) -> tuple[float, Any]:
        """Book ``tokens`` now if both budgets allow: (0, entry); else (seconds to wait, None)."""

    def settle(self, entry: Any, tokens: int) -> None:
        """Replace the booked estimate of ``entry`` with the tokens the call used."""

    def describe(self) -> dict[str, float | None]:
        """The limits and what was admitted, for the run manifest."""


class SlidingWindow:
    """The per-process :class:`~ehrlib.llm.ratelimit.RateLimiter` with entries named by ids.

    The window itself (expiry, request and token budgets) is the one limiter's; this adds
    integer entry ids so that booking and settling can cross a process boundary (a Ray
    actor's reply must be picklable and meaningful to the caller), and an admitted count.
    """

    def __init__(self, requests_per_minute: float | None = None, tokens_per_minute: float | None = None,
                 *, clock: Callable[[], float] = time.monotonic) -> None:
        self._limiter = RateLimiter(requests_per_minute, tokens_per_minute, clock=clock)
        self._clock = clock
        self._by_id: dict[int, list[float]] = {}  # insertion order = booking time order
        self._ids = itertools.count(1)
        self.admitted = 0

    @property
    def rpm(self) -> float | None:
        """Requests-per-minute limit (None: unlimited)."""
        return self._limiter.rpm

    @property
    def tpm(self) -> float | None:
        """Tokens-per-minute limit (None: unlimited)."""
        return self._limiter.tpm

    def try_acquire(self, tokens: int) -> tuple[float, int | None]:
        """``(seconds to wait, None)``, or ``(0, entry id)`` when the request is booked."""
        wait, entry = self._limiter.try_acquire(int(tokens))
        if entry is None:
            return wait, None
        now = self._clock()
        for old in [i for i, e in self._by_id.items() if now - e[0] >= WINDOW_S]:
            del self._by_id[old]  # left the window: settling it can no longer matter
        entry_id = next(self._ids)
        self._by_id[entry_id] = entry
        self.admitted += 1
        return 0.0, entry_id

    def settle(self, entry: int, tokens: int) -> None:
        """Replace the booked estimate of ``entry`` with the tokens the call used."""
        booked = self._by_id.get(int(entry))
        if booked is not None:  # else it already left the window
            self._limiter.settle(booked, tokens)

    def describe(self) -> dict[str, float | None]:
        """The limits and the calls admitted, for the run manifest."""
        return {"requests_per_minute": self.rpm, "tokens_per_minute": self.tpm, "admitted": self.admitted}


class RayLimiter:
    """A worker's view of a :class:`SlidingWindow` held by a Ray actor (``handle``)."""

    def __init__(self, handle: Any, *, sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep) -> None:
        self.handle = handle
        self.waited_s = 0.0
        self._sleep = sleep

    def try_acquire(self, tokens: int) -> tuple[float, int | None]:
        """Book ``tokens`` in the shared actor's window; (seconds to wait, entry or None)."""
        # deferred: optional dependency (ray, the `ray` extra); this class only exists on Ray workers
        import ray

        return ray.get(self.handle.try_acquire.remote(tokens))

    async def acquire(self, tokens: int, sleep: Callable[[float], Awaitable[Any]] | None = None) -> int:
        """Wait until the shared window admits the request; returns its entry."""
        sleep = sleep or self._sleep
        while True:
            wait, entry = await self.handle.try_acquire.remote(tokens)
            if entry is not None:
                return entry
            self.waited_s += wait
            await sleep(min(wait, WINDOW_S))

    def settle(self, entry: int, tokens: int) -> None:
        """Report the tokens a call used to the shared window (no reply awaited)."""
        self.handle.settle.remote(entry, tokens)  # no reply needed: the window is the actor's

    def describe(self) -> dict[str, float | None]:
        """The shared window's limits and counts."""
        # deferred: optional dependency (ray, the `ray` extra); this class only exists on Ray workers
        import ray

        return {**ray.get(self.handle.describe.remote()), "waited_s": round(self.waited_s, 3)}


def estimate_tokens(messages: Sequence[Any], max_tokens: int | None) -> int:
    """Tokens a request may use before the server says: ~4 characters a token, plus the reply budget."""
    chars = sum(len(getattr(m, "text", "") or "") + sum(len(str(r)) for r in getattr(m, "tool_results", ()))
                for m in messages)
    return chars // 4 + int(max_tokens or 0)


class LimitedBackend:
    """An ``ehrlib.llm`` backend whose every network request is booked with ``limiter`` first."""

    def __init__(self, backend: Any, limiter: RayLimiter) -> None:
        self._backend = backend
        self.limiter = limiter

    def __getattr__(self, name: str) -> Any:
        return getattr(self._backend, name)

    async def send(self, messages: Sequence[Any], tools: Any, config: Any, timeout_s: float) -> Any:
        """Send through the wrapped backend once the limiter admits the request."""
        entry = await self.limiter.acquire(estimate_tokens(messages, getattr(config, "max_tokens", None)))
        response = await self._backend.send(messages, tools, config, timeout_s)
        u = response.usage  # a failed request keeps its estimate: the server counted it too
        self.limiter.settle(entry, int(u.input_tokens) + int(u.output_tokens) + int(getattr(u, "thinking_tokens", 0)))
        return response
