"""Known answers for value parsing (ehrlib.pipeline.offline.values); flowsheet cases are in test_offline_text."""
from __future__ import annotations

from ehrlib.pipeline.offline.lexicon import load_lexicon
from ehrlib.pipeline.offline.values import parse_bp, parse_value


def test_blood_pressure_value_only_for_the_flagged_concept() -> None:
    lex = load_lexicon()
    bp = parse_value(" 110/60(75)", lex.concepts["blood_pressure"])
    assert bp is not None and (bp["systolic"], bp["diastolic"], bp["mean"]) == (110, 60, 75)
    hr = parse_value(" 110/60", lex.concepts["heart_rate"])
    assert hr is not None and "systolic" not in hr
    assert parse_bp("no pressure") is None


def test_verbs_and_decades() -> None:
    cr = load_lexicon().concepts["creatinine"]
    down = parse_value(" dropped to 0.9", cr)
    assert down is not None and down["direction"] == "down" and "max" not in down
    peak = parse_value(" peaked 2.3", cr)
    assert peak is not None and peak["max"] == 2.3 and "direction" not in peak
    dec = parse_value(" 60s-90s")
    assert dec is not None and (dec["min"], dec["min_hi"], dec["max_lo"], dec["max"]) == (60, 69, 90, 99)
    assert parse_value(" unknown") is None


def test_thousands_separator_charge_and_range_word() -> None:
    lex = load_lexicon()
    uop = parse_value(" 3,240 cc", lex.concepts["bun"])
    assert uop is not None and uop["value"] == 3240.0  # not cut at the comma
    mg = parse_value("++ 1.6", lex.concepts["magnesium"])
    assert mg is not None and mg["value"] == 1.6  # "Mg++": the charge is part of the name
    k = parse_value(" ranged 3.1 to 3.5", lex.concepts["potassium"])
    assert k is not None and (k["min"], k["max"]) == (3.1, 3.5) and "series" not in k and "direction" not in k
    trend = parse_value(" 3.1 to 3.5", lex.concepts["potassium"])
    assert trend is not None and trend["series"] == [3.1, 3.5]  # without "ranged": a change


def test_a_stated_range_of_values() -> None:
    hct = load_lexicon().concepts_for("Hct")[0]
    got = parse_value(" remained in the 24-28 range all week", hct)
    assert got is not None and (got["min"], got["max"]) == (24.0, 28.0) and "direction" not in got
    stable = parse_value(" stable in the 30-33 range", hct)
    assert stable is not None and (stable["min"], stable["max"]) == (30.0, 33.0) and "direction" not in stable


def test_a_verb_of_persistence_or_change_links_a_name_to_its_value() -> None:
    hct = load_lexicon().concepts_for("Hct")[0]
    kept = parse_value(" stayed 27-29 all week", hct)            # "stayed" links like "remained"
    assert kept is not None and (kept["min"], kept["max"]) == (27.0, 29.0)
    going = parse_value(" going from 31 to 24", hct)              # "going from a to b" like "went from"
    assert going is not None and going["series"] == [31.0, 24.0]
