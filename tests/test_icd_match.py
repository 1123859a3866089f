"""Known answers for statements against ICD item rows (ehrlib.pipeline.offline.icd_match)."""
from __future__ import annotations

from ehrlib.pipeline.offline.icd_match import matching_rows, search_queries

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
