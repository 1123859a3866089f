"""Known answers for the one span arbitration (ehrlib.pipeline.offline.spans)."""
from __future__ import annotations

from ehrlib.pipeline.offline.spans import Span, VocabularyMatcher, arbitrate

VOCABS = {
    "lab": {"calcium": ["calcium", "Ca"], "potassium": ["potassium", "K"], "magnesium": ["magnesium", "Mg"],
            "sodium": ["sodium", "Na"]},
    "drug": {"calcium carbonate": ["calcium carbonate"], "kcl": ["potassium chloride", "KCl"],
             "magnesium oxide": ["magnesium oxide", "mag oxide"], "sodium bicarbonate": ["sodium bicarbonate"]},
}


def _found(text, rank=("drug", "lab")):
    return [(s.vocabulary, s.key, s.text) for s in VocabularyMatcher(VOCABS, rank).find(text)]


def test_lab_name_inside_a_drug_name_is_the_drug():
    assert _found("calcium carbonate 500 mg PO daily") == [("drug", "calcium carbonate", "calcium carbonate")]
    assert _found("potassium chloride 20 mEq x2") == [("drug", "kcl", "potassium chloride")]
    assert _found("magnesium oxide 400 mg") == [("drug", "magnesium oxide", "magnesium oxide")]


def test_lab_and_drug_in_one_line_are_both_kept():
    assert _found("K 3.1, given potassium chloride 40 mEq; sodium 131") == [
        ("lab", "potassium", "K"), ("drug", "kcl", "potassium chloride"), ("lab", "sodium", "sodium")]


def test_short_capitalised_abbreviations_match_as_written():
    assert _found("ok k, 2 mg of something") == []  # "k" in prose and the unit "mg" are not analytes
    assert _found("MG 2.0 K+ 3.1 Mg++ 1.6") == [("lab", "magnesium", "MG"), ("lab", "potassium", "K+"),
                                               ("lab", "magnesium", "Mg++")]


def test_matches_respect_word_boundaries():
    assert _found("Kayexalate given; CaCO3") == []


def test_arbitration_longest_then_rank_then_start():
    a = Span(0, 7, "lab", "calcium", "calcium", "calcium")
    b = Span(0, 17, "drug", "calcium carbonate", "calcium carbonate", "calcium carbonate")
    assert arbitrate([a, b]) == [b]
    same1, same2 = Span(0, 5, "lab", "x", "x", "x"), Span(0, 5, "drug", "y", "y", "y")
    assert arbitrate([same1, same2], rank=("drug", "lab")) == [same2]
    assert arbitrate([same1, same2], rank=("lab", "drug")) == [same1]
    left, right = Span(0, 4, "lab", "l", "l", "l"), Span(2, 6, "lab", "r", "r", "r")
    assert arbitrate([right, left]) == [left]
    assert arbitrate([Span(0, 3, "lab", "a", "a", "a"), Span(5, 8, "lab", "b", "b", "b")]) == [
        Span(0, 3, "lab", "a", "a", "a"), Span(5, 8, "lab", "b", "b", "b")]


def test_candidates_keep_overlaps_for_inspection():
    keys = {(s.vocabulary, s.key) for s in VocabularyMatcher(VOCABS).candidates("calcium carbonate")}
    assert keys == {("lab", "calcium"), ("drug", "calcium carbonate")}


def test_arbitration_keeps_what_a_pairwise_check_keeps():
    """Checking only the chosen neighbours (bisect) equals checking every chosen span."""
    import random

    rng = random.Random(7)
    for _ in range(200):
        spans = []
        for _ in range(rng.randint(0, 30)):
            start = rng.randint(0, 60)
            spans.append(Span(start, start + rng.randint(1, 12), rng.choice(("lab", "drug")), "k", "t", "x"))
        chosen: list[Span] = []
        for s in sorted(spans, key=lambda s: (-(s.end - s.start), s.vocabulary != "drug", s.start)):
            if all(s.end <= c.start or c.end <= s.start for c in chosen):
                chosen.append(s)
        assert arbitrate(spans, rank=("drug",)) == sorted(chosen, key=lambda s: s.start)
