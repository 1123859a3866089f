"""Known-answer tests of the medication and infusion rules, in chain order."""
from __future__ import annotations

import pytest
from verification_kit import FakeTools, assert_decided, entity, row, verify

from ehrlib.corpus.records import TimeSpan
from ehrlib.pipeline.offline.verification.doses import dose_matches, rate_matches, same_dose_unit


def _drug(*rows: dict) -> FakeTools:
    return FakeTools({"inputevents_mv:1": list(rows)})


def _med(time_text: str | None = None, **attributes) -> object:
    attributes.setdefault("drugs", ["heparin"])
    return entity("heparin", "medication", keys=("inputevents_mv:1",), time_text=time_text, **attributes)


def _given(start: str, end: str, valuenum: float | None = None, **fields) -> dict:
    return row(start, valuenum, key="inputevents_mv:1", table="inputevents_mv", end=end, **fields)


IN_WINDOW = _given("2199-02-03 08:00:00", "2199-02-03 12:00:00")


@pytest.mark.parametrize("tools, label", [(_drug(), "consistent"), (_drug(IN_WINDOW), "inconsistent")])
def test_negated_absent(tools, label):
    assert_decided(verify(_med(negated=True), tools), "medications.negated_absent", label)


@pytest.mark.parametrize("line, text, attributes, label", [
    ("Heparin held, INR 3.1.", "Heparin", {"action": "held"}, "unverified"),             # a pause, undated
    ("Heparin held since 0500.", "Heparin", {"action": "held", "time_text": "since 0500"}, "inconsistent"),
    ("Transfuse for Hgb < 7; no further heparin.", "heparin", {}, "unverified"),         # none from now on
    ("Transfuse for Hgb < 7; no heparin.", "heparin", {}, "inconsistent"),               # none in the window
    ("Anxious; prn heparin not needed.", "heparin", {}, "unverified"),      # a need denied over the writer's hours
    ("Heparin refused by pt.", "Heparin", {}, "unverified"),
    ("Heparin not needed overnight.", "Heparin", {"time_text": "overnight"}, "inconsistent"),  # hours stated
])
def test_an_undated_pause_is_not_contradicted_by_earlier_rows(line, text, attributes, label):
    from verification_kit import spanned

    time_text = attributes.pop("time_text", None)
    e = entity(text, "medication", keys=("inputevents_mv:1",), drugs=["heparin"], negated=True,
               span=spanned(line, text), time_text=time_text, **attributes)
    assert_decided(verify(e, _drug(IN_WINDOW), line=line), "medications.negated_absent", label)


def test_a_need_denied_with_no_dose_in_the_window_is_confirmed():
    from verification_kit import spanned

    line = "Anxious; prn heparin not needed."
    e = entity("heparin", "medication", keys=("inputevents_mv:1",), drugs=["heparin"], negated=True,
               span=spanned(line, "heparin"))
    assert_decided(verify(e, _drug(), line=line), "medications.negated_absent", "consistent")


@pytest.mark.parametrize("end, label", [("2199-02-03 12:00:00", "consistent"), ("2199-02-06 12:00:00", "inconsistent")])
def test_stopped_at_window_end(end, label):
    tools = _drug(_given("2199-02-01 08:00:00", end))
    assert_decided(verify(_med(action="held"), tools), "medications.stopped_at_window_end", label)


@pytest.mark.parametrize("tools, kind", [
    (_drug(), "missing"),
    (_drug(_given("2199-02-08 08:00:00", "2199-02-08 09:00:00")), "contradiction"),  # another day: a time error
])
def test_record_in_window(tools, kind):
    assert_decided(verify(_med(), tools), "medications.record_in_window", "inconsistent", kind)


@pytest.mark.parametrize("rows, label", [
    ([_given("2199-01-28 08:00:00", "2199-01-31 09:00:00")], "consistent"),   # the course ended before the window
    ([_given("2199-02-08 08:00:00", "2199-02-08 09:00:00")], "inconsistent"),  # only after it: a time error
    ([], "inconsistent"),                                                       # never given: missing
])
def test_a_completed_course_lies_before_the_window(rows, label):
    assert_decided(verify(_med(action="completed"), _drug(*rows)), "medications.record_in_window", label)


