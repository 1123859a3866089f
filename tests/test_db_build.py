"""`ehrlib build-db` on tiny hand-written MIMIC folders: loading, layouts, errors, atomicity."""
from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

import duckdb
import pytest

from ehrlib import schema
from ehrlib.cli import main
from ehrlib.db import read_manifest, table_defs
from ehrlib.db.build import build_db, detect_source_flavor
from ehrlib.db.connect import connect
from ehrlib.db.perturb import find_original_names
from ehrlib.errors import ConfigError, DataError

_DEFAULTS = {"INT": "1", "INTEGER": "1", "SMALLINT": "1", "BIGINT": "1", "TIMESTAMP": "2101-01-01 00:00:00",
             "DATE": "2101-01-01", "DOUBLE PRECISION": "1.5", "REAL": "1.5"}


def _csv_value(v: str) -> str:
    return '"' + v.replace('"', '""') + '"' if any(ch in v for ch in ',"\n') else v


def write_table(folder: Path, layout: str, logical: str, rows: list[dict], *, gz: bool = False,
                drop: tuple[str, ...] = (), upper_name: bool = True) -> Path:
    """A CSV in the PhysioNet dialect: lower-case header, NOT NULL columns defaulted."""
    d = table_defs(layout)[logical]
    cols = [c for c in d.columns if c.source is not None and c.source not in drop]
    lines = [",".join(c.source.lower() for c in cols)]
    for i, row in enumerate(rows, start=1):
        vals = []
        for c in cols:
            key = c.source.upper()
            if key in row:
                v = row[key]
            elif key == "ROW_ID" or key.endswith("_ID") and c.not_null and key not in ("SUBJECT_ID",):
                v = str(i)
            elif c.not_null:
                v = _DEFAULTS.get(c.type, "x")
            else:
                v = ""
            vals.append("" if v is None else _csv_value(str(v)))
        lines.append(",".join(vals))
    stem = d.source_stem if upper_name else d.source_stem.lower()
    path = folder / (stem + (".csv.gz" if gz else ".csv"))
    path.parent.mkdir(parents=True, exist_ok=True)
    data = ("\n".join(lines) + "\n").encode()
    if gz:
        path.write_bytes(gzip.compress(data, mtime=0))
    else:
        path.write_bytes(data)
    return path


@pytest.fixture()
def mimic3_dir(tmp_path) -> Path:
    src = tmp_path / "m3"
    write_table(src, "mimic3", "patients", [{"SUBJECT_ID": 1}, {"SUBJECT_ID": 2}])
    write_table(src, "mimic3", "admissions", [{"SUBJECT_ID": 1, "HADM_ID": 10}, {"SUBJECT_ID": 2, "HADM_ID": 20}])
    write_table(src, "mimic3", "labevents", [
        {"SUBJECT_ID": 2, "HADM_ID": 20, "ITEMID": 50912, "CHARTTIME": "2101-01-02 08:00:00", "VALUE": "1.1"},
        {"SUBJECT_ID": 1, "HADM_ID": 10, "ITEMID": 50912, "CHARTTIME": "2101-01-03 08:00:00", "VALUE": "0.9 ",
         "VALUENUM": "0.9", "FLAG": "abnormal"},
        {"SUBJECT_ID": 1, "HADM_ID": 10, "ITEMID": 50971, "CHARTTIME": "2101-01-01 08:00:00", "VALUE": "Neg"},
    ], gz=True)
    write_table(src, "mimic3", "chartevents", [
        {"SUBJECT_ID": 1, "HADM_ID": 10, "ITEMID": 224641, "CHARTTIME": "2101-01-01 09:00:00",
         "VALUE": 'Arm, Right Lower "L"', "ERROR": "0"},
    ], upper_name=False)
    return src


def test_builds_typed_ordered_tables_and_keeps_text_as_is(mimic3_dir, tmp_path):
    out = tmp_path / "db.duckdb"
    r = build_db(mimic3_dir, out, progress=False)
    assert (r.flavor, r.layout, r.source_kind) == ("mimic3", "mimic3", "credentialed")
    assert {t.logical: t.rows for t in r.tables if t.status == "loaded"} == {
        "patients": 2, "admissions": 2, "labevents": 3, "chartevents": 1}
    con = connect(out)
    rows = con.execute("SELECT ROW_ID, VALUE, VALUENUM, FLAG FROM LABEVENTS").fetchall()
    assert [r[0] for r in rows] == [3, 2, 1]  # (subject, hadm, charttime)
    assert rows[1][1:] == ("0.9 ", 0.9, "abnormal")  # trailing space and case kept
    assert con.execute("SELECT VALUE FROM CHARTEVENTS").fetchone()[0] == 'Arm, Right Lower "L"'
    assert con.execute("SELECT typeof(CHARTTIME) FROM CHARTEVENTS").fetchone()[0] == "TIMESTAMP"
    m = read_manifest(con)
    tables = {t["logical_name"]: t for t in m["tables"]}
    assert tables["labevents"]["source_file"] == "LABEVENTS.csv.gz"
    assert tables["labevents"]["source_sha256"] == hashlib.sha256(
        (mimic3_dir / "LABEVENTS.csv.gz").read_bytes()).hexdigest()
    assert tables["chartevents"]["source_file"] == "chartevents.csv"
    assert tables["d_items"]["status"] == "missing"
    assert set(m) >= {"source", "source_kind", "flavor", "layout", "version", "built_at", "ehrlib_version"}
    assert schema.detect_flavor(con) == "mimic3"
    with pytest.raises(duckdb.Error):
        con.execute("DELETE FROM PATIENTS")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["db.duckdb", "m3"]


