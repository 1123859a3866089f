"""Known-answer tests of the number rules (values, ranges, daily totals, series, reference words)."""
from __future__ import annotations

import pytest
from verification_kit import DAY, KEY, FakeTools, assert_decided, entity, row, spanned, verify

from ehrlib.corpus.records import TimeSpan
from ehrlib.pipeline.claims import BloodPressure, NumericClaim, Reading
from ehrlib.pipeline.offline.verification.numbers import stated_numbers


def _hr(*values: float, day: str = "2199-02-03") -> FakeTools:
    return FakeTools({"chartevents:1": [row(f"{day} {8 + i:02d}:00:00", v) for i, v in enumerate(values)]})


@pytest.mark.parametrize("tools, label, kind", [
    (FakeTools({}), "inconsistent", "missing"),  # never charted in the admission: a missing record
    (_hr(75, day="2199-02-09"), "inconsistent", "missing"),  # charted, but only on another day
    # no chart row of the patient in the window (before the ICU stay, a build without chart rows)
    (FakeTools(_hr(75, day="2199-02-09").items, table_rows={"chartevents": 0, "labevents": 40}), "unverified", None),
    (FakeTools(_hr(75, day="2199-02-09").items, table_rows={"chartevents": 900}), "inconsistent", "missing"),
])
def test_no_record(tools, label, kind):
    v = verify(entity("HR", "measurement", concept="heart_rate", value=75.0), tools)
    assert_decided(v, "numbers.no_record", label, kind)


def test_a_setting_read_from_a_gas_item_is_not_missing_when_the_bedside_chart_is_empty():
    # "PEEP 5" mapped to the laboratory's gas item (recorded only with a gas), while the concept's own
    # table, the bedside chart, has no row of the patient in the window
    gas = {"labevents:50819": [row("2199-02-09 08:00:00", 8.0, key="labevents:50819", table="labevents")]}
    e = entity("PEEP", "measurement", keys=("labevents:50819",), concept="peep", value=5.0)
    empty_chart = verify(e, FakeTools(gas, table_rows={"chartevents": 0, "labevents": 40}))
    assert_decided(empty_chart, "numbers.no_record", "unverified")
    assert "chartevents" in empty_chart.reason
    charted = verify(e, FakeTools(gas, table_rows={"chartevents": 900, "labevents": 40}))
    assert_decided(charted, "numbers.no_record", "inconsistent", "missing")



def test_a_lab_charted_in_either_table_is_missing_when_one_of_them_has_rows():
    # ionized calcium lives in the laboratory's table or the bedside chart: an empty chart alone proves nothing
    lab = {"labevents:50808": [row("2199-02-09 08:00:00", 1.1, key="labevents:50808", table="labevents")]}
    e = entity("iCa", "measurement", keys=("labevents:50808",), concept="ionized_calcium", value=1.06)
    v = verify(e, FakeTools(lab, table_rows={"chartevents": 0, "labevents": 40}))
    assert_decided(v, "numbers.no_record", "inconsistent", "missing")
    v = verify(e, FakeTools(lab, table_rows={"chartevents": 0, "labevents": 0}))
    assert_decided(v, "numbers.no_record", "unverified")


def test_value_in_window_within_tolerance():
    e = entity("HR", "measurement", concept="heart_rate", value=76.0)
    assert_decided(verify(e, _hr(75, 90)), "numbers.value_in_window", "consistent")  # HR tolerance 2
    assert_decided(verify(e, _hr(70, 90)), "numbers.value_in_window", "inconsistent", "contradiction")


def test_range_extremes_are_the_days_min_and_max():
    e = entity("HR", "range", concept="heart_rate", min=67.0, max=91.0)
    assert_decided(verify(e, _hr(67, 80, 91)), "numbers.value_in_window", "consistent")
    # both numbers are charted, but the day's maximum was 110
    assert_decided(verify(e, _hr(67, 91, 110)), "numbers.range_extremes", "inconsistent", "contradiction")


