"""EHRCon and EHR-ReasonCon-style adapters on small fixtures written from the documented formats."""
from __future__ import annotations

import csv
import json
import pickle

import pytest

from ehrlib.corpus.adapters import (
    note_type_from_category,
    parse_ehrcon_label,
    read_ehrcon_labels,
    read_reasoncon,
)
from ehrlib.corpus.ehrcon_release import read_ehrcon
from ehrlib.corpus.records import Inconsistency, RecordError, RowRef

NOTE_TEXT = "Admission Date: [**2150-1-1**]\nWBC 20.0 on admission\nvanc 1 g IV started [**1-2**]\nafebrile"


def _ehrcon_folder(tmp_path):
    d = tmp_path / "test" / "discharge"
    (d / "discharge_label").mkdir(parents=True)
    with (d / "discharge_test.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, ["ROW_ID", "SUBJECT_ID", "HADM_ID", "CHARTDATE", "CATEGORY", "ADMITTIME", "TEXT"])
        w.writeheader()
        w.writerow({"ROW_ID": 501, "SUBJECT_ID": 9, "HADM_ID": 100001, "CHARTDATE": "2150-01-05",
                    "CATEGORY": "Discharge summary", "ADMITTIME": "2150-01-01 10:00:00", "TEXT": NOTE_TEXT})
        w.writerow({"ROW_ID": 502, "SUBJECT_ID": 9, "HADM_ID": 100001, "CHARTDATE": "2150-01-03",
                    "CATEGORY": "Physician ", "ADMITTIME": "2150-01-01 10:00:00", "TEXT": "HR 80"})
    labels = {501: [
        {"WBC": {"data": [{"labevents": {"itemid": 51301, "valuenum": 20.0, "charttime": "2150-01-01"},
                           "label": "consistent", "errors": 0}],
                 "position": "1", "source": "mimic", "entity_type": "1", "all_queries": [["WBC", 20.0]]}},
        {"vanc": {"data": [{"prescriptions": {"drug": "Vancomycin", "startdate": "2150-01-02",
                                              "dose_val_rx": "1"},
                            "label": "'startdate' and 'dose_val_rx' are inconsistency", "errors": 2}],
                  "position": "2", "source": "mimic", "entity_type": "1", "all_queries": []}},
        {"afebrile": {"data": [{"chartevents": {"itemid": 223761}, "label": "does not exist in the table",
                                "errors": 1}],
                      "position": "3", "source": "mimic", "entity_type": "2", "all_queries": []}},
    ], 999: [{"ghost": {"data": [], "position": "0", "source": "mimic", "entity_type": "2", "all_queries": []}}]}
    with (d / "discharge_label" / "discharge_test_label.pkl").open("wb") as fh:
        pickle.dump(labels, fh)
    return tmp_path / "test"


def test_ehrcon_folder_to_records(tmp_path):
    notes, gold = read_ehrcon(_ehrcon_folder(tmp_path))
    assert [(n.note_id, n.note_type, n.hadm_id, n.chartdate) for n in notes] == [
        ("501", "discharge_summary", 100001, "2150-01-05"), ("502", "physician", 100001, "2150-01-03")]
    assert [g.note_id for g in gold] == ["501"] * 3  # note 999 is not in the CSV
    wbc, vanc, afeb = gold
    assert (wbc.label, wbc.line, wbc.value, wbc.items[0].table, wbc.items[0].itemid) == (
        "consistent", 1, "20.0", "labevents", 51301)
    assert wbc.time.start == "2150-01-01" and wbc.claim["entity_type"] == "1"
    assert notes[0].lines[wbc.line].startswith("WBC")
    assert vanc.label == "inconsistent" and vanc.inconsistency == Inconsistency(
        "column", ("startdate", "dose_val_rx"), "time")
    assert vanc.items[0].label == "Vancomycin"
    assert afeb.inconsistency.kind == "missing"


def test_ehrcon_label_text_and_categories():
    assert parse_ehrcon_label("'valuenum' is inconsistency", 1)[1] == Inconsistency("column", ("valuenum",), "value")
    assert parse_ehrcon_label("", 0) == ("consistent", None)
    assert note_type_from_category("Nursing/other") == "nursing"
    assert note_type_from_category("Radiology") == "radiology"
    with pytest.raises(RecordError, match="CATEGORY"):
        note_type_from_category("ECG")


def test_ehrcon_bad_inputs(tmp_path):
    with pytest.raises(RecordError, match="'position'"):
        read_ehrcon_labels({1: [{"x": {"data": [], "position": "line two"}}]})
    with pytest.raises(RecordError, match="'data'"):
        read_ehrcon_labels({1: [{"x": {"data": {"labevents": 1}, "position": "0"}}]})
    (tmp_path / "nursing" / "nursing_label").mkdir(parents=True)
    with (tmp_path / "nursing" / "nursing_label" / "1.pkl").open("wb") as fh:
        pickle.dump({}, fh)
    bad = tmp_path / "nursing" / "notes.csv"
    bad.write_text("ROW_ID,TEXT\n1,x\n")
    with pytest.raises(RecordError, match="missing column 'HADM_ID'"):
        read_ehrcon(tmp_path)
    bad.write_text('ROW_ID,HADM_ID,CATEGORY,TEXT\n1,2,Nursing,"a note cut off\n')  # quote never closed
    with pytest.raises(RecordError, match="notes.csv: CSV error"):
        read_ehrcon(tmp_path)
    bad.write_bytes(b"ROW_ID,HADM_ID,CATEGORY,TEXT\n1,2,Nursing,caf\xe9\n")
    with pytest.raises(RecordError, match="not UTF-8"):
        read_ehrcon(tmp_path)


def _reasoncon_lines():
    note = {"note_id": "n7", "subject_id": 9, "hadm_id": 100001, "note_type": "discharge_summary",
            "chartdate": "2150-01-05", "text": NOTE_TEXT}
    hypo = {"note_id": "n7", "entity": "afebrile", "line": 3, "label": "consistent", "table": "chartevents",
            "columns": ["valuenum", "charttime"], "commonsense_medical_none": "m",
            "medical_knowledge_source": "Mayo Clinic: 38 °C or higher is a fever",
            "consistency_check_path": "Semantic_Search -> Get_Item_Value_History",
            "evidence_row_ids": [11, 12]}
    diet = {"note_id": "n7", "entity": "vanc 1 g IV", "position": "2", "label": "inconsistent",
            "inconsistency_kind": "missing", "table": "prescriptions", "commonsense_medical_none": "n",
            "consistency_check_path": ["Lexical_Search", "Get_Item_Status_History"],
            "evidence_row_ids": {"prescriptions": []}}
    col = {"note_id": "n7", "entity": "WBC 20.0", "line": 1, "label": "inconsistent",
           "inconsistent_columns": ["charttime"], "commonsense_medical_none": "c",
           "evidence_row_ids": ["labevents:5"]}
    return [note, hypo, diet, col]


def test_reasoncon_jsonl(tmp_path):
    path = tmp_path / "reasoncon.jsonl"
    path.write_text("".join(json.dumps(o) + "\n" for o in _reasoncon_lines()))
    notes, gold = read_reasoncon(path)
    assert [n.note_id for n in notes] == ["n7"] and notes[0].note_type == "discharge_summary"
    hypo, vanc, wbc = gold
    assert hypo.reasoning == "medical" and hypo.medical_knowledge_source.startswith("Mayo")
    assert hypo.check_path == ("Semantic_Search", "Get_Item_Value_History")
    assert hypo.evidence_row_ids == (RowRef("chartevents", 11), RowRef("chartevents", 12))
    assert vanc.line == 2 and vanc.inconsistency == Inconsistency("missing") and vanc.reasoning == "none"
    assert wbc.inconsistency == Inconsistency("column", ("charttime",), "time") and wbc.reasoning == "commonsense"
    assert wbc.evidence_row_ids == (RowRef("labevents", 5),)
    assert [g.entity_id for g in gold] == ["n7-e000", "n7-e001", "n7-e002"]


@pytest.mark.parametrize("change, message", [
    ({"label": "maybe"}, r"reasoncon.jsonl:2: field 'label'"),
    ({"commonsense_medical_none": "x"}, r"reasoncon.jsonl:2: field 'commonsense_medical_none'"),
    ({"line": 40}, r"field 'line': 40 is past the end"),
    ({"table": None, "evidence_row_ids": [3]}, r"bare row id 3 needs a 'table'"),
])
def test_reasoncon_errors_name_line_and_field(tmp_path, change, message):
    lines = _reasoncon_lines()
    lines[1] = {k: v for k, v in {**lines[1], **change}.items() if v is not None}
    path = tmp_path / "reasoncon.jsonl"
    path.write_text("".join(json.dumps(o) + "\n" for o in lines))
    with pytest.raises(RecordError, match=message):
        read_reasoncon(path)
