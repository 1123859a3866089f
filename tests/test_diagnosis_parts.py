"""Known answers for compound diagnosis entries (ehrlib.pipeline.offline.diagnosis_parts)."""
from __future__ import annotations

from ehrlib.pipeline.offline.diagnosis_parts import connective_pieces, split_compound
from ehrlib.pipeline.offline.mention import Mention

#: made-up concept names a stand-in dictionary "resolves"
KNOWN = {"melena", "gastritis", "sarcoidosis", "uveitis", "septic shock", "pyelonephritis", "ventricular tachycardia",
         "ventricular fibrillation", "fibrillation", "flutter", "atrial flutter", "atrial fibrillation", "pancreatitis",
         "portal vein thrombosis", "gastric varices", "bleeding"}
#: entries a stand-in dictionary states whole with one billable title
WHOLE = {"gastric varices with bleeding"}


def _split(text, line=7, start=4, known=KNOWN, whole=WHOLE):
    m = Mention(line, start, start + len(text), text, "diagnosis", "diagnosis", text)
    return [(p.text, p.value, p.start - start, p.end - start)
            for p in split_compound(m, lambda p: p.lower() in known, lambda p: p.lower() in whole)]


def test_each_concept_joined_by_a_connective_is_its_own_claim():
    assert _split("Melena from gastritis") == [("Melena", "Melena", 0, 6), ("gastritis", "gastritis", 12, 21)]
    assert _split("Sarcoidosis with uveitis") == [("Sarcoidosis", "Sarcoidosis", 0, 11),
                                                 ("uveitis", "uveitis", 17, 24)]
    assert [t for t, *_ in _split("Septic shock secondary to pyelonephritis")] == ["Septic shock", "pyelonephritis"]
    assert [t for t, *_ in _split("Septic shock due to pyelonephritis")] == ["Septic shock", "pyelonephritis"]
    assert [t for t, *_ in _split("Pancreatitis and portal vein thrombosis")] == ["Pancreatitis",
                                                                                 "portal vein thrombosis"]


def test_one_title_stating_the_whole_entry_keeps_it_whole():
    text = "Gastric varices with bleeding"
    assert _split(text) == [(text, text, 0, len(text))]


def test_a_part_naming_no_concept_qualifies_the_concept_before_it():
    text = "Ventricular tachycardia with hemodynamic instability"
    assert _split(text) == [(text, "Ventricular tachycardia", 0, len(text))]
    # the head names nothing: the entry stays as written when it names a concept whole ...
    text = "Hemodynamic instability with pancreatitis"
    assert _split(text, known=KNOWN | {text.lower()}) == [(text, text, 0, len(text))]
    # ... else its other concepts are the claims
    assert _split(text) == [("pancreatitis", "pancreatitis", 29, 41)]
    assert _split("Hemodynamic instability with lability") == [("Hemodynamic instability with lability",) * 2
                                                               + (0, 37)]


def test_a_one_word_conjunct_shares_the_modifiers_before_it():
    got = _split("Ventricular tachycardia/fibrillation")
    assert got == [("Ventricular tachycardia", "Ventricular tachycardia", 0, 23),
                   ("fibrillation", "Ventricular fibrillation", 24, 36)]
    # the shared form must name a concept, else the conjunct is read as written
    got = _split("Atrial fibrillation and flutter", known=KNOWN - {"atrial flutter"})
    assert got[1][:2] == ("flutter", "flutter")


def test_a_slash_inside_shorthand_is_no_connective():
    assert connective_pieces("melena s/p EGD") == [(0, 14, "")]
    assert [j for *_, j in connective_pieces("melena w/ gastritis")] == ["", "w/"]
    assert [j for *_, j in connective_pieces("fibrillation/flutter")] == ["", "/"]
