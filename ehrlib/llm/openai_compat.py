"""Any server speaking the OpenAI chat-completions API with tools.

This is how the paper's open models run (Qwen3-32B, gpt-oss-20b, medgemma-27b-it on
vLLM, Ollama or SGLang) and how GPT-5 is reached on Azure OpenAI. It uses httpx
directly rather than the `openai` package: the request is one POST of plain JSON,
and owning it keeps retries, timeouts and error classes the same as the Gemini path
(and avoids a dependency for ~150 lines).

Wire details handled here:
- tool-call arguments arrive as a JSON *string*; unparseable ones become a
  `ToolCall.parse_error` that the tool loop sends back to the model;
- reasoning models return their thoughts in `reasoning_content`/`reasoning`
  (vLLM/SGLang with a reasoning parser) or inline as `<think>...</think>` (no
  parser); both are kept out of `text` and the inline form is kept in `raw`;
- `completion_tokens` includes reasoning tokens; `Usage.output_tokens` excludes them;
- GPT-5 (a reasoning model) rejects `max_tokens` and sampling settings: use
  `max_tokens_param: max_completion_tokens` and `temperature: null, top_p: null`.
"""
from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

import httpx

from ehrlib.errors import ConfigError
from ehrlib.llm.errors import LLMCallError
from ehrlib.llm.records import GenerationConfig, LLMResponse, Message, ToolCall, ToolSpec, Usage

__all__ = ["OpenAICompatBackend"]

_TRANSIENT_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
_THINK = re.compile(r"^\s*<think>(.*?)</think>\s*", re.DOTALL)


def _retry_after(headers: httpx.Headers) -> float | None:
    value = headers.get("retry-after")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