@pytest.mark.parametrize("table_rows, keys, route, label", [
    ({"prescriptions": 40}, ("prescriptions:Aspirin",), None, "inconsistent"),    # orders recorded: missing
    ({"prescriptions": 0, "emar": 90}, ("prescriptions:Aspirin",), None, "inconsistent"),  # given, per the eMAR
    ({"prescriptions": 0}, ("prescriptions:Aspirin",), None, "unverified"),       # no orders at all: not shown
    ({"prescriptions": 0}, ("inputevents_mv:1", "prescriptions:Heparin"), "SC", "unverified"),  # SC: no input row
    ({"prescriptions": 0}, ("inputevents_mv:1", "prescriptions:Heparin"), None, "inconsistent"),  # a drip would show
    ({"prescriptions": 0}, ("inputevents_mv:1",), "IV", "inconsistent"),
])
def test_an_absent_drug_needs_a_table_that_would_record_it(table_rows, keys, route, label):
    e = entity("heparin", "medication", keys=keys, drugs=["heparin"], route=route)
    v = verify(e, FakeTools({}, table_rows=table_rows))
    assert_decided(v, "medications.record_in_window", label, "missing" if label == "inconsistent" else None)


def test_given_in_window():
    assert_decided(verify(_med(), _drug(IN_WINDOW)), "medications.given_in_window", "consistent")


def test_transfusion_units_by_volume():
    tools = _drug(_given("2199-02-03 08:00:00", "2199-02-03 10:00:00", valuenum=300.0, unit="mL"))
    e = _med("today", concept="transfusion", units=3, drugs=["prbc"])
    assert_decided(verify(e, tools), "medications.transfusion_volume", "inconsistent", "contradiction")


def test_clock_edge():
    e = _med("at 1600", action="started")
    assert_decided(verify(e, _drug(IN_WINDOW)), "medications.clock_edge", "inconsistent", "contradiction")
    assert verify(_med("at 0800", action="started"), _drug(IN_WINDOW)).label == "consistent"
    # "from" dates the run's start even when the statement also stops it ("from 0800, d/c 1200")
    assert verify(_med("from 0800", action="d/c"), _drug(IN_WINDOW)).label == "consistent"
    assert_decided(verify(_med("at 0800", action="d/c"), _drug(IN_WINDOW)), "medications.clock_edge", "inconsistent")


def test_dated_edge():
    running = _drug(_given("2199-01-30 08:00:00", "2199-02-05 08:00:00"))
    e = _med("on 2/3", action="started")
    assert_decided(verify(e, running), "medications.dated_edge", "inconsistent", "contradiction")


def test_rate():
    tools = _drug(_given("2199-02-03 08:00:00", "2199-02-03 12:00:00", extra={"rate": 5.0, "rate_unit": "mcg/min"}))
    assert_decided(verify(_med(rate=10.0, rate_unit="mcg/min"), tools), "medications.rate", "inconsistent")
    assert verify(_med(rate=5.0, rate_unit="mcg/min"), tools).label == "consistent"


@pytest.mark.parametrize("stated, unit, charted, charted_unit, weight, match", [
    (8.0, "mcg/min", 0.1, "mcg/kg/min", 80.0, True),    # 0.1 mcg/kg/min x 80 kg = 8 mcg/min
    (12.0, "mcg/min", 0.1, "mcg/kg/min", 80.0, False),
    (0.1, "mcg/kg/min", 8.0, "mcg/min", 80.0, True),    # and back
    (0.5, "mg/kg/hr", 35.0, "mg/hour", 70.0, True),
    (8.0, "mcg/min", 0.1, "mcg/kg/min", None, False),   # no weight: not comparable, not matched
])
def test_a_per_kilogram_rate_meets_an_absolute_one_through_the_charted_weight(stated, unit, charted,
                                                                               charted_unit, weight, match):
    r = _given("2199-02-03 08:00:00", "2199-02-03 12:00:00",
               extra={"rate": charted, "rate_unit": charted_unit, "weight": weight})
    assert rate_matches(stated, unit, r) is match


def test_dose():
    tools = _drug(_given("2199-02-03 08:00:00", "2199-02-03 08:00:00", valuenum=20.0, unit="mg"))
    assert_decided(verify(_med(dose=40.0, dose_unit="mg"), tools), "medications.dose", "inconsistent")
    assert verify(_med(dose=20.0, dose_unit="mg"), tools).label == "consistent"


def test_route():
    tools = FakeTools({"prescriptions:1": [row("2199-02-03", None, key="prescriptions:1", table="prescriptions",
                                               end="2199-02-04", extra={"route": "PO"})]})
    e = entity("heparin", "medication", keys=("prescriptions:1",), drugs=["heparin"], route="IV")
    assert_decided(verify(e, tools), "medications.route", "inconsistent", "contradiction")


