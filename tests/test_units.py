"""Known answers for note values put on the item's scale (ehrlib.pipeline.offline.units)."""
from __future__ import annotations

import pytest

from ehrlib.pipeline.offline.units import Profile, canonical_unit, convert, on_item_scale, profile


@pytest.mark.parametrize("text, canon", [("°F", "degF"), ("?F", "degF"), ("Deg. F", "degF"), ("deg C", "degC"),
                                         ("%", "percent"), ("ug/kg/min", "mcg/kg/min"), ("mg/dl", "mg/dL"),
                                         ("furlongs", None), ("", None), (None, None)])
def test_canonical_unit(text, canon):
    assert canonical_unit(text) == canon


def test_temperature_both_ways():
    assert convert(101.2, "F", "C") == pytest.approx(38.444, abs=1e-3)
    assert convert(38.0, "degC", "degF") == pytest.approx(100.4)


def test_percent_and_fraction():
    assert convert(40, "%", "fraction") == pytest.approx(0.4)
    assert convert(0.35, "fraction", "%") == pytest.approx(35.0)


def test_per_weight_rate_needs_the_weight():
    assert convert(0.1, "mcg/kg/min", "mcg/min", weight_kg=80) == pytest.approx(8.0)
    assert convert(8.0, "mcg/min", "mcg/kg/min", weight_kg=80) == pytest.approx(0.1)
    assert convert(0.1, "mcg/kg/min", "mcg/min") is None


def test_molar_conversions_only_for_their_analyte():
    assert convert(1.0, "mg/dL", "umol/L", analyte="creatinine") == pytest.approx(88.42)
    assert convert(88.42, "umol/L", "mg/dL", analyte="Creatinine") == pytest.approx(1.0)
    assert convert(1.0, "mg/dL", "umol/L") is None
    assert convert(1.0, "mg/dL", "umol/L", analyte="glucose") is None


def test_profile_admits_its_scale_not_another():
    p = profile([36.5, 38.9, None])
    assert p == Profile(36.5, 38.9)
    assert p.admits(37.0) and p.admits(40.1) and not p.admits(101.2)
    assert profile([]) is None
    frac = Profile(0.4, 0.6)
    assert frac.admits(0.3) and not frac.admits(40)


def test_unit_known_on_both_sides():
    s = on_item_scale(40, "fraction", note_unit="%")
    assert (s.value, s.via) == (pytest.approx(0.4), "percent -> fraction")
    assert on_item_scale(40, "mg/dL", note_unit="%") is None  # no conversion: refuse, do not compare
    assert on_item_scale(40, "fraction", note_unit="furlongs") is None


def test_missing_note_unit_resolved_by_the_item_values():
    t = on_item_scale(101.2, "?C", item_values=[36.5, 38.9])
    assert (t.value, t.via) == (pytest.approx(38.444, abs=1e-3), "degF -> degC")
    assert on_item_scale(37.2, "C", item_values=[36.5, 38.9]).via == "as written"
    f = on_item_scale(0.5, "%", item_values=[40, 60])
    assert (f.value, f.via) == (pytest.approx(50.0), "fraction -> percent")
    assert on_item_scale(40, "fraction", item_values=[0.4, 0.6]).value == pytest.approx(0.4)
    assert on_item_scale(5000, "fraction", item_values=[0.4, 0.6]) is None  # no scale fits
    assert on_item_scale(101.2, "?C").via == "as written"  # no recorded values: nothing to infer from


def test_conversion_table_names_only_listed_units_and_a_typo_is_rejected():
    import json

    import jsonschema

    from ehrlib.datafiles import data_text, load_data

    doc = load_data("unit_conversions.yaml")
    assert all(c["from"] in doc["units"] and c["to"] in doc["units"] for c in doc["conversions"])
    broken = json.loads(json.dumps(doc))
    broken["conversions"][0]["factr"] = 1.0
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, json.loads(data_text("schemas/unit_conversions.schema.json")))


def test_item_unit_unknown_the_values_decide():
    s = on_item_scale(80, None, note_unit="%", item_values=[0.5, 1.0])
    assert (s.value, s.via) == (pytest.approx(0.8), "percent -> fraction")
    assert on_item_scale(80, None, note_unit="%", item_values=[50, 100]).via == "as written"
    assert on_item_scale(101.2, None, note_unit="F", item_values=[36.0, 38.5]).via == "degF -> degC"


def test_no_unit_on_either_side_allows_only_the_analytes_own_conversions():
    # no unit says which quantity it is: a generic conversion would read any number as a temperature or a weight
    assert on_item_scale(307, None, item_values=[116.0, 168.0], analyte="ck") is None  # not (307 - 32) * 5/9
    assert on_item_scale(5.9, None, item_values=[2.0, 2.8], analyte="troponin") is None  # not 5.9 lb in kg
    assert on_item_scale(348, None, item_values=[1.2, 8.2], analyte="inr") is None  # not 348 % as a fraction
    # a molar mass is the analyte's own: 80 umol/L creatinine is 0.9 mg/dL
    s = on_item_scale(80, None, item_values=[0.7, 1.2], analyte="creatinine")
    assert (s.value, s.via) == (pytest.approx(0.905, abs=1e-3), "umol/L -> mg/dL")
