"""Findings in review order, and the abstention threshold a reviewer can move.

A calibrated run gives each finding a ``confidence`` (probability the verdict is right);
the reviewer reads the most certain contradictions first. A finding whose verdict was
withheld (``abstained_from``) keeps the label it would have had, so moving the threshold
below its confidence brings that verdict back, and moving it above any finding's
confidence shows that finding as "unverified (low confidence)". A finding without a
confidence (an uncalibrated run, or a failure) is never withheld by the threshold.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from ehrlib.corpus.records import Prediction
from ehrlib.pipeline.summary import method_verdict  # one classification for the viewer and the run summary

__all__ = ["INCONSISTENT", "VERDICTS", "calibrated", "initial_threshold", "method_verdict", "rank_key",
           "ranked", "raw_verdict", "verdict_at"]

#: method verdicts, most urgent first (the order of legends, counts and merged highlights)
VERDICTS = ("contradiction", "missing", "unverified", "consistent")
INCONSISTENT = ("contradiction", "missing")
T = TypeVar("T")


def raw_verdict(p: Prediction) -> str:
    """The verdict before abstention: a withheld label counts as what it would have been."""
    if p.abstained_from and p.label == "unverified" and not p.failure:
        return method_verdict(replace(p, label=p.abstained_from))
    return method_verdict(p)


def verdict_at(p: Prediction, threshold: float) -> str:
    """The verdict shown at ``threshold``: ``unverified`` below it, the raw verdict otherwise."""
    if p.confidence is not None and p.confidence < threshold:
        return "unverified"
    return raw_verdict(p)


def rank_key(p: Prediction) -> tuple[bool, bool, float]:
    """Inconsistent findings first, then by confidence (highest first, none last)."""
    return (raw_verdict(p) not in INCONSISTENT, p.confidence is None, -(p.confidence or 0.0))


def ranked(items: Iterable[tuple[T, Prediction]]) -> list[tuple[T, Prediction]]:
    """``(key, prediction)`` pairs in review order; ties keep their given order (stable)."""
    return sorted(items, key=lambda kp: rank_key(kp[1]))


def calibrated(predictions: Iterable[Prediction]) -> bool:
    """Whether any finding carries a confidence (else the run is uncalibrated)."""
    return any(p.confidence is not None for p in predictions)


def initial_threshold(predictions: Sequence[Prediction], params: Mapping[str, Any] | None = None) -> float:
    """The run's own abstention threshold: a number in the run's params when it recorded
    one (a key naming abstention), else the least hundredth above every withheld
    finding's confidence (0 when nothing was withheld).
    """
    for key, value in (params or {}).items():
        if "abstain" in key and isinstance(value, (int, float)) and not isinstance(value, bool) \
                and 0.0 <= value <= 1.0:
            return float(value)
    withheld = [p.confidence for p in predictions if p.abstained_from and p.confidence is not None]
    if not withheld:
        return 0.0
    return min(1.0, math.floor(max(withheld) * 100 + 1e-9) / 100 + 0.01)