def test_course_day():
    tools = _drug(_given("2199-02-03 08:00:00", "2199-02-03 09:00:00"))
    assert_decided(verify(_med(course_day=5), tools), "medications.course_day", "inconsistent")
    assert verify(_med(course_day=1), tools).label == "consistent"


def test_duration():
    tools = _drug(_given("2199-02-02 08:00:00", "2199-02-02 09:00:00"), _given("2199-02-04 08:00:00",
                                                                               "2199-02-04 09:00:00"))
    assert_decided(verify(_med(duration_days=7), tools), "medications.duration", "inconsistent")


def test_a_pause_is_no_course():
    """"heparin gtt held x2h": the duration is the pause's, the week-long course no contradiction."""
    week = _drug(_given("2199-01-31 08:00:00", "2199-02-07 08:00:00"))
    assert verify(_med(action="held", duration_days=2 / 24, time_text="this morning"), week).rule_id != \
        "medications.duration"
    assert_decided(verify(_med(action="started", duration_days=2 / 24), week), "medications.duration", "inconsistent")


def test_a_planned_course_running_at_discharge_may_continue_after_it():
    """"for a total course of 14 days" (discharge 02-12): 8 recorded days are a lower bound;
    a course told as done ("treated x 14 days") is measured as recorded."""
    to_discharge = _drug(_given("2199-02-04 08:00:00", "2199-02-12 08:00:00"))
    planned = "500 mg for a total course of 14 days"
    assert verify(_med(duration_days=14, shown=planned), to_discharge).label == "consistent"
    assert_decided(verify(_med(duration_days=14, shown="x 14 days"), to_discharge), "medications.duration",
                   "inconsistent")
    assert_decided(verify(_med(duration_days=3, shown="for a total of 3 days"), to_discharge),
                   "medications.duration", "inconsistent")
    ended_early = _drug(_given("2199-02-04 08:00:00", "2199-02-06 08:00:00"))
    assert_decided(verify(_med(duration_days=14, shown=planned), ended_early), "medications.duration", "inconsistent")


def test_unit_conversions():
    assert rate_matches(0.04, "u/min", {"extra": {"rate": 2.4, "rate_unit": "units/hour"}})
    assert same_dose_unit("mg", {"unit": "mcg"}) and not same_dose_unit("mg", {"unit": "mL"})
    assert dose_matches(1.0, "g", {"valuenum": 1000.0, "unit": "mg"})
    assert dose_matches(60.0, "mg", {"valuenum": None, "value": "40-80", "unit": "mg"})


def test_unitless_dose_is_read_in_the_recorded_unit():
    tools = _drug(_given("2199-02-03 08:00:00", "2199-02-03 08:00:00", valuenum=80.0, unit="mg"))
    assert_decided(verify(_med(dose=40.0), tools), "medications.dose", "inconsistent", "contradiction")
    assert verify(_med(dose=80.0), tools).label == "consistent"
    rated = _drug(_given("2199-02-03 08:00:00", "2199-02-03 12:00:00", valuenum=12.0, unit="mg",
                         extra={"rate": 3.0, "rate_unit": "mg/hr"}))
    assert verify(_med(dose=3.0), rated).label == "consistent"  # "lasix gtt 3": the number is its rate


def test_dose_converts_within_a_unit_family():
    assert dose_matches(1.0, "L", {"valuenum": 1000.0, "unit": "mL"})
    assert dose_matches(0.5, "mg", {"valuenum": 500.0, "unit": "mcg"})
    assert not dose_matches(2.0, "g", {"valuenum": 1000.0, "unit": "mg"})


def test_transfusion_units_by_count_of_administrations():
    two_bags = _drug(_given("2199-02-03 08:00:00", "2199-02-03 10:00:00", valuenum=350.0, unit="mL"),
                     _given("2199-02-03 12:00:00", "2199-02-03 14:00:00", valuenum=350.0, unit="mL"))
    three = _med("this morning", concept="transfusion", units=3, drugs=["prbc"])
    assert_decided(verify(three, two_bags), "medications.transfusion_volume", "inconsistent", "contradiction")
    assert verify(_med("this morning", concept="transfusion", units=2, drugs=["prbc"]), two_bags).label == "consistent"
    # two units charted, one stated: the other may be another statement's
    assert verify(_med("this morning", concept="transfusion", units=1, drugs=["prbc"]), two_bags).label == "consistent"
    one_bag_two_rates = _drug(_given("2199-02-03 08:00:00", "2199-02-03 09:00:00", valuenum=150.0, unit="mL"),
                              _given("2199-02-03 09:00:00", "2199-02-03 10:00:00", valuenum=150.0, unit="mL"))
    assert verify(_med("this morning", concept="transfusion", units=1, drugs=["prbc"]),
                  one_bag_two_rates).label == "consistent"


