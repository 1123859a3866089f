"""Known answers for counted doses (ehrlib.pipeline.offline.verification.counts): a count
stated for a day is compared with that day's charted administrations."""
from __future__ import annotations

from verification_kit import FakeTools, assert_decided, entity, row, verify

KEY = "inputevents_mv:1"


def _doses(*starts: str) -> FakeTools:
    return FakeTools({KEY: [row(s, 1.0, key=KEY, table="inputevents_mv", end=s[:-2] + "59", unit="dose")
                            for s in starts]})


def _counted(n: int, time_text: str | None = None) -> object:
    return entity(f"vanc x{n}", "medication", keys=(KEY,), time_text=time_text, drugs=["vancomycin"], units=n)


def test_an_undated_count_in_a_progress_note_is_its_days() -> None:
    # the note's day (02-03) charts two doses; the widened window holds a third on 02-04
    tools = _doses("2199-02-03 13:30:00", "2199-02-03 20:00:00", "2199-02-04 09:00:00")
    assert_decided(verify(_counted(3), tools), "medications.administration_count", "inconsistent", "contradiction")
    assert verify(_counted(2), tools).label == "consistent"
    assert verify(_counted(3), tools, note_type="nursing").label == "inconsistent"


def test_a_count_today_is_the_calendar_days_give_or_take_the_charting_delay() -> None:
    yesterday_and_today = _doses("2199-02-02 14:00:00", "2199-02-03 12:00:00")
    assert_decided(verify(_counted(2, "today"), yesterday_and_today), "medications.administration_count",
                   "inconsistent", "contradiction")
    just_after_midnight = _doses("2199-02-03 12:00:00", "2199-02-04 01:00:00")
    assert verify(_counted(2, "today"), just_after_midnight).label == "consistent"


def test_a_count_in_a_part_of_the_day_is_that_parts() -> None:
    tools = _doses("2199-02-03 07:00:00", "2199-02-03 16:00:00")
    assert verify(_counted(2, "this morning"), tools).label == "inconsistent"
    assert verify(_counted(1, "this morning"), tools).label == "consistent"


def test_more_doses_than_stated_and_other_notes_are_no_contradiction() -> None:
    tools = _doses("2199-02-03 08:00:00", "2199-02-03 14:00:00", "2199-02-03 20:00:00")
    assert verify(_counted(2), tools).label == "consistent"  # a count claims at least that many
    spread = _doses("2199-02-02 08:00:00", "2199-02-03 14:00:00", "2199-02-04 20:00:00")
    # a discharge summary's count is of its window, one short allowed
    assert verify(_counted(3), spread, note_type="discharge_summary").label == "consistent"


def test_a_long_tally_may_be_one_short_for_each_five() -> None:
    six = _doses(*(f"2199-02-03 {h:02d}:00:00" for h in (2, 6, 10, 14, 18, 22)))
    assert verify(_counted(7), six).label == "consistent"
    assert verify(_counted(8), six).label == "inconsistent"
    two = _doses("2199-02-03 02:00:00", "2199-02-03 12:00:00")
    assert verify(_counted(3), two).label == "inconsistent"  # a short count is met exactly


def test_an_amount_at_a_clock_time_is_a_timed_administration() -> None:
    tools = FakeTools({KEY: [row("2199-02-03 09:00:00", 250.0, key=KEY, table="inputevents_mv",
                                 end="2199-02-03 09:01:00", unit="mL")]})
    at = entity("Free water", "medication", keys=(KEY,), time_text="at 0500", drugs=["free water"], dose=250.0,
                dose_unit="ml")
    assert_decided(verify(at, tools), "medications.timed_administration", "inconsistent", "contradiction")
    on_time = entity("Free water", "medication", keys=(KEY,), time_text="at 0830", drugs=["free water"], dose=250.0,
                     dose_unit="ml")
    assert verify(on_time, tools).label == "consistent"


def test_blood_product_units_at_a_clock_time_are_left_to_the_transfusion_rule() -> None:
    tools = FakeTools({KEY: [row("2199-02-03 23:40:00", 300.0, key=KEY, table="inputevents_mv",
                                 end="2199-02-04 01:40:00", unit="mL")]})
    unit = entity("1 unit", "medication", keys=(KEY,), time_text="at 1500", concept="transfusion", drugs=["prbc"],
                  units=1)
    assert verify(unit, tools).rule_id != "medications.timed_administration"
