"""Known answers for reading a finding's attributes with their sides (made-up sentences)."""
from __future__ import annotations

import pytest

from ehrlib.pipeline.claims import FindingClaim
from ehrlib.pipeline.offline.finding_attributes import narrow_to_side, side_of, side_of_label
from ehrlib.pipeline.offline.lexicon import load_lexicon
from ehrlib.pipeline.offline.mentions import find_mentions


def _attrs(text: str) -> list[tuple[str, str, str]]:
    return [(m.text, m.concept, m.claim.words) for m in find_mentions(text, 0, load_lexicon(), [], "nursing_system")
            if m.concept.startswith("pupil_") and isinstance(m.claim, FindingClaim)]


@pytest.mark.parametrize("text, expected", [
    ("Neuro: pupils 2mm and sluggish bilaterally.", [("pupils 2mm", "pupil_size", "2mm"),
                                                     ("sluggish", "pupil_response", "both sluggish")]),
    ("L pupil 6mm and fixed; R 3mm brisk.", [("L pupil 6mm", "pupil_size", "left 6mm"),
                                            ("fixed", "pupil_response", "left fixed")]),
    ("at 0900 R pupil 4 mm, L brisk.", [("R pupil 4 mm", "pupil_size", "right 4 mm"),
                                        ("L brisk", "pupil_response", "left brisk")]),
])
def test_each_attribute_is_its_own_mention_with_its_side(text, expected):
    assert _attrs(text) == expected


def test_a_finding_without_attribute_words_stays_whole():
    ms = find_mentions("HEENT: PERRL, anicteric.", 0, load_lexicon(), [], "exam")
    assert [m.concept for m in ms if m.kind == "finding"] == ["pupils"]


def test_sides():
    assert (side_of("R"), side_of("left"), side_of("bilaterally"), side_of("soft")) == ("right", "left", "both", None)
    assert side_of_label("Pupil Size [Right]") == "right" and side_of_label("Pupil Size") is None
    labels = ["Pupil Size Right", "Pupil Size Left"]
    assert narrow_to_side("left", labels) == [1] and narrow_to_side("both", labels) == [0, 1]
    assert narrow_to_side("right", ["Pupil Size"]) == [0]  # no label names a side: all


@pytest.mark.parametrize("text, expected", [
    ("Intubated for airway protection, ETT 8.0, 23 cm at the teeth.",
     [("ETT 8.0", "ett_size", "8.0"), ("23 cm at the teeth", "ett_mark", "23 cm at the teeth")]),
    ("ETT 7.5mm; CXR pending.", [("ETT 7.5mm", "ett_size", "7.5mm")]),
])
def test_a_device_named_with_its_values_states_its_attributes(text, expected):
    ms = find_mentions(text, 0, load_lexicon(), [], "nursing_system")
    assert [(m.text, m.concept, m.value) for m in ms if m.concept.startswith("ett_")] == expected
    if "Intubated" in text:  # the intubation itself stays a statement of its own
        assert any(m.concept == "intubation" and m.text == "Intubated" for m in ms)


def test_a_device_without_values_stays_a_procedure():
    ms = find_mentions("Resp: ETT in place, suctioned for thick secretions.", 0, load_lexicon(), [], "nursing_system")
    assert not [m for m in ms if m.concept.startswith("ett_")]
