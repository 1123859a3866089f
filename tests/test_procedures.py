"""Known answers for listed procedure entries and action binding (ehrlib.pipeline.offline.procedures)."""
from __future__ import annotations

import pytest

from ehrlib.pipeline.offline.mention import Mention
from ehrlib.pipeline.offline.procedures import (
    aside_procedures,
    listed_entries,
    merge_entry_fragments,
    procedure_claim,
    shared_conjunct,
)

#: entries a stand-in ICD procedure dictionary names
NAMED = {"infusion of fresh frozen plasma", "left internal mammary graft to diagonal", "lima-diag", "cabg x3"}


def _names(p):
    return p.lower() in NAMED


def _m(text, start, word, kind="procedure", concept="made_up"):
    a = text.index(word, start)
    return Mention(2, a, a + len(word), word, kind, concept)


def test_entries_of_a_listed_line():
    line = "- CABG x3 (LIMA-diag, SVG-RCA); Infusion of fresh frozen plasma."
    assert [line[a:b] for a, b in listed_entries(line)] == ["CABG x3 (LIMA-diag, SVG-RCA)",
                                                            "Infusion of fresh frozen plasma"]
    # a sentence end separates entries; an initial or a list number does not
    line = "PROCEDURES: Infusion of fresh frozen plasma. Thoracentesis. 2. Culture for E. coli"
    assert [line[a:b] for a, b in listed_entries(line)] == ["Infusion of fresh frozen plasma", "Thoracentesis",
                                                            "Culture for E. coli"]


def test_fragments_of_one_named_entry_become_one_statement():
    line = "Infusion of fresh frozen plasma, Thoracentesis"
    ms = [_m(line, 0, "Infusion"), _m(line, 0, "plasma", "medication", "ffp"), _m(line, 0, "Thoracentesis")]
    got = merge_entry_fragments(line, ms, _names)
    assert [(m.text, m.kind, m.concept) for m in got] == [("Infusion of fresh frozen plasma", "procedure", "made_up"),
                                                         ("Thoracentesis", "procedure", "made_up")]
    # procedure-code fragments become one, resolved by the entry's words
    line = "Infusion of fresh frozen plasma"
    ms = [Mention(2, 0, 8, "Infusion", "diagnosis", "procedure_code", "Infusion"),
          Mention(2, 12, 31, "fresh frozen plasma", "diagnosis", "procedure_code", "fresh frozen plasma")]
    assert [(m.text, m.value) for m in merge_entry_fragments(line, ms, _names)] == [(line, line)]
    # an entry the dictionary does not name keeps its mentions
    line = "Infusion of warmed plasma"
    ms = [_m(line, 0, "Infusion"), _m(line, 0, "plasma", "medication", "ffp")]
    assert merge_entry_fragments(line, ms, _names) == ms


def test_an_aside_naming_its_own_procedure_is_its_own_statement():
    line = "CABG x3 (LIMA-diag, SVG-RCA)"
    whole = Mention(2, 0, len(line), line, "diagnosis", "procedure_code", line)
    got = aside_procedures(2, line, [whole], _names)
    assert [(m.text, line[m.start:m.end], m.concept) for m in got] == [("LIMA-diag", "LIMA-diag", "procedure_code")]
    # a part already holding a mention is that mention's
    inner = _m(line, 0, "LIMA-diag")
    assert aside_procedures(2, line, [whole, inner], _names) == []


def test_a_procedure_told_done_in_prose():
    from ehrlib.pipeline.offline.procedures import prose_procedure_mentions

    def confident(p):
        return p.lower() in {"gastrostomy tube", "tunneled dialysis catheter"}

    text = "# Dysphagia: on TF. Gastrostomy tube placed by IR yesterday; tunneled dialysis catheter was inserted."
    got = prose_procedure_mentions(text, 4, [], confident)
    assert [(m.text, text[m.start:m.end], m.concept) for m in got] == [
        ("Gastrostomy tube", "Gastrostomy tube", "procedure_code"),
        ("tunneled dialysis catheter", "tunneled dialysis catheter", "procedure_code")]
    # a vocabulary mention already holding the procedure, or a negation inside the run, names none
    held = Mention(4, text.index("tube"), text.index("tube") + 4, "tube", "procedure", "made_up")
    assert [m.text for m in prose_procedure_mentions(text, 4, [held], confident)] == ["tunneled dialysis catheter"]
    assert prose_procedure_mentions("Gastrostomy tube not placed.", 0, [], confident) == []
    assert prose_procedure_mentions("Then gastrostomy placed.", 0, [], lambda p: True) == []  # one word is vague


def test_a_one_word_conjunct_shares_the_modifiers_before_it():
    assert shared_conjunct("posterior lumbar laminectomy", "fusion") == "posterior lumbar fusion"
    assert shared_conjunct("EGD", "banding") == "banding"  # nothing to share
    assert shared_conjunct("open cholecystectomy", "liver biopsy") == "liver biopsy"
    assert shared_conjunct(None, "tracheostomy") == "tracheostomy"


@pytest.mark.parametrize("raw, name, action", [
    ("CVL removed, PICC placed on HD 4", "PICC", "placed"),      # each name takes the verb of its own clause
    ("CVL removed, PICC placed on HD 4", "CVL", "removed"),
    ("A-line placed and Foley removed", "Foley", "removed"),
    ("The chest tube was pulled this AM", "chest tube", "pulled"),
    ("R subclavian CVL (placed 11/2)", "CVL", "placed"),          # an aside right after the name is its own
    ("ETT (intubated 11/2), R IJ CVL", "CVL", None),               # the aside belongs to the ETT
    ("extubated on HD 3", "extubated", "extubated"),               # the name is the action
])
def test_an_action_binds_to_the_name_of_its_clause(raw, name, action):
    a = raw.index(name)
    assert procedure_claim(raw, a, a + len(name))[0].action == action


@pytest.mark.parametrize("raw, name, side", [
    ("ACCESS: L AC 18g, R femoral A-line.", "A-line", "r"),   # the side of its own list item, not the first one
    ("Lines: R IJ CVL, A-line", "A-line", None),              # a side in the item before is that item's
    ("left IJ dialysis line", "dialysis line", "l"),
    ("A-line R radial", "A-line", "r"),                        # a side after the name
    ("L subclavian and R IJ CVL", "CVL", "r"),                 # the nearest before, in its own clause
])
def test_a_side_belongs_to_the_name_of_its_list_item(raw, name, side):
    a = raw.index(name)
    assert procedure_claim(raw, a, a + len(name))[0].side == side
