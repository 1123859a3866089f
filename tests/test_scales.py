"""Known answers for values written on another scale (ehrlib.pipeline.offline.scales)."""
from __future__ import annotations

import pytest

from ehrlib.pipeline.offline.lexicon import load_lexicon
from ehrlib.pipeline.offline.mentions import find_mentions
from ehrlib.pipeline.offline.scales import RULE, on_concept_scale
from ehrlib.pipeline.offline.units import into_range


def _value(text):
    ms = [m for m in find_mentions(text, 0, load_lexicon()) if m.kind in ("measurement", "range")]
    return ms[0].claim.reading.value if ms else None


@pytest.mark.parametrize("text, value", [("WBC 12,400", 12.4), ("Plt 150,000", 150.0), ("FiO2 0.4", 40.0),
                                         ("WBC 12.4", 12.4), ("FiO2 40%", 40.0)])
def test_value_read_on_the_concept_scale(text, value):
    assert _value(text) == pytest.approx(value)


def test_no_scale_makes_it_plausible():
    assert _value("K 42") is None
    assert into_range(42.0, "mEq/L", 1.5, 9.5, analyte="potassium") is None


def test_explicit_other_unit_is_not_rescaled():
    fio2 = load_lexicon().concepts["fio2"]
    assert on_concept_scale({"value": 0.4, "unit": "L"}, fio2) is None
    assert on_concept_scale({"value": 0.4, "series": [0.5, 0.4]}, fio2) is None
    got = on_concept_scale({"value": 0.4, "min": 0.3, "max": 0.5}, fio2)
    assert (got["value"], got["min"], got["max"]) == (40.0, 30.0, 50.0)


def test_rule_states_its_principle():
    assert RULE.rule_id == "extract.value_scale" and "another scale" in RULE.principle
