"""What a finished run found, in the words a reviewer counts: contradictions and missing
records first, then what could not be verified (and how much of that was withheld for low
confidence), then what agreed. The prediction total alone says nothing about the alarms.
"""
from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ehrlib.corpus.io import read_predictions
from ehrlib.corpus.records import Prediction
from ehrlib.pipeline.attempts import current_lines

__all__ = ["FindingCounts", "count_findings", "method_verdict", "run_findings"]


@dataclass(frozen=True, slots=True)
class FindingCounts:
    """Findings of a run by verdict; ``withheld`` is the part of ``unverified`` with ``abstained_from`` set."""
    contradictions: int = 0
    missing: int = 0
    unverified: int = 0
    withheld: int = 0
    consistent: int = 0

    @property
    def total(self) -> int:
        """Every finding once (``withheld`` is inside ``unverified``)."""
        return self.contradictions + self.missing + self.unverified + self.consistent

    def describe(self) -> str:
        """``12 findings: 2 contradictions, 1 missing, 3 unverified (1 withheld for low confidence), 6 consistent``."""
        return (f"{self.total} findings: {self.contradictions} contradictions, {self.missing} missing, "
                f"{self.unverified} unverified ({self.withheld} withheld for low confidence), "
                f"{self.consistent} consistent")


def method_verdict(p: Prediction) -> str:
    """Consistent | contradiction | missing | unverified, from the prediction's own fields.

    ``unverified`` is a label of its own where the pipeline emits one; a prediction that
    failed (``failure`` set) or carries an unknown label counts as unverified too, so it
    is never shown or counted as a confirmed value (the viewer and the run summary agree).
    """
    if p.failure or p.label == "unverified":
        return "unverified"
    if p.label == "consistent":
        return "consistent"
    if p.label == "inconsistent":
        return "missing" if p.inconsistency_type == "missing" else "contradiction"
    return "unverified"


def count_findings(predictions: Iterable[Prediction]) -> FindingCounts:
    """Count by verdict; a failed prediction is unverified whatever its label says (never an alarm)."""
    n = {"contradiction": 0, "missing": 0, "unverified": 0, "consistent": 0}
    withheld = 0
    for p in predictions:
        verdict = method_verdict(p)
        n[verdict] += 1
        withheld += verdict == "unverified" and p.abstained_from is not None
    return FindingCounts(n["contradiction"], n["missing"], n["unverified"], withheld, n["consistent"])


def run_findings(run_dir: str | os.PathLike[str]) -> FindingCounts:
    """The findings of a run folder, each note's last attempt only (see :mod:`ehrlib.pipeline.attempts`)."""
    path = Path(run_dir) / "predictions.jsonl"
    if not path.exists():
        return FindingCounts()
    keep = current_lines(run_dir, path.name)
    return count_findings(p for p, k in zip(read_predictions(path), keep, strict=False) if k)
