"""Known-answer tests of culture mentions: specimen words, coordinated specimens, results."""
from __future__ import annotations

import pytest

from ehrlib.pipeline.offline.lexicon import load_lexicon
from ehrlib.pipeline.offline.mentions import find_mentions
from ehrlib.pipeline.offline.microbiology import microbiology_mentions, patient_test_names
from ehrlib.pipeline.offline.microsens import parse_susceptibilities


def _cultures(line: str) -> dict[str, tuple[str, str | None, bool]]:
    return {m.text.lower(): (m.claim.specimen, m.claim.organism, m.claim.negative)
            for m in microbiology_mentions(line, 0, load_lexicon(), [])}


@pytest.mark.parametrize("line, want", [
    # a bare specimen followed by an organism is a culture result
    ("Wound: GPCs in clusters on the gram stain.", {"wound": ("wound|swab", "staph", False)}),
    # specimens named together share the culture words and the result after the last one
    ("Blood and urine cultures were negative so far.", {"blood": ("blood cult", None, True),
                                                       "urine cultures": ("urine", None, True)}),
    ("Stool, urine and blood cultures sent this AM.", {"stool": ("stool|feces", None, False),
                                                       "urine": ("urine", None, False),
                                                       "blood cultures": ("blood cult", None, False)}),
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


def _claims(line: str, tests: tuple = ()) -> list[tuple[str, str | None, bool, bool, tuple]]:
    return [(m.text, m.claim.organism, m.claim.positive, m.claim.negative, m.claim.sensitivities)
            for m in microbiology_mentions(line, 0, load_lexicon(), [], tests)]


@pytest.mark.parametrize("line, want", [
    # "resistant to X" binds forward over its list, but "Y sensitive" ends the list and binds backward
    ("Wound cx grew Klebsiella resistant to ampicillin, gentamicin sensitive, now on cefepime.",
     [("ampicillin", "R"), ("gentamicin", "S")]),
    ("Sputum cx E. coli sensitive to ceftriaxone and cefepime.", [("ceftriaxone", "S"), ("cefepime", "S")]),
    ("Urine cx Proteus, ampicillin resistant and sensitive to ceftriaxone.",
     [("ampicillin", "R"), ("ceftriaxone", "S")]),
])
def test_a_susceptibility_word_binds_to_the_drug_next_to_it(line, want):
    got = [m.claim.sensitivities[0] for m in microbiology_mentions(line, 0, load_lexicon(), []) if m.value in "SRI"]
    assert got == want
    assert sorted(parse_susceptibilities(line, load_lexicon())[0]) == sorted(want)


def test_the_organism_and_each_susceptibility_are_separate_claims():
    (culture, drug) = _claims("Wound swab came back positive for Pseudomonas, cipro resistant.")
    assert culture[0] == "Wound swab" and culture[1] == "pseudomonas" and culture[4] == ()
    assert drug == ("cipro", "pseudomonas", False, False, (("ciprofloxacin", "R"),))


@pytest.mark.parametrize("line, want", [
    # the collection and a result in its own clause are two statements
    ("Stool cx sent, negative per micro.", [("Stool cx", None, False, False, ()),
                                             ("negative per micro", None, False, True, ())]),
    ("Sputum cx sent, positive.", [("Sputum cx", None, False, False, ()), ("positive", None, True, False, ())]),
    # a result after the specimen with no collection clause stays one statement
    ("Urine cx negative.", [("Urine cx", None, False, True, ())]),
])
def test_a_result_after_the_collection_is_its_own_claim(line, want):
    assert [(t, o and o.split("|")[0], p, n, s) for t, o, p, n, s in _claims(line)] == want


def test_the_patients_own_test_names():
    tests = patient_test_names(("Legionella Urinary Antigen", "BLOOD CULTURE", "Blood (EBV)"))
    found = microbiology_mentions("Legionella antigen negative; EBV pending.", 0, load_lexicon(), [], tests)
    assert [(m.text, m.claim.specimen, m.claim.negative) for m in found] == [
        ("Legionella antigen", "Legionella\\ Urinary\\ Antigen", True)]
    # generic words alone name no particular test, and a name needs a result or collection after it
    assert not microbiology_mentions("Fluid bottles sent.", 0, load_lexicon(), [],
                                     patient_test_names(("FLUID RECEIVED IN BLOOD CULTURE BOTTLES",)))
    assert not microbiology_mentions("Legionella antigen is on the differential", 0, load_lexicon(), [], tests)


@pytest.mark.parametrize("line, want", [
    ("The 3/2 culture grew Proteus.", [("culture", "")]),                  # no specimen named: any specimen
    ("Pleural fluid culture grew E. coli.", [("Pleural fluid", "pleural")]),  # the specimen's own culture word
    ("CSF gram stain and culture negative.", [("CSF", "csf")]),
])
def test_a_culture_named_without_its_specimen(line, want):
    assert [(m.text, m.claim.specimen) for m in microbiology_mentions(line, 0, load_lexicon(), [])] == want


def test_a_drug_word_inside_a_test_name_names_the_test():
    tests = patient_test_names(("Influenza A/B by DFA",))
    drugs = ["Influenza Virus Vaccine", "Oseltamivir"]
    found = find_mentions("Flu: influenza DFA negative; oseltamivir held.", 0, load_lexicon(), drugs, "other", (),
                          tests)
    assert [(m.text, m.kind) for m in found] == [("influenza DFA", "microbiology"), ("oseltamivir", "medication")]
    # without the test name the drug word stays a drug
    assert [m.kind for m in find_mentions("influenza vaccine given", 0, load_lexicon(), drugs)] == ["medication"]
