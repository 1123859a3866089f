"""The model-SQL sandbox: one SELECT over allow-listed tables, scoped to one patient.

Hostile queries are generated from a few attack families (file readers, table functions,
statements, scope-widening predicates, CTE shadowing, comment smuggling, system views)
against a database with two patients and a canary file on disk: none may return the
canary, another patient's row, or a non-generic message about a forbidden function.
"""
from __future__ import annotations

import itertools

import pytest

from ehrlib import schema
from ehrlib.db.connect import connect
from ehrlib.tools.sql_sandbox import FORBIDDEN_MESSAGE, policy_for, run_sandboxed, scope_query

CANARY = "EHRLIB-CANARY-7f3a9c"
TABLES = ("admissions", "icustays", *schema.EVENT_TABLES, *schema.DICTIONARY_TABLES)


@pytest.fixture(scope="module")
def env(synth_db, tmp_path_factory):
    canary = tmp_path_factory.mktemp("canary") / "canary.csv"
    canary.write_text(f"secret\n{CANARY}\n")
    con = connect(synth_db)
    subjects = [r[0] for r in con.execute(
        "SELECT SUBJECT_ID FROM CHARTEVENTS GROUP BY 1 ORDER BY count(*) DESC LIMIT 2").fetchall()]
    policy = policy_for(con, schema.MIMIC3, TABLES)
    yield con, policy, subjects[0], subjects[1], str(canary)
    con.close()


def _run(env, sql, cap=50):
    con, policy, me, _, _ = env
    return run_sandboxed(con, sql, policy, me, timeout_s=5, row_cap=cap)


