"""Known answers for which time expression governs a statement (ehrlib.pipeline.offline.extract)."""
from __future__ import annotations

from ehrlib.corpus.records import TimeSpan
from ehrlib.pipeline.offline.extract import _governing_ref
from ehrlib.pipeline.offline.lexicon import load_lexicon
from ehrlib.pipeline.offline.mentions import find_mentions
from ehrlib.pipeline.records import TimeRef


def test_a_time_inside_another_statement_is_that_statements_own() -> None:
    text = "esmolol weaned 100 -> 50 mcg/kg/min and off by 1630 today"
    ms = [m for m in find_mentions(text, 0, load_lexicon(), ("Esmolol",), "other") if m.concept == "drug"]
    at = text.index("1630")
    ref = TimeRef(0, "by 1630", TimeSpan("2199-02-03 16:30:00", "2199-02-03 16:30:00"), span=(at - 3, at + 4))
    drug, stop = ms[0], ms[-1]
    assert stop.text == "off by 1630"
    assert _governing_ref(stop, [ref], text, ms) is ref
    assert _governing_ref(drug, [ref], text, ms) is None


def test_a_date_inside_a_culture_statement_is_the_cultures() -> None:
    # the culture's collection date does not date the drug started after its result
    text = "Urine cx from 4/12 grew Serratia, started on cefepime."
    ms = find_mentions(text, 0, load_lexicon(), ("Cefepime",), "other")
    culture = next(m for m in ms if m.kind == "microbiology")
    drug = next(m for m in ms if m.kind == "medication")
    at = text.index("4/12")
    ref = TimeRef(0, "4/12", TimeSpan("2150-04-12 00:00:00", "2150-04-12 23:59:59"), span=(at, at + 4))
    assert culture.start < at < culture.end
    assert _governing_ref(culture, [ref], text, ms) is ref
    assert _governing_ref(drug, [ref], text, ms) is None


def test_a_susceptibility_takes_its_cultures_time() -> None:
    text = "MSSA bacteremia 4/2 (blood cx levo S, oxacillin S), done."
    ms = find_mentions(text, 0, load_lexicon(), (), "other")
    at = text.index("4/2")
    ref = TimeRef(0, "4/2", TimeSpan("2150-04-02 00:00:00", "2150-04-02 23:59:59"), span=(at, at + 3))
    sus = [m for m in ms if m.kind == "microbiology" and m.value in ("S", "R", "I")]
    assert [m.text for m in sus] == ["levo", "oxacillin"]
    assert all(_governing_ref(m, [ref], text, ms) is ref for m in sus)


def test_pod_counts_from_the_tables_operation_when_the_note_dates_none() -> None:
    from ehrlib.corpus.records import Note
    from ehrlib.pipeline.offline.extract import time_context
    from ehrlib.pipeline.offline.timex import resolve_line
    from ehrlib.pipeline.stages import NoteContext

    note = Note("n", 1, 1, "discharge_summary", "2150-01-09", "K 3.2 on POD 2, repleted.")
    ctx = NoteContext(note, 1, 1, admittime="2150-01-01 10:00:00", dischtime="2150-01-09 12:00:00",
                      surgery_time="2150-01-03 09:30:00")
    refs = resolve_line(note.text, 0, time_context(ctx))
    assert [(r.anchor, r.window.start[:10], r.window.end[:10]) for r in refs] == [("surgery", "2150-01-04",
                                                                                   "2150-01-06")]
    undated = NoteContext(note, 1, 1, admittime="2150-01-01 10:00:00", dischtime="2150-01-09 12:00:00")
    assert resolve_line(note.text, 0, time_context(undated)) == []


def test_an_organism_added_to_a_report_takes_its_cultures_time() -> None:
    from ehrlib.pipeline.offline.mention import clean_line

    text = clean_line("Sputum [**5-5**] Pseudomonas - S to cefepime; R to cipro, also Staph aureus, MSSA; vanc S")
    ms = find_mentions(text, 0, load_lexicon(), (), "other")
    at = text.index("5-5")
    ref = TimeRef(0, "5-5", TimeSpan("2150-05-05 00:00:00", "2150-05-05 23:59:59"), span=(at, at + 3))
    later = [m for m in ms if m.kind == "microbiology" and m.text in ("cipro", "Staph aureus", "MSSA", "vanc")]
    assert [m.text for m in later] == ["cipro", "Staph aureus", "MSSA", "vanc"]
    assert all(_governing_ref(m, [ref], text, ms) is ref for m in later)