def test_rebuild_is_idempotent(mimic3_dir, tmp_path):
    a = build_db(mimic3_dir, tmp_path / "a.duckdb", progress=False)
    b = build_db(mimic3_dir, tmp_path / "a.duckdb", progress=False)  # replaces the file
    with connect(a.path) as con:
        ma = read_manifest(con)["tables"]
    c = build_db(mimic3_dir, tmp_path / "c.duckdb", progress=False)
    with connect(c.path) as con:
        mc = read_manifest(con)["tables"]
    assert b.rows == c.rows
    assert [(t["table_name"], t["row_count"], t["content_checksum"]) for t in ma] == \
           [(t["table_name"], t["row_count"], t["content_checksum"]) for t in mc]


def test_mimic4_layout_generates_row_id_in_file_order(tmp_path):
    src = tmp_path / "m4"
    write_table(src, "mimic4", "patients", [{"SUBJECT_ID": 7}])
    write_table(src, "mimic4", "emar", [
        {"SUBJECT_ID": 7, "HADM_ID": 70, "EMAR_ID": "7-2", "CHARTTIME": "2180-01-02 00:00:00"},
        {"SUBJECT_ID": 7, "HADM_ID": 70, "EMAR_ID": "7-1", "CHARTTIME": "2180-01-01 00:00:00"},
    ], gz=True)
    write_table(src, "mimic4", "emar_detail", [{"SUBJECT_ID": 7, "EMAR_ID": "7-1", "DOSE_GIVEN": "5"}], gz=True)
    assert detect_source_flavor(src) == "mimic4"
    r = build_db(src, tmp_path / "m4.duckdb", progress=False)
    assert r.layout == "mimic4" and "chartevents" in r.missing
    con = connect(r.path)
    assert con.execute("SELECT row_id, emar_id FROM mimiciv_hosp.emar").fetchall() == [(2, "7-1"), (1, "7-2")]
    assert con.execute("SELECT row_id, dose_given FROM mimiciv_hosp.emar_detail").fetchall() == [(1, "5")]
    assert read_manifest(con)["source_kind"] == "credentialed"


def test_perturbed_build_hides_original_names(mimic3_dir, tmp_path):
    r = build_db(mimic3_dir, tmp_path / "p.duckdb", perturb=True, progress=False)
    con = connect(r.path)
    tables = {t for (t,) in con.execute("SELECT DISTINCT table_name FROM information_schema.columns").fetchall()}
    assert "LAB_RESULTS" in tables and "LABEVENTS" not in tables
    assert find_original_names(con) == []
    assert con.execute("SELECT VALUE_TEXT FROM LAB_RESULTS ORDER BY ID LIMIT 1").fetchone()[0] == "1.1"
    assert schema.detect_flavor(con) == "perturbed"
    with pytest.raises(ConfigError, match="MIMIC-III only"):
        src4 = tmp_path / "m4"
        write_table(src4, "mimic4", "patients", [{"SUBJECT_ID": 7}])
        build_db(src4, tmp_path / "p4.duckdb", perturb=True, progress=False)


def _no_output(tmp_path: Path, out: Path) -> None:
    assert not out.exists()
    assert not [p for p in out.parent.iterdir() if p.name.startswith(f".{out.name}")]