def test_administration_count():
    once = _drug(_given("2199-02-03 08:00:00", "2199-02-03 08:01:00", valuenum=20.0, unit="mEq"))
    assert_decided(verify(_med(units=3), once), "medications.administration_count", "inconsistent", "contradiction")
    twice = _drug(_given("2199-02-03 08:00:00", "2199-02-03 08:01:00", valuenum=20.0, unit="mEq"),
                  _given("2199-02-03 16:00:00", "2199-02-03 16:01:00", valuenum=20.0, unit="mEq"))
    assert verify(_med(units=2), twice).label == "consistent"


def test_pooled_products_are_not_counted_and_a_total_may_span_administrations():
    one_pool = _drug(_given("2199-02-03 08:00:00", "2199-02-03 09:00:00", valuenum=250.0, unit="mL"))
    e = entity("cryo", "medication", keys=("inputevents_mv:1",), time_text="this morning", concept="transfusion",
               units=4, drugs=["cryo"])
    assert verify(e, one_pool).label == "consistent"
    two_bags = _drug(_given("2199-02-03 08:00:00", "2199-02-03 09:00:00", valuenum=2.0, unit="grams"),
                     _given("2199-02-03 12:00:00", "2199-02-03 13:00:00", valuenum=2.0, unit="grams"))
    assert verify(_med(dose=4.0, dose_unit="g"), two_bags).label == "consistent"
    assert_decided(verify(_med(dose=6.0, dose_unit="g"), two_bags), "medications.dose", "inconsistent")


def test_a_metavision_row_is_no_evidence_against_a_non_iv_route():
    sc_dose = _drug(_given("2199-02-03 08:00:00", "2199-02-03 08:00:00", valuenum=4.0, unit="units"))
    assert verify(_med(route="SC", dose=4.0, dose_unit="units"), sc_dose).label == "consistent"
    oral_order = FakeTools({"prescriptions:1": [row("2199-02-03", 4.0, key="prescriptions:1", table="prescriptions",
                                                    end="2199-02-04", unit="units", extra={"route": "PO"})]})
    e = entity("heparin", "medication", keys=("prescriptions:1",), drugs=["heparin"], route="IV")
    assert_decided(verify(e, oral_order), "medications.route", "inconsistent", "contradiction")
    carevue = FakeTools({"inputevents_cv:1": [row("2199-02-03 08:00:00", 4.0, key="inputevents_cv:1",
                                                  table="inputevents_cv", unit="units")]})
    e = entity("heparin", "medication", keys=("inputevents_cv:1",), drugs=["heparin"], route="PO")
    assert_decided(verify(e, carevue), "medications.route", "inconsistent", "contradiction")


def test_back_to_back_full_doses_are_separate_administrations():
    from ehrlib.pipeline.offline.verification.doses import administrations
    bags = [_given(f"2199-02-03 0{h}:00:00", f"2199-02-03 0{h + 1}:00:00", valuenum=10.0, unit="mEq")
            for h in (2, 3, 4, 5)]
    assert len(administrations(bags, 10.0)) == 4
    assert len(administrations(bags)) == 1  # touching rows of unknown dose: one bag
    assert verify(_med(units=4, dose=10.0, dose_unit="mEq"), _drug(*bags)).label == "consistent"


def test_an_administration_is_checked_against_administrations_not_the_orders_range():
    tools = FakeTools({"prescriptions:1": [row("2199-02-03", None, value="1-3", key="prescriptions:1",
                                               table="prescriptions", end="2199-02-04", unit="mg")],
                       "inputevents_mv:1": [_given("2199-02-03 08:00:00", "2199-02-03 08:01:00", valuenum=1.0,
                                                   unit="mg")]})
    keys = ("prescriptions:1", "inputevents_mv:1")
    given = entity("haloperidol", "medication", keys=keys, drugs=["haloperidol"], dose=3.0, dose_unit="mg",
                   freq="x1")
    assert_decided(verify(given, tools), "medications.dose", "inconsistent", "contradiction")
    ordered = entity("haloperidol", "medication", keys=keys, drugs=["haloperidol"], dose=3.0, dose_unit="mg")
    assert verify(ordered, tools).label == "consistent"


