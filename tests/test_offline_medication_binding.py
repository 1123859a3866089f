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
