"""Known answers for vital-sign lines through the offline extraction (made-up sentences)."""
from __future__ import annotations

import pytest

from ehrlib.pipeline.offline.extract import VALUE_NOT_DATE


@pytest.mark.parametrize("line", [
    "O: Tm 99.1  HR 70-95  RR 5-23  SpO2 94-99% 3L NC",
    "Vitals: HR 71-104, RR 11-25, SpO2 96-100%",
])
def test_a_range_value_is_not_read_as_a_month_day(offline_note, line):
    res = offline_note("v-range", f"ICU progress note\n{line}\n", "2199-02-03")
    vitals = [e for e in res.entities if e.line == 1 and e.kind in ("range", "measurement")]
    assert {e.text for e in vitals} >= {"HR", "RR"}
    for e in vitals:  # the segment's window of the note day, never the 23rd of May or the 25th of November
        assert e.window is not None and e.window.start.startswith("2199-0"), (e.text, e.window)
        assert e.time_text is None
    assert VALUE_NOT_DATE.rule_id == "extract.value_not_date"


def test_a_written_date_still_dates_its_value(offline_note):
    res = offline_note("v-date", "ICU progress note\nK 3.1 on [**2199-2-2**], repleted.\n", "2199-02-03")
    k = next(e for e in res.entities if e.text == "K")
    assert k.window is not None and k.window.start.startswith("2199-02-02")


def test_a_rhythm_pair_shares_its_rate():
    from ehrlib.pipeline.offline.lexicon import load_lexicon
    from ehrlib.pipeline.offline.mentions import find_mentions

    text = "CV: SR/ST 88-121, rare PACs."
    rate = next(m for m in find_mentions(text, 0, load_lexicon(), [], "nursing_system") if m.concept == "heart_rate")
    assert (rate.text, rate.value, text[rate.end - 1]) == ("SR rate", "88-121", "1")  # the span ends at the value


def test_a_time_inside_a_findings_words_is_that_findings(offline_note):
    text = "ICU progress note\nTmax 99.0  HR 70-110, ST overnight -> SR this AM with\nABP 95-130, no pressors\n"
    res = offline_note("v-claimed", text, "2199-02-03")
    abp = next(e for e in res.entities if e.text == "ABP")
    assert abp.time_text is None  # "overnight" and "this AM" date the rhythms, not the pressure
    assert {e.time_text for e in res.entities if e.text in ("ST", "SR")} == {"overnight", "this AM"}