def test_a_bolus_charted_in_parts_meets_its_dose():
    """"LR 1 L bolus" charted as two overlapping rows of 250 and 750 mL (the day before the note's)."""
    parts = _drug(_given("2199-02-02 16:50:00", "2199-02-02 17:50:00", valuenum=250.0, unit="ml"),
                  _given("2199-02-02 16:50:00", "2199-02-02 19:50:00", valuenum=750.0, unit="ml"))
    assert verify(_med(dose=1.0, dose_unit="l", action="bolus"), parts).label == "consistent"
    assert_decided(verify(_med(dose=2.0, dose_unit="l", action="bolus"), parts), "medications.dose", "inconsistent")


def test_a_stated_total_is_the_sum_of_a_charting_day():
    """"NS boluses given, 1.5 L total today": hourly point rows, the evening before counted apart."""
    hourly = [row(f"2199-02-02 {h}:00:00", 100.0, key="inputevents_mv:1", table="inputevents_mv", unit="ml")
              for h in (20, 21, 22)]
    hourly += [row(f"2199-02-03 {h:02d}:00:00", v, key="inputevents_mv:1", table="inputevents_mv", unit="ml")
               for h, v in ((2, 300.0), (6, 500.0), (12, 400.0), (18, 300.0))]
    today = TimeSpan("2199-02-02 12:00:00", "2199-02-03 23:59:59")
    e = entity("NS", "medication", keys=("inputevents_mv:1",), time_text="today", window=today, drugs=["ns"],
               dose=1.5, dose_unit="l", action="given")
    assert verify(e, _drug(*hourly)).label == "consistent"
    wrong = entity("NS", "medication", keys=("inputevents_mv:1",), time_text="today", window=today, drugs=["ns"],
                   dose=2.5, dose_unit="l", action="given")
    assert_decided(verify(wrong, _drug(*hourly)), "medications.dose", "inconsistent", "contradiction")


def test_a_counted_dose_is_each_administrations():
    """"furosemide 40 mg IV x2": two 20 mg pushes add up to one stated dose, not two."""
    halves = _drug(_given("2199-02-03 01:00:00", "2199-02-03 01:01:00", valuenum=20.0, unit="mg"),
                   _given("2199-02-03 11:00:00", "2199-02-03 11:01:00", valuenum=20.0, unit="mg"))
    assert_decided(verify(_med(dose=40.0, dose_unit="mg", units=2), halves), "medications.dose", "inconsistent")
    assert verify(_med(dose=20.0, dose_unit="mg", units=2), halves).label == "consistent"
    assert verify(_med(dose=40.0, dose_unit="mg"), halves).label == "consistent"  # no count: the day's total


def test_a_dose_is_the_notes_days():
    """"metoprolol decreased to 25 mg" in a note of 02-03: the 25 mg order of 02-04 is another day's."""
    def order(day: str, end: str, mg: float) -> dict:
        return row(day, mg, key="prescriptions:1", table="prescriptions", end=end, unit="mg")
    tools = FakeTools({"prescriptions:1": [order("2199-02-03", "2199-02-04", 12.5),
                                           order("2199-02-04", "2199-02-05", 25.0)]})
    e = entity("metoprolol", "medication", keys=("prescriptions:1",), drugs=["metoprolol"], dose=25.0, dose_unit="mg")
    assert_decided(verify(e, tools), "medications.dose", "inconsistent", "contradiction")
    e = entity("metoprolol", "medication", keys=("prescriptions:1",), drugs=["metoprolol"], dose=12.5, dose_unit="mg")
    assert verify(e, tools).label == "consistent"


def test_a_clock_time_dates_the_administration():
    """"enoxaparin SC given at 2200": the order spans the day, but the doses charted at 0130
    and 0900 are other doses."""
    order = row("2199-02-02", None, key="prescriptions:1", table="prescriptions", end="2199-02-06")

    def charted(*times: str) -> FakeTools:
        return FakeTools({"prescriptions:1": [order], "inputevents_mv:1": [
            _given(t, t[:-2] + "59", valuenum=1.0, unit="dose") for t in times]})
    at_2200 = TimeSpan("2199-02-03 20:00:00", "2199-02-04 00:00:00")
    e = entity("enoxaparin", "medication", keys=("prescriptions:1", "inputevents_mv:1"), time_text="at 2200",
               window=at_2200, drugs=["enoxaparin"], action="given")
    assert_decided(verify(e, charted("2199-02-04 01:30:00", "2199-02-03 09:00:00")),
                   "medications.timed_administration", "inconsistent", "contradiction")
    assert verify(e, charted("2199-02-03 22:40:00")).label == "consistent"


