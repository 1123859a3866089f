"""Known answers of the nursing-assessment rules: states claimed for the whole shift, negated
bowel sounds, and a score total charted only as its components (GCS in MetaVision)."""
from __future__ import annotations

from dataclasses import replace

import pytest
from verification_kit import FakeTools, assert_decided, entity, row, verify

from ehrlib.corpus.records import ItemRef


def _charted(*values: str) -> FakeTools:
    return FakeTools({"chartevents:1": [row(f"2199-02-03 {8 + i:02d}:00:00", None, value=v) for i,
                                        v in enumerate(values)]})


# --- findings.whole_period ------------------------------------------------------------------------

def test_whole_period_word_before_the_finding():
    line = "Afebrile. Remains in NSR, no ectopy"
    e = entity("NSR", "finding", shown="NSR", concept="heart_rhythm", span=(21, 24))
    tools = _charted("SR (Sinus Rhythm)", "AF (Atrial Fibrillation)")
    assert_decided(verify(e, tools, line=line), "findings.whole_period", "inconsistent")
    other = "Remained afebrile. NSR, no ectopy"  # the word belongs to another sentence
    e = entity("NSR", "finding", shown="NSR", concept="heart_rhythm", span=(19, 22))
    assert_decided(verify(e, tools, line=other), "findings.charted_state", "consistent")


@pytest.mark.parametrize("text, concept, charted, rule, label", [
    # a rhythm said to hold all shift: another rhythm charted in the window contradicts it
    ("NSR throughout", "heart_rhythm", ("SR (Sinus Rhythm)", "AF (Atrial Fibrillation)"), "findings.whole_period",
     "inconsistent"),
    ("remains in SR", "heart_rhythm", ("SR (Sinus Rhythm)", "ST (Sinus Tachycardia)"), "findings.whole_period",
     "inconsistent"),
    ("SR all shift", "heart_rhythm", ("SR (Sinus Rhythm)", "SR (Sinus Rhythm)"), "findings.charted_state",
     "consistent"),
    # without a whole-period word the state only has to be charted
    ("NSR", "heart_rhythm", ("SR (Sinus Rhythm)", "AF (Atrial Fibrillation)"), "findings.charted_state",
     "consistent"),
    # a multi-valued finding: only a state that excludes the stated one contradicts
    ("alert all shift", "consciousness", ("Alert", "Lethargic"), "findings.whole_period", "inconsistent"),
    ("alert throughout the day", "consciousness", ("Alert", "Arouse to Voice"), "findings.charted_state",
     "consistent"),
])
def test_whole_period(text, concept, charted, rule, label):
    e = entity(text, "finding", shown=text, concept=concept)
    assert_decided(verify(e, _charted(*charted)), rule, label)


# --- a negated finding claims its absence state ("no BS") -------------------------------------------

@pytest.mark.parametrize("charted, label", [(("Absent", "Hypoactive"), "consistent"), (("Present",), "inconsistent")])
def test_negated_bowel_sounds_claim_absence(charted, label):
    e = entity("BS", "finding", shown="", concept="bowel_sounds", negated=True)
    assert_decided(verify(e, _charted(*charted)), "findings.charted_state", label)


# --- numbers.component_sum -------------------------------------------------------------------------

_PARTS = ("GCS - Eye Opening", "GCS - Verbal Response", "GCS - Motor Response")


def _gcs(text: str, tools: FakeTools, labels=_PARTS, **numbers):
    keys = tuple(f"chartevents:{i + 1}" for i in range(len(labels)))
    e = entity(text, "range" if "min" in numbers else "measurement", keys=keys, concept="gcs", **numbers)
    e = replace(e, items=tuple(ItemRef("chartevents", lab, i + 1) for i, lab in enumerate(labels)))
    return verify(e, tools)


def _responses(*exams: tuple[int, int, int]) -> FakeTools:
    rows: dict[str, list] = {f"chartevents:{i + 1}": [] for i in range(3)}
    for h, points in enumerate(exams):
        for i, p in enumerate(points):
            key = f"chartevents:{i + 1}"
            rows[key].append(row(f"2199-02-03 {8 + 4 * h:02d}:00:00", float(p), key=key))
    return FakeTools(rows)


@pytest.mark.parametrize("text, numbers, exams, label", [
    ("GCS 3", {"value": 3.0}, [(1, 1, 1)], "consistent"),                       # E1 V1 M1
    ("GCS 3", {"value": 3.0}, [(4, 5, 6), (1, 1, 1)], "consistent"),            # one exam of the day
    ("GCS 15", {"value": 15.0}, [(3, 4, 6), (2, 1, 5)], "inconsistent"),        # 13 and 8: never 15
    ("GCS 8-11", {"min": 8.0, "max": 11.0}, [(2, 1, 5), (3, 2, 6)], "consistent"),
])
def test_component_sum(text, numbers, exams, label):
    assert_decided(_gcs(text, _responses(*exams), **numbers), "numbers.component_sum", label)


