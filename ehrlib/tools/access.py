"""Patient-scoped reads of one logical event table, in SQL built from ehrlib.schema.

Every query filters on the bound patient's ``subject_id`` and binds every value;
identifiers come from the schema map, quoted. Point tables match a window on their
time column; interval tables (inputevents_mv, procedureevents_mv, prescriptions) on
overlap (starts before the window ends and ends after it starts); microbiology uses
charttime, falling back to chartdate; the ICD tables have no time, so they are read for
the admission ("admission scope").
"""
from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ehrlib.schema import LOGICAL, SchemaMap
from ehrlib.tools.result import jsonable
from ehrlib.tools.timespec import TimeWindow

__all__ = ["TableReader", "ValueCondition", "reader", "query_tables"]

#: extra columns shown with a row, by role, in this order
_EXTRA_ROLES = ("flag", "rate", "rate_unit", "weight", "route", "location", "organism", "antibiotic", "interpretation")


@dataclass(frozen=True, slots=True)
class ValueCondition:
    """A validated value filter: SQL over the ``num``/``txt`` aliases, and its parameters.

    ``op`` names the test (``more``, ``between``, ``equals_text``, ...) so an in-memory
    reader (ehrlib.tools.snapshot) can apply it too; an empty ``op`` leaves it to SQL.
    """

    sql: str
    params: tuple[Any, ...]
    text: str
    op: str = ""


@dataclass(frozen=True, slots=True)
class TableReader:
    """How to read one event table: its columns as SQL expressions."""
    table: str
    ref: str
    subject: str
    admission: str | None
    item: str | None
    time_kind: str            # point | interval | none
    time_expr: str | None     # point time, or interval start
    end_expr: str | None
    num_expr: str
    txt_expr: str
    unit_expr: str
    extras: tuple[tuple[str, str], ...]
    item_columns: tuple[tuple[str, str], ...]   # (logical, quoted physical) a key may name
    row_id: str = "NULL"

    def select_sql(self, packed_extras: bool = True, with_table: bool = True, item_text: bool = True) -> str:
        """Uniform columns, so any set of tables can be read in one UNION ALL query.

        Extras (flag, rate, route, ...) differ per table: packed into one MAP for a union,
        or as plain columns for a single table (building a MAP per row costs ~2 ms a call).
        ``with_table=False`` leaves out the leading table-name column (a bound parameter), and
        ``item_text=False`` reads the item as NULL: a bulk reader that knows the table and
        fetches the raw item column anyway makes those strings itself, for the rows it shows.
        """
        if not packed_extras:
            extra = ", ".join(f"{expr} AS x_{name}" for name, expr in self.extras)
        elif self.extras:
            names = ", ".join(f"'{name}'" for name, _ in self.extras)   # role names: constants of this module
            values = ", ".join(f"CAST({expr} AS VARCHAR)" for _, expr in self.extras)
            extra = f"map([{names}], [{values}]) AS extra"
        else:
            extra = "CAST(map([], []) AS MAP(VARCHAR, VARCHAR)) AS extra"
        return ", ".join(x for x in [
            "CAST(? AS VARCHAR) AS tbl" if with_table else "", f"{self.row_id} AS row_id",
            f"CAST({self.time_expr or 'NULL'} AS TIMESTAMP) AS t",
            f"CAST({self.end_expr or 'NULL'} AS TIMESTAMP) AS t_end",
            f"CAST({(self.item if item_text else None) or 'NULL'} AS VARCHAR) AS item",
            f"CAST({self.txt_expr} AS VARCHAR) AS txt", f"CAST({self.num_expr} AS DOUBLE) AS num",
            f"CAST({self.unit_expr} AS VARCHAR) AS unit", extra] if x)

    def where_sql(self, subject_id: int, hadm_id: int, window: TimeWindow | None, item_column: str | None,
                  item_value: Any) -> tuple[str, list[Any]] | None:
        """This patient's rows in the window (admission scope for time-less tables); None = none possible."""
        where = [f"{self.subject} = ?"]
        params: list[Any] = [int(subject_id)]
        if self.time_kind == "none" or window is None:
            if self.admission is None:
                return None
            where.append(f"{self.admission} = ?")
            params.append(int(hadm_id))
        elif self.time_kind == "point":
            where.append(f"{self.time_expr} >= ? AND {self.time_expr} < ?")
            params += [window.start, window.end]
        else:
            where.append(f"{self.time_expr} < ? AND COALESCE({self.end_expr}, {self.time_expr}) >= ?")
            params += [window.end, window.start]
        if item_column is not None:
            where.append(f"{dict(self.item_columns)[item_column]} = ?")
            params.append(item_value)
        return " AND ".join(where), params

    def query(self, con: Any, subject_id: int, hadm_id: int, window: TimeWindow | None, *,
              item_column: str | None = None, item_value: Any = None,
              condition: ValueCondition | None = None, numeric_only: bool = False) -> list[dict[str, Any]]:
        """Rows of this patient in the window, ordered by time."""
        return query_tables(con, [self], subject_id, hadm_id, window, item_column=item_column,
                            item_value=item_value, condition=condition, numeric_only=numeric_only)

    def row(self, r: Sequence[Any], packed_extras: bool = True, marked: bool = False) -> dict[str, Any]:
        """A result row as the tools' row dict."""
        _, row_id, t, t_end, item, txt, num, unit, *rest = r
        hit = rest.pop() if marked else None
        if packed_extras:
            extra = rest[0]
        else:
            extra = dict(zip((name for name, _ in self.extras), rest, strict=False)) if self.extras else None
        out: dict[str, Any] = {"table": self.table, "row_id": jsonable(row_id), "time": _time_text(t)}
        if self.time_kind == "interval":
            out["end"] = _time_text(t_end)
        out["item"] = item
        out["value"] = txt
        out["valuenum"] = jsonable(num)
        out["unit"] = unit
        out["extra"] = {k: (_as_number(v) if k in _NUMERIC_EXTRAS and isinstance(v, str) else jsonable(v))
                        for k, v in extra.items() if v is not None} if extra else {}
        if marked:
            out["matches"] = bool(hit)
        return out