def test_a_part_of_day_dates_the_administration():
    """"meropenem given overnight" in a note of 02-03: the night of 02-02 to the morning of 02-03."""
    e = _med("overnight", action="given")
    late = _drug(_given("2199-02-03 15:00:00", "2199-02-03 15:30:00"))
    assert_decided(verify(e, late), "medications.timed_administration", "inconsistent", "contradiction")
    assert verify(e, _drug(_given("2199-02-03 02:00:00", "2199-02-03 02:30:00"))).label == "consistent"
    orders = FakeTools({"prescriptions:1": [row("2199-02-02", None, key="prescriptions:1", table="prescriptions",
                                                end="2199-02-05")]})
    dated = entity("heparin", "medication", keys=("prescriptions:1",), time_text="overnight", drugs=["heparin"],
                   action="given")
    assert verify(dated, orders).label == "consistent"  # an order's date cannot place a dose in the night


def test_an_icu_template_entry_states_the_last_dose_time():
    """"Last dose of Antibiotics: Meropenem - 0400": the doses charted at 0800 and 2200 are not it."""
    import dataclasses

    def listed(shown: str) -> object:
        e = _med(drugs=["meropenem"])
        return dataclasses.replace(e, value=shown, claim=dataclasses.replace(e.claim, section="icu_medications"))
    doses = _drug(_given("2199-02-02 22:00:00", "2199-02-02 22:30:00"), _given("2199-02-03 08:00:00",
                                                                               "2199-02-03 08:30:00"))
    assert_decided(verify(listed("- 0400, Vanco - 0800"), doses), "medications.template_dose_time", "inconsistent",
                   "contradiction")
    assert verify(listed("- 0800"), doses).label == "consistent"
    assert_decided(verify(listed("- this afternoon"), doses), "medications.template_dose_time", "inconsistent")
    assert verify(listed("- last evening"), doses).label == "consistent"
    assert verify(listed("- 1000 units/hour"), doses).rule_id != "medications.template_dose_time"  # a rate


def test_a_bounded_amount_is_met_by_any_larger_total():
    """"NS, >3 L on 2-3": three 1.2 L bags that day are more than 3 L; "less than 2 L" is not."""
    bags = _drug(*(_given(f"2199-02-03 {h:02d}:00:00", f"2199-02-03 {h + 1:02d}:00:00", valuenum=1200.0, unit="ml")
                   for h in (2, 9, 16)))
    assert verify(_med(dose=3.0, dose_unit="l", shown=", >3 L on 2-3"), bags).label == "consistent"
    assert verify(_med(dose=3.0, dose_unit="l", shown="more than 3 L"), bags).label == "consistent"
    assert_decided(verify(_med(dose=5.0, dose_unit="l", shown="over 5 L"), bags), "medications.dose",
                   "inconsistent")
    assert_decided(verify(_med(dose=2.0, dose_unit="l", shown="no more than 2 L"), bags), "medications.dose",
                   "inconsistent")


def test_a_rate_in_a_stated_times_window_is_read_in_all_of_it():
    """"max 0.2 mcg/kg/min, weaned off by 2/4": the peak on 2/2 is inside the stated window;
    without a time, a progress note's rate is its own day's."""
    peak = _drug(_given("2199-02-02 20:00:00", "2199-02-02 21:00:00", extra={"rate": 0.2, "rate_unit": "mcg/kg/min"}),
                 _given("2199-02-03 08:00:00", "2199-02-03 12:00:00", extra={"rate": 0.05, "rate_unit": "mcg/kg/min"}))
    assert verify(_med("by 2/4", rate=0.2, rate_unit="mcg/kg/min"), peak).label == "consistent"
    assert_decided(verify(_med(rate=0.2, rate_unit="mcg/kg/min"), peak), "medications.rate", "inconsistent")


def _order(start: str, end: str) -> dict:
    return row(start, None, key="prescriptions:1", table="prescriptions", end=end)


