"""Errors of the LLM layer. They are EhrlibErrors: the command line prints one line."""
from __future__ import annotations

from ehrlib.errors import RunError

__all__ = ["LLMCallError", "MalformedReply"]


class LLMCallError(RunError):
    """A model call failed: a permanent HTTP error, or a transient one that outlived retries.

    `transient` marks failures worth retrying (429, 5xx, 408, timeouts, dropped
    connections); `retry_after` is the server's hint in seconds, when it gave one.
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        transient: bool = False,
        retry_after: float | None = None,
        attempts: int = 1,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.transient = transient
        self.retry_after = retry_after
        self.attempts = attempts


class MalformedReply(RunError):
    """A reply could not be used: no JSON, JSON of the wrong shape, or a bad tool call."""
