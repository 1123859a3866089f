"""Known-answer tests of the event rules (procedures, outputs and other records)."""
from __future__ import annotations

import pytest
from verification_kit import FakeTools, assert_decided, entity, row, spanned, verify

from ehrlib.corpus.records import TimeSpan

PROC = "procedureevents_mv:224560"
BILLED = {"table": "procedures_icd", "score": 0.9, "key": "procedures_icd:9671", "label": "Insert endotracheal tube",
          "has_records": True}


def _proc(*rows: dict) -> FakeTools:
    return FakeTools({PROC: list(rows)})


def _placed(start: str, end: str, **fields) -> dict:
    return row(start, None, key=PROC, table="procedureevents_mv", end=end, **fields)


TODAY = _placed("2199-02-03 08:00:00", "2199-02-03 08:30:00")
LATER = _placed("2199-02-09 08:00:00", "2199-02-09 08:30:00")


def test_negated_absent():
    e = entity("intubation", "procedure", keys=(PROC,), negated=True)
    assert_decided(verify(e, _proc(LATER)), "events.negated_absent", "consistent")


def test_negated_recorded():
    e = entity("intubation", "procedure", keys=(PROC,), negated=True)
    assert_decided(verify(e, _proc(TODAY)), "events.negated_recorded", "inconsistent", "contradiction")


def test_billed_procedure_stands_in_for_bedside_charting():
    tools = FakeTools({"procedures_icd:9671": [row("2199-02-03", None, key="procedures_icd:9671",
                                                   table="procedures_icd", label="Insert endotracheal tube")]},
                      lexical=[BILLED])
    e = entity("intubation", "procedure", keys=(PROC,))
    assert_decided(verify(e, tools), "events.billed_procedure", "consistent")


@pytest.mark.parametrize("tools, kind", [(_proc(), "missing"), (_proc(LATER), "contradiction")])
def test_no_record_in_window(tools, kind):
    e = entity("drain output", "output", keys=(PROC,))
    assert_decided(verify(e, tools), "events.no_record_in_window", "inconsistent", kind)


@pytest.mark.parametrize("stay_tables, note_type, section, label", [
    (("chartevents",), "nursing", None, "unverified"),                          # a stay without procedure events
    (("chartevents", "procedureevents_mv"), "nursing", None, "unverified"),     # charted for some stays, not this
    (("chartevents", "procedureevents_mv"), "physician", "exam", "unverified"),  # "R IJ HD line c/d/i"
    (("chartevents",), "discharge_summary", "hospital_course", "unverified"),  # narrative: not the coded list
    (("chartevents",), "discharge_summary", "procedures", "inconsistent"),     # the procedure list is billed
])
def test_a_device_only_the_catalogue_names(stay_tables, note_type, section, label):
    import dataclasses

    from ehrlib.corpus.records import ItemRef

    e = entity("R IJ", "procedure", keys=(PROC,))
    e = dataclasses.replace(e, source="ontology", claim=dataclasses.replace(e.claim, section=section))
    stay = [(ItemRef(t, "Heart Rate", str(i)), f"{t}:{i}") for i, t in enumerate(stay_tables)]
    v = verify(e, FakeTools({}), note_type=note_type, patient_items=stay)
    assert_decided(v, "events.no_record_in_window", label)
    # the patient's own item: its absence from the window is evidence whatever the system
    mine = verify(entity("R IJ", "procedure", keys=(PROC,)), FakeTools({}), note_type=note_type, patient_items=stay)
    assert_decided(mine, "events.no_record_in_window", "inconsistent", "missing")


@pytest.mark.parametrize("tools", [FakeTools({}), FakeTools({"chartevents:9": [row("2199-02-09", None, "DNR/DNI",
                                                                                  key="chartevents:9")]})])
@pytest.mark.parametrize("negated", [False, True])
def test_a_findings_absence_is_not_judged(tools, negated):
    # "Code status: DNR/DNI", "loose brown stool", "No BM": an observation or standing state has no dated
    # record of its own; no row of its one mapped item in the window (or the admission) shows nothing
    e = entity("stool", "finding", keys=("chartevents:9",), negated=negated)
    assert_decided(verify(e, tools), "events.no_record_in_window", "unverified")


