"""Known answers for item resolution by context: a unit's denominator is no item name
(ehrlib.pipeline.offline.unit_denominators), and a product family's name (tube feeds, free
water) is checked against whichever member product the tables chart."""
from __future__ import annotations

from ehrlib.corpus.records import ItemRef
from ehrlib.pipeline.offline.align import align
from ehrlib.pipeline.offline.lexicon import load_lexicon
from ehrlib.pipeline.offline.mentions import find_mentions


def _mentions(text: str, patient: tuple[str, ...] = ()):
    return find_mentions(text, 0, load_lexicon(), patient, "other")


def test_a_rate_unit_denominator_is_no_heart_rate() -> None:
    assert not [m for m in _mentions("UOP brisk (250 cc/hr at 0300-0400) overnight") if m.concept == "heart_rate"]
    assert not [m for m in _mentions("insulin gtt 2 u/hr at 0100, up to 4 u/hr at 0500") if m.concept == "heart_rate"]
    assert not [m for m in _mentions("dilt gtt at 10 mg/hr since 0200") if m.concept == "heart_rate"]


def test_a_word_joined_to_a_number_by_a_slash_or_after_a_rate_number_is_its_unit() -> None:
    hr = lambda text: [m.value for m in _mentions(text) if m.concept == "heart_rate"]  # noqa: E731
    assert hr("maintenance fluid LR at 90/hr with 40 KCl added") == []
    assert hr("output low overnight (~15-25/hr), HR 104") == ["104"]
    assert hr("NS running at 80 hr 10 mEq K added") == []
    assert hr("Tmax 99.1 hr 72 bp 118/64") == ["72"]  # a vital after another vital's number is a name
    assert [m.value for m in _mentions("BP 163/ RR 15 on the vent") if m.concept == "respiratory_rate"] == ["15"]
    assert [m.value for m in _mentions("BUN 22/Cr 1.1 this AM") if m.concept == "creatinine"] == ["1.1"]


def test_a_heart_rate_named_on_its_own_or_beside_a_name_stays() -> None:
    assert [m.value for m in _mentions("HR 92, BP 120/70") if m.concept == "heart_rate"] == ["92"]
    assert [m.value for m in _mentions("SBP 95, HR/RR 104/22") if m.concept == "heart_rate"]


def _drugs(text: str, patient: tuple[str, ...] = ()) -> list[tuple[str, tuple[str, ...]]]:
    return [(m.text, tuple(m.claim.drugs)) for m in _mentions(text, patient) if m.concept == "drug"]


def test_tube_feeds_name_the_family_of_enteral_formulas() -> None:
    (text, drugs), = _drugs("tube feeds advanced to 45 cc/hr")
    assert text == "tube feeds" and {"jevity", "osmolite", "replete", "nepro"} <= set(drugs)
    assert _drugs("bare mention of tube feeds") == []  # a family word with nothing to check: no statement


def test_a_formula_named_before_the_family_word_is_the_statement() -> None:
    got = _drugs("Osmolite 1.2 tube feeds restarted this AM", ("Osmolite 1.2 (Full)",))
    assert got == [("Osmolite 1.2 tube feeds", ("osmolite",))]


def test_the_family_aligns_to_the_charted_member() -> None:
    lex = load_lexicon()
    pairs = [(ItemRef("inputevents_mv", "Jevity 1.5 (Full)", "1"), "inputevents_mv:1"),
             (ItemRef("inputevents_mv", "GT Flush", "2"), "inputevents_mv:2"),
             (ItemRef("inputevents_mv", "Heparin Sodium", "3"), "inputevents_mv:3")]
    feeds = next(m for m in _mentions("tube feeds at 50 cc/hr") if m.concept == "drug")
    water = next(m for m in _mentions("free water flushes 150 q6h") if m.concept == "drug")
    assert [it.label for it, _ in align(feeds, lex, pairs)] == ["Jevity 1.5 (Full)"]
    assert [it.label for it, _ in align(water, lex, pairs)] == ["GT Flush"]


def test_a_number_introduced_by_a_noun_of_its_own_is_no_further_value() -> None:
    got = [(m.concept, m.value) for m in _mentions("ABG showed pO2 88 with an A-a gradient of 420 on 100%")
           if m.kind == "measurement"]
    assert got == [("po2", "88")]
    assert [m.value for m in _mentions("lactate 3.8, with a repeat level of 1.9") if m.concept == "lactate"] == [
        "3.8", "1.9"]
