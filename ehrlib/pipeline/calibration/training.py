"""Training data for the calibrator, leave-one-set-out evaluation, and the threshold choice.

Target: a verdict is *right* when the deterministic matcher (lenient mode, as the headline
scores) pairs its prediction with a gold entity and credits it. A prediction the matcher
pairs with no gold entity counts as *not right*: the metrics charge it to precision the
same way (an alarm nobody annotated is an alarm a reviewer cannot confirm), so the
calibrator learns exactly what the scores reward.

Leave-one-set-out (LOSO): every development set is scored by a model fitted on the other
sets only, so each number is a number on notes the model never saw.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ehrlib.corpus.records import GoldEntity, Judgement, Prediction
from ehrlib.judge.matcher import judge_with_matcher
from ehrlib.pipeline.calibration.apply import apply_confidence, note_feature_rows
from ehrlib.pipeline.calibration.model import Calibrator, fit_calibrator

__all__ = ["SetData", "targets", "collect_run", "loso_probabilities", "set_metrics", "choose_threshold",
           "ece", "THRESHOLDS", "pool_parts", "verdict_scores", "pooled_sweep", "auc", "Counts",
           "verdict_counts", "is_real", "TARGET_PRECISION",
           "MIN_RECALL"]

#: thresholds tried when choosing the default (and drawn in the risk-coverage curves)
THRESHOLDS: tuple[float, ...] = tuple(round(x, 2) for x in np.arange(0.0, 0.96, 0.05))


@dataclass(frozen=True, slots=True)
class SetData:
    """One development set's uncalibrated predictions, gold, features and targets."""

    name: str
    gold: tuple[GoldEntity, ...]
    preds: tuple[Prediction, ...]
    features: tuple[Mapping[str, Any], ...]
    right: tuple[int, ...]
    segments: Mapping[str, tuple[tuple[int, int], ...]] = dataclasses.field(default_factory=dict)
    #: the lenient matcher's judgements of ``preds`` (empty: judged when needed)
    judgements: tuple[Judgement, ...] = ()


def targets(gold: Sequence[GoldEntity], preds: Sequence[Prediction],
            segments: Mapping[str, Sequence[tuple[int, int]]] | None = None,
            judgements: Sequence[Judgement] | None = None) -> list[int]:
    """1 for each prediction the lenient matcher credits to a gold entity, else 0."""
    right = [0] * len(preds)
    js = judge_with_matcher(gold, preds, ("lenient",), segments=segments) if judgements is None else judgements
    for j in js:
        if j.verdict == "correct" and j.matched_prediction is not None:
            right[j.matched_prediction] = 1
    return right


def collect_run(name: str, run_dir: Path, corpus_dir: Path, db: Path) -> SetData:
    """Features and targets of one finished, uncalibrated run (its database read again)."""
    # deferred: reading a run back pulls the judge and the database layer, only for a refit
    from ehrlib.db.connect import connect
    from ehrlib.judge.evaluate import load_run
    from ehrlib.pipeline.context import note_context
    from ehrlib.schema import detect_flavor

    run = load_run(run_dir, corpus_dir)
    # notes finish in any order on a thread pool; in corpus order the fit (whose boosting
    # subsamples rows) is the same for the same verdicts
    order = {n.note_id: k for k, n in enumerate(run.notes)}
    preds = tuple(sorted(run.predictions, key=lambda p: order.get(p.note_id, len(order))))
    by_note: dict[str, list[int]] = {}
    for i, p in enumerate(preds):
        by_note.setdefault(p.note_id, []).append(i)
    feats: list[Mapping[str, Any]] = [{}] * len(preds)
    con = connect(str(db))
    try:
        flavor = detect_flavor(con)
        for note in run.notes:
            idx = by_note.get(note.note_id, [])
            if not idx:
                continue
            cur = con.cursor()
            try:
                ctx = note_context(cur, note, flavor=flavor, db_path=str(db), with_items=False)
                rows = note_feature_rows([preds[i] for i in idx], con=cur, ctx=ctx)
            finally:
                cur.close()
            for i, row in zip(idx, rows, strict=True):
                feats[i] = row
    finally:
        con.close()
    js = tuple(judge_with_matcher(run.gold, preds, ("lenient",), segments=run.segments))
    return SetData(name, run.gold, preds, tuple(feats), tuple(targets(run.gold, preds,
                                                                               judgements=js)), run.segments, js)


