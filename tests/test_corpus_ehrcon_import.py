"""`ehrlib notes import` of EHRCon releases and ReasonCon JSONL, on an EHRCon-shaped release
written from the hand-written notes about real MIMIC-III demo admissions (tests/fixtures/realnotes).
"""
from __future__ import annotations

import json
import os
import pickle
import shutil
from pathlib import Path

import pytest

from ehrlib.cli import main
from ehrlib.corpus.ehrcon_release import find_layout
from ehrlib.corpus.ehrcon_shape import assign_splits, write_ehrcon_release
from ehrlib.corpus.io import load_corpus, read_gold, read_notes, write_jsonl
from ehrlib.corpus.pickles import load_label_pickle
from ehrlib.corpus.records import Note, to_dict
from ehrlib.errors import ConfigError, DataError

FIXTURE = Path(__file__).parent / "fixtures" / "realnotes"


@pytest.fixture(scope="module")
def source():
    return load_corpus(FIXTURE)


def _release(tmp_path, source, line_base=1, name="rel"):
    root = tmp_path / name
    row_ids = write_ehrcon_release(source.notes, source.gold, root, line_base=line_base)
    return root, row_ids


def _import(capsys, *args):
    code = main(["notes", "import", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def test_release_import_one_variant_zero_based_lines_and_record(tmp_path, source, capsys):
    root, row_ids = _release(tmp_path, source)
    code, out, err = _import(capsys, root, tmp_path / "out")  # format and variant recognised from the layout
    assert code == 0, err
    notes = read_notes(tmp_path / "out" / "notes.jsonl")
    gold = read_gold(tmp_path / "out" / "gold.jsonl")
    # one variant: the 12 notes once each, not twice (original/ and processed/ share ROW_IDs)
    assert sorted(n.note_id for n in notes) == sorted(str(r) for r in row_ids.values())
    back = {str(r): k for k, r in row_ids.items()}
    want = sorted((g.note_id, g.line, g.entity, g.label) for g in source.gold)
    assert sorted((back[g.note_id], g.line, g.entity, g.label) for g in gold) == want
    by_id = {n.note_id: n for n in notes}
    assert all(g.entity.lower() in by_id[g.note_id].lines[g.line].lower() for g in gold)
    record = json.loads((tmp_path / "out" / "import.json").read_text())
    assert record["source"] == "ehrcon" and record["source_kind"] == "credentialed"
    assert record["variant"] == "original" and record["variants_in_release"] == ["original", "processed"]
    assert record["positions"]["line_base"] == 1 and record["positions"]["line_offset"] == -1
    split = assign_splits([n.note_id for n in source.notes])
    assert sorted(record["splits"]["valid"]) == sorted(str(row_ids[k]) for k, s in split.items() if s == "valid")
    assert (len(record["splits"]["test"]), len(record["splits"]["valid"])) == (10, 2)  # 4:1, rounded
    assert {f["file"].split("/")[0] for f in record["inputs"]} == {"original"}
    assert all(len(f["sha256"]) == 64 for f in record["inputs"])
    assert "offset -1" in out and "--variant processed" in out


def test_processed_variant_split_and_zero_based_release(tmp_path, source, capsys):
    root, _ = _release(tmp_path, source, line_base=0)
    code, out, err = _import(capsys, root, tmp_path / "p", "--format", "ehrcon", "--variant", "processed",
                             "--split", "valid")
    assert code == 0, err
    corpus = load_corpus(tmp_path / "p", "valid")
    record = json.loads((tmp_path / "p" / "import.json").read_text())
    assert record["split"] == "valid" and list(record["splits"]) == ["valid"]
    assert record["positions"]["line_offset"] == 0 and len(corpus.notes) == 2
    by_id = {n.note_id: n for n in corpus.notes}
    # processed notes keep only labelled lines: shorter text, positions renumbered, still on their line
    assert all(len(n.lines) < 60 for n in corpus.notes)
    assert all(g.entity.lower() in by_id[g.note_id].lines[g.line].lower() for g in corpus.gold)
    with pytest.raises(ConfigError, match="no 'test' split"):
        load_corpus(tmp_path / "p", "test")
    code, out, err = _import(capsys, root, tmp_path / "n", "--note-types", "nursing")
    record = json.loads((tmp_path / "n" / "import.json").read_text())
    assert code == 0 and record["by_type"] == {"nursing": 4}
    assert record["left_out"]["note_type:discharge_summary"] == 4 and record["left_out"]["note_type:physician"] == 4
    n_nursing = sum(g.note_id.startswith("rn-rn-") for g in source.gold)
    assert record["gold"] == n_nursing
    assert record["left_out"]["labels_of_left_out_notes"] == len(source.gold) - n_nursing


def test_a_split_or_variant_folder_can_be_named_directly(tmp_path, source):
    root, _ = _release(tmp_path, source)
    assert find_layout(root / "processed").variant == "processed"
    layout = find_layout(root / "original" / "valid")
    assert layout.splits == ("valid",) and {p.folder.name for p in layout.parts} <= {"discharge", "physician",
                                                                                     "nursing"}
    with pytest.raises(ConfigError, match="is the original variant"):
        find_layout(root / "original", variant="processed")


@pytest.mark.parametrize("damage, message", [
    (lambda root: None, "not an EHRCon release"),
    (lambda root: shutil.rmtree(root / "original" / "test" / "discharge" / "discharge_label"), "no label file"),
    (lambda root: [p.write_bytes(pickle.dumps(["not", "a", "dict"]))
                   for p in (root / "original" / "test" / "nursing" / "nursing_label").glob("*.pkl")],
     "not EHRCon's label shape"),
    (lambda root: [p.write_bytes(b"\x80\x04garbage") for p in (root / "original" / "valid").rglob("*.pkl")],
     "not an EHRCon label pickle (pickle data was truncated)"),
])
def test_bad_releases_are_one_line_errors(tmp_path, source, capsys, damage, message):
    if message == "not an EHRCon release":
        root = tmp_path / "empty"
        (root / "something").mkdir(parents=True)
    else:
        root, _ = _release(tmp_path, source)
        damage(root)
    code, out, err = _import(capsys, root, tmp_path / "out", "--format", "ehrcon")
    assert code == 2 and message in err and err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "out").exists()


class _Hostile:
    def __reduce__(self):
        return (os.system, ("touch hostile-ran",))


def test_pickles_are_plain_data_only_and_never_from_outside_the_root(tmp_path, source, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    root, _ = _release(tmp_path, source)
    label = next((root / "original" / "test" / "physician" / "physician_label").glob("*.pkl"))
    kept = label.read_bytes()
    label.write_bytes(pickle.dumps({1: [_Hostile()]}))
    code, _, err = _import(capsys, root, tmp_path / "out")
    assert code == 2 and "which a label file never holds" in err and not (tmp_path / "hostile-ran").exists()
    # a link to a file outside the release is refused before it is opened
    outside = tmp_path / "elsewhere.pkl"
    outside.write_bytes(kept)
    label.unlink()
    label.symlink_to(outside)
    code, _, err = _import(capsys, root, tmp_path / "out")
    assert code == 2 and "outside the release folder" in err
    with pytest.raises(ConfigError, match="outside the release folder"):
        load_label_pickle(label, root)
    # and so is a whole folder linked in from elsewhere
    label.unlink()
    label.write_bytes(kept)
    moved = tmp_path / "moved_nursing"
    shutil.move(root / "original" / "valid" / "physician", moved)
    (root / "original" / "valid" / "physician").symlink_to(moved, target_is_directory=True)
    code, _, err = _import(capsys, root, tmp_path / "out")
    assert code == 2 and "outside the release folder" in err


def test_options_that_do_not_fit_the_format(tmp_path, source, capsys):
    root, _ = _release(tmp_path, source)
    code, _, err = _import(capsys, root, tmp_path / "o", "--per-type", "3")
    assert code == 2 and "--per-type apply to MIMIC notes CSVs" in err
    csv_file = tmp_path / "NOTEEVENTS.csv"
    csv_file.write_text("ROW_ID,SUBJECT_ID,HADM_ID,CHARTDATE,CHARTTIME,CATEGORY,TEXT\n")
    code, _, err = _import(capsys, csv_file, tmp_path / "o", "--variant", "original")
    assert code == 2 and "--variant apply to EHRCon / ReasonCon releases" in err
    code, _, err = _import(capsys, root / "original", tmp_path / "o", "--variant", "processed")
    assert code == 2 and "is the original variant" in err


def test_db_keeps_admissions_of_the_database_and_fills_subject_ids(tmp_path, source, monkeypatch):
    from ehrlib.corpus.release_import import import_release

    notes = [n if i else Note(n.note_id, 0, n.hadm_id, n.note_type, n.chartdate, n.text)
             for i, n in enumerate(source.notes)]
    root = tmp_path / "rel"
    write_ehrcon_release(notes, source.gold, root)
    first = notes[0]
    admissions = {first.hadm_id: 4242}
    result = import_release(root, tmp_path / "out", fmt="ehrcon", admissions=admissions, db="x.duckdb")
    kept = read_notes(tmp_path / "out" / "notes.jsonl")
    assert [n.subject_id for n in kept] == [4242] and result.left_out["not_in_db"] == 11
    with pytest.raises(DataError, match="no notes left to import"):
        import_release(root, tmp_path / "none", fmt="ehrcon", admissions={})


def test_overwrite_with_unlabelled_notes_removes_the_old_gold(tmp_path, source, capsys):
    root, _ = _release(tmp_path, source)
    assert _import(capsys, root, tmp_path / "out")[0] == 0
    (tmp_path / "out" / "mine.txt").write_text("kept")
    csv_file = tmp_path / "NOTEEVENTS.csv"
    csv_file.write_text("ROW_ID,SUBJECT_ID,HADM_ID,CHARTDATE,CHARTTIME,CATEGORY,ISERROR,TEXT\n"
                        "1,9,100,2150-01-01,,Nursing,,HR 80\n")
    code, _, err = _import(capsys, csv_file, tmp_path / "out", "--overwrite", "--no-progress")
    assert code == 0, err
    assert not (tmp_path / "out" / "gold.jsonl").exists() and (tmp_path / "out" / "mine.txt").exists()
    assert [n.note_id for n in read_notes(tmp_path / "out" / "notes.jsonl")] == ["1"]


def test_reasoncon_jsonl_split_from_folder_names(tmp_path, source, capsys):
    root = tmp_path / "reasoncon"
    split = assign_splits([n.note_id for n in source.notes])
    for name in ("test", "valid"):
        lines = []
        for n in source.notes:
            if split[n.note_id] != name:
                continue
            lines.append({**to_dict(n), "note_type": n.note_type})
            lines += [{k: v for k, v in to_dict(g).items() if k not in ("inconsistency", "claim", "time", "items")}
                      | {"commonsense_medical_none": g.reasoning, "line": g.line + 1,
                         **({"inconsistency_kind": g.inconsistency.kind} if g.inconsistency else {})}
                      for g in source.gold if g.note_id == n.note_id]
        write_jsonl(lines, root / name / "reasoncon.jsonl")
    code, out, err = _import(capsys, root, tmp_path / "out", "--split", "valid")
    assert code == 2 and "needs --format reasoncon" in err
    code, out, err = _import(capsys, root, tmp_path / "out", "--split", "valid", "--format", "reasoncon")
    assert code == 0, err
    record = json.loads((tmp_path / "out" / "import.json").read_text())
    assert record["source"] == "reasoncon" and record["positions"]["line_offset"] == -1
    corpus = load_corpus(tmp_path / "out", "valid")
    assert sorted(n.note_id for n in corpus.notes) == sorted(k for k, s in split.items() if s == "valid")
    want = sorted((g.note_id, g.line, g.entity) for g in source.gold if split[g.note_id] == "valid")
    assert sorted((g.note_id, g.line, g.entity) for g in corpus.gold) == want
    code, _, err = _import(capsys, root / "test" / "reasoncon.jsonl", tmp_path / "one")  # a file: format from .jsonl
    assert code == 0, err
    assert json.loads((tmp_path / "one" / "import.json").read_text())["splits"] is None  # no split in its name
    code, _, err = _import(capsys, root / "test" / "reasoncon.jsonl", tmp_path / "two", "--split", "test")
    assert code == 2 and "no split assignment" in err


def test_reasoncon_folder_with_notes_in_a_csv(tmp_path, capsys):
    import csv

    root = tmp_path / "rc"
    root.mkdir()
    with (root / "notes.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, ["ROW_ID", "SUBJECT_ID", "HADM_ID", "CHARTDATE", "CATEGORY", "TEXT"])
        w.writeheader()
        w.writerow({"ROW_ID": 11, "SUBJECT_ID": 9, "HADM_ID": 100, "CHARTDATE": "2150-01-01", "CATEGORY": "Nursing",
                    "TEXT": "Neuro: alert\nHR 80s"})
        w.writerow({"ROW_ID": 12, "SUBJECT_ID": 9, "HADM_ID": 100, "CHARTDATE": "2150-01-02", "CATEGORY": "Nursing",
                    "TEXT": "UOP 30 cc/hr\nlasix 40 mg IV"})
    label = {"label": "consistent", "commonsense_medical_none": "n"}
    write_jsonl([{"note_id": "11", "entity": "HR", "line": 1, **label}], root / "test" / "rc.jsonl")
    write_jsonl([{"note_id": "12", "entity": "lasix", "line": 1, **label}], root / "valid" / "rc.jsonl")
    code, _, err = _import(capsys, root, tmp_path / "out", "--format", "reasoncon")
    assert code == 0, err
    record = json.loads((tmp_path / "out" / "import.json").read_text())
    assert record["splits"] == {"test": ["11"], "valid": ["12"]}
    assert record["positions"]["line_base"] == 0  # line 1 holds the entity counting from 0
    assert {f["file"] for f in record["inputs"]} == {"notes.csv", "test/rc.jsonl", "valid/rc.jsonl"}
