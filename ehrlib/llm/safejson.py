"""Model-written JSON as untrusted data: finite numbers only, bounded nesting.

Python's `json` reader accepts `NaN`, `Infinity` and `-Infinity` (JSON does not), and
recursion on deeply nested input ends in RecursionError. A model's tool arguments or
answer carrying either would pass parsing and fail much later (the record writer
refuses non-finite numbers), outside any per-note error handling. Everything a model
writes is therefore read here, and rejected at the boundary with a reason.
"""
from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

__all__ = ["MAX_DEPTH", "UnsafeJSON", "loads", "value_problem"]

#: deeper than any reply or argument object ehrlib asks for, far below Python's recursion limit
MAX_DEPTH = 40


class UnsafeJSON(ValueError):
    """Not strict JSON, or nested too deeply."""


def _reject_constant(name: str) -> Any:
    raise UnsafeJSON(f"{name} is not a JSON number")


def _depth_ok(text: str, max_depth: int) -> bool:
    """Bracket depth outside strings, without recursion."""
    depth, in_str, escaped = 0, False, False
    for ch in text:
        if in_str:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            if depth > max_depth:
                return False
        elif ch in "]}":
            depth -= 1
    return True


def loads(text: str | bytes, *, max_depth: int = MAX_DEPTH) -> Any:
    """`json.loads` that refuses NaN/Infinity and nesting deeper than `max_depth`."""
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    if not _depth_ok(text, max_depth):
        raise UnsafeJSON(f"JSON nested deeper than {max_depth} levels")
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except RecursionError as exc:  # pragma: no cover - the depth check comes first
        raise UnsafeJSON("JSON nested too deeply") from exc


def value_problem(value: Any, *, max_depth: int = MAX_DEPTH) -> str | None:
    """Why an already-parsed value is unsafe (non-finite number, too deep, odd type), or None."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > max_depth:
            return f"nested deeper than {max_depth} levels"
        if isinstance(item, float) and not math.isfinite(item):
            return f"contains the non-finite number {item!r}"
        if isinstance(item, Mapping):
            if not all(isinstance(k, str) for k in item):
                return "has a non-string object key"
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend((v, depth + 1) for v in item)
        elif not (item is None or isinstance(item, (str, int, float, bool))):
            return f"holds a {type(item).__name__}, not a JSON value"
    return None
