"""Known answers for the one-liner and problem-heading lists (ehrlib.pipeline.offline.stay_problems)."""
from __future__ import annotations

import pytest

from ehrlib.pipeline.offline import stay_problems
from ehrlib.pipeline.offline.mention import Mention
from ehrlib.pipeline.offline.stay_problems import (
    heading_span,
    identification_span,
    list_parts,
    stay_problem_mentions,
    with_stay_problems,
)

DX = {"pyelonephritis", "septic shock", "l hip fx", "atn", "ckd", "copd", "nstemi", "dka", "chf exacerbation",
      "acute on chronic systolic chf", "hypoxemic resp failure", "hypokalemia", "e. coli bacteremia"}
PX = {"ex-lap", "l hip orif", "cabg", "trach", "peg"}


@pytest.fixture(autouse=True)
def _reads_both(monkeypatch):
    # the shipped data chooses which lists are read; these answers are about reading them
    monkeypatch.setattr(stay_problems, "_reads", lambda: frozenset({"identification", "headings", "comorbidities"}))


def _kind(phrase):
    p = phrase.lower()
    return "diagnosis" if p in DX else "procedure_code" if p in PX else None


def _parts(text):
    span = identification_span(text) or heading_span(text)
    return [] if span is None else [text[a:b] for a, b in list_parts(text, *span)]


def _named(text):
    return [(m.text, m.concept) for m in stay_problem_mentions(text, 0, _kind)]


def test_the_identification_sentence_in_several_styles():
    assert _named("81F w/ L hip fx s/p L hip ORIF, ATN. Seen on rounds.") == [
        ("L hip fx", "diagnosis"), ("L hip ORIF", "procedure_code"), ("ATN", "diagnosis")]
    assert _named("Pt is a 58 yo male with pyelonephritis c/b septic shock") == [
        ("pyelonephritis", "diagnosis"), ("septic shock", "diagnosis")]
    assert _named("HD 3. 64M admitted w/ NSTEMI, now s/p CABG and trach/PEG.") == [
        ("NSTEMI", "diagnosis"), ("CABG", "procedure_code"), ("trach", "procedure_code"), ("PEG", "procedure_code")]
    assert _named("S: 70s F presenting in DKA") == [("DKA", "diagnosis")]


def test_a_sentence_without_age_and_sex_opens_no_list():
    assert _named("Pyelonephritis, septic shock; cont abx.") == []
    assert _named("Seen with 64M's wife, ATN.") == []


def test_the_list_ends_with_its_sentence():
    assert _parts("72M w/ COPD. CHF exacerbation overnight.") == ["COPD"]
    # a single capital before a period is an abbreviation, not a sentence end
    assert _parts("66F w/ E. coli bacteremia, ATN.") == ["E. coli bacteremia", "ATN"]


def test_history_cues_hold_until_a_cue_of_this_stay():
    assert _named("77M w/ h/o COPD, CKD, admitted with CHF exacerbation.") == [("CHF exacerbation", "diagnosis")]
    assert _named("60F, PMH CKD, ATN.") == []


def test_a_treatment_after_on_is_no_part():
    assert _parts("55M w/ ATN on CRRT, COPD on home O2, septic shock") == ["ATN", "COPD", "septic shock"]
    # "acute on chronic" is one name
    assert _parts("# Acute on chronic systolic CHF: diurese") == ["Acute on chronic systolic CHF"]


def test_problem_headings():
    assert _named("# ATN on CKD: renally dose meds") == [("ATN", "diagnosis")]
    assert _named("2. Hypoxemic resp failure - back on AC") == [("Hypoxemic resp failure", "diagnosis")]
    assert _named("# COPD/CKD") == [("COPD", "diagnosis"), ("CKD", "diagnosis")]
    assert _named("Plan: continue ATN workup") == []


def test_a_diagnosis_replaces_a_state_word_inside_it_but_not_a_whole_state():
    text = "# Hypoxemic resp failure: on AC"
    hypoxia = Mention(0, 2, 11, "Hypoxemic", "interpretation", "hypoxia")
    got = with_stay_problems(text, 0, [hypoxia], [hypoxia], _kind)
    assert [(m.text, m.kind) for m in got] == [("Hypoxemic resp failure", "diagnosis")]
    text = "# Hypokalemia: repleting"
    low_k = Mention(0, 2, 13, "Hypokalemia", "interpretation", "hypokalemia")
    assert with_stay_problems(text, 0, [low_k], [low_k], _kind) == [low_k]


def test_a_diagnosis_already_stated_is_not_stated_twice():
    text = "70M admitted with septic shock."
    prose = Mention(0, 18, 30, "septic shock", "diagnosis", "diagnosis", "septic shock")
    assert with_stay_problems(text, 0, [prose], [], _kind) == [prose]


def test_comorbidities_before_a_cue_of_this_stay_are_history_unless_read(monkeypatch):
    monkeypatch.setattr(stay_problems, "_reads", lambda: frozenset({"identification"}))
    assert _named("64M w/ COPD, CKD, admitted with pyelonephritis c/b septic shock.") == [
        ("pyelonephritis", "diagnosis"), ("septic shock", "diagnosis")]
    assert _named("# ATN: renally dose") == []  # headings not read


def test_concept_key_meets_shorthand_and_words():
    from ehrlib.pipeline.offline.stay_problems import concept_key

    assert concept_key("ATN") == concept_key("acute tubular necrosis")
    assert concept_key("septic shock") == concept_key("Septic  Shock")
    assert concept_key("ATN") != concept_key("CKD")


def test_the_shipped_reading_takes_billed_procedures_of_the_one_liner(monkeypatch):
    from ehrlib.pipeline.offline import icd_match

    monkeypatch.setattr(stay_problems, "stay_reads", lambda: frozenset({"identification", "billed_procedures"}))
    calls = []

    def closely(tools, phrase, tables=("diagnoses_icd",), billed_only=False):
        calls.append((phrase, tables, billed_only))
        return True

    monkeypatch.setattr(stay_problems, "names_icd_concept_closely", closely)
    diagnosis, procedure = stay_problems.concept_tests(object())
    assert not diagnosis("septic shock") and procedure("ex-lap")
    assert calls == [("ex-lap", ("procedures_icd",), True)]
    assert icd_match.names_icd_concept_closely is not closely  # the module's own function is untouched
