"""Known answers for the medication scanner (ehrlib.pipeline.offline.medications): doses,
rates and courses read from made-up sentences."""
from __future__ import annotations

from ehrlib.pipeline.offline.lexicon import load_lexicon
from ehrlib.pipeline.offline.mentions import find_mentions


def _drugs(text: str, patient: tuple[str, ...] = ()):
    return [m for m in find_mentions(text, 0, load_lexicon(), patient, "other") if m.concept == "drug"]


def test_a_bare_number_after_a_drug_is_its_dose_in_the_recorded_unit() -> None:
    got = {m.text.lower(): (m.claim.dose, m.claim.dose_unit) for m in _drugs("Meds: aspirin 81, metoprolol 50 PO bid")}
    assert got == {"aspirin": (81.0, None), "metoprolol": (50.0, None)}
    assert _drugs("lasix 20 mg IV")[0].claim.dose_unit == "mg"


def test_a_number_that_is_no_dose_is_left_alone() -> None:
    assert _drugs("vancomycin day 5 of 14")[0].claim.dose is None
    assert _drugs("albumin 25% given")[0].claim.dose is None


def test_a_course_is_one_claim_per_rate_and_stop() -> None:
    ms = _drugs("Nitro gtt 40 -> 25 mcg/min, stopped at 0915.")
    assert [(m.claim.rate, m.claim.rate_unit, m.claim.action) for m in ms] == [
        (40.0, "mcg/min", None), (25.0, "mcg/min", "titrated"), (None, None, "off")]
    assert ms[-1].text == "stopped at 0915"


def test_course_steps_of_a_later_drip_and_a_titration_without_unit() -> None:
    ms = _drugs("esmolol 10 mg IV then drip at 50 mcg/kg/min, titrated up to 100, off by 2200.", ("Esmolol",))
    assert ms[0].claim.dose == 10.0 and ms[0].claim.rate is None
    assert [(m.claim.rate, m.claim.rate_unit) for m in ms[1:]] == [(50.0, "mcg/kg/min"), (100.0, None), (None, None)]


def test_a_rate_range_is_no_course() -> None:
    ms = _drugs("morphine gtt 2-4 mg/hr overnight")
    assert len(ms) == 1


def test_brand_and_ward_names_from_the_synonym_table() -> None:
    got = {m.text.lower(): (m.claim.drugs, m.claim.dose) for m in _drugs("Meds: imdur 60, simva 20")}
    assert got == {"imdur": (("isosorbide mononitrate",), 60.0), "simva": (("simvastatin",), 20.0)}


def test_a_listed_drug_takes_no_route_of_the_next_one() -> None:
    ms = _drugs("Abx: ceftriaxone, metronidazole PO")
    assert [m.claim.route for m in ms] == [None, "PO"]


def test_rules_state_their_principle() -> None:
    from ehrlib.pipeline.offline.medications import RULES
    assert [r.rule_id for r in RULES] == ["extract.infusion_course", "extract.clause_time", "extract.unit_anaphor",
                                         "extract.route_switch",
                                         "extract.product_name_number", "extract.unitless_dose",
                                         "extract.family_after_member"]
    assert all(r.principle for r in RULES)


def test_a_rate_after_another_number_is_a_step_and_a_count_is_its_items_own() -> None:
    ms = _drugs("Nitro gtt started 0900, up to 60 mcg/min; bolus x2")
    assert [(m.text, m.claim.rate) for m in ms] == [("Nitro gtt", None), ("up to 60 mcg/min", 60.0)]
    ms = _drugs("On nitro, up to 60 mcg/min.")
    assert [m.claim.rate for m in ms] == [60.0]
    assert _drugs("KCl 20 mEq IV x3")[0].claim.units == 3.0
    assert _drugs("nitro gtt 20 mcg/min, boluses x2")[0].claim.units is None


def test_a_later_dose_in_the_drugs_sentence_is_a_claim_of_its_own() -> None:
    ms = _drugs("hydralazine 10 mg IV at 0900, 20 mg IV at 1300.")
    assert [(m.claim.dose, m.claim.route) for m in ms] == [(10.0, "IV"), (20.0, "IV")]
    assert ms[1].text == "20 mg IV"
    assert len(_drugs("hydralazine 10 mg IV, SBP 150s")) == 1


