"""Known-answer tests of the medication and infusion rules, in chain order."""
from __future__ import annotations

import pytest
from verification_kit import FakeTools, assert_decided, entity, row, verify

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
