"""The gradient-boosted confidence model, stored as plain JSON and applied with numpy.

Why trees: whether an alarm is right depends on combinations a linear model cannot
express (a large deviation means a real contradiction for a lab value read at an explicit
time, and a window slip when an agreeing row sits an hour outside the window). Small
trees (depth <= 3, <= 100 of them) fitted by scikit-learn's ``GradientBoostingClassifier``
at ``ehrlib calibrate`` time capture that; each tree is exported as its node arrays
(split feature, threshold, children, leaf value) and summed here exactly as scikit-learn
does: the features are compared as float32 (scikit-learn's tree dtype) against float64
thresholds, leaf values are scaled by the learning rate and added to the prior log-odds.
An isotonic map fitted on out-of-fold scores then turns the sum into a frequency. Nothing
on the run path imports scikit-learn.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ehrlib.pipeline.calibration.encoding import encode, isotonic_map, oof_isotonic, vocabulary
from ehrlib.pipeline.calibration.features import NUMERIC

__all__ = ["Tree", "TreeModel", "fit_tree_model", "GBM_PARAMS", "export_gbm"]

#: the boosting settings (fixed, not tuned per refit; docs/calibration.md)
GBM_PARAMS: Mapping[str, Any] = {"n_estimators": 100, "max_depth": 3, "learning_rate": 0.05, "subsample": 0.8,
                                 "min_samples_leaf": 20, "random_state": 0}


@dataclass(frozen=True, slots=True)
class Tree:
    """One regression tree as node arrays (a leaf has ``left == -1``; its ``value`` counts)."""

    feature: tuple[int, ...]
    threshold: tuple[float, ...]
    left: tuple[int, ...]
    right: tuple[int, ...]
    value: tuple[float, ...]

    def leaf_values(self, x32: np.ndarray) -> np.ndarray:
        """The value of the leaf each row of ``x32`` (float32 features) falls in."""
        feature, threshold = np.asarray(self.feature), np.asarray(self.threshold)
        left, right = np.asarray(self.left), np.asarray(self.right)
        node = np.zeros(len(x32), dtype=int)
        rows = np.arange(len(x32))
        for _ in range(len(self.feature)):   # at most one step per node; stops at the leaves
            inner = left[node] >= 0
            if not inner.any():
                break
            f = np.where(inner, feature[node], 0)
            go_left = x32[rows, f].astype(np.float64) <= threshold[node]
            node = np.where(inner, np.where(go_left, left[node], right[node]), node)
        return np.asarray(self.value)[node]

    def check(self, width: int) -> None:
        """ValueError when the arrays do not form a tree over ``width`` features."""
        n = len(self.feature)
        if not n or any(len(a) != n for a in (self.threshold, self.left, self.right, self.value)):
            raise ValueError("tree arrays of different lengths")
        for i in range(n):
            if self.left[i] >= 0 and not (i < self.left[i] < n and i < self.right[i] < n
                                          and 0 <= self.feature[i] < width):
                raise ValueError(f"tree node {i} points outside the tree or the features")
        if not all(map(math.isfinite, (*self.threshold, *self.value))):
            raise ValueError("tree with a non-finite number")


@dataclass(frozen=True, slots=True)
class TreeModel:
    """Gradient-boosted trees over one-hot categories and raw numbers, then an isotonic map."""

    categories: Mapping[str, tuple[str, ...]]
    numeric: tuple[str, ...]
    init: float
    learning_rate: float
    trees: tuple[Tree, ...]
    iso_x: tuple[float, ...] = ()
    iso_y: tuple[float, ...] = ()

    def decision(self, x: np.ndarray) -> np.ndarray:
        """The boosted log-odds of an encoded matrix (scikit-learn's ``decision_function``)."""
        x32 = np.asarray(x, dtype=np.float32)
        z = np.full(len(x32), self.init, dtype=np.float64)
        for tree in self.trees:
            z += self.learning_rate * tree.leaf_values(x32)
        return z

    def raw(self, rows: Sequence[Mapping[str, Any]]) -> np.ndarray:
        """The boosted probabilities (before the isotonic map)."""
        z = self.decision(encode(rows, self.categories, self.numeric))
        return 1.0 / (1.0 + np.exp(-z))

    def predict(self, rows: Sequence[Mapping[str, Any]]) -> np.ndarray:
        """Calibrated probabilities that each verdict is right."""
        return isotonic_map(self.raw(rows), self.iso_x, self.iso_y)

    def to_json(self) -> dict[str, Any]:
        """The JSON form (plain lists and numbers)."""
        return {"kind": "gbm", "categories": {k: list(v) for k, v in self.categories.items()},
                "numeric": list(self.numeric), "init": self.init, "learning_rate": self.learning_rate,
                "trees": [{"feature": list(t.feature), "threshold": list(t.threshold), "left": list(t.left),
                           "right": list(t.right), "value": list(t.value)} for t in self.trees],
                "iso_x": list(self.iso_x), "iso_y": list(self.iso_y)}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> TreeModel:
        """Read the JSON form; ValueError when its parts do not fit together."""
        cats = {str(k): tuple(str(x) for x in v) for k, v in d["categories"].items()}
        trees = tuple(Tree(tuple(int(x) for x in t["feature"]), tuple(float(x) for x in t["threshold"]),
                           tuple(int(x) for x in t["left"]), tuple(int(x) for x in t["right"]),
                           tuple(float(x) for x in t["value"])) for t in d["trees"])
        m = cls(cats, tuple(str(x) for x in d["numeric"]), float(d["init"]), float(d["learning_rate"]), trees,
                tuple(float(x) for x in d["iso_x"]), tuple(float(x) for x in d["iso_y"]))
        width = sum(len(v) for v in cats.values()) + len(m.numeric)
        for t in trees:
            t.check(width)
        if len(m.iso_x) != len(m.iso_y) or not all(map(math.isfinite, (m.init, m.learning_rate))):
            raise ValueError("isotonic knots or boosting constants do not fit together")
        return m


def export_gbm(gbm: Any, x: np.ndarray, categories: Mapping[str, tuple[str, ...]], numeric: tuple[str, ...]
               ) -> TreeModel:
    """A fitted binary ``GradientBoostingClassifier`` as a :class:`TreeModel` (no isotonic
    map yet); ``x`` is (part of) its training matrix, used to read off the prior log-odds.
    """
    trees = []
    for est in gbm.estimators_[:, 0]:
        t = est.tree_
        trees.append(Tree(tuple(int(v) for v in t.feature), tuple(float(v) for v in t.threshold),
                          tuple(int(v) for v in t.children_left), tuple(int(v) for v in t.children_right),
                          tuple(float(v) for v in t.value[:, 0, 0])))
    lr = float(gbm.learning_rate)
    model = TreeModel(categories, numeric, 0.0, lr, tuple(trees))
    # the prior's log-odds: what the decision function adds beyond the trees (scikit-learn
    # keeps it inside its `init_` estimator)
    init = float(gbm.decision_function(x[:1])[0] - model.decision(x[:1])[0])
    return TreeModel(categories, numeric, init, lr, tuple(trees))


def fit_tree_model(rows: Sequence[Mapping[str, Any]], y: Sequence[int], groups: Sequence[str] | None = None
                   ) -> TreeModel:
    """Fit one label's boosted trees (:data:`GBM_PARAMS`) and its isotonic map on
    out-of-fold scores (folds of whole training sets, as for the logistic model).
    """
    # deferred: scikit-learn is needed to fit, never to apply a fitted calibrator (JSON)
    from sklearn.ensemble import GradientBoostingClassifier

    target = np.asarray(y, dtype=int)
    cats = vocabulary(rows)
    x = encode(rows, cats, NUMERIC)

    def boost(idx: np.ndarray) -> TreeModel:
        gbm = GradientBoostingClassifier(**GBM_PARAMS).fit(x[idx].astype(np.float32), target[idx])
        return export_gbm(gbm, x[idx], cats, NUMERIC)

    model = boost(np.arange(len(target)))

    def score(train: np.ndarray, test: np.ndarray) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-boost(train).decision(x[test])))

    iso_x, iso_y = oof_isotonic(score, 1.0 / (1.0 + np.exp(-model.decision(x))), target, groups)
    return TreeModel(cats, NUMERIC, model.init, model.learning_rate, model.trees, iso_x, iso_y)