def test_a_class_word_yields_to_the_members_it_names() -> None:
    ms = _drugs("pressors (vasopressin, epinephrine) weaned off")
    assert [m.claim.drugs for m in ms] == [("vasopressin",), ("epinephrine",)]


def test_a_unit_without_its_product_is_the_product_named_before() -> None:
    ms = find_mentions("Hgb 6.9 -> 1 unit FFP at noon, another unit this evening.", 0, load_lexicon(), (), "other")
    units = [(m.text, m.claim.units) for m in ms if m.concept == "transfusion"]
    assert units == [("FFP", 1.0), ("another unit", 1.0)]
    assert not [m for m in find_mentions("insulin 2 units SC, one unit later", 0, load_lexicon(), (), "other")
                if m.concept == "transfusion"]


def test_a_limit_on_intake_orders_no_drug() -> None:
    assert _drugs("Hypernatremia: encourage PO, free water restriction for now.") == []
    assert _drugs("restrict free water, recheck Na") == []
    assert [m.text for m in _drugs("free water 150 cc q6h via PEG")] == ["free water"]
    # a need names a condition, not an order
    assert _drugs("Na 156 from a free water deficit of 3 L") == []
    assert _drugs("macrocytosis, ?thiamine deficiency") == []
    assert [m.text for m in _drugs("free water deficit 3 L, free water 200 cc q4h")] == ["free water"]


def test_brand_and_ward_names_and_millimoles() -> None:
    got = {m.text: (m.claim.drugs, m.claim.dose, m.claim.dose_unit, m.claim.action)
           for m in _drugs("Mucomyst 1200 mg PO before the CT; K-Phos 15 mmol hung; Sinemet via NG")}
    assert got == {"Mucomyst": (("acetylcysteine",), 1200.0, "mg", None),
                   "K-Phos": (("potassium phosphate",), 15.0, "mmol", "hung"),
                   "Sinemet": (("carbidopa levodopa",), None, None, None)}
    assert [m.claim.drugs for m in _drugs("D5NS at 125 cc/hr; bicarb amp pushed")] == [("d5ns",),
                                                                                        ("sodium bicarbonate",)]


def test_an_action_told_after_a_drug_is_that_drugs() -> None:
    got = [(m.text, m.claim.action) for m in _drugs("- propofol stopped overnight, Nepro advanced to goal",
                                                     ("Nepro (Full)",))]
    assert got == [("propofol", "stopped"), ("Nepro", None)]
    assert [m.claim.action for m in _drugs("started cefepime/vanc this AM")] == ["started", "started"]


def test_a_route_before_a_name_is_its_own_only_right_before_it() -> None:
    got = {m.text: m.claim.route for m in _drugs("dexamethasone 4 mg IV q6h + lasix; SC low dose heparin tid")}
    assert got == {"dexamethasone": "IV", "lasix": None, "heparin": "SC"}
    assert [m.claim.route for m in _drugs("lasix 40 mg PO and metoprolol")] == ["PO", None]


def test_an_oral_intake_is_no_drug_and_a_drug_keeps_its_route() -> None:
    """"PO 600 cc" is the intake volume (a measurement of the PO intake item), not an order."""
    got = [(m.text, m.claim.drugs, m.claim.dose, m.claim.dose_unit, m.claim.route)
           for m in _drugs("Eating well, PO 600 cc; oral intake 1,200 mL yesterday. Tylenol 650 mg PO q6h")]
    assert got == [("Tylenol", ("acetaminophen",), 650.0, "mg", "PO")]


def test_a_state_word_is_the_drug_s_after_another_drug_s_stop() -> None:
    """The action before a name is the nearest run of action words after the last comma:
    a stop told of one drug is not the next drug's state ("remains on", "still on")."""
    cases = {
        "Neo weaned off by 0500, remains on vasopressin 0.03 units/min": ("vasopressin", "on"),
        "propofol off since this morning; still on fentanyl 50 mcg/hr": ("fentanyl", "on"),
        "was started on heparin gtt per protocol": ("heparin", "started"),
        "dopamine stopped; continued on norepinephrine 0.1 mcg/kg/min": ("norepinephrine", "continued"),
    }
    for text, (drug, action) in cases.items():
        got = {m.text.lower(): m.claim.action for m in _drugs(text)}
        assert got[drug] == action, (text, got)


