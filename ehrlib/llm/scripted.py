"""A test double that replays scripted replies. Never used for a reported result.

It refuses to be constructed when the run says its results will be reported
(`reported_result=True`, which the runner sets from `params.reported`, or the
environment variable EHRLIB_REPORTED_RESULT=1): canned replies must never become
a number in a table.
"""
from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from ehrlib.errors import ConfigError
from ehrlib.llm.phi import IN_PROCESS_ENDPOINT
from ehrlib.llm.records import CallUsage, GenerationConfig, LLMResponse, Message, ToolCall, ToolSpec

__all__ = ["ScriptedBackend", "ScriptedReply", "REPORTED_RESULT_ENV"]

REPORTED_RESULT_ENV = "EHRLIB_REPORTED_RESULT"

ScriptedReply = str | LLMResponse | ToolCall | Sequence[ToolCall] | Mapping[str, Any] | BaseException


def _to_response(item: ScriptedReply, index: int) -> LLMResponse:
    if isinstance(item, LLMResponse):
        return item
    if isinstance(item, str):
        return LLMResponse(text=item, usage=CallUsage(len(item) // 4, len(item) // 4, 0))
    if isinstance(item, ToolCall):
        return LLMResponse(text="", tool_calls=(item,))
    if isinstance(item, Mapping):
        calls = tuple(
            c if isinstance(c, ToolCall) else ToolCall(
                id=c.get("id", f"s{index}_{j}"), name=c["name"], args=c.get("args", {}),
                parse_error=c.get("parse_error"))
            for j, c in enumerate(item.get("tool_calls", ()))
        )
        return LLMResponse(text=item.get("text", ""), tool_calls=calls)
    if isinstance(item, Sequence) and not isinstance(item, str) and all(isinstance(c, ToolCall) for c in item):
        return LLMResponse(text="", tool_calls=tuple(item))
    raise ConfigError(f"scripted reply {index} has unsupported type {type(item).__name__}")


class ScriptedBackend:
    """Replays `replies` in order; an exception item is raised instead of answered."""

    name = "scripted"
    endpoint = IN_PROCESS_ENDPOINT

    def __init__(self, replies: Sequence[ScriptedReply], *, reported_result: bool = False) -> None:
        if reported_result or os.environ.get(REPORTED_RESULT_ENV) == "1":
            raise ConfigError(
                "the scripted backend replays canned replies and cannot produce a reported result; "
                "choose backend gemini or openai"
            )
        self._replies = list(replies)
        self._next = 0
        self.requests: list[tuple[tuple[Message, ...], tuple[ToolSpec, ...], GenerationConfig]] = []

    def describe(self) -> dict[str, Any]:
        """Endpoint facts for the run manifest."""
        return {"endpoint": self.endpoint, "replies": len(self._replies)}

    async def send(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None,
        config: GenerationConfig,
        timeout_s: float,
    ) -> LLMResponse:
        """Return the next scripted reply (or raise it); ConfigError when the script runs out."""
        self.requests.append((tuple(messages), tuple(tools or ()), config))
        if self._next >= len(self._replies):
            raise ConfigError(f"scripted backend ran out of replies after {len(self._replies)}")
        item = self._replies[self._next]
        self._next += 1
        if isinstance(item, BaseException):
            raise item
        return _to_response(item, self._next - 1)