@pytest.mark.parametrize(("case", "expected"), [
    ("empty", "no MIMIC-III or MIMIC-IV CSV files"),
    ("missing_column", "D_ITEMS.csv: missing column(s) LABEL"),
    ("truncated_gz", "LABEVENTS.csv.gz: IO Error: Unexpected end of GZIP stream"),
    ("wrong_flavor", "--flavor mimic4 does not match"),
    ("bad_flavor", "--flavor must be one of"),
    ("null_id", "NOT NULL"),
    ("duplicate_row_id", "duplicate row key"),
    ("bad_value", 'Could not convert string "lots" to \'DOUBLE\''),
    ("demo_sums_wrong_counts", "damaged or partial copy"),
])
def test_bad_input_one_line_error_nonzero_exit_no_file(case, expected, mimic3_dir, tmp_path, capsys):
    src = mimic3_dir
    args = []
    if case == "empty":
        src = tmp_path / "empty"
        src.mkdir()
        (src / "README.txt").write_text("nothing here")
    elif case == "missing_column":
        write_table(src, "mimic3", "d_items", [{"ITEMID": 1}], drop=("LABEL",))
    elif case == "truncated_gz":
        # large enough that the header reads fine and DuckDB meets the cut mid-stream
        write_table(src, "mimic3", "labevents", [{"SUBJECT_ID": 1, "VALUE": f"v{i * 7919 % 100003}"}
                                                 for i in range(60_000)], gz=True)
        data = (src / "LABEVENTS.csv.gz").read_bytes()
        (src / "LABEVENTS.csv.gz").write_bytes(data[: len(data) // 2])
    elif case == "wrong_flavor":
        args = ["--flavor", "mimic4"]
    elif case == "bad_flavor":
        args = ["--flavor", "mimic5"]
    elif case == "null_id":
        write_table(src, "mimic3", "icustays", [{"SUBJECT_ID": None}])
    elif case == "duplicate_row_id":
        write_table(src, "mimic3", "d_labitems", [{"ROW_ID": 1}, {"ROW_ID": 1}])
    elif case == "bad_value":
        write_table(src, "mimic3", "outputevents", [{"SUBJECT_ID": 1, "VALUE": "lots"}])
    elif case == "demo_sums_wrong_counts":
        (src / "SHA256SUMS.txt").write_text(
            "f65803a46bcb88127574bfd0b70d78d4123783d05bb411e70d4c9629edd7b703 PATIENTS.csv\n")
    out = tmp_path / "out" / "db.duckdb"
    out.parent.mkdir()
    code = main(["build-db", str(src), str(out), "--no-progress", *args])
    err = capsys.readouterr().err.strip().splitlines()
    errors = [line for line in err if line.startswith("error:")]
    assert code != 0 and len(errors) == 1, err
    assert expected in errors[0], errors[0]
    assert "Original Line" not in errors[0]  # row text (possibly credentialed) stays out of messages
    _no_output(tmp_path, out)


def test_failed_build_keeps_previous_file(mimic3_dir, tmp_path):
    out = tmp_path / "db.duckdb"
    build_db(mimic3_dir, out, progress=False)
    before = out.read_bytes()
    write_table(mimic3_dir, "mimic3", "d_items", [{"ITEMID": 1}], drop=("LABEL",))
    with pytest.raises(DataError, match="missing column"):
        build_db(mimic3_dir, out, progress=False)
    assert out.read_bytes() == before


def test_connect_errors(tmp_path):
    with pytest.raises(DataError, match="does not exist"):
        connect(tmp_path / "nope.duckdb")
    junk = tmp_path / "junk.duckdb"
    junk.write_text("not a database")
    with pytest.raises(DataError, match="not a DuckDB database"):
        connect(junk)
    plain = tmp_path / "plain.duckdb"
    duckdb.connect(str(plain)).execute("CREATE TABLE t (a INT)").close()
    with pytest.raises(DataError, match="not an ehrlib database"):
        connect(plain)


def test_credentialed_dialect_quoted_upper_case_header(tmp_path):
    """Credentialed MIMIC-III v1.4 files quote the upper-case header and every text field."""
    src = tmp_path / "cred"
    src.mkdir()
    header = '"ROW_ID","SUBJECT_ID","HADM_ID","SEQ_NUM","ICD9_CODE"\n'
    body = '1,3,10,1,"4019"\n2,3,10,2,"V4581"\n'
    (src / "DIAGNOSES_ICD.csv.gz").write_bytes(gzip.compress((header + body).encode(), mtime=0))
    r = build_db(src, tmp_path / "c.duckdb", progress=False)
    assert r.source_kind == "credentialed" and len(r.missing) == 16
    with connect(r.path) as con:
        assert con.execute("SELECT ICD9_CODE FROM DIAGNOSES_ICD ORDER BY ROW_ID").fetchall() == [("4019",), ("V4581",)]


def test_summary_counts_and_time_span(mimic3_dir, tmp_path):
    from ehrlib.db import summarize

    write_table(mimic3_dir, "mimic3", "admissions", [
        {"SUBJECT_ID": 1, "HADM_ID": 10, "ADMITTIME": "2101-01-01 00:00:00", "DISCHTIME": "2101-01-09 00:00:00"},
        {"SUBJECT_ID": 2, "HADM_ID": 20, "ADMITTIME": "2100-05-01 00:00:00", "DISCHTIME": "2100-05-03 00:00:00"},
        {"SUBJECT_ID": 2, "HADM_ID": 21, "ADMITTIME": "2100-06-01 00:00:00", "DISCHTIME": "2100-06-03 00:00:00"},
    ])
    r = build_db(mimic3_dir, tmp_path / "s.duckdb", perturb=True, progress=False)
    with connect(r.path) as con:
        s = summarize(con)
    assert (s.layout, s.patients, s.admissions) == ("perturbed", 2, 3)
    assert (str(s.first_time), str(s.last_time)) == ("2100-05-01 00:00:00", "2101-01-09 00:00:00")
    assert s.rows == r.rows and "time span 2100-05-01 .. 2101-01-09" in s.lines()[0]
