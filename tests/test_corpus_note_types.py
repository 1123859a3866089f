"""Notes written by others use MIMIC's category spellings; they load as the contract's types."""
from __future__ import annotations

import pytest

from ehrlib.corpus.records import Note, RecordError, from_dict

BASE = {"note_id": "n1", "subject_id": 1, "hadm_id": 2, "chartdate": "2101-10-23", "text": "x"}


@pytest.mark.parametrize("raw, want", [
    ("Discharge summary", "discharge_summary"), ("discharge_summary", "discharge_summary"),
    ("Physician ", "physician"), ("Progress Note", "physician"), ("Nursing/other", "nursing"),
    ("NURSING", "nursing"), ("nursing-note", "nursing"), ("Radiology", "radiology"), ("RR", "radiology"),
])
def test_note_type_spellings_normalised(raw, want):
    assert from_dict(Note, {**BASE, "note_type": raw}).note_type == want


def test_unknown_note_type_still_rejected_with_choices():
    with pytest.raises(RecordError, match="note_type.*discharge_summary"):
        from_dict(Note, {**BASE, "note_type": "ECG"})
