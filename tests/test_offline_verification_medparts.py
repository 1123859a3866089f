"""Known answers for the stated parts of a medication statement: its clock time, its
counted day, the order of a rate change, counts told before the name, chains of doses,
platelet products and drug names with a concentration (made-up sentences)."""
from __future__ import annotations

from datetime import datetime

import pytest
from verification_kit import FakeTools, assert_decided, entity, row, verify

from ehrlib.corpus.records import ItemRef, TimeSpan
from ehrlib.pipeline.offline.align import drug_items
from ehrlib.pipeline.offline.infusion_course import course_steps
from ehrlib.pipeline.offline.lexicon import load_lexicon
from ehrlib.pipeline.offline.mentions import find_mentions
from ehrlib.pipeline.offline.timex import TimeContext, resolve_line

KEY = "inputevents_mv:1"


def _mentions(text: str):
    return [m for m in find_mentions(text, 0, load_lexicon(), (), "other") if m.kind in ("medication", "infusion")]


def _given(start: str, end: str | None = None, rate: float | None = None, unit: str = "mg/hr") -> dict:
    extra = {"rate": rate, "rate_unit": unit} if rate is not None else {}
    return row(start, 1.0, key=KEY, table="inputevents_mv", end=end or start, extra=extra, unit="mg")


def _drug(*rows: dict) -> FakeTools:
    return FakeTools({KEY: list(rows)})


# -- names ---------------------------------------------------------------------------------

def test_a_concentration_in_the_name_keeps_items_of_another_strength_out() -> None:
    pairs = [(ItemRef("inputevents_mv", "Dextrose 5%", 1), "a"), (ItemRef("inputevents_mv", "Dextrose 50%", 2), "b"),
             (ItemRef("prescriptions", "Dextrose"), "c")]
    assert [k for _, k in drug_items(["dextrose 50%"], pairs)] == ["b", "c"]


def test_a_name_cut_after_its_stem_is_the_drug() -> None:
    assert [m.claim.drugs for m in _mentions("Pentobarb gtt at 1 mg/kg/hr")][:1] == [("pentobarbital",)]
    names = load_lexicon().drug_aliases["pentobarbital"]  # the short form finds a label spelled otherwise
    assert drug_items(names, [(ItemRef("inputevents_cv", "Pentobarbitol", 3), "p")]) != []


def test_a_brand_name_of_the_drug_table_finds_items_labelled_by_it() -> None:
    names = load_lexicon().drug_aliases["nesiritide"]
    assert [k for _, k in drug_items(names, [(ItemRef("inputevents_cv", "Natrecor", 4), "n")])] == ["n"]


def test_a_rate_without_unit_is_read_in_the_rows_own_unit() -> None:
    from ehrlib.pipeline.offline.verification.doses import rate_matches
    r = {"extra": {"rate": 0.12, "rate_unit": "mcg/kg/min", "weight": 80.0}}
    assert rate_matches(0.12, "", r)


# -- times ---------------------------------------------------------------------------------

def test_a_bare_clock_after_an_action_word_is_a_time_and_a_dose_is_not() -> None:
    ctx = TimeContext(datetime(2150, 3, 10), {"admission": datetime(2150, 3, 5, 9, 0)})

    def texts(line: str) -> list[str]:
        return [r.text for r in resolve_line(line, 0, ctx)]

    assert texts("esmolol gtt started 0645 for HR 150s") == ["0645"]
    assert texts("last cefazolin dose 1130, next due tonight") == ["1130"]
    assert texts("heparin restarted 1000 units/hr") == []
    assert texts("given 1000 mL LR") == []
    assert texts("LR 75 cc/hr, finished 0530") == ["0530"]  # a stop's bare clock time
    assert texts("paused 2215 for CT") == ["2215"]
    assert texts("completed 1000 mL") == []


# -- extraction of counts and chains --------------------------------------------------------

