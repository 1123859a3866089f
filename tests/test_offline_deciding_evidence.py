"""Known-answer tests: a verdict's deciding rows come first in its evidence, and its reason
says what was compared with what, numbers written without float noise.
"""
from __future__ import annotations

import pytest
from verification_kit import FakeTools, assert_decided, entity, row, verify

from ehrlib.corpus.records import RowRef, TimeSpan
from ehrlib.pipeline.offline.verification.deciding import default_deciding, nearest_in_time, num, span
from ehrlib.pipeline.offline.verification.session import MAX_EVIDENCE, evidence


def _ref(r: dict) -> RowRef:
    return RowRef(r["table"], r["row_id"])


def _rows(values: list[float], day: str = "2199-02-03", label: str = "Heart Rate") -> list[dict]:
    return [row(f"{day} {i // 60:02d}:{i % 60:02d}:00", v, label=label) for i, v in enumerate(values)]


def test_the_deciding_row_beyond_the_cap_comes_first():
    # eleven rows near 80 and a twelfth at 120: the stated 140 is not charted, and 120 (the
    # nearest charted value) shows it; the old evidence (the window's first rows) left it out
    rows = _rows([80.0] * 11 + [120.0])
    v = verify(entity("HR", "measurement", concept="heart_rate", value=140.0), FakeTools({"chartevents:1": rows}))
    assert_decided(v, "numbers.value_in_window", "inconsistent", "contradiction")
    assert v.deciding_row_ids == (_ref(rows[11]),)
    assert v.evidence_row_ids[0] == _ref(rows[11]) and len(v.evidence_row_ids) <= MAX_EVIDENCE
    assert "stated 140 vs closest charted 120 (Heart Rate, 2199-02-03 00:11)" in v.reason


def test_a_range_broken_by_its_maximum_lists_the_max_row_first():
    rows = _rows([67.0, 80.0, 91.0, 110.0, 85.0])
    v = verify(entity("HR", "range", concept="heart_rate", min=67.0, max=91.0), FakeTools({"chartevents:1": rows}))
    assert_decided(v, "numbers.range_extremes", "inconsistent", "contradiction")
    assert v.deciding_row_ids == (_ref(rows[3]),) and v.evidence_row_ids[0] == _ref(rows[3])
    assert "stated 67-91 vs charted range 67-110 (Heart Rate, 2199-02-03 00:03)" in v.reason


def test_a_consistent_value_lists_the_nearest_agreeing_row_first():
    # 75 and 77 both agree with 76 within the tolerance; 76.4 is nearer in value
    rows = _rows([60.0, 75.0, 90.0, 76.4, 77.0])
    v = verify(entity("HR", "measurement", concept="heart_rate", value=76.0), FakeTools({"chartevents:1": rows}))
    assert_decided(v, "numbers.value_in_window", "consistent")
    assert v.deciding_row_ids == (_ref(rows[3]),) and v.evidence_row_ids[0] == _ref(rows[3])
    assert "stated 76 vs charted 76.4" in v.reason


def test_equal_values_are_told_apart_by_time():
    # the same value on the statement's day and two days before: the one in the core window decides
    early = row("2199-01-30 08:00:00", 76.0)
    inside = row("2199-02-03 08:00:00", 76.0)
    e = entity("HR", "measurement", concept="heart_rate", value=76.0,
               window=TimeSpan("2199-02-03 00:00:00", "2199-02-03 23:59:59"))
    assert default_deciding(e, [early, inside]) == [inside]
    assert nearest_in_time([early, inside], e.window) == [inside]


def test_a_missing_verdict_has_no_deciding_rows():
    v = verify(entity("HR", "measurement", concept="heart_rate", value=75.0),
               FakeTools({"chartevents:1": _rows([75.0], day="2199-02-09")}))
    assert_decided(v, "numbers.no_record", "inconsistent", "missing")
    assert v.deciding_row_ids == ()