_NUMERIC_EXTRAS = {"rate"}
#: timestamp -> its text (``jsonable``): the rows of an admission share a few thousand chart
#: times (a set of vitals per time), and the text is most of what making a row costs
_TIME_TEXT: dict[Any, Any] = {}
_TIME_TEXTS_KEPT = 65_536


def _time_text(t: Any) -> Any:
    """``jsonable(t)``, kept for the naive timestamps seen last (an aware one equals another
    zone's same instant, whose text differs: not kept).
    """
    if type(t) is not _dt.datetime or t.tzinfo is not None:
        return jsonable(t)
    got = _TIME_TEXT.get(t)
    if got is None:
        if len(_TIME_TEXT) >= _TIME_TEXTS_KEPT:
            _TIME_TEXT.clear()
        got = _TIME_TEXT[t] = jsonable(t)
    return got


def _as_number(text: str) -> float | str:
    try:
        return float(text)
    except ValueError:
        return text


def query_tables(con: Any, readers: Sequence[TableReader], subject_id: int, hadm_id: int,
                 window: TimeWindow | None, *, item_column: str | None = None, item_value: Any = None,
                 condition: ValueCondition | None = None, numeric_only: bool = False,
                 mark: bool = False) -> list[dict[str, Any]]:
    """One query over several tables (UNION ALL), ordered by time.

    ``condition`` filters rows, or with ``mark=True`` only sets each row's ``matches``
    (so a caller learns both the matches and the window's total in one round trip).
    """
    parts: list[str] = []
    params: list[Any] = []
    by_name = {r.table: r for r in readers}
    packed = len(readers) > 1
    for r in readers:
        where = r.where_sql(subject_id, hadm_id, window, item_column, item_value)
        if where is None:
            continue
        parts.append(f"SELECT {r.select_sql(packed)} FROM {r.ref} WHERE {where[0]}")  # noqa: S608 - identifiers from schema
        params += [r.table, *where[1]]
    if not parts:
        return []
    cond_sql = f"({condition.sql})" if condition is not None else None
    filters = ["num IS NOT NULL"] if numeric_only else []
    if cond_sql and not mark:
        filters.append(cond_sql)
    marker = f", {cond_sql} AS hit" if cond_sql and mark else ""
    if packed:
        sql = f"SELECT *{marker} FROM ({' UNION ALL '.join(parts)}) AS r"  # noqa: S608
        if filters:
            sql += " WHERE " + " AND ".join(filters)
    else:
        # one table: no subquery (DuckDB lets WHERE name the select list's aliases)
        sql = parts[0].replace(" FROM ", f"{marker} FROM ", 1) if marker else parts[0]
        if filters:
            sql += " AND " + " AND ".join(filters)
    if condition is not None and mark:  # the marker precedes the FROM: its parameters bind right after the table name
        params = [params[0], *condition.params, *params[1:]] if not packed else [*condition.params, *params]
    elif condition is not None:
        params += list(condition.params)
    sql += " ORDER BY t NULLS LAST, tbl, row_id"
    return [by_name[rec[0]].row(rec, packed, bool(marker)) for rec in con.execute(sql, params).fetchall()]


