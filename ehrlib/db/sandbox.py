"""A sandbox for SQL a model wrote: one SELECT over allow-listed tables, scoped to one patient.

A keyword filter on the SQL text cannot tell a table function from a column, nor a patient
filter from a tautology (``WHERE subject_id = 1 OR 1 = 1``). Here the query is parsed
(sqlglot, DuckDB dialect) and checked on its syntax tree, then *rewritten*: every reference
to a patient-level table becomes a subquery that already holds only the bound patient's
rows (``(SELECT * FROM chartevents WHERE subject_id = $ehrlib_subject) AS chartevents``),
so nothing the model writes in a predicate can widen the scope. Dictionary tables
(``d_items``, ...) hold no patient data and are read as they are. What runs is the
regenerated SQL, never the model's text, with comments dropped (a ``--`` comment holding
``*/`` would otherwise reopen as live SQL once regenerated as ``/* ... */``).

Refused before anything runs: more than one statement, anything but a query, a table
that is not on the list (system views and ``information_schema`` included), a table
function or file reader in FROM (``read_text``, ``read_csv``, ``glob``, ``query``,
``range`` ...), scalar functions that read the configuration or the environment,
placeholders, and a CTE named like a real catalog object (an out-of-scope reference to
it would otherwise reach that object unscoped). The connection itself is hardened as a
second wall (:func:`ehrlib.tools.lockdown.harden`: no file system, no extensions, locked
configuration). Refusals that touch forbidden tables or functions get one generic
message, so the model learns nothing about the host from them.
"""
from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

import sqlglot
from sqlglot import exp

from ehrlib import schema as _schema
from ehrlib.tools.lockdown import harden

__all__ = ["SandboxPolicy", "SandboxRefusal", "policy_for", "scope_query", "run_sandboxed", "FORBIDDEN_MESSAGE"]

#: the one message for anything that reached for a table or function outside the sandbox
FORBIDDEN_MESSAGE = "the query uses a table or function that is not allowed; read only the tables listed in the schema"

_SUBJECT_PARAM = "ehrlib_subject"
_LIMIT_PARAM = "ehrlib_limit"

#: scalar functions (by lower-case name prefix) that read configuration, variables, the
#: environment or files; table functions are refused by position (FROM takes table names only)
_DENIED_PREFIXES = ("current_setting", "getenv", "getvariable", "setvariable", "read_", "glob", "duckdb_",
                    "pragma", "sniff_", "parquet_", "query", "load", "install", "sqlite_", "postgres_",
                    "mysql_", "iceberg_", "delta_", "http", "s3", "file", "list_files", "which_secret",
                    "checkpoint", "force_checkpoint", "enable_", "disable_", "python", "arrow", "json_execute",
                    "icu_", "repeat_row", "test_")
#: Table node arguments a plain reference may carry (anything else: pivots, samples, time travel, ...)
_TABLE_ARGS = {"this", "db", "alias"}


class SandboxRefusal(Exception):
    """The query was refused; ``str(exc)`` is the message for the model."""


@dataclass(frozen=True, slots=True)
class ScopedTable:
    """One allow-listed physical table: its quoted reference and the patient column (None: dictionary)."""

    ref: str
    subject: str | None


@dataclass(frozen=True, slots=True)
class SandboxPolicy:
    """Which names a query may read (lower-case ``name`` and ``schema.name`` keys) and the
    catalog's own names (lower case), which a CTE may not shadow."""

    tables: Mapping[str, ScopedTable]
    catalog: frozenset[str]


def policy_for(con: Any, smap: _schema.SchemaMap, logical_tables: Iterable[str]) -> SandboxPolicy:
    """The policy for these logical tables in one physical layout, on this database."""
    tables: dict[str, ScopedTable] = {}
    for name in logical_tables:
        if not smap.has(name):
            continue
        pt = smap.table(name)
        subject_role = _schema.LOGICAL[name].roles.get("subject")
        subject = pt.col(subject_role) if subject_role and pt.has(subject_role) else None
        if subject is None and _schema.LOGICAL[name].kind != "dictionary":
            continue    # a patient-level table we cannot scope is not offered at all
        entry = ScopedTable(pt.ref, subject)
        tables[pt.name.lower()] = entry
        if pt.schema:
            tables[f"{pt.schema}.{pt.name}".lower()] = entry
    rows = con.execute("SELECT lower(table_name) FROM duckdb_tables() UNION "
                       "SELECT lower(view_name) FROM duckdb_views()").fetchall()
    return SandboxPolicy(tables, frozenset(r[0] for r in rows) | frozenset(tables))


def _key(table: exp.Table) -> str:
    return f"{table.db}.{table.name}".lower() if table.db else table.name.lower()


def _check_functions(tree: exp.Expression) -> None:
    for fn in tree.find_all(exp.Func):
        name = (fn.name if isinstance(fn, exp.Anonymous) else fn.sql_name()).lower()
        if name.startswith(_DENIED_PREFIXES):
            raise SandboxRefusal(FORBIDDEN_MESSAGE)