@pytest.mark.parametrize(("late", "label"), [
    (110, "unverified"),   # only a reading charted 30 min after the note breaks "HR 67-91"
    (85, "consistent"),
])
def test_a_reading_charted_after_the_note_cannot_break_its_range(late, label):
    e = entity("HR", "range", concept="heart_rate", min=67.0, max=91.0)
    tools = FakeTools({"chartevents:1": [row(f"{DAY} {h}:00:00", v) for h, v in [("08", 67), ("09", 80),
                                                                                  ("10", 91), ("11", late)]]})
    v = verify(e, tools, note_type="physician", charttime=f"{DAY} 10:30:00")
    assert v.label == label, v.reason
    if label == "unverified":
        assert v.rule_id == "numbers.range_extremes" and "after the note" in v.reason
    # a reading before the note that breaks the range still decides; so does any row of a discharge summary
    early = FakeTools({"chartevents:1": [row(f"{DAY} 08:00:00", 67), row(f"{DAY} 09:00:00", 110),
                                         row(f"{DAY} 10:00:00", 91), row(f"{DAY} 11:00:00", late)]})
    assert_decided(verify(e, early, note_type="physician", charttime=f"{DAY} 10:30:00"), "numbers.range_extremes",
                   "inconsistent")
    if late == 110:
        assert_decided(verify(e, tools, note_type="discharge_summary"), "numbers.range_extremes", "inconsistent")


def test_a_nursing_range_is_met_by_one_shifts_extremes():
    # night shift 80-95, day shift 100-120: "HR 80-95" is the night nurse's shift
    rows = FakeTools({"chartevents:1": [row(f"2199-02-03 {h:02d}:00:00", v) for h, v in
                                        [(1, 80), (4, 95), (7, 88), (14, 100), (17, 120), (21, 110)]]})
    e = entity("HR", "range", concept="heart_rate", min=80.0, max=95.0)
    assert_decided(verify(e, rows, note_type="nursing"), "numbers.value_in_window", "consistent")
    # a physician's range reports the whole day
    assert_decided(verify(e, rows, note_type="physician"), "numbers.range_extremes", "inconsistent")
    # a range no shift charted is still wrong: no 12 hours run from a low of 80 to a high of 100
    wide = entity("HR", "range", concept="heart_rate", min=80.0, max=100.0)
    assert_decided(verify(wide, rows, note_type="nursing"), "numbers.range_extremes", "inconsistent")


def test_a_morning_nursing_notes_range_reports_the_night_shift_that_began_the_evening_before():
    # a night nurse's note at 07:45: the shift began at 19:45 the day before, so its lows at 20:00-22:00 count
    # (the calendar day since midnight holds only 85-90); the day shift's 130 before it does not
    night = FakeTools({"chartevents:1": [row("2199-02-02 10:00:00", 130), row("2199-02-02 20:00:00", 77),
                                         row("2199-02-02 22:00:00", 80), row(f"{DAY} 03:00:00", 85),
                                         row(f"{DAY} 06:00:00", 90)]})
    window = TimeSpan("2199-02-02 00:00:00", f"{DAY} 08:45:00")  # the note's day widened back, cut at the note
    e = entity("HR", "range", concept="heart_rate", min=77.0, max=90.0, window=window)
    assert verify(e, night, note_type="nursing", charttime=f"{DAY} 07:45:00").label == "consistent"
    # a physician's morning range is still the calendar day's, and the day shift before the night is not the note's
    assert_decided(verify(e, night, note_type="physician", charttime=f"{DAY} 07:45:00"), "numbers.range_extremes",
                   "inconsistent")
    wide = entity("HR", "range", concept="heart_rate", min=77.0, max=130.0, window=window)
    assert_decided(verify(wide, night, note_type="nursing", charttime=f"{DAY} 07:45:00"), "numbers.range_extremes",
                   "inconsistent")


