"""Known answers for measurement and output mentions (ehrlib.pipeline.offline.measurements)."""
from __future__ import annotations

from ehrlib.pipeline.offline.lexicon import load_lexicon
from ehrlib.pipeline.offline.mentions import find_mentions


def _by_concept(text: str) -> dict[str, dict]:
    return {m.concept: dict(m.attributes) for m in find_mentions(text, 0, load_lexicon())}


def test_temperature_unit_by_magnitude_and_tmax_is_a_maximum() -> None:
    assert _by_concept("T 38.5")["temperature"]["unit"] == "C"
    tmax = _by_concept("Tmax 101.2")["temperature"]
    assert tmax["unit"] == "F" and tmax["max"] == 101.2
    assert "temperature" not in _by_concept("T cell count 400")


def test_dose_like_electrolyte_names_and_repletion() -> None:
    assert "potassium" not in _by_concept("given 20 K")          # a dose, not a potassium value
    assert _by_concept("Na 135 K 4.2")["potassium"]["value"] == 4.2
    ms = find_mentions("K 3.1, repleted", 0, load_lexicon())
    repl = [m for m in ms if m.kind == "medication"]
    assert [m.attributes["drugs"] for m in repl] == [["potassium chloride"]]
    assert not [m for m in find_mentions("K 3.1, repleted with KCl", 0, load_lexicon())
                if m.attributes.get("action") == "repleted" and m.concept == "drug" and m.text == "repleted"]


def test_output_day_totals() -> None:
    assert _by_concept("UOP 850 cc")["urine_output"].get("per_day") is True
    assert _by_concept("UOP 30 cc per hour")["urine_output"].get("per_hour") is True


def test_blood_gas_triple_and_oxygen_flow() -> None:
    got = _by_concept("ABG 7.49/58/102, 2L NC")
    assert (got["ph"]["value"], got["pco2"]["value"], got["po2"]["value"]) == (7.49, 58, 102)
    assert got["o2_flow"] == {"value": 2.0, "unit": "L/min"}
