"""Known answers for the note's own time (ehrlib/pipeline/offline/note_time.py): a statement
of a progress or nursing note is judged only on rows charted up to the note's time plus the
charting slack, parts of a day resolve against the note, and every entity records how its
window was resolved. The inspector cases run on a tiny hand-written hospital whose lactate
peaks at 5.5 at 23:30, after an evening note written at 19:00."""
from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta
from pathlib import Path

import duckdb
import pytest
from test_tools_testdb import HA, A, T, lactate_hospital

from ehrlib.corpus.records import TIME_BASES, Note, TimeSpan
from ehrlib.pipeline.offline.note_time import (
    CHARTING_SLACK,
    note_time,
    part_of_day_span,
    settle,
    time_basis,
)
from ehrlib.pipeline.records import Entity, Segment

DAY = "2130-01-12"
EVENING = f"{DAY} 19:00:00"
DEFAULT = TimeSpan("2130-01-11 00:00:00", "2130-01-13 23:59:59")  # the note's day widened a day each side
SEG = Segment(0, 0, 5, "note", "other", DEFAULT)


def _entity(time_text: str | None = None, window: TimeSpan | None = DEFAULT) -> Entity:
    return Entity("e", 0, "Lactate", "measurement", time_text=time_text, window=window)


def test_cutoff_is_charttime_plus_slack_else_end_of_day_and_none_for_a_summary():
    assert note_time("nursing", EVENING, DAY).cutoff == datetime(2130, 1, 12, 19) + CHARTING_SLACK
    assert note_time("physician", None, DAY).cutoff == datetime(2130, 1, 12, 23, 59, 59)
    assert note_time("physician", f"{DAY} 00:00:00", DAY).cutoff == datetime(2130, 1, 12, 23, 59, 59)  # a date only
    assert note_time("discharge_summary", None, "2130-01-15").cutoff is None


@pytest.mark.parametrize("phrase, charttime, span", [
    ("this shift", EVENING, ((12, 7), (12, 19))),  # the twelve hours that end at the note
    ("this shift", None, ((12, 0), (13, 0))),  # no clock time: the note's day stands for the shift
    ("overnight", EVENING, ((11, 18), (12, 8))),  # the previous evening to the morning
    ("since midnight", EVENING, ((12, 0), (12, 19))),
    ("since MN", EVENING, ((12, 0), (12, 19))),  # the flowsheet's abbreviation
    ("for shift", EVENING, ((12, 7), (12, 19))),
    ("for the shift", EVENING, ((12, 7), (12, 19))),
    ("this morning", EVENING, ((12, 0), (12, 12))),
    ("this afternoon", None, ((12, 12), (12, 18))),
    ("today", EVENING, None),  # the note's day: not a part of it
])
def test_parts_of_a_day(phrase, charttime, span):
    got = part_of_day_span(phrase, note_time("nursing", charttime, DAY))
    if span is None:
        assert got is None
        return
    (d0, h0), (d1, h1) = span
    start, end = datetime(2130, 1, d0, h0), datetime(2130, 1, d1, h1)
    assert got is not None and got[0] == start and abs(got[1] - end) <= timedelta(seconds=1)


def test_a_summarys_part_of_a_day_is_its_narratives_not_the_notes():
    # the time resolver dates a summary's "overnight" from the paragraph's latest date
    assert part_of_day_span("overnight", note_time("discharge_summary", None, DAY)) is None


@pytest.mark.parametrize("time_text, window, basis", [
    (None, DEFAULT, "note_day"),
    ("today", TimeSpan("2130-01-11 12:00:00", "2130-01-12 23:59:59"), "relative_day"),
    ("overnight", DEFAULT, "part_of_day"),
    ("[**2130-1-11**]", TimeSpan("2130-01-11 00:00:00", "2130-01-11 23:59:59"), "explicit_date"),
    ("[**2130-1-12**] 06:10", TimeSpan("2130-01-12 00:00:00", "2130-01-12 23:59:59"), "explicit_time"),
    ("[**2130-1-12**] 23:30", TimeSpan("2130-01-12 00:00:00", "2130-01-12 23:59:59"), "later_time"),
    ("[**2130-1-14**]", TimeSpan("2130-01-14 00:00:00", "2130-01-14 23:59:59"), "later_time"),
    ("tomorrow", DEFAULT, "later_time"),
    ("at 0300", DEFAULT, "explicit_time"),
])
def test_time_basis(time_text, window, basis):
    assert basis in TIME_BASES
    assert time_basis(_entity(time_text, window), note_time("physician", EVENING, DAY), SEG) == basis