def test_a_nursing_maximum_is_one_shifts():
    # a day nurse's 18:30 note: "Tmax 96.6" is the day shift's; the 97.8 at midnight was the night before
    temps = FakeTools({"chartevents:1": [row(f"{DAY} 00:00:00", 97.8), row(f"{DAY} 08:00:00", 96.6),
                                         row(f"{DAY} 12:00:00", 96.4), row(f"{DAY} 16:00:00", 96.6)]})
    window = TimeSpan("2199-02-02 00:00:00", f"{DAY} 19:30:00")
    tmax = entity("Tmax", "measurement", concept="temperature", max=96.6, max_lo=96.6, unit="F", window=window)
    assert verify(tmax, temps, note_type="nursing", charttime=f"{DAY} 18:30:00").label == "consistent"
    assert_decided(verify(tmax, temps, note_type="physician", charttime=f"{DAY} 18:30:00"),
                   "numbers.range_extremes", "inconsistent")  # a physician's Tmax is the whole day's
    high = entity("Tmax", "measurement", concept="temperature", max=99.5, max_lo=99.5, unit="F", window=window)
    assert verify(high, temps, note_type="nursing", charttime=f"{DAY} 18:30:00").label == "inconsistent"
    # a note without a clock time has no shift to read: the day's maximum breaks it
    assert_decided(verify(tmax, temps, note_type="nursing"), "numbers.range_extremes", "inconsistent")


def test_daily_total_is_a_calendar_day_sum():
    tools = FakeTools({"chartevents:1": [row("2199-02-03 06:00:00", 400), row("2199-02-03 12:00:00", 400),
                                         row("2199-02-03 18:00:00", 400)]})
    assert_decided(verify(entity("UOP", "output", concept="urine_output", value=1200.0, per_day=True), tools),
                   "numbers.daily_total", "consistent")
    assert_decided(verify(entity("UOP", "output", concept="urine_output", value=3000.0, per_day=True), tools),
                   "numbers.daily_total", "inconsistent", "contradiction")


def test_daily_total_of_a_timed_note_may_be_the_24_hours_before_it():
    from ehrlib.corpus.records import TimeSpan

    # a note written at 07:30 reports the urine since 07:30 yesterday: 300 + 300 + 150 = 750,
    # while the calendar days hold 1100 and 150
    tools = FakeTools({"chartevents:1": [row("2199-02-02 05:00:00", 500), row("2199-02-02 12:00:00", 300),
                                         row("2199-02-02 20:00:00", 300), row("2199-02-03 06:00:00", 150)]})
    timed = TimeSpan("2199-02-02 00:00:00", "2199-02-03 07:30:00")
    e = entity("UOP", "output", concept="urine_output", value=750.0, per_day=True, window=timed)
    v = verify(e, tools)
    assert_decided(v, "numbers.daily_total", "consistent")
    # the same statement dated by a whole day keeps the calendar-day totals
    day = TimeSpan("2199-02-02 00:00:00", "2199-02-03 23:59:59")
    e = entity("UOP", "output", concept="urine_output", value=750.0, per_day=True, window=day)
    assert_decided(verify(e, tools), "numbers.daily_total", "inconsistent", "contradiction")
    e = entity("UOP", "output", concept="urine_output", value=1500.0, per_day=True, window=timed)
    assert_decided(verify(e, tools), "numbers.daily_total", "inconsistent", "contradiction")
    # the note's own 24 h total is copied from the flowsheet: 10 % off is no match for it
    e = entity("UOP", "output", concept="urine_output", value=680.0, per_day=True, window=timed)
    assert_decided(verify(e, tools), "numbers.daily_total", "inconsistent", "contradiction")


def test_daily_total_evidence_is_capped_with_the_largest_amounts_first():
    rows = [row(f"2199-02-03 {h:02d}:00:00", 10.0 * (h + 1)) for h in range(20)]
    v = verify(entity("UOP", "output", concept="urine_output", value=5000.0, per_day=True),
               FakeTools({"chartevents:1": rows}))
    assert_decided(v, "numbers.daily_total", "inconsistent")
    assert len(v.deciding_row_ids) == 8 and len(v.evidence_row_ids) == 8
    assert v.deciding_row_ids[0].row_id == rows[-1]["row_id"]   # the 200 mL hour first


def test_series_must_be_charted_in_order():
    e = entity("Cr", "measurement", concept="creatinine", value=1.5, series=[2.1, 1.5])
    in_order = FakeTools({"chartevents:1": [row("2199-02-02", 2.1), row("2199-02-03", 1.5)]})
    reversed_ = FakeTools({"chartevents:1": [row("2199-02-02", 1.5), row("2199-02-03", 2.1)]})
    assert_decided(verify(e, in_order), "numbers.series_order", "consistent")
    assert_decided(verify(e, reversed_), "numbers.series_order", "inconsistent", "contradiction")


