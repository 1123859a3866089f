"""Requests-per-minute and tokens-per-minute limits, shared by every client of one endpoint.

Gemini, Vertex AI and Azure OpenAI enforce quotas per minute, not per connection, so a
concurrency cap alone still earns 429s. The limiter keeps a sliding one-minute window
of (time, tokens) entries; `acquire` waits until one more request and its estimated
tokens fit, and `settle` replaces the estimate with the tokens the server reported.
One limiter per (endpoint, model) lives in a process-wide registry, so the pipeline
and the judge running in one process draw from the same budget.
"""
from __future__ import annotations

import asyncio
import collections
import threading
import time
from collections.abc import Callable

from ehrlib.errors import ConfigError

__all__ = ["RateLimiter", "shared_limiter", "WINDOW_S"]

WINDOW_S = 60.0


class RateLimiter:
    """Sliding-window limiter; thread-safe, usable from any event loop."""

    def __init__(self, requests_per_minute: float | None = None, tokens_per_minute: float | None = None,
                 *, clock: Callable[[], float] = time.monotonic) -> None:
        for label, value in (("requests_per_minute", requests_per_minute), ("tokens_per_minute", tokens_per_minute)):
            if value is not None and value <= 0:
                raise ConfigError(f"{label} must be positive")
        self.rpm = requests_per_minute
        self.tpm = tokens_per_minute
        self._clock = clock
        self._lock = threading.Lock()
        self._events: collections.deque[list[float]] = collections.deque()  # [t, tokens]
        self.waited_s = 0.0

    def _expire(self, now: float) -> None:
        while self._events and now - self._events[0][0] >= WINDOW_S:
            self._events.popleft()

    def _wait_needed(self, tokens: int, now: float) -> float:
        self._expire(now)
        waits = [0.0]
        if self.rpm is not None and len(self._events) >= self.rpm:
            waits.append(self._events[0][0] + WINDOW_S - now)
        if self.tpm is not None and self._events:
            used = sum(e[1] for e in self._events)
            excess = used + min(tokens, self.tpm) - self.tpm
            for t, n in self._events:  # the oldest entries that must expire first
                if excess <= 0:
                    break
                excess -= n
                waits.append(t + WINDOW_S - now)
        return max(waits)

    def try_acquire(self, tokens: int) -> tuple[float, list[float] | None]:
        """(seconds to wait, None) or (0, the booked entry)."""
        with self._lock:
            now = self._clock()
            wait = self._wait_needed(tokens, now)
            if wait > 0:
                return wait, None
            entry = [now, float(tokens)]
            self._events.append(entry)
            return 0.0, entry

    async def acquire(self, tokens: int, sleep: Callable[[float], object] = asyncio.sleep) -> list[float]:
        """Wait until the request fits both budgets; returns the booked entry."""
        while True:
            wait, entry = self.try_acquire(tokens)
            if entry is not None:
                return entry
            self.waited_s += wait
            await sleep(min(wait, WINDOW_S))  # type: ignore[misc]

    def settle(self, entry: list[float], tokens: int) -> None:
        """Count what the call really used (input + output tokens reported by the server)."""
        with self._lock:
            entry[1] = float(tokens)

    def describe(self) -> dict[str, float | None]:
        """The limits and the time spent waiting, for the run manifest."""
        return {"requests_per_minute": self.rpm, "tokens_per_minute": self.tpm, "waited_s": round(self.waited_s, 3)}


_REGISTRY: dict[tuple[str, str], RateLimiter] = {}
_REGISTRY_LOCK = threading.Lock()


def shared_limiter(endpoint: str, model: str, rpm: float | None, tpm: float | None) -> RateLimiter:
    """The one limiter for (endpoint, model); the tightest limits configured so far win."""
    key = (endpoint, model)
    with _REGISTRY_LOCK:
        lim = _REGISTRY.get(key)
        if lim is None:
            lim = _REGISTRY[key] = RateLimiter(rpm, tpm)
        else:
            if rpm is not None:
                lim.rpm = rpm if lim.rpm is None else min(lim.rpm, rpm)
            if tpm is not None:
                lim.tpm = tpm if lim.tpm is None else min(lim.tpm, tpm)
        return lim
