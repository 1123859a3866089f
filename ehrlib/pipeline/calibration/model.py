"""The confidence model: per verdict label, a logistic regression over the features followed
by an isotonic map, stored as plain JSON (coefficients and bins; never pickle).

Why one model per label: the same evidence means opposite things for the two verdicts (a
stated number far from every charted one supports an alarm and undermines "consistent"),
which one linear model cannot express. Why isotonic on top: the regression ranks well but
its raw scores drift from observed frequencies on small, unbalanced sets; the isotonic map,
fitted on out-of-fold scores, turns them into frequencies.

The file is checked on load: its format and feature version must match this code's,
otherwise :class:`CalibratorError` names ``ehrlib calibrate``.
"""
from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ehrlib.errors import EhrlibError
from ehrlib.pipeline.calibration.features import CATEGORICAL, NUMERIC

__all__ = ["CalibratorError", "LabelModel", "Calibrator", "FORMAT", "FORMAT_VERSION", "FEATURE_VERSION",
           "fit_label_model", "fit_calibrator", "load_calibrator", "encode"]

FORMAT = "ehrlib-confidence-calibrator"
FORMAT_VERSION = 1
#: bump when a feature changes meaning (a model fitted on other features is refused)
FEATURE_VERSION = 1
#: a category seen fewer times than this in training is encoded as "other"
MIN_COUNT = 5
#: folds (of whole training sets) for the out-of-fold scores the isotonic map is fitted on
FOLDS = 4
CALIBRATED_LABELS = ("consistent", "inconsistent")


class CalibratorError(EhrlibError):
    """The calibrator file is missing, unreadable, or was fitted for other code."""


@dataclass(frozen=True, slots=True)
class LabelModel:
    """Logistic regression (standardised numeric + one-hot categorical) and an isotonic map."""

    categories: Mapping[str, tuple[str, ...]]
    numeric: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    iso_x: tuple[float, ...] = ()
    iso_y: tuple[float, ...] = ()

    def raw(self, rows: Sequence[Mapping[str, Any]]) -> np.ndarray:
        """The regression's probabilities (before the isotonic map)."""
        x = encode(rows, self.categories, self.numeric, self.mean, self.scale)
        z = x @ np.asarray(self.coef) + self.intercept
        return 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))

    def predict(self, rows: Sequence[Mapping[str, Any]]) -> np.ndarray:
        """Calibrated probabilities that each verdict is right."""
        p = self.raw(rows)
        if self.iso_x:
            p = np.interp(p, np.asarray(self.iso_x), np.asarray(self.iso_y))
        return np.clip(p, 0.0, 1.0)

    def to_json(self) -> dict[str, Any]:
        """The JSON form (plain lists and numbers)."""
        return {"categories": {k: list(v) for k, v in self.categories.items()}, "numeric": list(self.numeric),
                "mean": list(self.mean), "scale": list(self.scale), "coef": list(self.coef),
                "intercept": self.intercept, "iso_x": list(self.iso_x), "iso_y": list(self.iso_y)}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> LabelModel:
        """Read the JSON form; ValueError when its sizes do not fit together."""
        cats = {str(k): tuple(str(x) for x in v) for k, v in d["categories"].items()}
        m = cls(cats, tuple(d["numeric"]), tuple(float(x) for x in d["mean"]), tuple(float(x) for x in d["scale"]),
                tuple(float(x) for x in d["coef"]), float(d["intercept"]), tuple(float(x) for x in d["iso_x"]),
                tuple(float(x) for x in d["iso_y"]))
        width = sum(len(v) for v in cats.values()) + len(m.numeric)
        if len(m.coef) != width or len(m.mean) != len(m.numeric) or len(m.scale) != len(m.numeric) \
                or len(m.iso_x) != len(m.iso_y) or not all(map(math.isfinite, (*m.coef, m.intercept))):
            raise ValueError("coefficient sizes do not match the features")
        return m


def encode(rows: Sequence[Mapping[str, Any]], categories: Mapping[str, Sequence[str]], numeric: Sequence[str],
           mean: Sequence[float], scale: Sequence[float]) -> np.ndarray:
    """The design matrix: one-hot blocks (unseen values -> "other") then standardised numbers."""
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
        cols.append((num - np.asarray(mean)) / np.asarray(scale))
    return np.hstack(cols) if cols else np.zeros((len(rows), 0))


