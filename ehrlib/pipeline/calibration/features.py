"""Features of one prediction and of the table rows behind it, for the confidence calibrator.

A rule id alone says how often a rule family is right on average; whether *this* alarm is
right depends on its evidence: how far the stated number is from the nearest charted one,
whether an agreeing row sits just outside the window (a time-window slip rather than a
wrong value), how many rows the window holds, how far the window ends from the note.
:func:`item_rows` reads the prediction's items once through the patient's read-only
toolset; everything else here is pure (records and rows in, a flat dict out), so the same
function serves training (``ehrlib calibrate``) and the runner.

Fields filled by other stages (``time_basis``, ``deciding_row_ids``) are used when present
and read as ``"none"``/0 when absent, so a model trained before they existed still applies.
"""
from __future__ import annotations

import datetime as _dt
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rapidfuzz import fuzz

from ehrlib.corpus.records import Prediction, TimeSpan
from ehrlib.pipeline.offline.sections import segment_lines
from ehrlib.pipeline.offline.units import on_item_scale
from ehrlib.tools.context import as_datetime

__all__ = ["EvidenceStats", "ItemRows", "item_keys", "CATEGORICAL", "NUMERIC", "evidence_stats", "prediction_features",
           "item_rows", "stated_number", "NO_EVIDENCE", "item_similarity", "line_sections"]

#: categorical features (one-hot encoded by the model)
CATEGORICAL: tuple[str, ...] = ("rule_id", "rule_family", "label", "family_label", "inconsistency_type", "kind",
                                "item_table", "time_basis", "note_type", "temporal_status", "reason_scope",
                                "section")
#: numeric features (missing values are 0 with a ``*_known`` indicator where it matters)
NUMERIC: tuple[str, ...] = ("n_items", "log_tool_calls", "failed_calls", "log_evidence_rows", "n_deciding_rows",
                            "has_number", "rel_dev", "rel_dev_known", "exact_match", "rel_dev_any", "in_range",
                            "agree_outside", "agree_gap_h", "agree_known", "agree_note_h", "log_in_window",
                            "log_after_note", "no_rows_in_window", "note_gap_h", "note_gap_known", "unit_converted",
                            "window_days", "from_cache", "item_similarity")
_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")
_MAX_ROWS = 5000


@dataclass(frozen=True, slots=True)
class EvidenceStats:
    """What the prediction's item rows say about its stated value and window."""

    #: |stated - nearest in-window value| / |stated| (None: no stated number or no numeric row)
    rel_dev: float | None = None
    #: the same against every row of the admission (None: no stated number or no numeric row)
    rel_dev_any: float | None = None
    #: the stated number lies between the window's lowest and highest value
    in_range: bool = False
    #: a row agreeing with the stated value lies within one day outside the window
    agree_outside: bool = False
    #: hours from the window to the nearest agreeing row of the admission (0: one inside;
    #: None: none agrees anywhere, or nothing to agree with)
    agree_gap_h: float | None = None
    #: hours from the note's time to the nearest agreeing row (positive: charted after it)
    agree_note_h: float | None = None
    #: rows of the items inside the window
    n_in_window: int = 0
    #: rows inside the window charted after the note's time
    n_after_note: int = 0
    #: hours from the window's end to the note's time (positive: the window ends before it)
    note_gap_h: float | None = None
    #: the stated value was put on the item's scale by a unit conversion
    unit_converted: bool = False
    #: whether the items were read at all (False: no items, or an LLM verdict on free text)
    looked_up: bool = False


NO_EVIDENCE = EvidenceStats()


def stated_number(value: str | None) -> float | None:
    """The first number a stated value carries ("was 21" -> 21.0), else None."""
    m = _NUMBER.search(value or "")
    return float(m.group()) if m else None


def _time(text: Any) -> _dt.datetime | None:
    try:
        return as_datetime(str(text)[:19] if isinstance(text, str) else text)
    except (TypeError, ValueError):
        return None


def _agrees(row: Mapping[str, Any], number: float | None, text: str) -> bool:
    num = row.get("valuenum")
    if number is not None and isinstance(num, (int, float)):
        return abs(float(num) - number) <= 0.02 * max(abs(number), 1e-9)
    value = str(row.get("value") or "").strip().lower()
    return bool(text) and bool(value) and (text in value or value in text)


def _window(pred: Prediction) -> tuple[_dt.datetime | None, _dt.datetime | None]:
    """The prediction's window as times (a date-only end means the whole day)."""
    win = pred.time_window
    start = _time(win.start) if win is not None else None
    end = _time(win.end) if win is not None else None
    if end is not None and win is not None and len(str(win.end)) <= 10:
        end = end + _dt.timedelta(days=1) - _dt.timedelta(seconds=1)
    return start, end


