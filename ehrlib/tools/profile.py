"""Value profiles: the top-K values of every item over the whole database.

Get_Item_Value_Distribution (paper Appendix C.2) tells a model what an item's values
look like ("SBP: 110, 120, 130 ..." is numeric; "Level of Consciousness: Alert, Arouse to
voice" is categorical) so it can judge whether the item matches the note's entity. A
whole-database GROUP BY is too slow per call at MIMIC scale, so :func:`build_item_profile`
precomputes it once per database into ``ehrlib_item_profile`` (the database build and
the synthetic generator call it); a database without the table gets the same rows
computed once and kept in memory and in the database's disk cache (``disk_cache``).
"""
from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from typing import Any

from ehrlib import schema as schema_module
from ehrlib.disk_cache import cached_value, code_digest, source_files
from ehrlib.schema import LOGICAL, SchemaMap, detect_flavor, quote_ident, schema_map
from ehrlib.tools import access, items
from ehrlib.tools.access import reader
from ehrlib.tools.items import MICRO_KINDS, SEARCHABLE_TABLES

__all__ = ["PROFILE_TABLE", "TOP_K", "build_item_profile", "profile_for", "value_kind"]

PROFILE_TABLE = "ehrlib_item_profile"
TOP_K = 10
_COLUMNS = ("item_key", "rank", "value", "n", "n_total", "n_distinct", "n_numeric", "num_min", "num_max", "num_mean")


def _sources(schema: SchemaMap) -> Iterator[tuple[str, str, str, str, str]]:
    """(key prefix, item expression, value text expression, numeric expression, FROM) per item source."""
    for table in SEARCHABLE_TABLES:
        if not schema.has(table) or table in ("diagnoses_icd", "procedures_icd"):
            continue
        r = reader(schema, table)
        pt = schema.table(table)
        if table == "microbiologyevents":
            interp = pt.expr("interpretation")
            for kind, column in MICRO_KINDS.items():
                if not pt.has(column):
                    continue
                value = f"CAST({pt.expr('org_name')} AS VARCHAR)" if kind == "spec" else f"CAST({interp} AS VARCHAR)"
                yield f"{table}:{kind}:", pt.col(column), value, "CAST(NULL AS DOUBLE)", r.ref
            continue
        item = pt.col(LOGICAL[table].roles["item"])
        value = f"COALESCE({r.txt_expr}, CAST({r.num_expr} AS VARCHAR))"
        yield f"{table}:", item, value, r.num_expr, r.ref


def _profile_sql(schema: SchemaMap) -> Iterator[tuple[str, list[Any]]]:
    for prefix, item, value, num, ref in _sources(schema):
        sql = f"""
WITH v AS (
    SELECT ? || CAST({item} AS VARCHAR) AS item_key, {value} AS value, {num} AS num
    FROM {ref} WHERE {item} IS NOT NULL
), g AS (
    SELECT item_key, value, count(*) AS n FROM v WHERE value IS NOT NULL GROUP BY item_key, value
), tot AS (
    SELECT item_key, sum(n) AS n_total, count(*) AS n_distinct,
           sum(CASE WHEN TRY_CAST(value AS DOUBLE) IS NOT NULL THEN n ELSE 0 END) AS n_numeric
    FROM g GROUP BY item_key
), nums AS (
    SELECT item_key, min(num) AS num_min, max(num) AS num_max, avg(num) AS num_mean FROM v GROUP BY item_key
), ranked AS (
    SELECT item_key, value, n, row_number() OVER (PARTITION BY item_key ORDER BY n DESC, value) AS rank FROM g
)
SELECT ranked.item_key, CAST(ranked.rank AS INTEGER), ranked.value, ranked.n, tot.n_total, tot.n_distinct,
       tot.n_numeric, nums.num_min, nums.num_max, nums.num_mean
FROM ranked JOIN tot USING (item_key) JOIN nums USING (item_key)
WHERE ranked.rank <= {TOP_K}
"""  # noqa: S608 - identifiers from ehrlib.schema, values bound
        yield sql, [prefix]


