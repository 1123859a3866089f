"""Known-answer tests for the offline backend's text side: sections, time, mentions, scope."""
from __future__ import annotations

from datetime import datetime

import pytest

from ehrlib.corpus.records import TimeSpan
from ehrlib.pipeline.offline.lexicon import load_lexicon
from ehrlib.pipeline.offline.mentions import find_mentions
from ehrlib.pipeline.offline.scope import decide_scope, presentation_cue
from ehrlib.pipeline.offline.sections import match_header, note_time_context, segment_lines
from ehrlib.pipeline.offline.timex import TimeContext, find_anchors, parse_duration_days, resolve_line
from ehrlib.pipeline.offline.values import parse_bp, parse_value
from ehrlib.pipeline.records import Entity, Segment

ADMIT = "2164-10-20 14:00:00"
DISCH = "2164-10-27 12:00:00"


@pytest.fixture(scope="module")
def lex():
    return load_lexicon()


def _ctx(ref: str = "2164-10-24") -> TimeContext:
    return note_time_context("physician", ADMIT, DISCH, ref, {"surgery": "2164-10-21 09:00:00"})


# --- dates -------------------------------------------------------------------------------------

@pytest.mark.parametrize("text,start,end", [
    ("vanc started [**2164-10-23**]", "2164-10-23 00:00:00", "2164-10-23 23:59:59"),
    ("vanc started [**10-23**]", "2164-10-23 00:00:00", "2164-10-23 23:59:59"),
    ("cx sent on 10/23", "2164-10-23 00:00:00", "2164-10-23 23:59:59"),
    ("HD 3 pressors weaned", "2164-10-21 00:00:00", "2164-10-23 23:59:59"),
    ("POD 2 extubated", "2164-10-22 00:00:00", "2164-10-24 23:59:59"),
    ("Cr 2.3 on admission", "2164-10-19 00:00:00", "2164-10-21 23:59:59"),
    ("Hct 30 at discharge", "2164-10-26 00:00:00", "2164-10-28 23:59:59"),
    ("febrile overnight", "2164-10-22 12:00:00", "2164-10-24 23:59:59"),
    ("K 3.1 this AM", "2164-10-23 12:00:00", "2164-10-24 23:59:59"),
    ("transfused yesterday", "2164-10-22 12:00:00", "2164-10-23 23:59:59"),
])
def test_date_resolution(text, start, end):
    refs = resolve_line(text, 0, _ctx())
    assert refs, text
    assert (refs[0].window.start, refs[0].window.end) == (start, end)


def test_partial_date_takes_the_year_closest_to_the_stay():
    ctx = note_time_context("physician", "2164-12-30 10:00:00", "2165-01-04 10:00:00", "2165-01-02")
    refs = resolve_line("started [**1-1**]", 0, ctx)
    assert refs[0].window.start == "2165-01-01 00:00:00"


def test_following_day_counts_from_the_previous_reference():
    ctx = _ctx()
    first = resolve_line("intubated [**10-22**]", 0, ctx)[0]
    nxt = resolve_line("extubated the following day", 1, ctx, previous=first.window)
    assert nxt[0].window.start == "2164-10-23 00:00:00"


def test_ratio_is_not_a_date_and_time_is_kept():
    assert resolve_line("BCx 2/4 bottles GPC", 0, _ctx()) == []
    # a dated timestamp stamps an event or results block: the protocol checks that day
    refs = resolve_line("line placed [**2164-10-22**] 14:30", 0, _ctx())
    assert refs[0].window == TimeSpan("2164-10-22 00:00:00", "2164-10-22 23:59:59")
    # a bare clock time in a progress note is on the note's day (or the evening before)
    refs = resolve_line("levophed off since 0400", 0, _ctx())
    assert refs[0].window == TimeSpan("2164-10-23 02:00:00", "2164-10-24 06:00:00")  # +/- 2 h
    assert resolve_line("Na peaked at 152", 0, _ctx()) == []


def test_surgery_anchor_from_note_and_durations():
    ctx = note_time_context("discharge_summary", ADMIT, DISCH, None)
    anchors = find_anchors(["Pt underwent CABG on [**2164-10-22**]."], ctx)
    assert any(a.name == "surgery" and a.time.startswith("2164-10-22") for a in anchors)
    assert parse_duration_days("vanc x 7 days") == 7
    assert parse_duration_days("zosyn for 2 wks") == 14
    assert parse_duration_days("cipro 5 day course") == 5


