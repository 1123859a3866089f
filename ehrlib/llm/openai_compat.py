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
- `completion_tokens` includes reasoning tokens; `CallUsage.output_tokens` excludes them;
- GPT-5 (a reasoning model) rejects `max_tokens` and sampling settings: use
  `max_tokens_param: max_completion_tokens` and `temperature: null, top_p: null`
  (the `azure` preset and any gpt-5/o-series model name do this by default);
- assistant turns always carry a string `content` ("" beside tool calls): servers
  that validate the request (llama-cpp-python) answer HTTP 500 to `null`;
- structured output degrades per endpoint: `json_schema` -> `json_object` -> plain
  JSON asked for in the prompt, switched once when the server refuses the
  `response_format` (llama-cpp-python accepts only "text" or "json_object"), and
  recorded in `describe()` for the run manifest;
- replies are untrusted: every shape the format allows (content as a list of parts,
  one tool call as an object, arguments as an object, usage counts as strings) is
  read; anything else is an `LLMCallError` of kind "bad_reply", never a crash.
"""
from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

import httpx

from ehrlib.errors import ConfigError
from ehrlib.llm import logprobs, safejson
from ehrlib.llm.errors import LLMCallError
from ehrlib.llm.records import CallUsage, GenerationConfig, LLMResponse, Message, ToolCall, ToolSpec

__all__ = ["OpenAICompatBackend", "STRUCTURED_MODES", "parse_chat_completion"]

#: structured-output modes, strongest first; "auto" starts at the first and steps down
STRUCTURED_MODES = ("json_schema", "json_object", "text")
_FORMAT_REFUSAL = re.compile(r"response_format|json_schema|json_object|structured output|guided|grammar",
                             re.IGNORECASE)

_TRANSIENT_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
#: seconds to wait for a TCP connection (the read timeout is the client's timeout_s)
CONNECT_TIMEOUT_S = 5.0
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
        structured_output: bool | str = "auto",
        tool_choice: str | None = "auto",
        json_object_schema: bool = False,
        extra_body: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        if not base_url or urlsplit(base_url).scheme not in ("http", "https") or not urlsplit(base_url).hostname:
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
        mode = {True: "auto", False: "text", None: "auto", "none": "text", "off": "text"}.get(
            structured_output, structured_output)
        if mode not in ("auto", *STRUCTURED_MODES):
            raise ConfigError(f"structured_output must be one of auto, {', '.join(STRUCTURED_MODES)} "
                              f"(or true/false), got {structured_output!r}")
        if tool_choice not in (None, "auto", "required", "none"):
            raise ConfigError("tool_choice must be auto, required, none or null (not sent)")
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
        #: the mode in use; "auto" settles on the first mode the server accepts
        self.structured_mode = "json_schema" if mode == "auto" else mode
        self.structured_auto = mode == "auto"
        self.structured_fallbacks: list[str] = []
        self.tool_choice = tool_choice
        self.json_object_schema = bool(json_object_schema)
        #: why log-probabilities are no longer asked for (the server refused them), else None
        self.logprobs_refused: str | None = None
        self.extra_body = dict(extra_body or {})
        self._transport = transport

    def describe(self) -> dict[str, Any]:
        """Endpoint facts for the run manifest (never the key)."""
        return {
            "endpoint": self.endpoint,
            "auth_header": self.auth_header,
            "max_tokens_param": self.max_tokens_param,
            "api_version": self._params.get("api-version"),
            "structured_output": self.structured_mode,
            "structured_output_fallbacks": list(self.structured_fallbacks),
            "tool_choice": self.tool_choice,
            "logprobs_refused": self.logprobs_refused,
            "extra_body": self.extra_body,
        }

    def redacted_headers(self) -> dict[str, str]:
        """Request headers with credentials masked (for `ehrlib llm check`)."""
        secret = {"authorization", "api-key"}
        return {k: ("Bearer ***" if v.startswith("Bearer ") else "***") if k.lower() in secret else v
                for k, v in self._headers.items()}

    @property
    def url(self) -> str:
        """The chat-completions URL requests go to."""
        return self._url

    # --- requests -----------------------------------------------------------------

    @staticmethod
    def _messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for m in messages:
            if m.role in ("system", "user"):
                out.append({"role": m.role, "content": m.text or ""})
            elif m.role == "assistant":
                # "" rather than null: llama-cpp-python's request validation refuses null
                msg: dict[str, Any] = {"role": "assistant", "content": m.text or ""}
                if m.tool_calls:
                    msg["tool_calls"] = [
                        {"id": c.id, "type": "function",
                         "function": {"name": c.name, "arguments": json.dumps(dict(c.args), allow_nan=False)}}
                        for c in m.tool_calls
                    ]
                out.append(msg)
            else:
                out.extend(
                    {"role": "tool", "tool_call_id": r.call_id, "content": r.content or ""}
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
        if config.logprobs and self.logprobs_refused is None:
            body["logprobs"] = True
        if tools:
            body["tools"] = [
                {"type": "function", "function": {
                    "name": s.name, "description": s.description,
                    "parameters": dict(s.parameters_json_schema)}}
                for s in tools
            ]
            if self.tool_choice is not None:
                body["tool_choice"] = self.tool_choice
        schema = config.response_schema
        if schema is not None:
            if self.structured_mode == "json_schema":
                body["response_format"] = {"type": "json_schema",
                                           "json_schema": {"name": "reply", "schema": dict(schema)}}
            else:
                if self.structured_mode == "json_object":
                    # llama-cpp-python turns a `schema` here into a decoding grammar; others ignore
                    # or refuse the extra key, so only the llamacpp preset sends it
                    body["response_format"] = {"type": "json_object", **(
                        {"schema": dict(schema)} if self.json_object_schema else {})}
                # without schema-constrained decoding, the schema goes into the prompt
                hint = ("\n\nReply with only a JSON value matching this JSON Schema:\n"
                        + json.dumps(dict(schema), sort_keys=True))
                last_user = max((i for i, m in enumerate(body["messages"]) if m["role"] == "user"), default=None)
                if last_user is not None:
                    msg = dict(body["messages"][last_user])
                    msg["content"] = str(msg["content"]) + hint
                    body["messages"][last_user] = msg
        body.update(self.extra_body)
        return body

    def _step_down(self, exc: LLMCallError) -> bool:
        """After a refusal of `response_format`, switch to the next weaker mode (once per mode)."""
        if not self.structured_auto or self.structured_mode == "text":
            return False
        if exc.status is None or exc.status < 400 or exc.status == 429 or not _FORMAT_REFUSAL.search(str(exc)):
            return False
        nxt = STRUCTURED_MODES[STRUCTURED_MODES.index(self.structured_mode) + 1]
        self.structured_fallbacks.append(f"{self.structured_mode} -> {nxt}: HTTP {exc.status}")
        self.structured_mode = nxt
        return True

    async def send(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None,
        config: GenerationConfig,
        timeout_s: float,
    ) -> LLMResponse:
        """Send one chat-completions request and parse the reply."""
        while True:
            mode = self.structured_mode
            asked = bool(config.logprobs) and self.logprobs_refused is None
            try:
                return await self._send_once(messages, tools, config, timeout_s)
            except LLMCallError as exc:
                if asked and logprobs.is_refusal(exc.status, str(exc)):
                    self.logprobs_refused = self.logprobs_refused or f"HTTP {exc.status}"
                    continue  # ask again without log-probabilities
                if config.response_schema is None:
                    raise
                if mode != self.structured_mode:
                    continue  # a concurrent call already stepped down: resend in the new mode
                if not self._step_down(exc):
                    raise

    async def _send_once(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None,
        config: GenerationConfig,
        timeout_s: float,
    ) -> LLMResponse:
        body = self.build_request(messages, tools, config)
        try:
            # a server that is there accepts a connection at once: a dead host fails in seconds
            timeout = httpx.Timeout(timeout_s, connect=min(timeout_s, CONNECT_TIMEOUT_S))
            async with httpx.AsyncClient(timeout=timeout, transport=self._transport) as http:
                resp = await http.post(self._url, json=body, headers=self._headers, params=self._params)
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:  # refused, no such host, no answer
            raise LLMCallError(f"{self._url}: cannot connect ({type(exc).__name__}: {exc})", transient=True,
                               kind="unreachable") from exc
        except httpx.TimeoutException as exc:
            raise LLMCallError(f"{self.endpoint} timed out after {timeout_s:g} s", transient=True,
                               kind="timeout") from exc
        except httpx.TransportError as exc:
            raise LLMCallError(f"{self.endpoint}: {type(exc).__name__}: {exc}", transient=True,
                               kind="transport") from exc
        except httpx.HTTPError as exc:  # DecodingError: e.g. a gzip header on a plain body
            raise LLMCallError(f"{self.endpoint}: unreadable reply ({type(exc).__name__}: {exc})",
                               kind="bad_reply") from exc
        if resp.status_code >= 400:
            hint = ""
            if _FORMAT_REFUSAL.search(resp.text[:2000]):
                hint = " (the server refused the structured-output request: try llm.structured_output: false)"
            raise LLMCallError(
                f"{self.endpoint} HTTP {resp.status_code}: {resp.text[:500]}{hint}",
                status=resp.status_code,
                transient=resp.status_code in _TRANSIENT_STATUS,
                retry_after=_retry_after(resp.headers),
            )
        try:
            data = safejson.loads(resp.content)
        except (ValueError, UnicodeDecodeError) as exc:
            raise LLMCallError(f"{self.endpoint} returned a body that is not strict JSON ({exc}): "
                               f"{resp.text[:200]!r}", transient=True, kind="bad_reply") from exc
        return parse_chat_completion(data, self.endpoint)


# --- responses --------------------------------------------------------------------


def _bad(endpoint: str, what: str, data: Any) -> LLMCallError:
    return LLMCallError(f"{endpoint} returned an unusable reply: {what}: {json.dumps(data, default=str)[:300]}",
                        kind="bad_reply")


def _count(value: Any) -> int:
    """A token count from usage, tolerating strings and floats; anything else counts 0."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, (int, float)) and value == value and abs(value) != float("inf"):
        return max(int(value), 0)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return 0


