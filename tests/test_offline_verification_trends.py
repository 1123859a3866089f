"""Known-answer tests of the trend rules (direction words, values with a direction, stated origins)."""
from __future__ import annotations

import pytest
from verification_kit import FakeTools, assert_decided, entity, row, spanned, verify

from ehrlib.corpus.records import TimeSpan
from ehrlib.pipeline.offline.verification.trends import trend_direction


def _series(*points: tuple[str, float]) -> FakeTools:
    return FakeTools({"chartevents:1": [row(t, v) for t, v in points]})


LACTATE = _series(("2199-02-02 06:00:00", 4.0), ("2199-02-02 18:00:00", 3.1), ("2199-02-03 06:00:00", 2.0))


@pytest.mark.parametrize("direction, label", [("down", "consistent"), ("up", "inconsistent")])
def test_direction_word_against_the_recent_values(direction, label):
    e = entity("lactate", "trend", concept="lactate", direction=direction, trend_word=f"{direction}trending")
    assert_decided(verify(e, LACTATE), "trends.direction", label)


def test_direction_without_two_values_cannot_be_confirmed():
    e = entity("lactate", "trend", concept="lactate", direction="down")
    assert_decided(verify(e, FakeTools({})), "trends.direction", "inconsistent", "missing")


def test_one_value_shows_no_course_so_the_direction_is_unverified():
    # a single lactate in reach: the note's "trending down" is neither shown nor contradicted
    e = entity("lactate", "trend", concept="lactate", direction="down")
    v = verify(e, _series(("2199-02-03 06:00:00", 2.0)))
    assert_decided(v, "trends.direction", "unverified")
    assert "fewer than two values" in v.reason


@pytest.mark.parametrize("line, label", [
    ("Plt drifting down (212 yesterday)", "unverified"),   # 212 is the latest charted: nothing after it yet
    ("Plt improving from 212 yesterday", "unverified"),
    ("Plt drifting down (250 yesterday)", "inconsistent"),  # another earlier value: the course is charted
    ("Plt drifting down (211 yesterday)", "inconsistent"),  # within tolerance, but not the number written
    ("Plt drifting down", "inconsistent"),
])
def test_a_direction_told_against_the_latest_charted_value_is_unverified(line, label):
    e = entity("Plt", "trend", concept="platelets", direction="down", span=spanned(line, "Plt"))
    tools = _series(("2199-02-02 06:00:00", 180.0), ("2199-02-03 06:00:00", 212.0))
    assert_decided(verify(e, tools, line=line), "trends.direction", label)


@pytest.mark.parametrize("before, label", [(1.2, "consistent"), (3.0, "inconsistent")])
def test_value_with_a_direction(before, label):
    e = entity("Cr", "trend", concept="creatinine", value=2.0, direction="up")
    tools = _series(("2199-02-02 06:00:00", before), ("2199-02-03 06:00:00", 2.0))
    assert_decided(verify(e, tools), "trends.value_direction", label)


@pytest.mark.parametrize("word, label", [("down", "consistent"), ("up", "inconsistent")])
def test_stated_origin(word, label):
    line = f"Cr {word} to 1.1 from 2.3"
    e = entity("Cr", "measurement", concept="creatinine", value=1.1, span=spanned(line, "Cr"))
    tools = _series(("2199-02-01 06:00:00", 2.3), ("2199-02-03 06:00:00", 1.1))
    assert_decided(verify(e, tools, line=line), "trends.stated_origin", label)


@pytest.mark.parametrize("note_type, label", [("discharge_summary", "consistent"), ("physician", "inconsistent")])
def test_a_summarys_stated_origin_may_lie_anywhere_earlier_in_the_stay(note_type, label):
    # the climb started on the first day of the stay, a week before the peak the window holds
    line = "Cr climbed from 1.1 to a peak of 3.9"
    e = entity("Cr", "measurement", concept="creatinine", value=3.9, span=spanned(line, "Cr"),
               window=TimeSpan("2199-02-08 00:00:00", "2199-02-09 23:59:59"))
    tools = _series(("2199-01-31 06:00:00", 1.1), ("2199-02-04 06:00:00", 2.4), ("2199-02-07 06:00:00", 3.1),
                    ("2199-02-09 06:00:00", 3.9))
    assert_decided(verify(e, tools, line=line, note_type=note_type), "trends.stated_origin", label)


def test_stated_origin_must_be_a_value_before_the_new_one():
    line = "Cr down to 1.1 from 2.3"
    e = entity("Cr", "measurement", concept="creatinine", value=1.1, span=spanned(line, "Cr"))
    tools = _series(("2199-02-01 06:00:00", 1.8), ("2199-02-03 06:00:00", 1.1))
    assert_decided(verify(e, tools, line=line), "trends.stated_origin", "inconsistent", "contradiction")


