"""Known-answer tests of the surface baseline (explicit values, no reasoning)."""
from __future__ import annotations

import pytest
from verification_kit import KEY, FakeTools, assert_decided, entity, row, verify

TODAY = row("2199-02-03", 1.0)


@pytest.mark.parametrize("rows, label", [([TODAY], "consistent"), ([], "inconsistent")])
def test_lexical_match_of_an_interpretation(rows, label):
    tools = FakeTools({KEY: rows}, lexical=[{"key": KEY, "score": 0.8}])
    e = entity("afebrile", "interpretation", keys=(), criterion="fever", negated=True)
    assert_decided(verify(e, tools, surface=True), "surface.lexical_match", label)


def test_unmatched_words_are_missing():
    e = entity("afebrile", "interpretation", keys=())
    assert_decided(verify(e, FakeTools(), surface=True), "surface.lexical_match", "inconsistent", "missing")


@pytest.mark.parametrize("rows, label", [([TODAY], "consistent"), ([], "inconsistent")])
def test_record_exists(rows, label):
    e = entity("lasix", "medication", drugs=["furosemide"], dose=40.0, dose_unit="mg")  # the dose is not checked
    assert_decided(verify(e, FakeTools({KEY: rows}), surface=True), "surface.record_exists", label)


def test_numbers_use_the_number_rules():
    e = entity("lactate", "trend", concept="lactate", value=2.0, direction="up")
    v = verify(e, FakeTools({KEY: [row("2199-02-02", 4.0), row("2199-02-03", 2.0)]}), surface=True)
    assert_decided(v, "numbers.value_in_window", "consistent")  # no trend reasoning: the value is recorded
