"""The tool-calling loop, run by ehrlib (automatic function calling is off everywhere).

Each model turn that asks for tools is answered by calling them here, so every
call is traced (`ToolCallRecord`: call_id, step, tool, args, n_rows, ms, error).
Expected failures go back to the model as an error message; bugs raise (the
inspect_ai convention):

- unknown tool, arguments that are not JSON, fail the tool's JSON Schema or do not
  bind to its signature -> "malformed": the errors go back to the model once (the
  repair); a second malformed turn ends the loop with a recorded failure;
- the tool raises an EhrlibError (e.g. "no such item") -> the message goes back to
  the model; this is ordinary exploration, not a malformed call;
- any other exception from a tool is a bug and propagates.

After `max_steps` tool-requesting turns the model is asked once, without tools, for
its final answer (`finalize_on_budget`), so a long exploration still yields a verdict.
"""
from __future__ import annotations

import dataclasses
import inspect
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ehrlib.errors import ConfigError, EhrlibError
from ehrlib.llm import safejson
from ehrlib.llm.client import run_sync
from ehrlib.llm.errors import LLMCallError, MalformedReply
from ehrlib.llm.records import (
    CallUsage,
    GenerationConfig,
    LLMClient,
    LLMResponse,
    Message,
    ToolCall,
    ToolResult,
    ToolSpec,
    tool_spec_from_function,
)
from ehrlib.llm.replies import parse_json_reply, repair_message, schema_error

__all__ = [
    "ToolCallRecord",
    "LoopFailure",
    "ToolLoopResult",
    "render_tool_result",
    "count_rows",
    "run_tool_loop",
    "run_tool_loop_sync",
    "all_tool_calls_failed",
]

BUDGET_MESSAGE = (
    "You have used all available tool calls. Do not call tools any more; "
    "give your final answer now from what you have found."
)


@dataclass(frozen=True, slots=True)
class ToolCallRecord:
    """One executed (or refused) tool call: the single source for trace graphs."""

    call_id: str
    step: int
    tool: str
    args: Mapping[str, Any]
    n_rows: int | None
    ms: float
    error: str | None


@dataclass(frozen=True, slots=True)
class LoopFailure:
    """Why a tool loop stopped without an answer: malformed reply, tool error or step limit."""
    kind: str  # "malformed" | "call_error" | "truncated" | "max_steps"
    message: str


@dataclass(frozen=True, slots=True)
class ToolLoopResult:
    """Final text (and parsed JSON when a schema was given), the trace, and the outcome."""

    text: str
    value: Any
    trace: tuple[ToolCallRecord, ...]
    messages: tuple[Message, ...]
    usage: CallUsage
    model_calls: int
    failure: LoopFailure | None = None
    #: the reply that carried the final answer (its raw form holds any token log-probabilities)
    final: LLMResponse | None = None

    @property
    def ok(self) -> bool:
        """Whether the loop ended with an answer."""
        return self.failure is None

    @property
    def tools_all_failed(self) -> bool:
        """The model called tools and every call failed: its answer rests on no data."""
        return all_tool_calls_failed(self.trace)


def all_tool_calls_failed(trace: Sequence[Any]) -> bool:
    """Whether ``trace`` holds at least one tool call and every one ended in an error."""
    return bool(trace) and all(getattr(r, "error", None) for r in trace)


def render_tool_result(result: Any) -> str:
    """Text the model sees: a tool's own rendering when it has one, else JSON."""
    if isinstance(result, str):
        return result
    for attr in ("render", "to_text"):
        fn = getattr(result, attr, None)
        if callable(fn):
            return str(fn())
    text = getattr(result, "text", None)
    if isinstance(text, str):
        return text
    if dataclasses.is_dataclass(result) and not isinstance(result, type):
        result = dataclasses.asdict(result)
    return json.dumps(result, default=str, ensure_ascii=False)


