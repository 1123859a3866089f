"""Putting a confidence on every verdict of a note, and withholding unsure alarms.

The runner resolves the calibrator once per process (:func:`resolve_calibrator`) and, after
verification, calls :func:`calibrate_note` on each note: features of every prediction, the
model's probability that the verdict is right in ``confidence``, and an ``inconsistent``
verdict below ``abstain_below`` reported as ``unverified`` with ``abstained_from`` set.
Consistent verdicts are never withheld (docs/calibration.md: on the development sets two
thirds of those below the default threshold are right, and a withheld verdict is never credited).

Which calibrator: ``RunParams.calibrator`` names a file (any problem with it is a one-line
:class:`~ehrlib.pipeline.calibration.model.CalibratorError`), ``"none"`` runs uncalibrated on
purpose, and unset uses the bundled file; a bundled file that is missing or unusable is a
visible fallback: a warning line, ``confidence`` None and "uncalibrated" with the reason in
the run manifest.
"""
from __future__ import annotations

import dataclasses
import importlib.resources
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from ehrlib.corpus.records import Prediction
from ehrlib.pipeline.calibration.features import (
    ItemRows,
    evidence_stats,
    item_keys,
    item_rows,
    line_sections,
    prediction_features,
)
from ehrlib.pipeline.calibration.model import Calibrator, CalibratorError, load_calibrator
from ehrlib.pipeline.params import DEFAULT_ABSTAIN_BELOW
from ehrlib.tools import make_toolset
from ehrlib.tools.context import PatientContext

__all__ = ["DEFAULT_ABSTAIN_BELOW", "Resolved", "bundled_path", "resolve_calibrator", "note_features",
           "note_feature_rows", "apply_confidence", "calibrate_note", "abstain_reason"]

log = logging.getLogger(__name__)

_ROW_LIMIT = 5000


def bundled_path() -> Path:
    """The calibrator shipped with ehrlib (``ehrlib/data/calibration/offline.json``)."""
    return Path(str(importlib.resources.files("ehrlib") / "data" / "calibration" / "offline.json"))


@dataclasses.dataclass(frozen=True, slots=True)
class Resolved:
    """The calibrator a run uses (None: uncalibrated) and what its manifest says about it."""

    calibrator: Calibrator | None
    record: Mapping[str, Any]


def resolve_calibrator(choice: str | None, abstain_below: float) -> Resolved:
    """The calibrator for ``RunParams.calibrator`` (see the module docstring)."""
    if choice is not None and choice.strip().lower() == "none":
        return Resolved(None, {"status": "uncalibrated", "reason": "calibrator: none", "abstain_below": None})
    if choice is not None:
        cal = load_calibrator(choice)   # an explicit file: any problem is an error
        return Resolved(cal, {**cal.describe(), "abstain_below": abstain_below})
    try:
        cal = load_calibrator(bundled_path())
    except CalibratorError as exc:
        log.warning("running uncalibrated (confidence None, no abstention): %s", exc)
        return Resolved(None, {"status": "uncalibrated", "reason": str(exc), "abstain_below": None})
    return Resolved(cal, {**cal.describe(), "abstain_below": abstain_below})


def note_features(preds: Sequence[Prediction], note_type: str | None, note_time: Any, toolset: Any | None,
                  text: str | None = None) -> list[dict[str, str | float]]:
    """Feature rows of a note's predictions, reading their items through ``toolset`` (None:
    evidence features left out, as for a verdict without items); ``text``, the note's,
    gives each line its section (None: "none").
    """
    out = []
    cache: dict[str, Any] = {}
    read: dict[tuple[str, ...], ItemRows] = {}
    sections = line_sections(text, note_type) if text else ()
    for p in preds:
        rows: ItemRows | list[Any] = []
        if toolset is not None and p.items:   # predictions on the same items share one reading of their rows
            keys = item_keys(p)
            if keys not in read:
                read[keys] = ItemRows.of(item_rows(toolset, p, cache))
            rows = read[keys]
        section = sections[p.line] if 0 <= p.line < len(sections) else "none"
        out.append(prediction_features(p, note_type, evidence_stats(p, rows, note_time), section))
    return out


def abstain_reason(p: float, reason: str) -> str:
    """The reason of a withheld alarm: the probability first, then the verifier's reason."""
    return f"low confidence (p={p:.2f}): {reason}"


def apply_confidence(preds: Sequence[Prediction], probs: Sequence[float | None], abstain_below: float
                     ) -> tuple[Prediction, ...]:
    """Predictions with ``confidence`` set; alarms below ``abstain_below`` withheld.

    A verdict that already carries an LLM's own probability (``confidence_source``
    "logprobs") keeps it: the calibrator's probability stands in only where the model gave none.
    """
    out = []
    for pred, p in zip(preds, probs, strict=True):
        source: Literal["calibrator", "logprobs"] = "calibrator"
        if pred.confidence_source == "logprobs" and pred.confidence is not None:
            p, source = pred.confidence, "logprobs"
        if p is None:
            out.append(pred)
        elif pred.label == "inconsistent" and p < abstain_below:
            out.append(dataclasses.replace(pred, confidence=p, confidence_source=source, label="unverified",
                                           abstained_from="inconsistent", inconsistency_type=None,
                                           reason=abstain_reason(p, pred.reason)))
        else:
            out.append(dataclasses.replace(pred, confidence=p, confidence_source=source))
    return tuple(out)


def note_feature_rows(preds: Sequence[Prediction], *, con: Any, ctx: Any) -> list[dict[str, str | float]]:
    """Feature rows of a note's predictions (``ctx``: its NoteContext, ``con`` a read-only
    cursor on the note's database).
    """
    if not preds:
        return []
    note = ctx.note
    patient = PatientContext(ctx.subject_id, ctx.hadm_id, ctx.admittime, ctx.dischtime,
                             note.charttime or ctx.chartdate, ctx.sex)
    flavor = getattr(ctx, "flavor", None)    # the run's layout: not probed again per note
    with make_toolset(con, patient, row_limit=_ROW_LIMIT, embeddings=False, flavor=flavor) as tools:
        return note_features(preds, note.note_type, note.charttime or note.chartdate, tools, note.text)


def calibrate_note(preds: Sequence[Prediction], calibrator: Calibrator, *, con: Any, ctx: Any,
                   abstain_below: float) -> tuple[Prediction, ...]:
    """A note's predictions with confidence and abstention."""
    if not preds:
        return ()
    return apply_confidence(preds, calibrator.predict(note_feature_rows(preds, con=con, ctx=ctx)), abstain_below)