_CACHE: dict[tuple[str, str], TableReader] = {}


def reader(schema: SchemaMap, table: str) -> TableReader:
    """The (cached) reader of one logical table in one physical layout."""
    key = (schema.flavor + str(id(schema)), table)
    if key in _CACHE:
        return _CACHE[key]
    lt = LOGICAL[table]
    pt = schema.table(table)
    roles = lt.roles

    def col(role: str) -> str | None:
        c = roles.get(role)
        return pt.col(c) if c and pt.has(c) else None

    time_kind = lt.time_kind
    end_expr = None
    if time_kind == "point":
        time_expr = f"CAST({col('time')} AS TIMESTAMP)" if col("time") else None
        if col("date"):
            time_expr = f"COALESCE({time_expr}, CAST({col('date')} AS TIMESTAMP))" if time_expr else \
                f"CAST({col('date')} AS TIMESTAMP)"
    elif time_kind == "interval":
        time_expr = f"CAST({col('start')} AS TIMESTAMP)"
        end_expr = f"CAST({col('end')} AS TIMESTAMP)" if col("end") else None
    else:
        time_expr = None
    if time_kind != "none" and time_expr is None:
        time_kind = "none"
    if col("valuenum"):
        num = f"TRY_CAST({col('valuenum')} AS DOUBLE)"
    elif col("amount"):
        num = f"TRY_CAST({col('amount')} AS DOUBLE)"
    elif col("dose"):
        num = f"TRY_CAST({col('dose')} AS DOUBLE)"
    else:
        num = "CAST(NULL AS DOUBLE)"
    if table == "microbiologyevents":
        txt = f"CAST({col('organism')} AS VARCHAR)"
    elif col("value") and roles.get("value") != roles.get("valuenum"):
        txt = f"CAST({col('value')} AS VARCHAR)"
    elif col("dose"):
        txt = f"CAST({col('dose')} AS VARCHAR)"
    else:
        txt = "CAST(NULL AS VARCHAR)"
    unit = col("unit") or col("amount_unit") or col("dose_unit") or "NULL"
    item_columns = ("spec_type_desc", "org_name", "ab_name") if table == "microbiologyevents" else (roles["item"],)
    extras = tuple((role, col(role)) for role in _EXTRA_ROLES
                   if col(role) and not (table == "microbiologyevents" and role == "organism"))
    r = TableReader(table=table, ref=pt.ref, subject=pt.col(roles["subject"]),
                    admission=col("admission"), item=col("item"), time_kind=time_kind, time_expr=time_expr,
                    end_expr=end_expr, num_expr=num, txt_expr=txt, unit_expr=unit,
                    extras=tuple((k, v) for k, v in extras if v),
                    item_columns=tuple((c, pt.col(c)) for c in item_columns if pt.has(c)),
                    row_id=col("row_id") or "NULL")
    _CACHE[key] = r
    return r


