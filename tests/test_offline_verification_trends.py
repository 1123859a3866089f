"""Known-answer tests of the trend rules (direction words, values with a direction, stated origins)."""
from __future__ import annotations

import pytest
from verification_kit import FakeTools, assert_decided, entity, row, spanned, verify

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


def test_stated_origin_must_be_a_value_before_the_new_one():
    line = "Cr down to 1.1 from 2.3"
    e = entity("Cr", "measurement", concept="creatinine", value=1.1, span=spanned(line, "Cr"))
    tools = _series(("2199-02-01 06:00:00", 1.8), ("2199-02-03 06:00:00", 1.1))
    assert_decided(verify(e, tools, line=line), "trends.stated_origin", "inconsistent", "contradiction")


def test_first_vs_last_direction():
    assert trend_direction([2.3, 1.8, 0.8]) == "falling"
    assert trend_direction([10, 10.2]) == "stable" and trend_direction([1]) == "insufficient data"