@pytest.mark.parametrize("line, text, label", [
    ("Cr 1.3 at discharge without further dialysis.", "dialysis", "unverified"),  # none after an undated moment
    ("Cr 1.3 at discharge, no further intubation.", "intubation", "unverified"),
    ("Cr 1.3 at discharge, no dialysis.", "dialysis", "inconsistent"),            # none in the window at all
])
def test_negated_from_an_undated_moment(line, text, label):
    e = entity(text, "procedure", keys=(PROC,), negated=True, span=spanned(line, text))
    assert_decided(verify(e, _proc(TODAY), line=line), "events.negated_recorded", label)


@pytest.mark.parametrize("charttime, label", [("2199-02-03 10:40:00", "unverified"),    # written before it
                                              ("2199-02-03 19:00:00", "inconsistent")])  # written after it
def test_a_procedure_dated_after_the_note_was_written_is_not_missing(charttime, label):
    line = "Repeat CXR this afternoon."
    e = entity("CXR", "procedure", keys=(PROC,), time_text="this afternoon", span=spanned(line, "CXR"),
               window=TimeSpan("2199-02-03 00:00:00", "2199-02-03 23:59:59"))
    v = verify(e, _proc(LATER), line=line, charttime=charttime)
    assert_decided(v, "events.no_record_in_window", label)


def test_record_in_window():
    e = entity("drain output", "output", keys=(PROC,))
    assert_decided(verify(e, _proc(TODAY)), "events.record_in_window", "consistent")


@pytest.mark.parametrize("time_text, label, rule", [
    ("at 1400", "inconsistent", "events.procedure_clock"),   # placed at 08:00, stated 14:00 (±2 h)
    ("at 0900", "consistent", "events.record_in_window"),
])
def test_procedure_clock(time_text, label, rule):
    e = entity("A-line", "procedure", keys=(PROC,), time_text=time_text, action="placed")
    assert_decided(verify(e, _proc(TODAY)), rule, label)


def test_procedure_side():
    e = entity("R IJ CVL", "procedure", keys=(PROC,), side="r")
    left = _placed("2199-02-03 08:00:00", "2199-02-03 08:30:00", extra={"location": "Left IJ"})
    assert_decided(verify(e, _proc(left)), "events.procedure_side", "inconsistent", "contradiction")


VENT = _placed("2199-02-01 10:00:00", "2199-02-03 18:30:00")


@pytest.mark.parametrize("time_text, label, rule", [
    ("at 1830", "consistent", "events.record_in_window"),    # the ventilation ran until 18:30
    ("at 1000", "inconsistent", "events.procedure_clock"),  # 10:00 is when it started, not ended
])
def test_extubation_clock_dates_the_end_of_ventilation(time_text, label, rule):
    e = entity("extubated", "procedure", keys=(PROC,), time_text=time_text)
    assert_decided(verify(e, _proc(VENT)), rule, label)


@pytest.mark.parametrize("time_text, label, rule", [
    ("this AM", "consistent", "events.record_in_window"),         # placed 08:00 on the stated day
    ("this afternoon", "inconsistent", "events.procedure_day_part"),  # 08:00 is no afternoon
    ("overnight", "consistent", "events.record_in_window"),      # the night runs into the morning (± 2 h)
    ("this PM at 0800", "consistent", "events.record_in_window"),  # a clock time is the clock rule's
])
def test_procedure_day_part(time_text, label, rule):
    # the statement's window ends on its stated day (the note's day, widened back half a day)
    e = entity("echo", "procedure", keys=(PROC,), time_text=time_text,
               window=TimeSpan("2199-02-02 12:00:00", "2199-02-03 23:59:59"))
    assert_decided(verify(e, _proc(TODAY)), rule, label)


@pytest.mark.parametrize("time_text, label, rule", [
    ("this AM", "consistent", "events.record_in_window"),         # the line ran until 09:00 today
    ("this afternoon", "inconsistent", "events.procedure_day_part"),
])
def test_a_removal_dated_by_a_part_of_the_day_is_the_records_end(time_text, label, rule):
    line = _placed("2199-02-01 19:00:00", "2199-02-03 09:00:00")  # placed two days before, pulled this morning
    e = entity("cordis", "procedure", keys=(PROC,), time_text=time_text, action="pulled",
               window=TimeSpan("2199-02-02 12:00:00", "2199-02-03 23:59:59"))
    assert_decided(verify(e, _proc(line)), rule, label)


VENTED = _placed("2199-02-01 10:00:00", "2199-02-06 09:00:00")  # a dwell spanning the whole window