def _calibrated(s: SetData) -> list[int]:
    return [i for i, p in enumerate(s.preds) if p.label in ("consistent", "inconsistent")]


def loso_probabilities(sets: Sequence[SetData], fit: Any = fit_calibrator) -> dict[str, list[float | None]]:
    """Per set, the probabilities of a model fitted on every *other* set."""
    out: dict[str, list[float | None]] = {}
    for held in sets:
        rows: list[Mapping[str, Any]] = []
        y: list[int] = []
        groups: list[str] = []
        for s in sets:
            if s.name == held.name:
                continue
            idx = _calibrated(s)
            rows += [s.features[i] for i in idx]
            y += [s.right[i] for i in idx]
            groups += [s.name] * len(idx)
        model: Calibrator = fit(rows, y, groups)
        out[held.name] = model.predict(list(held.features))
    return out


def ece(probs: Sequence[float], y: Sequence[int], bins: int = 10) -> float:
    """Expected calibration error: the bin-size-weighted |mean p - observed rate| over equal-width bins."""
    p = np.asarray(probs, dtype=float)
    t = np.asarray(y, dtype=float)
    if not len(p):
        return float("nan")
    which = np.minimum((p * bins).astype(int), bins - 1)
    return float(sum(abs(p[which == b].mean() - t[which == b].mean()) * (which == b).sum()
                     for b in range(bins) if (which == b).any()) / len(p))


