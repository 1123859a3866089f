"""Known answers for lab names inside drug/product names (ehrlib.pipeline.offline.product_spans)."""
from __future__ import annotations

from ehrlib.pipeline.offline.lexicon import load_lexicon
from ehrlib.pipeline.offline.mentions import find_mentions
from ehrlib.pipeline.offline.product_spans import RULE, concept_hits_outside_products, product_terms

ORDERS = ("Potassium Phosphate", "Albumin 5% (12.5g / 250mL)", "Calcium Carbonate", "Magnesium Oxide",
          "Heparin")


def _kinds(text, drugs=ORDERS):
    return [(m.kind, m.concept) for m in find_mentions(text, 0, load_lexicon(), drugs)]


def test_product_terms_keep_the_name_and_concentration():
    assert product_terms(ORDERS) == ("Potassium Phosphate", "Albumin 5%", "Calcium Carbonate", "Magnesium Oxide")


def test_lab_name_inside_a_product_is_not_a_lab_value():
    assert ("measurement", "phosphate") not in _kinds("potassium phosphate 15 mmol IV")
    assert ("measurement", "albumin") not in _kinds("Albumin 5% 250 mL given")
    assert ("measurement", "calcium") not in _kinds("calcium carbonate 500 mg PO TID")


def test_the_lab_itself_is_still_read():
    assert ("measurement", "phosphate") in _kinds("phosphate 1.9, repleted")
    assert ("measurement", "albumin") in _kinds("albumin 2.1")
    assert _kinds("Ca 7.9 after calcium carbonate") [0] == ("measurement", "calcium")


def test_equal_spans_stay_with_the_concept():
    lex = load_lexicon()
    raw = "potassium 3.1"
    hits = list(lex.concept_re.finditer(raw))
    assert [h.group(0) for h in concept_hits_outside_products(raw, hits, lex, ("Potassium",))] == ["potassium"]


def test_rule_states_its_principle():
    assert RULE.rule_id == "extract.product_name_span" and "longest match" in RULE.principle
