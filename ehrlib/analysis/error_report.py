"""Error analysis of one judged run: every wrong verdict with what a reader needs to judge
it (note line, prediction, gold, reason, tool trace), its rule-assigned type
(:mod:`ehrlib.analysis.taxonomy`), breakdowns, and a sampling sheet for a manual audit.

The types are a heuristic; the sampling sheet exists so a person can check them, the way
the paper sorted a sample of errors by hand (Appendix H).
"""
from __future__ import annotations

import csv
import os
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from ehrlib.analysis.taxonomy import ERROR_TYPES, classify_error, error_distribution
from ehrlib.errors import DataError
from ehrlib.judge.evaluate import RunData, load_run, read_judgements
from ehrlib.judge.llm_judge import render_prediction
from ehrlib.judge.metrics import inconsistency_group
from ehrlib.result_tables import write_table

__all__ = ["PAPER_TYPES", "error_rows", "error_counts", "error_examples", "errors_by", "sampling_sheet",
           "backbone_errors", "paper_error_distribution"]

#: the five verification error types of the paper's Figure 4, in its order
PAPER_TYPES = ("premature_conclusion", "tool_usage", "temporal_reasoning", "medical_knowledge", "validation_cache")
_TRACE_CALLS = 6


def _trace(pred) -> str:
    if pred is None:
        return ""
    calls = [f"{c.tool}({', '.join(f'{k}={v}' for k, v in c.args.items())}) -> "
             f"{'error' if c.error else f'{c.n_rows} rows'}" for c in pred.tool_calls]
    more = f" ... +{len(calls) - _TRACE_CALLS} calls" if len(calls) > _TRACE_CALLS else ""
    return " | ".join(calls[:_TRACE_CALLS]) + more


def error_rows(run_dir: str | os.PathLike[str], *, judge: str = "matcher", mode: str = "lenient") -> pd.DataFrame:
    """One row per gold entity ``judge`` scored incorrect in ``mode``, with its error type,
    the rule that assigned it and the evidence to read.
    """
    return _run_error_rows(load_run(run_dir), judge, mode)


def _run_error_rows(run: RunData, judge: str, mode: str) -> pd.DataFrame:
    notes = {n.note_id: n for n in run.notes}
    gold = {(g.note_id, g.entity_id): g for g in run.gold}
    rows = []
    for j in read_judgements(run.run_dir):
        if j.judge != judge or j.mode != mode or j.verdict != "incorrect":
            continue
        g = gold.get((j.note_id, j.entity_id))
        if g is None:
            continue
        i = j.matched_prediction
        pred = run.predictions[i] if i is not None and 0 <= i < len(run.predictions) else None
        etype, rule = classify_error(g, pred)
        note = notes.get(g.note_id)
        lines = note.lines if note is not None else []
        rows.append({
            "error_type": etype, "rule": rule, "note_id": g.note_id, "note_type": note.note_type if note else None,
            "entity_id": g.entity_id, "line": g.line,
            "note_line": lines[g.line].strip() if 0 <= g.line < len(lines) else "",
            "gold": f"{g.entity}" + (f" = {g.value}" if g.value else "") + f" -> {g.label}",
            "inconsistency": inconsistency_group(g),
            "tables": ", ".join(sorted({it.table for it in g.items})) or "none",
            "prediction": render_prediction(pred) if pred is not None else "(no matching prediction)",
            "judge_reason": j.reason, "tool_trace": _trace(pred)})
    cols = ["error_type", "rule", "note_id", "note_type", "entity_id", "line", "note_line", "gold",
            "inconsistency", "tables", "prediction", "judge_reason", "tool_trace"]
    return pd.DataFrame(rows, columns=cols)


def error_counts(errors: pd.DataFrame) -> pd.DataFrame:
    """Count and share per error type, every type listed (the five of Figure 4 first)."""
    counts = errors["error_type"].value_counts() if not errors.empty else pd.Series(dtype=int)
    total = int(counts.sum())
    rows = [{"error_type": t, "in_paper": t in PAPER_TYPES, "n": int(counts.get(t, 0)),
             "share": counts.get(t, 0) / total if total else 0.0} for t in ERROR_TYPES]
    return pd.DataFrame(rows)


