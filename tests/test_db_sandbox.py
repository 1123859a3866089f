"""The model-SQL sandbox: one SELECT over allow-listed tables, scoped to one patient.

The generated attack families live in tests/test_hostile_sql.py.
"""
from __future__ import annotations

import pytest

from ehrlib.db.sandbox import run_sandboxed, scope_query


@pytest.fixture(scope="module")
def env(sandbox_env):
    return sandbox_env


def _run(env, sql, cap=50):
    con, policy, me, _, _ = env
    return run_sandboxed(con, sql, policy, me, timeout_s=5, row_cap=cap)


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
