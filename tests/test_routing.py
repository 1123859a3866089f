"""Known answers for section -> table routing (ehrlib.pipeline.offline.routing)."""
from __future__ import annotations

from ehrlib.datafiles import load_data
from ehrlib.pipeline.offline.routing import route, tables_for_section


def test_summary_sections_are_checked_against_billing_only():
    assert tables_for_section("procedures") == ("procedures_icd",)
    assert tables_for_section("discharge_diagnosis") == ("diagnoses_icd",)
    assert route("procedures", ["chartevents", "procedureevents_mv", "procedures_icd"]) == ("procedures_icd",)
    assert route("discharge_diagnosis", ["labevents"]) == ()


def test_other_sections_use_every_table():
    assert tables_for_section("hospital_course") is None and tables_for_section(None) is None
    assert route("exam", ["chartevents", "labevents"]) == ("chartevents", "labevents")


def test_routes_name_real_section_kinds():
    kinds = {s["kind"] for s in load_data("offline_sections.yaml")["sections"]}
    assert set(load_data("section_tables.yaml")["routes"]) <= kinds


def test_route_to_an_unknown_table_is_rejected():
    import json

    import jsonschema
    import pytest

    from ehrlib.datafiles import data_text

    broken = {"version": 1, "routes": {"procedures": ["procedure_icd"]}}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, json.loads(data_text("schemas/section_tables.schema.json")))