@pytest.mark.parametrize("word, rule, label", [
    ("WNL", "numbers.reference_word", "inconsistent"),        # 16.2 is above the 4-11 reference
    ("elevated", "numbers.value_in_window", "consistent"),    # the word agrees: the value check decides
])
def test_reference_word_interprets_the_value(word, rule, label):
    line = f"WBC 16.2 ({word})"
    e = entity("WBC", "measurement", concept="wbc", value=16.2, span=spanned(line, "WBC 16.2"))
    assert_decided(verify(e, _hr(16.2), line=line), rule, label)


def test_stated_numbers_of_a_blood_pressure():
    a = NumericClaim(bp=BloodPressure(systolic=Reading(value=110, min=95, max=130), diastolic=Reading(value=60),
                                      mean=Reading(value=75)))
    assert ("systolic", 95.0, None) in stated_numbers(a) and ("diastolic", 60.0, None) in stated_numbers(a)
    assert stated_numbers(NumericClaim(reading=Reading(min=80, max=89))) == [("value", 80.0, 89.0)]  # "SBP 80s"


def test_stated_value_compared_on_the_item_scale():
    # FiO2 charted as a fraction, stated as a percent ("FiO2 0.8" is read as 80 % by extraction)
    rows = {KEY: [row(DAY, 0.5), row(DAY, 0.8)]}
    v = verify(entity("FiO2", "measurement", shown="80", value=80.0, concept="fio2"), FakeTools(rows))
    assert_decided(v, "numbers.value_in_window", "consistent")
    assert "percent -> fraction" in v.reason
    wrong = verify(entity("FiO2", "measurement", shown="60", value=60.0, concept="fio2"), FakeTools(rows))
    assert_decided(wrong, "numbers.value_in_window", "inconsistent")
    same = verify(entity("FiO2", "measurement", shown="50", value=50.0, concept="fio2"),
                  FakeTools({KEY: [row(DAY, 40.0), row(DAY, 50.0)]}))
    assert_decided(same, "numbers.value_in_window", "consistent")
    assert "scale" not in same.reason


def test_stated_range_compared_on_the_item_scale():
    rows = {KEY: [row(DAY, 0.4), row(DAY, 0.5)]}
    v = verify(entity("FiO2", "range", shown="40-50", value=40.0, min=40.0, max=50.0, concept="fio2"), FakeTools(rows))
    assert v.label == "consistent" and "percent -> fraction" in v.reason


# --- a results record's clock time is its draw; a series' earlier values are earlier ----------

_TWO_DRAWS = FakeTools({KEY: [row("2199-02-02 23:10:00", 4.1), row("2199-02-03 06:15:00", 5.0),
                              row("2199-02-04 23:10:00", 3.6)]})


@pytest.mark.parametrize("value, label", [(4.1, "consistent"), (3.6, "consistent"), (5.0, "inconsistent")])
def test_an_undated_stamp_times_the_value_to_its_clock(value, label):
    line = f"___ 11:10PM BLOOD Na-140 K-{value:g}"
    e = entity("K", "measurement", concept="potassium", value=value, span=spanned(line, f"K-{value:g}"))
    assert_decided(verify(e, _TWO_DRAWS, line=line), "numbers.value_in_window", label)


@pytest.mark.parametrize("value, label", [(12.3, "consistent"), (4.5, "consistent"), (9.9, "inconsistent")])
def test_a_masked_stamp_is_a_draw_of_any_day_of_the_stay(value, label):
    # the window (the note's day) holds a 02:52 draw of 4.5; the stay's last day one of 12.3
    tools = FakeTools({KEY: [row("2199-02-03 02:52:00", 4.5), row("2199-02-09 02:52:00", 12.3),
                             row("2199-02-09 14:00:00", 9.9)]})
    line = f"___ 02:52AM BLOOD WBC-{value:g}* Hgb-9.6*"
    e = entity("WBC", "measurement", concept="wbc", value=value, span=spanned(line, f"WBC-{value:g}"))
    assert_decided(verify(e, tools, line=line), "numbers.value_in_window", label)
    dated = f"[**2199-2-3**] 02:52AM BLOOD WBC-{value:g}*"  # a written date keeps its own day
    e = entity("WBC", "measurement", concept="wbc", value=value, span=spanned(dated, f"WBC-{value:g}"))
    assert verify(e, tools, line=dated).label == ("consistent" if value == 4.5 else "inconsistent")


