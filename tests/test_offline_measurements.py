"""Known answers for measurement and output mentions (ehrlib.pipeline.offline.measurements)."""
from __future__ import annotations

import pytest

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
            out.append((text[m.start:m.end].strip(), m.claim.reading.value))
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


def _gas(text: str) -> list[tuple[str, float | None]]:
    return [(m.concept, m.claim.reading.value) for m in find_mentions(text, 0, load_lexicon())
            if m.concept in ("ph", "pco2", "po2", "hco3") and isinstance(m.claim, NumericClaim)]


def test_blood_gas_panels_written_apart_from_their_gas_word() -> None:
    # words or a clock time between the gas word and the panel; a sentence end right after it
    assert _gas("Her initial gas was 7.18/71/88.") == [("ph", 7.18), ("pco2", 71.0), ("po2", 88.0)]
    assert _gas("Follow-up ABG today 7.33/50/96.") == [("ph", 7.33), ("pco2", 50.0), ("po2", 96.0)]
    assert _gas("Repeat gas 0415 7.30/52/140") == [("ph", 7.3), ("pco2", 52.0), ("po2", 140.0)]
    # a pH-shaped triple continuing the sentence is a gas of its own; two values are pH and pCO2
    assert _gas("gas 0930 7.29/55/101, 1415 7.36/44/92") == [("ph", 7.29), ("pco2", 55.0), ("po2", 101.0),
                                                              ("ph", 7.36), ("pco2", 44.0), ("po2", 92.0)]
    assert _gas("VBG 7.28/58") == [("ph", 7.28), ("pco2", 58.0)]
    # no pH first: no gas
    assert _gas("BP 128/64/90") == [] and _gas("tacro 2.5/1.25") == []


def test_later_values_of_an_analyte_in_its_sentence_are_claims_of_their_own() -> None:
    got = _values("Hgb 7.1 at 0300, 8.0 this afternoon", "hemoglobin")
    assert got == [("Hgb 7.1", 7.1), ("8.0 this afternoon", 8.0)]  # each value runs to its own time
    assert [v for _, v in _values("Mg 1.5 (1.9 yesterday)", "magnesium")] == [1.5, 1.9]
    # a drug's dose or a clock time between is skipped; the chain goes on after it
    assert [v for _, v in _values("K 5.9 on arrival, given kayexalate 30 gm, 4.4 by evening.", "potassium")] == [
        5.9, 4.4]
    # "..., fell to X" after a stated value is a value claim, not a direction claim
    claims = [m.claim for m in find_mentions("Hct 29.0 at noon, fell to 24.8", 0, load_lexicon())
              if m.concept == "hematocrit"]
    assert [c.reading.value for c in claims if isinstance(c, NumericClaim)] == [29.0, 24.8]
    assert all(isinstance(c, NumericClaim) and c.trend is None for c in claims)
    # another analyte ends the chain; counts, durations and sentence ends are no values
    assert [v for _, v in _values("Na 131, K 3.9, Cl 99", "sodium")] == [131.0]
    assert [v for _, v in _values("Cr 2.2 x2 days, HD 3. 4 units given", "creatinine")] == [2.2]
    # the same value in another unit, a bare bracketed number and a threshold are no further values
    assert [v for _, v in _values("Tmax: 38.3 C (100.9 F)", "temperature")] == [38.3]
    assert [v for _, v in _values("Plt 88 (140), INR 1.2", "platelets")] == [88.0]
    assert [v for _, v in _values("WBC 13.0, goal < 11", "wbc")] == [13.0]


def test_later_values_after_an_arrow_not_after_a_trend_word() -> None:
    assert [v for _, v in _values("Mg 1.4 at 0500 -> 2.1 after 2 gm IV", "magnesium")] == [1.4, 2.1]
    assert [v for _, v in _values("glucose 310, insulin gtt started 2215", "glucose")] == [310.0]
    got = _values("lactate 2.6, 1.7 at 0900. Repeat 1.1 at noon.", "lactate")
    assert got == [("lactate 2.6", 2.6), ("1.7 at 0900", 1.7)]  # the sentence ends after the clock time
    # a trend word is no first value: the numbers after it stay with the trend statement
    assert [v for _, v in _values("lactate trending down, 2.2 -> 1.5", "lactate")] == [None]


def test_an_extreme_word_and_an_arrow_introduce_later_values() -> None:
    # an extreme word before a later value makes it the course's maximum or minimum
    got = [m for m in find_mentions("Cr 1.7 on admission, peaking at 1.8, then down to 1.1", 0, load_lexicon())
           if m.concept == "creatinine"]
    assert [(m.kind, m.claim.reading.max) for m in got[1:2] if isinstance(m.claim, NumericClaim)] == [("range", 1.8)]
    assert [v for _, v in _values("Hgb 10.1 on HD 1, nadir of 7.1 on HD 6", "hemoglobin")] == [10.1, 7.1]
    # four digits right after an arrow continue the series: a value, not a clock time
    assert [v for _, v in _values("AST 2651 -> peak 3905 -> 2159", "ast")] == [2651.0, 3905.0, 2159.0]
    assert [v for _, v in _values("CK 890 -> 1450, repeat at 2130", "ck")] == [890.0, 1450.0]  # "at" keeps the clock


