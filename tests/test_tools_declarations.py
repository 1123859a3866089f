"""Snapshot of the tool declarations a model sees (generated from signatures + docstrings).

A docstring or signature edit changes what every model is told; the snapshot makes that
visible in review. Regenerate deliberately with ``EHRLIB_UPDATE_SNAPSHOTS=1 pytest``.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from test_tools_testdb import ADMIT, DISCH, HA, A, build_tiny_hospital

from ehrlib.tools import TOOL_NAMES, PatientContext, make_toolset
from ehrlib.tools.declarations import genai_function_declarations, openai_tools

SNAPSHOT = Path(__file__).parent / "snapshots" / "tools_openai.json"


@pytest.fixture(scope="module")
def toolset(tmp_path_factory):
    path = build_tiny_hospital(tmp_path_factory.mktemp("decl") / "d.duckdb")
    with make_toolset(path, PatientContext(A, HA, ADMIT, DISCH)) as ts:
        yield ts


def test_openai_declarations_match_snapshot(toolset):
    got = json.dumps(openai_tools(toolset), indent=2, ensure_ascii=False, sort_keys=True) + "\n"
    if os.environ.get("EHRLIB_UPDATE_SNAPSHOTS") == "1" or not SNAPSHOT.exists():
        SNAPSHOT.parent.mkdir(parents=True, exist_ok=True)
        SNAPSHOT.write_text(got, encoding="utf-8")
        if os.environ.get("EHRLIB_UPDATE_SNAPSHOTS") != "1":
            pytest.fail(f"snapshot {SNAPSHOT.name} did not exist; written now, review and commit it")
    assert got == SNAPSHOT.read_text(encoding="utf-8")


def test_declarations_cover_every_tool_with_described_arguments(toolset):
    decls = openai_tools(toolset)
    assert [d["function"]["name"] for d in decls] == list(TOOL_NAMES)
    for d in decls:
        fn = d["function"]
        assert fn["description"] and "Args:" not in fn["description"]
        for name, prop in fn["parameters"]["properties"].items():
            assert prop.get("description"), (fn["name"], name)
            assert prop["type"] in ("string", "integer", "number", "boolean")
    value_history = next(d["function"] for d in decls if d["function"]["name"] == "Get_Item_Value_History")
    assert value_history["parameters"]["properties"]["operator"]["enum"][:3] == ["more", "less", "between"]
    assert set(value_history["parameters"]["required"]) == {"item", "operator", "value"}


def test_genai_declarations_build(toolset):
    decls = genai_function_declarations(toolset)
    assert [d.name for d in decls] == list(TOOL_NAMES)
    assert decls[0].parameters_json_schema["properties"]["query"]["type"] == "string"


def test_a_category_subset_declares_only_its_tools(tmp_path):
    path = build_tiny_hospital(tmp_path / "s.duckdb")
    with make_toolset(path, PatientContext(A, HA, ADMIT, DISCH), categories=("criterion",)) as ts:
        assert [s.name for s in ts.specs()] == ["Get_Clinical_Criterion"]