def test_a_time_in_an_aside_does_not_date_the_values_around_it() -> None:
    text = "Ca 7.8  Mg 1.8  Phos 2.7 (was 1.6 yesterday)  Alb 2.9"
    ms = find_mentions(text, 0, load_lexicon(), (), "other")
    at = text.index("yesterday")
    ref = TimeRef(0, "yesterday", TimeSpan("2150-04-11 12:00:00", "2150-04-11 23:59:59"), span=(at, at + 9))
    ca = next(m for m in ms if m.text.startswith("Ca"))
    assert _governing_ref(ca, [ref], text, ms) is None
    # outside parentheses the same time still dates the statement before it
    plain = "Ca 7.8 yesterday"
    ms = find_mentions(plain, 0, load_lexicon(), (), "other")
    ref = TimeRef(0, "yesterday", ref.window, span=(7, 16))
    assert _governing_ref(ms[0], [ref], plain, ms) is ref


def _day(text: str, needle: str, day: str) -> TimeRef:
    at = text.index(needle)
    return TimeRef(0, needle, TimeSpan(f"{day} 00:00:00", f"{day} 23:59:59"), span=(at, at + len(needle)))


def test_a_time_after_a_clause_break_dates_the_later_clause_only() -> None:
    text = "Lactate fell from 3.9 to 1.2 by evening, and a repeat on 6/14 was 1.3 (venous)."
    ms = find_mentions(text, 0, load_lexicon(), (), "other")
    ref = _day(text, "6/14", "2150-06-14")
    by_value = {m.value.split()[0]: m for m in ms if m.concept == "lactate" and m.value}
    assert set(by_value) >= {"3.9", "1.2", "1.3"}
    assert _governing_ref(by_value["1.2"], [ref], text, ms) is None
    assert _governing_ref(by_value["3.9"], [ref], text, ms) is None
    # the same time inside the statement's own clause still dates it
    own = "Lactate 1.2 on 6/14, improving."
    ms = find_mentions(own, 0, load_lexicon(), (), "other")
    ref = _day(own, "6/14", "2150-06-14")
    assert _governing_ref(next(m for m in ms if m.concept == "lactate"), [ref], own, ms) is ref


def test_the_time_after_a_change_dates_its_end_value_not_its_start() -> None:
    text = "Creatinine climbed from 1.4 to a peak of 3.8 on 5/20."
    ms = [m for m in find_mentions(text, 0, load_lexicon(), (), "other") if m.concept == "creatinine"]
    ref = _day(text, "5/20", "2150-05-20")
    start, end = ms[0], ms[-1]
    assert (start.value, end.value) == ("1.4", "3.8")
    assert _governing_ref(end, [ref], text, ms) is ref
    assert _governing_ref(start, [ref], text, ms) is None
    # a date written before the change still dates where it started
    early = "On 5/16 creatinine climbed from 1.4 to a peak of 3.8 on 5/20."
    ms = [m for m in find_mentions(early, 0, load_lexicon(), (), "other") if m.concept == "creatinine"]
    first, last = _day(early, "5/16", "2150-05-16"), _day(early, "5/20", "2150-05-20")
    assert _governing_ref(ms[0], [first, last], early, ms) is first