def test_a_count_of_doses_told_before_the_name() -> None:
    assert _mentions("got one dose of labetalol 10 mg IV")[0].claim.units == 1.0
    assert _mentions("received two doses of IV lasix 40 mg")[0].claim.units == 2.0
    assert _mentions("labetalol 10 mg IV")[0].claim.units is None


def test_a_course_day_in_parentheses() -> None:
    assert _mentions("cefepime 2 g q8h (day 6)")[0].claim.course_day == 6


def test_a_chain_of_doses_is_one_claim_per_dose() -> None:
    ms = _mentions("bumetanide 1 -> 2 -> 4 mg IV for volume overload")
    assert [(m.claim.dose, m.claim.dose_unit) for m in ms] == [(1.0, "mg"), (2.0, "mg"), (4.0, "mg")]


def test_a_chain_link_may_carry_a_time_and_a_later_rate_may_have_no_unit() -> None:
    steps = course_steps(" 0.1 -> 0.3 around noon -> 0.05 mcg/kg/min tonight")
    assert [s.rate for s in steps] == [0.1, 0.3, 0.05]
    ms = _mentions("vasopressin 0.04 units/min overnight, now 0.02.")
    assert [m.claim.rate for m in ms] == [0.04, 0.02]
    assert [m.claim.rate for m in _mentions("insulin gtt 3 units/hr (had been 5 this AM)")] == [3.0, 5.0]


def test_platelets_counted_as_units_are_the_product() -> None:
    got = [(m.concept, m.claim.units) for m in find_mentions("cryo x2, plts x1 for the line", 0, load_lexicon())]
    assert ("transfusion", 1.0) in got
    assert [m.concept for m in find_mentions("plts 88 today", 0, load_lexicon())] == ["platelets"]
    after = find_mentions("Hgb 7.1 -> 8.0 post-transfusion, Plt 240", 0, load_lexicon())
    assert [m.concept for m in after if m.text == "Plt"] == ["platelets"]  # the noun names no product


# -- verification ---------------------------------------------------------------------------

#: the admission of the kit's note is 2199-01-30, so HD 5 is 2199-02-03 (its window widened a day)
HD5 = TimeSpan("2199-02-02 00:00:00", "2199-02-04 23:59:59")


def _hd(action: str | None = None):
    return entity("cisatracurium", "medication", keys=(KEY,), time_text="HD 5", window=HD5,
                  drugs=["cisatracurium"], action=action)


def test_a_drug_on_a_counted_day_needs_a_row_that_day() -> None:
    beside = _drug(_given("2199-02-02 10:00:00", "2199-02-02 16:00:00"))
    assert_decided(verify(_hd(), beside, note_type="discharge_summary"), "medications.on_counted_day", "inconsistent")
    that_day = _drug(_given("2199-02-03 10:00:00", "2199-02-03 16:00:00"))
    assert verify(_hd(), that_day, note_type="discharge_summary").label == "consistent"


def test_a_stop_on_a_counted_day_is_that_day_not_the_next() -> None:
    ran = _drug(_given("2199-02-01 10:00:00", "2199-02-04 12:00:00", rate=1.0))
    assert_decided(verify(_hd("stopped"), ran, note_type="discharge_summary"), "medications.dated_edge",
                   "inconsistent")


def _step(line: str, text: str, rate: float):
    at = line.index(text)
    return entity(text, "infusion", keys=(KEY,), span=(at, at + len(text)), drugs=["midazolam"], rate=rate,
                  rate_unit="mg/hr", infusion=True, action="titrated")


def test_a_rate_change_claims_its_order() -> None:
    line = "midazolam gtt increased 3 -> 6 mg/hr"
    e = _step(line, "6 mg/hr", 6.0)
    reversed_ = _drug(_given("2199-02-03 02:00:00", "2199-02-03 08:00:00", rate=6.0),
                      _given("2199-02-03 08:00:00", "2199-02-03 20:00:00", rate=3.0))
    assert_decided(verify(e, reversed_, line=line), "medications.rate_change", "inconsistent")
    in_order = _drug(_given("2199-02-03 02:00:00", "2199-02-03 08:00:00", rate=3.0),
                     _given("2199-02-03 08:00:00", "2199-02-03 20:00:00", rate=6.0))
    assert verify(e, in_order, line=line).label == "consistent"


