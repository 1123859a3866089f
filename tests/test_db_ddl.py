"""DDL, create_tables, manifest and finalize on empty / tiny in-memory databases."""
from __future__ import annotations

import duckdb
import pytest

from ehrlib import schema
from ehrlib.db import create_tables, finalize, read_manifest, table_defs, write_manifest
from ehrlib.errors import ConfigError


def _columns(con, sch, table):
    return {
        r[0]: (r[1], r[2])
        for r in con.execute(
            "SELECT column_name, data_type, is_nullable FROM information_schema.columns "
            "WHERE table_schema = ? AND table_name = ?", [sch, table]).fetchall()
    }


@pytest.mark.parametrize("layout", ["mimic3", "mimic4", "perturbed"])
def test_every_mapped_column_exists_with_its_type(layout):
    con = duckdb.connect()
    create_tables(con, layout)
    for logical, phys in schema.schema_map(layout).tables.items():
        cols = _columns(con, phys.schema or "main", phys.name)
        assert cols, f"{layout}: {phys.name} not created"
        for lc, pc in phys.columns.items():
            if pc is not None:
                assert pc in cols, f"{layout}.{logical}.{lc} -> {pc} missing"


def test_mimic3_types_and_not_null_follow_mimic_code():
    con = duckdb.connect()
    create_tables(con, "mimic3", ["chartevents", "admissions", "d_labitems"])
    ce = _columns(con, "main", "CHARTEVENTS")
    assert list(ce)[:3] == ["ROW_ID", "SUBJECT_ID", "HADM_ID"]
    assert ce["ROW_ID"] == ("INTEGER", "NO") and ce["HADM_ID"] == ("INTEGER", "YES")
    assert ce["CHARTTIME"][0] == "TIMESTAMP" and ce["VALUENUM"][0] == "DOUBLE"
    assert len(ce) == 15
    adm = _columns(con, "main", "ADMISSIONS")
    assert adm["DISCHTIME"] == ("TIMESTAMP", "NO") and adm["HAS_CHARTEVENTS_DATA"] == ("SMALLINT", "NO")
    assert len(adm) == 19
    assert _columns(con, "main", "D_LABITEMS")["LABEL"] == ("VARCHAR", "NO")


def test_mimic4_schemas_and_generated_row_id():
    con = duckdb.connect()
    create_tables(con, "mimic4")
    emar = _columns(con, "mimiciv_hosp", "emar")
    assert list(emar)[0] == "row_id" and emar["row_id"] == ("BIGINT", "NO")
    lab = _columns(con, "mimiciv_hosp", "labevents")
    assert "row_id" not in lab and lab["labevent_id"] == ("INTEGER", "NO")
    assert "hadm_id" not in _columns(con, "mimiciv_hosp", "emar_detail")
    assert _columns(con, "mimiciv_icu", "outputevents")["value"] == ("DOUBLE", "NO")
    assert _columns(con, "mimiciv_hosp", "patients")["dod"][0] == "DATE"


def test_perturbed_has_no_original_table_names_and_renames_conceptid():
    con = duckdb.connect()
    create_tables(con, "perturbed")
    write_manifest(con, source="unit", source_kind="synthetic", flavor="mimic3", layout="perturbed", version="1.4")
    originals = {t.name.upper() for t in schema.MIMIC3.tables.values()} | set(schema.LOGICAL)
    tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.columns").fetchall()}
    assert not {t.upper() for t in tables} & {o.upper() for o in originals}
    values = {str(v) for row in con.execute("SELECT * FROM ehrlib_manifest_tables").fetchall() for v in row}
    values |= {str(v) for row in con.execute("SELECT * FROM ehrlib_manifest").fetchall() for v in row}
    assert not {v.upper() for v in values} & {o.upper() for o in originals}
    items = _columns(con, "main", "ITEM_INFORMATION")
    assert "CONCEPT_ID" in items and "CONCEPTID" not in items


def test_create_tables_rejects_unknown_and_existing():
    con = duckdb.connect()
    with pytest.raises(ConfigError):
        create_tables(con, "mimic3", ["emar"])
    with pytest.raises(ConfigError):
        create_tables(con, "oracle")
    create_tables(con, "mimic3", ["patients"])
    with pytest.raises(ConfigError, match="already exists"):
        create_tables(con, "mimic3", ["patients"])


def test_finalize_orders_events_keeps_ddl_and_fills_manifest():
    con = duckdb.connect()
    create_tables(con, "mimic3", ["labevents", "patients"])
    rows = [(5, 2, 20, 1, "2101-01-02 00:00:00"), (4, 1, 11, 1, "2101-01-03 00:00:00"),
            (3, 1, 10, 1, "2101-01-05 00:00:00"), (2, 1, 10, 1, "2101-01-04 00:00:00"),
            (1, 1, None, 1, "2101-01-01 00:00:00")]
    con.executemany("INSERT INTO LABEVENTS (ROW_ID, SUBJECT_ID, HADM_ID, ITEMID, CHARTTIME) "
                    "VALUES (?, ?, ?, ?, ?::TIMESTAMP)", rows)
    write_manifest(con, source="unit", source_kind="synthetic", flavor="synthetic", layout="mimic3", version="0")
    before = {t["table_name"]: t for t in read_manifest(con)["tables"]}
    finalize(con, "mimic3")
    order = [r[0] for r in con.execute("SELECT ROW_ID FROM LABEVENTS").fetchall()]
    assert order == [2, 3, 4, 1, 5]  # subject, hadm (NULL last), charttime
    assert _columns(con, "main", "LABEVENTS")["ITEMID"] == ("INTEGER", "NO")
    m = read_manifest(con)
    assert m["layout"] == "mimic3" and m["source_kind"] == "synthetic"
    after = {t["table_name"]: t for t in m["tables"]}
    assert after["LABEVENTS"]["row_count"] == 5
    assert after["LABEVENTS"]["content_checksum"] == before["LABEVENTS"]["content_checksum"]
    assert after["CHARTEVENTS"]["status"] == "missing"
    assert schema.detect_flavor(con) == "mimic3"


def test_write_manifest_validates():
    con = duckdb.connect()
    with pytest.raises(ConfigError):
        write_manifest(con, source="x", source_kind="public", flavor="mimic3", layout="mimic3", version="1")
    with pytest.raises(ConfigError):
        write_manifest(con, source="x", source_kind="synthetic", flavor="mimic3", layout="nope", version="1")


def test_table_defs_sources():
    assert table_defs("mimic4")["chartevents"].source_stem == "icu/chartevents"
    assert table_defs("perturbed")["labevents"].source_stem == "LABEVENTS"
    cols = {c.name: c.source for c in table_defs("perturbed")["labevents"].columns}
    assert cols["MEASURED_AT"] == "CHARTTIME"
