"""Known answers for which moment of the stay a relative phrase counts from (.stay_anchors, .timex)."""
from __future__ import annotations

from ehrlib.corpus.records import TimeSpan
from ehrlib.pipeline.offline.sections import note_time_context
from ehrlib.pipeline.offline.stay_anchors import latest_arrival, stay_at, stays_span
from ehrlib.pipeline.offline.timex import parse_datetime, resolve_line

ADMIT, DISCH = "2150-03-01 14:00:00", "2150-03-20 12:00:00"
#: two ICU stays: after admission, and a readmission to the unit on 03-12
STAYS = (TimeSpan("2150-03-01 20:00:00", "2150-03-05 10:00:00"), TimeSpan("2150-03-12 16:00:00", "2150-03-15 09:00:00"))


def _summary():
    return note_time_context("discharge_summary", ADMIT, DISCH, None, icu_stays=STAYS)


def _progress(day: str):
    return note_time_context("physician", ADMIT, DISCH, day, icu_stays=STAYS)


def _ref(text: str, words: str, ctx):
    return next(r for r in resolve_line(text, 0, ctx) if r.text.lower() == words.lower())


def test_a_summarys_part_of_the_day_counts_from_the_paragraphs_latest_date():
    text = "Pressors were weaned off by the morning of [**3-4**]. He got 2 L LR in boluses overnight."
    w = _ref(text, "overnight", _summary()).window
    assert w.start <= "2150-03-03 12:00:00" and w.end == "2150-03-04 23:59:59"
    # the same words in a progress note count from the note's own day
    assert _ref("He got 2 L LR in boluses overnight.", "overnight", _progress("2150-03-10")).window.end \
        == "2150-03-10 23:59:59"


def test_a_summarys_relative_words_without_a_date_name_no_day():
    ctx = _summary()
    assert [r.text for r in resolve_line("He got 2 L LR in boluses overnight; given lasix at 2300.", 0, ctx)] == []
    # words that name the time of writing still mean the discharge
    assert _ref("Currently on room air.", "Currently", ctx).window.end.startswith("2150-03-20")


def test_in_the_icu_is_the_stay_not_its_first_day():
    w = _ref("Agitation in the SICU treated with haloperidol.", "in the SICU", _summary()).window
    assert (w.start, w.end) == ("2150-03-01 20:00:00", "2150-03-15 09:00:00")  # no date: every stay
    text = "On [**3-13**] she was agitated in the SICU."
    assert _ref(text, "in the SICU", _summary()).window == STAYS[1]
    assert _ref("Remains intubated in the MICU.", "in the MICU", _progress("2150-03-03")).window == STAYS[0]


def test_arrival_to_the_icu_is_the_start_of_the_stay_the_narrative_is_at():
    text = "On [**3-12**] she became hypotensive and was readmitted. On arrival to the SICU she was in sinus rhythm."
    w = _ref(text, "On arrival to the SICU", _summary()).window
    assert w.start == "2150-03-11 00:00:00" and w.end == "2150-03-13 23:59:59"  # 03-12, widened a day
    # with no date before it, the first stay's start (as before)
    w = _ref("On arrival to the SICU she was in sinus rhythm.", "On arrival to the SICU", _summary()).window
    assert w.start == "2150-02-28 00:00:00"


def test_a_progress_notes_arrival_is_the_latest_arrival_by_its_day():
    w = _ref("LR 500 cc bolus on arrival.", "on arrival", _progress("2150-03-13")).window
    assert w.start == "2150-03-11 00:00:00"  # the readmission to the unit on 03-12
    w = _ref("LR 500 cc bolus on arrival.", "on arrival", _progress("2150-03-02")).window
    assert w.start == "2150-02-28 00:00:00"  # the admission on 03-01 (the unit on the same day)
    # "on arrival to the ED" is the hospital's
    w = _ref("BP 80/40 on arrival to the ED.", "on arrival", _progress("2150-03-13")).window
    assert w.start == "2150-02-28 00:00:00"


def test_the_following_day_counts_from_the_latest_time_of_its_own_text():
    previous = TimeSpan("2150-03-02 00:00:00", "2150-03-02 23:59:59")
    refs = resolve_line("Extubated on [**3-8**]; the following day started on diet.", 0, _summary(), (), previous)
    nxt = next(r for r in refs if "following" in r.text)
    assert nxt.window.start == "2150-03-09 00:00:00"
    refs = resolve_line("The following day started on diet.", 0, _summary(), (), previous)
    assert refs[0].window.start == "2150-03-03 00:00:00"  # nothing before it in the text: the previous one


def test_stay_helpers():
    assert stay_at(STAYS, parse_datetime("2150-03-13 08:00")) == STAYS[1]
    assert stay_at(STAYS, parse_datetime("2150-03-08")) == STAYS[0]  # between stays: the one started last
    assert stay_at(STAYS, parse_datetime("2150-02-20")) is None and stay_at(STAYS, None) is None
    assert stays_span(STAYS) == TimeSpan(STAYS[0].start, STAYS[1].end) and stays_span(()) is None
    admit = parse_datetime(ADMIT)
    assert latest_arrival(admit, STAYS, parse_datetime("2150-03-14")) == parse_datetime(STAYS[1].start)
    assert latest_arrival(admit, (), parse_datetime("2150-03-14")) == admit