def build_item_profile(con: Any, schema: SchemaMap | None = None) -> int:
    """Precompute ``ehrlib_item_profile`` on a writable connection; returns its row count.

    Call once at the end of a database build. Written to a temporary table and swapped
    in within one transaction, so a failed build leaves the previous profile intact.
    """
    schema = schema or schema_map(detect_flavor(con))
    tmp = quote_ident(PROFILE_TABLE + "__building")
    final = quote_ident(PROFILE_TABLE)
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute(f"DROP TABLE IF EXISTS {tmp}")
        con.execute(f"CREATE TABLE {tmp} (item_key VARCHAR, rank INTEGER, value VARCHAR, n BIGINT, n_total BIGINT, "
                    "n_distinct BIGINT, n_numeric BIGINT, num_min DOUBLE, num_max DOUBLE, num_mean DOUBLE)")
        for sql, params in _profile_sql(schema):
            con.execute(f"INSERT INTO {tmp} {sql}", params)  # noqa: S608
        con.execute(f"DROP TABLE IF EXISTS {final}")
        con.execute(f"ALTER TABLE {tmp} RENAME TO {final}")
        con.execute("COMMIT")
        _PROFILE_PRESENT.clear()
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return int(con.execute(f"SELECT count(*) FROM {final}").fetchone()[0])  # noqa: S608


_MEMORY: dict[tuple[str, str, str], dict[str, list[tuple]]] = {}
#: database identity -> whether it carries the precomputed profile (checked once per process)
_PROFILE_PRESENT: dict[tuple[str, str], bool] = {}
_LOCK = threading.Lock()


def _has_profile_table(con: Any) -> bool:
    row = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ?",
                      [PROFILE_TABLE]).fetchone()
    return bool(row and row[0])


def _read_profile(con: Any, queries: list[tuple[str, list[Any]]]) -> dict[str, list[tuple]]:
    table: dict[str, list[tuple]] = {}
    for sql, params in queries:
        for r in con.execute(sql, params).fetchall():
            table.setdefault(r[0], []).append(r)
    for v in table.values():
        v.sort(key=lambda r: r[1])
    return table


def profile_for(con: Any, schema: SchemaMap, key: str, identity: tuple[str, str], *,
                table_present: bool | None = None) -> list[dict[str, Any]]:
    """Profile rows of one item key, rank order ([] when the item has no values).

    The whole profile is read once per database and process — from the precomputed table
    with one query, else computed from the event tables — and kept in memory: a note asks
    for hundreds of keys, and one indexed-less lookup per key cost seconds per note.
    """
    present = table_present if table_present is not None else _has_profile_table(con)
    cache_key = (*identity, schema.flavor if not present else PROFILE_TABLE)
    with _LOCK:
        table = _MEMORY.get(cache_key)
        if table is None:
            if present:
                table = _read_profile(con, [(f"SELECT {', '.join(_COLUMNS)} FROM {quote_ident(PROFILE_TABLE)}",  # noqa: S608
                                             [])])
            else:   # computed from the event tables: seconds at scale, so kept in the disk cache
                digest = code_digest(*source_files(sys.modules[__name__], access, items, schema_module))
                table = cached_value(con, identity[0], f"profile-{schema.flavor}", digest,
                                     lambda: _read_profile(con, list(_profile_sql(schema))), dict,
                                     lambda d: {str(k): [tuple(r) for r in v] for k, v in d.items()})
            _MEMORY.clear()
            _MEMORY[cache_key] = table
        rows = table.get(key, [])
    return [dict(zip(_COLUMNS, r, strict=True)) for r in rows]


def value_kind(n_total: int, n_numeric: int) -> str:
    """Numeric (≥ 90 % of values parse as numbers), mixed (≥ 30 %) or categorical."""
    if n_total <= 0:
        return "empty"
    share = n_numeric / n_total
    return "numeric" if share >= 0.9 else "mixed" if share >= 0.3 else "categorical"
