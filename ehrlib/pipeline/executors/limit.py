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
import collections
import itertools
import time
from typing import Any, Awaitable, Callable, Protocol, Sequence

from ehrlib.errors import ConfigError

__all__ = ["Limiter", "SlidingWindow", "RayLimiter", "LimitedBackend", "estimate_tokens"]

WINDOW_S = 60.0


class Limiter(Protocol):
    """What a client needs from a rate limiter (the shape of ``ehrlib.llm``'s own)."""

    def try_acquire(self, tokens: int) -> tuple[float, Any]: ...

    def settle(self, entry: Any, tokens: int) -> None: ...

    def describe(self) -> dict[str, float | None]: ...


class SlidingWindow:
    """The requests and tokens of the last minute; one request is admitted when both fit.

    ``tokens`` at booking is an estimate (prompt characters / 4 plus the reply budget);
    :meth:`settle` replaces it with what the server reported. Entries are ids, so the
    window can live in another process.
    """

    def __init__(self, requests_per_minute: float | None = None, tokens_per_minute: float | None = None,
                 *, clock: Callable[[], float] = time.monotonic) -> None:
        for label, value in (("requests_per_minute", requests_per_minute), ("tokens_per_minute", tokens_per_minute)):
            if value is not None and value <= 0:
                raise ConfigError(f"{label} must be positive")
        self.rpm = requests_per_minute
        self.tpm = tokens_per_minute
        self._clock = clock
        self._events: collections.deque[list[float]] = collections.deque()  # [time, tokens, id]
        self._by_id: dict[int, list[float]] = {}
        self._ids = itertools.count(1)
        self.admitted = 0

    def _wait(self, tokens: int, now: float) -> float:
        while self._events and now - self._events[0][0] >= WINDOW_S:
            self._by_id.pop(int(self._events.popleft()[2]), None)
        waits = [0.0]
        if self.rpm is not None and len(self._events) >= self.rpm:
            waits.append(self._events[0][0] + WINDOW_S - now)
        if self.tpm is not None and self._events:
            # a request larger than the whole budget waits for an empty window, not forever
            excess = sum(e[1] for e in self._events) + min(tokens, self.tpm) - self.tpm
            for t, n, _ in self._events:
                if excess <= 0:
                    break
                excess -= n
                waits.append(t + WINDOW_S - now)
        return max(waits)

    def try_acquire(self, tokens: int) -> tuple[float, int | None]:
        """``(seconds to wait, None)``, or ``(0, entry id)`` when the request is booked."""
        now = self._clock()
        wait = self._wait(int(tokens), now)
        if wait > 0:
            return wait, None
        entry_id = next(self._ids)
        entry = [now, float(tokens), float(entry_id)]
        self._events.append(entry)
        self._by_id[entry_id] = entry
        self.admitted += 1
        return 0.0, entry_id

    def settle(self, entry: int, tokens: int) -> None:
        booked = self._by_id.get(int(entry))
        if booked is not None:  # else it already left the window
            booked[1] = float(tokens)

    def describe(self) -> dict[str, float | None]:
        return {"requests_per_minute": self.rpm, "tokens_per_minute": self.tpm, "admitted": self.admitted}


class RayLimiter:
    """A worker's view of a :class:`SlidingWindow` held by a Ray actor (``handle``)."""

    def __init__(self, handle: Any, *, sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep) -> None:
        self.handle = handle
        self.waited_s = 0.0
        self._sleep = sleep

    def try_acquire(self, tokens: int) -> tuple[float, int | None]:
        # deferred: optional dependency (ray, the `ray` extra); this class only exists on Ray workers
        import ray

        return ray.get(self.handle.try_acquire.remote(tokens))

    async def acquire(self, tokens: int, sleep: Callable[[float], Awaitable[Any]] | None = None) -> int:
        sleep = sleep or self._sleep
        while True:
            wait, entry = await self.handle.try_acquire.remote(tokens)
            if entry is not None:
                return entry
            self.waited_s += wait
            await sleep(min(wait, WINDOW_S))

    def settle(self, entry: int, tokens: int) -> None:
        self.handle.settle.remote(entry, tokens)  # no reply needed: the window is the actor's

    def describe(self) -> dict[str, float | None]:
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
        entry = await self.limiter.acquire(estimate_tokens(messages, getattr(config, "max_tokens", None)))
        response = await self._backend.send(messages, tools, config, timeout_s)
        u = response.usage  # a failed request keeps its estimate: the server counted it too
        self.limiter.settle(entry, int(u.input_tokens) + int(u.output_tokens) + int(getattr(u, "thinking_tokens", 0)))
        return response
