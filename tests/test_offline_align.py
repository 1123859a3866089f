"""Known answers for aligning mentions to table items (ehrlib.pipeline.offline.align)."""
from __future__ import annotations

import re

from ehrlib.corpus.records import ItemRef
from ehrlib.pipeline.claims import MedicationClaim, claim_for
from ehrlib.pipeline.offline.align import align, concept_items, drug_items
from ehrlib.pipeline.offline.lexicon import load_lexicon
from ehrlib.pipeline.offline.mention import Mention

PAIRS = [(ItemRef("prescriptions", "Piperacillin/Tazobactam (Zosyn)", "1"), "prescriptions:1"),
         (ItemRef("inputevents_mv", "Norepinephrine", "2"), "inputevents_mv:2"),
         (ItemRef("chartevents", "Heart Rate", "3"), "chartevents:3"),
         (ItemRef("labevents", "Heart Rate", "4"), "labevents:4"),
         (ItemRef("prescriptions", "LR", "5"), "prescriptions:5")]


def test_drug_names_align_by_word_starts() -> None:
    assert [k for _, k in drug_items(["zosyn"], PAIRS)] == ["prescriptions:1"]
    assert [k for _, k in drug_items(["lr"], PAIRS)] == ["prescriptions:5"]   # short names match exactly
    assert drug_items(["tazo"], [(ItemRef("prescriptions", "Pantoprazole", "9"), "p:9")]) == []
    intakes = [(ItemRef("inputevents_mv", "Pre-Admission/Non-ICU Intake", "6"), "i:6"),
               (ItemRef("inputevents_mv", "PO Intake", "7"), "i:7")]
    assert [k for _, k in drug_items(["po intake"], intakes)] == ["i:7"]  # a two-letter word counts beside others


def test_concept_items_keep_the_concept_tables() -> None:
    got = concept_items(("chartevents",), re.compile(r"^heart rate$", re.I), PAIRS)
    assert [k for _, k in got] == ["chartevents:3"]
    assert concept_items(("chartevents",), None, PAIRS) == []


def test_align_by_kind() -> None:
    lex = load_lexicon()
    levo = Mention(0, 0, 8, "levophed", "infusion", "drug", None, MedicationClaim(drugs=("norepinephrine",)))
    assert [k for _, k in align(levo, lex, PAIRS)] == ["inputevents_mv:2"]
    hr = Mention(0, 0, 2, "HR", "measurement", "heart_rate", "88", claim_for("measurement", value=88.0))
    assert [k for _, k in align(hr, lex, PAIRS)] == ["chartevents:3"]


def test_a_differential_part_aligns_to_its_percentage_item_not_a_fluids_absolute_count() -> None:
    lex = load_lexicon()
    pairs = [(ItemRef("labevents", "Eos#", "52379"), "labevents:52379"),        # pleural fluid, absolute
             (ItemRef("labevents", "Eosinophils", "51200"), "labevents:51200"),
             (ItemRef("labevents", "Nucleated Red Cells", "51257"), "labevents:51257"),
             (ItemRef("chartevents", "NRBC", "9"), "chartevents:9")]
    eos = Mention(0, 0, 3, "Eos", "measurement", "eosinophils", "5.0", claim_for("measurement", value=5.0))
    assert [k for _, k in align(eos, lex, pairs)] == ["labevents:51200"]
    nrbc = Mention(0, 0, 4, "NRBC", "measurement", "nrbc", "2", claim_for("measurement", value=2.0))
    assert [k for _, k in align(nrbc, lex, pairs)] == ["labevents:51257"]


def test_the_most_specific_drug_name_comes_first() -> None:
    pairs = [(ItemRef("prescriptions", "Aluminum-Magnesium Hydroxide", "1"), "p:1"),
             (ItemRef("prescriptions", "Calcium Carbonate", "2"), "p:2"),
             (ItemRef("inputevents_mv", "Magnesium Sulfate", "3"), "i:3")]
    assert [k for _, k in drug_items(["magnesium", "magnesium sulfate"], pairs)] == ["i:3", "p:1"]


def test_a_compound_form_is_found_written_with_a_hyphen_or_a_space() -> None:
    lex = load_lexicon()
    for text in ("new multi-lumen placed", "new multi lumen placed", "A-line in place"):
        m = lex.concept_re.search(text.lower())
        assert m is not None, text
        assert [c.cid for c in lex.concepts_for(m.group(0))] in (["central_line"], ["arterial_line"]), text
    assert lex.concept_re.search("multi-lumen")[0] == "multi-lumen"
    # a hyphen joins the words of a form only: "lumen-multi" is no form
    assert lex.concepts_for("lumen-multi") == ()


def test_alarm_limits_are_settings_not_values() -> None:
    cvp = [(ItemRef("chartevents", "Central Venous Pressure", "10"), "chartevents:10"),
           (ItemRef("chartevents", "Central Venous Pressure Alarm - High", "11"), "chartevents:11"),
           (ItemRef("chartevents", "FiO2 Alarm [Low]", "12"), "chartevents:12"),
           (ItemRef("chartevents", "Inspired O2 Fraction", "13"), "chartevents:13")]
    lex = load_lexicon()
    got = concept_items(lex.concepts["cvp"].tables, lex.concepts["cvp"].items, cvp)
    assert [k for _, k in got] == ["chartevents:10"]
    got = concept_items(lex.concepts["fio2"].tables, lex.concepts["fio2"].items, cvp)
    assert [k for _, k in got] == ["chartevents:13"]
    # an observation whose label merely contains the letters is kept
    assert concept_items(("chartevents",), re.compile("alarm|pressure", re.I),
                         [(ItemRef("chartevents", "Alarmed Pressure", "14"), "c:14")]) != []


def test_an_alias_names_the_generics_concentration_and_half_saline_is_sodium_chloride_045() -> None:
    lex = load_lexicon()
    pairs = [(ItemRef("inputevents_mv", label, str(i)), f"i:{i}") for i, label in enumerate(
        ["NaCl 0.9%", "NaCl 0.45%", ".45% Normal Saline", "D5 1/2NS", "NS"])]

    def named(drug: str) -> list[str]:
        m = Mention(0, 0, 2, drug, "medication", "drug", None, MedicationClaim(drugs=(drug,)))
        return [str(it.label) for it, _ in align(m, lex, pairs)]
    # "nacl" and "normal saline" of 0.9% saline do not name the 0.45% items ("NS" matches whole)
    assert sorted(named("sodium chloride 0.9%")) == ["NS", "NaCl 0.9%"]
    # 1/2 NS is sodium chloride 0.45%, under either name; the D5 mixture is another product
    assert sorted(named("1/2 ns")) == [".45% Normal Saline", "NaCl 0.45%"]