def error_examples(errors: pd.DataFrame, *, per_type: int = 2,
                   columns: Sequence[str] = ("note_line", "prediction", "gold", "judge_reason", "tool_trace"),
                   ) -> pd.DataFrame:
    """The first ``per_type`` errors of each type (in note order), with the reading columns."""
    if errors.empty:
        return errors
    order = {t: k for k, t in enumerate(ERROR_TYPES)}
    picked = (errors.sort_values(["note_id", "line"], kind="stable").groupby("error_type", sort=False)
              .head(per_type))
    picked = picked.sort_values("error_type", key=lambda s: s.map(order), kind="stable")
    return picked[["error_type", "note_id", "line", *columns]].reset_index(drop=True)


def errors_by(errors: pd.DataFrame, column: str) -> pd.DataFrame:
    """Errors per ``column`` value (note_type, inconsistency, tables) × error type, with totals."""
    if errors.empty:
        return pd.DataFrame()
    data = errors.assign(**{column: errors[column].str.split(", ")}).explode(column) if column == "tables" else errors
    table = pd.crosstab(data[column], data["error_type"])
    table = table.reindex(columns=[t for t in ERROR_TYPES if t in table.columns])
    table["total"] = table.sum(axis=1)
    return table.sort_values("total", ascending=False)


def _has_audit_entries(path: Path) -> bool:
    """Whether an existing sheet has any filled ``audit_type`` cell (unreadable counts as filled)."""
    if not path.exists():
        return False
    try:
        with open(path, encoding="utf-8-sig", newline="") as fh:
            return any((row.get("audit_type") or "").strip() for row in csv.DictReader(fh))
    except (OSError, UnicodeDecodeError, csv.Error):
        return True


def sampling_sheet(errors: pd.DataFrame, path: str | os.PathLike[str], *, per_type: int = 10,
                   seed: int = 0) -> Path:
    """A CSV of up to ``per_type`` randomly drawn errors per type, with empty
    ``audit_type``/``audit_note`` columns for a person to fill in; returns its path.

    A sheet at ``path`` that already holds audit entries is a person's work: it is never
    overwritten (DataError); read it back with :func:`ehrlib.analysis.audit.audit_run`.
    """
    out = Path(path)
    if _has_audit_entries(out):
        raise DataError(f"{out} already holds audited rows; read it back (ehrlib judge --audit) or choose "
                        "another sheet path")
    if errors.empty:
        sample = errors.assign(audit_type=[], audit_note=[])
    else:
        drawn = [g.sample(n=min(per_type, len(g)), random_state=seed)
                 for _, g in errors.groupby("error_type", sort=False)]
        sample = pd.concat(drawn, ignore_index=True).assign(audit_type="", audit_note="")
    out.parent.mkdir(parents=True, exist_ok=True)
    write_table(sample, out)
    return out


def backbone_errors(run_dirs: Sequence[str | os.PathLike[str]], *, judge: str = "matcher", mode: str = "lenient",
                    per_backbone: int | None = 100, seed: int = 0) -> pd.DataFrame:
    """The errors of several judged runs, each labelled by its backbone (the manifest's model,
    else its backend; prefixed by the method when the runs mix methods), pooled per backbone
    and, like the paper's sample of 100 errors per model, drawn down to ``per_backbone``.
    """
    runs = [load_run(d) for d in run_dirs]
    mixed = len({r.run_info.get("method") for r in runs}) > 1
    frames = []
    for run in runs:
        info = run.run_info
        backbone = str(info.get("model") or info.get("backend") or "unknown")
        label = f"{info.get('method')} / {backbone}" if mixed else backbone
        frames.append(_run_error_rows(run, judge, mode).assign(backbone=label, run_id=info.get("run_id")))
    errors = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["backbone", "error_type"])
    if per_backbone is None or errors.empty:
        return errors
    drawn = [g.sample(n=min(per_backbone, len(g)), random_state=seed) for _, g in errors.groupby("backbone", sort=True)]
    return pd.concat(drawn, ignore_index=True)


def paper_error_distribution(errors: pd.DataFrame, by: str = "backbone") -> pd.DataFrame:
    """Figure 4's bars: per ``by`` group, the count and share of each of the paper's five
    verification error types among the errors of those types (extraction misses and
    ``other`` are not verification errors of the five kinds and are left out).
    """
    five = errors[errors["error_type"].isin(PAPER_TYPES)] if not errors.empty else errors
    dist = error_distribution(five, by=(by,))
    return dist[dist["error_type"].isin(PAPER_TYPES)].reset_index(drop=True)