def _hostile_queries(me: int, other: int, canary: str) -> dict[str, list[str]]:
    files = [canary, "/etc/passwd", "~/.ssh/id_rsa", "*", "/**/*.csv"]
    readers = ["read_text", "read_blob", "read_csv", "read_csv_auto", "read_json", "read_parquet", "glob",
               "parquet_scan", "sniff_csv", "read_json_auto"]
    file_reads = [f"SELECT * FROM {r}('{f}')" for r, f in itertools.product(readers, files)]
    file_reads += [f"SELECT * FROM '{f}'" for f in files] + [f'SELECT * FROM "{f}"' for f in files]
    file_reads += [f"SELECT CAST((SELECT content FROM read_text('{f}')) AS INT)" for f in files]
    file_reads += [f"SELECT * FROM CHARTEVENTS WHERE SUBJECT_ID = {me} AND VALUE = (SELECT content FROM "
                   f"read_text('{f}'))" for f in files]
    table_fns = ["SELECT * FROM query('SELECT * FROM CHARTEVENTS')", "SELECT * FROM query_table('CHARTEVENTS')",
                 "SELECT * FROM range(10)", "SELECT * FROM duckdb_settings()", "SELECT * FROM duckdb_tables()",
                 "SELECT * FROM pragma_table_info('CHARTEVENTS')",
                 "SELECT current_setting('threads')", "SELECT getenv('HOME')", "SELECT getvariable('x')",
                 "SELECT * FROM generate_series(1, 3)", "SELECT * FROM information_schema.tables",
                 "SELECT * FROM sqlite_master", "SELECT * FROM pg_catalog.pg_class", "SELECT * FROM ehrlib_manifest",
                 "SELECT * FROM duckdb_views()", "SELECT * FROM memory.main.CHARTEVENTS"]
    statements = ["ATTACH 'x.db' AS x", f"COPY CHARTEVENTS TO '{canary}.out'", "PRAGMA database_list",
                  "SET enable_external_access = true", "INSTALL sqlite", "LOAD sqlite", "DROP TABLE CHARTEVENTS",
                  "CREATE TABLE t AS SELECT 1", "INSERT INTO CHARTEVENTS SELECT * FROM CHARTEVENTS",
                  "DELETE FROM CHARTEVENTS", "UPDATE CHARTEVENTS SET VALUE = 1", "SELECT 1; SELECT 2",
                  f"SELECT 1 WHERE {me} > 0; DROP TABLE LABEVENTS", "SELECT * INTO t FROM CHARTEVENTS",
                  "DESCRIBE CHARTEVENTS", "SUMMARIZE CHARTEVENTS", "PIVOT CHARTEVENTS ON ITEMID", "CHECKPOINT",
                  "EXPORT DATABASE 'x'", "CALL pragma_version()", "BEGIN TRANSACTION", "USE memory",
                  "SELECT ?", "SELECT $1", "DETACH x", "VACUUM",
                  "SELECT * FROM CHARTEVENTS PIVOT (count(*) FOR ITEMID IN (1, 2))"]
    widen = []
    for table in ("CHARTEVENTS", "LABEVENTS", "ADMISSIONS", "PRESCRIPTIONS", "MICROBIOLOGYEVENTS"):
        for pred in (f"SUBJECT_ID = {other}", f"SUBJECT_ID = {me} OR 1 = 1", f"SUBJECT_ID = {me} OR TRUE",
                     f"'{me}' = '{me}'", f"SUBJECT_ID <> {me}", "1 = 1", f"SUBJECT_ID IN ({me}, {other})",
                     f"SUBJECT_ID = {me} OR SUBJECT_ID = {other}", f"CAST(SUBJECT_ID AS VARCHAR) LIKE '%' -- {me}"):
            widen.append(f"SELECT * FROM {table} WHERE {pred}")
        widen.append(f"SELECT * FROM {table}")
        widen.append(f"SELECT o.* FROM {table} o JOIN {table} m ON m.SUBJECT_ID = {me}")
        widen.append(f"WITH x AS (SELECT * FROM {table}) SELECT * FROM x WHERE SUBJECT_ID = {other}")
        widen.append(f"SELECT * FROM (SELECT * FROM {table} UNION ALL SELECT * FROM {table}) WHERE SUBJECT_ID = {other}")
        widen.append(f"SELECT * FROM {table} WHERE SUBJECT_ID = (SELECT max(SUBJECT_ID) FROM {table} "
                     f"WHERE SUBJECT_ID <> {me})")
        widen.append(f"SELECT * FROM main.{table} WHERE SUBJECT_ID = {other}")
        widen.append(f'SELECT * FROM "{table.lower()}" WHERE SUBJECT_ID = {other}')
    shadow = ["WITH CHARTEVENTS AS (SELECT 1 AS SUBJECT_ID) SELECT * FROM CHARTEVENTS",
              "SELECT * FROM (WITH sqlite_master AS (SELECT 1) SELECT * FROM sqlite_master), sqlite_master",
              "SELECT * FROM (WITH LABEVENTS AS (SELECT 1) SELECT 1), LABEVENTS",
              "WITH x AS (SELECT 1) SELECT * FROM x, (WITH y AS (SELECT 2) SELECT * FROM y), y"]
    smuggle = ["SELECT 1 -- */ ATTACH 'x'", "SELECT 1 /* x */ -- */ ; DROP TABLE CHARTEVENTS",
               f"SELECT * FROM CHARTEVENTS -- */ WHERE SUBJECT_ID = {other}\n WHERE SUBJECT_ID = {other}",
               "SELECT '*/ ATTACH ''x''' AS s", "SELECT $$ '; ATTACH 'x' $$ AS s"]
    return {"comment and quote smuggling": smuggle, "file readers": file_reads, "table functions and system views": table_fns,
            "statements and commands": statements, "scope widening": widen, "CTE shadowing": shadow}


