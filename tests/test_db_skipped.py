"""`ehrlib build-db` names the source files it did not read, with the reason, in its
summary and in the build manifest (TRANSFERS, SERVICES, DATETIMEEVENTS, the notes, ...)."""
from __future__ import annotations

from pathlib import Path

from test_db_build import write_table

from ehrlib import cli
from ehrlib.db import build_db, connect, read_manifest
from ehrlib.db.perturb import find_original_names
from ehrlib.db.skipped import SkippedFile, summary_lines

UNUSED = "no mimic3 table contract uses it, so the tools never query it"


def _mimic3_with_extras(tmp_path: Path) -> Path:
    src = tmp_path / "m3"
    write_table(src, "mimic3", "patients", [{"SUBJECT_ID": 1}])
    write_table(src, "mimic3", "admissions", [{"SUBJECT_ID": 1, "HADM_ID": 10}])
    write_table(src, "mimic3", "labevents", [{"SUBJECT_ID": 1, "HADM_ID": 10, "ITEMID": 50912,
                                              "CHARTTIME": "2101-01-02 08:00:00", "VALUE": "1.1"}], gz=True)
    (src / "LABEVENTS.csv").write_text("row_id\n1\n", encoding="utf-8")   # a second copy: the .gz is read
    (src / "TRANSFERS.csv").write_text("row_id\n1\n", encoding="utf-8")
    (src / "SERVICES.csv").write_text("row_id\n1\n", encoding="utf-8")
    (src / "DATETIMEEVENTS.csv.gz").write_bytes(b"")
    (src / "NOTEEVENTS.csv").write_text("row_id\n1\n", encoding="utf-8")
    (src / "README.txt").write_text("not a table", encoding="utf-8")       # not a CSV: not listed
    return src


def test_skipped_files_and_reasons_are_returned_and_recorded(tmp_path):
    r = build_db(_mimic3_with_extras(tmp_path), tmp_path / "m3.duckdb", progress=False)
    assert r.skipped == (
        SkippedFile("DATETIMEEVENTS.csv.gz", UNUSED),
        SkippedFile("LABEVENTS.csv", "another file of the same table was read (.csv.gz before .csv)"),
        SkippedFile("NOTEEVENTS.csv", "clinical notes, not a table: make a corpus of them with `ehrlib notes import`"),
        SkippedFile("SERVICES.csv", UNUSED),
        SkippedFile("TRANSFERS.csv", UNUSED),
    )
    with connect(r.path) as con:
        recorded = read_manifest(con)["skipped_files"]
    assert recorded == [{"file": s.file, "reason": s.reason} for s in r.skipped]


def test_build_db_prints_them_by_reason(tmp_path, capsys):
    assert cli.main(["build-db", str(_mimic3_with_extras(tmp_path)), str(tmp_path / "m3.duckdb"),
                     "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "5 source file(s) not read (listed in the manifest):" in out
    assert f"  DATETIMEEVENTS.csv.gz, SERVICES.csv, TRANSFERS.csv: {UNUSED}" in out
    assert "  NOTEEVENTS.csv: clinical notes" in out


def test_a_clean_folder_skips_nothing(tmp_path, capsys):
    src = tmp_path / "m3"
    write_table(src, "mimic3", "patients", [{"SUBJECT_ID": 1}])
    r = build_db(src, tmp_path / "m3.duckdb", progress=False)
    assert r.skipped == ()
    with connect(r.path) as con:
        assert read_manifest(con)["skipped_files"] == []


def test_mimic4_subfolders_are_searched(tmp_path):
    src = tmp_path / "m4"
    write_table(src, "mimic4", "patients", [{"SUBJECT_ID": 7}], upper_name=False)
    (src / "hosp" / "transfers.csv.gz").write_bytes(b"")
    (src / "icu" / "datetimeevents.csv.gz").parent.mkdir(parents=True, exist_ok=True)
    (src / "icu" / "datetimeevents.csv.gz").write_bytes(b"")
    r = build_db(src, tmp_path / "m4.duckdb", progress=False)
    assert [s.file for s in r.skipped] == ["hosp/transfers.csv.gz", "icu/datetimeevents.csv.gz"]


def test_a_perturbed_manifest_keeps_the_reasons_but_not_the_names(tmp_path):
    r = build_db(_mimic3_with_extras(tmp_path), tmp_path / "p.duckdb", perturb=True, progress=False)
    assert len(r.skipped) == 5
    with connect(r.path) as con:
        recorded = read_manifest(con)["skipped_files"]
        assert find_original_names(con) == []
    assert [s["file"] for s in recorded] == [None] * 5 and recorded[0]["reason"] == UNUSED


def test_summary_lines_group_by_reason():
    skipped = [SkippedFile("A.csv", "r1"), SkippedFile("B.csv", "r2"), SkippedFile("C.csv", "r1")]
    assert summary_lines(skipped) == ["A.csv, C.csv: r1", "B.csv: r2"]
