"""Known-answer tests of bedside charting in notes: range pairs, hemodynamic, ventilator and CRRT
items, oxygen flows after their device, setting changes and bounds over a whole period."""
from __future__ import annotations

import pytest
from verification_kit import FakeTools, assert_decided, entity, row, spanned, verify

from ehrlib.corpus.records import ItemRef
from ehrlib.pipeline.offline.align import concept_items
from ehrlib.pipeline.offline.lexicon import load_lexicon
from ehrlib.pipeline.offline.mentions import find_mentions
from ehrlib.pipeline.offline.verification.changes import changed_at
from ehrlib.pipeline.offline.verification.trendwords import parse_origin


def _found(line: str) -> list[tuple[str, str, str]]:
    return [(m.kind, m.concept, line[m.start:m.end].strip()) for m in find_mentions(line, 0, load_lexicon())]


# --- a pressure's range pair is two statements -------------------------------------------------

@pytest.mark.parametrize("line, concept, systolic, diastolic", [
    ("Art BP 101-163/48-77 mmHg overnight", "blood_pressure", "Art BP 101-163", "48-77 mmHg"),
    ("PA 31-47/14-26, wedge 12", "pa_pressure", "PA 31-47", "14-26"),
])
def test_a_range_pair_states_the_systolic_and_the_diastolic_range(line, concept, systolic, diastolic):
    found = [(k, c, t) for k, c, t in _found(line) if c == concept]
    assert found == [("range", concept, systolic), ("range", concept, diastolic)]
    dia = next(m for m in find_mentions(line, 0, load_lexicon()) if line[m.start:m.end].strip() == diastolic)
    part = dia.claim.bp.part("diastolic")
    assert (part.min, part.max) == tuple(float(x) for x in diastolic.split()[0].split("-"))
    assert dia.text.endswith("diastolic")                       # keeps the monitor's name for its modality


def test_a_range_pair_needs_the_diastolic_below_the_systolic():
    assert [c for _, c, _ in _found("BP 60-80/90-120")] != ["blood_pressure", "blood_pressure"]


# --- hemodynamic, ventilator and CRRT items, named as the flowsheet labels them ---------------

@pytest.mark.parametrize("line, concept", [
    ("PAm 28-35", "pa_mean"), ("mPAP 41", "pa_mean"), ("CI 2.4", "cardiac_index"), ("SVR 1100-1450", "svr"),
    ("CO 5.8", "cardiac_output"), ("PCWP 18", "pcwp"), ("RSBI 62 on SBT", "rsbi"), ("PIP 34", "peak_pressure"),
    ("Pplat 27", "plateau_pressure"), ("BFR 180", "crrt_blood_flow"),
    ("replacement 1800 mL/hr", "crrt_replacement_rate"), ("dialysate 600 mL/hr", "crrt_dialysate_rate"),
    ("Wgt (current): 77.2 kg", "weight"), ("TF residual 120 cc at 0400", "tf_residual"),
    ("gastric residuals 0 all shift", "tf_residual"),
])
def test_bedside_items_are_read_with_their_values(line, concept):
    assert concept in [c for _, c, _ in _found(line)]


@pytest.mark.parametrize("concept, label, aligned", [
    ("pa_mean", "PAP Mean", True), ("pa_mean", "Pulmonary Artery Pressure mean", True),
    ("pa_pressure", "PAP [Diastolic]", True), ("pa_pressure", "Pulmonary Artery Pressure Alarm - High", False),
    ("crrt_replacement_rate", "Replacement Rate", True), ("crrt_replacement_rate", "Replacement Fluid", False),
    ("crrt_blood_flow", "Blood Flow (ml/min)", True), ("rsbi", "RSBI (<200)", True), ("rsbi", "RSBI Deferred", False),
    ("ultrafiltrate", "Ultrafiltrate Output", True), ("tf_residual", "TF Residual Output", False),  # an output item
])
def test_bedside_concepts_align_to_the_dictionary_labels(concept, label, aligned):
    c = load_lexicon().concepts[concept]
    pairs = [(ItemRef("chartevents", label, 1), "chartevents:1")]
    assert bool(concept_items(c.tables, c.items, pairs)) is aligned


def test_a_feeding_tube_residual_aligns_to_its_output_and_intake_items():
    c = load_lexicon().concepts["tf_residual"]
    pairs = [(ItemRef("outputevents", "TF Residual Output", 1), "outputevents:1"),
             (ItemRef("inputevents_cv", "TF Residual", 2), "inputevents_cv:2"),
             (ItemRef("outputevents", "Gastric Oral Gastric", 3), "outputevents:3")]
    assert [it.label for it, _ in concept_items(c.tables, c.items, pairs)] == ["TF Residual Output", "TF Residual"]


@pytest.mark.parametrize("line, concept", [
    ("Vent: AC 450 x 16, PEEP 8; MAP 12-15", "mean_airway_pressure"),   # a few cmH2O on a ventilator line
    ("Vent: CPAP/PSV 10/5, MAP 62-85", "blood_pressure"),               # arterial values stay the blood pressure
    ("HR 88, MAP 30", "blood_pressure"),                                # no ventilator clause
])
def test_map_in_a_ventilator_clause_is_the_mean_airway_pressure(line, concept):
    assert [c for _, c, t in _found(line) if t.startswith("MAP")] == [concept]


# --- an oxygen flow after its device -------------------------------------------------------------

@pytest.mark.parametrize("line, want", [
    ("O2: venti mask 8 L", [("measurement", "o2_flow", "8 L")]),
    ("Resp: trach mask FiO2 40%, 8-10 L", [("range", "o2_flow", "8-10 L")]),
    ("NC, UOP 1 L today", []),                                          # a volume after a device is no flow
])
def test_an_oxygen_flow_after_its_device(line, want):
    assert [x for x in _found(line) if x[1] == "o2_flow"] == want


