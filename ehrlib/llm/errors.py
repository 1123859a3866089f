"""Errors of the LLM layer. They are EhrlibErrors: the command line prints one line."""
from __future__ import annotations

from ehrlib.errors import RunError

__all__ = ["LLMCallError", "MalformedReply", "FAILURE_KINDS", "kind_for_status"]

#: why a call failed, as counted in the manifest and shown in the run summary
FAILURE_KINDS = ("rejected", "rate_limited", "server_error", "timeout", "transport", "unreachable", "auth", "truncated",
                 "bad_reply", "other")


def kind_for_status(status: int | None) -> str:
    """The failure kind of an HTTP status (rate limit, server, client...); ``other`` without one."""
    if status is None:
        return "other"
    if status == 429:
        return "rate_limited"
    if status in (408,):
        return "timeout"
    return "server_error" if status >= 500 else "rejected"


class LLMCallError(RunError):
    """A model call failed: a permanent HTTP error, or a transient one that outlived retries.

    `transient` marks failures worth retrying (429, 5xx, 408, timeouts, dropped
    connections); `retry_after` is the server's hint in seconds, when it gave one;
    `kind` is one of FAILURE_KINDS (derived from the status when not given).
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        transient: bool = False,
        retry_after: float | None = None,
        attempts: int = 1,
        kind: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.transient = transient
        self.retry_after = retry_after
        self.attempts = attempts
        self.kind = kind or kind_for_status(status)


class MalformedReply(RunError):
    """A reply could not be used: no JSON, JSON of the wrong shape, or a bad tool call."""