def test_a_clock_time_after_the_name_dates_an_administration() -> None:
    line = "cefazolin IV dose at 2100"
    e = entity("cefazolin", "medication", keys=(KEY,), time_text="at 2100", span=(0, 9), drugs=["cefazolin"],
               window=TimeSpan("2199-02-02 19:00:00", "2199-02-03 23:00:00"))
    morning = _drug(_given("2199-02-03 09:00:00", "2199-02-03 09:30:00"))
    assert_decided(verify(e, morning, line=line), "medications.timed_administration", "inconsistent")
    other = "meropenem (doses at 2100) and cefazolin"
    e2 = entity("cefazolin", "medication", keys=(KEY,), time_text="at 2100", span=(31, 40), drugs=["cefazolin"],
                window=e.window)
    assert verify(e2, morning, line=other).label == "consistent"  # the time is another drug's


def test_a_template_entry_keeps_its_own_rule() -> None:
    line = "Cefazolin - 2100"
    e = entity("Cefazolin", "medication", keys=(KEY,), time_text="2100", span=(0, 9), drugs=["cefazolin"],
               section="icu_medications", window=TimeSpan("2199-02-02 19:00:00", "2199-02-03 23:00:00"))
    morning = _drug(_given("2199-02-03 09:00:00", "2199-02-03 09:30:00"))
    assert verify(e, morning, line=line).rule_id != "medications.timed_administration"


def test_a_restart_may_be_a_new_bag() -> None:
    e = entity("tube feed", "medication", keys=(KEY,), time_text="1026", drugs=["glucerna"], action="restarted",
               window=TimeSpan("2199-02-02 08:26:00", "2199-02-03 12:26:00"))
    bags = _drug(_given("2199-02-02 18:00:00", "2199-02-03 10:26:00", rate=60.0, unit="mL/hr"),
                 _given("2199-02-03 10:26:00", "2199-02-04 01:00:00", rate=65.0, unit="mL/hr"))
    assert verify(e, bags).label == "consistent"


def test_a_rate_stated_for_a_part_of_the_day_is_the_rate_charted_then() -> None:
    e = entity("amiodarone", "infusion", keys=(KEY,), time_text="overnight", drugs=["amiodarone"], rate=0.5,
               rate_unit="mg/min", infusion=True, window=TimeSpan("2199-02-01 12:00:00", "2199-02-03 23:59:59"))
    night_at_one = _drug(_given("2199-02-02 22:00:00", "2199-02-03 06:00:00", rate=1.0, unit="mg/min"),
                         _given("2199-02-03 12:00:00", "2199-02-03 20:00:00", rate=0.5, unit="mg/min"))
    assert_decided(verify(e, night_at_one), "medications.rate", "inconsistent")
    night_at_half = _drug(_given("2199-02-02 22:00:00", "2199-02-03 06:00:00", rate=0.5, unit="mg/min"))
    assert verify(e, night_at_half).label == "consistent"


# -- what a clock time dates: the start of a rate, the end of the rate a change left, a stop --

NIGHT = TimeSpan("2199-02-02 19:00:00", "2199-02-03 23:00:00")


def _rated(line: str, text: str, rate: float, time_text: str):
    at = line.index(text)
    return entity(text, "infusion", keys=(KEY,), span=(at, at + len(text)), drugs=["midazolam"], rate=rate,
                  rate_unit="mg/hr", infusion=True, time_text=time_text, window=NIGHT)