def test_a_summary_statement_keeps_the_hospitalization():
    stay = TimeSpan("2130-01-10 00:00:00", "2130-01-15 23:59:59")
    e = settle(_entity(None, stay), note_time("discharge_summary", None, "2130-01-15"), dataclasses.replace(
        SEG, default_window=stay))
    assert e.time_basis == "hospitalization" and e.window == stay


def test_settle_ends_windows_at_the_note_and_keeps_a_later_time():
    nt = note_time("nursing", EVENING, DAY)
    assert settle(_entity(), nt, SEG).window == TimeSpan(DEFAULT.start, "2130-01-12 20:00:00")
    later = TimeSpan("2130-01-14 00:00:00", "2130-01-14 23:59:59")
    assert settle(_entity("[**2130-1-14**]", later), nt, SEG).window == later
    shift = settle(_entity("this shift"), nt, SEG)  # the shift's hours give or take the clock tolerance
    assert shift.window == TimeSpan("2130-01-12 05:00:00", "2130-01-12 20:00:00") and shift.time_basis == "part_of_day"
    dated = settle(_entity(None, DEFAULT), note_time("nursing", None, DAY), SEG)
    assert dated.window == TimeSpan(DEFAULT.start, "2130-01-12 23:59:59")


# --- the inspector on a tiny hospital ------------------------------------------------------


@pytest.fixture(scope="module")
def lactate_db(tmp_path_factory) -> Path:
    """The tiny hospital plus patient A's lactates on the 12th: 4.9 at 08:00, 5.5 at 23:30,
    and 5.0 on the 13th."""
    return lactate_hospital(tmp_path_factory.mktemp("note_time"),
                            [(T(12, 8), 4.9), (T(12, 23, 30), 5.5), (T(13, 6), 5.0)])


@pytest.fixture(scope="module")
def inspect(lactate_db):
    from ehrlib.pipeline.context import note_context
    from ehrlib.pipeline.inspector import inspect_note
    from ehrlib.pipeline.params import RunParams
    from ehrlib.pipeline.stages import StageEnv, get_stages
    from ehrlib.tools import make_toolset
    from ehrlib.tools.context import PatientContext

    def run(text: str, note_type: str = "physician", charttime: str | None = EVENING, chartdate: str = DAY):
        with duckdb.connect(str(lactate_db), read_only=True) as con:
            note = Note("n1", A, HA, note_type, chartdate, text, charttime=charttime)
            ctx = note_context(con, note, flavor="mimic3")
            tools = make_toolset(con, PatientContext(A, HA, ctx.admittime, ctx.dischtime, chartdate, ctx.sex))
            stages = get_stages("inspector", "offline", RunParams(method="inspector"))
            result = inspect_note(ctx, stages, StageEnv(con=con, toolset=tools), cache_size=5)
        (p,) = [p for p in result.predictions if p.entity.lower().startswith("lactate")]
        return p

    return run


def test_today_in_an_evening_note_is_not_judged_on_a_later_draw(inspect):
    p = inspect("Lactate peaked at 4.9 today.")
    assert p.label == "consistent", p.reason  # the 5.5 at 23:30 came after the note
    assert p.time_window.end == "2130-01-12 20:00:00" and p.time_basis == "relative_day"


def test_a_note_without_charttime_is_judged_up_to_the_end_of_its_day(inspect):
    p = inspect("Lactate peaked at 4.9 today.", charttime=None)
    assert p.label == "inconsistent"  # the 5.5 at 23:30 is on the note's day
    assert p.time_window.end == "2130-01-12 23:59:59"


def test_a_shift_statement_is_judged_on_the_shift(inspect):
    p = inspect("Lactate 4.9 this shift.", note_type="nursing")
    assert p.label == "consistent" and p.time_basis == "part_of_day"
    assert p.time_window == TimeSpan("2130-01-12 05:00:00", "2130-01-12 20:00:00")
    assert inspect("Lactate 5.5 this shift.", note_type="nursing").label == "inconsistent"


def test_a_statement_naming_a_later_time_keeps_its_window(inspect):
    p = inspect("Lactate 5.0 on [**2130-1-13**].")
    assert p.time_basis == "later_time" and p.label == "consistent"
    assert p.time_window.end == "2130-01-13 23:59:59"