def test_first_vs_last_direction():
    assert trend_direction([2.3, 1.8, 0.8]) == "falling"
    assert trend_direction([10, 10.2]) == "stable" and trend_direction([1]) == "insufficient data"


# --- an extreme's direction word tells the course after it ------------------------------------

@pytest.mark.parametrize("later, label", [(1.1, "consistent"), (6.8, "inconsistent")])
def test_peak_then_falling_is_judged_after_the_peak(later, label):
    # "Troponin peaked at 6.8 and came down": rose to 6.8 (nothing lower before it needed), then fell
    e = entity("Troponin", "trend", concept="lactate", value=6.8, max=6.8, max_lo=6.8, direction="down",
               trend_word="came down")
    tools = _series(("2199-02-02 06:00:00", 6.8), ("2199-02-03 06:00:00", later))
    assert_decided(verify(e, tools), "trends.value_direction", label)


def test_nadir_then_rising_is_judged_after_the_nadir():
    e = entity("Plt", "trend", concept="platelets", value=41.0, min=41.0, min_hi=41.0, direction="up",
               trend_word="recovered")
    tools = _series(("2199-02-02 06:00:00", 41.0), ("2199-02-03 06:00:00", 88.0))
    assert_decided(verify(e, tools), "trends.value_direction", "consistent")


# --- a small change the note states is a change ------------------------------------------------

_K_SMALL = _series(("2199-02-02 06:00:00", 4.4), ("2199-02-03 06:00:00", 4.3))


@pytest.mark.parametrize("line, label", [
    ("K drifting down, recheck in the PM", "consistent"),        # a drift word: any resolvable change
    ("K down 4.4 -> 4.3, recheck", "consistent"),                 # the values are written with it
    ("K trending down, recheck in the PM", "inconsistent"),       # a plain trend word: 2 % is stable
])
def test_small_change_words_and_stated_values_narrow_the_dead_band(line, label):
    word = "down"
    e = entity("K", "trend", concept="potassium", direction="down", trend_word=word,
               span=spanned(line, line.split(",")[0].split(" 4.4")[0]))
    assert_decided(verify(e, _K_SMALL, line=line), "trends.direction", label)


def test_small_change_still_needs_the_right_sign():
    line = "Na drifting up, free water"
    tools = _series(("2199-02-02 06:00:00", 134.0), ("2199-02-03 06:00:00", 133.0))
    e = entity("Na", "trend", concept="sodium", direction="up", trend_word="up", span=spanned(line, "Na drifting up"))
    assert_decided(verify(e, tools, line=line), "trends.direction", "inconsistent", "contradiction")


# --- a trend since a stated start spans from that start -----------------------------------------

def test_trend_since_a_start_compares_the_span_not_the_latest_day():
    # fell from 33 since admission though the latest day ticked up: "rising since admission" is wrong
    tools = _series(("2199-01-30 12:00:00", 33.0), ("2199-02-01 06:00:00", 29.0), ("2199-02-02 06:00:00", 26.0),
                    ("2199-02-03 06:00:00", 28.0))
    start = TimeSpan("2199-01-29 00:00:00", "2199-01-31 23:59:59")
    up = entity("Hct", "trend", concept="hematocrit", direction="up", trend_word="trending up",
                time_text="since admission", window=start)
    assert_decided(verify(up, tools), "trends.direction", "inconsistent", "contradiction")
    plain = entity("Hct", "trend", concept="hematocrit", direction="up", trend_word="trending up")
    assert_decided(verify(plain, tools), "trends.direction", "consistent")


def test_stated_values_of_a_large_change_keep_the_relative_band():
    # the note claims 26 -> 15; the table's 27 -> 26 is no such fall
    line = "WBC improving, 26 -> 15"
    tools = _series(("2199-02-02 06:00:00", 27.4), ("2199-02-03 06:00:00", 26.2))
    e = entity("WBC", "trend", concept="wbc", direction="down", trend_word="improving", span=spanned(line, "WBC"))
    assert_decided(verify(e, tools, line=line), "trends.direction", "inconsistent", "contradiction")