def test_drugs_given_after_a_negated_finding_are_not_negated() -> None:
    # "No BM today" negates the bowel movement; "senna/colace given" is a clause of its own
    ms = [m for m in find_mentions("No BM today, senna/colace given.", 0, load_lexicon()) if m.kind == "medication"]
    assert ms and all(not m.claim.negated for m in ms)
    ms = [m for m in find_mentions("No heparin given today.", 0, load_lexicon()) if m.kind == "medication"]
    assert ms and all(m.claim.negated for m in ms)


def test_a_need_denied_after_a_drug_negates_it() -> None:
    # words right after the drug that deny it was given: held, not needed, refused, deferred
    for text in ("prn haldol not needed overnight.", "lovenox refused this AM.", "enoxaparin refused by pt",
                 "zosyn was not required", "heparin held for the procedure", "insulin drip deferred",
                 "metoprolol not yet started"):
        ms = _drugs(text)
        assert ms and all(m.claim.negated for m in ms), text
    # a later clause that denies a further need leaves the given dose asserted
    for text in ("furosemide 40 mg IV given, not needed again", "haldol 2 mg given; not needed since",
                 "vancomycin needed for MRSA"):
        ms = _drugs(text)
        assert ms and not ms[0].claim.negated, text


def test_a_later_dose_after_another_name_is_not_the_drugs() -> None:
    # "folate 1 mg": a dose after a word that may name another product is not thiamine's
    ms = _drugs("Thiamine 100 mg, folate 1 mg, MVI daily.", ("Thiamine",))
    assert [(m.claim.drugs, m.claim.dose) for m in ms] == [(("thiamine",), 100.0)]
    # a later dose after a joint, a count or a time is the same drug's
    for text, second in (("haldol 5 mg IV x1 at 1520, 10 mg IV at 2030", 10.0), ("lasix 40 mg IV then 80 mg IV", 80.0),
                         ("lasix 40 mg IV, repeated 40 mg at 1400", 40.0)):
        assert [m.claim.dose for m in _drugs(text)] == [_drugs(text)[0].claim.dose, second], text


def test_a_frequency_number_starts_no_dose_chain() -> None:
    # "q12 -> 500 mg PO": the 12 is the dosing interval, not a first dose of a chain
    ms = _drugs("ciprofloxacin 400 mg IV q12 -> 500 mg PO today")
    assert [m.claim.dose for m in ms] == [400.0, 500.0]
    ms = _drugs("furosemide 20 -> 40 mg IV")
    assert [m.claim.dose for m in ms] == [20.0, 40.0]


def test_a_drug_named_as_its_last_dose_tells_a_course_end() -> None:
    # "Last dose of Antibiotics: X", "(last X dose ___)": the course's end up to the note (a completion)
    for text, drug in (("Last dose of Antibiotics: cefazolin", "cefazolin"),
                       ("# UTI: done (last ceftriaxone dose ___)", "ceftriaxone"),
                       ("last dose of meds: metoprolol", "metoprolol")):
        assert {m.text: m.claim.action for m in _drugs(text)}[drug] == "last", text
    # "last" as a time of day or without "dose" is no such claim
    for text in ("ceftriaxone given last night", "at last, heparin started", "last vanc level 18"):
        assert all(m.claim.action != "last" for m in _drugs(text)), text


def test_a_time_set_off_from_the_drug_is_its_own_statement() -> None:
    # the dose stays with the name; the time, in a clause of its own, is a second statement of the same drug
    ms = _drugs("Abx: ceftriaxone 2 g IV q24 - last dose 0830; metronidazole 500 mg PO")
    assert [(m.text, m.claim.drugs, m.claim.dose, m.claim.action) for m in ms] == [
        ("ceftriaxone", ("ceftriaxone",), 2.0, None), ("last dose 0830", ("ceftriaxone",), None, "given"),
        ("metronidazole", ("metronidazole",), 500.0, None)]
    assert ms[1].kind == "medication" and not ms[1].claim.infusion
    ms = _drugs("LR @ 75 cc/hr overnight, finished 0500")
    assert [(m.text, m.kind, m.claim.rate, m.claim.action) for m in ms] == [
        ("LR", "infusion", 75.0, None), ("finished 0500", "infusion", None, "stopped")]
    # told in the drug's own clause, the time belongs to its one statement
    assert [m.text for m in _drugs("ceftriaxone 2 g at 1400 for cellulitis")] == ["ceftriaxone"]
