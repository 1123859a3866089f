"""The confidence model file: per verdict label a model of P(verdict right), stored as
plain JSON (coefficients, trees and isotonic knots; never pickle), and its checks.

Two kinds of per-label model: a logistic regression over standardised numbers and one-hot
categories (:class:`LabelModel`), and gradient-boosted trees (:class:`~.trees.TreeModel`);
both end in an isotonic map fitted on out-of-fold scores (:mod:`.encoding`). Why one model
per label: the same evidence means opposite things for the two verdicts (a stated number
far from every charted one supports an alarm and undermines "consistent").

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
from ehrlib.pipeline.calibration.encoding import encode, isotonic_map, oof_isotonic, vocabulary
from ehrlib.pipeline.calibration.features import NUMERIC
from ehrlib.pipeline.calibration.kinds import DEFAULT_MODEL, MODEL_KINDS
from ehrlib.pipeline.calibration.trees import TreeModel, fit_tree_model

__all__ = ["CalibratorError", "LabelModel", "Calibrator", "FORMAT", "FORMAT_VERSION", "FEATURE_VERSION", "MODEL_KINDS",
           "DEFAULT_MODEL",
           "fit_label_model", "fit_calibrator", "load_calibrator", "constant_model"]

FORMAT = "ehrlib-confidence-calibrator"
#: 2: a model kind per label ("logistic" or "gbm": exported trees)
FORMAT_VERSION = 2
#: bump when a feature changes meaning (a model fitted on other features is refused)
FEATURE_VERSION = 2
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
        return isotonic_map(self.raw(rows), self.iso_x, self.iso_y)

    def to_json(self) -> dict[str, Any]:
        """The JSON form (plain lists and numbers)."""
        return {"kind": "logistic", "categories": {k: list(v) for k, v in self.categories.items()},
                "numeric": list(self.numeric),
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


def fit_label_model(rows: Sequence[Mapping[str, Any]], y: Sequence[int], groups: Sequence[str] | None = None,
                    *, c: float = 0.3) -> LabelModel:
    """Fit one label's logistic model; the isotonic map is fitted on out-of-fold scores
    (folds by ``groups``, the training sets, when there are at least two) so it corrects the
    regression as it behaves on data it did not see.
    """
    # deferred: scikit-learn is needed to fit, never to apply a fitted calibrator (JSON)
    from sklearn.linear_model import LogisticRegression

    target = np.asarray(y, dtype=int)
    cats = vocabulary(rows)
    num = np.array([[float(r.get(n, 0.0)) for n in NUMERIC] for r in rows])
    mean = tuple(float(x) for x in num.mean(axis=0))
    scale = tuple(float(s) if s > 1e-9 else 1.0 for s in num.std(axis=0))
    x = encode(rows, cats, NUMERIC, mean, scale)

    def regress(idx: np.ndarray) -> LabelModel:
        lr = LogisticRegression(C=c, max_iter=500, solver="newton-cholesky").fit(x[idx], target[idx])
        return LabelModel(cats, NUMERIC, mean, scale, tuple(float(v) for v in lr.coef_[0]), float(lr.intercept_[0]))

    model = regress(np.arange(len(target)))
    iso_x, iso_y = oof_isotonic(lambda train, test: regress(train).raw([rows[i] for i in test]), model.raw(rows),
                                target, groups)
    return LabelModel(cats, NUMERIC, mean, scale, model.coef, model.intercept, iso_x, iso_y)


def constant_model(y: Sequence[int]) -> LabelModel:
    """A model without features at the observed frequency (a label with one outcome only)."""
    p = float(np.mean(y)) if len(y) else 0.5
    return LabelModel({}, (), (), (), (), math.log(max(p, 1e-4) / max(1 - p, 1e-4)))


@dataclass(frozen=True, slots=True)
class Calibrator:
    """One model per verdict label, and where it came from."""

    models: Mapping[str, LabelModel | TreeModel]
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
                "model": self.kind, "format_version": FORMAT_VERSION, "feature_version": FEATURE_VERSION}

    @property
    def kind(self) -> str:
        """The kind of its models ("gbm", "logistic"; "mixed" when they differ)."""
        kinds = {"gbm" if isinstance(m, TreeModel) else "logistic" for m in self.models.values() if _fitted(m)}
        return kinds.pop() if len(kinds) == 1 else ("mixed" if kinds else "constant")


def _fitted(m: LabelModel | TreeModel) -> bool:
    return isinstance(m, TreeModel) or bool(m.coef)


def fit_calibrator(rows: Sequence[Mapping[str, Any]], y: Sequence[int], groups: Sequence[str] | None = None,
                   kind: str = DEFAULT_MODEL) -> Calibrator:
    """Fit the per-label models (``kind``: "gbm" or "logistic") on feature rows, right/wrong
    targets and training-set names.
    """
    if kind not in MODEL_KINDS:
        raise ValueError(f"unknown calibrator model {kind!r} (one of {', '.join(MODEL_KINDS)})")
    fit_one = fit_tree_model if kind == "gbm" else fit_label_model
    models: dict[str, LabelModel | TreeModel] = {}
    for label in CALIBRATED_LABELS:
        idx = [i for i, r in enumerate(rows) if r.get("label") == label]
        ys = [y[i] for i in idx]
        models[label] = fit_one([rows[i] for i in idx], ys, [groups[i] for i in idx] if groups is not None else None
                                ) if len(set(ys)) == 2 else constant_model(ys)
    return Calibrator(models)


def _read_model(d: Mapping[str, Any]) -> LabelModel | TreeModel:
    kind = d.get("kind", "logistic")
    if kind == "gbm":
        return TreeModel.from_json(d)
    if kind == "logistic":
        return LabelModel.from_json(d)
    raise ValueError(f"unknown model kind {kind!r}")


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
        models = {str(k): _read_model(v) for k, v in data["models"].items()}
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise CalibratorError(f"calibrator {p}: malformed model ({exc}); {hint}") from None
    return Calibrator(models, str(p), hashlib.sha256(blob).hexdigest(), str(data.get("fitted", "")))
