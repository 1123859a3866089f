"""Known answers for statements against ICD item rows (ehrlib.pipeline.offline.icd_match)."""
from __future__ import annotations

import itertools

from ehrlib.pipeline.offline.icd_match import (
    billed_in_parts,
    icd_parent,
    matching_rows,
    one_title_states,
    parenthesised_aliases,
    resolve,
    search_queries,
)
from ehrlib.pipeline.offline.terminology import Terminology, Title

ROWS = [
    {"table": "diagnoses_icd", "key": "d:41071", "label": "Subendocardial infarction, initial episode of care"},
    {"table": "diagnoses_icd", "key": "d:4019", "label": "Unspecified essential hypertension"},
    {"table": "diagnoses_icd", "key": "d:5849", "label": "Acute kidney failure, unspecified"},
    {"table": "procedures_icd", "key": "p:9604", "label": "Insertion of endotracheal tube"},
    {"table": "procedures_icd", "key": "p:3893", "label": "Venous catheterization, not elsewhere classified"},
    {"table": "chartevents", "key": "c:1", "label": "Hypertension"},
]


def _keys(phrase, tables=("diagnoses_icd", "procedures_icd")):
    return [r["key"] for r in matching_rows(phrase, ROWS, tables)]


def test_statement_names_the_billed_code():
    assert _keys("NSTEMI") == ["d:41071"]
    assert _keys("HTN") == ["d:4019"]
    assert _keys("acute kidney injury") == ["d:5849"]
    assert _keys("Intubation") == ["p:9604"]
    assert _keys("central line placement") == ["p:3893"]


def test_section_tables_restrict_the_match():
    assert _keys("Intubation", ("diagnoses_icd",)) == []
    assert _keys("HTN", ("procedures_icd",)) == []  # nor does a chart item named Hypertension count


def test_no_billed_code_named():
    assert _keys("pneumonia") == [] and _keys("acute") == []
    assert matching_rows("NSTEMI", []) == []


def test_search_queries_add_the_icd_wording():
    assert search_queries("NSTEMI") == ["NSTEMI", "subendocardial infarction"]
    assert search_queries("Pneumonia") == ["Pneumonia"]
    assert search_queries("  ") == []


# --- resolution against a whole dictionary, then the billing ------------------------------


DICTIONARY = [
    Title("diagnoses_icd", "5845", "Acute kidney failure with lesion of tubular necrosis"),
    Title("diagnoses_icd", "5849", "Acute kidney failure, unspecified"),
    Title("diagnoses_icd", "5859", "Chronic kidney disease, unspecified"),
    Title("diagnoses_icd", "45620", "Esophageal varices in diseases classified elsewhere, with bleeding"),
    Title("diagnoses_icd", "45621", "Esophageal varices in diseases classified elsewhere, without mention of bleeding"),
    Title("diagnoses_icd", "2866", "Defibrination syndrome"),
    Title("diagnoses_icd", "J9601", "Acute respiratory failure with hypoxia"),
    Title("diagnoses_icd", "J9602", "Acute respiratory failure with hypercapnia"),
    Title("procedures_icd", "3961", "Extracorporeal circulation auxiliary to open heart surgery"),
    Title("procedures_icd", "02100Z9", "Bypass Coronary Artery, One Artery from Left Internal Mammary, Open Approach"),
    Title("procedures_icd", "021209W", "Bypass Coronary Artery, Three Arteries from Aorta with Autologous Venous "
                                       "Tissue, Open Approach"),
]


def _dictionary():
    return Terminology(DICTIONARY)


def test_icd_parent_is_one_level_up():
    assert icd_parent("diagnoses_icd", "5849") == "584"
    assert icd_parent("diagnoses_icd", "486") == "486"
    assert icd_parent("diagnoses_icd", "K7200") == "K720"
    assert icd_parent("procedures_icd", "3961") == "396"
    assert icd_parent("procedures_icd", "02100Z9") == "021"


def test_billed_title_named_directly():
    billed = [Title("diagnoses_icd", "5849", "Acute kidney failure, unspecified")]
    res = resolve("acute renal failure on admission", _dictionary(), billed)
    assert [t.code for t in res.named] == ["5849"] and res.resolved


def test_billed_code_of_the_same_category_is_the_statements_code():
    # the statement resolves to 584x; the billing holds the tubular-necrosis code of 584
    billed = [Title("diagnoses_icd", "5845", "Acute kidney failure with lesion of tubular necrosis")]
    res = resolve("AKI", _dictionary(), billed)
    assert [t.code for t in res.candidates] == ["5845"]


