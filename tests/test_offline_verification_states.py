"""Known-answer tests of the state rules (interpretations, criteria, states attached to a value)."""
from __future__ import annotations

import pytest
from verification_kit import FakeTools, assert_decided, assert_outcome, entity, row, spanned, verify

TEMP = "chartevents:temp"
FEVER = ({"kind": "threshold", "source": "T >= 100.4 F"},
         [{"operator": ">=", "threshold": 100.4, "items": [{"key": TEMP, "label": "Temperature F",
                                                            "has_records": True}]}])


def _febrile(temps: list[float]) -> FakeTools:
    return FakeTools({TEMP: [row(f"2199-02-03 {6 + i:02d}:00:00", t) for i, t in enumerate(temps)]},
                     criteria={"fever": FEVER})


@pytest.mark.parametrize("negated, temps, label", [
    (False, [99.0, 101.2], "consistent"),
    (True, [99.0, 101.2], "inconsistent"),   # "afebrile" while a fever is charted
    (True, [98.6, 99.1], "consistent"),
])
def test_clinical_criterion(negated, temps, label):
    e = entity("afebrile" if negated else "febrile", "interpretation", keys=(), criterion="fever", negated=negated)
    assert_decided(verify(e, _febrile(temps)), "states.clinical_criterion", label)


def test_clinical_criterion_checks_a_stated_value():
    e = entity("febrile", "interpretation", keys=(), criterion="fever", value=103.0)
    assert_decided(verify(e, _febrile([101.2])), "states.clinical_criterion", "inconsistent", "contradiction")


def test_unknown_criterion_is_not_judged():
    e = entity("septic", "interpretation", keys=(), criterion="sepsis")
    assert_decided(verify(e, FakeTools({})), "states.clinical_criterion", "consistent")


@pytest.mark.parametrize("negated, label", [(False, "consistent"), (True, "inconsistent")])
def test_lexicon_threshold(negated, label):
    e = entity("hypomagnesemic", "interpretation", criterion="hypomagnesemia", concept="magnesium", negated=negated)
    tools = FakeTools({"chartevents:1": [row("2199-02-03", 1.4)]})
    assert_decided(verify(e, tools), "states.lexicon_threshold", label)


@pytest.mark.parametrize("value, label", [("1.4", "consistent"), ("2.0", "inconsistent")])
def test_state_attached_to_a_value(value, label):
    line = f"Mg {value}, hypomagnesemic"
    e = entity("hypomagnesemic", "interpretation", criterion="hypomagnesemia", span=spanned(line, "hypomagnesemic"))
    # the window's records would say otherwise: the attached value decides
    tools = FakeTools({"chartevents:1": [row("2199-02-03", 2.0 if value == "1.4" else 1.4)]})
    assert_decided(verify(e, tools, line=line), "states.attached_value", label)


@pytest.mark.parametrize("word, criterion, negated, mcv, label", [
    ("normocytic", "microcytosis", True, 74.0, "inconsistent"),    # 74 fL is below the 80 fL bound
    ("normocytic", "microcytosis", True, 88.0, "consistent"),
    ("microcytic", "microcytosis", False, 71.0, "consistent"),
    ("macrocytic", "macrocytosis", False, 94.0, "inconsistent"),   # 94 fL is not above 100 fL
])
def test_red_cell_size_words_are_judged_on_the_mcv(word, criterion, negated, mcv, label):
    from ehrlib.pipeline.offline.lexicon import load_lexicon

    term = load_lexicon().term_index[word]
    assert (term.criterion, term.negated) == (criterion, negated)
    e = entity(word, "interpretation", criterion=criterion, concept="mcv", negated=negated)
    assert_decided(verify(e, FakeTools({"chartevents:1": [row("2199-02-03", mcv)]})), "states.lexicon_threshold",
                   label)


CREAT = "labevents:cr"
AKI = ({"kind": "delta", "rise": 0.3, "within_hours": 48, "ratio": 1.5, "source": "KDIGO"},
       [{"items": [{"key": CREAT, "label": "Creatinine", "has_records": True}]}])


def _creatinine(values: list[float]) -> FakeTools:
    return FakeTools({CREAT: [row(f"2199-02-0{1 + i} 05:00:00", v, key=CREAT, table="labevents", label="Creatinine")
                              for i, v in enumerate(values)]}, criteria={"aki": AKI})


