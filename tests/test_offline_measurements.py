"""Known answers for measurement and output mentions (ehrlib.pipeline.offline.measurements)."""
from __future__ import annotations

from ehrlib.pipeline.claims import Claim, MedicationClaim, NumericClaim, Reading
from ehrlib.pipeline.offline.lexicon import load_lexicon
from ehrlib.pipeline.offline.mentions import find_mentions


def _by_concept(text: str) -> dict[str, Claim]:
    return {m.concept: m.claim for m in find_mentions(text, 0, load_lexicon())}


def _numeric(text: str, concept: str) -> NumericClaim:
    claim = _by_concept(text)[concept]
    assert isinstance(claim, NumericClaim)
    return claim


def test_temperature_unit_by_magnitude_and_tmax_is_a_maximum() -> None:
    assert _numeric("T 38.5", "temperature").unit == "C"
    tmax = _numeric("Tmax 101.2", "temperature")
    assert tmax.unit == "F" and tmax.reading.max == 101.2
    assert "temperature" not in _by_concept("T cell count 400")


def test_dose_like_electrolyte_names_and_repletion() -> None:
    assert "potassium" not in _by_concept("given 20 K")          # a dose, not a potassium value
    assert _numeric("Na 135 K 4.2", "potassium").reading.value == 4.2
    ms = find_mentions("K 3.1, repleted", 0, load_lexicon())
    repl = [m for m in ms if m.kind == "medication"]
    assert [m.claim for m in repl] == [MedicationClaim(drugs=("potassium chloride",), action="repleted",
                                                       repletes="potassium")]
    assert not [m for m in find_mentions("K 3.1, repleted with KCl", 0, load_lexicon())
                if isinstance(m.claim, MedicationClaim) and m.claim.action == "repleted" and m.text == "repleted"]


def test_output_day_totals() -> None:
    assert _numeric("UOP 850 cc", "urine_output").per_day is True
    assert _numeric("UOP 30 cc per hour", "urine_output").per_hour is True


def test_blood_gas_triple_and_oxygen_flow() -> None:
    got = _by_concept("ABG 7.49/58/102, 2L NC")
    assert [got[c] for c in ("ph", "pco2", "po2")] == [NumericClaim(reading=Reading(value=v)) for v in (7.49, 58, 102)]
    assert got["o2_flow"] == NumericClaim(reading=Reading(value=2.0), unit="L/min")