@pytest.mark.parametrize("text, action, rows, label, rule", [
    # removal dated by a day: the dwell must end in the window, not merely span it
    ("extubated", None, [VENTED], "inconsistent", "events.procedure_edge_day"),
    ("extubated", None, [_placed("2199-02-01 10:00:00", "2199-02-03 09:00:00")], "consistent",
     "events.record_in_window"),
    # placement dated by a day: the dwell must start in it
    ("ETT", "placed", [VENTED], "inconsistent", "events.procedure_edge_day"),
    ("ETT", "placed", [_placed("2199-02-03 02:00:00", "2199-02-06 09:00:00")], "consistent",
     "events.record_in_window"),
    # a point event's own time counts for either edge
    ("extubated", None, [TODAY], "consistent", "events.record_in_window"),
    # the removal told by the action bound to the name ("the A-line was removed on HD 3")
    ("A-line", "removed", [VENTED], "inconsistent", "events.procedure_edge_day"),
    ("A-line", "removed", [_placed("2199-02-01 10:00:00", "2199-02-03 09:00:00")], "consistent",
     "events.record_in_window"),
])
def test_procedure_edge_day(text, action, rows, label, rule):
    e = entity(text, "procedure", keys=(PROC,), time_text="on hospital day 3", action=action,
               window=TimeSpan("2199-02-02 00:00:00", "2199-02-04 23:59:59"))
    assert_decided(verify(e, _proc(*rows)), rule, label)


@pytest.mark.parametrize("line, label, rule", [
    ("echo yesterday evening, EF 55%", "inconsistent", "events.procedure_day_part"),  # placed 08:00
    ("echo yesterday morning, EF 55%", "consistent", "events.record_in_window"),
])
def test_the_day_part_written_after_the_day(line, label, rule):
    # the time expression resolved is "yesterday"; the part of that day is the word after it
    e = entity("echo", "procedure", keys=(PROC,), time_text="yesterday", span=(0, 4),
               window=TimeSpan("2199-02-02 12:00:00", "2199-02-03 23:59:59"))
    assert_decided(verify(e, _proc(TODAY), line=line), rule, label)


def test_a_date_that_bounds_the_dwell_dates_no_edge():
    # "intubated ... until 2-3": the date is the dwell's end, not the intubation's
    e = entity("intubated", "procedure", keys=(PROC,), time_text="2-3", action="intubated", span=(0, 9),
               window=TimeSpan("2199-02-02 00:00:00", "2199-02-04 23:59:59"))
    line = "intubated for airway protection until 2-3"
    assert_decided(verify(e, _proc(VENTED), line=line), "events.record_in_window", "consistent")


@pytest.mark.parametrize("line, time_text, label, rule", [
    ("she remained intubated and was extubated on HD 3", "on HD 3", "consistent", "events.record_in_window"),
    ("cirrhosis, intubated, now septic", "now", "consistent", "events.record_in_window"),
    ("she was intubated on HD 3", "on HD 3", "inconsistent", "events.procedure_edge_day"),  # the placement's day
])
def test_an_ongoing_dwell_dates_no_edge(line, time_text, label, rule):
    # the dwell goes on ("remained intubated", "intubated, now ..."): the day is not its start
    a = line.index("intubated")
    e = entity("intubated", "procedure", keys=(PROC,), time_text=time_text, action="intubated", span=(a, a + 9),
               window=TimeSpan("2199-02-02 00:00:00", "2199-02-04 23:59:59"))
    assert_decided(verify(e, _proc(VENTED), line=line), rule, label)


SITE = "chartevents:8392"


@pytest.mark.parametrize("line, charted, label, rule", [
    # a CareVue line slot charts the site as an item of its own: the stated vessel's site decides the side
    ("Lines: L radial A-line, R IJ TLC", "Right Radial", "inconsistent", "events.procedure_side"),
    ("Lines: L radial A-line, R IJ TLC", "Left Radial", "consistent", "events.record_in_window"),
    ("Lines: L femoral A-line", "Right Radial", "consistent", "events.record_in_window"),  # no site of that vessel
])
def test_procedure_side_on_a_charted_line_site(line, charted, label, rule):
    import dataclasses

    from ehrlib.corpus.records import ItemRef
    e = entity("A-line", "procedure", keys=(SITE,), side="l", span=spanned(line, "A-line"))
    e = dataclasses.replace(e, items=(ItemRef("chartevents", "INV Line#1 [Site]", 8392),))
    tools = FakeTools({SITE: [row("2199-02-03 08:00:00", None, key=SITE, value=charted)]})
    assert_decided(verify(e, tools, line=line), rule, label)
