"""Known answers for specimen context (ehrlib.pipeline.offline.lab_specimens)."""
from __future__ import annotations

from ehrlib.corpus.records import ItemRef
from ehrlib.pipeline.offline.lab_specimens import RULE, specimen_items, statement_clause
from ehrlib.pipeline.offline.lexicon import load_lexicon

_PATIENT = [(ItemRef("chartevents", "Temperature Celsius", 223762), "chartevents:223762"),
            (ItemRef("labevents", "Temperature", 50825), "labevents:50825"),
            (ItemRef("chartevents", "PEEP set", 220339), "chartevents:220339"),
            (ItemRef("labevents", "PEEP", 50819), "labevents:50819"),
            (ItemRef("labevents", "Amylase", 50867), "labevents:50867"),
            (ItemRef("labevents", "Amylase, Ascites", 50836), "labevents:50836"),
            (ItemRef("labevents", "Bilirubin, Total", 50885), "labevents:50885"),
            (ItemRef("labevents", "Bilirubin, Total, Body Fluid", 51028), "labevents:51028"),
            (ItemRef("labevents", "Potassium", 50971), "labevents:50971"),
            (ItemRef("labevents", "Potassium, Whole Blood", 50822), "labevents:50822")]


def _labels(text: str, name: str, concept: str) -> list[str]:
    lex = load_lexicon()
    c = lex.concepts[concept]
    own = [(it, k) for it, k in _PATIENT if it.table in c.tables and c.items is not None and c.items.search(it.label)]
    start = text.index(name)
    clause = statement_clause(text, start, start + len(name))
    return [it.label for it, _ in specimen_items(clause, c, _PATIENT, own)]


def test_a_gas_named_in_the_clause_reads_the_gas_items() -> None:
    assert _labels("PEEP 10 with FiO2 50% on this morning's ABG", "PEEP", "peep") == ["PEEP"]
    assert _labels("08:12AM BLOOD Type-ART Temp-37.9 pO2-91", "Temp", "temperature") == ["Temperature"]
    assert _labels("Tmax 38.4 at 0200; repeat gas 7.38/40/88", "Tmax", "temperature") == ["Temperature Celsius"]
    assert _labels("Vent: AC, PEEP 8", "PEEP", "peep") == ["PEEP set"]


def test_a_body_fluid_named_before_the_analyte_reads_its_fluid_item() -> None:
    assert _labels("Peritoneal fluid: amylase 1,200, cell count pending", "amylase", "amylase") == ["Amylase, Ascites"]
    assert _labels("sent JP drain fluid for bili, which was 4.1", "bili", "bilirubin") == [
        "Bilirubin, Total, Body Fluid"]
    # serum values of the same sentence's other clause, and a fluid the patient has no item of, stay
    assert _labels("Pleural fluid tapped. Bili 1.2 in serum", "Bili", "bilirubin") == ["Bilirubin, Total"]
    assert _labels("Ascitic fluid K 3.4", "K", "potassium") == ["Potassium", "Potassium, Whole Blood"]
    # fluid given or held is no specimen
    assert _labels("fluid bolus 1 L given, amylase 310", "amylase", "amylase") == ["Amylase"]
    assert _labels("on fluid restriction, bili 2.0", "bili", "bilirubin") == ["Bilirubin, Total"]


def test_passing_gas_is_no_blood_gas() -> None:
    assert _labels("abd soft, passing gas, T 37.9", "T 37.9", "temperature") == ["Temperature Celsius"]


def test_clause_and_rule() -> None:
    assert statement_clause("Hgb 7.1. FiO2 40% on the gas; K 4.0", 9, 13) == " FiO2 40% on the gas"
    assert RULE.rule_id == "extract.specimen_item" and "specimen" in RULE.principle


def test_a_setting_without_a_bedside_item_reads_the_gas_record() -> None:
    lex = load_lexicon()
    labs = [(ItemRef("labevents", "PEEP", 50819), "labevents:50819"),
            (ItemRef("labevents", "Oxygen Saturation", 50817), "labevents:50817"),
            (ItemRef("labevents", "Temperature", 50825), "labevents:50825")]
    # no chart rows (a build without chartevents): the laboratory's record of the setting
    assert [it.label for it, _ in specimen_items("on the vent, PEEP 10", lex.concepts["peep"], labs, [])] == ["PEEP"]
    assert [it.label for it, _ in specimen_items("SvO2 64%", lex.concepts["svo2"], labs, [])] == ["Oxygen Saturation"]
    # a temperature is no setting: a gas's temperature is not the patient's
    assert specimen_items("Tmax 38.4", lex.concepts["temperature"], labs, []) == []


def test_an_analyte_named_without_a_specimen_reads_the_blood_item():
    from ehrlib.pipeline.offline.lab_specimens import default_specimen_items

    fluids = {"labevents:1": "Blood", "labevents:2": "Urine", "labevents:3": None, "labevents:4": "Stool"}
    blood = (ItemRef("labevents", "White Blood Cells", "1"), "labevents:1")
    urine = (ItemRef("labevents", "WBC", "2"), "labevents:2")
    stool = (ItemRef("labevents", "WBC", "4"), "labevents:4")
    unknown = (ItemRef("labevents", "WBC Count", "3"), "labevents:3")
    assert default_specimen_items([blood, urine, stool], fluids.get) == [blood]
    assert default_specimen_items([urine, unknown], fluids.get) == [unknown]   # no stated fluid: kept
    # only urine items: nothing else to read, they stay (a statement may still be about them)
    assert default_specimen_items([urine], fluids.get) == [urine]
    chart = (ItemRef("chartevents", "WBC", "9"), "chartevents:9")   # not a lab item: untouched
    assert default_specimen_items([chart, urine, blood], fluids.get) == [chart, blood]


def test_which_statements_name_a_specimen():
    from ehrlib.pipeline.offline.lab_specimens import names_specimen

    record = "___ 03:38PM ASCITES TotPro-3.0 LD(LDH)-55"
    at = record.index("LD(LDH)")
    assert names_specimen(record, record, at, at + 7, "LD(LDH)")          # the record's specimen
    prose = "urine Na 40 this morning"
    assert names_specimen(prose, prose, 6, 8, "Na")                          # a specimen word before it
    plain = "WBC 14, up from 11"
    assert not names_specimen(plain, plain, 0, 3, "WBC")                     # blood by default
