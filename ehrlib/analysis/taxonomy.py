"""Heuristic error taxonomy (paper Appendix H, Figure 4), assigned by rules.

The paper sorted 100 sampled errors per model *by hand* into five types. This module
assigns the same five types automatically from what a run records (the matched
prediction's tool trace, cache flag and time window) against the gold entity. It is a
**heuristic**: the rules see symptoms, not the model's intent, and one error can show
several symptoms; the first rule that fires wins, in the order below. Use it to rank
and sample errors for reading, and report it as rule-assigned, not as a manual audit.

Rules, in order, for an *incorrect* judgement:

1. ``validation_cache`` — the matched prediction was answered from the validation cache
   (Appendix E.2): the reused verdict did not fit this entity.
2. ``tool_usage`` — a tool call failed (``error`` set), or an evidence-retrieval call
   (temporal category) returned no rows although the gold entity cites evidence rows:
   the model asked the tables the wrong way (e.g. searched "HR" after finding "Heart Rate").
3. ``premature_conclusion`` — the prediction concluded without any evidence-retrieval
   call (only item search/profiling, or no calls at all), or with fewer calls than the
   annotators needed: under-search, the most frequent type in the paper.
4. ``temporal_reasoning`` — the gold discrepancy is about time or trend, or the
   prediction's time window does not overlap the gold time.
5. ``medical_knowledge`` — the gold label rests on medical reasoning (clinical
   criteria) or the discrepancy is one of interpretation.
6. ``other`` — none of the above; ``not_extracted`` — no prediction matched the gold
   entity at all (an extraction miss, outside the paper's five verification types).
"""
from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from ehrlib.analysis.traces import tool_category
from ehrlib.corpus.records import GoldEntity, Judgement, Prediction, TimeSpan

__all__ = ["ERROR_TYPES", "classify_error", "classify_errors", "error_distribution"]

ERROR_TYPES = ("premature_conclusion", "tool_usage", "temporal_reasoning", "medical_knowledge",
               "validation_cache", "other", "not_extracted")


def _overlaps(a: TimeSpan, b: TimeSpan) -> bool:
    a0, a1 = str(a.start or a.end or ""), str(a.end or a.start or "")
    b0, b1 = str(b.start or b.end or ""), str(b.end or b.start or "")
    if not (a0 and b0):
        return True  # nothing to compare: do not blame time
    # ISO strings compare chronologically; compare on the date so a date-only gold
    # window ("2150-01-03") covers every timestamp of that day.
    return a0[:10] <= b1[:10] and b0[:10] <= a1[:10]


def classify_error(gold: GoldEntity, pred: Prediction | None) -> tuple[str, str]:
    """(error type, the rule that fired) for one incorrectly judged gold entity."""
    if pred is None:
        return "not_extracted", "no prediction matched the gold entity"
    calls = pred.tool_calls
    if pred.from_cache:
        return "validation_cache", "verdict reused from the validation cache"
    failed = [c.tool for c in calls if c.error]
    if failed:
        return "tool_usage", f"tool call failed: {failed[0]}"
    empty = [c.tool for c in calls if tool_category(c.tool) == "temporal" and c.n_rows == 0]
    if empty and gold.evidence_row_ids:
        return "tool_usage", f"{empty[0]} returned no rows though gold cites evidence"
    if not any(tool_category(c.tool) == "temporal" for c in calls):
        return "premature_conclusion", f"no evidence-retrieval call ({len(calls)} calls)"
    if gold.check_path and len(calls) < len(gold.check_path):
        return "premature_conclusion", f"{len(calls)} calls, annotators needed {len(gold.check_path)}"
    inc_type = gold.inconsistency.type if gold.inconsistency else None
    if inc_type in ("time", "trend"):
        return "temporal_reasoning", f"gold discrepancy type is {inc_type}"
    if gold.time is not None and pred.time_window is not None and not _overlaps(gold.time, pred.time_window):
        return "temporal_reasoning", "prediction's time window misses the gold time"
    if gold.reasoning == "medical" or inc_type == "interpretation":
        return "medical_knowledge", "gold label rests on medical interpretation"
    return "other", "no rule fired"


def classify_errors(judgements: Sequence[Judgement], gold: Sequence[GoldEntity],
                    predictions: Sequence[Prediction]) -> pd.DataFrame:
    """One row per incorrect judgement with its heuristic error type and the rule that fired.

    ``matched_prediction`` of a judgement indexes ``predictions`` (as written by the judges).
    """
    by_key = {(g.note_id, g.entity_id): g for g in gold}
    rows = []
    for j in judgements:
        if j.verdict != "incorrect":
            continue
        g = by_key.get((j.note_id, j.entity_id))
        if g is None:
            continue
        idx = j.matched_prediction
        pred = predictions[idx] if idx is not None and 0 <= idx < len(predictions) else None
        etype, rule = classify_error(g, pred)
        rows.append({"judge": j.judge, "mode": j.mode, "note_id": j.note_id, "entity_id": j.entity_id,
                     "entity": g.entity, "gold_label": g.label,
                     "pred_label": pred.label if pred else None, "error_type": etype, "rule": rule})
    return pd.DataFrame(rows, columns=["judge", "mode", "note_id", "entity_id", "entity", "gold_label",
                                       "pred_label", "error_type", "rule"])


def error_distribution(errors: pd.DataFrame, by: Sequence[str] = ("judge", "mode")) -> pd.DataFrame:
    """Counts and shares of error types per group (Figure 4's bars), all types listed."""
    keys = list(by)
    if errors.empty:
        return pd.DataFrame(columns=[*keys, "error_type", "n", "share"])
    counts = errors.groupby([*keys, "error_type"]).size().rename("n")
    full = counts.unstack("error_type", fill_value=0).reindex(columns=list(ERROR_TYPES), fill_value=0)
    out = full.stack().rename("n").reset_index()
    out["share"] = out["n"] / out.groupby(keys)["n"].transform("sum")
    return out
