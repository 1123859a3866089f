"""Known answers for statement time attachment, bounds and courses
(ehrlib.pipeline.offline.statement_time)."""
from __future__ import annotations

from datetime import datetime

from ehrlib.corpus.records import TimeSpan
from ehrlib.pipeline.offline.statement_time import (
    STAMP_RULE,
    bounded,
    clause_of,
    courses,
    in_aside,
    is_stamped,
    stamp_ref,
    statement_ref,
)
from ehrlib.pipeline.offline.timex import TimeContext, resolve_line

ADMIT = datetime(2145, 4, 8, 14, 0)
CTX = TimeContext(datetime(2145, 4, 15), {"admission": ADMIT})


def _refs(text):
    return resolve_line(text, 0, CTX)


def _day(d):
    return TimeSpan(f"2145-04-{d:02d} 00:00:00", f"2145-04-{d:02d} 23:59:59")


def _at(text, word, refs=None):
    i = text.index(word)
    r = statement_ref(text, i, i + len(word), _refs(text) if refs is None else refs)
    return r.window if r else None


def test_date_inside_a_sentence_dates_its_clause():
    text = "Cr peaked at 2.3 on [**4-11**], and K was 3.1 on [**4-13**]."
    assert _at(text, "Cr") == _day(11)
    assert _at(text, "K was") == _day(13)


def test_bare_stamp_after_a_value():
    assert _at("K 3.1 [**2145-4-9**]", "K") == _day(9)


def test_one_date_in_the_sentence_reaches_an_undated_clause():
    assert _at("Started on vanc [**4-10**] and then zosyn was added.", "zosyn") == _day(10)


def test_two_dates_elsewhere_in_the_sentence_date_nothing():
    text = "Cr 1.4 on [**4-9**], 1.9 on [**4-11**], and then lasix was held"
    assert _at(text, "lasix") is None


def test_clause_boundaries():
    text = "BP low; started levophed, then weaned off"
    assert text[slice(*clause_of(text, text.index("levophed")))].strip() == "started levophed"


def test_by_ends_at_the_date():
    for prep in ("by", "up to"):
        text = f"extubated {prep} [**4-12**]"
        (r,) = bounded(text, _refs(text), stay_start=ADMIT, reference=CTX.reference)
        assert r.window == TimeSpan("2145-04-08 14:00:00", "2145-04-12 23:59:59"), prep
        assert r.text.startswith(prep)


def test_through_and_until_keep_the_day_they_name():
    for prep in ("through", "until", "thru"):
        text = f"remained febrile {prep} [**4-12**]"
        (r,) = bounded(text, _refs(text), stay_start=ADMIT, reference=CTX.reference)
        assert r.window == _day(12), prep


def test_since_and_before():
    text = "afebrile since [**4-10**]"
    (r,) = bounded(text, _refs(text), stay_start=ADMIT, reference=CTX.reference)
    assert r.window == TimeSpan("2145-04-10 00:00:00", "2145-04-15 00:00:00")
    text = "no fevers prior to [**4-10**]"
    (r,) = bounded(text, _refs(text), stay_start=ADMIT, reference=CTX.reference)
    assert r.window == TimeSpan("2145-04-08 14:00:00", "2145-04-10 00:00:00")


def test_a_change_from_a_dated_value_runs_to_the_note():
    text = "bili improving from 6.0 [**4-12**]"
    (r,) = bounded(text, _refs(text), stay_start=ADMIT, reference=CTX.reference)
    assert r.window == TimeSpan("2145-04-12 00:00:00", "2145-04-15 23:59:59")
    text = "bili 6.0 [**4-12**]"  # no change stated: the day alone
    (r,) = bounded(text, _refs(text), stay_start=ADMIT, reference=CTX.reference)
    assert r.window == TimeSpan("2145-04-12 00:00:00", "2145-04-12 23:59:59")


def test_a_direction_from_a_date_runs_to_the_note():
    text = "Hgb stable from [**4-12**]"
    (r,) = bounded(text, _refs(text), stay_start=ADMIT, reference=CTX.reference)
    assert r.window == TimeSpan("2145-04-12 00:00:00", "2145-04-15 23:59:59")
    text = "transferred from [**4-12**] OSH"  # no direction before "from": the day alone
    (r,) = bounded(text, _refs(text), stay_start=ADMIT, reference=CTX.reference)
    assert r.window == _day(12)


def test_a_time_inside_an_aside_dates_the_aside_only():
    text = "Ca 7.8  Phos 2.7 (was 1.6 yesterday)  Alb 2.9"
    at = text.index("yesterday")
    span = (at, at + len("yesterday"))
    assert in_aside(text, span, text.index("Ca"))
    assert in_aside(text, span, text.index("Alb"))
    assert not in_aside(text, span, text.index("1.6"))  # the aside's own value
    assert not in_aside("Ca 7.8 yesterday", (7, 16), 0)
    # a time alone in the parentheses annotates the statement before them
    text = "Lines: R IJ TLC ([**12-13**]), A-line ([**12-15**])"
    at = text.index("[**12-13")
    assert not in_aside(text, (at, at + len("[**12-13**]")), text.index("R IJ"))