# --- sections ----------------------------------------------------------------------------------

def test_discharge_summary_sections_and_day_markers():
    lines = ["Admission Date: [**2164-10-20**]", "History of Present Illness:", "fever",
             "Past Medical History:", "CHF", "Brief Hospital Course:", "# Sepsis: vanc started.",
             "HD 3: pressors weaned.", "Discharge Medications:", "1. Metoprolol 25 mg PO BID",
             "Followup Instructions:", "PCP 1 week"]
    ctx = note_time_context("discharge_summary", ADMIT, DISCH, None)
    segs = segment_lines(lines, "discharge_summary", TimeSpan(ADMIT, DISCH), None, ctx)
    kinds = {s.start_line: s.section for s in segs}
    assert kinds[1] == "hpi" and kinds[3] == "past_history" and kinds[5] == "hospital_course"
    assert kinds[6] == "hospital_course" and kinds[7] == "hospital_course"
    assert kinds[8] == "discharge_medications" and kinds[10] == "instructions"
    covered = [i for s in segs for i in range(s.start_line, s.end_line + 1)]
    assert covered == list(range(len(lines)))
    day3 = next(s for s in segs if s.start_line == 7)
    assert day3.default_window.start == "2164-10-21 00:00:00"  # HD 3 = Oct 22, widened one day
    assert segs[0].default_window.start.startswith("2164-10-20")


def test_headers_of_progress_and_nursing_notes():
    assert match_header("24 Hour Events:", "physician")[0] == "events"
    assert match_header("Assessment and Plan", "physician")[0] == "assessment_plan"
    assert match_header("Neuro: A&Ox3, MAE", "nursing")[0] == "nursing_system"
    assert match_header("Plan: cont to monitor", "nursing")[0] == "plan"
    assert match_header("P: 88", "nursing") is None  # a pulse, not a plan header
    assert match_header("HR 88 BP 110/60", "physician") is None


def test_nursing_note_default_window_is_note_date_widened():
    segs = segment_lines(["Neuro: alert"], "nursing", TimeSpan(ADMIT, DISCH), "2164-10-24")
    assert segs[0].default_window == TimeSpan("2164-10-23 00:00:00", "2164-10-25 23:59:59")


# --- values ------------------------------------------------------------------------------------

def test_bp_range_parsing():
    bp = parse_bp("110/60(75) {95/50(62) - 130/80(90)}")
    assert bp["systolic"] == 110 and bp["diastolic"] == 60 and bp["mean"] == 75
    assert (bp["systolic_min"], bp["systolic_max"], bp["mean_min"], bp["mean_max"]) == (95, 130, 62, 90)
    dec = parse_bp("90s-100s/50s")
    assert dec["systolic_min"] == 90 and dec["systolic_max"] == 109


def test_value_series_and_maxima(lex):
    cr = lex.concepts["creatinine"]
    assert parse_value(" 1.2 <- 1.8 <- 2.3", cr)["series"] == [2.3, 1.8, 1.2]
    assert parse_value(" 14.2 -> 11.0", cr)["direction"] == "down"
    assert parse_value(" peaked at 2.3", cr)["max"] == 2.3
    hr = lex.concepts["heart_rate"]
    v = parse_value(" 88 (80-110)", hr)
    assert (v["value"], v["min"], v["max"]) == (88, 80, 110)


def test_mentions_of_a_flowsheet_line(lex):
    text = "Tm 101.2 Tc 99.1 HR 88 (80-110) BP 110/60(75) {95/50(62) - 130/80(90)} RR 18 SpO2 97% on 2L NC"
    ms = {m.concept: m for m in find_mentions(text, 0, lex)}
    assert ms["temperature"].claim.unit == "F"
    assert ms["blood_pressure"].kind == "range"
    assert ms["spo2"].claim.reading.value == 97


def test_interpretations_negation_is_a_value(lex):
    ms = find_mentions("afebrile x24h, tachycardic to 120s, no hypotension", 0, lex)
    crit = {m.claim.criterion: m.claim for m in ms if m.kind == "interpretation"}
    assert crit["fever"].negated is True
    assert crit["tachycardia"].negated is False and crit["tachycardia"].reading.max == 129
    assert crit["hypotension"].negated is True