def test_the_old_rate_of_a_timed_change_ran_before_that_time() -> None:
    line = "midazolam gtt 6 -> 3 mg/hr at 1500 for oversedation"
    e = _rated(line, "midazolam gtt", 6.0, "at 1500")
    # the time dates the arrival at 3 mg/hr; 6 mg/hr only had to run before it, however long before
    stepped_down = _drug(_given("2199-02-03 02:00:00", "2199-02-03 09:00:00", rate=6.0),
                         _given("2199-02-03 09:00:00", "2199-02-03 15:00:00", rate=4.5),
                         _given("2199-02-03 15:05:00", "2199-02-03 22:00:00", rate=3.0))
    assert verify(e, stepped_down, line=line).label == "consistent"
    # 6 mg/hr was first charted in the evening, after the stated change
    only_after = _drug(_given("2199-02-03 19:00:00", "2199-02-03 21:00:00", rate=6.0),
                       _given("2199-02-03 21:00:00", "2199-02-03 23:00:00", rate=3.0))
    v = verify(e, only_after, line=line)
    assert_decided(v, "medications.rate", "inconsistent")
    assert "not before at 1500" in v.reason


@pytest.mark.parametrize("line, time_text, agreeing, disagreeing", [
    # the new rate of a timed change starts at that time
    ("midazolam gtt increased to 6 mg/hr at 1500", "at 1500",
     ("2199-02-03 15:10:00", "2199-02-03 22:00:00"), ("2199-02-03 07:00:00", "2199-02-03 22:00:00")),
    # a rate followed by a pause at a time ends then (a run hung after the pause does not show it)
    ("midazolam gtt up to 6 mg/hr overnight, paused at 0200 for hypotension", "at 0200",
     ("2199-02-02 21:00:00", "2199-02-03 02:10:00"), ("2199-02-03 09:00:00", "2199-02-03 12:00:00")),
])
def test_a_timed_rate_is_judged_at_its_time(line, time_text, agreeing, disagreeing) -> None:
    e = _rated(line, "6 mg/hr", 6.0, time_text)
    assert verify(e, _drug(_given(*agreeing, rate=6.0)), line=line).label == "consistent"
    assert_decided(verify(e, _drug(_given(*disagreeing, rate=6.0)), line=line), "medications.rate", "inconsistent")


def _dosed(line: str, text: str, time_text: str, **claim):
    at = line.index(text)
    return entity(text, "medication", keys=(KEY,), span=(at, at + len(text)), time_text=time_text, window=NIGHT,
                  drugs=[text.lower()], **claim)


def test_a_drug_off_at_a_clock_time_is_a_stop_not_a_dose() -> None:
    line = "sedation lightened: fentanyl off 1400, extubated after"
    e = _dosed(line, "fentanyl", "1400")
    drip_ended_then = _drug(_given("2199-02-02 20:00:00", "2199-02-03 13:55:00", rate=50.0, unit="mcg/hr"))
    assert verify(e, drip_ended_then, line=line).label == "consistent"
    # a drip hung again later in the window does not undo the stop
    restarted = _drug(_given("2199-02-02 20:00:00", "2199-02-03 13:55:00", rate=50.0, unit="mcg/hr"),
                      _given("2199-02-03 21:00:00", "2199-02-03 22:00:00", rate=25.0, unit="mcg/hr"))
    assert verify(e, restarted, line=line).label == "consistent"
    drip_ran_on = _drug(_given("2199-02-02 20:00:00", "2199-02-03 22:00:00", rate=50.0, unit="mcg/hr"))
    v = verify(e, drip_ran_on, line=line)
    assert_decided(v, "medications.timed_administration", "inconsistent")
    assert "stated stopped" in v.reason


