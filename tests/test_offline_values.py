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
