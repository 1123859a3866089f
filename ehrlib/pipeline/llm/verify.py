"""Stage 6 with an LLM: the validation cache first, then the bounded tool loop, then the
evidence-sufficiency guard.

The model calls the patient's tools through :func:`ehrlib.llm.run_tool_loop` (every call
traced); a verdict may cite only rows a tool returned, and an "inconsistent" verdict needs
a record-retrieval call that looked at the statement's window (:func:`retrieval_covers`).
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ehrlib.corpus.records import RowRef, TimeSpan, ToolCallRecord, Usage
from ehrlib.llm import Message, run_sync, run_tool_loop
from ehrlib.llm.logprobs import verdict_probability
from ehrlib.llm.loop import all_tool_calls_failed
from ehrlib.pipeline.cache import render_cache
from ehrlib.pipeline.llm.caller import LLMCaller, object_schema, to_usage
from ehrlib.pipeline.llm.prompts import get_prompt
from ehrlib.pipeline.records import CacheEntry, Entity, Verdict
from ehrlib.pipeline.stages import NoteContext, StageEnv

__all__ = ["LLMVerifier", "retrieval_covers", "RETRIEVAL_TOOLS", "VERDICT_SCHEMA"]

#: record-retrieval tools: the evidence-sufficiency guard wants one of these before "inconsistent"
RETRIEVAL_TOOLS: frozenset[str] = frozenset({"Get_Item_Status_History", "Get_Item_Value_History",
                                             "Analyze_Value_Trend", "View_General_Timeline"})
_DATE = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})")

VERDICT_SCHEMA = object_schema({
    "label": {"type": "string", "enum": ["consistent", "inconsistent"]},
    "inconsistency_type": {"type": ["string", "null"], "enum": ["contradiction", "missing", None]},
    "reason": {"type": "string"},
    "evidence_row_ids": {"type": "array", "items": object_schema({"table": {"type": "string"},
                                                         "row_id": {"type": ["integer", "string"]}},
                                                        ["table", "row_id"])},
    #: how many leading rows of ``evidence_row_ids`` decided the verdict (1 when left out)
    "n_deciding": {"type": ["integer", "null"]},
    "from_cache": {"type": ["integer", "null"]},
    "siblings": {"type": "array", "items": {"type": "object"}},
}, ["label"])

# scope questions that put an entity out of the current stay (paper Figure 24's list)
# --- 6. verification ------------------------------------------------------------------------

def _tool_functions(toolset: Any) -> tuple[dict[str, Callable[..., Any]], list[Any] | None]:
    if toolset is None:
        return {}, None
    if isinstance(toolset, Mapping):
        return dict(toolset), None
    tools = dict(getattr(toolset, "tools", {}))
    specs = toolset.specs() if callable(getattr(toolset, "specs", None)) else None
    return tools, specs


def _widen(window: TimeSpan | None) -> tuple[str | None, str | None]:
    if window is None:
        return None, None

    def shift(t: str | None, days: int) -> str | None:
        if not t:
            return None
        try:
            return (dt.date.fromisoformat(t[:10]) + dt.timedelta(days=days)).isoformat()
        except ValueError:
            return None
    return shift(window.start, -1), shift(window.end, 1)


def retrieval_covers(calls: Sequence[ToolCallRecord], window: TimeSpan | None) -> bool:
    """Whether a successful record-retrieval call looked at ``window`` (±1 day): a call
    without explicit dates (whole stay, or a narrative anchor) counts, one whose dates all
    fall outside does not.
    """
    lo, hi = _widen(window)
    for c in calls:
        if c.tool not in RETRIEVAL_TOOLS or c.error:
            continue
        days = [f"{int(y):04d}-{int(m):02d}-{int(d):02d}" for y, m, d in _DATE.findall(json.dumps(dict(c.args)))]
        if not days or (lo is None and hi is None):
            return True
        if any((lo is None or day >= lo) and (hi is None or day <= hi) for day in days):
            return True
        if len(days) >= 2 and (lo is None or max(days) >= lo) and (hi is None or min(days) <= hi):
            return True  # a start-end range that encloses the window
    return False


class LLMVerifier:
    """Stage 6: cache first, then the bounded tool loop, then the evidence guard.

    With ``group`` (siblings from the same observation) the model judges them from the
    same rows in the same final answer; their verdicts come back in ``Verdict.siblings``.
    """

    accepts_group = True

    def __init__(self, llm: LLMCaller, *, max_steps: int = 12, evidence_guard: bool = True) -> None:
        self.llm = llm
        self.max_steps = max_steps
        self.evidence_guard = evidence_guard

    def __call__(self, ctx: NoteContext, env: StageEnv, entity: Entity,
                 cache: tuple[CacheEntry, ...], group: tuple[Entity, ...] = ()) -> Verdict:
        """Verify an entity with the tool loop, the validation cache first."""
        p_sys, p_ent, p_push = get_prompt("verify_system"), get_prompt("verify_entity"), get_prompt("verify_push")
        tools, specs = _tool_functions(env.toolset)
        seen_rows: set[tuple[str, str]] = set()
        wrapped = {name: _capture_rows(fn, seen_rows) for name, fn in tools.items()}
        lines = ctx.lines
        window = entity.window
        items = ", ".join(f"{i.label} ({i.table}, key {k})" for i, k in zip(entity.items, entity.item_keys,
                                                                            strict=False)) \
            or "not aligned yet (use the alignment tools)"
        value = entity.value or ""
        stated = entity.claim.stated()
        if stated:
            value = f"{value} {json.dumps(stated, ensure_ascii=False)}".strip()
        text = p_ent.render(
            line=str(entity.line), line_text=lines[entity.line] if 0 <= entity.line < len(lines) else "",
            entity=entity.text, value=value or "(none)", kind=entity.kind, items=items,
            window=f"{window.start} .. {window.end}" if window else "unknown",
            admittime=ctx.admittime or "unknown", dischtime=ctx.dischtime or "unknown",
            note_date=ctx.note.charttime or ctx.chartdate or "unknown", note_type=ctx.note_type,
            cache=render_cache(cache),
            siblings="\n".join(f"{g.entity_id} | line {g.line} | {g.text} | {g.value or ''}" for g in group)
            or "(none)")
        messages = [Message("system", p_sys.render()), Message("user", text)]
        prompt_id = p_ent.prompt_id
        loop = run_sync(run_tool_loop(self.llm.client, messages, wrapped, specs=specs, max_steps=self.max_steps,
                                      final_schema=VERDICT_SCHEMA, stage="verification", note_id=ctx.note_id))
        trace = [_record(r) for r in loop.trace]
        usage, calls = loop.usage, loop.model_calls
        result = loop
        if loop.ok and self.evidence_guard and self._needs_push(loop.value, trace, cache, window):
            push = p_push.render(items=items, window=f"{window.start} .. {window.end}" if window else "the stay")
            history = [*loop.messages, Message("assistant", loop.text), Message("user", push)]
            result = run_sync(run_tool_loop(self.llm.client, history, wrapped, specs=specs,
                                            max_steps=self.max_steps, final_schema=VERDICT_SCHEMA,
                                            stage="verification", note_id=ctx.note_id))
            offset = max((r.step or 0 for r in trace), default=0)
            trace += [dataclasses.replace(_record(r), step=(r.step or 0) + offset,
                                          call_id=f"guard-{r.call_id}") for r in result.trace]
            usage, calls = usage + result.usage, calls + result.model_calls
            prompt_id = p_push.prompt_id if result.ok else prompt_id
        total = to_usage(usage, calls, self.llm.cost(usage))
        if result.failure is not None:
            return Verdict(entity.entity_id, "unverified", reason="verification failed",
                           tool_calls=tuple(trace), usage=total, prompt_id=prompt_id,
                           failure=f"{result.failure.kind}: {result.failure.message}")
        if all_tool_calls_failed(trace):
            # an answer after tools that all failed rests on no patient data: not a verdict
            n = len(trace)
            return Verdict(entity.entity_id, "unverified", reason=f"all {n} tool calls failed",
                           tool_calls=tuple(trace), usage=total, prompt_id=prompt_id,
                           failure=f"tools_failed: all {n} tool calls of the verification loop failed "
                                   f"(last: {trace[-1].error})")
        verdict = self._verdict(entity, result.value, trace, cache, seen_rows, total, prompt_id)
        if result.final is not None:
            verdict = dataclasses.replace(verdict, confidence=verdict_probability(result.final.raw,
                                                                                   result.final.text))
        siblings = []
        by_id = {g.entity_id: g for g in group}
        for raw in result.value.get("siblings") or ():
            sib = by_id.pop(str(raw.get("entity_id")), None) if isinstance(raw, Mapping) else None
            if sib is None or raw.get("label") not in ("consistent", "inconsistent"):
                continue
            v = self._verdict(sib, {**raw, "from_cache": None}, trace, cache, seen_rows, Usage(), prompt_id)
            if v.label == "inconsistent" and self.evidence_guard and not retrieval_covers(trace, sib.window):
                continue  # not enough evidence for this sibling: it gets its own loop
            siblings.append(dataclasses.replace(v, tool_calls=(), from_cache=True))
        return dataclasses.replace(verdict, siblings=tuple(siblings))

    def _needs_push(self, value: Mapping[str, Any], trace: Sequence[ToolCallRecord],
                    cache: Sequence[CacheEntry], window: TimeSpan | None) -> bool:
        if value.get("label") != "inconsistent":
            return False
        calls = list(trace)
        idx = value.get("from_cache")
        if isinstance(idx, int) and 0 <= idx < len(cache):
            calls += list(cache[idx].verdict.tool_calls)
        return not retrieval_covers(calls, window)

    @staticmethod
    def _verdict(entity: Entity, value: Mapping[str, Any], trace: Sequence[ToolCallRecord],
                 cache: Sequence[CacheEntry], seen: set[tuple[str, str]], usage: Usage, prompt_id: str) -> Verdict:
        label = value["label"]
        kind = value.get("inconsistency_type") if label == "inconsistent" else None
        if label == "inconsistent" and kind is None:
            kind = "contradiction" if value.get("evidence_row_ids") else "missing"
        idx = value.get("from_cache")
        cached = cache[idx] if isinstance(idx, int) and 0 <= idx < len(cache) and not trace else None
        from_cache = cached is not None
        cited = [RowRef(str(r["table"]), r["row_id"]) for r in value.get("evidence_row_ids") or ()]
        allowed = set(seen)
        if cached is not None:
            allowed |= {(r.table, str(r.row_id)) for r in cached.verdict.evidence_row_ids}
        kept = tuple(r for r in cited if (r.table, str(r.row_id)) in allowed)
        reason = str(value.get("reason") or "")
        if len(kept) < len(cited):
            reason += f" [{len(cited) - len(kept)} cited row(s) never returned by a tool were dropped]"
        deciding = _deciding(value, cited, allowed) if kind != "missing" else ()
        if cached is not None and not kept and not cited:
            kept, deciding = tuple(cached.verdict.evidence_row_ids), tuple(cached.verdict.deciding_row_ids)
        return Verdict(entity.entity_id, label, kind, reason, kept, tuple(trace), from_cache, usage, prompt_id,
                       deciding_row_ids=deciding)


def _deciding(value: Mapping[str, Any], cited: Sequence[RowRef], allowed: set[tuple[str, str]]) -> tuple[RowRef, ...]:
    """The leading ``n_deciding`` cited rows (one when the reply leaves it out) that a tool
    actually returned: the prompt asks for the deciding rows first.
    """
    n = value.get("n_deciding")
    count = n if isinstance(n, int) and not isinstance(n, bool) and n >= 0 else 1
    return tuple(r for r in cited[:count] if (r.table, str(r.row_id)) in allowed)


def _record(r: Any) -> ToolCallRecord:
    return ToolCallRecord(tool=r.tool, args=dict(r.args), n_rows=int(r.n_rows or 0), ms=round(float(r.ms), 3),
                          error=r.error, call_id=str(r.call_id), step=r.step)


def _capture_rows(fn: Callable[..., Any], seen: set[tuple[str, str]]) -> Callable[..., Any]:
    """Wrap a tool so the rows it returns are remembered: a verdict may cite only those."""
    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        result = fn(*args, **kwargs)
        rows = result.get("rows") if isinstance(result, Mapping) else getattr(result, "rows", None)
        for row in rows or ():
            if isinstance(row, Mapping) and "table" in row and "row_id" in row:
                seen.add((str(row["table"]), str(row["row_id"])))
        return result

    return call
