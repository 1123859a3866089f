"""Known-answer tests of the categorical lab result rule (categories.result_grade)."""
from __future__ import annotations

from dataclasses import replace

import pytest
from verification_kit import FakeTools, assert_decided, entity, row, verify

from ehrlib.pipeline.offline.lab_categories import LAB_CATEGORY
from ehrlib.pipeline.offline.verification.categories import agrees

_KEY = "labevents:51486"


def _recorded(*values: tuple[str, str]) -> FakeTools:
    return FakeTools({_KEY: [row(f"2199-02-03 {t}", None, value=v, key=_KEY, table="labevents") for t, v in values]})


def _stated(word: str):
    return entity("Leuks", "finding", keys=(_KEY,), shown=word, concept=LAB_CATEGORY)


@pytest.mark.parametrize("word, recorded, label", [
    ("NEG", "NEG", "consistent"),
    ("LG", "LGE", "consistent"),     # two spellings of one grade
    ("POS", "SM", "consistent"),     # positive, ungraded: any grade above negative
    ("SM", "LG", "inconsistent"),    # another grade
    ("NEG", "TR", "inconsistent"),
    ("POS", "NEG", "inconsistent"),
])
def test_result_grade(word: str, recorded: str, label: str) -> None:
    e = _stated(word)
    assert_decided(verify(e, _recorded(("09:00:00", recorded))), "categories.result_grade", label)


def test_the_stamped_draw_is_compared_and_no_result_is_missing() -> None:
    line = "___ 11:40PM URINE Leuks-MOD Nitrite-NEG"
    e = replace(_stated("MOD"), span=(18, 26))
    tools = _recorded(("06:00:00", "NEG"), ("23:40:00", "MOD"))
    assert_decided(verify(e, tools, line=line), "categories.result_grade", "consistent")
    e2 = replace(_stated("NEG"), span=(18, 26))
    assert_decided(verify(e2, tools, line=line), "categories.result_grade", "inconsistent")   # the 23:40 draw
    assert_decided(verify(_stated("NEG"), FakeTools({})), "categories.result_grade", "inconsistent", "missing")


def test_agrees() -> None:
    assert agrees(-1, 3) and agrees(2, 2) and not agrees(-1, 0) and not agrees(0, -1) and not agrees(1, 2)