def test_a_sibling_stating_the_opposite_is_not_the_code():
    billed = [Title("diagnoses_icd", "45621", "Esophageal varices in diseases classified elsewhere, without "
                                              "mention of bleeding")]
    res = resolve("bleeding esophageal varices", _dictionary(), billed)
    assert res.candidates == () and res.concepts[0].code == "45620"


def test_confident_concept_not_billed_is_resolved_but_has_no_candidate():
    billed = [Title("diagnoses_icd", "5859", "Chronic kidney disease, unspecified")]
    res = resolve("disseminated intravascular coagulation", _dictionary(), billed)
    assert res.resolved and res.candidates == () and res.concepts[0].code == "2866"


def test_no_concept_is_unresolved():
    res = resolve("laboratory data on arrival", _dictionary(), [])
    assert not res.resolved


def test_icd10_pcs_bypass_named_by_the_clinical_abbreviation():
    billed = [Title("procedures_icd", "021209W", "Bypass Coronary Artery, Three Arteries from Aorta with "
                                                 "Autologous Venous Tissue, Open Approach")]
    res = resolve("CABG x3", _dictionary(), billed, ("procedures_icd",))
    assert [t.code for t in res.candidates] == ["021209W"]


class _Item:
    def __init__(self, table, code, label):
        self.table, self.value, self.label, self.key = table, code, label, f"{table}:{code}"


class _Catalog:
    def __init__(self, items):
        self.items = items
        self.by_key = {i.key: i for i in items}

    def get(self, key):
        return self.by_key.get(key)


_ENV_IDS = itertools.count()


class _Env:
    def __init__(self, items, billed):
        # a fresh identity per fake database: an id() can be reused once its object is gone, and the
        # dictionary memo (keyed by identity) would then hand one test another test's dictionary
        self.con, self.identity = object(), ("made-up", f"env-{next(_ENV_IDS)}")
        self.schema = type("S", (), {"flavor": "mimic3"})()
        self.catalog = _Catalog(items)
        self.patient_keys = frozenset(billed)


def test_names_icd_concept_against_the_database_dictionary():
    from ehrlib.pipeline.offline.icd_match import names_icd_concept, names_icd_concept_strictly

    items = [_Item(t.table, t.code, t.title) for t in DICTIONARY]
    tools = type("T", (), {"env": _Env(items, {"diagnoses_icd:5849"})})()
    assert names_icd_concept(tools, "DIC")
    assert not names_icd_concept(tools, "LABS ON ADMISSION:")
    assert names_icd_concept_strictly(tools, "acute renal failure")
    assert not names_icd_concept_strictly(tools, "weakness")
    # no database behind the tools: every listed entry is kept, no prose item is read
    assert names_icd_concept(object(), "anything") and not names_icd_concept_strictly(object(), "AKI")


def test_a_sibling_of_another_condition_is_not_the_code():
    # both under ICD-9 572, but "portal hypertension" is not "hepatic encephalopathy"
    dictionary = Terminology([Title("diagnoses_icd", "5722", "Hepatic encephalopathy"),
                              Title("diagnoses_icd", "5723", "Portal hypertension")])
    res = resolve("hepatic encephalopathy", dictionary, [Title("diagnoses_icd", "5723", "Portal hypertension")])
    assert res.candidates == () and res.resolved


def test_an_arterial_line_is_not_a_venous_catheter_of_the_same_category():
    dictionary = Terminology([Title("procedures_icd", "3891", "Arterial catheterization"),
                              Title("procedures_icd", "3893", "Venous catheterization, not elsewhere classified")])
    billed = [Title("procedures_icd", "3893", "Venous catheterization, not elsewhere classified")]
    assert resolve("arterial line", dictionary, billed).candidates == ()
    assert [t.code for t in resolve("central line", dictionary, billed).candidates] == ["3893"]


# --- compound entries, aliases, codes billed in parts ------------------------------------


_COMPOUND = [
    Title("diagnoses_icd", "I47", "Paroxysmal tachycardia"),
    Title("diagnoses_icd", "I472", "Ventricular tachycardia and fibrillation"),
    Title("diagnoses_icd", "I4720", "Ventricular tachycardia, unspecified"),
    Title("diagnoses_icd", "I4721", "Ventricular fibrillation"),
    Title("diagnoses_icd", "4560", "Esophageal varices with bleeding"),
    Title("diagnoses_icd", "5780", "Hematemesis"),
    Title("diagnoses_icd", "53019", "Other esophagitis"),
]


