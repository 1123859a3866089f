"""Calibration benchmark: how trustworthy the offline inspector's confidence is on unseen notes.

Leave-one-set-out over the labelled real-patient development sets
(:data:`ehrlib.bench.quality.DEV_SETS`) and the generated training hospital: each set's
predictions get their confidence from a calibrator fitted on the *other* sets only, for
both model kinds side by side (``logistic`` and ``gbm``), and alarms below each threshold
of :data:`BENCH_THRESHOLDS` (plus the one ``choose_threshold`` picks on those held-out
scores, marked ``chosen``) are withheld. ``all`` pools the real-patient sets (the
synthetic training hospital is a row of its own). Writes into ``out_dir``:

- ``bench_calibration.csv``: per model, threshold and set, and pooled (``all``): ECE, Brier,
  AUC of the confidence (all verdicts; alarms only), alarm precision, inconsistent
  recall, alarms raised and per-note lenient F1, before and after abstention;
- ``bench_calibration_reliability.csv/.png``: pooled reliability bins per verdict label;
- ``bench_calibration_coverage.csv/.png``: alarm precision and inconsistent recall against
  the share of alarms kept, per threshold, per set and pooled, per model (the figures
  draw the shipped model's, :data:`SHIPPED`).

Targets of issue 25: alarm precision >= 0.80 with inconsistent recall >= 0.60, ECE <= 0.05,
F1 not lower. The benchmark reports; it does not assert.
"""
from __future__ import annotations

import functools
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ehrlib.bench import BenchSkipped, write_csv
from ehrlib.pipeline.calibration.apply import apply_confidence
from ehrlib.pipeline.calibration.model import DEFAULT_MODEL, MODEL_KINDS, fit_calibrator
from ehrlib.pipeline.calibration.training import (
    THRESHOLDS,
    Counts,
    SetData,
    choose_threshold,
    is_real,
    loso_probabilities,
    pool_parts,
    set_metrics,
    verdict_counts,
    verdict_scores,
)
from ehrlib.viz import savefig
from ehrlib.viz.confidence import plot_reliability, plot_risk_coverage

__all__ = ["run", "HEADER", "evaluate", "reliability_bins", "coverage_curve", "write_outputs", "BENCH_THRESHOLDS",
           "SHIPPED"]

OUT_NAME = "bench_calibration.csv"
#: the abstention thresholds every model is scored at (the chosen one is added)
BENCH_THRESHOLDS: tuple[float, ...] = (0.5, 0.6, 0.7, 0.75, 0.8)
#: the model kind ``ehrlib calibrate`` ships (docs/calibration.md says why)
SHIPPED = DEFAULT_MODEL
HEADER = ("model", "threshold", "chosen", "set", "n_pred", "n_scored", "ece", "brier", "auc", "alarm_auc",
          "alarms_before", "alarms_after",
          "alarm_precision_before", "alarm_precision_after", "inconsistent_recall_before",
          "inconsistent_recall_after", "f1_before", "f1_after")


def reliability_bins(sets: Sequence[SetData], loso: Mapping[str, Sequence[float | None]], bins: int = 10
                     ) -> pd.DataFrame:
    """Pooled (label, bin) -> mean confidence, observed share right, count."""
    recs = [(p.label, prob, s.right[i]) for s in sets for i, (p, prob) in enumerate(zip(s.preds, loso[s.name],
                                                                                         strict=True))
            if prob is not None]
    df = pd.DataFrame(recs, columns=["label", "confidence", "right"])
    df["bin"] = np.minimum((df["confidence"] * bins).astype(int), bins - 1)
    out = df.groupby(["label", "bin"]).agg(mean_confidence=("confidence", "mean"), observed=("right", "mean"),
                                           n=("right", "size")).reset_index()
    return out.round(4)


def coverage_curve(s: SetData, probs: Sequence[float | None], thresholds: Sequence[float] = THRESHOLDS
                   ) -> list[dict[str, Any]]:
    """Alarm precision and inconsistent recall per threshold, with the share of alarms kept."""
    base = sum(1 for p in s.preds if p.label == "inconsistent")
    out = []
    for t in thresholds:
        sc = verdict_scores(s, apply_confidence(s.preds, probs, t), exact=False)
        out.append({"set": s.name, "threshold": t, "coverage": round(sc["alarms"] / base, 4) if base else None,
                    "alarm_precision": sc["alarm_precision"], "inconsistent_recall": sc["inconsistent_recall"],
                    "f1": sc["f1"]})
    return out


