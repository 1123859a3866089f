"""MIMIC note import: NOTEEVENTS- and MIMIC-IV-Note-shaped files in, a corpus folder out."""
from __future__ import annotations

import csv
import gzip
import json
from dataclasses import fields as fields_of
from dataclasses import replace
from pathlib import Path

import pytest

from ehrlib.cli import main
from ehrlib.corpus.io import dumps_record, read_notes
from ehrlib.corpus.mimic_notes import (
    IMPORT_FILE,
    ImportFilters,
    detect_source,
    import_notes,
    note_json,
    read_id_file,
)
from ehrlib.corpus.records import NOTE_TYPES, Note
from ehrlib.errors import ConfigError, DataError

FIXTURES = Path(__file__).parent / "fixtures"
M3_HEADER = ("ROW_ID", "SUBJECT_ID", "HADM_ID", "CHARTDATE", "CHARTTIME", "STORETIME", "CATEGORY", "DESCRIPTION",
             "CGID", "ISERROR", "TEXT")
M4_HEADER = ("note_id", "subject_id", "hadm_id", "note_type", "note_seq", "charttime", "storetime", "text")
DS_TEXT = 'Admission Date:  [**2107-1-4**]\n\nHistory: "fever", chills, rigors\nLasix 40 mg, daily\n'