def test_hostile_model_sql_never_leaks(env, capsys):
    con, policy, me, other, canary = env
    cases = _hostile_queries(me, other, canary)
    outcomes: dict[str, dict[str, int]] = {}
    for family, queries in cases.items():
        for sql in queries:
            cols, rows, err = _run(env, sql, cap=100_000)
            assert CANARY not in repr(rows) and CANARY not in str(err), sql
            assert "root" not in str(err) and "/etc" not in str(err), sql
            if rows and "SUBJECT_ID" in cols:
                k = cols.index("SUBJECT_ID")
                assert {r[k] for r in rows} == {me}, sql
            if err is None and family not in ("scope widening", "comment and quote smuggling"):
                pytest.fail(f"not refused: {sql}")
            if family in ("file readers", "table functions and system views") and err:
                assert err == FORBIDDEN_MESSAGE or "could not be parsed" in err or "parameters" in err, (sql, err)
            kind = "refused" if err else "patient rows only"
            outcomes.setdefault(family, {}).setdefault(kind, 0)
            outcomes[family][kind] += 1
    with capsys.disabled():
        for family, kinds in outcomes.items():
            print(f"\n[hostile model SQL] {family}: {sum(kinds.values())} cases, {kinds}")
    assert sum(sum(k.values()) for k in outcomes.values()) >= 100


def test_scope_is_in_the_rewritten_tree(env):
    _, policy, _, _, _ = env
    sql, binds = scope_query("SELECT c.VALUE FROM CHARTEVENTS c WHERE c.SUBJECT_ID = 1 OR 1 = 1", policy)
    assert binds and '"SUBJECT_ID" = $ehrlib_subject' in sql and "AS c" in sql
    sql, binds = scope_query("SELECT LABEL FROM D_ITEMS LIMIT 3", policy)     # dictionary: as is
    assert not binds and "ehrlib_subject" not in sql


def test_patient_queries_work(env):
    con, _, me, other, _ = env
    cols, rows, err = _run(env, f"SELECT * FROM CHARTEVENTS WHERE SUBJECT_ID = {me}", cap=7)
    assert err is None and len(rows) == 7 and "ROW_ID" in cols
    # a join with a dictionary and a CTE, as CheckEHR's prompts ask for
    cols, rows, err = _run(env, "WITH v AS (SELECT ITEMID, VALUENUM FROM CHARTEVENTS) SELECT d.LABEL, count(*) "
                                "FROM v JOIN D_ITEMS d ON d.ITEMID = v.ITEMID GROUP BY 1 ORDER BY 2 DESC")
    assert err is None and rows
    mine = con.execute("SELECT count(*) FROM CHARTEVENTS WHERE SUBJECT_ID = ?", [me]).fetchone()[0]
    _, rows, err = _run(env, f"SELECT count(*) FROM CHARTEVENTS WHERE SUBJECT_ID = {other} OR 1 = 1")
    assert err is None and rows == [(mine,)]


def test_timeout(env):
    _, _, _, _, _ = env
    slow = ("SELECT sum(a.VALUENUM * b.VALUENUM * c.VALUENUM * d.VALUENUM) FROM CHARTEVENTS a, CHARTEVENTS b, "
            "CHARTEVENTS c, CHARTEVENTS d")
    con, policy, me, _, _ = env
    assert run_sandboxed(con, slow, policy, me, timeout_s=0.3, row_cap=5)[2] == "timed out"


def test_connection_is_locked(env):
    con = env[0]
    for sql in ("SET enable_external_access = true", "SET lock_configuration = false",
                "SET autoinstall_known_extensions = true"):
        with pytest.raises(Exception, match="locked"):
            con.execute(sql)
    with pytest.raises(Exception, match="disabled by configuration"):
        con.execute("SELECT * FROM read_text(?)", [env[4]])
    settings = dict(con.execute("SELECT name, value FROM duckdb_settings() WHERE name IN ('enable_external_access', "
                                "'autoinstall_known_extensions', 'autoload_known_extensions', "
                                "'lock_configuration')").fetchall())
    assert settings == {"enable_external_access": "false", "autoinstall_known_extensions": "false",
                        "autoload_known_extensions": "false", "lock_configuration": "true"}
