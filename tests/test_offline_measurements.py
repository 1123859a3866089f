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


def _values(text: str, concept: str) -> list[tuple[str, float | None]]:
    out = []
    for m in find_mentions(text, 0, load_lexicon()):
        if m.concept == concept and isinstance(m.claim, NumericClaim):
            out.append((text[m.start:m.end], m.claim.reading.value))
    return out


def test_each_number_of_a_series_is_its_own_value_claim() -> None:
    # arrows, in the order written; the first claim spans the name, later ones their number
    assert _values("Lipase 410 -> 380 -> 95 overnight.", "lipase") == [("Lipase 410", 410.0), ("380", 380.0),
                                                                     ("95", 95.0)]
    # newest-first arrows and a short note on one value keep every number, in text order
    assert [v for _, v in _values("Cr 0.9 <- 1.4 <- 2.2", "creatinine")] == [0.9, 1.4, 2.2]
    assert [v for _, v in _values("Hct 21.7 (0400) -> 24.9 -> 26.0 | K 4.0", "hematocrit")] == [21.7, 24.9, 26.0]
    # prose courses with thousands separators, and "(from X)" after a value
    assert [v for _, v in _values("ALT climbed from 1,204 to 3,377 overnight", "alt")] == [1204.0, 3377.0]
    assert [v for _, v in _values("Plt dropped from 140 to 61.", "platelets")] == [140.0, 61.0]
    assert [v for _, v in _values("Na 131 K 4.1 Cr 2.4 (from 2.9)", "creatinine")] == [2.4, 2.9]
    # a series states values, not a direction: no trend claim is left behind
    claims = [m.claim for m in find_mentions("BUN went from 60 to 22.", 0, load_lexicon()) if m.concept == "bun"]
    assert claims and all(isinstance(c, NumericClaim) and c.trend is None for c in claims)


def test_results_block_value_text_drops_the_joining_hyphen_and_flag() -> None:
    ms = [m for m in find_mentions("Hgb-8.1* WBC-14.9 Base XS--3", 0, load_lexicon())
          if isinstance(m.claim, NumericClaim) and m.concept in ("hemoglobin", "wbc")]
    assert {m.concept: m.value for m in ms} == {"hemoglobin": "8.1", "wbc": "14.9"}