def test_a_stop_is_judged_by_the_charted_runs_not_an_order_that_outlives_them():
    """"fentanyl gtt off, prn pushes": the drip's runs end in the window; the PRN order runs on."""
    tools = FakeTools({"inputevents_mv:1": [_given("2199-02-02 08:00:00", "2199-02-03 06:00:00")],
                       "prescriptions:1": [_order("2199-02-01", "2199-02-09")]})
    e = entity("fentanyl", "medication", keys=("inputevents_mv:1", "prescriptions:1"), drugs=["fentanyl"],
               action="off")
    assert_decided(verify(e, tools), "medications.stopped_at_window_end", "consistent")
    orders_only = FakeTools({"prescriptions:1": [_order("2199-02-01", "2199-02-09")]})
    e = entity("lasix", "medication", keys=("prescriptions:1",), drugs=["furosemide"], action="held")
    assert_decided(verify(e, orders_only), "medications.stopped_at_window_end", "inconsistent")


def test_a_stop_is_the_notes_day_not_a_restart_the_next_morning():
    """"Off pressors since this afternoon" on 02-03: restarted at 0300 on 02-04 is the next day's."""
    tools = _drug(_given("2199-02-02 08:00:00", "2199-02-03 16:30:00"), _given("2199-02-04 03:00:00",
                                                                               "2199-02-05 08:00:00"))
    assert_decided(verify(_med(action="off"), tools), "medications.stopped_at_window_end", "consistent")
    running = _drug(_given("2199-02-02 08:00:00", "2199-02-04 08:00:00"))
    assert_decided(verify(_med(action="off"), running), "medications.stopped_at_window_end", "inconsistent")


MORNING = TimeSpan("2199-02-02 12:00:00", "2199-02-03 23:59:59")


@pytest.mark.parametrize("time_text, window", [("this AM", MORNING), ("early this morning", MORNING),
                                               ("today", MORNING), ("on 2/3", TimeSpan("2199-02-03 00:00:00",
                                                                                       "2199-02-03 23:59:59"))])
def test_a_dated_start_is_a_course_start_not_any_row_of_the_day(time_text, window):
    """"levo started early this AM", "nystatin started today": a drip hung the evening before
    (its hourly rows and rate changes go on through the day) or an order renewed that day
    was not started then."""
    hung_before = _drug(_given("2199-02-02 19:00:00", "2199-02-03 02:00:00"),
                        _given("2199-02-03 02:00:00", "2199-02-03 09:00:00"))
    e = entity("heparin", "medication", keys=("inputevents_mv:1",), time_text=time_text, window=window,
               drugs=["heparin"], action="started")
    want = "inconsistent" if time_text != "today" else "consistent"  # "today" of a night note spans last evening
    assert verify(e, hung_before).label == want
    hung_then = _drug(_given("2199-02-03 05:00:00", "2199-02-03 09:00:00"),
                      _given("2199-02-03 09:00:00", "2199-02-03 11:00:00"))
    assert verify(e, hung_then).label == "consistent"
    renewed = FakeTools({"prescriptions:1": [_order("2199-01-31", "2199-02-03"), _order("2199-02-03", "2199-02-06")]})
    e = entity("nystatin", "medication", keys=("prescriptions:1",), time_text=time_text, window=window,
               drugs=["nystatin"], action="added")
    assert_decided(verify(e, renewed), "medications.dated_edge", "inconsistent", "contradiction")


def test_since_a_date_claims_the_course_began_that_day():
    """"vanc/zosyn since [**2-1**]": the course that runs now must have begun on 02-01."""
    since = TimeSpan("2199-02-01 00:00:00", "2199-02-03 00:00:00")
    e = entity("zosyn", "medication", keys=("prescriptions:1",), time_text="since [**2-1**]", window=since,
               drugs=["piperacillin"])
    later = FakeTools({"prescriptions:1": [_order("2199-01-30", "2199-01-31"), _order("2199-02-02", "2199-02-06")]})
    assert_decided(verify(e, later), "medications.dated_edge", "inconsistent", "contradiction")
    began = FakeTools({"prescriptions:1": [_order("2199-02-01", "2199-02-04"), _order("2199-02-04", "2199-02-06")]})
    assert verify(e, began).label == "consistent"


def test_a_dated_stop_is_a_course_end_and_a_vague_time_names_no_day():
    """"vanc d/c'd [**2-3**]": orders renewed through 02-06 did not end then; "added before
    discharge" names no day to compare."""
    day = TimeSpan("2199-02-03 00:00:00", "2199-02-03 23:59:59")
    renewed = FakeTools({"prescriptions:1": [_order("2199-01-31", "2199-02-03"), _order("2199-02-03", "2199-02-06")]})
    e = entity("vanc", "medication", keys=("prescriptions:1",), time_text="[**2-3**]", window=day,
               drugs=["vancomycin"], action="d/c'd")
    assert_decided(verify(e, renewed), "medications.dated_edge", "inconsistent", "contradiction")
    ended = FakeTools({"prescriptions:1": [_order("2199-01-31", "2199-02-02"), _order("2199-02-02", "2199-02-03")]})
    assert verify(e, ended).label == "consistent"
    vague = entity("fentanyl", "medication", keys=("prescriptions:1",), time_text="before discharge", window=WIDE,
                   drugs=["fentanyl"], action="added")
    assert verify(vague, renewed).label == "consistent"