def _noteevents(path: Path, rows, gz: bool = False) -> Path:
    opener = gzip.open if gz else open
    with opener(path, "wt", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(M3_HEADER)
        w.writerows(rows)
    return path


def _m3_rows():
    return [
        # ROW_ID SUBJECT HADM CHARTDATE CHARTTIME STORETIME CATEGORY DESCRIPTION CGID ISERROR TEXT
        (1, 10006, 142345, "2164-10-23", "", "", "Discharge summary", "Report", "", "", DS_TEXT),
        (2, 10006, 142345, "2164-10-22", "2164-10-22 06:12:00", "", "Physician ", "Progress", 17, "",
         "HR 88\r\nBP 120/70"),
        (3, 10011, 105331, "2126-08-14", "2126-08-14 21:00:00", "", "Nursing/other", "Report", 18, "",
         "Pt resting, \"comfortable\""),
        (4, 10011, 105331, "2126-08-15", "2126-08-15T04:00:00", "", "Nursing", "Generic", 18, "", "UOP 30 cc/hr"),
        (5, 10011, 105331, "2126-08-15", "2126-08-15 05:00:00", "", "Radiology", "CHEST (PORTABLE AP)", "", "",
         "FINDINGS: small effusion.\nIMPRESSION: no pneumothorax."),
        (6, 10011, "", "2126-09-01", "2126-09-01 05:00:00", "", "Radiology", "CT HEAD", "", "", "No bleed."),
        (7, 10011, 105331, "2126-08-15", "2126-08-15 05:00:00", "", "ECG", "Report", "", "", "Sinus rhythm."),
        (8, 10011, 105331, "2126-08-15", "2126-08-15 07:00:00", "", "Nursing", "Generic", 18, "1", "wrong patient"),
        (9, 10011, 105331, "2126-13-40", "", "", "Nursing", "Generic", 18, "", "bad date row"),
        (10, 10011, 105331, "2126-08-15", "yesterday", "", "Nursing", "Generic", 18, "", "bad time row"),
        (11, 10011, 105331, "2126-08-15", "", "", "Physician ", "Progress", 17, "", "   \n  "),
        (12, "x", 105331, "2126-08-15", "", "", "Physician ", "Progress", 17, "", "bad subject id"),
        (13, 10006, "142345.0", "2164-10-21", "", "", "Echo", "Report", "", "", "EF 55%"),
    ]


@pytest.fixture
def noteevents(tmp_path) -> Path:
    return _noteevents(tmp_path / "NOTEEVENTS.csv", _m3_rows())


def test_noteevents_imported_field_by_field(noteevents, tmp_path):
    out = tmp_path / "corpus"
    result = import_notes(noteevents, out)
    notes = read_notes(out / "notes.jsonl")  # the contract's own validating reader
    assert notes == [
        Note("1", 10006, 142345, "discharge_summary", "2164-10-23", DS_TEXT, None),
        Note("2", 10006, 142345, "physician", "2164-10-22", "HR 88\nBP 120/70", "2164-10-22 06:12:00"),
        Note("3", 10011, 105331, "nursing", "2126-08-14", 'Pt resting, "comfortable"', "2126-08-14 21:00:00"),
        Note("4", 10011, 105331, "nursing", "2126-08-15", "UOP 30 cc/hr", "2126-08-15 04:00:00"),
    ]  # radiology reports only on request: the paper's note types by default
    assert notes[0].lines[2] == 'History: "fever", chills, rigors'  # quoted multi-line TEXT kept whole
    assert result.rows == 13 and result.written == 4
    assert result.unusable == {"bad_date": 2, "bad_id": 1, "empty_text": 1, "error_row": 1,
                               "unsupported_category": 2}
    assert result.unsupported == {"ECG": 1, "Echo": 1} and result.left_out_types == {"radiology": 2}
    record = json.loads((out / IMPORT_FILE).read_text())
    import hashlib
    assert record["sha256"] == hashlib.sha256(noteevents.read_bytes()).hexdigest()
    assert record["source"] == "mimic3" and record["source_file"] == "NOTEEVENTS.csv"
    assert record["by_type"] == {"discharge_summary": 1, "physician": 1, "nursing": 2}
    assert record["note_types"] == ["discharge_summary", "physician", "nursing"]
    assert record["left_out_types"] == {"radiology": 2}
    assert record["unusable"] == result.unusable and record["filters"]["include_errors"] is False
    summary = "\n".join(result.lines())
    assert "rows" in summary and "bad_id 1" in summary
    assert "note types taken: discharge_summary, physician, nursing; left out 2 radiology (take them with " \
           "--note-types discharge_summary,physician,nursing,radiology)" in summary
    everything = import_notes(noteevents, tmp_path / "all", filters=ImportFilters(note_types=NOTE_TYPES))
    assert read_notes(tmp_path / "all" / "notes.jsonl")[-1] == Note(
        "5", 10011, 105331, "radiology", "2126-08-15", "FINDINGS: small effusion.\nIMPRESSION: no pneumothorax.",
        "2126-08-15 05:00:00")
    assert everything.unusable["missing_hadm_id"] == 1 and everything.left_out_types == {}


@pytest.mark.parametrize("note", [
    Note("5", 1, 2, "radiology", "2126-08-15", 'a "b"\nc ü \\ \t \u2028 😀', "2126-08-15 05:00:00"),
    Note("10000032-DS-21", 10000032, 22595853, "discharge_summary", "2180-05-07", "x", None),
])
def test_note_json_matches_the_generic_writer(note):
    fields = (note.note_id, note.subject_id, note.hadm_id, note.note_type, note.chartdate, note.text, note.charttime)
    assert note_json(fields) == dumps_record(note)
    assert tuple(f.name for f in fields_of(Note)) == ("note_id", "subject_id", "hadm_id", "note_type", "chartdate",
                                                      "text", "charttime"), "the contract changed: update note_json"


def test_error_rows_kept_on_request_and_type_filter(noteevents, tmp_path):
    r = import_notes(noteevents, tmp_path / "a", filters=ImportFilters(note_types=("nursing",), include_errors=True))
    ids = [n.note_id for n in read_notes(tmp_path / "a" / "notes.jsonl")]
    assert ids == ["3", "4", "8"]
    assert r.filtered == {"note_type": 6} and "error_row" not in r.unusable


def test_mimic4_discharge_and_radiology_gz(tmp_path):
    path = tmp_path / "radiology.csv.gz"
    with gzip.open(path, "wt", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(M4_HEADER)
        w.writerow(("10000032-RR-14", 10000032, 22595853, "RR", 14, "2180-05-06 21:19:00", "2180-05-06 23:32:00",
                    "EXAMINATION:  CHEST (PA AND LAT)\n\nIMPRESSION: No acute process."))
        w.writerow(("10000032-RR-15", 10000032, "", "RR", 15, "2180-06-26 17:15:00", "", "outpatient study"))
        w.writerow(("10000032-DS-21", 10000032, 22595853, "DS", 21, "2180-05-07 00:00:00", "", "Name: ___\nSex: F"))
        w.writerow(("10000032-XX-1", 10000032, 22595853, "XX", 1, "2180-05-07 00:00:00", "", "unknown kind"))
    out = tmp_path / "m4"
    r = import_notes(path, out, filters=ImportFilters(note_types=NOTE_TYPES))
    assert r.source == "mimic4"
    assert read_notes(out / "notes.jsonl") == [
        Note("10000032-RR-14", 10000032, 22595853, "radiology", "2180-05-06",
             "EXAMINATION:  CHEST (PA AND LAT)\n\nIMPRESSION: No acute process.", "2180-05-06 21:19:00"),
        Note("10000032-DS-21", 10000032, 22595853, "discharge_summary", "2180-05-07", "Name: ___\nSex: F",
             "2180-05-07 00:00:00"),
    ]
    assert r.unusable == {"missing_hadm_id": 1, "unsupported_category": 1} and r.unsupported == {"XX": 1}
    with pytest.raises(DataError, match="--source mimic3 given"):
        import_notes(path, tmp_path / "forced", source="mimic3")


def test_per_type_sample_is_reproducible_and_uniform(tmp_path):
    rows = [(i, 100 + i % 5, 1000 + i % 5, "2100-01-01", "", "", "Nursing" if i % 2 else "Physician ", "", "", "",
             f"note {i}") for i in range(1, 401)]
    src = _noteevents(tmp_path / "big.csv", rows)

    def sample(seed: int, name: str) -> list[str]:
        import_notes(src, tmp_path / name, filters=ImportFilters(per_type=10, seed=seed))
        return [n.note_id for n in read_notes(tmp_path / name / "notes.jsonl")]

    a, b, c = sample(1, "a"), sample(1, "b"), sample(2, "c")
    assert a == b and a != c
    assert len(a) == 20 and a == sorted(a, key=int)  # 10 per type, in file order
    notes = read_notes(tmp_path / "a" / "notes.jsonl")
    assert sum(n.note_type == "nursing" for n in notes) == 10
    assert all(n.text == f"note {n.note_id}" for n in notes)
    record = json.loads((tmp_path / "a" / IMPORT_FILE).read_text())
    assert record["filtered"] == {"sampling": 380} and record["filters"]["per_type"] == 10
    # uniform: over many seeds every row is drawn about equally often (10 of 200 -> 5 %)
    import random

    from ehrlib.corpus.mimic_notes import _Reservoir
    hits = [0] * 200
    for seed in range(2000):
        pool = _Reservoir(10, random.Random(seed))
        for i in range(200):
            pool.offer(i, ())
        for i, _ in pool.items:
            hits[i] += 1
    assert min(hits) > 50 and max(hits) < 150  # expected 100 each


def test_id_files_and_database_filter(noteevents, tmp_path, mimic3_demo_db):
    ids = tmp_path / "hadm.txt"
    ids.write_text("HADM_ID\n142345  # the first admission\n")
    r = import_notes(noteevents, tmp_path / "h", filters=ImportFilters(hadm_ids=read_id_file(ids)))
    assert r.written == 2 and r.filtered == {"hadm_ids": 5, "note_type": 2}  # radiology: not by default
    subj = tmp_path / "subj.txt"
    subj.write_text("10011, 99\n")
    r = import_notes(noteevents, tmp_path / "s", filters=ImportFilters(subject_ids=read_id_file(subj)))
    assert r.written == 2
    bad = tmp_path / "bad.txt"
    bad.write_text("12\nabc\n")
    with pytest.raises(ConfigError, match="bad.txt:2"):
        read_id_file(bad)
    # the demo has admissions 142345 (subject 10006) and 105331 (10011), not 999999
    rows = [(1, 10006, 142345, "2164-10-23", "", "", "Nursing", "", "", "", "kept"),
            (2, 10006, 999999, "2164-10-23", "", "", "Nursing", "", "", "", "not in the demo"),
            (3, 10011, 142345, "2164-10-23", "", "", "Nursing", "", "", "", "another patient's admission")]
    from ehrlib.db.notes_cli import db_admissions

    admissions = db_admissions(mimic3_demo_db)
    assert admissions[142345] == 10006 and admissions[105331] == 10011
    r = import_notes(_noteevents(tmp_path / "db.csv", rows), tmp_path / "db", admissions=admissions, db=mimic3_demo_db)
    assert [n.note_id for n in read_notes(tmp_path / "db" / "notes.jsonl")] == ["1"]
    assert r.filtered == {"not_in_db": 1} and r.unusable == {"subject_mismatch": 1}
    assert json.loads((tmp_path / "db" / IMPORT_FILE).read_text())["db"] == str(mimic3_demo_db)


def test_output_folder_is_atomic_and_not_clobbered(noteevents, tmp_path, monkeypatch):
    out = tmp_path / "corpus"
    import_notes(noteevents, out)
    with pytest.raises(ConfigError, match="--overwrite"):
        import_notes(noteevents, out)
    import ehrlib.corpus.mimic_notes as mod

    calls = {"n": 0}
    real = mod.note_json

    def dying(fields):
        calls["n"] += 1
        if calls["n"] > 1:
            raise KeyboardInterrupt
        return real(fields)

    monkeypatch.setattr(mod, "note_json", dying)
    with pytest.raises(KeyboardInterrupt):
        import_notes(noteevents, out, overwrite=True, filters=ImportFilters(note_types=("nursing",)))
    # the old corpus is untouched and no temp folder is left behind
    assert len(read_notes(out / "notes.jsonl")) == 4  # the paper's three note types
    assert sorted(p.name for p in tmp_path.iterdir()) == ["NOTEEVENTS.csv", "corpus"]
    monkeypatch.setattr(mod, "note_json", real)
    import_notes(noteevents, out, overwrite=True, filters=ImportFilters(note_types=("nursing",)))
    assert [n.note_id for n in read_notes(out / "notes.jsonl")] == ["3", "4"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["NOTEEVENTS.csv", "corpus"]


def test_bad_inputs_are_one_line_errors(tmp_path, capsys):
    assert detect_source(["NOTE_ID", "SUBJECT_ID", "HADM_ID", "NOTE_TYPE", "CHARTTIME", "TEXT"]) == "mimic4"
    other = tmp_path / "other.csv"
    other.write_text("a,b\n1,2\n")
    with pytest.raises(DataError, match="neither NOTEEVENTS"):
        import_notes(other, tmp_path / "o")
    with pytest.raises(DataError, match="not found"):
        import_notes(tmp_path / "missing.csv", tmp_path / "o")
    broken = tmp_path / "broken.csv.gz"
    broken.write_bytes(gzip.compress(("\n".join([",".join(M3_HEADER)] + ["1,2,3,2100-01-01,,,Nursing,,,,x"] * 50)
                                      ).encode())[:60])
    with pytest.raises(DataError, match="broken.csv.gz"):
        import_notes(broken, tmp_path / "o")
    latin = tmp_path / "latin.csv"
    latin.write_bytes((",".join(M3_HEADER) + "\n1,2,3,2100-01-01,,,Nursing,,,,caf\xe9\n").encode("latin-1"))
    with pytest.raises(DataError, match="UTF-8"):
        import_notes(latin, tmp_path / "o")
    for name, tail in (("cut.csv", '"text cut off mid-note\n'), ("quote.csv", '"closed" then more\n')):
        # a quoted field never closed (a truncated download) or closed mid-field is not a note
        bad = tmp_path / name
        bad.write_text(",".join(M3_HEADER) + "\n1,2,3,2100-01-01,,,Nursing,,,," + tail)
        with pytest.raises(DataError, match=f"{name}: CSV error"):
            import_notes(bad, tmp_path / "o")
    with pytest.raises(ConfigError, match="note types"):
        import_notes(other, tmp_path / "o", filters=ImportFilters(note_types=("ecg",)))
    assert not (tmp_path / "o").exists()
    assert main(["notes", "import", str(other), str(tmp_path / "o")]) == 2
    assert "neither NOTEEVENTS" in capsys.readouterr().err


def test_cli_import_prints_the_counts(noteevents, tmp_path, capsys):
    rc = main(["notes", "import", str(noteevents), str(tmp_path / "c"), "--per-type", "1", "--seed", "3",
               "--note-types", "nursing,radiology", "--no-progress"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "2 notes from 13 rows" in out and "unsupported categories: 'ECG' 1" in out
    assert [n.note_type for n in read_notes(tmp_path / "c" / "notes.jsonl")] == ["nursing", "radiology"]


def test_import_of_hand_written_notes_gives_the_same_predictions(tmp_path, mimic3_demo_db):
    """The realnotes fixture written out as NOTEEVENTS rows and imported runs exactly like
    the fixture's own notes.jsonl (same notes, same predictions)."""
    from ehrlib.corpus.io import read_predictions, write_jsonl
    from ehrlib.pipeline.params import load_params
    from ehrlib.pipeline.runner import run_experiment

    originals = read_notes(FIXTURES / "realnotes" / "notes.jsonl")[:3]
    category = {"discharge_summary": "Discharge summary", "physician": "Physician ", "nursing": "Nursing"}
    # NOTEEVENTS ids are integers: the corpus to compare with uses the same ids
    rows = [(i, n.subject_id, n.hadm_id, n.chartdate, n.charttime or "", "", category[n.note_type], "Report", "", "",
             n.text) for i, n in enumerate(originals, start=1)]
    src = _noteevents(tmp_path / "NOTEEVENTS.csv.gz", rows, gz=True)
    import_notes(src, tmp_path / "imported")
    imported = read_notes(tmp_path / "imported" / "notes.jsonl")
    direct = [Note(str(i), n.subject_id, n.hadm_id, n.note_type, n.chartdate, n.text, n.charttime)
              for i, n in enumerate(originals, start=1)]
    assert imported == direct
    write_jsonl(direct, tmp_path / "direct" / "notes.jsonl")

    def predictions(corpus: Path, run_id: str):
        run_dir = run_experiment(load_params(None, corpus=str(corpus), db=str(mimic3_demo_db), backend="offline",
                                             run_id=run_id, runs_dir=str(tmp_path / "runs"), progress=False))
        # notes run concurrently: compare in a fixed order, without run ids, timings and
        # call ids (a run-wide counter)
        preds = [replace(p, run_id="", tool_calls=tuple(replace(c, ms=0.0, call_id=None) for c in p.tool_calls))
                 for p in read_predictions(run_dir / "predictions.jsonl")]
        return sorted(preds, key=lambda p: (p.note_id, p.line, p.entity_id or "", p.entity))

    a, b = predictions(tmp_path / "imported", "imported"), predictions(tmp_path / "direct", "direct")
    assert a and a == b


def test_imported_notes_are_credentialed_for_the_phi_guard(noteevents, tmp_path, mimic3_demo_db):
    """Real MIMIC notes run against the open demo database still count as credentialed."""
    from ehrlib.corpus.mimic_notes import corpus_source_kind
    from ehrlib.errors import PHIError
    from ehrlib.pipeline.params import load_params
    from ehrlib.pipeline.runner import run_experiment

    out = tmp_path / "corpus"
    assert main(["notes", "import", str(noteevents), str(out), "--db", str(mimic3_demo_db), "--no-progress"]) == 0
    assert corpus_source_kind(out) == "credentialed" and corpus_source_kind(tmp_path) is None
    params = load_params(None, corpus=str(out), db=str(mimic3_demo_db), backend="gemini", run_id="phi",
                         runs_dir=str(tmp_path / "runs"), progress=False,
                         backend_options={"llm": {"api_key": "not-a-real-key"}})
    with pytest.raises(PHIError, match="credentialed"):
        run_experiment(params)
    assert not (tmp_path / "runs" / "phi" / "predictions.jsonl").exists()
