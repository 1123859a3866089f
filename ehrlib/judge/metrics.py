"""Per-note recall, precision and F1 from judgements, and their breakdowns.

Section 5.2 of the paper: for each note, recall = correctly classified entities / gold
entities and precision = correctly classified entities / entities the framework
recognised; the reported score is the mean over notes. We report that macro mean and,
next to it, micro totals (all entities pooled), because a few long discharge summaries
dominate the micro numbers while the macro mean weighs every note equally.

Choices the paper leaves open, made explicit here:

* ``unparsed`` verdicts (an LLM judge reply without a readable ``Result:``) are counted
  apart and removed from the recall denominator, never scored as wrong (the inspect_ai
  convention); their count is reported so a reader sees how much was not judged.
* An LLM judge may credit one prediction for several gold entities (granularity), so
  the correct count can exceed the predicted count; precision is capped at 1.
* A note with gold entities but no prediction has precision 0; a note without gold
  entities but with predictions has precision 0 and undefined recall/F1 (left out of
  those means); a note with neither is left out.

All functions take and return DataFrames with fractions in 0..1 (tables multiply by 100).
"""
from __future__ import annotations

import collections

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ehrlib.corpus.records import GoldEntity, Judgement, Note, Prediction, to_dict

__all__ = [
    "INCONSISTENCY_GROUPS",
    "inconsistency_group",
    "judgement_frame",
    "note_scores",
    "summarize",
    "by_note_type",
    "by_gold_group",
    "judge_agreement",
]

#: Gold groups for the breakdown by inconsistency: the paper's column-level types,
#: ``missing`` (no record at all) and ``consistent`` for the rest.
INCONSISTENCY_GROUPS = ("time", "value", "interpretation", "trend", "other", "missing", "consistent")

_KEYS = ["judge", "mode"]


def inconsistency_group(g: GoldEntity) -> str:
    """The breakdown group of a gold entity (see ``INCONSISTENCY_GROUPS``)."""
    if g.label == "consistent":
        return "consistent"
    if g.inconsistency is None:
        return "other"
    if g.inconsistency.kind == "missing":
        return "missing"
    return g.inconsistency.type or "other"


def judgement_frame(judgements: Sequence[Judgement], gold: Sequence[GoldEntity],
                    notes: Sequence[Note] = ()) -> pd.DataFrame:
    """One row per judgement with the gold attributes the breakdowns group by."""
    gold_info = pd.DataFrame(
        [{"note_id": g.note_id, "entity_id": g.entity_id, "gold_label": g.label,
          "inconsistency": inconsistency_group(g), "reasoning": g.reasoning,
          "n_check_steps": len(g.check_path)} for g in gold],
        columns=["note_id", "entity_id", "gold_label", "inconsistency", "reasoning", "n_check_steps"],
    )
    frame = pd.DataFrame([to_dict(j) for j in judgements],
                         columns=["note_id", "entity_id", "mode", "judge", "verdict", "reason",
                                  "matched_prediction", "raw"])
    frame = frame.merge(gold_info, on=["note_id", "entity_id"], how="left")
    note_types = {n.note_id: n.note_type for n in notes}
    frame["note_type"] = [note_types.get(n, "unknown") for n in frame["note_id"]]
    return frame


def _scores(n_gold: pd.Series, n_pred: pd.Series, n_correct: pd.Series,
            n_unparsed: pd.Series) -> pd.DataFrame:
    judged = (n_gold - n_unparsed).astype(float)
    recall = np.where(judged > 0, n_correct / judged.where(judged > 0, 1), np.nan)
    precision = np.where(n_pred > 0, np.minimum(n_correct, n_pred) / n_pred.where(n_pred > 0, 1), 0.0)
    denom = recall + precision
    f1 = np.where(denom > 0, 2 * recall * precision / np.where(denom > 0, denom, 1), 0.0)
    f1 = np.where(np.isnan(recall), np.nan, f1)
    return pd.DataFrame({"recall": recall, "precision": precision, "f1": f1}, index=n_gold.index)


def note_scores(judgements: Sequence[Judgement], gold: Sequence[GoldEntity],
                predictions: Sequence[Prediction], notes: Sequence[Note] = ()) -> pd.DataFrame:
    """One row per (judge, mode, note) with counts and recall/precision/F1."""
    frame = judgement_frame(judgements, gold, notes)
    cols = [*_KEYS, "note_id", "note_type", "n_gold", "n_pred", "n_unverified", "n_correct", "n_incorrect",
            "n_unparsed", "recall", "precision", "f1"]
    if frame.empty:
        return pd.DataFrame(columns=cols)
    counts = (frame.assign(correct=frame["verdict"].eq("correct"),
                           incorrect=frame["verdict"].eq("incorrect"),
                           unparsed=frame["verdict"].eq("unparsed"))
              .groupby([*_KEYS, "note_id", "note_type"], as_index=False)
              .agg(n_gold=("entity_id", "size"), n_correct=("correct", "sum"),
                   n_incorrect=("incorrect", "sum"), n_unparsed=("unparsed", "sum")))
    n_pred: dict[str, int] = {}
    for p in predictions:
        n_pred[p.note_id] = n_pred.get(p.note_id, 0) + 1
    # Notes without gold entities but with predictions: every prediction there is a false
    # positive. Recall and F1 are undefined (left out of their means); precision is 0.
    judged = set(counts["note_id"])
    note_types = {n.note_id: n.note_type for n in notes}
    extra = [{"judge": jm[0], "mode": jm[1], "note_id": nid, "note_type": note_types.get(nid, "unknown"),
              "n_gold": 0, "n_correct": 0, "n_incorrect": 0, "n_unparsed": 0}
             for jm in counts[_KEYS].drop_duplicates().itertuples(index=False)
             for nid in sorted(set(n_pred) - judged) if not note_types or nid in note_types]
    if extra:
        counts = pd.concat([counts, pd.DataFrame(extra)], ignore_index=True)
    counts["n_pred"] = counts["note_id"].map(n_pred).fillna(0).astype(int)
    # unverified predictions count as predictions (precision pays for them) and never as correct
    unverified = collections.Counter(p.note_id for p in predictions if p.label == "unverified")
    counts["n_unverified"] = counts["note_id"].map(unverified).fillna(0).astype(int)
    counts = pd.concat([counts, _scores(counts["n_gold"], counts["n_pred"], counts["n_correct"],
                                        counts["n_unparsed"])], axis=1)
    counts.loc[counts["n_gold"] == 0, "precision"] = np.where(counts.loc[counts["n_gold"] == 0, "n_pred"] > 0,
                                                              0.0, np.nan)
    return counts[cols].sort_values([*_KEYS, "note_id"], ignore_index=True)


