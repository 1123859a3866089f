"""Known answers for exam and nursing finding mentions (made-up sentences)."""
from __future__ import annotations

import pytest

from ehrlib.pipeline.offline.lexicon import load_lexicon
from ehrlib.pipeline.offline.mentions import find_mentions


def _findings(text: str) -> list[tuple[str, str]]:
    return [(m.text, m.concept) for m in find_mentions(text, 0, load_lexicon(), [], "nursing_system")
            if m.kind == "finding"]


@pytest.mark.parametrize("text, expected", [
    # a change of state is two statements, each at its own time
    ("Neuro: oriented x1 -> oriented x3 after lunch.",
     [("oriented x1", "orientation"), ("oriented x3", "orientation")]),
    ("Neuro: oriented x1, then oriented x2.", [("oriented x1", "orientation"), ("oriented x2", "orientation")]),
    # the later state written without the finding's name: a statement of its own, with its time words
    ("Abd: BS hypoactive -> present by evening.", [("BS", "bowel_sounds"), ("present by evening", "bowel_sounds")]),
    # words after the change that name no state of the finding stay with it
    ("Abd: BS hypoactive -> pt repositioned.", [("BS", "bowel_sounds")]),
])
def test_a_change_between_two_states_is_two_statements(text, expected):
    assert _findings(text) == expected


@pytest.mark.parametrize("text, concept", [
    ("Neuro: opens eyes to voice, MAE.", "gcs_eye"),
    ("no eye opening to sternal rub", "gcs_eye"),
    ("Resp: CPAP+PS overnight.", "ventilator_mode"),
    ("CV: NSR, frequent PVCs.", "ectopy"),
])
def test_findings_align_to_their_charted_concept(text, concept):
    assert concept in {c for _, c in _findings(text)}


@pytest.mark.parametrize("text, expected", [
    # a vocabulary form's words split by a header colon are that form ("Skin: intact" is "skin intact")
    ("SKIN: intact, no breakdown.", [("SKIN: intact", "skin")]),
    ("Skin intact.", [("Skin intact", "skin")]),
])
def test_a_form_written_as_a_header_and_its_content(text, expected):
    assert _findings(text) == expected