@pytest.mark.parametrize("values, label", [
    ([1.0, 1.5, 1.6], "consistent"),     # a rise of 0.5 within 48 h
    ([0.8, 0.9, 0.8], "inconsistent"),   # normal and flat: no injury
    ([3.1, 3.0, 2.9], "unverified"),     # abnormal from the first draw: the baseline predates the stay
])
def test_a_rise_criterion_needs_its_baseline(values, label):
    e = entity("AKI", "interpretation", keys=(), criterion="aki")
    v = verify(e, _creatinine(values))
    assert_decided(v, "states.clinical_criterion", label)
    if label == "unverified":
        assert "baseline" in v.reason and v.inconsistency_type is None


def test_no_aki_is_still_judged_when_the_first_value_is_high():
    e = entity("no AKI", "interpretation", keys=(), criterion="aki", negated=True)
    assert_decided(verify(e, _creatinine([2.0, 2.6, 2.9])), "states.clinical_criterion", "inconsistent")


def test_a_state_with_no_records_to_judge_it_is_not_an_alarm():
    e = entity("oliguric", "interpretation", keys=(), criterion="fever")
    v = verify(e, FakeTools({}, criteria={"fever": FEVER}))
    assert_decided(v, "states.clinical_criterion", "unverified")
    assert v.inconsistency_type is None


@pytest.mark.parametrize("line, label", [
    ("Afebrile, ambulating with walker.", "unverified"),           # one unknown moment of the stay
    ("He remained afebrile throughout the stay.", "inconsistent"),  # said to last: any fever contradicts
])
def test_a_negated_state_timed_only_by_the_stay_needs_a_duration(line, label):
    from dataclasses import replace

    word = "afebrile" if "remained" in line else "Afebrile"
    e = replace(entity(word, "interpretation", keys=(), criterion="fever", negated=True, span=spanned(line, word)),
                time_basis="hospitalization")
    v = verify(e, _febrile([98.6, 101.2]), line=line, note_type="discharge_summary")
    assert_outcome(v, "states.clinical_criterion", label, "whole stay")


def test_a_negated_state_on_its_own_day_is_still_judged():
    from dataclasses import replace

    line = "Afebrile, ambulating with walker."
    e = replace(entity("Afebrile", "interpretation", keys=(), criterion="fever", negated=True,
                       span=spanned(line, "Afebrile")), time_basis="note_day")
    assert_decided(verify(e, _febrile([98.6, 101.2]), line=line), "states.clinical_criterion", "inconsistent")


URINE = "outputevents:urine"
OLIGURIA = ({"kind": "rate", "source": "UOP < 0.5 mL/kg/h"},
            [{"items": [{"key": URINE, "label": "Urine Out Foley", "has_records": True}]}])


@pytest.mark.parametrize("negated, per_hour, label", [
    (False, 100.0, "unverified"),    # "oliguric": a day of 100 mL/h cannot show no hour-long stretch was low
    (True, 10.0, "inconsistent"),    # "good UOP": a day at 10 mL/h is below the rate
    (False, 10.0, "consistent"),
])
def test_a_rate_state_is_refuted_by_a_day_only_when_negated(negated, per_hour, label):
    tools = FakeTools({URINE: [row(f"2199-02-02 {h:02d}:00:00", per_hour, key=URINE, table="outputevents")
                               for h in range(24)]}, criteria={"oliguria": OLIGURIA})
    e = entity("good UOP" if negated else "oliguric", "interpretation", keys=(), criterion="oliguria",
               negated=negated)
    v = verify(e, tools)
    assert_outcome(v, "states.clinical_criterion", label, "rate over hours")


@pytest.mark.parametrize("line, word, label", [
    ("# Febrile neutropenia: cefepime, cultures pending.", "Febrile", "unverified"),  # the problem being treated
    ("ID: febrile overnight, cultures sent.", "febrile", "inconsistent"),             # a state of the day
])
def test_a_state_named_as_a_problem_heading_is_not_refuted_by_its_absence(line, word, label):
    e = entity(word, "interpretation", keys=(), criterion="fever", span=spanned(line, word))
    assert_outcome(verify(e, _febrile([98.6, 99.1]), line=line), "states.clinical_criterion", label, "heading")
