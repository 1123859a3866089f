"""JSON replies: find the JSON in a model's text, validate it, re-ask once, or record a failure.

Models wrap JSON in prose, code fences or (Qwen3 without a reasoning parser)
`<think>` blocks. `parse_json_reply` tries, in order: fenced blocks, the whole
text, then every `{`/`[` position with `json.JSONDecoder.raw_decode`, and returns
the first value that validates against the schema (JSON Schema, via `jsonschema`).
A reply that still fails after one repair becomes a `JsonResult` with `ok=False`
and the error kept, never an exception that would stop a batch.
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ehrlib.jsonschemas import best_error
from ehrlib.llm import safejson
from ehrlib.llm.errors import LLMCallError, MalformedReply
from ehrlib.llm.records import CallUsage, GenerationConfig, LLMClient, LLMResponse, Message

__all__ = ["parse_json_reply", "schema_error", "repair_message", "JsonResult", "generate_json", "json_accept"]

_THINK_BLOCK = re.compile(r"<think>.*?</think>", re.DOTALL)
_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
_MAX_SCAN = 50


def schema_error(value: Any, schema: Mapping[str, Any] | None) -> str | None:
    """The first JSON Schema violation of `value`, as one readable line, or None."""
    if schema is None:
        return None
    error = best_error(value, schema)
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path) or "(root)"
    return f"at {where}: {error.message}"


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _candidates(text: str) -> list[Any]:
    """JSON values in the text; NaN/Infinity and over-deep values are never candidates
    (see `ehrlib.llm.safejson`), so they cannot reach a record.
    """
    decoder = json.JSONDecoder(parse_constant=_reject_constant)
    found: list[Any] = []
    for block in _FENCE.findall(text):
        try:
            found.append(safejson.loads(block.strip()))
        except ValueError:
            pass
    try:
        found.append(safejson.loads(text.strip()))
    except ValueError:
        pass
    i, scanned = 0, 0
    while i < len(text) and scanned < _MAX_SCAN:
        if text[i] in "{[":
            scanned += 1
            try:
                value, end = decoder.raw_decode(text, i)
                if safejson.value_problem(value) is None:
                    found.append(value)
                i = end
                continue
            except (ValueError, RecursionError):
                pass
        i += 1
    return found


def parse_json_reply(text: str, schema: Mapping[str, Any] | None = None) -> Any:
    """Return the first JSON value in `text` that matches `schema`; raise MalformedReply."""
    cleaned = _THINK_BLOCK.sub("", text or "")
    values = _candidates(cleaned)
    if not values:
        raise MalformedReply("no JSON value found in the reply (strict JSON: no NaN/Infinity, "
                             f"at most {safejson.MAX_DEPTH} levels deep)")
    first_error = None
    for value in values:
        error = schema_error(value, schema)
        if error is None:
            return value
        first_error = first_error or error
    raise MalformedReply(f"the JSON does not match the required schema {first_error}")


def repair_message(error: str, schema: Mapping[str, Any] | None) -> Message:
    """The re-ask sent once after a malformed reply."""
    text = f"Your previous reply could not be used: {error}."
    if schema is not None:
        text += (" Reply again with only a JSON value matching this JSON Schema:\n"
                 + json.dumps(schema, sort_keys=True))
    return Message("user", text)


def json_accept(schema: Mapping[str, Any] | None,
                check: Callable[[Any], str | None] | None = None) -> Callable[[LLMResponse], str | None]:
    """The client's ``accept`` for a JSON reply: why it cannot be used (no JSON matching
    `schema`, or a value `check` rejects), or None.
    """
    def accept(response: LLMResponse) -> str | None:
        try:
            value = parse_json_reply(response.text, schema)
        except MalformedReply as exc:
            return str(exc)
        return check(value) if check is not None else None

    return accept


@dataclass(frozen=True, slots=True)
class JsonResult:
    """Outcome of `generate_json`: a value, or a recorded failure with its reason."""

    ok: bool
    value: Any
    text: str
    error: str | None
    attempts: int
    usage: CallUsage
    failure_kind: str | None = None  # "malformed" | "call_error" | "truncated"


async def generate_json(
    client: LLMClient,
    messages: Sequence[Message],
    *,
    schema: Mapping[str, Any] | None,
    config: GenerationConfig | None = None,
    use_response_schema: bool = True,
    stage: str | None = None,
    note_id: str | None = None,
    check: Callable[[Any], str | None] | None = None,
) -> JsonResult:
    """Ask for JSON; on a malformed reply re-ask once with the parse error; then give up.

    With `use_response_schema`, the schema is also sent as the backend's structured
    output setting (Gemini `response_json_schema`, OpenAI `response_format`). A reply
    that does not parse, or whose value `check` rejects, is never stored in the response
    cache (see `json_accept`): a rerun asks the server again.
    """
    cfg = config or client.config
    if use_response_schema and schema is not None:
        cfg = cfg.replace(response_schema=schema)
    history = list(messages)
    usage = CallUsage()
    text, error = "", None
    for attempt in (1, 2):
        try:
            resp = await client.generate(history, config=cfg, stage=stage, note_id=note_id,
                                         accept=json_accept(schema, check))
        except LLMCallError as exc:
            kind = "truncated" if exc.kind == "truncated" else "call_error"
            return JsonResult(False, None, text, str(exc), attempt, usage, kind)
        usage = usage + resp.usage
        text = resp.text
        try:
            return JsonResult(True, parse_json_reply(text, schema), text, None, attempt, usage)
        except MalformedReply as exc:
            error = str(exc)
        history += [Message("assistant", text), repair_message(error, schema)]
    return JsonResult(False, None, text, error, 2, usage, "malformed")