def test_a_dose_is_dated_only_by_a_time_in_its_own_clause() -> None:
    morning = _drug(_given("2199-02-03 09:30:00", "2199-02-03 09:45:00"))
    other = "Meds: cefazolin 1 g IV (last dose 2100 today), famotidine 20, senna"
    e = _dosed(other, "famotidine", "2100", dose=20.0)
    assert verify(e, morning, line=other).rule_id != "medications.timed_administration"
    own = "Meds: famotidine 20 mg IV at 2100, senna"
    e2 = _dosed(own, "famotidine", "at 2100", dose=20.0, dose_unit="mg")
    assert_decided(verify(e2, morning, line=own), "medications.timed_administration", "inconsistent")
    aside = "Meds: famotidine 20 mg IV (periop) - last dose 2100"  # an aside does not end its clause
    e4 = _dosed(aside, "famotidine", "2100", dose=20.0, dose_unit="mg")
    assert_decided(verify(e4, morning, line=aside), "medications.timed_administration", "inconsistent")
    first = "2100 famotidine 20 mg IV"  # an event list's leading time is the dose's own
    e3 = _dosed(first, "famotidine", "2100", dose=20.0, dose_unit="mg")
    assert_decided(verify(e3, morning, line=first), "medications.timed_administration", "inconsistent")


def test_the_old_rate_of_a_change_may_have_run_the_day_before() -> None:
    line = "midazolam gtt weaned from 8 mg/hr down to 2 overnight"
    e = entity("midazolam gtt", "infusion", keys=(KEY,), span=(0, 13), drugs=["midazolam"], rate=8.0,
               rate_unit="mg/hr", infusion=True, window=TimeSpan("2199-02-02 00:00:00", "2199-02-04 23:59:59"))
    # the note's day (2199-02-03) charts only 2 mg/hr; 8 mg/hr ran the evening before
    before = _drug(_given("2199-02-02 14:00:00", "2199-02-02 23:00:00", rate=8.0),
                   _given("2199-02-03 01:00:00", "2199-02-03 12:00:00", rate=2.0))
    assert verify(e, before, line=line).label == "consistent"
    never = _drug(_given("2199-02-02 14:00:00", "2199-02-02 23:00:00", rate=4.0),
                  _given("2199-02-03 01:00:00", "2199-02-03 12:00:00", rate=2.0))
    assert_decided(verify(e, never, line=line), "medications.rate", "inconsistent")
    # a rate told on its own is its note day's: the day before does not meet it
    alone = entity("midazolam gtt", "infusion", keys=(KEY,), span=(0, 13), drugs=["midazolam"], rate=8.0,
                   rate_unit="mg/hr", infusion=True, window=e.window)
    assert_decided(verify(alone, before, line="midazolam gtt at 8 mg/hr"), "medications.rate", "inconsistent")


def test_a_set_off_dose_time_is_judged_apart_from_the_drug() -> None:
    # "cefazolin 1 g IV q8 - last dose 0600": the drug and its dose are one statement, the time another
    line = "cefazolin 1 g IV q8 - last dose 0600"
    kinds = [(m.text, m.claim.dose, m.claim.action) for m in _mentions(line)]
    assert kinds == [("cefazolin", 1.0, None), ("last dose 0600", None, "given")]
    at = line.index("last dose 0600")
    name = entity("cefazolin", "medication", keys=(KEY,), span=(0, 9), drugs=["cefazolin"], dose=1.0, dose_unit="g",
                  route="IV", freq="q8")
    timed = entity("last dose 0600", "medication", keys=(KEY,), span=(at, len(line)), time_text="0600",
                   drugs=["cefazolin"], action="given")

    def doses(*hours: str) -> FakeTools:
        return _drug(*(row(f"2199-02-03 {h}:00", 1.0, key=KEY, table="inputevents_mv", end=f"2199-02-03 {h}:01",
                           unit="g") for h in hours))

    off_time = doses("02:20", "09:55")
    assert_decided(verify(name, off_time, line=line), "medications.given_in_window", "consistent")
    assert_decided(verify(timed, off_time, line=line), "medications.timed_administration", "inconsistent",
                   "contradiction")
    assert verify(timed, doses("02:20", "06:05"), line=line).label == "consistent"