def test_a_cleared_marker_states_its_value_not_a_denied_state() -> None:
    # "cleared" tells the course's end (the value reached, improving), not that the state never held
    for text in ("Lactate cleared to 1.7 by mid-morning.", "lactic acid cleared to 0.9 after fluids"):
        got = [m for m in find_mentions(text, 0, load_lexicon()) if m.concept in ("lactate", "lactic_acidosis")]
        assert [(m.concept, m.claim.reading.value) for m in got if isinstance(m.claim, NumericClaim)] == [
            ("lactate", float(text.split("to ")[1].split()[0]))]
        assert all(isinstance(m.claim, NumericClaim) and m.claim.trend is not None
                   and m.claim.trend.direction == "improving" for m in got)


def test_later_values_rule_states_its_principle() -> None:
    from ehrlib.pipeline.offline.later_values import RULE
    assert RULE.rule_id == "extract.later_values" and "no other analyte between" in RULE.principle


def test_a_percentage_written_before_its_name_is_its_value() -> None:
    lex = load_lexicon()
    found = [(m.concept, m.value) for m in find_mentions("WBC 18 with 12% bands. Weaned to 35% FiO2", 0, lex)]
    assert ("bands", "12%") in found and ("fio2", "35%") in found
    taken = [(m.concept, m.value) for m in find_mentions("SpO2 97% sats on RA", 0, lex) if m.concept == "spo2"]
    assert taken == [("spo2", "97%")]                       # a value another name already took
    assert not [m for m in find_mentions("given 4 bands of gauze", 0, lex) if m.concept == "bands"]  # no % unit


def test_oral_intake_is_a_volume_and_a_dose_unit_makes_it_a_dose() -> None:
    lex = load_lexicon()
    found = [(m.concept, m.value) for m in find_mentions("Eating well, PO 640 cc; PO intake 300 mL overnight", 0, lex)]
    assert found == [("po_intake", "640 cc"), ("po_intake", "300 mL")]
    assert not [m for m in find_mentions("changed to PO 400 mg moxifloxacin", 0, lex) if m.concept == "po_intake"]
    assert not [m for m in find_mentions("labetalol PO 200 mg bid", 0, lex) if m.concept == "po_intake"]
    assert not [m for m in find_mentions("tolerating PO, 2 episodes of emesis", 0, lex) if m.concept == "po_intake"]
    later = find_mentions("K 5.8, given kayexalate 30 gm PO, 4.1 the next day", 0, lex)
    assert [m.value for m in later if m.concept == "potassium"][1].startswith("4.1")  # the route ends no values


def test_a_diastolic_pressure_is_its_own_item() -> None:
    found = [(m.concept, m.value) for m in find_mentions("SBP 88-140, DBP 40-72 overnight", 0, load_lexicon())]
    assert found == [("blood_pressure", "88-140"), ("diastolic_bp", "40-72")]


def test_base_excess_keeps_its_sign_in_blocks_and_prose() -> None:
    # a results block's joining hyphen before a minus sign; a signed prose value; a positive one
    assert _values("BLOOD Type-ART pO2-88 Base XS--7", "base_excess") == [("Base XS--7", -7.0)]
    assert _values("VBG with a base excess of -11", "base_excess")[0][1] == -11.0
    assert _values("BE 3 on the repeat", "base_excess")[0][1] == 3.0
    # analytes that cannot be negative still refuse a doubled hyphen
    assert not _values("Hgb--3", "hemoglobin")


def test_a_list_item_named_before_its_number_ends_the_earlier_analytes_values() -> None:
    ms = find_mentions("UA with WBC 7, SG 1.012, protein 30", 0, load_lexicon())
    assert [m.value for m in ms if m.concept == "wbc"] == ["7"]           # 1.012 and 30 are SG's and protein's
    later = find_mentions("Cr 1.4, down from 1.9 yesterday", 0, load_lexicon())
    assert len([m for m in later if m.concept == "creatinine"]) == 2     # a course word carries the values on


def test_a_urine_value_is_not_put_on_the_serum_scale() -> None:
    assert _numeric("urine Cr 62", "creatinine").reading.value == 62.0     # the urine creatinine as written
    assert _numeric("Cr 62", "creatinine").reading.value != 62.0           # µmol/L read on the serum scale


