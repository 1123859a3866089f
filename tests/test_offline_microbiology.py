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
    # named cultures joined by a conjunction share the result after the last one; "NG" there is no growth
    ("ID: BCx and UCx no growth to date.", {"bcx": ("blood cult", None, True), "ucx": ("urine", None, True)}),
    ("Micro: sputum - yeast; urine cx NG", {"sputum": ("sputum|bronch", "yeast|candida", False),
                                            "urine cx": ("urine", None, True)}),
    ("Urine cx NG tube aspirate sent.", {"urine cx": ("urine", None, False)}),  # a nasogastric tube is no result
    ("BCx x2 + UCx sent this AM.", {"bcx": ("blood cult", None, False), "ucx": ("urine", None, False)}),
    # an organism between the conjunction and the next culture names that test, not a result
    ("MRSA screen and Staph aureus swab negative.", {"mrsa screen": ("mrsa screen", None, True),
                                                     "swab": ("swab", None, True)}),
    # a gram stain is a culture word; the result may follow a masked date
    ("CSF (``````2-3``````) gram stain and culture negative.", {"csf": ("csf", None, True)}),
    # the same word again is no coordination, and bare specimens without culture words are no culture
    ("Thick sputum, sputum cx sent.", {"sputum cx": ("sputum|bronch", None, False)}),
    ("Blood pressure stable, urine output fair.", {}),
    # "with" after a bare specimen binds a culture only when an organism follows
    ("Foley draining amber urine with sediment, UOP 400 cc.", {}),
    ("Urine w/ E. coli >100k, started ceftriaxone.", {"urine": ("urine", r"escherichia|e\. ?coli", False)}),
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
    # the second organism is its own statement too
    assert found == {"Urine": "klebsiella", "cefepime": "klebsiella", "E. COLI": "escherichia|e\\. ?coli",
                     "cipro": "escherichia|e\\. ?coli"}


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


def _all(line: str) -> list[tuple[str, str, str | None, tuple[tuple[str, str], ...]]]:
    return [(m.text, m.claim.specimen, m.claim.organism, m.claim.sensitivities)
            for m in find_mentions(line, 0, load_lexicon()) if m.kind == "microbiology"]


@pytest.mark.parametrize("line, want", [
    # a specimen, its masked date ("___" in MIMIC-IV, a bracketed date in MIMIC-III) and a colon, then the result
    ("Sputum ___: H. flu, urine ___: negative.", [("Sputum", "sputum|bronch", "haemophilus", ()),
                                                 ("urine", "urine", None, ())]),
    ("UCX ``````4-2``````: Acinetobacter", [("UCX", "urine", "acinetobacter", ())]),
    # a mini-BAL is the lavage specimen
    ("mini-BAL from yesterday w/ Serratia", [("mini-BAL", "sputum|bronch|\\bbal\\b", "serratia", ())]),
    # a second specimen with "also" reads its own result
    ("Wound cx grew Proteus; blood also w/ proteus.", [("Wound cx", "wound|swab", "proteus", ()),
                                                      ("blood", "blood cult", "proteus", ())]),
    # a C. diff sample sent is a stool culture
    ("C diff was sent this morning.", [("C diff was sent", "stool|feces", None, ())]),
])
def test_specimens_written_with_dates_and_results(line, want):
    assert _all(line) == want


@pytest.mark.parametrize("line, want", [
    # every specimen a culture verb lists is a culture collected, however bare
    ("Pan-cultured this AM: blood x2, urine, sputum.", ["blood", "urine", "sputum"]),
    ("Re-cultured (urine) overnight for a temp of 38.6", ["urine"]),
    ("pt pan cultured (blood, stool) at 2200", ["blood", "stool"]),
    ("Blood cultured again today.", ["Blood cultured"]),
    # a specimen written with its own culture words is read by the culture scanner, once
    ("Pan-cultured: BCx pending, sputum with GNRs", ["BCx", "sputum"]),
    # no culture verb: no culture
    ("Stool soft, sputum thin and clear.", []),
])
def test_specimens_listed_by_a_culture_verb(line, want):
    assert [t for t, *_ in _all(line)] == want


