"""Known answers for drug levels read as lab values (ehrlib.pipeline.offline.drug_levels)."""
from __future__ import annotations

from ehrlib.pipeline.claims import MedicationClaim, NumericClaim
from ehrlib.pipeline.offline.lexicon import load_lexicon
from ehrlib.pipeline.offline.mentions import find_mentions


def _levels(text: str) -> list[tuple[str, str, float | None]]:
    return [(m.concept, text[m.start:m.end].strip(), m.claim.reading.value)
            for m in find_mentions(text, 0, load_lexicon())
            if m.concept.endswith("_level") and isinstance(m.claim, NumericClaim)]


def _doses(text: str) -> list[tuple[str, float | None]]:
    return [(m.claim.drugs[0], m.claim.dose) for m in find_mentions(text, 0, load_lexicon())
            if isinstance(m.claim, MedicationClaim) and m.claim.drugs]


def test_a_drug_name_joined_to_a_bare_number_is_its_level() -> None:
    # a results block joins the drug to its value like any analyte; a flag or a full stop may follow
    assert _levels("04:10AM BLOOD Vanco-18.2*") == [("vanco_level", "Vanco-18.2*", 18.2)]
    assert _levels("Dilantin 14.8 this morning.")[0][::2] == ("phenytoin_level", 14.8)
    assert _levels("Labs notable for phenytoin: 4.9, albumin 2.1")[0][::2] == ("phenytoin_level", 4.9)
    assert not _doses("04:10AM BLOOD Vanco-18.2*")


def test_a_number_with_a_dose_unit_route_or_frequency_stays_a_dose() -> None:
    for text in ("vancomycin 1250 q12h", "Vanc 1 g IV", "dilantin 100 TID", "phenytoin 300 mg PO qhs", "vanc 1.5"):
        assert not _levels(text), text
        assert _doses(text), text
    # a drug whose doses overlap its level range needs a level word
    assert not _levels("digoxin 0.125") and _levels("digoxin level 0.9")[0][::2] == ("digoxin_level", 0.9)


def test_a_level_word_after_the_order_is_the_level_of_the_drug_named_before_it() -> None:
    got = _levels("Vancomycin 1.25 g IV q12h (trough 16.1 this AM), cefepime 2 g q8h")
    assert got == [("vanco_level", "trough 16.1", 16.1)]
    assert _levels("on fosphenytoin then dilantin 100 mg IV q8h, random level 7.7")[0][::2] == ("phenytoin_level", 7.7)
    # the order itself stays a medication claim
    assert ("vancomycin", 1.25) in _doses("Vancomycin 1.25 g IV q12h (trough 16.1 this AM)")
    # the nearest drug before the word has no level: nothing is read
    assert not _levels("vanco 1 g, then cefepime 2 g IV, level 12")
    # a level word of another sentence names no drug of this one
    assert not _levels("Started vancomycin. Level 12 tomorrow AM.")


def test_rule_is_registered_with_its_principle() -> None:
    from ehrlib.pipeline.offline.drug_levels import RULE
    assert RULE.rule_id == "extract.drug_level" and "not an administration" in RULE.principle
