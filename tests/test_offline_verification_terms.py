"""The verification vocabularies load through the one data loader and match their schemas."""
from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
import yaml

from ehrlib.datafiles import load_data

DATA = Path(__file__).resolve().parents[1] / "ehrlib" / "data"
FILES = ("finding_states.yaml", "verification_terms.yaml", "diagnosis_wording.yaml", "charted_findings.yaml")


@pytest.mark.parametrize("name", FILES)
def test_vocabulary_loads_and_has_a_schema(name):
    assert (DATA / "schemas" / name.replace(".yaml", ".schema.json")).is_file()
    assert load_data(name)


def test_finding_patterns_compile_and_opposites_name_known_states():
    doc = load_data("finding_states.yaml")
    for concept, states in doc["states"].items():
        names = {s["state"] for s in states}
        for s in states:
            re.compile(s["note"]), re.compile(s["chart"])
        for state, against in doc["opposites"].get(concept, {}).items():
            assert state in names and set(against) <= names, concept
    assert set(doc["self_named"]) <= set(doc["states"])


@pytest.mark.parametrize("name, breakage", [
    ("finding_states.yaml", lambda d: d["states"]["abdomen"][0].pop("chart")),
    ("verification_terms.yaml", lambda d: d["dose_units"].update(mg="weight")),
    ("verification_terms.yaml", lambda d: d["actions"]["stopped_prefixes"].append(False)),  # YAML's bare `off`
    ("diagnosis_wording.yaml", lambda d: d["rewrites"].append({"term": "chf"})),
])
def test_schema_rejects_a_broken_vocabulary(name, breakage):
    doc = yaml.safe_load((DATA / name).read_text(encoding="utf-8"))
    breakage(doc)
    schema = json.loads((DATA / "schemas" / name.replace(".yaml", ".schema.json")).read_text(encoding="utf-8"))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, schema)
