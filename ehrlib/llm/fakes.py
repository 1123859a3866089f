"""Local HTTP servers speaking the Gemini and OpenAI wire formats, for offline tests.

They let tests drive the *real* google-genai client and our httpx code end to end:
request building, paths, headers, retries, timeouts and parsing. Each server binds
127.0.0.1 on a free port, replays a queue of scripted replies (status, JSON body,
optional delay), records every request, and answers only the paths the real API
serves, so a wrongly built URL fails loudly. Other modules' tests may use them too.
"""
from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "FakeReply",
    "RecordedRequest",
    "FakeGeminiServer",
    "FakeOpenAIServer",
    "gemini_text",
    "gemini_function_calls",
    "gemini_error",
    "openai_text",
    "openai_tool_calls",
    "openai_error",
]


@dataclass(frozen=True, slots=True)
class FakeReply:
    """One canned HTTP reply of the fake server."""
    status: int
    body: Mapping[str, Any]
    delay_s: float = 0.0
    headers: Mapping[str, str] = field(default_factory=dict)
    #: bytes sent verbatim instead of `body` (bodies no JSON encoder would write)
    raw: bytes | None = None


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request the fake server received."""
    method: str
    path: str
    headers: Mapping[str, str]
    body: Any


class _FakeServer:
    path_pattern: re.Pattern[str]

    def _refusal(self, request: RecordedRequest) -> FakeReply | None:
        """A request the real server refuses for its shape (checked before any scripted reply)."""
        return None

    def __init__(self, replies: Sequence[FakeReply] = ()) -> None:
        self._replies = list(replies)
        self._lock = threading.Lock()
        self.requests: list[RecordedRequest] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server naming)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw) if raw else None
                except json.JSONDecodeError:
                    body = raw.decode("utf-8", "replace")
                reply = outer._take(RecordedRequest("POST", self.path, dict(self.headers), body))
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                data = reply.raw if reply.raw is not None else json.dumps(reply.body).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def _take(self, request: RecordedRequest) -> FakeReply:
        with self._lock:
            self.requests.append(request)
            if not self.path_pattern.fullmatch(request.path.split("?", 1)[0]):
                return FakeReply(404, {"error": {"code": 404, "message": f"no route {request.path}",
                                                 "status": "NOT_FOUND"}})
            refused = self._refusal(request)
            if refused is not None:
                return refused
            if not self._replies:
                return FakeReply(500, {"error": {"code": 500, "message": "fake server: no reply left",
                                                 "status": "INTERNAL"}})
            return self._replies.pop(0)

    def add(self, *replies: FakeReply) -> None:
        with self._lock:
            self._replies.extend(replies)

    @property
    def request_count(self) -> int:
        with self._lock:
            return len(self.requests)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> _FakeServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()


class FakeGeminiServer(_FakeServer):
    """`POST /{version}/[projects/P/locations/L/publishers/google/]models/{model}:generateContent`."""

    path_pattern = re.compile(
        r"/v1(?:beta1?|alpha)?/(?:projects/[^/]+/locations/[^/]+/publishers/google/)?models/[^/:]+:generateContent"
    )


class FakeOpenAIServer(_FakeServer):
    """`POST /v1/chat/completions` (base URL `{url}/v1`), as strict as llama-cpp-python's server.

    Like the real server (pydantic request validation), it answers HTTP 500 with the
    validation message to a message whose `content` is not a string (tool-call turns
    with `null`), and, with `reject_json_schema=True`, to `response_format` types other
    than "text" and "json_object" (llama-cpp-python 0.3.36), in the message shape that
    server uses; with `reject_required_tool_choice=True`, to `tool_choice: "required"`
    with an empty message (its chatml-function-calling format); with
    `reject_logprobs=True`, to `logprobs: true` (a model loaded without all logits). A
    `logprobs` that is not a boolean is a validation error. Refused requests are
    recorded (`refused`) but consume no scripted reply.
    """

    path_pattern = re.compile(r"/v1/chat/completions")

    def __init__(self, replies: Sequence[FakeReply] = (), *, reject_json_schema: bool = False,
                 reject_json_object: bool = False, reject_required_tool_choice: bool = False,
                 reject_logprobs: bool = False) -> None:
        super().__init__(replies)
        self.reject_logprobs = reject_logprobs
        self.reject_json_schema = reject_json_schema
        self.reject_json_object = reject_json_object
        self.reject_required_tool_choice = reject_required_tool_choice
        self.refused: list[RecordedRequest] = []

    def _refusal(self, request: RecordedRequest) -> FakeReply | None:
        body = request.body
        problems: list[tuple[tuple[Any, ...], str, str, Any]] = []  # (loc, type, msg, input)
        if not isinstance(body, Mapping) or not isinstance(body.get("messages"), list):
            problems.append((("body", "messages"), "missing", "Field required", None))
            body = {}
        for i, m in enumerate(body.get("messages", [])):
            content = m.get("content") if isinstance(m, Mapping) else m
            if not isinstance(content, str):
                role = str(m.get("role", "")).capitalize() if isinstance(m, Mapping) else ""
                problems.append((("body", "messages", i, f"ChatCompletionRequest{role}Message", "content"),
                                 "string_type", "Input should be a valid string", content))
        if "logprobs" in body and not isinstance(body["logprobs"], bool) and body["logprobs"] is not None:
            problems.append((("body", "logprobs"), "bool_type", "Input should be a valid boolean",
                             body["logprobs"]))
        fmt = body.get("response_format")
        if isinstance(fmt, Mapping):
            allowed = ["text"] + ([] if self.reject_json_object else ["json_object"]) + (
                [] if self.reject_json_schema else ["json_schema"])
            if fmt.get("type") not in allowed:
                names = " or ".join(f"'{a}'" for a in allowed)
                problems.append((("body", "response_format", "type"), "literal_error", f"Input should be {names}",
                                 fmt.get("type")))
        if not problems:
            if self.reject_logprobs and body.get("logprobs"):
                self.refused.append(request)  # a model loaded without logits_all: the ValueError as a 500
                return FakeReply(500, {"error": {
                    "message": "logprobs is not supported for models created with logits_all=False",
                    "type": "internal_server_error", "param": None, "code": None}})
            if self.reject_required_tool_choice and body.get("tool_choice") == "required":
                self.refused.append(request)  # chatml-function-calling: an empty 500
                return FakeReply(500, {"error": {"message": "", "type": "internal_server_error",
                                                 "param": None, "code": None}})
            return None
        self.refused.append(request)
        # the shape llama-cpp-python 0.3.36 answers (pydantic errors, HTTP 500)
        lines = [f"{len(problems)} validation error{'s' if len(problems) > 1 else ''}:"]
        lines += [f"  {{'type': '{kind}', 'loc': {loc!r}, 'msg': {msg!r}, 'input': {value!r}}}"
                  for loc, kind, msg, value in problems]
        return FakeReply(500, {"error": {"message": "\n".join(lines), "type": "internal_server_error",
                                         "param": None, "code": None}})


# --- reply builders ---------------------------------------------------------------


def _gemini_usage(input_tokens: int, output_tokens: int, thinking_tokens: int) -> dict[str, int]:
    return {"promptTokenCount": input_tokens, "candidatesTokenCount": output_tokens,
            "thoughtsTokenCount": thinking_tokens,
            "totalTokenCount": input_tokens + output_tokens + thinking_tokens}


def gemini_text(text: str, *, input_tokens: int = 10, output_tokens: int = 5,
                thinking_tokens: int = 0, delay_s: float = 0.0,
                logprobs: Sequence[tuple[str, float]] | None = None) -> FakeReply:
    """A Gemini reply with text only; ``logprobs`` ((token, log-probability) pairs) fills
    ``logprobsResult.chosenCandidates`` as the API does when asked for them.
    """
    cand: dict[str, Any] = {"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP"}
    if logprobs is not None:
        cand["logprobsResult"] = {"chosenCandidates": [{"token": t, "logProbability": lp} for t, lp in logprobs],
                                  "topCandidates": []}
    return FakeReply(200, {
        "candidates": [cand],
        "usageMetadata": _gemini_usage(input_tokens, output_tokens, thinking_tokens),
        "modelVersion": "fake-gemini",
    }, delay_s=delay_s)


def gemini_function_calls(*calls: tuple[str, Mapping[str, Any]], signature: str | None = None,
                          input_tokens: int = 10, output_tokens: int = 5,
                          thinking_tokens: int = 0) -> FakeReply:
    """A Gemini reply asking for the given ``(name, args)`` function calls."""
    parts: list[dict[str, Any]] = []
    for i, (name, args) in enumerate(calls):
        part: dict[str, Any] = {"functionCall": {"name": name, "args": dict(args)}}
        if signature and i == 0:
            part["thoughtSignature"] = signature
        parts.append(part)
    return FakeReply(200, {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}],
        "usageMetadata": _gemini_usage(input_tokens, output_tokens, thinking_tokens),
    })


def gemini_error(code: int, status: str, message: str = "", headers: Mapping[str, str] | None = None) -> FakeReply:
    """A Gemini API error reply."""
    return FakeReply(code, {"error": {"code": code, "message": message or status, "status": status}},
                     headers=headers or {})


def _openai_body(message: dict[str, Any], finish: str, prompt: int, completion: int,
                 reasoning: int) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake", "object": "chat.completion", "model": "fake",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                  "total_tokens": prompt + completion,
                  "completion_tokens_details": {"reasoning_tokens": reasoning}},
    }


def openai_text(text: str, *, prompt_tokens: int = 10, completion_tokens: int = 5,
                reasoning_tokens: int = 0, delay_s: float = 0.0, finish_reason: str = "stop",
                logprobs: Sequence[tuple[str, float]] | None = None) -> FakeReply:
    """An OpenAI-compatible chat reply with text only; ``logprobs`` ((token, log-probability)
    pairs) fills ``choices[0].logprobs.content`` in the shape vLLM and llama.cpp send.
    """
    body = _openai_body({"role": "assistant", "content": text}, finish_reason,
                        prompt_tokens, completion_tokens, reasoning_tokens)
    if logprobs is not None:
        body["choices"][0]["logprobs"] = {"content": [
            {"token": t, "logprob": lp, "bytes": list(t.encode()), "top_logprobs": []} for t, lp in logprobs]}
    return FakeReply(200, body, delay_s=delay_s)


def openai_tool_calls(*calls: tuple[str, Mapping[str, Any] | str], prompt_tokens: int = 10,
                      completion_tokens: int = 5) -> FakeReply:
    """Tool calls; a `str` argument is sent verbatim (to test malformed JSON arguments)."""
    tool_calls = [
        {"id": f"call_{i}", "type": "function",
         "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(dict(args))}}
        for i, (name, args) in enumerate(calls)
    ]
    return FakeReply(200, _openai_body({"role": "assistant", "content": None, "tool_calls": tool_calls},
                                       "tool_calls", prompt_tokens, completion_tokens, 0))


def openai_error(code: int, message: str = "error", headers: Mapping[str, str] | None = None) -> FakeReply:
    """An OpenAI-compatible error reply."""
    return FakeReply(code, {"error": {"message": message, "type": "server_error", "code": code}},
                     headers=headers or {})