def count_rows(result: Any) -> int | None:
    """`n_rows` of a tool result when it says (attribute/key n_rows, or a rows list)."""
    if isinstance(result, Mapping):
        n_rows, rows = result.get("n_rows"), result.get("rows")
    else:
        n_rows, rows = getattr(result, "n_rows", None), getattr(result, "rows", None)
    if isinstance(n_rows, int) and not isinstance(n_rows, bool):
        return n_rows
    if isinstance(rows, Sequence) and not isinstance(rows, str):
        return len(rows)
    return None


def _bad_call_reason(call: ToolCall, tools: Mapping[str, Callable[..., Any]],
                     specs: Mapping[str, ToolSpec]) -> str | None:
    if call.name not in tools:
        return f"unknown tool {call.name!r}; available tools: {', '.join(sorted(tools))}"
    if call.parse_error:
        return f"invalid arguments for {call.name}: {call.parse_error}"
    problem = safejson.value_problem(call.args)
    if problem:  # NaN/Infinity from a lenient provider parser, or a replayed cached reply
        return f"invalid arguments for {call.name}: the arguments {problem}"
    error = schema_error(dict(call.args), specs[call.name].parameters_json_schema)
    if error:
        return f"invalid arguments for {call.name} {error}"
    try:
        inspect.signature(tools[call.name]).bind(**call.args)
    except TypeError as exc:
        return f"invalid arguments for {call.name}: {exc}"
    return None


async def _execute(
    call: ToolCall, step: int, index: int,
    tools: Mapping[str, Callable[..., Any]], specs: Mapping[str, ToolSpec],
) -> tuple[ToolResult, ToolCallRecord, bool]:
    call_id = f"{step}.{index}"
    start = time.perf_counter()
    bad = _bad_call_reason(call, tools, specs)
    if bad:
        # unsafe arguments never reach a record: keep their text, not the values
        args = dict(call.args) if safejson.value_problem(call.args) is None else {"_rejected": repr(call.args)[:500]}
        rec = ToolCallRecord(call_id, step, call.name, args, None, 0.0, bad)
        return ToolResult(call.id, call.name, bad, is_error=True), rec, True
    fn = tools[call.name]
    try:
        result = fn(**call.args)
        if inspect.isawaitable(result):
            result = await result
    except EhrlibError as exc:
        ms = (time.perf_counter() - start) * 1000.0
        msg = f"{type(exc).__name__}: {exc}"
        rec = ToolCallRecord(call_id, step, call.name, dict(call.args), None, ms, msg)
        return ToolResult(call.id, call.name, msg, is_error=True), rec, False
    ms = (time.perf_counter() - start) * 1000.0
    rec = ToolCallRecord(call_id, step, call.name, dict(call.args), count_rows(result), ms, None)
    return ToolResult(call.id, call.name, render_tool_result(result)), rec, False


def _turn_accept(offer_tools: bool, tools: Mapping[str, Callable[..., Any]], specs: Mapping[str, ToolSpec],
                 final_schema: Mapping[str, Any] | None) -> Callable[[LLMResponse], str | None]:
    """The client's ``accept`` for one turn: a turn with a malformed tool call, tool calls
    after the budget, or a final answer off the schema is never cached (a rerun asks again).
    """
    def accept(resp: LLMResponse) -> str | None:
        if resp.tool_calls:
            if not offer_tools:
                return "tool calls after the tool budget"
            return next((r for r in (_bad_call_reason(c, tools, specs) for c in resp.tool_calls) if r), None)
        if final_schema is None:
            return None
        try:
            parse_json_reply(resp.text, final_schema)
        except MalformedReply as exc:
            return str(exc)
        return None

    return accept


