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