def test_a_discharge_summary_is_unchanged(inspect):
    p = inspect("Lactate peaked at 5.5 during the stay.", note_type="discharge_summary", charttime=None,
                chartdate="2130-01-15")
    assert p.label == "consistent" and p.time_basis == "hospitalization"


# --- invariant over a synthetic corpus -------------------------------------------------------


def test_no_progress_or_nursing_window_reaches_past_the_note(synth_db, tmp_path_factory):
    """Every prediction of a physician or nursing note ends its window by the note's cutoff,
    unless the statement itself names a later time (half the notes are given a morning time)."""
    from ehrlib.corpus.io import load_corpus
    from ehrlib.pipeline.context import note_context
    from ehrlib.pipeline.inspector import inspect_note
    from ehrlib.pipeline.params import RunParams
    from ehrlib.pipeline.stages import StageEnv, get_stages
    from ehrlib.synth.notes import write_corpus
    from ehrlib.tools import make_toolset
    from ehrlib.tools.context import PatientContext

    corpus = load_corpus(write_corpus(synth_db, tmp_path_factory.mktemp("nt_corpus"), seed=4, notes_per_type=3,
                                      note_types=("physician", "nursing"), progress=False))
    stages = get_stages("inspector", "offline", RunParams(method="inspector"))
    checked = 0
    with duckdb.connect(str(synth_db), read_only=True) as con:
        for k, note in enumerate(corpus.notes):
            if k % 2:  # a morning note: its day's later rows are past what it could see
                note = dataclasses.replace(note, charttime=f"{note.chartdate} 07:30:00")
            ctx = note_context(con, note, flavor="mimic3")
            tools = make_toolset(con, PatientContext(note.subject_id, note.hadm_id, ctx.admittime, ctx.dischtime,
                                                     note.chartdate, ctx.sex))
            cutoff = note_time(note.note_type, note.charttime, note.chartdate).cutoff
            assert cutoff is not None
            for p in inspect_note(ctx, stages, StageEnv(con=con, toolset=tools), cache_size=5).predictions:
                assert p.time_basis in TIME_BASES
                if p.time_basis != "later_time" and p.time_window is not None and p.time_window.end:
                    assert p.time_window.end <= f"{cutoff:%Y-%m-%d %H:%M:%S}", (note.note_id, p.entity, p.time_window)
                    checked += 1
    assert checked > 20


def test_entities_of_any_backend_are_settled_when_merged():
    """An LLM extraction leaves the window to the timeline and states only its time words: the
    merge gives it the line's window, cut at the note, and the basis those words tell."""
    from ehrlib.pipeline.inspector import _merge_entities
    from ehrlib.pipeline.stages import Timeline

    llm = (Entity("x1", 0, "lactate", "measurement", time_text="this shift"),
           Entity("x2", 1, "CT head", "procedure", time_text="tomorrow"),
           Entity("x3", 2, "HR", "measurement"))
    seg = dataclasses.replace(SEG, default_window=TimeSpan(DAY, DAY))  # an LLM segmenter's day
    merged = _merge_entities(llm, (), (seg,), Timeline(), "n1", note_time("nursing", EVENING, DAY))
    assert [e.time_basis for e in merged] == ["part_of_day", "later_time", "note_day"]
    assert merged[0].window == TimeSpan("2130-01-12 05:00:00", "2130-01-12 20:00:00")
    assert merged[1].window == TimeSpan(DAY, f"{DAY} 23:59:59")  # its own day, read to its end
    assert merged[2].window == TimeSpan(DAY, "2130-01-12 20:00:00")


def test_a_date_after_the_note_day_is_a_later_time_even_inside_the_slack():
    """A note charted at 23:50 and a value dated the next day: its own day, not the ten minutes
    of it the slack reaches."""
    nt = note_time("physician", f"{DAY} 23:50:00", DAY)
    nxt = TimeSpan("2130-01-13 00:00:00", "2130-01-13 23:59:59")
    e = settle(_entity("[**2130-1-13**]", nxt), nt, SEG)
    assert e.time_basis == "later_time" and e.window == nxt


