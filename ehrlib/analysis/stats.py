"""Uncertainty for note-level metrics: bootstrap over notes, paired comparisons, run spread.

The benchmark has few notes (83 test, 22 validation) and the reported score is a mean
over notes, so the right resampling unit is the note: entities within a note are not
independent (one long discharge summary can hold 150 of them). Percentile intervals
are used; with 20-odd notes they are rough, which is exactly what a reader should see.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["bootstrap_ci", "paired_bootstrap", "run_spread"]


def _boot_means(values: np.ndarray, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    idx = rng.integers(0, len(values), size=(n_boot, len(values)))
    return values[idx].mean(axis=1)


def bootstrap_ci(scores: pd.DataFrame, metric: str = "f1", *, by: Sequence[str] = ("judge", "mode"),
                 n_boot: int = 2000, level: float = 0.95, seed: int = 0) -> pd.DataFrame:
    """Mean of ``metric`` over notes with a percentile bootstrap interval, per group.

    ``scores`` is ``ehrlib.judge.note_scores`` output (one row per note). Notes with an
    undefined metric (no gold entities) are dropped first.
    """
    if not 0 < level < 1:
        raise ValueError("level must be in (0, 1)")
    keys = [k for k in by if k in scores.columns]
    rng = np.random.default_rng(seed)
    rows = []
    groups = scores.groupby(keys, sort=True) if keys else [((), scores)]
    for key, grp in groups:
        values = grp[metric].dropna().to_numpy(dtype=float)
        key = key if isinstance(key, tuple) else (key,)
        if len(values) == 0:
            low = high = mean = np.nan
        else:
            mean = values.mean()
            boots = _boot_means(values, n_boot, rng)
            low, high = np.quantile(boots, [(1 - level) / 2, (1 + level) / 2])
        rows.append({**dict(zip(keys, key, strict=False)), "metric": metric, "n_notes": len(values), "mean": mean,
                     f"{metric}_low": low, f"{metric}_high": high, "level": level})
    return pd.DataFrame(rows)


def paired_bootstrap(a: pd.DataFrame, b: pd.DataFrame, metric: str = "f1", *, n_boot: int = 2000,
                     seed: int = 0) -> dict[str, float]:
    """Mean difference a − b over the notes both runs scored, its 95% interval, and
    the share of resamples where the difference is not positive (a one-sided p-value).

    Pass one judge and mode per frame (e.g. two ablations judged the same way).
    """
    joined = (a.set_index("note_id")[metric].rename("a").to_frame()
              .join(b.set_index("note_id")[metric].rename("b"), how="inner").dropna())
    if joined.empty:
        raise ValueError("the two score tables share no scored note")
    diff = (joined["a"] - joined["b"]).to_numpy(dtype=float)
    boots = _boot_means(diff, n_boot, np.random.default_rng(seed))
    low, high = np.quantile(boots, [0.025, 0.975])
    return {"n_notes": float(len(diff)), "diff": float(diff.mean()), "low": float(low), "high": float(high),
            "p_not_better": float((boots <= 0).mean())}


def run_spread(summaries: pd.DataFrame, *, by: Sequence[str] = ("method", "judge", "mode"),
               metrics: Sequence[str] = ("recall", "precision", "f1")) -> pd.DataFrame:
    """Mean and standard deviation across repeated runs (Appendix G), per group."""
    keys = [k for k in by if k in summaries.columns]
    agg = summaries.groupby(keys)[list(metrics)].agg(["mean", "std", "count"])
    agg.columns = [f"{m}_{s}" for m, s in agg.columns]
    return agg.reset_index()
