"""From feature dicts to a matrix, and from raw scores to observed frequencies.

Shared by both confidence models (:mod:`.model`'s logistic regression and :mod:`.trees`'
gradient-boosted trees): the one-hot + numeric design matrix, the category vocabulary a
training set defines, and the isotonic map fitted on out-of-fold scores (folds of whole
training sets), which turns a model's scores into the frequencies it achieves on sets it
did not see.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ehrlib.pipeline.calibration.features import CATEGORICAL

__all__ = ["MIN_COUNT", "FOLDS", "encode", "vocabulary", "oof_isotonic", "isotonic_map"]

#: a category seen fewer times than this in training is encoded as "other"
MIN_COUNT = 5
#: folds (of whole training sets) for the out-of-fold scores the isotonic map is fitted on
FOLDS = 4


def encode(rows: Sequence[Mapping[str, Any]], categories: Mapping[str, Sequence[str]], numeric: Sequence[str],
           mean: Sequence[float] | None = None, scale: Sequence[float] | None = None) -> np.ndarray:
    """The design matrix: one-hot blocks (unseen values -> "other") then the numbers,
    standardised when ``mean`` and ``scale`` are given.
    """
    cols: list[np.ndarray] = []
    for name, values in categories.items():
        index = {v: i for i, v in enumerate(values)}
        block = np.zeros((len(rows), len(values)))
        for r, row in enumerate(rows):
            v = str(row.get(name, "none"))
            j = index.get(v, index.get("other"))
            if j is not None:
                block[r, j] = 1.0
        cols.append(block)
    if numeric:
        num = np.array([[float(row.get(n, 0.0)) for n in numeric] for row in rows]).reshape(len(rows), len(numeric))
        if mean is not None and scale is not None:
            num = (num - np.asarray(mean)) / np.asarray(scale)
        cols.append(num)
    return np.hstack(cols) if cols else np.zeros((len(rows), 0))


def vocabulary(rows: Sequence[Mapping[str, Any]]) -> dict[str, tuple[str, ...]]:
    """Per categorical feature, the values seen at least :data:`MIN_COUNT` times, then "other"."""
    out: dict[str, tuple[str, ...]] = {}
    for name in CATEGORICAL:
        counts: dict[str, int] = {}
        for row in rows:
            v = str(row.get(name, "none"))
            counts[v] = counts.get(v, 0) + 1
        out[name] = (*sorted(v for v, c in counts.items() if c >= MIN_COUNT), "other")
    return out


def oof_isotonic(score: Callable[[np.ndarray, np.ndarray], np.ndarray], full: np.ndarray, target: np.ndarray,
                 groups: Sequence[str] | None) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """The isotonic map (x, y knots) from scores to frequencies.

    ``score(train_idx, test_idx)`` fits on ``train_idx`` and scores ``test_idx``; ``full``
    is the all-data model's score of every row, kept for a fold that cannot be refitted
    (one outcome only) and for training without groups.
    """
    # deferred: scikit-learn is needed to fit, never to apply a fitted calibrator (JSON)
    from sklearn.isotonic import IsotonicRegression

    oof = np.array(full, dtype=float)
    every = np.arange(len(target))
    names = sorted(set(groups)) if groups is not None else []
    if len(names) >= 2 and groups is not None:
        fold_of = {name: k % FOLDS for k, name in enumerate(names)}   # whole sets per fold
        folds = np.asarray([fold_of[g] for g in groups])
        for k in sorted(set(folds.tolist())):
            train = every[folds != k]
            if len(set(target[train].tolist())) == 2:
                oof[folds == k] = score(train, every[folds == k])
    iso = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(oof, target)
    return tuple(float(v) for v in iso.X_thresholds_), tuple(float(v) for v in iso.y_thresholds_)


#: the most certain a confidence may be: an isotonic bin whose training verdicts were all right
#: (or all wrong) is a finite sample, never a proof, so no verdict is reported as certain
CERTAINTY_CAP = 0.995


def isotonic_map(p: np.ndarray, iso_x: Sequence[float], iso_y: Sequence[float]) -> np.ndarray:
    """A model's raw probabilities through its fitted isotonic map (none fitted: unchanged), kept
    within [1 - CERTAINTY_CAP, CERTAINTY_CAP].
    """
    if iso_x:
        p = np.interp(p, np.asarray(iso_x), np.asarray(iso_y))
    return np.clip(p, 1.0 - CERTAINTY_CAP, CERTAINTY_CAP)