def test_from_date_to_date_is_one_span():
    text = "Vanc from [**4-9**] to [**4-13**] for MRSA"
    (r,) = bounded(text, _refs(text), stay_start=ADMIT, reference=CTX.reference)
    assert r.window == TimeSpan("2145-04-09 00:00:00", "2145-04-13 23:59:59")


def test_plain_on_date_is_unchanged():
    text = "intubated on [**4-9**]"
    assert bounded(text, _refs(text), stay_start=ADMIT, reference=CTX.reference) == _refs(text)


def test_course_with_its_end_time():
    text = "FiO2 weaned from 40% to 30% by [**4-11**], extubated [**4-12**]"
    (c,) = courses(text, _refs(text))
    assert (c.verb, c.start_value, c.end_value, c.direction) == ("weaned", 40.0, 30.0, "down")
    assert c.when is not None and c.when.window == _day(11)


def test_course_without_a_time_and_upward():
    (c,) = courses("levophed titrated up from 0.05 to 0.2 mcg/kg/min overnight")
    assert (c.start_value, c.end_value, c.direction, c.when) == (0.05, 0.2, "up", None)
    assert courses("K 3.1 this am") == []


def test_rule_states_its_principle():
    from ehrlib.pipeline.offline.statement_time import RULE

    assert RULE.rule_id == "time.preposition_bounds" and "'by D' ends at D" in RULE.principle


def test_a_results_record_stamp_times_the_whole_line():
    line = "[**2145-4-10**] 04:12AM BLOOD WBC-7.7 RBC-3.01* Hgb-9.2* Hct-27.4* MCV-91 MCH-30.6 Plt Ct-188"
    assert is_stamped(line) and is_stamped("___ 11:58PM BLOOD Glucose-98 UreaN-19")
    stamp = stamp_ref(line, _refs(line))
    assert stamp is not None and stamp.window == _day(10)
    # a stamp with no date (de-identified) gives no time: the segment's window applies
    assert stamp_ref("___ 11:58PM BLOOD Glucose-98 UreaN-19", _refs("___ 11:58PM BLOOD Glucose-98")) is None
    # narrative lines are no records, even when they start with a date
    assert not is_stamped("[**4-10**] intubated for airway protection")
    assert not is_stamped("K 3.4 at 04:12 this morning")
    assert STAMP_RULE.rule_id == "time.record_stamp"


def test_an_analyte_name_ending_in_a_digit_is_no_date():
    # "HCO3-24" is bicarbonate 24, not March 24
    assert _refs("Na-139 K-4.0 Cl-101 HCO3-24 AnGap-14") == []


def test_a_stamp_clock_is_read_even_without_a_date():
    from ehrlib.pipeline.offline.statement_time import STAMP_CLOCK_RULE, stamp_clock
    assert stamp_clock("___ 11:34PM BLOOD Creat-2.1* K-4.0") == (23, 34)
    assert stamp_clock("[**2101-3-4**] 12:05AM BLOOD WBC-9.1") == (0, 5)
    assert stamp_clock("K 4.0 at 11:34PM") is None  # no results record
    assert STAMP_CLOCK_RULE.rule_id == "time.record_stamp_clock"


def test_on_adm_is_the_admission():
    refs = _refs("WBC 12.1 (9.0 on adm)")
    assert refs and refs[0].anchor == "admission"


def test_a_change_from_a_value_at_one_time_to_a_value_at_another_spans_both():
    text = "Cr crept up from 0.9 on [**4-9**] to 1.6 on [**4-13**]"
    (r,) = bounded(text, _refs(text), stay_start=ADMIT, reference=CTX.reference)
    assert r.window == TimeSpan("2145-04-09 00:00:00", "2145-04-13 23:59:59") and r.text.startswith("from 0.9")
    two = "Cr 0.9 on [**4-9**], 1.6 on [**4-13**]"  # two values, each with its own date
    assert len(bounded(two, _refs(two), stay_start=ADMIT, reference=CTX.reference)) == 2


def test_a_change_told_by_its_endpoints_runs_over_the_course_to_its_dated_end() -> None:
    text = "LDH climbed from 410 to a peak of 1,380 on [**4-12**]."
    refs = bounded(text, _refs(text), stay_start=ADMIT, reference=CTX.reference)
    course, end = refs
    assert course.span == (text.index("from"), text.index("from") + 4)
    assert (course.window.start, course.window.end) == (ADMIT.strftime("%Y-%m-%d %H:%M:%S"), "2145-04-12 23:59:59")
    assert (end.window.start, end.window.end) == ("2145-04-12 00:00:00", "2145-04-12 23:59:59")
    # a date with no change before it is its own day only
    (only,) = bounded("LDH 1,380 on [**4-12**].", _refs("LDH 1,380 on [**4-12**]."), stay_start=ADMIT,
                      reference=CTX.reference)
    assert only.window.start == "2145-04-12 00:00:00"


def test_a_results_record_may_name_its_specimen_before_its_stamp():
    assert is_stamped("PLEURAL FLUID ___ 08:38AM: WBC-1250 RBC-2000 Polys-12 Lymphs-70")
    assert is_stamped("ASCITES [**2150-3-4**] 10:15AM TotProt-1.2 Glucose-110")
    # prose before a date is no specimen name
    assert not is_stamped("Tapped on [**2150-3-4**] 10:15AM with good relief")
