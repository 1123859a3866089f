"""Turn a finished run folder into the run a reviewer's viewer must handle: findings with
confidences (some withheld), deciding rows and time bases, and one note the run failed on.

The record fields are filled by other parts of the pipeline; these tests build their
values deterministically so every expected count is known.
"""
from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

from ehrlib.corpus.io import read_predictions, write_jsonl
from ehrlib.corpus.records import Prediction

#: findings below this confidence are withheld by the "run"
WITHHELD_BELOW = 0.3


def confidence_of(k: int) -> float:
    """A spread of confidences in [0, 0.99], fixed per finding position."""
    return round(((k * 37) % 100) / 100, 2)


def calibrate(p: Prediction, k: int) -> Prediction:
    """``p`` with a confidence, a time basis and its last evidence row as the deciding one
    (withheld as ``unverified`` below :data:`WITHHELD_BELOW`).
    """
    conf = confidence_of(k)
    deciding = p.evidence_row_ids[-1:]
    p = replace(p, confidence=conf, time_basis="note_day", deciding_row_ids=deciding)
    if conf < WITHHELD_BELOW and p.label != "unverified":
        p = replace(p, abstained_from=p.label, label="unverified", reason=f"low confidence: {p.reason}")
    return p


def calibrated_copy(run: Path, out: Path, failed_note: str | None = None,
                    reason: str = "DataError: admission 1 not in the database") -> Path:
    """A copy of ``run`` with calibrated findings; ``failed_note`` is recorded as failed
    (ledger status, failure line) with no findings, as the runner records a failed note.
    """
    shutil.copytree(run, out)
    preds = [calibrate(p, k) for k, p in enumerate(read_predictions(run / "predictions.jsonl"))
             if p.note_id != failed_note]
    write_jsonl(preds, out / "predictions.jsonl")
    if failed_note is not None:
        ledger = [json.loads(x) for x in (out / "progress.jsonl").read_text(encoding="utf-8").splitlines()]
        ledger = [e if e["note_id"] != failed_note else {"note_id": failed_note, "status": "failed",
                                                           "n_failures": 1} for e in ledger]
        (out / "progress.jsonl").write_text("".join(json.dumps(e) + "\n" for e in ledger), encoding="utf-8")
        stages = [x for x in (out / "stages.jsonl").read_text(encoding="utf-8").splitlines()
                  if json.loads(x)["note_id"] != failed_note]
        (out / "stages.jsonl").write_text("".join(x + "\n" for x in stages), encoding="utf-8")
        with (out / "failures.jsonl").open("a", encoding="utf-8") as fh:
            fh.write(json.dumps({"schema_version": 3, "run_id": "x", "note_id": failed_note, "stage": "note",
                                 "entity_id": None, "error": reason}) + "\n")
    return out