def test_one_title_states_a_compound_only_as_a_billable_title():
    tools = type("T", (), {"env": _Env([_Item(t.table, t.code, t.title) for t in _COMPOUND], set())})()
    assert one_title_states(tools, "Esophageal varices with bleeding")
    assert not one_title_states(tools, "Hematemesis from esophagitis")
    # the only whole title is a category header grouping two billable codes
    assert not one_title_states(tools, "Ventricular tachycardia and fibrillation")
    assert one_title_states(object(), "Hematemesis from esophagitis")  # no dictionary: nothing to split by


def test_a_parenthesised_alias_names_the_billed_code():
    assert parenthesised_aliases("Hepatic injury (shock liver)") == ("shock liver",)
    assert parenthesised_aliases("Sepsis (x2)") == ()
    billed = [Title("diagnoses_icd", "570", "Acute and subacute necrosis of liver")]
    dictionary = Terminology([*billed, Title("diagnoses_icd", "86400", "Injury to liver without mention of open "
                                                                       "wound into cavity, unspecified injury")])
    assert resolve("Hepatic injury", dictionary, billed).candidates == ()
    assert [t.code for t in resolve("Hepatic injury (shock liver)", dictionary, billed).named] == ["570"]


def test_organism_and_site_billed_as_two_codes():
    billed = [Title("diagnoses_icd", "04104", "Streptococcus infection in conditions classified elsewhere, group D"),
              Title("diagnoses_icd", "03843", "Septicemia due to pseudomonas"),
              Title("diagnoses_icd", "5761", "Cholangitis"),
              Title("diagnoses_icd", "4280", "Congestive heart failure, unspecified")]
    assert [t.code for t in billed_in_parts("Pseudomonas cholangitis", billed)] == ["03843", "5761"]
    # one word of a longer title is not its concept; a qualifier alone is no part
    assert billed_in_parts("renal failure", billed) == ()
    assert billed_in_parts("acute cholangitis", billed) == ()
    assert billed_in_parts("Pseudomonas cholangitis", billed[1:2]) == ()


def test_a_list_part_names_a_concept_closely_only(monkeypatch):
    from ehrlib.pipeline.offline import icd_match

    term = Terminology([Title("diagnoses_icd", "5719", "Unspecified chronic liver disease without mention of alcohol"),
                        Title("diagnoses_icd", "5733", "Hepatitis, unspecified"),
                        Title("diagnoses_icd", "5845", "Acute kidney failure with lesion of tubular necrosis"),
                        Title("diagnoses_icd", "7855", "Shock without mention of trauma"),
                        Title("procedures_icd", "5419", "Other laparotomy")])
    monkeypatch.setattr(icd_match, "dictionary_for", lambda tools: term)
    monkeypatch.setattr(icd_match, "billed_titles", lambda tools, tables=icd_match.ICD_TABLES: [])
    tools = object()  # the dictionary and billing come from the patched lookups

    def closely(phrase, tables=("diagnoses_icd",)):
        return icd_match.names_icd_concept_closely(tools, phrase, tables)

    assert closely("ATN") and closely("hepatitis")
    assert closely("ex-lap", ("procedures_icd",)) and not closely("ex-lap")
    assert not closely("liver")  # one word of a longer title
    assert closely("shock")


def test_billed_only_names_a_billed_title_only(monkeypatch):
    from ehrlib.pipeline.offline import icd_match

    term = Terminology([Title("procedures_icd", "3610", "Aortocoronary bypass for heart revascularization"),
                        Title("procedures_icd", "5419", "Other laparotomy")])
    monkeypatch.setattr(icd_match, "dictionary_for", lambda tools: term)
    monkeypatch.setattr(icd_match, "billed_titles", lambda tools, tables=icd_match.ICD_TABLES: [
        Title("procedures_icd", "5419", "Other laparotomy")])
    tools = object()
    assert icd_match.names_icd_concept_closely(tools, "ex-lap", ("procedures_icd",), billed_only=True)
    # a remote operation ("CAD s/p CABG") names the dictionary's title but nothing this stay billed
    assert icd_match.names_icd_concept_closely(tools, "aortocoronary bypass", ("procedures_icd",))
    assert not icd_match.names_icd_concept_closely(tools, "aortocoronary bypass", ("procedures_icd",),
                                                   billed_only=True)


def test_an_organism_word_alone_names_no_concept():
    # "organism" narrows a title ("Pneumonia, unspecified organism") but names no condition alone
    d = Terminology([Title("diagnoses_icd", "A419", "Sepsis, unspecified organism"),
                     Title("diagnoses_icd", "486", "Pneumonia, organism unspecified")])
    assert not resolve("organism", d, []).resolved
    assert [t.code for t in resolve("Pneumonia, organism", d, []).concepts][:1] == ["486"]