def test_medications_procedures_micro(lex):
    ms = find_mentions("vanc/zosyn started [**10-23**], lasix 40 mg IV x1", 0, lex)
    drugs = [(m.claim.drugs[0], m.claim.action) for m in ms if m.kind == "medication"]
    assert ("vancomycin", "started") in drugs and ("piperacillin", "started") in drugs
    lasix = next(m.claim for m in ms if m.claim.drugs == ("furosemide",))
    assert lasix.dose == 40 and lasix.route == "IV"
    proc = find_mentions("s/p R IJ CVL placement", 0, lex)
    assert len(proc) == 1 and proc[0].concept == "central_line" and proc[0].claim.side == "r"
    micro = find_mentions("BCx 2/4 GPC in clusters", 0, lex)[0]
    assert micro.claim.specimen == "blood cult" and micro.claim.organism == "staph"
    k = find_mentions("K 3.1 repleted", 0, lex)
    assert [m.kind for m in k] == ["measurement", "medication"]


# --- scope -------------------------------------------------------------------------------------

def _entity(text: str, start: int, kind: str = "measurement") -> Entity:
    return Entity("e1", 0, text, kind, span=(start, start + len(text)))


@pytest.mark.parametrize("line,word,section,status", [
    ("h/o MI with Cr 1.2", "Cr", "hospital_course", "past"),
    ("Plan to start heparin tomorrow", "heparin", "hospital_course", "plan"),
    ("Mother with DM, glucose 300", "glucose", "hospital_course", "past"),
    ("WBC 14.2", "WBC", "past_history", "past"),
    ("cont vanc", "vanc", "plan", "plan"),
    ("WBC 14.2", "WBC", "hospital_course", "active"),
    ("afebrile", "afebrile", "hospital_course", "active"),
    # a cue inside a closed parenthetical qualifies the aside only (ConText's scope boundary)
    ("Plt 90 (chronic ITP), Na 131", "Na", "hospital_course", "active"),
    ("Plt 90 (h/o ITP (dx 2150)), Na 131", "Na", "hospital_course", "active"),
    ("Na 131 (baseline Cr 1.4)", "Cr", "hospital_course", "past"),  # still inside the open aside
    ("h/o anemia, Hgb 8.1 (stable)", "Hgb", "hospital_course", "past"),  # the cue is outside the aside
    # an adjective cue qualifies its own phrase only
    ("WBC 90 (known CLL, 6% bands)", "bands", "hospital_course", "active"),
    ("chronic anemia, Hgb 8.1", "Hgb", "hospital_course", "active"),
    ("chronic Cr 2.1", "Cr", "hospital_course", "past"),
    # a problem title's cue qualifies the problem, not the statements after its colon
    ("2. Acute on chronic kidney injury: Cr up to 2.4", "Cr", "hospital_course", "active"),
    ("# Known CAD: troponin 0.03", "troponin", "assessment_plan", "active"),
    ("# AKI: baseline Cr 1.1", "Cr", "assessment_plan", "past"),             # a cue after the colon counts
    ("- Rec'd 3L LR since arrival", "LR", "events", "active"),             # received, not recommendations
    ("Renal recs: LR at 100/hr", "LR", "events", "plan"),
    ("Family meeting w/ daughter at noon, made DNR", "DNR", "hospital_course", "active"),  # a participant
    ("Spoke with the patient's son, transfused 1 u PRBC", "PRBC", "hospital_course", "active"),
    ("Son with colon cancer, CEA 4", "CEA", "hospital_course", "past"),
])
def test_scope_cues(line, word, section, status):
    seg = Segment(0, 0, 0, section, section)
    e = _entity(word, line.index(word))
    assert decide_scope(e, line, seg, TimeSpan(ADMIT, DISCH), "discharge_summary").status == status


@pytest.mark.parametrize("line, word, kind, status", [
    ("Urine cx from the ED still pending", "Urine cx", "microbiology", "active"),  # sent; only the result waits
    ("Stool cx sent, results pending", "Stool cx", "microbiology", "active"),
    ("CT abdomen pending", "CT abdomen", "procedure", "plan"),                     # a study not yet done
])
def test_a_pending_culture_was_sent(line, word, kind, status):
    seg = Segment(0, 0, 0, "course", "hospital_course")
    e = _entity(word, line.index(word), kind)
    assert decide_scope(e, line, seg, TimeSpan(ADMIT, DISCH), "physician").status == status


