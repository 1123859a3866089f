"""LLM layer: one small interface for every pipeline stage and judge, whatever the backend.

    from ehrlib.llm import make_client, Message, run_tool_loop_sync
    client = make_client("gemini", model="gemini-2.5-flash", cache="runs/llm_cache.sqlite",
                         source_kind=manifest["source_kind"])
    reply = client.generate_sync([Message("user", "...")])

Backends: `gemini` (google-genai; Developer API or Vertex AI), `openai` (any
OpenAI-compatible chat server: vLLM, Ollama, SGLang, Azure OpenAI; aliases `vllm`,
`ollama`, `sglang` preset the local URL), `scripted` (tests only). Around every call:
on-disk cache, retries with backoff, timeout, concurrency limit, usage and cost,
and the PHI guard. See docs/llm_backends.md for each backbone of the paper.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ehrlib.lazy import lazy_package

if TYPE_CHECKING:  # exports, imported on first use (lazy_package): importing the package stays cheap
    from ehrlib.llm.cache import ResponseCache, cache_key
    from ehrlib.llm.client import Backend, Client, RetryPolicy, run_sync
    from ehrlib.llm.errors import LLMCallError, MalformedReply
    from ehrlib.llm.factory import BACKENDS, PAPER_OPEN_MODEL_DEFAULTS, client_from_params, make_client
    from ehrlib.llm.loop import (
        LoopFailure,
        ToolCallRecord,
        ToolLoopResult,
        count_rows,
        render_tool_result,
        run_tool_loop,
        run_tool_loop_sync,
    )
    from ehrlib.llm.phi import OVERRIDE_ENV, SAFE_HOSTS_ENV, EndpointVerdict, check_phi, classify_endpoint
    from ehrlib.llm.records import (
        CallUsage,
        GenerationConfig,
        LLMClient,
        LLMResponse,
        Message,
        ToolCall,
        ToolResult,
        ToolSpec,
        system,
        tool_spec_from_function,
        user,
    )
    from ehrlib.llm.replies import JsonResult, generate_json, parse_json_reply
    from ehrlib.llm.usage import CallRecord, PriceTable, UsageLedger

__all__ = [
    "BACKENDS",
    "PAPER_OPEN_MODEL_DEFAULTS",
    "OVERRIDE_ENV",
    "SAFE_HOSTS_ENV",
    "Backend",
    "CallRecord",
    "Client",
    "EndpointVerdict",
    "GenerationConfig",
    "JsonResult",
    "LLMCallError",
    "LLMClient",
    "LLMResponse",
    "LoopFailure",
    "MalformedReply",
    "Message",
    "PriceTable",
    "ResponseCache",
    "RetryPolicy",
    "ToolCall",
    "ToolCallRecord",
    "ToolLoopResult",
    "ToolResult",
    "ToolSpec",
    "CallUsage",
    "UsageLedger",
    "cache_key",
    "check_phi",
    "classify_endpoint",
    "client_from_params",
    "count_rows",
    "generate_json",
    "make_client",
    "parse_json_reply",
    "render_tool_result",
    "run_sync",
    "run_tool_loop",
    "run_tool_loop_sync",
    "system",
    "tool_spec_from_function",
    "user",
]

lazy_package(__name__)