class OpenAICompatBackend:
    """POST {base_url}/chat/completions with tools; parse choices[0]."""

    name = "openai"

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str | None = None,
        auth_header: str | None = None,
        api_version: str | None = None,
        max_tokens_param: str = "max_tokens",
        structured_output: bool = True,
        extra_body: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        if not base_url or not urlsplit(base_url).scheme:
            raise ConfigError(
                f"openai backend needs a base URL like http://localhost:8000/v1, got {base_url!r} "
                "(set llm.base_url or EHRLIB_OPENAI_BASE_URL)"
            )
        if max_tokens_param not in ("max_tokens", "max_completion_tokens"):
            raise ConfigError("max_tokens_param must be 'max_tokens' or 'max_completion_tokens'")
        host = (urlsplit(base_url).hostname or "").lower()
        if auth_header is None:
            auth_header = "api-key" if host.endswith(".azure.com") else "bearer"
        if auth_header not in ("bearer", "api-key"):
            raise ConfigError("auth_header must be 'bearer' or 'api-key'")
        self.endpoint = base_url.rstrip("/")
        self._url = self.endpoint + "/chat/completions"
        self._params = {"api-version": api_version} if api_version else {}
        self._headers = {"Content-Type": "application/json", **(headers or {})}
        if api_key:
            if auth_header == "api-key":
                self._headers["api-key"] = api_key
            else:
                self._headers["Authorization"] = f"Bearer {api_key}"
        self.auth_header = auth_header
        self.max_tokens_param = max_tokens_param
        self.structured_output = structured_output
        self.extra_body = dict(extra_body or {})
        self._transport = transport

    def describe(self) -> dict[str, Any]:
        """Endpoint facts for the run manifest (never the key)."""
        return {
            "endpoint": self.endpoint,
            "auth_header": self.auth_header,
            "max_tokens_param": self.max_tokens_param,
            "api_version": self._params.get("api-version"),
            "extra_body": self.extra_body,
        }

    # --- requests -----------------------------------------------------------------

    @staticmethod
    def _messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for m in messages:
            if m.role in ("system", "user"):
                out.append({"role": m.role, "content": m.text})
            elif m.role == "assistant":
                msg: dict[str, Any] = {"role": "assistant", "content": m.text or None}
                if m.tool_calls:
                    msg["tool_calls"] = [
                        {"id": c.id, "type": "function",
                         "function": {"name": c.name, "arguments": json.dumps(dict(c.args))}}
                        for c in m.tool_calls
                    ]
                out.append(msg)
            else:
                out.extend(
                    {"role": "tool", "tool_call_id": r.call_id, "content": r.content}
                    for r in m.tool_results
                )
        return out

    def build_request(
        self, messages: Sequence[Message], tools: Sequence[ToolSpec] | None, config: GenerationConfig
    ) -> dict[str, Any]:
        """The chat-completions request body for these messages and tools."""
        body: dict[str, Any] = {"model": config.model, "messages": self._messages(messages)}
        for key, value in (
            ("temperature", config.temperature),
            ("top_p", config.top_p),
            (self.max_tokens_param, config.max_tokens),
            ("seed", config.seed),
        ):
            if value is not None:
                body[key] = value
        if tools:
            body["tools"] = [
                {"type": "function", "function": {
                    "name": s.name, "description": s.description,
                    "parameters": dict(s.parameters_json_schema)}}
                for s in tools
            ]
            body["tool_choice"] = "auto"
        if config.response_schema is not None and self.structured_output:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "reply", "schema": dict(config.response_schema)},
            }
        body.update(self.extra_body)
        return body

    async def send(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None,
        config: GenerationConfig,
        timeout_s: float,
    ) -> LLMResponse:
        """Send one chat-completions request and parse the reply."""
        body = self.build_request(messages, tools, config)
        try:
            async with httpx.AsyncClient(timeout=timeout_s, transport=self._transport) as http:
                resp = await http.post(self._url, json=body, headers=self._headers, params=self._params)
        except httpx.TimeoutException as exc:
            raise LLMCallError(f"{self.endpoint} timed out after {timeout_s:g} s", transient=True) from exc
        except httpx.TransportError as exc:
            raise LLMCallError(f"{self.endpoint}: {type(exc).__name__}: {exc}", transient=True) from exc
        if resp.status_code >= 400:
            raise LLMCallError(
                f"{self.endpoint} HTTP {resp.status_code}: {resp.text[:500]}",
                status=resp.status_code,
                transient=resp.status_code in _TRANSIENT_STATUS,
                retry_after=_retry_after(resp.headers),
            )
        try:
            data = resp.json()
        except ValueError as exc:
            raise LLMCallError(f"{self.endpoint} returned non-JSON: {resp.text[:200]!r}",
                               transient=True) from exc
        return self._parse(data)

    # --- responses ----------------------------------------------------------------

    def _parse(self, data: Mapping[str, Any]) -> LLMResponse:
        choices = data.get("choices") or []
        if not choices:
            raise LLMCallError(f"{self.endpoint} returned no choices: {json.dumps(data)[:300]}",
                               transient=True)
        choice = choices[0]
        msg = choice.get("message") or {}
        text = msg.get("content") or ""
        think = _THINK.match(text)
        if think:
            text = text[think.end():]
        calls = []
        for i, tc in enumerate(msg.get("tool_calls") or []):
            fn = tc.get("function") or {}
            raw_args = fn.get("arguments")
            args: dict[str, Any] = {}
            error = None
            if isinstance(raw_args, Mapping):
                args = dict(raw_args)
            elif raw_args in (None, ""):
                args = {}
            else:
                try:
                    parsed = json.loads(raw_args)
                    if isinstance(parsed, dict):
                        args = parsed
                    else:
                        error = f"arguments must be a JSON object, got {type(parsed).__name__}"
                except json.JSONDecodeError as exc:
                    error = f"arguments are not valid JSON ({exc.msg} at char {exc.pos}): {raw_args[:200]}"
            calls.append(ToolCall(id=tc.get("id") or f"call_{i}", name=fn.get("name") or "",
                                  args=args, parse_error=error))
        u = data.get("usage") or {}
        details = u.get("completion_tokens_details") or {}
        reasoning = int(details.get("reasoning_tokens") or 0)
        completion = int(u.get("completion_tokens") or 0)
        usage = Usage(
            input_tokens=int(u.get("prompt_tokens") or 0),
            output_tokens=max(completion - reasoning, 0),
            thinking_tokens=reasoning,
        )
        return LLMResponse(text=text, tool_calls=tuple(calls), usage=usage, raw=dict(data),
                           finish_reason=choice.get("finish_reason"))