def _text_of(content: Any, endpoint: str, data: Any) -> str:
    """`content` as text: a string, null, or a list of parts (strings or {"type": "text", "text": ...})."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        pieces = []
        for part in content:
            if isinstance(part, str):
                pieces.append(part)
            elif isinstance(part, Mapping) and isinstance(part.get("text"), str):
                if part.get("type", "text") in ("text", "output_text"):
                    pieces.append(part["text"])
        return "".join(pieces)
    raise _bad(endpoint, f"message content is a {type(content).__name__}", data)


def _tool_call(tc: Any, i: int) -> ToolCall:
    if not isinstance(tc, Mapping):
        return ToolCall(id=f"call_{i}", name="", parse_error=f"tool call is a {type(tc).__name__}, not an object")
    inner = tc.get("function")
    fn = inner if isinstance(inner, Mapping) else tc  # legacy/flat shapes
    name = fn.get("name")
    call_id = tc.get("id")
    call_id = str(call_id) if isinstance(call_id, (str, int)) and str(call_id) else f"call_{i}"
    name = name if isinstance(name, str) else ""
    raw_args = fn.get("arguments", fn.get("parameters"))
    error = None
    args: dict[str, Any] = {}
    if raw_args is None or raw_args == "":
        pass
    elif isinstance(raw_args, Mapping):
        problem = safejson.value_problem(raw_args)
        if problem:
            error = f"arguments {problem}"
        else:
            args = dict(raw_args)
    elif isinstance(raw_args, str):
        try:
            parsed = safejson.loads(raw_args)
        except ValueError as exc:
            error = f"arguments are not valid JSON ({exc}): {raw_args[:200]}"
        else:
            if isinstance(parsed, dict):
                args = parsed
            else:
                error = f"arguments must be a JSON object, got {type(parsed).__name__}"
    else:
        error = f"arguments must be a JSON object, got {type(raw_args).__name__}"
    return ToolCall(id=call_id, name=name, args=args, parse_error=error)


def parse_chat_completion(data: Any, endpoint: str = "server") -> LLMResponse:
    """An LLMResponse from a chat-completions body; LLMCallError(kind="bad_reply") when unusable."""
    if not isinstance(data, Mapping):
        raise _bad(endpoint, f"the body is a {type(data).__name__}, not an object", data)
    if isinstance(data.get("error"), (Mapping, str)) and not data.get("choices"):
        raise _bad(endpoint, "an error object with status 200", data)
    choices = data.get("choices")
    if isinstance(choices, Mapping):
        choices = [choices]
    if not isinstance(choices, list) or not choices:
        raise LLMCallError(f"{endpoint} returned no choices: {json.dumps(data, default=str)[:300]}",
                           transient=True, kind="bad_reply")
    choice = choices[0]
    if not isinstance(choice, Mapping):
        raise _bad(endpoint, "choices[0] is not an object", data)
    msg = choice.get("message")
    if msg is None and isinstance(choice.get("delta"), Mapping):
        msg = choice["delta"]
    if msg is None and isinstance(choice.get("text"), str):  # legacy completions shape
        msg = {"content": choice["text"]}
    if not isinstance(msg, Mapping):
        raise _bad(endpoint, "choices[0].message is not an object", data)
    text = _text_of(msg.get("content"), endpoint, data)
    think = _THINK.match(text)
    if think:
        text = text[think.end():]
    raw_calls = msg.get("tool_calls")
    if raw_calls is None and isinstance(msg.get("function_call"), Mapping):
        raw_calls = [{"function": msg["function_call"]}]
    if isinstance(raw_calls, Mapping):
        raw_calls = [raw_calls]
    if raw_calls is not None and not isinstance(raw_calls, list):
        raise _bad(endpoint, f"tool_calls is a {type(raw_calls).__name__}", data)
    calls = tuple(_tool_call(tc, i) for i, tc in enumerate(raw_calls or []))
    raw_usage, raw_details = data.get("usage"), None
    u = raw_usage if isinstance(raw_usage, Mapping) else {}
    raw_details = u.get("completion_tokens_details")
    details = raw_details if isinstance(raw_details, Mapping) else {}
    reasoning = _count(details.get("reasoning_tokens"))
    completion = _count(u.get("completion_tokens"))
    usage = CallUsage(input_tokens=_count(u.get("prompt_tokens")), output_tokens=max(completion - reasoning, 0),
                  thinking_tokens=reasoning)
    finish = choice.get("finish_reason")
    return LLMResponse(text=text, tool_calls=calls, usage=usage, raw=dict(data),
                       finish_reason=finish if isinstance(finish, str) else None)
