"""Known answers for what a medication mention binds (ehrlib.pipeline.offline.medications):
routes adjacent to their drug, route changes, numbers inside product names, rates after
another clause, ampules as counts; made-up sentences in several styles."""
from __future__ import annotations

from ehrlib.pipeline.offline.lexicon import load_lexicon
from ehrlib.pipeline.offline.mentions import find_mentions


def _drugs(text: str, patient: tuple[str, ...] = ()) -> list:
    return [m for m in find_mentions(text, 0, load_lexicon(), patient, "other") if m.concept == "drug"]


def _routes(text: str) -> dict[str, str | None]:
    return {m.text.lower(): m.claim.route for m in _drugs(text)}


def test_a_route_right_before_the_next_drug_is_that_drugs() -> None:
    assert _routes("Treated with PO vancomycin 125 mg plus IV metronidazole") == {
        "vancomycin": "PO", "metronidazole": "IV"}
    assert _routes("on oral cipro 500 mg and IV flagyl") == {"cipro": None, "flagyl": "IV"}
    assert _routes("ceftriaxone 1 g IV and azithro")["ceftriaxone"] == "IV"


def test_a_route_does_not_reach_across_a_line_break() -> None:
    ms = _drugs("Meds: famotidine 20 mg IV, heparin 5000 SC\nK-Phos 15 mmol overnight")
    assert {m.text.lower(): m.claim.route for m in ms} == {"famotidine": "IV", "heparin": "SC", "k-phos": None}


def test_a_route_change_is_a_second_claim_about_the_new_route() -> None:
    ms = _drugs("levofloxacin 750 mg IV, changed to PO on [**2-6**] to finish the course")
    assert [(m.claim.route, m.claim.action) for m in ms] == [("IV", None), ("PO", "changed")]
    ms = _drugs("Vanc IV -> PO today")
    assert [m.claim.route for m in ms] == ["IV", "PO"]
    ms = _drugs("cipro was switched over to oral yesterday")
    assert [m.claim.route for m in ms] == [None, "PO"]
    assert len(_drugs("metoprolol 5 mg IV q6h")) == 1


def test_a_number_continuing_a_product_name_is_no_dose() -> None:
    ms = _drugs("Isosource 1.5 started at 15 mL/hr tonight", ("Isosource 1.5 (Full)",))
    assert [(m.text, m.claim.dose, m.claim.rate) for m in ms] == [("Isosource 1.5", None, 15.0)]
    ms = _drugs("TF: Glucerna 1.5 @ 40 cc/hr, goal 60", ("Glucerna (Full)",))
    assert ms[0].text == "Glucerna 1.5" and ms[0].claim.dose is None
    assert _drugs("lorazepam 1.5 IV q4h prn")[0].claim.dose == 1.5  # a drug's own number stays its dose


def test_a_rate_after_another_clause_of_the_drug_is_a_claim_of_its_own() -> None:
    ms = _drugs("Propofol started 1255 for vent dyssynchrony, at 25 mcg/kg/min")
    assert [(m.claim.action, m.claim.rate) for m in ms] == [("started", None), (None, 25.0)]
    assert [m.claim.rate for m in _drugs("heparin gtt, running at 1200 units/hr")] == [1200.0]
    assert [m.claim.rate for m in _drugs("On nitro, up to 60 mcg/min.")] == [60.0]


def test_ampules_count_pushes() -> None:
    assert _drugs("D50 1 amp at 1500 for BG 45")[0].claim.units == 1.0
    assert _drugs("calcium gluconate 2 amps given")[0].claim.units == 2.0


def _units(text: str) -> list[tuple[str, float | None]]:
    return [(m.text, m.claim.units) for m in find_mentions(text, 0, load_lexicon(), (), "other")
            if m.concept == "transfusion"]


def test_a_count_of_units_binds_to_the_product_beside_it() -> None:
    assert _units("rec'd FFP and 3 u PRBC overnight") == [("FFP", None), ("u PRBC", 3.0)]
    assert _units("s/p 2 units of FFP, cryo x4") == [("FFP", 2.0), ("cryo", 4.0)]
    assert _units("Needs: 4 units PRBC today, 3 FFP") == [("PRBC", 4.0), ("FFP", 3.0)]
    assert _units("transfused 1u PRBC") == [("transfused 1u PRBC", 1.0)]
    assert _units("Hct 23.1 PRBC given")[0][1] is None  # a lab value is no count


def test_another_statement_after_the_drug_ends_its_details() -> None:
    ms = _drugs("given platelets and cryo 118 cc at noon", ("Platelets",))
    assert [(m.text, m.claim.dose) for m in ms] == [("platelets", None)]
    ms = _drugs("hydromorphone PCA, then MS Contin 60 mg PO")
    assert [(m.claim.drugs, m.claim.dose) for m in ms] == [(("hydromorphone",), None), (("morphine sulfate",), 60.0)]


def test_an_amount_before_the_name_is_the_drugs_dose() -> None:
    assert [(m.claim.dose, m.claim.dose_unit) for m in _drugs("40 mEq KCl PO.")] == [(40.0, "meq")]
    ms = _drugs("albumin 5% 500 mL and a 2 L LR bolus")
    assert [(m.claim.dose, m.claim.dose_unit) for m in ms] == [(500.0, "ml"), (2.0, "l")]
    ms = _drugs("lasix 40 mg IV, 20 mEq KCl")  # the 20 mEq is KCl's, no later lasix dose
    assert [(m.claim.drugs, m.claim.dose) for m in ms] == [(("furosemide",), 40.0), (("potassium chloride",), 20.0)]
    ms = _drugs("Meds: vancomycin 1 g cefepime 2 g")  # no joiner: the 1 g stays vancomycin's
    assert [m.claim.dose for m in ms] == [1.0, 2.0]
    assert _drugs("gave 20 mg IV lasix")[0].claim.dose == 20.0


def test_a_running_total_before_the_name_is_no_single_dose() -> None:
    assert _drugs("Rec'd 7L LR since arrival")[0].claim.dose is None
    assert _drugs("repleted with 120 mEq KCl over the first two days")[0].claim.dose is None


def test_a_measurement_between_doses_leaves_the_later_dose_to_the_drug() -> None:
    ms = _drugs("Lopressor 5mg IV x1 at 1520 for HR 110s, 10mg IV at 2030.")
    assert [(m.claim.dose, m.claim.route) for m in ms] == [(5.0, "IV"), (10.0, "IV")]


def test_a_detail_belongs_to_the_drug_of_its_own_list_item() -> None:
    # the next item names something the lexicon does not know before its number: its dose is its own
    ms = _drugs("pyridoxine 50 PO, riboflavin 100 mg daily", ("Pyridoxine",))
    assert [(m.text, m.claim.dose, m.claim.dose_unit) for m in ms] == [("pyridoxine", 50.0, None)]
    ms = _drugs("BP goal met on labetalol, ambrisentan x14d, recheck echo")
    assert [(m.text, m.claim.duration_days) for m in ms] == [("labetalol", None)]
    assert _drugs("heparin gtt, PTT 72, held for procedure")[0].claim.rate is None
    # a head word that continues the drug's own item keeps its details the drug's
    assert [m.claim.rate for m in _drugs("on nitro, up to 60 mcg/min")] == [60.0]
    assert _drugs("levofloxacin 750 mg daily, for 7 days")[0].claim.duration_days == 7.0
    assert _drugs("propofol, weaned to 20 mcg/kg/min")[0].claim.rate == 20.0
    assert _drugs("pyridoxine, 50 mg PO", ("Pyridoxine",))[0].claim.dose == 50.0
