"""Provider-neutral records every stage and judge speaks, whatever the backend.

Backends translate these to their wire format and back; the cache keys and the
usage ledger are computed from them, so a Gemini and an OpenAI-compatible run of
the same experiment are comparable field by field.
"""
from __future__ import annotations

import dataclasses
import inspect
import re
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from ehrlib.errors import ConfigError

__all__ = [
    "Role",
    "ToolCall",
    "ToolResult",
    "Message",
    "ToolSpec",
    "GenerationConfig",
    "CallUsage",
    "LLMResponse",
    "LLMClient",
    "tool_spec_from_function",
    "system",
    "user",
]

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One function call the model asked for.

    `parse_error` is set when the provider returned arguments that are not a JSON
    object (OpenAI-style servers send them as a string); the tool loop then sends
    the error back to the model instead of calling the tool. `signature` carries a
    Gemini thought signature (base64) that must be echoed back on the next turn.
    """

    id: str
    name: str
    args: Mapping[str, Any] = field(default_factory=dict)
    parse_error: str | None = None
    signature: str | None = None


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool returned (or the error it raised), as sent back to the model."""

    call_id: str
    name: str
    content: str
    is_error: bool = False


@dataclass(frozen=True, slots=True)
class Message:
    """One turn of a conversation: text, tool calls (assistant) or tool results (tool)."""

    role: Role
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_results: tuple[ToolResult, ...] = ()

    def __post_init__(self) -> None:
        if self.role not in ("system", "user", "assistant", "tool"):
            raise ConfigError(f"unknown message role {self.role!r}")
        if self.tool_calls and self.role != "assistant":
            raise ConfigError("only assistant messages carry tool calls")
        if self.tool_results and self.role != "tool":
            raise ConfigError("only tool messages carry tool results")


def system(text: str) -> Message:
    """A system message."""
    return Message("system", text)


def user(text: str) -> Message:
    """A user message."""
    return Message("user", text)


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool declaration: name, description for the model, JSON Schema of its arguments."""

    name: str
    description: str
    parameters_json_schema: Mapping[str, Any]

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.:-]{0,127}", self.name):
            raise ConfigError(f"invalid tool name {self.name!r}")
        if self.parameters_json_schema.get("type") != "object":
            raise ConfigError(f"tool {self.name}: parameters schema must be an object schema")


@dataclass(frozen=True, slots=True)
class GenerationConfig:
    """Sampling settings for one call. `None` means "send nothing, use the server default".

    `response_schema` is a JSON Schema; backends that support structured output
    constrain decoding with it, and `parse_json_reply` validates against it.
    """

    model: str
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    thinking_budget: int | None = None
    response_schema: Mapping[str, Any] | None = None
    #: ask for the generated tokens' log-probabilities (:mod:`ehrlib.llm.logprobs`); a server
    #: that refuses them is asked again without, once per endpoint
    logprobs: bool | None = None

    def replace(self, **changes: Any) -> GenerationConfig:
        """A copy with ``changes`` applied."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """The configuration as a plain dict (for manifests and cache keys)."""
        return dataclasses.asdict(self)


@dataclass(frozen=True, slots=True)
class CallUsage:
    """Tokens and latency of one call. `output_tokens` excludes thinking tokens.

    Per call, as a client sees it; the per-record totals a run writes (calls, tokens, cost)
    are ``ehrlib.corpus.records.Usage``, built from these by the pipeline's caller.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    thinking_tokens: int = 0
    latency_ms: float = 0.0

    def __add__(self, other: CallUsage) -> CallUsage:
        return CallUsage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.thinking_tokens + other.thinking_tokens,
            self.latency_ms + other.latency_ms,
        )


@dataclass(frozen=True, slots=True)
class LLMResponse:
    """A parsed reply.

    `raw` is the provider's JSON (kept for audits); `cached` says it came from the on-disk cache, not the
    network.
    """

    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    usage: CallUsage = CallUsage()
    raw: Mapping[str, Any] = field(default_factory=dict)
    cached: bool = False
    finish_reason: str | None = None