def test_a_stamp_at_a_clock_the_item_never_has_leaves_the_window():
    line = "___ 02:00AM BLOOD K-5.0"
    e = entity("K", "measurement", concept="potassium", value=5.0, span=spanned(line, "K-5.0"))
    assert_decided(verify(e, _TWO_DRAWS, line=line), "numbers.value_in_window", "consistent")


def test_an_earlier_value_of_a_stated_series_is_looked_for_before_the_window():
    tools = FakeTools({KEY: [row("2199-01-31 08:00:00", 2.6), row("2199-02-03 08:00:00", 1.2)]})
    line = "Lactate 2.6 -> 1.2 this AM"
    first = entity("Lactate", "measurement", concept="lactate", value=2.6, span=spanned(line, "Lactate 2.6"))
    assert_decided(verify(first, tools, line=line), "numbers.value_in_window", "consistent")
    alone = "Lactate 2.6 this AM"
    same = entity("Lactate", "measurement", concept="lactate", value=2.6, span=spanned(alone, "Lactate 2.6"))
    assert_decided(verify(same, tools, line=alone), "numbers.value_in_window", "inconsistent", "contradiction")


def _bins(*values: str) -> FakeTools:
    return FakeTools({KEY: [row(f"2199-02-03 {8 + i:02d}:00:00", None, v, table="labevents")
                            for i, v in enumerate(values)]})


def test_a_value_on_a_binned_item_is_met_by_the_bin_holding_it():
    rng = entity("WBC", "range", concept="wbc", min=6.0, max=10.0)
    assert_decided(verify(rng, _bins("6-10")), "numbers.recorded_bin", "consistent")       # the bin itself
    one = entity("RBC", "measurement", concept="rbc", value=4.0)
    assert_decided(verify(one, _bins("0-2", "3-5")), "numbers.recorded_bin", "consistent")  # a value inside one
    assert_decided(verify(one, _bins(">50")), "numbers.no_record", "inconsistent")          # no bin holds it


# --- a bound over the whole period ("MAPs > 65 all shift") ----------------------------------------

@pytest.mark.parametrize("low, label", [(66.0, "consistent"), (52.0, "inconsistent")])
def test_a_bound_over_the_period_is_met_by_every_charted_value(low, label):
    tools = FakeTools({"chartevents:1": [row("2199-02-03 02:00:00", 72.0, label="NBP Mean"),
                                         row("2199-02-03 09:00:00", low, label="NBP Mean"),
                                         row("2199-02-03 09:00:00", 40.0, label="NBP [Diastolic]")]})
    e = entity("MAPs", "range", concept="blood_pressure", value=65.0, min=65.0, bound=True)
    assert_decided(verify(e, tools, line="MAPs > 65 all shift"), "numbers.period_bound", label)


# --- which number, at what precision, on which scale -----------------------------------------------

def test_a_value_is_met_at_the_precision_it_was_written_with():
    tools = FakeTools({KEY: [row(DAY, 34.1)]})
    whole = entity("Hct", "measurement", shown="34", value=34.0, concept="hematocrit")
    assert_decided(verify(whole, tools), "numbers.value_in_window", "consistent")  # 34.1 rounds to 34
    tenth = entity("Hct", "measurement", shown="34.0", value=34.0, concept="hematocrit")
    assert_decided(verify(tenth, tools), "numbers.value_in_window", "inconsistent")  # 34.0 says the tenth
    far = entity("Hct", "measurement", shown="31", value=31.0, concept="hematocrit")
    assert_decided(verify(far, FakeTools({KEY: [row(DAY, 31.6)]})), "numbers.value_in_window", "inconsistent")