WIDE = TimeSpan("2199-02-02 00:00:00", "2199-02-04 23:59:59")


def test_units_given_at_a_clock_time_are_the_units_charted_then():
    """"1 u PRBC given at 0200": a unit charted at 0200 is it; another charted the evening
    before is another statement's (point-charted rows, CareVue style)."""
    def unit(t: str) -> dict:
        return row(t, 375.0, key="inputevents_cv:1", table="inputevents_cv", unit="ml")
    tools = FakeTools({"inputevents_cv:1": [unit("2199-02-02 23:00:00"), unit("2199-02-03 02:00:00")]})
    at_two = TimeSpan("2199-02-02 00:00:00", "2199-02-03 04:00:00")
    e = entity("u PRBC", "medication", keys=("inputevents_cv:1",), time_text="at 0200", window=at_two,
               concept="transfusion", units=1, drugs=["prbc"])
    assert verify(e, tools).label == "consistent"
    three = entity("u PRBC", "medication", keys=("inputevents_cv:1",), time_text="at 0200", window=at_two,
                   concept="transfusion", units=3, drugs=["prbc"])
    assert_decided(verify(three, tools), "medications.transfusion_volume", "inconsistent", "contradiction")


def _drip(start: str, end: str, rate: float = 5.0) -> dict:
    return _given(start, end, extra={"rate": rate, "rate_unit": "mg/hr"})


def test_a_drip_starts_with_its_first_long_rated_run():
    """"furosemide gtt started [**2-3**]" after IV pushes on 02-02; "norepi started early this
    AM" after hours off overnight; a drip hung the evening before with an order dated that
    day was not started this morning."""
    day = TimeSpan("2199-02-03 00:00:00", "2199-02-03 23:59:59")
    pushes_then_drip = _drug(_given("2199-02-02 20:00:00", "2199-02-02 20:01:00"),
                             _drip("2199-02-03 13:00:00", "2199-02-04 02:00:00"))
    e = entity("lasix", "infusion", keys=("inputevents_mv:1",), time_text="[**2-3**]", window=day,
               drugs=["furosemide"], action="started", infusion=True)
    assert verify(e, pushes_then_drip).label == "consistent"
    off_overnight = _drug(_drip("2199-02-02 04:00:00", "2199-02-03 01:00:00", 0.05),
                          _drip("2199-02-03 05:30:00", "2199-02-03 20:00:00", 0.03))
    am = entity("levophed", "medication", keys=("inputevents_mv:1",), time_text="this AM", window=MORNING,
                drugs=["norepinephrine"], action="started")
    assert verify(am, off_overnight).label == "consistent"
    hung_last_evening = FakeTools({"inputevents_mv:1": [_drip("2199-02-02 20:00:00", "2199-02-04 08:00:00", 0.05)],
                                   "prescriptions:1": [_order("2199-02-02", "2199-02-06")]})
    am = entity("levophed", "medication", keys=("inputevents_mv:1", "prescriptions:1"), time_text="this AM",
                window=MORNING, drugs=["norepinephrine"], action="started")
    assert_decided(verify(am, hung_last_evening), "medications.dated_edge", "inconsistent", "contradiction")


def test_an_intermittent_drug_stops_with_its_order_or_its_last_dose():
    """"acyclovir stopped on [**2-3**]": the last dose on 02-02 and the order ending 02-03 both tell a stop."""
    day = TimeSpan("2199-02-03 00:00:00", "2199-02-03 23:59:59")
    tools = FakeTools({"inputevents_mv:1": [_given("2199-02-02 08:00:00", "2199-02-02 08:01:00")],
                       "prescriptions:1": [_order("2199-01-30", "2199-02-03")]})
    e = entity("acyclovir", "medication", keys=("inputevents_mv:1", "prescriptions:1"), time_text="on [**2-3**]",
               window=day, drugs=["acyclovir"], action="stopped")
    assert verify(e, tools).label == "consistent"