async def run_tool_loop(
    client: LLMClient,
    messages: Sequence[Message],
    tools: Mapping[str, Callable[..., Any]],
    *,
    specs: Sequence[ToolSpec] | None = None,
    max_steps: int = 10,
    config: GenerationConfig | None = None,
    tracer: Callable[[ToolCallRecord], None] | None = None,
    final_schema: Mapping[str, Any] | None = None,
    finalize_on_budget: bool = True,
    max_repairs: int = 1,
    stage: str | None = None,
    note_id: str | None = None,
) -> ToolLoopResult:
    """Let the model call `tools` until it answers; return the answer and the trace.

    `tools` maps the declared name to a callable (sync or async); `specs` default
    to `tool_spec_from_function` of each callable. `final_schema`, when given, is the
    JSON Schema the final answer must match (parsed into `value`).
    """
    if max_steps < 1:
        raise ConfigError("max_steps must be at least 1")
    if config is not None and config.response_schema is not None:
        # Gemini 2.5 rejects a response schema together with function declarations;
        # the final answer's shape is checked from the text instead.
        raise ConfigError("run_tool_loop: pass the answer schema as final_schema, not config.response_schema")
    spec_list = list(specs) if specs is not None else [
        tool_spec_from_function(fn, name=name) for name, fn in tools.items()]
    spec_map = {s.name: s for s in spec_list}
    missing = set(tools) ^ set(spec_map)
    if missing:
        raise ConfigError(f"tools and tool specs disagree on {sorted(missing)}")
    history = list(messages)
    trace: list[ToolCallRecord] = []
    usage = CallUsage()
    calls = 0
    repairs = 0
    tool_turns = 0
    budget_told = False

    def result(text: str, value: Any = None, failure: LoopFailure | None = None,
               final: LLMResponse | None = None) -> ToolLoopResult:
        return ToolLoopResult(text, value, tuple(trace), tuple(history), usage, calls, failure, final)

    while True:
        offer_tools = tool_turns < max_steps
        if not offer_tools:
            if not finalize_on_budget:
                return result("", failure=LoopFailure("max_steps", f"no final answer after {max_steps} tool turns"))
            if not budget_told:
                history.append(Message("user", BUDGET_MESSAGE))
                budget_told = True
        try:
            resp = await client.generate(history, tools=spec_list if offer_tools else None,
                                         config=config, stage=stage, note_id=note_id,
                                         accept=_turn_accept(offer_tools, tools, spec_map, final_schema))
        except LLMCallError as exc:
            kind = "truncated" if exc.kind == "truncated" else "call_error"
            return result("", failure=LoopFailure(kind, str(exc)))
        calls += 1
        usage = usage + resp.usage

        if resp.tool_calls and offer_tools:
            tool_turns += 1
            safe_calls = tuple(c if safejson.value_problem(c.args) is None else dataclasses.replace(
                c, args={}, parse_error=c.parse_error or "unsafe arguments") for c in resp.tool_calls)
            history.append(Message("assistant", resp.text, tool_calls=safe_calls))
            results, malformed = [], []
            for i, call in enumerate(resp.tool_calls):
                tool_result, rec, bad = await _execute(call, tool_turns, i, tools, spec_map)
                trace.append(rec)
                if tracer is not None:
                    tracer(rec)
                results.append(tool_result)
                if bad:
                    malformed.append(tool_result.content)
            history.append(Message("tool", tool_results=tuple(results)))
            if malformed:
                if repairs >= max_repairs:
                    return result(resp.text, failure=LoopFailure("malformed", "; ".join(malformed)))
                repairs += 1
            continue

        if resp.tool_calls:  # tools were not offered (budget spent) but the model still calls
            return result(resp.text, failure=LoopFailure(
                "max_steps", f"model kept calling tools after {max_steps} tool turns"))
        if final_schema is None:
            return result(resp.text, final=resp)
        try:
            return result(resp.text, parse_json_reply(resp.text, final_schema), final=resp)
        except MalformedReply as exc:
            if repairs >= max_repairs:
                return result(resp.text, failure=LoopFailure("malformed", str(exc)))
            repairs += 1
            history += [Message("assistant", resp.text), repair_message(str(exc), final_schema)]


def run_tool_loop_sync(
    client: LLMClient,
    messages: Sequence[Message],
    tools: Mapping[str, Callable[..., Any]],
    **kwargs: Any,
) -> ToolLoopResult:
    """`run_tool_loop` for sync callers (notebooks, scripts)."""
    return run_sync(run_tool_loop(client, messages, tools, **kwargs))