def _cte_names(tree: exp.Expression, policy: SandboxPolicy) -> set[str]:
    names = set()
    for cte in tree.find_all(exp.CTE):
        name = cte.alias_or_name.lower()
        if name in policy.catalog:
            raise SandboxRefusal(f"the CTE name {cte.alias_or_name!r} is the name of a table; choose another")
        names.add(name)
    return names


def scope_query(sql: str, policy: SandboxPolicy) -> tuple[str, bool]:
    """Check one model-written query; return it rewritten over the patient's rows, and
    whether it binds ``$ehrlib_subject`` (it reads a patient-level table).

    Raises SandboxRefusal with a message for the model.
    """
    log = logging.getLogger("sqlglot")     # it warns on stderr for every statement it cannot parse
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        statements = [s for s in sqlglot.parse(sql, read="duckdb") if s is not None]
    except sqlglot.errors.SqlglotError as exc:
        raise SandboxRefusal(f"the query could not be parsed: {' '.join(str(exc).split())[:200]}") from None
    finally:
        log.setLevel(level)
    if len(statements) != 1:
        raise SandboxRefusal("exactly one statement is allowed")
    tree = statements[0]
    if not isinstance(tree, exp.Query):
        raise SandboxRefusal("the query must be a single SELECT (or WITH ... SELECT) statement")
    bad = (exp.DDL, exp.DML, exp.Command, exp.Set, exp.Pragma, exp.Copy, exp.Use, exp.Transaction,
           exp.Commit, exp.Rollback, exp.Describe, exp.Summarize, exp.Pivot, exp.Into)
    if any(isinstance(node, bad) for node in tree.walk()):
        raise SandboxRefusal("the query may only read data (one SELECT, no INTO, PIVOT, DDL or commands)")
    if tree.find(exp.Placeholder, exp.Parameter) is not None:
        raise SandboxRefusal("the query may not use parameters; write the values in the query")
    _check_functions(tree)
    ctes = _cte_names(tree, policy)
    subject = exp.Placeholder(this=_SUBJECT_PARAM)
    binds = False
    for table in list(tree.find_all(exp.Table)):
        if not isinstance(table.this, exp.Identifier) or table.catalog:
            raise SandboxRefusal(FORBIDDEN_MESSAGE)
        if set(k for k, v in table.args.items() if v) - _TABLE_ARGS:
            raise SandboxRefusal("only plain table references are allowed in FROM and JOIN")
        key = _key(table)
        scoped = policy.tables.get(key)
        if scoped is None:
            if not table.db and key in ctes:
                continue        # a CTE of this query (its body is checked like the rest)
            raise SandboxRefusal(FORBIDDEN_MESSAGE)
        if scoped.subject is None:
            continue            # dictionary table: no patient rows
        alias = table.args.get("alias") or exp.TableAlias(this=exp.to_identifier(table.name, quoted=True))
        body = exp.select("*").from_(sqlglot.parse_one(scoped.ref, read="duckdb", into=exp.Table)).where(
            exp.EQ(this=sqlglot.parse_one(scoped.subject, read="duckdb"), expression=subject.copy()))
        table.replace(exp.Subquery(this=body, alias=alias))
        binds = True
    return tree.sql(dialect="duckdb", comments=False), binds


def _generic(message: str) -> bool:
    low = message.lower()
    return "permission error" in low or "disabled by configuration" in low or "extension" in low


def run_sandboxed(con: Any, sql: str, policy: SandboxPolicy, subject_id: int, *, timeout_s: float,
                  row_cap: int) -> tuple[list[str], list[tuple], str | None]:
    """Run a model's query in the sandbox: (columns, rows, error for the model).

    At most ``row_cap`` rows; interrupted after ``timeout_s``. The connection must be a
    hardened read-only one (:func:`ehrlib.db.connect.connect`); it is hardened here if not.
    """
    try:
        scoped, binds = scope_query(sql, policy)
    except SandboxRefusal as exc:
        return [], [], str(exc)
    harden(con)
    timer = threading.Timer(timeout_s, con.interrupt)
    timer.start()
    try:
        cur = con.execute(f"SELECT * FROM ({scoped}) AS model_q LIMIT ${_LIMIT_PARAM}",  # noqa: S608 - checked, rewritten
                          {_LIMIT_PARAM: int(row_cap), **({_SUBJECT_PARAM: int(subject_id)} if binds else {})})
        cols = [d[0] for d in cur.description]
        rows = cur.fetchall()
    except Exception as exc:  # noqa: BLE001 - any SQL failure goes back to the model once
        msg = " ".join(str(exc).split())
        if "interrupt" in msg.lower():
            return [], [], "timed out"
        return [], [], FORBIDDEN_MESSAGE if _generic(msg) else msg[:300]
    finally:
        timer.cancel()
    return cols, rows, None