@pytest.mark.parametrize("line, word, status", [
    ("Home meds reviewed and continued: metoprolol 25 mg, aspirin 81 mg", "aspirin", "active"),
    ("home insulin regimen resumed, glargine 20 units", "glargine", "active"),
    ("Home meds include metoprolol 25 mg", "metoprolol", "past"),
    ("Continued metoprolol; home meds: aspirin 81 mg", "aspirin", "past"),  # the taking-up is before the cue
])
def test_a_home_medication_continued_in_the_stay_is_its_order(line, word, status):
    seg = Segment(0, 0, 0, "course", "hospital_course")
    e = _entity(word, line.index(word), "medication")
    assert decide_scope(e, line, seg, TimeSpan(ADMIT, DISCH), "discharge_summary").status == status


@pytest.mark.parametrize("before, line, word, kind, status", [
    ("", "In the ED her lactate was 3.1; troponin 0.05, Na 129.", "Na", "measurement", "active"),
    ("Seen at home by VNA. In the ER a glucose of 512 was noted; BNP 880,", "K 5.9 and Cr 2.1.", "Cr",
     "measurement", "active"),                                                   # the sentence began a line before
    ("", "On arrival T 101.4, HR 118.", "HR", "measurement", "active"),
    ("", "Presented with dyspnea and was found to have a Hct of 21.", "Hct", "measurement", "active"),
    ("", "In the ED she was given ceftriaxone 1 g.", "ceftriaxone", "medication", "past"),  # no inpatient order
    ("", "Her Cr was 1.9 last year. On arrival she was confused.", "Cr", "measurement", "past"),  # another sentence
    ("", "On arrival to the OSH her Hct was 24.", "Hct", "measurement", "past"),  # an earlier facility wins
    ("", "A1c 9.1 (in the ED pending), LDL 140", "LDL", "measurement", "past"),   # cue inside an aside
])
def test_hpi_presentation_of_this_admission(before, line, word, kind, status):
    seg = Segment(0, 0, 5, "HPI", "hpi")
    e = _entity(word, line.index(word), kind)
    got = decide_scope(e, line, seg, TimeSpan(ADMIT, DISCH), "discharge_summary", before=before)
    assert got.status == status


def test_a_presentation_cue_reaches_over_its_narrative_sentence():
    text = "Seen by her PCP. In the ED a lactate of 3 was drawn; BNP 900,\ntroponin 0.2 (per cardiology)."
    assert presentation_cue(text, text.index("troponin")).group(0) == "In the ED"
    assert presentation_cue(text, text.index("PCP")) is None                 # before the cue
    after = "In the ED she was hypotensive. Her Cr was 2.1 last week."
    assert presentation_cue(after, after.index("Cr")) is None                 # the next sentence


def test_scope_by_time():
    seg = Segment(0, 0, 0, "course", "hospital_course")
    e = _entity("Cr", 0)
    dec = decide_scope(e, "Cr 1.0 in [**2163-01-02**]", seg, TimeSpan(ADMIT, DISCH), "discharge_summary",
                       TimeSpan("2163-01-02 00:00:00", "2163-01-02 23:59:59"))
    assert dec.status == "past"


def test_context_reference():
    assert _ctx().reference == datetime(2164, 10, 24)


@pytest.mark.parametrize("line, want", [
    # a tube or site followed by a volume states its output; without a volume it is the device
    ("I/O: foley 1.9 L, NGT 300 cc", [("foley", "output", "urine_output"), ("NGT", "output", "gastric_output")]),
    ("colostomy 250 cc since midnight", [("colostomy", "output", "ostomy_output")]),
    ("JP drain 35 cc serous", [("JP drain", "output", "drain_output")]),
    ("NGT placed, foley changed", [("NGT", "procedure", "ng_tube"), ("foley", "procedure", "foley")]),
])
def test_outputs_named_by_their_tube(line, want):
    found = [(m.text, m.kind, m.concept) for m in find_mentions(line, 0, load_lexicon())]
    assert found == want



def test_inflammatory_and_adrenal_labs_are_values(lex):
    found = [(m.concept, m.value) for m in find_mentions("CRP 12.4, AM cortisol 3.1 before steroids", 0, lex)]
    assert ("crp", "12.4") in found and ("cortisol", "3.1") in found