@pytest.mark.parametrize("line, want", [
    # each further organism of one culture is its own statement; susceptibilities bind to the one before them
    ("BAL ``````5-5``````: Klebsiella and Stenotrophomonas (steno S to bactrim)",
     [("BAL", "klebsiella", ()), ("Stenotrophomonas", "stenotrophomonas", ()),
      ("bactrim", "stenotrophomonas", (("sulfameth", "S"),))]),
    ("Blood cx 1/2 E. coli + Enterobacter", [("Blood cx", "escherichia|e\\. ?coli", ()),
                                             ("Enterobacter", "enterobacter", ())]),
    # two morphologies on one gram stain are the stain's one reading
    ("Drain fluid gram stain: GNRs + GPRs", [("gram stain", "escherichia|klebsiella|pseudomonas|proteus|enterobacter|"
                                                           "serratia|gram negative", ())]),
    # abbreviated antibiotics of a susceptibility report
    ("Urine: E. coli (amp R, TMP-SMX S)", [("Urine", "escherichia|e\\. ?coli", ()),
                                           ("amp", "escherichia|e\\. ?coli", (("ampicillin", "R"),)),
                                           ("TMP-SMX", "escherichia|e\\. ?coli", (("sulfameth", "S"),))]),
    ("Sputum w/ Pseudomonas, sens to cefepime", [("Sputum", "pseudomonas", ()),
                                                 ("cefepime", "pseudomonas", (("cefepime", "S"),))]),
])
def test_organisms_and_susceptibilities_each_a_statement(line, want):
    assert [(t, o, s) for t, _, o, s in _all(line)] == want


def test_each_culture_owns_the_susceptibilities_after_it_whatever_the_scan_order():
    # the bare urine culture is found after the sputum one; the susceptibilities stay the sputum's
    found = _all("Micro: urine ``````3-1`````` Proteus. Sputum ``````3-2``````: Klebsiella (cipro R)")
    assert found[-1] == ("cipro", "sputum|bronch", "klebsiella", (("ciprofloxacin", "R"),))


@pytest.mark.parametrize("line", [
    "# SEPSIS / KLEBSIELLA BACTEREMIA",                      # a problem title names the diagnosis
    "admitted with cholangitis and E. coli bacteremia / shock",
])
def test_an_undated_bacteremia_is_a_diagnosis(line):
    assert _all(line) == []


def test_an_identification_after_an_arrow_is_the_same_organism():
    found = _all("BCx 1/4 GPC in clusters -> coag-neg staph, oxacillin R")
    assert [t for t, *_ in found] == ["BCx", "oxacillin"]


def test_a_specimen_sourcing_an_earlier_organism_states_its_susceptibilities():
    # "<organism> bacteremia" is the blood culture's organism; the parenthesized blood cx only sources
    # the susceptibilities, it is no second statement
    found = _all("# Enterococcus bacteremia ``````6-1`````` (blood cx amp S, vanc R), on linezolid.")
    assert found == [("Enterococcus bacteremia", "blood cult", "enterococ", ()),
                     ("amp", "blood cult", "enterococ", (("ampicillin", "S"),)),
                     ("vanc", "blood cult", "enterococ", (("vancomycin", "R"),))]


@pytest.mark.parametrize("line, every", [("All blood cultures no growth to date.", True),
                                         ("all of her prior urine cx negative", True),
                                         ("Blood cultures no growth to date.", False)])
def test_a_result_of_every_culture(line, every):
    (m,) = [x for x in microbiology_mentions(line, 0, load_lexicon(), [])]
    assert (m.claim.every, m.claim.negative) == (every, True)


def _report(line: str) -> list[tuple[str, str | None, tuple, bool]]:
    from ehrlib.pipeline.offline.mention import clean_line

    return [(m.text, m.claim.organism, tuple(m.claim.sensitivities), m.claim.pan_sensitive)
            for m in microbiology_mentions(clean_line(line), 0, load_lexicon(), [])]