def _hours(a: _dt.datetime, b: _dt.datetime) -> float:
    return (a - b).total_seconds() / 3600


def _numbers(rows: Sequence[Mapping[str, Any]]) -> list[float]:
    return [float(r["valuenum"]) for r in rows if isinstance(r.get("valuenum"), (int, float))]


def _on_scale(number: float | None, inside: Sequence[Mapping[str, Any]], nums: Sequence[float]
              ) -> tuple[float | None, bool]:
    """The stated number on the items' scale (°F against a °C item: converted) and whether
    a conversion was needed.
    """
    if number is None or not nums:
        return number, False
    units = [r.get("unit") for r in inside if r.get("unit")]
    scaled = on_item_scale(number, str(units[0]) if units else None, item_values=list(nums))
    if scaled is not None and scaled.via != "as written":
        return scaled.value, True
    return number, False


def _rel(target: float | None, nums: Sequence[float]) -> float | None:
    if target is None or not nums:
        return None
    return min(abs(v - target) for v in nums) / max(abs(target), 1e-6)


@dataclass(frozen=True, slots=True)
class ItemRows:
    """Rows of a prediction's items with what every prediction on the same items reads from
    them: each row's time (rows without one left out) and the numeric values, in row order.
    """

    rows: tuple[Mapping[str, Any], ...]
    timed: tuple[tuple[_dt.datetime, Mapping[str, Any]], ...]
    numbers: tuple[float, ...]

    @classmethod
    def of(cls, rows: Sequence[Mapping[str, Any]]) -> ItemRows:
        """The rows read once: their times and numbers."""
        timed = tuple((t, r) for r in rows if (t := _time(r.get("time"))) is not None)
        return cls(tuple(rows), timed, tuple(_numbers(rows)))


def evidence_stats(pred: Prediction, rows: Sequence[Mapping[str, Any]] | ItemRows, note_time: Any) -> EvidenceStats:
    """The :class:`EvidenceStats` of ``pred`` given its items' rows over the admission (tool
    row dicts with ``time``, ``value``, ``valuenum``, ``unit``; or an :class:`ItemRows` of
    them, read once for every prediction on the same items) and the note's time.
    """
    start, end = _window(pred)
    note_t = _time(note_time)
    gap = _hours(note_t, end) if note_t is not None and end is not None else None
    if not pred.items:
        return EvidenceStats(note_gap_h=gap)
    read = rows if isinstance(rows, ItemRows) else ItemRows.of(rows)
    timed, all_nums = read.timed, read.numbers
    inside = [(t, r) for t, r in timed if (start is None or t >= start) and (end is None or t <= end)]
    in_nums = _numbers([r for _, r in inside])
    target, converted = _on_scale(stated_number(pred.value), [r for _, r in inside], in_nums or all_nums)
    text = (pred.value or "").strip().lower()
    agreeing = [t for t, r in timed if _agrees(r, target, text)] if (target is not None or text) else []

    def off_window(t: _dt.datetime) -> float:   # hours outside the window (0: inside)
        before = _hours(start, t) if start is not None and t < start else 0.0
        return max(before, _hours(t, end) if end is not None and t > end else 0.0)

    return EvidenceStats(
        rel_dev=_rel(target, in_nums), rel_dev_any=_rel(target, all_nums),
        in_range=target is not None and bool(in_nums) and min(in_nums) <= target <= max(in_nums),
        agree_outside=any(0 < off_window(t) <= 24 for t in agreeing),
        agree_gap_h=min(map(off_window, agreeing)) if agreeing else None,
        agree_note_h=min((_hours(t, note_t) for t in agreeing), key=abs) if agreeing and note_t else None,
        n_in_window=len(inside), n_after_note=sum(1 for t, _ in inside if note_t is not None and t > note_t),
        note_gap_h=gap, unit_converted=converted, looked_up=True)


def item_keys(pred: Prediction, max_items: int = 3) -> tuple[str, ...]:
    """The tool keys of the prediction's items that :func:`item_rows` reads."""
    return tuple(f"{it.table}:{it.itemid}" for it in pred.items[:max_items] if it.itemid is not None)


def item_rows(toolset: Any, pred: Prediction, cache: dict[str, tuple[Mapping[str, Any], ...]] | None = None,
              max_items: int = 3) -> list[Mapping[str, Any]]:
    """The patient's rows of the prediction's items over the whole admission, read through
    ``Get_Item_Status_History`` (once per item key when ``cache``, a note's, is given); an
    item the tools cannot resolve contributes none.
    """
    cache = {} if cache is None else cache
    out: list[Mapping[str, Any]] = []
    for item in pred.items[:max_items]:
        if item.itemid is None:
            continue
        key = f"{item.table}:{item.itemid}"
        if key not in cache:
            res = toolset.call("Get_Item_Status_History", {"item": key, "time": ""})
            cache[key] = tuple(res.rows[:_MAX_ROWS]) if res.ok else ()
        out.extend(cache[key])
    return out