def evaluate(sets: Sequence[SetData], kinds: Sequence[str] = MODEL_KINDS,
             thresholds: Sequence[float] = BENCH_THRESHOLDS
             ) -> tuple[list[dict[str, Any]], pd.DataFrame, pd.DataFrame]:
    """LOSO metric rows (per model, threshold, set, then pooled), reliability bins and
    coverage curves per model; the threshold ``choose_threshold`` picks for a model is
    added to ``thresholds`` and its rows say ``chosen``.
    """
    if len(sets) < 2:
        raise BenchSkipped("fewer than two labelled development sets (are the MIMIC demo databases present?)")
    real = [s for s in sets if is_real(s)]   # the pooled row: real-patient notes
    pooled = pool_parts("all", real)
    rows: list[dict[str, Any]] = []
    bins, curves = [], []
    before = {s.name: verdict_counts(s, s.preds) for s in sets}   # the same for every model and threshold
    for kind in kinds:
        loso = loso_probabilities(sets, functools.partial(fit_calibrator, kind=kind))
        chosen = choose_threshold(sets, loso)
        pooled_probs = [p for s in real for p in loso[s.name]]
        for t in sorted({*thresholds, chosen}):
            after = {s.name: verdict_counts(s, apply_confidence(s.preds, loso[s.name], t)) for s in sets}
            for s in sets:
                rows.append({"model": kind, "chosen": int(t == chosen),
                             **set_metrics(s, loso[s.name], t, (before[s.name], after[s.name]))})
            sums = (sum((before[s.name] for s in real), Counts()), sum((after[s.name] for s in real), Counts()))
            rows.append({"model": kind, "chosen": int(t == chosen), **set_metrics(pooled, pooled_probs, t, sums)})
        bins.append(reliability_bins(sets, loso).assign(model=kind))
        curves.append(pd.DataFrame([c for s in sets for c in coverage_curve(s, loso[s.name])]
                                   + coverage_curve(pooled, pooled_probs)).assign(model=kind))
    return rows, pd.concat(bins, ignore_index=True), pd.concat(curves, ignore_index=True)


def run(out_dir: Path, *, work_dir: Path | None = None) -> Path:
    """Run the development sets uncalibrated, evaluate LOSO, write the CSVs and figures."""
    from ehrlib.bench.calibrate import collect_dev_sets  # deferred: it pulls the runner and the quality benchmark

    with tempfile.TemporaryDirectory(prefix="ehrlib-calibration-") as tmp:
        work = Path(work_dir) if work_dir is not None else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        sets = collect_dev_sets(work)
    return write_outputs(out_dir, *evaluate(sets))


def write_outputs(out_dir: Path, rows: Sequence[Mapping[str, Any]], bins: pd.DataFrame, curves: pd.DataFrame
                  ) -> Path:
    """The CSVs of :func:`evaluate` and the figures of the shipped model's bins and curves."""
    out_dir = Path(out_dir)
    path = write_csv(out_dir / OUT_NAME, HEADER, [[r.get(h) if r.get(h) is not None else "" for h in HEADER]
                                                  for r in rows])
    stem = OUT_NAME.removesuffix(".csv")
    bins.to_csv(out_dir / f"{stem}_reliability.csv", index=False)
    curves.to_csv(out_dir / f"{stem}_coverage.csv", index=False)
    shown = SHIPPED if (bins["model"] == SHIPPED).any() else str(bins["model"].iloc[0])
    savefig(plot_reliability(bins[bins["model"] == shown], title=f"Reliability, {shown} (leave-one-set-out)"),
            f"{stem}_reliability", out_dir=out_dir, formats=("png",))
    savefig(plot_risk_coverage(curves[curves["model"] == shown],
                               title=f"Alarms kept by confidence, {shown} (leave-one-set-out)"),
            f"{stem}_coverage", out_dir=out_dir, formats=("png",))
    return path