def test_a_trend_word_as_the_list_item_after_a_value_is_a_trend_statement_of_its_own() -> None:
    def read(text: str, concept: str) -> list[tuple[str, str | None, str | None]]:
        return [(m.kind, m.value, m.claim.trend.direction if isinstance(m.claim, NumericClaim) and m.claim.trend
                 else None) for m in find_mentions(text, 0, load_lexicon()) if m.concept == concept]
    assert read("BUN 88, rising; AG 14", "bun") == [("measurement", "88", None), ("trend", "rising", "up")]
    assert read("Tbili 6.1, downtrending over the day", "bilirubin")[-1] == ("trend", "downtrending", "down")
    assert read("Cr 2.1 -> 1.7, improving", "creatinine")[-1] == ("trend", "improving", "improving")  # after a series
    assert read("K 4.1, rising Cr", "potassium") == [("measurement", "4.1", None)]  # the word opens another phrase


def test_a_direction_word_after_another_number_or_sentence_is_not_the_values() -> None:
    def read(text: str, concept: str) -> list[tuple[str | None, str | None]]:
        return [(m.value, m.claim.trend.direction if isinstance(m.claim, NumericClaim) and m.claim.trend else None)
                for m in find_mentions(text, 0, load_lexicon()) if m.concept == concept]
    assert read("Cr 1.9 up", "creatinine") == [("1.9 up", "up")]            # the word right after its value
    assert read("Plt 45 and falling", "platelets") == [("45 and falling", "down")]
    assert read("SvO2 61\nup on dobutamine", "svo2") == [("61", None)]     # the next line's word
    assert read("Hct 31.2. Hct stable", "hematocrit")[0] == ("31.2", None)   # the next sentence's
    assert read("Mg 2.1 K 3.3 up", "magnesium") == [("2.1", None)]          # after another value: K's



def _read(text: str, concept: str) -> list[float | None]:
    return [m.claim.reading.value for m in find_mentions(text, 0, load_lexicon())
            if m.concept == concept and isinstance(m.claim, NumericClaim)]


def test_a_clock_time_after_the_name_is_the_draws_time_not_its_value():
    assert _read("INR back at 0348 9.6, FFP started", "inr") == [9.6]  # a leading zero: never a value
    assert _read("K at 1400 3.2", "potassium") == [3.2]
    assert _read("CK peaked at 1200", "ck") == [1200.0]  # no value follows: 1200 is the value


def test_a_count_of_a_product_or_a_labelled_number_is_no_further_value():
    assert _read("Hgb 7.1 -> 8.8, and 3 bags of platelets tonight", "hemoglobin") == [7.1, 8.8]
    assert _read("Plt 41 -> transfused 2 packs plts", "platelets") == [41.0]
    assert _read("WBC 11.2 with 9 bands", "wbc") == [11.2]  # the number before "bands" is the bands'
    assert _read("WBC 5.1 Plt 240  diff 71 N 20 L", "platelets") == [240.0]  # a differential's letters
    assert _read("Hct 30.9 at 0230, 32.4 this AM", "hematocrit") == [30.9, 32.4]


def test_an_arrow_to_a_dose_is_the_treatment_not_the_next_value():
    assert _read("- Mg 1.6 -> 4 gm Mg sulfate", "magnesium") == [1.6]
    assert _read("K 3.1 -> 3.8 -> 4.2", "potassium") == [3.1, 3.8, 4.2]


def test_a_name_of_the_mean_pressure_states_the_mean():
    bp = _numeric("pressors for MAP 50s overnight", "blood_pressure").bp
    assert bp is not None and bp.part("mean").min == 50.0 and bp.part("systolic").min is None
    sbp = _numeric("SBP 150s", "blood_pressure").bp
    assert sbp is not None and sbp.part("systolic").min == 150.0


def test_a_record_of_another_specimen_keeps_its_number_as_written():
    # the serum range would read urine creatinine 80 as 80 umol/L; a urine record's value is urine's
    assert _read("[**2110-1-2**] 01:15PM URINE Creat-80 Na-36", "creatinine") == [80.0]
    assert _read("[**2110-1-2**] 01:15PM CEREBROSPINAL FLUID (CSF) Glucose-1", "glucose") == [1.0]
    blood = _read("[**2110-1-2**] 01:15PM BLOOD Glucose-5", "glucose")
    assert blood and blood[0] == pytest.approx(90.07, abs=0.01)  # blood glucose 5 is mmol/L


def test_an_abbreviation_before_a_later_number_owns_it_even_when_no_concept_knows_it():
    assert _read("ALT 39 AST 37 AlkP 385 Tbili 0.3", "ast") == [37.0]  # 385 is AlkP's, not AST's
    assert _read("K 5.5 on admission, 3.6 today", "potassium") == [5.5, 3.6]


def test_the_white_cell_differential_is_read_by_its_short_forms() -> None:
    got = {m.concept: m.value for m in find_mentions("Neuts-28 Lymphs-61 Monos-8 Baso-2 NRBC-2 Eos 5.0", 0,
                                                     load_lexicon())}
    assert got == {"neutrophils": "28", "lymphocytes": "61", "monocytes": "8", "basophils": "2", "nrbc": "2",
                   "eosinophils": "5.0"}
    assert not [m for m in find_mentions("lymph nodes 2 cm; monospot sent", 0, load_lexicon())
                if m.concept in ("lymphocytes", "monocytes")]  # no differential value
