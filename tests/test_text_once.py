"""Known answers for the shared per-line work of the offline extractor: blank lines skipped
up front, each paragraph's mentions found once for both extraction steps, memoised parses.
"""
from __future__ import annotations

from datetime import datetime

from ehrlib.corpus.records import TimeSpan
from ehrlib.pipeline.offline import extract
from ehrlib.pipeline.offline.lexicon import load_lexicon
from ehrlib.pipeline.offline.mentions import find_mentions
from ehrlib.pipeline.offline.paragraphs import paragraphs
from ehrlib.pipeline.offline.sections import segment_lines
from ehrlib.pipeline.offline.timex import TimeContext, parse_datetime, resolve_line
from ehrlib.pipeline.records import Segment

CTX = TimeContext(datetime(2150, 3, 10), {"admission": datetime(2150, 3, 5, 9, 0)})
BLANKS = ("", " ", "\t", "   \t  \x0b\x0c\r", "\u00a0\u2003")


def test_blank_lines_make_no_paragraph_and_split_the_others():
    lines = ["HR 88 this morning, BP 120/80, afebrile, good urine output overnight and", "stable.",
             *BLANKS, "K 3.1"]
    got = paragraphs(lines, Segment(0, 0, len(lines) - 1, "x"))
    assert [p.lines for p in got] == [(0, 1), (len(lines) - 1,)]
    assert got[1].text == "K 3.1"


def test_a_line_of_values_ends_its_statements_before_a_line_that_opens_with_an_item():
    lines = ["  142 | 107 | 24 < 140    K 3.6 CO2 27 Cr 1 Ca 8.1 Mg 2.3 PO4 5.6",
             "  Hgb stable from last evening, plt climbing; glucose rising.",
             "Creatinine rose over the admission from a baseline of 1.0 to a peak of 2.9 on",
             "HD 4 and then fell to 1.4 by discharge after fluids and holding the lisinopril 20",
             "mg daily."]
    got = paragraphs(lines, Segment(0, 0, len(lines) - 1, "x"))
    # "Hgb stable from last evening" is Hgb's own statement (its time is not the values' above);
    # a sentence wrapped after a word, or after a number the next line's unit goes on from, still joins
    assert [p.lines for p in got] == [(0,), (1,), (2, 3, 4)]
    values = ["Na 138 K 4.4 Cl 103 HCO3 29 BUN 31 Cr 0.7 Mg 3.1 and on the repeat K 4.4", "Mg 2.0 at noon"]
    assert [p.lines for p in paragraphs(values, Segment(0, 0, 1, "x"))] == [(0,), (1,)]


def test_blank_lines_hold_no_time_and_no_heading():
    for text in BLANKS:
        assert resolve_line(text, 0, CTX) == []
    assert [r.text for r in resolve_line("on HD 3", 0, CTX)] == ["HD 3"]
    lines = ["", "HPI:", "  ", "pt with fever", "", "Hospital Course:", "\t", "got abx"]
    segs = segment_lines(lines, "discharge_summary", TimeSpan("2150-03-05 09:00:00", "2150-03-12 12:00:00"),
                         None, CTX)
    assert [(s.start_line, s.end_line, s.section) for s in segs] == [
        (0, 0, "admission_info"), (1, 4, "hpi"), (5, 7, "hospital_course")]


def test_both_extraction_steps_get_the_same_mentions_in_a_fresh_list():
    lex = load_lexicon()
    text, drugs = "Lasix 40 mg IV given, K 3.1 repleted, HR 88", ["Furosemide", "Potassium Chloride"]
    first = extract._found(text, 4, lex, drugs, "hospital_course")
    again = extract._found(text, 4, lex, tuple(drugs), "hospital_course")
    assert first == again == find_mentions(text, 4, lex, drugs, "hospital_course")
    assert first is not again and {m.kind for m in first} >= {"medication", "measurement"}
    first.clear()  # a caller's list is its own
    assert extract._found(text, 4, lex, drugs, "hospital_course") == again


def test_parsed_times_are_the_same_memoised():
    assert parse_datetime("2150-03-05T09:00:00") == datetime(2150, 3, 5, 9, 0)
    assert parse_datetime(" 2150-03-05 ") == datetime(2150, 3, 5)
    assert parse_datetime("2150-03-05 09:00") == parse_datetime("2150-03-05 09:00") == datetime(2150, 3, 5, 9, 0)
    assert parse_datetime("not a time") is None and parse_datetime(None) is None and parse_datetime("") is None
