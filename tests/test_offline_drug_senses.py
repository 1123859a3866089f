"""Known answers for the reading of an abbreviation with two expansions
(ehrlib.pipeline.offline.drug_senses): the sentence around "levo" decides between the
antibiotic and the pressor."""
from __future__ import annotations

import pytest

from ehrlib.pipeline.offline.lexicon import load_lexicon
from ehrlib.pipeline.offline.mentions import find_mentions


def _levo(text: str) -> tuple[str, ...]:
    ms = [m for m in find_mentions(text, 0, load_lexicon(), (), "other")
          if m.concept == "drug" and m.text.lower() == "levo"]
    assert len(ms) == 1, ms
    return tuple(ms[0].claim.drugs)


@pytest.mark.parametrize("text", [
    "Septic picture, on levo + dobutamine overnight.",
    "Plan: continue levo/milrinone, keep MAP above 65.",
    "levo weaned through the afternoon to 0.04",
    "Titrating levo, currently at 0.12",
    "BP soft, MAPs 58-64 on levo and vaso.",
    "levo 0.06 mcg/kg/min via the central line",
])
def test_a_pressor_sentence_makes_levo_norepinephrine(text: str) -> None:
    assert _levo(text) == ("norepinephrine",)


@pytest.mark.parametrize("text", [
    "Aspiration risk: started levo/flagyl yesterday.",
    "covered with vanc and levo for now",
    "levo 750 mg PO daily for 5 more days",
    "Plan: levo for the CAP, MAP goal above 65",
    "levo",
])
def test_an_antibiotic_or_silent_sentence_keeps_levofloxacin(text: str) -> None:
    assert _levo(text) == ("levofloxacin",)


def test_only_the_sentence_of_the_name_counts() -> None:
    assert _levo("Broad coverage with levo/flagyl. Wean levophed for MAP > 65.") == ("levofloxacin",)
    assert _levo("Finished the flagyl course. Wean levo for MAP > 65.") == ("norepinephrine",)