def auc(probs: Sequence[float], y: Sequence[int]) -> float | None:
    """The area under the ROC curve of ``probs`` for ``y`` (the chance a right verdict is
    ranked above a wrong one, ties half); None with one outcome only.
    """
    p, t = np.asarray(probs, dtype=float), np.asarray(y, dtype=int)
    n_pos, n_neg = int(t.sum()), int(len(t) - t.sum())
    if not n_pos or not n_neg:
        return None
    order = np.argsort(p, kind="mergesort")
    ranks = np.empty(len(p))
    ranks[order] = np.arange(1, len(p) + 1)
    for v in np.unique(p):   # ties share their mean rank
        tie = p == v
        ranks[tie] = ranks[tie].mean()
    return float((ranks[t == 1].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def _note_f1s(gold: Sequence[GoldEntity], preds: Sequence[Prediction], judgements: Sequence[Judgement]
              ) -> list[float]:
    """The per-note F1s (lenient), as the quality benchmark computes them."""
    notes = sorted({g.note_id for g in gold} | {p.note_id for p in preds})
    correct: dict[str, int] = {}
    for j in judgements:
        if j.verdict == "correct":
            correct[j.note_id] = correct.get(j.note_id, 0) + 1
    n_gold: dict[str, int] = {}
    n_pred: dict[str, int] = {}
    for g in gold:
        n_gold[g.note_id] = n_gold.get(g.note_id, 0) + 1
    for p in preds:
        n_pred[p.note_id] = n_pred.get(p.note_id, 0) + 1
    scores = []
    for nid in notes:
        c, ng, npred = correct.get(nid, 0), n_gold.get(nid, 0), n_pred.get(nid, 0)
        r, pr = (c / ng if ng else 0.0), (c / npred if npred else 0.0)
        scores.append(2 * r * pr / (r + pr) if r + pr else 0.0)
    return scores


@dataclass(frozen=True, slots=True)
class Counts:
    """What the verdict metrics are ratios of; counts of disjoint sets add up to the pooled ones."""

    credited_alarms: int = 0
    alarms: int = 0
    found: int = 0
    gold_inconsistent: int = 0
    f1_sum: float = 0.0
    notes: int = 0

    def __add__(self, o: Counts) -> Counts:
        return Counts(*(a + b for a, b in zip(dataclasses.astuple(self), dataclasses.astuple(o), strict=True)))

    def scores(self) -> dict[str, Any]:
        """Alarm precision, inconsistent recall, alarms raised and per-note mean F1."""
        return {"alarm_precision": _ratio(self.credited_alarms, self.alarms),
                "inconsistent_recall": _ratio(self.found, self.gold_inconsistent), "alarms": self.alarms,
                "f1": round(self.f1_sum / self.notes, 4) if self.notes else 0.0}


def _alarm_counts(gold: Sequence[GoldEntity], preds: Sequence[Prediction], judgements: Sequence[Judgement]
                  ) -> tuple[int, int, int, int]:
    """(credited alarms, alarms raised, gold inconsistent statements credited, all of them)."""
    credited = {j.matched_prediction for j in judgements if j.verdict == "correct"}
    alarms = [i for i, p in enumerate(preds) if p.label == "inconsistent"]
    bad = {(g.note_id, g.entity_id) for g in gold if g.label == "inconsistent"}
    found = sum(1 for j in judgements if (j.note_id, j.entity_id) in bad and j.verdict == "correct")
    return sum(1 for i in alarms if i in credited), len(alarms), found, len(bad)


def _ratio(a: int, b: int) -> float | None:
    return round(a / b, 4) if b else None


def _withdrawn(s: SetData, preds: Sequence[Prediction]) -> list[Judgement]:
    """The set's judgements with the credit of every prediction whose label changed taken
    back: the matcher's pairing does not depend on labels, so this equals judging again up
    to a rare second cache-skipped prediction that could have stepped in (the sweeps use it;
    the reported metrics judge again).
    """
    base = s.judgements or tuple(judge_with_matcher(s.gold, s.preds, ("lenient",), segments=s.segments))
    return [dataclasses.replace(j, verdict="incorrect")
            if j.verdict == "correct" and j.matched_prediction is not None
            and preds[j.matched_prediction].label != s.preds[j.matched_prediction].label else j for j in base]


def verdict_counts(s: SetData, preds: Sequence[Prediction], *, exact: bool = True) -> Counts:
    """The :class:`Counts` of ``preds`` (the set's predictions, maybe with alarms withheld),
    judged again by the lenient matcher (``exact=False``: the set's judgements with withheld
    credit taken back, fast).
    """
    js = judge_with_matcher(s.gold, preds, ("lenient",), segments=s.segments) if exact else _withdrawn(s, preds)
    f1s = _note_f1s(s.gold, preds, js)
    return Counts(*_alarm_counts(s.gold, preds, js), float(sum(f1s)), len(f1s))


def verdict_scores(s: SetData, preds: Sequence[Prediction], *, exact: bool = True) -> dict[str, Any]:
    """Alarm precision, inconsistent recall, alarms raised and per-note F1 of ``preds``
    (see :func:`verdict_counts`).
    """
    return verdict_counts(s, preds, exact=exact).scores()


def set_metrics(s: SetData, probs: Sequence[float | None], threshold: float,
                counts: tuple[Counts, Counts] | None = None) -> dict[str, Any]:
    """ECE, Brier, AUC, alarm precision, inconsistent recall and F1 before and after
    abstention (``counts``: the before/after counts when already known, e.g. the sums of a
    pooled set's parts).
    """
    idx = [i for i, p in enumerate(probs) if p is not None]
    p = np.asarray([probs[i] for i in idx], dtype=float)
    y = np.asarray([s.right[i] for i in idx], dtype=float)
    out: dict[str, Any] = {"set": s.name, "n_pred": len(s.preds), "n_scored": len(idx),
                           "ece": round(ece(p.tolist(), y.tolist()), 4) if len(p) else None,
                           "brier": round(float(np.mean((p - y) ** 2)), 4) if len(p) else None,
                           "threshold": threshold}
    alarm = np.asarray([s.preds[i].label == "inconsistent" for i in idx], dtype=bool)
    for key, sel in (("auc", np.ones(len(idx), dtype=bool)), ("alarm_auc", alarm)):
        a = auc(p[sel].tolist(), y[sel].astype(int).tolist()) if sel.any() else None
        out[key] = round(a, 4) if a is not None else None
    before, after = counts or (verdict_counts(s, s.preds), verdict_counts(s, apply_confidence(s.preds, probs,
                                                                                                threshold)))
    for tag, c in (("before", before), ("after", after)):
        out.update({f"{k}_{tag}": v for k, v in c.scores().items()})
    return out


def is_real(s: SetData) -> bool:
    """A real-patient set (the generated training hospital is not one)."""
    return not s.name.startswith("synthetic")


def pooled_sweep(sets: Sequence[SetData], loso: Mapping[str, Sequence[float | None]],
                 thresholds: Sequence[float] = THRESHOLDS) -> list[tuple[float, float | None, float | None]]:
    """(threshold, pooled alarm precision, pooled inconsistent recall) over the real-patient
    sets, each scored by its held-out probabilities.
    """
    out = []
    for t in thresholds:
        tp = alarms = found = n_bad = 0
        for s in sets:
            if not is_real(s):
                continue
            after = apply_confidence(s.preds, loso[s.name], t)
            counts = _alarm_counts(s.gold, after, _withdrawn(s, after))
            tp, alarms, found, n_bad = tp + counts[0], alarms + counts[1], found + counts[2], n_bad + counts[3]
        out.append((t, tp / alarms if alarms else None, found / n_bad if n_bad else None))
    return out


#: the targets of the threshold rule (issue 25's: alarm precision with inconsistent recall kept)
TARGET_PRECISION = 0.80
MIN_RECALL = 0.60


def choose_threshold(sets: Sequence[SetData], loso: Mapping[str, Sequence[float | None]], *,
                     min_precision: float = TARGET_PRECISION, min_recall: float = MIN_RECALL,
                     thresholds: Sequence[float] = THRESHOLDS) -> float:
    """The lowest threshold whose pooled held-out alarm precision reaches ``min_precision``
    while pooled inconsistent recall stays at or above ``min_recall`` (the least withheld
    that meets the target); when none does, the one with the best precision that keeps the
    recall; 0.0 (no abstention) when none keeps it.
    """
    sweep = [(t, p, r) for t, p, r in pooled_sweep(sets, loso, thresholds)
             if p is not None and r is not None and r >= min_recall]
    meeting = [t for t, p, _ in sweep if p >= min_precision]
    if meeting:
        return min(meeting)
    best, best_prec = 0.0, -1.0
    for t, prec, _ in sweep:
        if prec > best_prec + 1e-9:
            best, best_prec = t, prec
    return best


def pool_parts(name: str, parts: Sequence[SetData]) -> SetData:
    """One set from the runs of its parts (a set whose notes sit on two databases)."""
    preds: list[Prediction] = []
    judgements: list[Judgement] = []
    for s in parts:   # matched_prediction indexes the pooled list
        judgements += [dataclasses.replace(j, matched_prediction=j.matched_prediction + len(preds))
                       if j.matched_prediction is not None else j for j in s.judgements]
        preds += s.preds
    return SetData(name, tuple(g for s in parts for g in s.gold), tuple(preds),
                   tuple(f for s in parts for f in s.features), tuple(r for s in parts for r in s.right),
                   {k: v for s in parts for k, v in s.segments.items()},
                   tuple(judgements) if all(s.judgements for s in parts) else ())