def test_a_period_bound_lists_the_value_beyond_it_first():
    rows = [row(f"2199-02-03 {h:02d}:00:00", v, label="Arterial BP Mean") for h, v in
            enumerate([80.0, 72.0, 70.0, 58.0, 75.0, 61.0])]
    v = verify(entity("MAPs", "measurement", concept="map", min=65.0, bound=True), FakeTools({"chartevents:1": rows}))
    assert_decided(v, "numbers.period_bound", "inconsistent", "contradiction")
    assert v.deciding_row_ids == (_ref(rows[3]),) and v.evidence_row_ids[0] == _ref(rows[3])
    assert "vs charted 58 (Arterial BP Mean, 2199-02-03 03:00)" in v.reason


def test_evidence_keeps_deciding_rows_past_the_cap():
    rows = _rows([1.0] * 12)
    deciding = rows[2:11]  # nine deciding rows: more than the cap, all kept, in order, each once
    refs = evidence(rows, deciding)
    assert refs[:9] == tuple(_ref(r) for r in deciding) and len(refs) == 9
    assert evidence(rows, [rows[11]])[0] == _ref(rows[11]) and len(evidence(rows, [rows[11]])) == MAX_EVIDENCE


@pytest.mark.parametrize("value, text", [
    (96.599998474121094, "96.6"), (7.1, "7.1"), (140.0, "140"), (0.0001234567, "0.0001235"), (12345.6, "12346"),
    (-2.50, "-2.5"), (0.0, "0"), (1.23456, "1.235"),
])
def test_numbers_are_written_without_float_noise(value, text):
    assert num(value) == text


def test_a_single_value_is_not_written_as_a_range():
    assert span(7.1, 7.1) == "7.1" and span(7.1, None) == "7.1" and span(100, 140.0) == "100-140"
    assert span(7.10000001, 7.1) == "7.1"


def test_a_range_with_equal_ends_is_one_stated_value():
    # "Hgb 7.1-7.1": one number to find, and the reason names it once
    rows = _rows([7.6, 7.7, 8.1], label="Hemoglobin")
    v = verify(entity("Hgb", "range", concept="hemoglobin", min=7.1, max=7.1), FakeTools({"chartevents:1": rows}))
    assert_decided(v, "numbers.value_in_window", "inconsistent", "contradiction")
    assert v.reason == "Hgb: stated 7.1 vs closest charted 7.6 (Hemoglobin, 2199-02-03 00:00)"
    ok = verify(entity("Hgb", "range", concept="hemoglobin", min=7.6, max=7.6), FakeTools({"chartevents:1": rows}))
    assert_decided(ok, "numbers.value_in_window", "consistent")
    assert ok.reason == "Hgb: stated 7.6 vs charted 7.6 (Hemoglobin, 2199-02-03 00:00)"


def test_a_state_is_decided_by_the_value_furthest_past_its_threshold():
    # "not hypomagnesemic" while two magnesium values lie below the reference range: the lowest decides
    rows = [row(f"2199-02-03 {h:02d}:00:00", v, label="Magnesium") for h, v in enumerate([2.0, 1.5, 1.3, 1.9])]
    e = entity("hypomagnesemic", "interpretation", criterion="hypomagnesemia", concept="magnesium", negated=True)
    v = verify(e, FakeTools({"chartevents:1": rows}))
    assert_decided(v, "states.lexicon_threshold", "inconsistent", "contradiction")
    assert v.deciding_row_ids == (_ref(rows[2]),) and v.evidence_row_ids[0] == _ref(rows[2])
    assert "charted min 1.3 (Magnesium, 2199-02-03 02:00)" in v.reason


def test_a_time_error_is_decided_by_the_matching_row_nearest_the_window():
    # heparin given on 01-30, 02-07 and 02-10, never in the 02-02..02-04 window: 02-07 lies nearest to it
    rows = [row(f"{d} 08:00:00", key="inputevents_mv:1", table="inputevents_mv", end=f"{d} 09:00:00", label="Heparin")
            for d in ("2199-01-30", "2199-02-10", "2199-02-07")]
    e = entity("heparin", "medication", keys=("inputevents_mv:1",), drugs=["heparin"])
    v = verify(e, FakeTools({"inputevents_mv:1": rows}))
    assert_decided(v, "medications.record_in_window", "inconsistent", "contradiction")
    assert v.deciding_row_ids == (_ref(rows[2]),) and v.evidence_row_ids[0] == _ref(rows[2])
    assert v.reason.endswith("nearest (Heparin, 2199-02-07 08:00)")