def test_one_decade_of_a_pressure_is_a_level_not_the_days_extremes():
    e = entity("SBP", "range", shown="150s", concept="blood_pressure",
               systolic_min=150.0, systolic_min_hi=159.0, systolic_max_lo=150.0, systolic_max=159.0)
    tools = FakeTools({KEY: [row(f"{DAY} 0{h}:00:00", v, label="NBP [Systolic]") for h, v in
                             [(1, 108), (4, 152), (7, 120)]]})
    assert_decided(verify(e, tools), "numbers.value_in_window", "consistent")


def test_a_value_rescaled_from_the_concepts_range_alone_decides_nothing_when_unmet():
    # "Creat-80" read as 80 umol/L = 0.9 mg/dL: when 0.9 is not charted but 80 is, no conversion was due
    tools = FakeTools({KEY: [row(DAY, 80.0)]})
    e = entity("Creat", "measurement", shown="80", value=0.9048, concept="creatinine")
    assert_decided(verify(e, tools), "numbers.value_in_window", "consistent")
    # neither 0.9 nor 80 charted: the guessed scale cannot make a contradiction
    v = verify(e, FakeTools({KEY: [row(DAY, 2.4)]}))
    assert v.label == "unverified" and "guessed scale" in v.reason
    # a value stated as the item records it still contradicts
    plain = entity("Cr", "measurement", shown="0.9", value=0.9, concept="creatinine")
    assert_decided(verify(plain, FakeTools({KEY: [row(DAY, 2.4)]})), "numbers.value_in_window", "inconsistent")


def test_a_mean_pressures_decade_range_names_the_days_mean_extremes():
    e = entity("MAP", "range", shown="50s-70s", concept="blood_pressure",
               mean_min=50.0, mean_min_hi=59.0, mean_max_lo=70.0, mean_max=79.0)

    def means(*values: float) -> FakeTools:
        return FakeTools({KEY: [row(f"{DAY} 0{i + 1}:00:00", v, label="Arterial BP Mean")
                                for i, v in enumerate(values)]})
    assert_decided(verify(e, means(52, 66, 77)), "numbers.value_in_window", "consistent")
    assert_decided(verify(e, means(55, 75, 95)), "numbers.range_extremes", "inconsistent")


def _hourly_urine() -> FakeTools:
    # 100 mL every hour from 2199-02-02 20:00 to 2199-02-03 10:00 (15 rows)
    times = [f"2199-02-02 {h:02d}:00:00" for h in range(20, 24)] + [f"2199-02-03 {h:02d}:00:00" for h in range(11)]
    return FakeTools({KEY: [row(t, 100.0) for t in times]})


@pytest.mark.parametrize(("words", "value", "label"), [
    ("since MN", 700.0, "consistent"),        # 01:00..07:00 of the note's day, written at 07:10
    ("since midnight", 1500.0, "inconsistent"),
    ("for shift", 1100.0, "consistent"),      # the 12 h to 07:10: 20:00..07:00
    ("for shift", 700.0, "inconsistent"),
])
def test_a_total_for_part_of_the_day_is_that_parts_sum(words, value, label):
    from ehrlib.corpus.records import TimeSpan

    line = f"UOP {value:.0f} cc {words}"
    window = TimeSpan("2199-02-02 17:00:00", "2199-02-03 08:10:00")
    e = entity("UOP", "output", concept="urine_output", value=value, per_day=True, window=window, time_text=words,
               span=spanned(line, "UOP"))
    v = verify(e, _hourly_urine(), line=line, note_type="nursing", charttime=f"{DAY} 07:10:00")
    assert_decided(v, "numbers.part_total", label)


def test_a_part_total_of_a_note_of_unknown_hour_may_be_any_running_total():
    # 300 mL since midnight is the running total at 02:00; with no hour for the note nothing decides against it
    e = entity("OGT", "output", concept="urine_output", value=300.0, per_day=True, time_text="since midnight",
               span=(0, 3))
    assert_decided(verify(e, _hourly_urine(), line="OGT 300 since midnight"), "numbers.part_total", "consistent")
    e = entity("OGT", "output", concept="urine_output", value=5000.0, per_day=True, time_text="since midnight",
               span=(0, 3))
    assert_decided(verify(e, _hourly_urine(), line="OGT 5000 since midnight"), "numbers.part_total", "inconsistent")


