"""What every tool returns: rows with evidence ids, a bounded text rendering, an error.

A tool's rows go to the verifier as evidence, so each row names its logical table and
``row_id``. The text goes to a model, whose context is small and expensive: it shows at
most ``text_rows`` rows (the first and last halves, because the ends of a time series are
what a note talks about: "on admission", "at discharge") and says what was cut.
"""
from __future__ import annotations

import datetime as _dt
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ToolResult", "jsonable", "render_rows", "DEFAULT_TEXT_ROWS", "DEFAULT_ROW_LIMIT"]

#: Rows shown in the text a model reads.
DEFAULT_TEXT_ROWS = 30
#: Rows kept in a result (the evidence a verifier can cite).
DEFAULT_ROW_LIMIT = 1000


#: exact types returned as they are (the common cells: checked by one set lookup)
_PLAIN = frozenset({type(None), str, bool, int})


def jsonable(value: Any) -> Any:
    """A JSON-serialisable version of one cell (timestamps as ISO strings, NaN as None)."""
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind is float:
        return None if math.isnan(value) or math.isinf(value) else value
    if kind is _dt.datetime:
        return value.isoformat(sep=" ", timespec="seconds") if value.time() != _dt.time() else value.date().isoformat()
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return None if math.isnan(value) or math.isinf(value) else value
    if isinstance(value, _dt.datetime):
        return value.isoformat(sep=" ", timespec="seconds") if value.time() != _dt.time() else value.date().isoformat()
    if isinstance(value, _dt.date):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    try:  # numpy / decimal scalars
        return jsonable(value.item())
    except AttributeError:
        return str(value)


@dataclass(frozen=True, slots=True)
class ToolResult:
    """One tool call's outcome.

    ``rows``: JSON-ready dicts, each with ``table`` and ``row_id`` (at most the toolset's
    row limit; ``n_rows`` counts all matches). ``summary``: computed facts (trend
    statistics, the resolved item, the time window). ``error``: an expected failure in
    words a model can act on (unknown item, bad date); the text then says the same.
    """

    tool: str
    args: Mapping[str, Any]
    text: str
    rows: tuple[Mapping[str, Any], ...] = ()
    n_rows: int = 0
    summary: Mapping[str, Any] = field(default_factory=dict)
    error: str | None = None

    @property
    def ok(self) -> bool:
        """Whether the call succeeded."""
        return self.error is None

    @property
    def truncated(self) -> bool:
        """Whether more rows matched than the result holds."""
        return self.n_rows > len(self.rows)

    def evidence(self) -> list[dict[str, Any]]:
        """``[{table, row_id}]`` of the returned rows (the evidence a verdict cites)."""
        return [{"table": r["table"], "row_id": r["row_id"]} for r in self.rows if "row_id" in r]

    def to_dict(self) -> dict[str, Any]:
        """The JSON form recorded in traces."""
        return {"tool": self.tool, "args": jsonable(dict(self.args)), "text": self.text,
                "rows": [dict(r) for r in self.rows], "n_rows": self.n_rows,
                "summary": jsonable(dict(self.summary)), "error": self.error}

    @classmethod
    def failure(cls, tool: str, args: Mapping[str, Any], message: str) -> ToolResult:
        """A failed call: the message goes back to the model."""
        return cls(tool=tool, args=dict(args), text=f"ERROR: {message}", error=message)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def render_row(row: Mapping[str, Any]) -> str:
    """One line per row: ``[table#row_id] time[–end] label = value unit (extras)``."""
    when = row.get("time") or ""
    if row.get("end"):
        when = f"{when} → {row['end']}"
    parts = [f"[{row['table']}#{row['row_id']}]"]
    if when:
        parts.append(str(when))
    parts.append(str(row.get("label") or row.get("item") or ""))
    value = row.get("value")
    if value is None:
        value = row.get("valuenum")
    if value is not None and value != "":
        parts.append(f"= {_fmt(value)}{(' ' + str(row['unit'])) if row.get('unit') else ''}")
    extras = [f"{k}={_fmt(v)}" for k, v in row.get("extra", {}).items() if v not in (None, "")]
    if extras:
        parts.append("(" + ", ".join(extras) + ")")
    return " ".join(parts)


def render_rows(rows: Sequence[Mapping[str, Any]], n_total: int, text_rows: int = DEFAULT_TEXT_ROWS) -> str:
    """Rows as text, at most ``text_rows`` lines plus one line saying what was cut."""
    if n_total == 0:
        return "No records."
    if len(rows) <= text_rows:
        lines = [render_row(r) for r in rows]
        if n_total > len(rows):
            lines.append(f"... {n_total - len(rows)} more matching rows not returned (row limit).")
        return "\n".join(lines)
    head = text_rows - text_rows // 2
    tail = text_rows // 2
    cut = rows[head:len(rows) - tail]
    tables = sorted({r["table"] for r in cut})
    times = [r["time"] for r in cut if r.get("time")]
    span = f" from {min(times)} to {max(times)}" if times else ""
    note = (f"... {n_total - head - tail} rows cut ({len(cut)} returned in rows, "
            f"{n_total - len(rows)} beyond the row limit){span} in {', '.join(tables)}; "
            "narrow the time window or add a value condition to see them.")
    return "\n".join([*(render_row(r) for r in rows[:head]), note, *(render_row(r) for r in rows[-tail:])])