def test_a_rate_criterion_holds_a_partly_covered_day_to_its_hours():
    """A daily urine rate in a window cut at the note's time: the note's day up to 20:00 is
    20 hours, the next day's first ten minutes too few to judge (states._rate_holds)."""
    from ehrlib.pipeline.offline.verification.states import _hours_in

    window = TimeSpan("2130-01-11 00:00:00", "2130-01-12 20:00:00")
    assert _hours_in("2130-01-11", window) == 24 and _hours_in("2130-01-12", window) == 20
    assert _hours_in("2130-01-13", TimeSpan(None, "2130-01-13 00:10:00")) == pytest.approx(1 / 6)


def test_the_core_day_of_a_cut_window_ends_at_the_note():
    """"lasix held" in a 19:00 note: judged at the end of its day as the note saw it, not at 23:59."""
    from ehrlib.pipeline.offline.verification.windows import core_window

    cut = settle(_entity(), note_time("nursing", EVENING, DAY), SEG).window
    assert core_window(cut) == TimeSpan("2130-01-12 00:00:00", "2130-01-12 20:00:00")
    assert core_window(DEFAULT) == TimeSpan("2130-01-12 00:00:00", "2130-01-12 23:59:59")


def test_a_summary_day_marker_is_its_section_default():
    stay = TimeSpan("2130-01-01 14:00:00", "2130-01-15 12:00:00")
    nt = note_time("discharge_summary", None, "2130-01-15", stay=stay)
    hd3 = TimeSpan("2130-01-02 00:00:00", "2130-01-04 23:59:59")
    assert time_basis(_entity(None, hd3), nt, dataclasses.replace(SEG, default_window=hd3)) == "section_default"
    whole = TimeSpan("2130-01-01 00:00:00", "2130-01-15 23:59:59")
    assert time_basis(_entity(None, whole), nt, dataclasses.replace(SEG, default_window=whole)) == "hospitalization"


def test_initially_is_the_start_of_the_course_its_sentence_dates() -> None:
    from datetime import datetime

    from ehrlib.pipeline.offline.timex import TimeContext, resolve_line

    ctx = TimeContext(datetime(2150, 3, 10, 9, 0), {"admission": datetime(2150, 3, 1, 12, 0)})
    refs = resolve_line("Chest tube placed yesterday, 1.4 L out initially; 300 mL since.", 0, ctx)
    first = next(r for r in refs if r.text == "initially")
    assert first.window.start[:10] == "2150-03-08" and first.window.end[:10] == "2150-03-09"
    # with no earlier time in its sentence it is the admission's start
    refs = resolve_line("Chest tube placed yesterday. Initially 1.4 L out.", 0, ctx)
    first = next(r for r in refs if r.text == "Initially")
    assert (first.anchor, first.window.start[:10]) == ("admission", "2150-02-28")


@pytest.mark.parametrize(("text", "span"), [
    ("UOP 860 cc 2000-0600", ("2130-01-11 20:00:00", "2130-01-12 06:00:00")),   # crosses midnight
    ("I/O (0700-1500): 1200/800", ("2130-01-12 07:00:00", "2130-01-12 15:00:00")),
    ("UOP 500 ml from 19:00 to 07:00", ("2130-01-11 19:00:00", "2130-01-12 07:00:00")),
    ("UOP 1500-2000", None),           # a range of values, not a span of hours
    ("heparin 1000-1200 units/hr", None),
    ("K 3.5-4.0", None),
])
def test_a_span_between_two_clock_times_is_one_window(text, span):
    from ehrlib.pipeline.offline import timex

    ctx = timex.TimeContext(datetime(2130, 1, 12, 16, 0), {})
    found = [(r.window.start, r.window.end) for r in timex.resolve_line(text, 0, ctx) if "-" in r.text
             or " to " in r.text]
    assert found == ([span] if span else [])


def test_a_clock_span_as_a_part_of_the_day_ends_by_the_note():
    nursing = note_time("nursing", f"{DAY} 06:40:00", DAY)
    # a night note written at 06:40 reports the night just ending; a day span of 0700-1500 is yesterday's
    assert part_of_day_span("2000-0600", nursing) == (datetime(2130, 1, 11, 20), datetime(2130, 1, 12, 6))
    assert part_of_day_span("0700-1500", nursing) == (datetime(2130, 1, 11, 7), datetime(2130, 1, 11, 15))
    # "1900-0700" ends within the charting slack of a 06:40 note: the shift that is ending
    assert part_of_day_span("1900-0700", nursing) == (datetime(2130, 1, 11, 19), datetime(2130, 1, 12, 7))
    assert part_of_day_span("20-30", nursing) is None