def test_a_time_opening_a_predicate_after_a_comma_is_not_the_earlier_statements() -> None:
    text = "Known cirrhosis, intubated, now septic."
    ms = find_mentions(text, 0, load_lexicon(), (), "other")
    tube = next(m for m in ms if m.concept == "intubation")
    at = text.index(" now") + 1
    now = TimeRef(0, "now", TimeSpan("2150-05-20 00:00:00", "2150-05-20 23:59:59"), "note", (at, at + 3))
    assert _governing_ref(tube, [now], text, ms) is None
    # a time set off by a comma with nothing of its own after it still dates the statement
    text = "Known cirrhosis, intubated, today."
    ms = find_mentions(text, 0, load_lexicon(), (), "other")
    at = text.index("today")
    today = TimeRef(0, "today", now.window, "note", (at, at + 5))
    assert _governing_ref(next(m for m in ms if m.concept == "intubation"), [today], text, ms) is today


def test_a_date_written_as_part_of_a_tests_name_is_that_tests() -> None:
    text = "The 7/2 blood culture grew Enterococcus, and she was switched to linezolid."
    ms = find_mentions(text, 0, load_lexicon(), ("Linezolid",), "other")
    ref = _day(text, "7/2", "2150-07-02")
    culture = next(m for m in ms if m.kind == "microbiology")
    drug = next(m for m in ms if m.kind == "medication")
    assert _governing_ref(culture, [ref], text, ms) is ref
    assert _governing_ref(drug, [ref], text, ms) is None
    # led by a preposition the date is the sentence's: it dates the drug too
    text = "On 7/2 blood cultures were sent and she was started on linezolid."
    ms = find_mentions(text, 0, load_lexicon(), ("Linezolid",), "other")
    ref = _day(text, "7/2", "2150-07-02")
    assert _governing_ref(next(m for m in ms if m.kind == "medication"), [ref], text, ms) is ref


def test_a_relative_clause_tells_the_same_statement() -> None:
    text = "She was started on cefepime 2 g q8h, which was stopped on 6/20."
    ms = find_mentions(text, 0, load_lexicon(), ("Cefepime",), "other")
    ref = _day(text, "6/20", "2150-06-20")
    assert _governing_ref(next(m for m in ms if m.kind == "medication"), [ref], text, ms) is ref


def test_a_time_alone_in_parentheses_does_not_date_a_later_statement() -> None:
    text = "Night report (+ events overnight) Pt with cirrhosis, intubated for airway protection."
    ms = find_mentions(text, 0, load_lexicon(), (), "other")
    at = text.index("overnight")
    night = TimeRef(0, "overnight", TimeSpan("2150-05-19 18:00:00", "2150-05-20 08:00:00"), "note", (at, at + 9))
    assert _governing_ref(next(m for m in ms if m.concept == "intubation"), [night], text, ms) is None
    # outside parentheses the same time still dates what follows it
    text = "Overnight pt was intubated for airway protection."
    ms = find_mentions(text, 0, load_lexicon(), (), "other")
    night = TimeRef(0, "Overnight", night.window, "note", (0, 9))
    assert _governing_ref(next(m for m in ms if m.concept == "intubation"), [night], text, ms) is night


def test_a_change_statement_takes_its_course_and_its_end_value_the_date() -> None:
    from datetime import datetime

    from ehrlib.pipeline.offline.statement_time import bounded
    from ehrlib.pipeline.offline.timex import TimeContext, resolve_line

    ctx = TimeContext(datetime(2145, 4, 15), {"admission": datetime(2145, 4, 2, 10)})

    def windows(text: str) -> list[tuple[str, str, str] | None]:
        refs = bounded(text, resolve_line(text, 0, ctx), stay_start=datetime(2145, 4, 2, 10), reference=ctx.reference)
        ms = [m for m in find_mentions(text, 0, load_lexicon(), (), "other") if m.concept == "ldh"]
        got = [(m, _governing_ref(m, refs, text, ms)) for m in ms]
        return [(m.kind, r.window.start[:10], r.window.end[:10]) if r else None for m, r in got]

    # the trend is judged over the course; its start value anywhere in it; the peak on its day
    assert windows("LDH climbed steadily from 410 to a peak of 1,380 on [**4-12**].") == [
        ("trend", "2145-04-02", "2145-04-12")]
    assert windows("LDH climbed from 410 to a peak of 1,380 on [**4-12**].") == [
        ("measurement", "2145-04-02", "2145-04-12"), ("measurement", "2145-04-12", "2145-04-12")]