@pytest.mark.parametrize("line, later, label", [
    ("an INR of 2.1 that climbed", 3.4, "consistent"),       # narrated after the value: what came next
    ("an INR of 2.1 that climbed", 1.6, "inconsistent"),
    ("INR 2.1 and climbing", 1.6, "consistent"),              # a participle: the course up to the value
])
def test_a_past_tense_verb_after_the_value_tells_what_came_next(line, later, label):
    tools = _series(("2199-02-02 06:00:00", 1.5), ("2199-02-03 06:00:00", 2.1), ("2199-02-03 20:00:00", later))
    word = line.split()[-1]
    e = entity("INR", "trend", concept="inr", value=2.1, direction="up", trend_word=word, span=(0, len(line)))
    assert_decided(verify(e, tools, line=line), "trends.value_direction", label)


def test_a_statement_running_past_a_wrapped_line_is_read_from_its_own_text():
    line = "Vitamin K was given for an INR of 2.1 that"  # "climbed" is on the next line
    tools = _series(("2199-02-02 06:00:00", 1.5), ("2199-02-03 06:00:00", 2.1), ("2199-02-03 20:00:00", 1.6))
    e = entity("INR of 2.1 that climbed", "trend", concept="inr", value=2.1, direction="up", trend_word="climbed",
               span=(line.index("INR"), line.index("INR") + 23))
    assert_decided(verify(e, tools, line=line), "trends.value_direction", "inconsistent", "contradiction")


@pytest.mark.parametrize("line, label", [
    ("Cr was stable throughout the stay.", "inconsistent"),   # the whole stay: 0.8 -> 1.7 is no stable course
    ("Cr was stable.", "consistent"),                          # a progress note's stable: the latest day
])
def test_stable_throughout_the_stay_is_the_whole_span(line, label):
    tools = _series(("2199-02-02 06:00:00", 0.8), ("2199-02-03 06:00:00", 1.7), ("2199-02-03 18:00:00", 1.7))
    e = entity("Cr", "trend", concept="creatinine", direction="stable", trend_word="stable",
               span=spanned(line, "Cr was stable"))
    assert_decided(verify(e, tools, line=line), "trends.direction", label)


@pytest.mark.parametrize("start, end, label", [
    (58.0, 47.0, "consistent"),     # hypercapnia coming down toward 35-45: improving
    (58.0, 66.0, "inconsistent"),   # rising further from the interval
    (28.0, 33.0, "consistent"),     # hypocapnia improves upward
])
def test_improving_on_a_two_sided_analyte_is_toward_its_reference_interval(start, end, label):
    e = entity("pCO2", "trend", concept="pco2", direction="improving", trend_word="improving")
    tools = _series(("2199-02-02 22:00:00", start), ("2199-02-03 04:00:00", (start + end) / 2),
                    ("2199-02-03 10:00:00", end))
    assert_decided(verify(e, tools), "trends.direction", label)


def test_improving_from_inside_the_reference_interval_states_no_direction():
    e = entity("pCO2", "trend", concept="pco2", direction="improving", trend_word="improving")
    v = verify(e, _series(("2199-02-02 22:00:00", 40.0), ("2199-02-03 10:00:00", 44.0)))
    assert_decided(v, "trends.direction", "consistent")
    assert "not directional" in v.reason


@pytest.mark.parametrize("low, label", [(104.0, "consistent"), (74.0, "inconsistent")])
def test_a_stable_pressure_with_a_decade_range_claims_the_range(low, label):
    # "SBP stable 100s-140s all shift": where the systolic values stayed, the day's extremes
    e = entity("SBP", "trend", concept="blood_pressure", systolic_min=100.0, systolic_min_hi=109.0,
               systolic_max_lo=140.0, systolic_max=149.0, direction="stable", trend_word="stable")
    tools = FakeTools({"chartevents:1": [row("2199-02-03 04:00:00", low, label="Arterial BP [Systolic]"),
                                         row("2199-02-03 12:00:00", 142.0, label="Arterial BP [Systolic]")]})
    v = verify(e, tools)
    assert v.label == label and v.rule_id.startswith("numbers."), v.reason


@pytest.mark.parametrize("word, label", [("up", "inconsistent"), ("down", "consistent")])
def test_a_trend_told_for_a_part_of_the_day_is_that_parts_values(word, label):
    # "HR trending down this afternoon": the afternoon's values fell, though the day rose over the previous one
    tools = _series(("2199-02-02 14:00:00", 80.0), ("2199-02-03 09:00:00", 90.0), ("2199-02-03 12:30:00", 118.0),
                    ("2199-02-03 15:00:00", 104.0), ("2199-02-03 17:30:00", 96.0))
    e = entity("HR", "trend", concept="heart_rate", direction=word, trend_word=f"trending {word}",
               time_text="this afternoon")
    assert_decided(verify(e, tools, line=f"HR trending {word} this afternoon", note_type="nursing"),
                   "trends.direction", label)