def test_a_total_counted_from_an_untimed_event_is_unverified():
    line = "UOP 1760 since MN (410 cc after diuresis)."
    e = entity("410 cc", "output", concept="urine_output", value=410.0, per_day=True, span=spanned(line, "410 cc"))
    v = verify(e, _hourly_urine(), line=line, charttime=f"{DAY} 12:30:00")
    assert v.rule_id == "numbers.part_total" and v.label == "unverified"
    # with no event after it, the amount is a day's total as before
    e = entity("410 cc", "output", concept="urine_output", value=410.0, per_day=True, span=(0, 6))
    assert verify(e, _hourly_urine(), line="410 cc out today").rule_id == "numbers.daily_total"


def test_a_shift_total_of_a_note_of_unknown_hour_is_any_twelve_hours_of_its_day():
    # 100 mL an hour: any 12 h ending on the note's day holds 1200 at most, never 300 or 1500
    for value, label in ((1200.0, "consistent"), (1500.0, "inconsistent")):
        e = entity("UOP", "output", concept="urine_output", value=value, per_day=True, time_text="this shift",
                   span=(0, 3))
        assert_decided(verify(e, _hourly_urine(), line=f"UOP {value:.0f} this shift", note_type="nursing"),
                       "numbers.part_total", label)


def _sites(**by_label: tuple[float, ...]) -> FakeTools:
    return FakeTools({KEY: [row(f"{DAY} {8 + i:02d}:{j:02d}:00", v, label=label)
                            for j, (label, vals) in enumerate(by_label.items()) for i, v in enumerate(vals)]})


def test_a_range_one_site_matches_is_not_contradicted_by_another_site():
    e = entity("SpO2", "range", concept="spo2", min=88.0, max=96.0)
    # pulse oximetry ran 88-96; the blood gas's 99 is another measurement of oxygen saturation
    v = verify(e, _sites(**{"O2 saturation pulseoxymetry": (88, 92, 96), "SaO2": (99,)}))
    assert v.label == "unverified" and "SaO2" in v.reason, v.reason
    # no site's rows run 88-96: the day's extremes contradict the range
    assert_decided(verify(e, _sites(**{"O2 saturation pulseoxymetry": (88, 92, 96, 99), "SaO2": (99,)})),
                   "numbers.range_extremes", "inconsistent")


def test_a_pressure_range_is_judged_per_site_not_per_part():
    e = entity("SBP", "range", concept="blood_pressure", systolic_min=90.0, systolic_max=140.0)
    arterial = {"Arterial BP [Systolic]": (90, 120, 140), "Arterial BP [Diastolic]": (50, 60, 70)}
    v = verify(e, _sites(**arterial, **{"NBP [Systolic]": (160,)}))
    assert v.label == "unverified" and "Arterial BP" in v.reason, v.reason
    # the cuff's own rows cannot agree: no cuff systolic matches both ends
    assert_decided(verify(e, _sites(**{"Arterial BP [Systolic]": (90, 140, 160), "NBP [Systolic]": (120, 140, 160)})),
                   "numbers.range_extremes", "inconsistent")


def test_a_few_rows_of_another_site_cannot_outvote_the_site_that_charts_most():
    e = entity("sats", "range", concept="spo2", min=92.0, max=100.0)
    # the oximeter's day ran 89-100; two blood gases at 92 and 100 agree with the note only by chance
    tools = _sites(**{"O2 saturation pulseoxymetry": (89, 92, 95, 100), "SaO2": (92, 100)})
    assert_decided(verify(e, tools), "numbers.range_extremes", "inconsistent")


def test_a_value_at_discharge_is_the_stays_last_draw() -> None:
    """Draws stopped two days before discharge: "Hgb 9.4 at discharge" is the last one."""
    from ehrlib.corpus.records import TimeSpan

    around = TimeSpan("2199-02-11 00:00:00", "2199-02-13 23:59:59")  # discharge day ±1
    rows = [row("2199-02-05 06:00:00", 8.1), row("2199-02-09 05:30:00", 9.4)]
    right = entity("Hgb", "measurement", value=9.4, time_text="at discharge", window=around)
    assert verify(right, FakeTools(items={KEY: rows}), note_type="discharge_summary").label == "consistent"
    wrong = entity("Hgb", "measurement", value=8.1, time_text="at discharge", window=around)
    assert_decided(verify(wrong, FakeTools(items={KEY: rows}), note_type="discharge_summary"),
                   "numbers.value_in_window", "inconsistent")
    # a span before the discharge is no point at it: no draw in the window stays missing
    before = entity("Hgb", "measurement", value=9.4, time_text="prior to discharge", window=around)
    assert verify(before, FakeTools(items={KEY: rows}), note_type="discharge_summary").label != "consistent"