@runtime_checkable
class LLMClient(Protocol):
    """The one interface pipeline stages and judges call."""

    backend: str
    config: GenerationConfig

    async def generate(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] | None = None,
        config: GenerationConfig | None = None,
        stage: str | None = None,
        note_id: str | None = None,
        accept: Callable[[LLMResponse], str | None] | None = None,
    ) -> LLMResponse:
        """One model call with tools offered; usage is recorded under ``stage`` and ``note_id``;
        a reply ``accept`` finds a problem with is never cached.
        """

    def generate_sync(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[ToolSpec] | None = None,
        config: GenerationConfig | None = None,
        stage: str | None = None,
        note_id: str | None = None,
    ) -> LLMResponse:
        """Blocking ``generate``."""


# --- tool specs from typed functions -------------------------------------------------

_PRIMITIVES: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}


def _json_schema_for(annotation: Any, where: str) -> dict[str, Any]:
    """JSON Schema for the simple argument types the style guide allows."""
    if annotation in _PRIMITIVES:
        return {"type": _PRIMITIVES[annotation]}
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is Literal:
        kinds = {type(a) for a in args}
        if len(kinds) != 1 or next(iter(kinds)) not in _PRIMITIVES:
            raise ConfigError(f"{where}: Literal values must share one primitive type")
        return {"type": _PRIMITIVES[next(iter(kinds))], "enum": list(args)}
    if origin in (list, Sequence, tuple) and args:
        item = args[0]
        return {"type": "array", "items": _json_schema_for(item, where)}
    if origin in (typing.Union, types.UnionType):
        non_none = [a for a in args if a is not type(None)]
        if len(non_none) == 1 and len(args) == 2:
            inner = _json_schema_for(non_none[0], where)
            return {**inner, "type": [inner["type"], "null"]} if "type" in inner else inner
    raise ConfigError(f"{where}: unsupported argument type {annotation!r}")


def _docstring_parts(doc: str) -> tuple[str, dict[str, str]]:
    """Split a Google-style docstring into (description without Args, {arg: text})."""
    lines = inspect.cleandoc(doc).splitlines()
    desc: list[str] = []
    arg_docs: dict[str, str] = {}
    section = None
    current = None
    for line in lines:
        stripped = line.strip()
        header = re.fullmatch(r"(Args|Arguments|Parameters|Returns|Raises|Yields|Examples?):", stripped)
        if header and not line.startswith((" ", "\t")):
            section = header.group(1)
            current = None
            if section != "Args" and section not in ("Arguments", "Parameters"):
                desc.append(line)
            continue
        if section in ("Args", "Arguments", "Parameters"):
            m = re.match(r"\s+(\*{0,2}\w+)\s*(?:\([^)]*\))?:\s*(.*)", line)
            if m and (len(line) - len(line.lstrip())) <= 4:
                current = m.group(1).lstrip("*")
                arg_docs[current] = m.group(2).strip()
            elif current and stripped:
                arg_docs[current] = f"{arg_docs[current]} {stripped}".strip()
            continue
        desc.append(line)
    return "\n".join(desc).strip(), arg_docs


def tool_spec_from_function(fn: Callable[..., Any], *, name: str | None = None) -> ToolSpec:
    """Build a ToolSpec from a fully annotated function with a Google-style docstring.

    The description is the docstring without its Args section (the argument texts go
    into the schema's per-property descriptions), the way google-genai documents
    callables. Parameters without a default are required. Unannotated parameters
    are an error: a model cannot call a tool whose argument types it cannot see.
    """
    tool_name = name or fn.__name__
    doc = inspect.getdoc(fn)
    if not doc:
        raise ConfigError(f"tool {tool_name}: a docstring is required (it is the model's description)")
    description, arg_docs = _docstring_parts(doc)
    hints = typing.get_type_hints(fn)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for pname, param in inspect.signature(fn).parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise ConfigError(f"tool {tool_name}: *args/**kwargs cannot be declared to a model")
        if pname not in hints:
            raise ConfigError(f"tool {tool_name}: parameter {pname!r} has no type annotation")
        schema = _json_schema_for(hints[pname], f"tool {tool_name}, parameter {pname}")
        if pname in arg_docs:
            schema["description"] = arg_docs[pname]
        if param.default is param.empty:
            required.append(pname)
        else:
            schema["default"] = param.default
        properties[pname] = schema
    params: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        params["required"] = required
    return ToolSpec(tool_name, description, params)