# --- a setting's change is one claim: both values, their order, its time -----------------------

def test_a_setting_change_is_one_statement_a_lab_series_one_per_value():
    assert [(k, c) for k, c, _ in _found("FiO2 weaned 70 -> 50%")] == [("trend", "fio2")]
    assert [(k, c) for k, c, _ in _found("PEEP increased from 5 to 10")] == [("trend", "peep")]
    assert [c for _, c, _ in _found("Lactate 2.3 -> 4.7")] == ["lactate", "lactate"]


@pytest.mark.parametrize("text, new, origin, clock", [
    ("PEEP weaned 12 -> 8 at 0930", 8.0, 12.0, "0930"),
    ("PEEP increased from 5 to 10 by 2100", 10.0, 5.0, "2100"),
    ("Cr down to 1.1 from 2.3", 1.1, 2.3, None),
])
def test_a_change_is_parsed_with_its_clock_time(text, new, origin, clock):
    o = parse_origin(text)
    assert o is not None and (o.new, o.origin, o.clock) == (new, origin, clock)


def test_a_change_at_a_clock_time_lies_between_the_old_and_the_new_value():
    before, after = {"time": "2199-02-03 03:50:00"}, {"time": "2199-02-03 04:00:00"}
    assert changed_at("0400", before, after) and changed_at("0530", before, after)
    assert not changed_at("1400", before, after)


def _peep(*points: tuple[str, float]) -> FakeTools:
    return FakeTools({"chartevents:1": [row(t, v) for t, v in points]})


@pytest.mark.parametrize("line, label", [
    ("PEEP weaned 10 -> 6 at 1100", "consistent"),
    ("PEEP weaned 10 -> 6 at 2200", "inconsistent"),                    # the change was charted at 11:00
    ("PEEP increased 6 -> 10", "inconsistent"),                         # the change went the other way
])
def test_a_setting_change_is_checked_for_order_and_time(line, label):
    tools = _peep(("2199-02-03 08:00:00", 10.0), ("2199-02-03 10:30:00", 10.0), ("2199-02-03 11:00:00", 6.0),
                  ("2199-02-03 15:00:00", 6.0))
    first, second = (float(x) for x in line.split()[2:5:2])
    e = entity("PEEP", "trend", concept="peep", value=second, series=[first, second], direction="down",
               span=spanned(line, line.split(" at ")[0]))
    assert_decided(verify(e, tools, line=line, note_type="nursing"), "trends.stated_origin", label)


def test_a_setting_change_of_the_next_day_does_not_meet_a_progress_note():
    line = "PEEP decreased from 10 to 5"
    tools = _peep(("2199-02-03 08:00:00", 5.0), ("2199-02-03 14:00:00", 10.0), ("2199-02-04 13:00:00", 5.0))
    e = entity("PEEP", "trend", concept="peep", value=5.0, series=[10.0, 5.0], direction="down",
               span=spanned(line, line))
    assert verify(e, tools, line=line, note_type="nursing").label == "inconsistent"


# --- a bound over the whole period -----------------------------------------------------------------

def test_a_bound_with_a_whole_period_word_is_a_claim_a_goal_is_none():
    assert [(k, c, t) for k, c, t in _found("SpO2 > 94% all shift")] == [("range", "spo2", "SpO2 > 94")]
    assert _found("goal SpO2 > 94%") == [] and _found("SpO2 > 94%") == []


def test_the_bedside_extraction_rules_state_their_principles():
    from ehrlib.pipeline.offline.measurements import (
        DEVICE_FLOW_RULE,
        PERIOD_BOUND_RULE,
        RANGE_PAIR_RULE,
        SETTING_CHANGE_RULE,
    )
    from ehrlib.pipeline.offline.ventilator import AIRWAY_MEAN_RULE
    rules = (RANGE_PAIR_RULE, DEVICE_FLOW_RULE, SETTING_CHANGE_RULE, PERIOD_BOUND_RULE, AIRWAY_MEAN_RULE)
    assert [r.rule_id for r in rules] == ["extract.range_pair", "extract.device_flow", "extract.setting_change",
                                          "extract.period_bound", "extract.airway_mean"]
    assert all(len(r.principle) <= 260 for r in rules)


# --- a state word after another item's name is that item's change ------------------------------

@pytest.mark.parametrize("line, want", [
    ("HR spiked to 171 at 0640", [("trend", "heart_rate")]),             # the heart rate's verb, no fever
    ("T spiked to 101.9 overnight", [("interpretation", "fever")]),      # the temperature: the fever, read once
    ("spiked to 102.4 this AM", [("interpretation", "fever")]),
])
def test_a_state_word_after_another_items_name_is_its_change(line, want):
    assert [(k, c) for k, c, _ in _found(line) if k in ("trend", "interpretation", "measurement")] == want


def test_an_oxygen_flow_named_with_litres_is_litres_a_minute():
    m = next(m for m in find_mentions("O2 flow 6-8L via face tent", 0, load_lexicon()) if m.concept == "o2_flow")
    assert (m.claim.reading.min, m.claim.reading.max, m.claim.unit) == (6.0, 8.0, "L/min")


@pytest.mark.parametrize("line, concept, value", [
    ("febrile to 103.1 overnight, 99.0 at 0600", "temperature", 99.0),   # the fever's item: temperature
    ("tachycardic to 140s this AM, 96 at noon", "heart_rate", 96.0),
])
def test_a_valued_state_carries_its_items_later_values(line, concept, value):
    later = [m for m in find_mentions(line, 0, load_lexicon()) if m.kind == "measurement"]
    assert [(m.concept, m.claim.reading.value) for m in later] == [(concept, value)]