def _aggregate(scores: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    if scores.empty:
        return pd.DataFrame(columns=[*keys, "n_notes", "recall", "precision", "f1", "micro_recall",
                                     "micro_precision", "micro_f1", "n_gold", "n_pred", "n_unverified",
                                     "n_correct", "n_unparsed"])
    grouped = scores.groupby(keys, as_index=False)
    macro = grouped.agg(n_notes=("note_id", "size"), recall=("recall", "mean"),
                        precision=("precision", "mean"), f1=("f1", "mean"),
                        n_gold=("n_gold", "sum"), n_pred=("n_pred", "sum"), n_unverified=("n_unverified", "sum"),
                        n_correct=("n_correct", "sum"), n_unparsed=("n_unparsed", "sum"))
    micro = _scores(macro["n_gold"], macro["n_pred"], macro["n_correct"], macro["n_unparsed"])
    macro[["micro_recall", "micro_precision", "micro_f1"]] = micro.to_numpy()
    return macro[[*keys, "n_notes", "recall", "precision", "f1", "micro_recall", "micro_precision",
                  "micro_f1", "n_gold", "n_pred", "n_unverified", "n_correct", "n_unparsed"]]


def summarize(scores: pd.DataFrame) -> pd.DataFrame:
    """Mean over notes (the paper's number) plus micro totals, per judge and mode."""
    return _aggregate(scores, list(_KEYS))


def by_note_type(scores: pd.DataFrame) -> pd.DataFrame:
    """The summary per note type (discharge_summary, physician, nursing)."""
    return _aggregate(scores, [*_KEYS, "note_type"])


def by_gold_group(judgements: Sequence[Judgement], gold: Sequence[GoldEntity],
                  by: str = "inconsistency", notes: Sequence[Note] = ()) -> pd.DataFrame:
    """Recall of gold entities per group: ``inconsistency`` type, ``reasoning`` type, ...

    Precision has no meaning for a subset of gold entities (predictions carry no gold
    group), so a gold-side breakdown reports recall = correct / judged gold entities.
    """
    frame = judgement_frame(judgements, gold, notes)
    if by not in frame.columns:
        raise KeyError(f"cannot group judgements by {by!r}")
    cols = [*_KEYS, by, "n_gold", "n_correct", "n_unparsed", "recall"]
    if frame.empty:
        return pd.DataFrame(columns=cols)
    out = (frame.assign(correct=frame["verdict"].eq("correct"), unparsed=frame["verdict"].eq("unparsed"))
           .groupby([*_KEYS, by], as_index=False)
           .agg(n_gold=("entity_id", "size"), n_correct=("correct", "sum"),
                n_unparsed=("unparsed", "sum")))
    judged = out["n_gold"] - out["n_unparsed"]
    out["recall"] = np.where(judged > 0, out["n_correct"] / judged.where(judged > 0, 1), np.nan)
    return out[cols]


def judge_agreement(judgements: Sequence[Judgement], reference: str = "matcher") -> pd.DataFrame:
    """How often each judge agrees with ``reference`` on the same gold entity, per mode.

    The paper validated its LLM judges against people (99.46% harsh, 95.35% lenient
    agreement, Appendix F); this compares any two judges the same way: raw agreement and
    Cohen's kappa over the entities both judged with a readable verdict.
    """
    # deferred: scikit-learn is heavy and only agreement statistics need it
    from sklearn.metrics import cohen_kappa_score

    cols = ["judge", "reference", "mode", "n_entities", "agreement", "kappa", "n_unparsed"]
    ref = {(j.mode, j.note_id, j.entity_id): j.verdict for j in judgements if j.judge == reference}
    rows = []
    others = sorted({(j.judge, j.mode) for j in judgements if j.judge != reference})
    for judge, mode in others:
        pairs = [(ref[(mode, j.note_id, j.entity_id)], j.verdict) for j in judgements
                 if j.judge == judge and j.mode == mode and (mode, j.note_id, j.entity_id) in ref]
        readable = [(a, b) for a, b in pairs if "unparsed" not in (a, b)]
        if readable:
            x, y = zip(*readable)
            agreement = float(np.mean([a == b for a, b in readable]))
            kappa = float(cohen_kappa_score(x, y)) if len(set(x) | set(y)) > 1 else float("nan")
        else:
            agreement = kappa = float("nan")
        rows.append({"judge": judge, "reference": reference, "mode": mode, "n_entities": len(readable),
                     "agreement": agreement, "kappa": kappa, "n_unparsed": len(pairs) - len(readable)})
    return pd.DataFrame(rows, columns=cols)