def _vocab(rows: Sequence[Mapping[str, Any]]) -> dict[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {}
    for name in CATEGORICAL:
        counts: dict[str, int] = {}
        for row in rows:
            v = str(row.get(name, "none"))
            counts[v] = counts.get(v, 0) + 1
        out[name] = (*sorted(v for v, c in counts.items() if c >= MIN_COUNT), "other")
    return out


def fit_label_model(rows: Sequence[Mapping[str, Any]], y: Sequence[int], groups: Sequence[str] | None = None,
                    *, c: float = 0.3) -> LabelModel:
    """Fit one label's model; the isotonic map is fitted on out-of-fold scores (folds by
    ``groups``, the training sets, when there are at least two) so it corrects the
    regression as it behaves on data it did not see.
    """
    # deferred: scikit-learn is needed to fit, never to apply a fitted calibrator (JSON)
    from sklearn.isotonic import IsotonicRegression
    from sklearn.linear_model import LogisticRegression

    target = np.asarray(y, dtype=int)
    if len(set(target.tolist())) < 2:   # one outcome only: a constant model at its frequency
        p = float(target.mean()) if len(target) else 0.5
        z = math.log(max(p, 1e-4) / max(1 - p, 1e-4))
        return LabelModel({}, (), (), (), (), z)
    cats = _vocab(rows)
    num = np.array([[float(r.get(n, 0.0)) for n in NUMERIC] for r in rows])
    mean = tuple(float(x) for x in num.mean(axis=0))
    scale = tuple(float(s) if s > 1e-9 else 1.0 for s in num.std(axis=0))

    def regress(idx: np.ndarray) -> LabelModel:
        x = encode([rows[i] for i in idx], cats, NUMERIC, mean, scale)
        lr = LogisticRegression(C=c, max_iter=500, solver="newton-cholesky").fit(x, target[idx])
        return LabelModel(cats, NUMERIC, mean, scale, tuple(float(v) for v in lr.coef_[0]), float(lr.intercept_[0]))

    every = np.arange(len(rows))
    model = regress(every)
    oof = model.raw(rows)
    names = sorted(set(groups)) if groups is not None else []
    if len(names) >= 2 and groups is not None:
        fold_of = {name: k % FOLDS for k, name in enumerate(names)}   # whole sets per fold
        folds = np.asarray([fold_of[g] for g in groups])
        for k in sorted(set(folds.tolist())):
            train = every[folds != k]
            if len(set(target[train].tolist())) == 2:
                oof[folds == k] = regress(train).raw([rows[i] for i in every[folds == k]])
    iso = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(oof, target)
    xs, ys = np.asarray(iso.X_thresholds_), np.asarray(iso.y_thresholds_)
    return LabelModel(cats, NUMERIC, mean, scale, model.coef, model.intercept,
                      tuple(float(v) for v in xs), tuple(float(v) for v in ys))


@dataclass(frozen=True, slots=True)
class Calibrator:
    """One :class:`LabelModel` per verdict label, and where it came from."""

    models: Mapping[str, LabelModel]
    path: str = ""
    sha256: str = ""
    fitted: str = ""

    def predict(self, rows: Sequence[Mapping[str, Any]]) -> list[float | None]:
        """P(verdict right) for each feature row; None for a label without a model (unverified)."""
        out: list[float | None] = [None] * len(rows)
        for label, model in self.models.items():
            idx = [i for i, r in enumerate(rows) if r.get("label") == label]
            if idx:
                for i, p in zip(idx, model.predict([rows[i] for i in idx]), strict=True):
                    out[i] = round(float(p), 4)
        return out

    def to_json(self, fitted: str) -> dict[str, Any]:
        """The calibrator file's content."""
        return {"format": FORMAT, "format_version": FORMAT_VERSION, "feature_version": FEATURE_VERSION,
                "fitted": fitted, "models": {k: m.to_json() for k, m in sorted(self.models.items())}}

    def describe(self) -> dict[str, Any]:
        """What the run manifest records about this calibrator."""
        return {"status": "calibrated", "path": self.path, "sha256": self.sha256, "fitted": self.fitted,
                "format_version": FORMAT_VERSION, "feature_version": FEATURE_VERSION}


def fit_calibrator(rows: Sequence[Mapping[str, Any]], y: Sequence[int], groups: Sequence[str] | None = None
                   ) -> Calibrator:
    """Fit the per-label models on feature rows, right/wrong targets and training-set names."""
    models = {}
    for label in CALIBRATED_LABELS:
        idx = [i for i, r in enumerate(rows) if r.get("label") == label]
        models[label] = fit_label_model([rows[i] for i in idx], [y[i] for i in idx],
                                        [groups[i] for i in idx] if groups is not None else None)
    return Calibrator(models)


def load_calibrator(path: str | Path) -> Calibrator:
    """Read and check a calibrator file; :class:`CalibratorError` (one line) when it cannot be used."""
    p = Path(path)
    hint = "refit it with `ehrlib calibrate`"
    try:
        blob = p.read_bytes()
    except OSError as exc:
        raise CalibratorError(f"calibrator {p}: cannot be read ({exc.strerror or exc}); {hint}") from None
    try:
        data = json.loads(blob.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise CalibratorError(f"calibrator {p}: not valid JSON (corrupt file); {hint}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise CalibratorError(f"calibrator {p}: not an ehrlib calibrator file; {hint}")
    if data.get("format_version") != FORMAT_VERSION or data.get("feature_version") != FEATURE_VERSION:
        raise CalibratorError(f"calibrator {p}: fitted for format {data.get('format_version')}/features "
                              f"{data.get('feature_version')}, this ehrlib reads {FORMAT_VERSION}/{FEATURE_VERSION}; "
                              f"{hint}")
    try:
        models = {str(k): LabelModel.from_json(v) for k, v in data["models"].items()}
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise CalibratorError(f"calibrator {p}: malformed model ({exc}); {hint}") from None
    return Calibrator(models, str(p), hashlib.sha256(blob).hexdigest(), str(data.get("fitted", "")))