@pytest.mark.parametrize(("value", "label"), [(600.0, "consistent"), (1100.0, "inconsistent")])
def test_a_total_over_a_clock_span_sums_its_columns_both_ends_included(value, label):
    from ehrlib.corpus.records import TimeSpan

    # hourly 100 mL rows; "2000-0100" in a note written at 01:10 is the columns 20:00 .. 01:00: six rows,
    # 600 mL (leaving out the 20:00 column would make it 500, outside the 15 % a total may be off)
    line = f"UOP {value:.0f} cc 2000-0100"
    window = TimeSpan("2199-02-02 20:00:00", "2199-02-03 01:00:00")
    e = entity("UOP", "output", concept="urine_output", value=value, per_day=True, window=window,
               time_text="2000-0100", span=spanned(line, "UOP"))
    v = verify(e, _hourly_urine(), line=line, note_type="nursing", charttime=f"{DAY} 01:10:00")
    assert_decided(v, "numbers.part_total", label)


class _Catalog:
    """A lab dictionary telling each item's specimen (d_labitems ``fluid``)."""

    def __init__(self, fluids: dict[str, str]) -> None:
        self.fluids = fluids

    def get(self, key: str):
        from types import SimpleNamespace
        return SimpleNamespace(fluid=self.fluids[key]) if key in self.fluids else None


def _lab_tools(fluids: dict[str, str], rows: dict) -> FakeTools:
    from types import SimpleNamespace
    tools = FakeTools(rows)
    tools.env = SimpleNamespace(catalog=_Catalog(fluids))  # type: ignore[attr-defined]
    return tools


@pytest.mark.parametrize("lines, text, label", [
    # a wrapped line of a pleural record whose analyte the patient has no pleural item of
    (["PLEURAL FLUID ___ 08:38AM: TNC-2350* Polys-46*", "LD(LDH)-524 Glucose-111"], "Glucose", "unverified"),
    (["Pleural fluid studies:", "  glucose 111, LDH 524"], "glucose", "unverified"),  # under a specimen heading
    (["urine glucose 111 on the dipstick"], "glucose", "unverified"),  # a specimen word before the name
    (["Pleural fluid studies:", "", "glucose 111"], "glucose", "inconsistent"),  # a blank line ended the heading
    (["___ 06:00AM BLOOD Glucose-111"], "Glucose", "inconsistent"),  # blood by default: compared
    (["[**2199-2-3**] 06:00AM   UREA N-111 CREAT-0.7"], "UREA N", "inconsistent"),  # a record: no fused urine "U"
])
def test_a_value_of_another_specimen_is_not_compared_with_blood(lines, text, label):
    from ehrlib.corpus.records import Note
    from ehrlib.pipeline.offline.verification.engine import verify_entity
    from ehrlib.pipeline.stages import NoteContext, StageEnv

    tools = _lab_tools({"labevents:50931": "Blood"},
                       {"labevents:50931": [row(f"{DAY} 06:00:00", 190.0, key="labevents:50931", table="labevents")]})
    line = len(lines) - 1
    e = entity(text, "measurement", keys=("labevents:50931",), concept="glucose", value=111.0,
               span=spanned(lines[line], text))
    e = type(e)(**{**{f: getattr(e, f) for f in e.__dataclass_fields__}, "line": line})
    note = Note("n1", 1, 1, "discharge_summary", DAY, "\n".join(lines))
    ctx = NoteContext(note, 1, 1, admittime="2199-01-30 10:00:00", dischtime="2199-02-12 10:00:00", chartdate=DAY)
    v = verify_entity(ctx, StageEnv(toolset=tools), e, ())
    assert v.label == label, v.reason
    if label == "unverified":
        assert v.rule_id == "numbers.other_specimen" and "not compared with labevents:50931 (blood)" in v.reason
