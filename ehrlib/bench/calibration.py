"""Calibration benchmark: how trustworthy the offline inspector's confidence is on unseen notes.

Leave-one-set-out over the labelled real-patient development sets
(:data:`ehrlib.bench.quality.DEV_SETS`): each set's predictions get their confidence from a
calibrator fitted on the *other* sets, and alarms below the threshold chosen on those
held-out scores (``choose_threshold``, 0.75 on this release's sets) are withheld; rows at
the default ``abstain_below`` (0.5) come first. ``all`` pools the real-patient sets (the
synthetic training hospital is a row of its own). Writes into ``out_dir``:

- ``bench_calibration.csv``: per set and pooled (``all``): ECE, Brier, alarm precision,
  inconsistent recall, alarms raised and per-note lenient F1, before and after abstention;
- ``bench_calibration_reliability.csv/.png``: pooled reliability bins per verdict label;
- ``bench_calibration_coverage.csv/.png``: alarm precision and inconsistent recall against
  the share of alarms kept, per threshold, per set and pooled.

Targets of issue 25: alarm precision >= 0.80 with inconsistent recall >= 0.60, ECE <= 0.05,
F1 not lower. The benchmark reports; it does not assert.
"""
from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ehrlib.bench import BenchSkipped, write_csv
from ehrlib.pipeline.calibration.apply import apply_confidence
from ehrlib.pipeline.calibration.training import (
    THRESHOLDS,
    SetData,
    choose_threshold,
    loso_probabilities,
    pool_parts,
    set_metrics,
    verdict_scores,
)
from ehrlib.pipeline.params import DEFAULT_ABSTAIN_BELOW
from ehrlib.viz import savefig
from ehrlib.viz.confidence import plot_reliability, plot_risk_coverage

__all__ = ["run", "HEADER", "evaluate", "reliability_bins", "coverage_curve"]

OUT_NAME = "bench_calibration.csv"
HEADER = ("set", "n_pred", "n_scored", "threshold", "ece", "brier", "alarms_before", "alarms_after",
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


def evaluate(sets: Sequence[SetData], threshold: float | None = None
             ) -> tuple[list[dict[str, Any]], pd.DataFrame, pd.DataFrame]:
    """LOSO metric rows (per set, then pooled), reliability bins and coverage curves, at
    ``threshold`` (None: the one ``choose_threshold`` picks on the LOSO scores, as
    ``ehrlib calibrate`` does).
    """
    if len(sets) < 2:
        raise BenchSkipped("fewer than two labelled development sets (are the MIMIC demo databases present?)")
    loso = loso_probabilities(sets)
    threshold = choose_threshold(sets, loso) if threshold is None else threshold
    real = [s for s in sets if not s.name.startswith("synthetic")]   # the pooled row: real-patient notes
    pooled = pool_parts("all", real)
    pooled_probs = [p for s in real for p in loso[s.name]]
    rows = [set_metrics(s, loso[s.name], threshold) for s in sets] + [set_metrics(pooled, pooled_probs, threshold)]
    curves = [c for s in sets for c in coverage_curve(s, loso[s.name])] + coverage_curve(pooled, pooled_probs)
    return rows, reliability_bins(sets, loso), pd.DataFrame(curves)


def run(out_dir: Path, *, work_dir: Path | None = None) -> Path:
    """Run the development sets uncalibrated, evaluate LOSO, write the CSVs and figures."""
    from ehrlib.bench.calibrate import collect_dev_sets  # deferred: it pulls the runner and the quality benchmark

    with tempfile.TemporaryDirectory(prefix="ehrlib-calibration-") as tmp:
        work = Path(work_dir) if work_dir is not None else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        sets = collect_dev_sets(work)
    rows, bins, curves = evaluate(sets)
    # and at the default setting a run uses (withhold what is more likely wrong than right)
    rows = evaluate(sets, DEFAULT_ABSTAIN_BELOW)[0] + rows
    out_dir = Path(out_dir)
    path = write_csv(out_dir / OUT_NAME, HEADER, [[r.get(h) if r.get(h) is not None else "" for h in HEADER]
                                                  for r in rows])
    stem = OUT_NAME.removesuffix(".csv")
    bins.to_csv(out_dir / f"{stem}_reliability.csv", index=False)
    curves.to_csv(out_dir / f"{stem}_coverage.csv", index=False)
    savefig(plot_reliability(bins), f"{stem}_reliability", out_dir=out_dir, formats=("png",))
    savefig(plot_risk_coverage(curves), f"{stem}_coverage", out_dir=out_dir, formats=("png",))
    return path
