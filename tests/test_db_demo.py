"""Data-contract tests on the real PhysioNet demos (skipped when the folders are absent).

Expected row counts are read from each folder's SOURCE.md, independently of the
constants in ehrlib.db.contracts.
"""
from __future__ import annotations

import re
from pathlib import Path

from ehrlib import schema
from ehrlib.db import build_db, connect, read_manifest
from ehrlib.db.finalize import order_keys
from ehrlib.db.perturb import find_original_names


def _source_md_counts(folder: Path) -> dict[str, int]:
    """{file path without .csv/.csv.gz: rows} from SOURCE.md's file table."""
    out = {}
    for m in re.finditer(r"^\| ([\w/]+)\.csv(?:\.gz)? \| (\d+) \|", (folder / "SOURCE.md").read_text(), re.M):
        out[m.group(1)] = int(m.group(2))
    return out


def _loaded(manifest: dict) -> dict[str, dict]:
    return {t["source_file"].split(".")[0]: t for t in manifest["tables"] if t["status"] == "loaded"}


def test_mimic3_demo_row_counts_equal_source_md(mimic3_demo_db, mimic3_demo_dir):
    expected = _source_md_counts(mimic3_demo_dir)
    with connect(mimic3_demo_db) as con:
        m = read_manifest(con)
        loaded = _loaded(m)
        assert len(loaded) == 17 and not [t for t in m["tables"] if t["status"] != "loaded"]
        for stem, t in loaded.items():
            assert t["row_count"] == expected[stem], stem
            actual = con.execute(f"SELECT count(*) FROM {schema.quote_ident(t['table_name'])}").fetchone()[0]
            assert actual == expected[stem], stem
    assert (m["source_kind"], m["flavor"], m["layout"], m["version"]) == ("open-demo", "mimic3", "mimic3", "1.4")


def test_mimic3_demo_rebuild_gives_equal_counts_and_checksums(mimic3_demo_db, mimic3_demo_dir, tmp_path):
    again = build_db(mimic3_demo_dir, tmp_path / "again.duckdb", progress=False)
    with connect(mimic3_demo_db) as a, connect(again.path) as b:
        ta, tb = read_manifest(a)["tables"], read_manifest(b)["tables"]
    key = [(t["table_name"], t["row_count"], t["content_checksum"], t["source_sha256"]) for t in ta]
    assert key == [(t["table_name"], t["row_count"], t["content_checksum"], t["source_sha256"]) for t in tb]


def test_mimic3_demo_types_text_and_order(mimic3_demo_db):
    with connect(mimic3_demo_db) as con:
        assert con.execute("SELECT typeof(CHARTTIME), typeof(VALUENUM) FROM CHARTEVENTS LIMIT 1").fetchone() == (
            "TIMESTAMP", "DOUBLE")
        # quoted fields deep in the file and padded text survive as is
        assert con.execute("SELECT count(*) FROM CHARTEVENTS WHERE VALUE LIKE '%, %'").fetchone()[0] > 0
        assert con.execute("SELECT count(*) FROM INPUTEVENTS_MV "
                           "WHERE ORDERCOMPONENTTYPEDESCRIPTION LIKE '% '").fetchone()[0] > 0
        for logical in schema.EVENT_TABLES:
            if not schema.MIMIC3.has(logical):
                continue
            t = schema.MIMIC3.table(logical)
            keys = ", ".join(schema.quote_ident(k) for k in order_keys("mimic3", logical))
            unsorted = con.execute(
                f"SELECT count(*) FROM (SELECT row_number() OVER () AS pos, "
                f"row_number() OVER (ORDER BY {keys}) AS want FROM {t.ref}) WHERE pos <> want").fetchone()[0]
            assert unsorted == 0, logical


def test_mimic4_demo_builds_with_chartevents_missing(mimic4_demo_db, mimic4_demo_dir):
    expected = _source_md_counts(mimic4_demo_dir)
    with connect(mimic4_demo_db) as con:
        m = read_manifest(con)
        status = {t["logical_name"]: t["status"] for t in m["tables"]}
        assert status["chartevents"] == "missing"
        assert [k for k, v in status.items() if v == "missing"] == ["chartevents"]
        for stem, t in _loaded(m).items():
            assert t["row_count"] == expected[stem], stem
        assert schema.detect_flavor(con) == "mimic4"
        # emar_detail has no hadm_id: it joins through emar
        joined = con.execute(
            "SELECT count(*) FROM mimiciv_hosp.emar_detail d JOIN mimiciv_hosp.emar e USING (emar_id)"
        ).fetchone()[0]
        assert joined > 0
    assert (m["source_kind"], m["version"]) == ("open-demo", "2.2")


def test_perturbed_demo_reveals_no_original_table_name(mimic3_demo_dir, tmp_path):
    r = build_db(mimic3_demo_dir, tmp_path / "perturbed.duckdb", perturb=True, progress=False)
    originals = {t.name for t in schema.MIMIC3.tables.values()}
    with connect(r.path) as con:
        rows = con.execute("SELECT table_name, column_name FROM information_schema.columns").fetchall()
        assert not {t.upper() for t, _ in rows} & originals
        assert find_original_names(con) == []
        assert con.execute("SELECT count(*) FROM VITALS_TIMESERIES").fetchone()[0] == r.tables[3].rows
    expected = _source_md_counts(mimic3_demo_dir)
    assert r.rows == sum(expected[t.name] for t in schema.MIMIC3.tables.values())
