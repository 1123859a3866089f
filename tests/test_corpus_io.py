"""corpus.io: atomic JSONL round trips and errors that name file, line and field."""
from __future__ import annotations

import json

import pytest

from ehrlib.corpus.io import load_corpus, read_gold, read_notes, read_predictions, write_json, write_jsonl
from ehrlib.corpus.records import GoldEntity, Inconsistency, ItemRef, Note, Prediction, RecordError, RowRef, TimeSpan
from ehrlib.errors import ConfigError

NOTE = Note("n1", 1, 11, "nursing", "2150-01-02", "HR 80\nlasix 40 mg IV", "2150-01-02 06:00:00")
GOLD = GoldEntity("n1", "n1-e0", 1, "lasix 40 mg IV", "inconsistent", (ItemRef("prescriptions", "Furosemide"),),
                  ("drug", "dose_val_rx"), "40 mg IV", TimeSpan("2150-01-01 00:00:00", "2150-01-03 23:59:59"),
                  Inconsistency("column", ("dose_val_rx",), "value"), (RowRef("prescriptions", 7),), "none", None,
                  ("Lexical_Search", "Get_Item_Status_History"), {"drug": "Furosemide", "dose_val_rx": 40.0})


def _corpus(tmp_path, gold=(GOLD,), notes=(NOTE,)):
    write_jsonl(notes, tmp_path / "notes.jsonl")
    write_jsonl(gold, tmp_path / "gold.jsonl")
    write_json({"splits": {"validation": ["n1"], "test": []}}, tmp_path / "manifest.json")
    return tmp_path


def test_round_trip_and_schema_version_first(tmp_path):
    _corpus(tmp_path)
    assert read_notes(tmp_path / "notes.jsonl") == [NOTE]
    got = read_gold(tmp_path / "gold.jsonl")[0]
    assert got.claim == GOLD.claim and got.inconsistency == GOLD.inconsistency and got.items == GOLD.items
    first = json.loads((tmp_path / "gold.jsonl").read_text().splitlines()[0])
    assert list(first)[:2] == ["schema_version", "note_id"]
    corpus = load_corpus(tmp_path, "validation")
    assert [n.note_id for n in corpus.notes] == ["n1"] and len(corpus.gold_for("n1")) == 1
    assert load_corpus(tmp_path, "test").notes == ()


def test_predictions_with_run_id_envelope(tmp_path):
    p = Prediction("r1", "n1", 0, "HR 80", "consistent")
    write_jsonl([p], tmp_path / "predictions.jsonl", run_id="r1")
    assert read_predictions(tmp_path / "predictions.jsonl") == [p]


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d.update(label="maybe"), r"gold.jsonl:2: .*field 'label'"),
    (lambda d: d.pop("note_id"), r"gold.jsonl:2: .*'note_id'"),
    (lambda d: d.update(line=-1), r"gold.jsonl:2: .*field 'line'"),
    (lambda d: d.update(items="WBC"), r"gold.jsonl:2: .*field 'items'"),
    (lambda d: d.update(schema_version=99), r"gold.jsonl:2: field 'schema_version'"),
    (lambda d: d.update(claim=[1]), r"gold.jsonl:2: .*field 'claim'"),
])
def test_bad_record_names_file_line_and_field(tmp_path, mutate, message):
    write_jsonl([GOLD, GOLD], tmp_path / "gold.jsonl")
    lines = (tmp_path / "gold.jsonl").read_text().splitlines()
    bad = json.loads(lines[1])
    mutate(bad)
    (tmp_path / "gold.jsonl").write_text(lines[0] + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(RecordError, match=message):
        read_gold(tmp_path / "gold.jsonl")


def test_invalid_json_and_missing_file(tmp_path):
    (tmp_path / "notes.jsonl").write_text('{"note_id": "n1"\n')
    with pytest.raises(RecordError, match=r"notes.jsonl:1: invalid JSON"):
        read_notes(tmp_path / "notes.jsonl")
    with pytest.raises(RecordError, match="file not found"):
        read_notes(tmp_path / "absent.jsonl")


def test_corpus_cross_checks_note_ids_and_lines(tmp_path):
    from dataclasses import replace

    _corpus(tmp_path, gold=(replace(GOLD, line=5),))
    with pytest.raises(RecordError, match=r"gold.jsonl:1: field 'line': 5 is past the end"):
        load_corpus(tmp_path)
    _corpus(tmp_path, gold=(replace(GOLD, note_id="n9"),))
    with pytest.raises(RecordError, match="unknown note 'n9'"):
        load_corpus(tmp_path)
    _corpus(tmp_path)
    with pytest.raises(ConfigError, match="unknown split 'train'"):
        load_corpus(tmp_path, "train")


def test_atomic_write_leaves_old_file_on_failure(tmp_path):
    path = write_jsonl([NOTE], tmp_path / "notes.jsonl")
    before = path.read_bytes()

    def boom():
        yield NOTE
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        write_jsonl(boom(), path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["notes.jsonl"]


def test_to_dict_and_jsonable_convert_by_exact_type_then_as_before():
    # the fast paths (exact leaf, list, tuple, dict and known record types) and the general ones
    # (subclasses, mappings, dataclass types) give what the field-by-field conversion gives
    import collections
    import datetime as dt
    import math
    import types

    import numpy as np

    from ehrlib.corpus.records import ItemRef, TimeSpan, to_dict
    from ehrlib.tools.result import jsonable

    Pair = collections.namedtuple("Pair", "a b")

    class Label(str):
        pass

    rec = {"item": ItemRef("labevents", "Creatinine", 50912), "spans": (TimeSpan("2130-01-10", None),),
           "pair": Pair(1, (2, 3)), "view": types.MappingProxyType({"k": [ItemRef("x", Label("y"))]}),
           "n": 1.5, "flag": True, "none": None}
    assert to_dict(rec) == {"item": {"table": "labevents", "label": "Creatinine", "itemid": 50912},
                            "spans": [{"start": "2130-01-10", "end": None}], "pair": [1, [2, 3]],
                            "view": {"k": [{"table": "x", "label": "y", "itemid": None}]},
                            "n": 1.5, "flag": True, "none": None}
    assert to_dict(rec) == to_dict(rec)   # the second time from the cached field names
    when = dt.datetime(2130, 1, 10, 8, 30)
    assert [jsonable(v) for v in (None, "a", Label("b"), True, 3, 2.5, math.nan, math.inf, np.float64(1.5),
                                  np.float64("nan"), when, dt.datetime(2130, 1, 10), dt.date(2130, 1, 11),
                                  np.int64(4), {"x": (1, when)})] == [
        None, "a", "b", True, 3, 2.5, None, None, 1.5, None, "2130-01-10 08:30:00", "2130-01-10", "2130-01-11", 4,
        {"x": [1, "2130-01-10 08:30:00"]}]