def test_a_semicolon_inside_a_susceptibility_report_does_not_end_it():
    got = _report("BAL 3/2: Pseudomonas, S to cefepime and meropenem; R to cipro; gent I.")
    assert [(t, s) for t, _, s, _ in got[1:]] == [("cefepime", (("cefepime", "S"),)),
                                                  ("meropenem", (("meropenem", "S"),)),
                                                  ("cipro", (("ciprofloxacin", "R"),)),
                                                  ("gent", (("gentamicin", "I"),))]


@pytest.mark.parametrize("line, organisms", [
    # "also" adds an organism to the culture's report, past a semicolon or a susceptibility list
    ("Sputum 4/1 grew Klebsiella, R to ceftriaxone; also MRSA.", ["MRSA"]),
    ("wound swab: E. coli (amp R), also yeast", ["yeast"]),
    # a class word right after the organism restates its susceptibility: a claim of its own
    ("Sputum [**5-5**] Pseudomonas, cipro R, also Staph aureus, MSSA; vanc S", ["Staph aureus", "MSSA"]),
])
def test_organisms_added_to_a_report(line, organisms):
    got = _report(line)
    cultures = [t for t, org, sens, _ in got if org and (not sens or t in ("MRSA", "MSSA"))]
    assert cultures[1:] == organisms
    if "MSSA" in organisms:
        assert ("MSSA", "aureus", (("oxacillin", "S"),), False) in got
        assert ("vanc", "staph", (("vancomycin", "S"),), False) in got  # vanc S is the staph's


@pytest.mark.parametrize("line, excepted", [
    ("Urine cx 6/2: E. coli, pan-sensitive.", ()),
    # the resistances the report itself states are the exceptions of its pan-sensitive
    ("Sputum: Klebsiella pan-sensitive (ampicillin R)", (("ampicillin", "R"),)),
])
def test_pan_sensitive_is_its_own_statement(line, excepted):
    got = _report(line)
    pan = [x for x in got if x[3]]
    assert [(t, s) for t, _, s, _ in pan] == [("pan-sensitive", excepted)]
    assert not got[0][3]  # the culture states the organism only


@pytest.mark.parametrize("line", ["Stool [**3-2**] C. diff: negative", "C. difficile toxin negative x1"])
def test_a_c_diff_test_with_its_result(line):
    got = microbiology_mentions(line, 0, load_lexicon(), [])
    assert [(m.claim.specimen, m.claim.negative) for m in got] == [("stool|feces", True)]


def test_an_antibiogram_on_the_lines_under_its_organism_is_the_organisms() -> None:
    from ehrlib.pipeline.offline.microsens import REPORT_LINE_RULE, continues_report
    from ehrlib.pipeline.offline.paragraphs import paragraphs
    from ehrlib.pipeline.records import Segment
    lex = load_lexicon()
    lines = ["Wound cx: ENTEROBACTER CLOACAE, rare yeast.", "  Ertapenem S, pip/tazo R, levo S,",
             "  cefepime I.", "Started on vanc 1 g."]
    assert continues_report(lines[0], lines[1], lex) and continues_report(lines[1], lines[2], lex)
    assert not continues_report(lines[2], lines[3], lex)          # an order on the next line is no report
    assert not continues_report("Afebrile overnight.", "  Levo S today", lex)  # no culture before it
    (para, _) = [p for p in paragraphs(lines, Segment(0, 0, 3, "Micro", "results")) if p.text.strip()][:2]
    assert para.lines == (0, 1, 2)
    claims = [(m.text, m.claim.organism, m.claim.sensitivities) for m in microbiology_mentions(para.text, 0, lex, [])
              if m.value in ("S", "R", "I")]
    # the antibacterials are tested on the bacterium, not on the yeast named after it
    assert [(t, s) for t, _, s in claims] == [("Ertapenem", (("ertapenem", "S"),)),
                                              ("pip/tazo", (("piperacillin", "R"),)),
                                              ("levo", (("levofloxacin", "S"),)), ("cefepime", (("cefepime", "I"),))]
    assert {o for _, o, _ in claims} == {"enterobacter"}
    assert REPORT_LINE_RULE.rule_id == "extract.report_continuation"
