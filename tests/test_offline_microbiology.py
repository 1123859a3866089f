"""Known-answer tests of culture mentions: specimen words, coordinated specimens, results."""
from __future__ import annotations

import pytest

from ehrlib.pipeline.offline.lexicon import load_lexicon
from ehrlib.pipeline.offline.mentions import find_mentions
from ehrlib.pipeline.offline.microbiology import microbiology_mentions


def _cultures(line: str) -> dict[str, tuple[str, str | None, bool]]:
    return {m.text.lower(): (m.claim.specimen, m.claim.organism, m.claim.negative)
            for m in microbiology_mentions(line, 0, load_lexicon(), [])}


@pytest.mark.parametrize("line, want", [
    # a bare specimen followed by an organism is a culture result
    ("Wound: GPCs in clusters on the gram stain.", {"wound": ("wound|swab", "staph", False)}),
    # specimens named together share the culture words and the result after the last one
    ("Blood and urine cultures were negative so far.", {"blood": ("blood", None, True),
                                                       "urine cultures": ("urine", None, True)}),
    ("Stool, urine and blood cultures sent this AM.", {"stool": ("stool|feces", None, False),
                                                       "urine": ("urine", None, False),
                                                       "blood cultures": ("blood", None, False)}),
    ("Bile and sputum cx sent from the OR.", {"bile": ("bile", None, False), "sputum cx": ("sputum|bronch", None,
                                                                                          False)}),
    # a gram stain is a culture word; the result may follow a masked date
    ("CSF (``````2-3``````) gram stain and culture negative.", {"csf": ("csf", None, True)}),
    # the same word again is no coordination, and bare specimens without culture words are no culture
    ("Thick sputum, sputum cx sent.", {"sputum cx": ("sputum|bronch", None, False)}),
    ("Blood pressure stable, urine output fair.", {}),
])
def test_culture_mentions(line, want):
    assert _cultures(line) == want


def test_a_finding_value_ends_where_a_culture_begins():
    found = find_mentions("Lungs coarse throughout, suctioned thick secretions, sputum cx sent.", 0, load_lexicon())
    assert [m.text for m in found if m.kind == "microbiology"] == ["sputum cx"]


@pytest.mark.parametrize("line, organism, sensitivities", [
    ("Wound swab grew MRSA.", "aureus", (("oxacillin", "R"),)),    # MRSA names S. aureus and its resistance
    ("Sputum with MSSA.", "aureus", (("oxacillin", "S"),)),
    ("Stool cx: VRE.", "enterococ", (("vancomycin", "R"),)),
    ("Blood cx: E. coli.", "escherichia|e\\. ?coli", ()),
])
def test_organism_words_that_state_a_susceptibility(line, organism, sensitivities):
    (m,) = microbiology_mentions(line, 0, load_lexicon(), [])
    assert (m.claim.organism, m.claim.sensitivities) == (organism, sensitivities)


def test_each_susceptibility_belongs_to_the_organism_named_before_it():
    line = "Urine: >100K KLEBSIELLA (S to cefepime) and E. COLI (R to cipro)."
    found = {m.text: m.claim.organism for m in microbiology_mentions(line, 0, load_lexicon(), [])}
    assert found == {"Urine": "klebsiella", "cefepime": "klebsiella", "cipro": "escherichia|e\\. ?coli"}


@pytest.mark.parametrize("line, want", [
    ("Stool C. diff toxin negative.", {"c. diff toxin": (False, True)}),  # the stool is the test's specimen
    ("C diff positive on day 3", {"c diff positive": (True, False)}),
])
def test_a_test_named_with_its_result(line, want):
    got = {m.text.lower(): (m.claim.positive, m.claim.negative)
           for m in microbiology_mentions(line, 0, load_lexicon(), [])}
    assert got == want