def _kind(pred: Prediction) -> str:
    """The statement's shape: a number, a range, a text value, or a mention without value."""
    value = (pred.value or "").strip()
    if not value:
        return "mention"
    if re.search(r"\d\s*(?:-|to|s\s*-)\s*\d", value):
        return "range"
    return "number" if stated_number(value) is not None else "text"


def _reason_scope(reason: str) -> str:
    """Where the verifier looked, from its reason text: a record exists in the admission but
    not the window, no record in the whole admission, a value disagreement, or other.
    """
    low = reason.lower()
    if "in this admission but not" in low:
        return "elsewhere_in_admission"
    if "in this admission" in low and low.startswith("no "):
        return "absent_from_admission"
    if "not found in the window" in low or "not recorded" in low:
        return "value_not_found"
    if "but it holds" in low or "does not hold" in low:
        return "criterion"
    return "other"


def _window_days(pred: Prediction) -> float:
    start, end = _window(pred)
    return min(max(_hours(end, start) / 24, 0.0), 30.0) if start is not None and end is not None else 0.0


def item_similarity(pred: Prediction) -> float:
    """How well the statement's words match its best item's label (0-1, token-set ratio):
    the offline aligner keeps no score of its own, and a loose match (an item found by one
    shared word) is a common way for a verdict to be about the wrong thing.
    """
    if not pred.items:
        return 0.0
    return max(fuzz.token_set_ratio(pred.entity.lower(), (it.label or "").lower()) for it in pred.items) / 100


def line_sections(text: str, note_type: str | None) -> tuple[str, ...]:
    """The section kind of every line of a note (the offline segmenter's, windows aside)."""
    lines = text.split("\n")   # as the pipeline numbers lines
    out = ["other"] * len(lines)
    for seg in segment_lines(lines, note_type or "physician", TimeSpan(), None):
        out[seg.start_line:seg.end_line + 1] = [seg.section] * (seg.end_line + 1 - seg.start_line)
    return tuple(out)


def _log_hours(h: float | None) -> float:
    """log(1 + |hours|) with the sign kept (0 when unknown; see the ``*_known`` flags)."""
    return math.copysign(math.log1p(abs(h)), h) if h is not None else 0.0


def prediction_features(pred: Prediction, note_type: str | None, ev: EvidenceStats = NO_EVIDENCE,
                        section: str = "none") -> dict[str, str | float]:
    """The flat feature dict of one prediction (pure)."""
    rule = pred.rule_id or "none"
    family = rule.split(".", 1)[0]
    failed = sum(1 for c in pred.tool_calls if c.error)
    gap = ev.note_gap_h
    return {
        "rule_id": rule, "rule_family": family, "label": pred.label, "family_label": f"{family}:{pred.label}",
        "inconsistency_type": pred.inconsistency_type or "none", "kind": _kind(pred),
        "item_table": pred.items[0].table if pred.items else "none", "time_basis": pred.time_basis or "none",
        "note_type": note_type or "none", "temporal_status": pred.temporal_status,
        "reason_scope": _reason_scope(pred.reason), "section": section,
        "n_items": float(min(len(pred.items), 5)), "log_tool_calls": math.log1p(len(pred.tool_calls)),
        "failed_calls": float(min(failed, 3)), "log_evidence_rows": math.log1p(len(pred.evidence_row_ids)),
        "n_deciding_rows": float(min(len(pred.deciding_row_ids), 5)),
        "has_number": float(stated_number(pred.value) is not None),
        "rel_dev": min(ev.rel_dev, 2.0) if ev.rel_dev is not None else 0.0,
        "rel_dev_known": float(ev.rel_dev is not None),
        "exact_match": float(ev.rel_dev is not None and ev.rel_dev <= 0.005),
        "rel_dev_any": min(ev.rel_dev_any, 2.0) if ev.rel_dev_any is not None else 0.0,
        "in_range": float(ev.in_range),
        "agree_outside": float(ev.agree_outside), "log_in_window": math.log1p(ev.n_in_window),
        "agree_gap_h": _log_hours(ev.agree_gap_h), "agree_known": float(ev.agree_gap_h is not None),
        "agree_note_h": _log_hours(ev.agree_note_h),
        "log_after_note": math.log1p(ev.n_after_note),
        "no_rows_in_window": float(ev.looked_up and ev.n_in_window == 0),
        "note_gap_h": max(min(gap, 240.0), -240.0) / 24 if gap is not None else 0.0,
        "note_gap_known": float(gap is not None), "unit_converted": float(ev.unit_converted),
        "window_days": _window_days(pred), "from_cache": float(pred.from_cache),
        "item_similarity": item_similarity(pred),
    }