def test_a_charted_total_is_left_to_the_number_rules():
    tools = FakeTools({"chartevents:1": [row("2199-02-03 08:00:00", 3.0)]})
    v = _gcs("GCS 3", tools, labels=("GCS Total",), value=3.0)
    assert v.rule_id != "numbers.component_sum" and v.label == "consistent"


def test_components_at_different_times_do_not_sum():
    tools = FakeTools({"chartevents:1": [row("2199-02-03 08:00:00", 1.0, key="chartevents:1")],
                       "chartevents:2": [row("2199-02-03 09:00:00", 1.0, key="chartevents:2")],
                       "chartevents:3": [row("2199-02-03 10:00:00", 1.0, key="chartevents:3")]})
    assert _gcs("GCS 3", tools, value=3.0).rule_id != "numbers.component_sum"


# --- a stable range: the range is the claim --------------------------------------------------------

@pytest.mark.parametrize("charted, rule, label", [
    ((84.0, 97.0, 106.0), "numbers.value_in_window", "consistent"),
    ((84.0, 91.0, 95.0), "numbers.value_in_window", "inconsistent"),   # "HR stable 80s-100s": none in the 100s
])
def test_stable_range_is_judged_as_a_range(charted, rule, label):
    e = entity("HR", "trend", concept="heart_rate", direction="stable", min=80.0, min_hi=89.0, max_lo=100.0, max=109.0)
    tools = FakeTools({"chartevents:1": [row(f"2199-02-03 {8 + i:02d}:00:00", v) for i, v in enumerate(charted)]})
    assert_decided(verify(e, tools), rule, label)


# --- findings.prevailing_state: an untimed normal state against the day's chartings ---------------

@pytest.mark.parametrize("text, charted, rule, label", [
    # "active" BS claim the normal choice (Present) and the day mostly charts Hypoactive
    ("active BS", ("Hypoactive", "Hypoactive", "Present", "Hypoactive"), "findings.prevailing_state",
     "inconsistent"),
    ("normoactive BS", ("Hypoactive", "Hypoactive", "Hypoactive"), "findings.prevailing_state", "inconsistent"),
    # the day agrees often enough
    ("active BS", ("Hypoactive", "Present", "Present"), "findings.charted_state", "consistent"),
    # an abnormal state seen once is a finding; a bare "+BS" claims presence only
    ("hypoactive BS", ("Present", "Present", "Hypoactive", "Present"), "findings.charted_state", "consistent"),
    ("+BS", ("Hypoactive", "Hypoactive", "Hypoactive"), "findings.charted_state", "consistent"),
])
def test_prevailing_bowel_sounds(text, charted, rule, label):
    e = entity("BS", "finding", shown=text, concept="bowel_sounds", span=(5, 5 + len(text)))
    assert_decided(verify(e, _charted(*charted), line=f"Abd: {text}, soft"), rule, label)


def test_prevailing_skips_a_timed_statement():
    line = "Abd: active BS this AM, soft"
    e = entity("BS", "finding", shown="active BS", concept="bowel_sounds", span=(5, 14))
    assert_decided(verify(e, _charted("Hypoactive", "Hypoactive", "Present"), line=line), "findings.charted_state",
                   "consistent")


# --- findings.denied_state: a negated state claims only that it did not hold ------------------------

@pytest.mark.parametrize("line, charted, label", [
    # "not sedated": other states charted, the denied one never
    ("Calm. Not sedated today.", ("Alert", "Arouse to Voice"), "consistent"),
    # every charted state is the denied one, and the negation is in the state's own item
    ("Calm. Not sedated today.", ("Sedated", "Sedated"), "inconsistent"),
    # both charted: the note's moment is not known
    ("Calm. Not sedated today.", ("Sedated", "Alert"), "unverified"),
    # a negation reaching the word only across a comma may have ended at it
    ("No agitation, sedated today.", ("Sedated", "Sedated"), "unverified"),
])
def test_a_negated_state_claims_its_absence(line, charted, label):
    span = (line.index("sedated"), line.index("sedated") + 7)
    e = entity("sedated", "finding", shown="sedated", concept="consciousness", negated=True, span=span)
    assert_decided(verify(e, _charted(*charted), line=line), "findings.denied_state", label)


def test_a_device_held_off_is_not_in_use():
    # "holding off BiPAP" on a day charting only nasal cannula and face tent: not contradicted
    e = entity("BiPAP", "finding", shown="BiPAP", concept="o2_device", negated=True)
    assert_decided(verify(e, _charted("Nasal cannula", "Face tent")), "findings.denied_state", "consistent")
    # the same words asserted are still judged against the charted devices
    e = entity("BiPAP", "finding", shown="BiPAP", concept="o2_device")
    assert_decided(verify(e, _charted("Nasal cannula", "Face tent")), "findings.charted_state", "inconsistent")
