"""Known answers for headings the section list does not know (ehrlib.pipeline.offline.sections)."""
from __future__ import annotations

from ehrlib.corpus.records import TimeSpan
from ehrlib.pipeline.offline.sections import note_time_context, section_scope, segment_lines

ADMIT = "2150-06-02 09:00:00"
DISCH = "2150-06-09 12:00:00"


def _kinds(lines: list[str]) -> dict[int, tuple[str, str]]:
    ctx = note_time_context("discharge_summary", ADMIT, DISCH, None)
    segs = segment_lines(lines, "discharge_summary", TimeSpan(ADMIT, DISCH), None, ctx)
    assert [i for s in segs for i in range(s.start_line, s.end_line + 1)] == list(range(len(lines)))
    return {s.start_line: (s.title, s.section) for s in segs}


def test_an_unknown_heading_is_not_swallowed_by_the_section_before_it() -> None:
    kinds = _kinds(["Medications on Admission:", "1. Lisinopril 10 mg daily",
                    "CHEMISTRIES AND COUNTS ON ARRIVAL: Sodium 129, potassium 3.2.", "Hemoglobin 8.8.",
                    "Medications on Admission:", "2. Aspirin 81 mg", "Outside Hospital Studies:", "Troponin 0.4"])
    assert kinds[0][1] == "admission_medications" and section_scope(kinds[0][1]) == "past"
    assert kinds[2] == ("CHEMISTRIES AND COUNTS ON ARRIVAL", "results")  # inferred from its words
    assert kinds[6] == ("Outside Hospital Studies", "results")
    assert section_scope(kinds[2][1]) == "active"


def test_an_unknown_heading_without_cue_words_is_active_or_continues_an_active_parent() -> None:
    kinds = _kinds(["Past Medical History:", "COPD", "SPECIAL EVENTS: bronchoscopy on day two",
                    "Brief Hospital Course:", "RESPIRATORY FAILURE: intubated for hypercarbia"])
    assert kinds[2][1] == "other" and section_scope("other") == "active"  # never the history's scope
    assert kinds[4] == ("RESPIRATORY FAILURE", "hospital_course")      # a course's problem heading


def test_value_labels_are_no_headings() -> None:
    kinds = _kinds(["Pertinent Results:", "WBC: 11.2", "GLUCOSE: 140", "PEEP: 8", "Home Medication List:",
                    "1. Metformin 500 mg"])
    assert set(kinds) == {0, 4}  # "WBC:", "GLUCOSE:" name values; "PEEP: 8" is followed by its number
    assert kinds[4][1] == "admission_medications"


def test_a_results_heading_that_states_a_time_sets_its_window() -> None:
    ctx = note_time_context("discharge_summary", ADMIT, DISCH, None)
    segs = segment_lines(["Pertinent Results:", "ON ARRIVAL:", "___ 10:02PM BLOOD Na-133", "DISCHARGE:",
                          "___ 06:10AM BLOOD Na-139", "Brief Hospital Course:", "Na corrected slowly."],
                         "discharge_summary", TimeSpan(ADMIT, DISCH), None, ctx)
    by_title = {s.title: s.default_window for s in segs}
    assert by_title["ON ARRIVAL"] == TimeSpan("2150-06-01 00:00:00", "2150-06-03 23:59:59")  # admission +/- 1 day
    assert by_title["DISCHARGE"] == TimeSpan("2150-06-08 00:00:00", "2150-06-10 23:59:59")
    assert by_title["Brief Hospital Course"] == TimeSpan("2150-06-02 00:00:00", "2150-06-09 23:59:59")  # the stay
    progress = note_time_context("physician", ADMIT, DISCH, "2150-06-05")
    segs = segment_lines(["Lines: R IJ CVL", "Labs this AM:", "Na 137"], "physician", TimeSpan(ADMIT, DISCH),
                         "2150-06-05", progress)
    assert segs[1].section == "results" and segs[1].default_window.end == "2150-06-05 23:59:59"


def test_a_results_line_labelled_with_a_moment_of_the_stay_is_that_moments() -> None:
    ctx = note_time_context("discharge_summary", ADMIT, DISCH, None)
    segs = segment_lines(["Pertinent Results:", "Admission:  WBC 0.3, Hgb 7, Plt 18", "   INR 1.6, PT 15.8",
                          "On discharge: Hgb 9.1", "Brief Hospital Course:", "Admission: uneventful"],
                         "discharge_summary", TimeSpan(ADMIT, DISCH), None, ctx)
    by_line = {i: s for s in segs for i in range(s.start_line, s.end_line + 1)}
    admission = TimeSpan("2150-06-01 00:00:00", "2150-06-03 23:59:59")  # admission +/- 1 day
    assert by_line[1].default_window == by_line[2].default_window == admission  # the wrapped line too
    assert by_line[3].default_window == TimeSpan("2150-06-08 00:00:00", "2150-06-10 23:59:59")
    # outside a results section the same label is prose, not a heading
    assert by_line[5].section == "hospital_course" and by_line[5].title == "Brief Hospital Course"
    # a label alone on its line heads the records under it, up to a labelled entry of its own depth
    segs = segment_lines(["Pertinent Results:", "Admission:", "___ 04:42AM BLOOD WBC-4.4", "Peaks: ALT 3371",
                          "", "Discharge:", "___ 06:30AM BLOOD WBC-7.3", "", "Na 139"],
                         "discharge_summary", TimeSpan(ADMIT, DISCH), None, ctx)
    by_line = {i: s for s in segs for i in range(s.start_line, s.end_line + 1)}
    stay = by_line[0].default_window
    assert by_line[2].default_window == admission and by_line[3].default_window == stay
    assert by_line[6].default_window.start == "2150-06-08 00:00:00" and by_line[8].default_window == stay


def test_a_parenthesised_qualifier_does_not_hide_a_heading() -> None:
    kinds = _kinds(["Past Medical History:", "asthma", "Vitals (last 24h):", "HR 88, BP 120/70",
                    "Bedside Readings (this AM):", "SpO2 97%", "Social History:", "lives alone",
                    "Overnight Course (per night team):", "Hct 27"])
    assert kinds[2] == ("Vitals (last 24h)", "vitals")             # a known title, qualified
    assert kinds[4][0] == "Bedside Readings (this AM)" and section_scope(kinds[4][1]) == "active"
    assert kinds[8][0] == "Overnight Course (per night team)" and section_scope(kinds[8][1]) == "active"


def test_a_problem_entry_keeps_the_assessment_it_belongs_to() -> None:
    kinds = _kinds(["Assessment and Plan:", "# Sepsis: on cefepime", "# Alcohol: lorazepam 1 mg prn CIWA",
                    "2. Social: lives with wife, code full", "3) Past history - stable", "Brief Hospital Course:",
                    "# Family history: none relevant", "Social History:", "# tobacco: 1 ppd"])
    assert kinds[1][1] == kinds[2][1] == kinds[3][1] == kinds[4][1] == "assessment_plan"
    assert kinds[6][1] == "hospital_course"
    assert kinds[7][1] == kinds[8][1] == "social_family"              # outside a plan its title names it
