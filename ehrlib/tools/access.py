"""Patient-scoped reads of one logical event table, in SQL built from ehrlib.schema.

Every query filters on the bound patient's ``subject_id`` and binds every value;
identifiers come from the schema map, quoted. Point tables match a window on their
time column; interval tables (inputevents_mv, procedureevents_mv, prescriptions) on
overlap (starts before the window ends and ends after it starts); microbiology uses
charttime, falling back to chartdate; the ICD tables have no time, so they are read for
the admission ("admission scope").
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ehrlib.schema import LOGICAL, SchemaMap
from ehrlib.tools.result import jsonable
from ehrlib.tools.timespec import TimeWindow

__all__ = ["TableReader", "ValueCondition", "reader"]

#: extra columns shown with a row, by role, in this order
_EXTRA_ROLES = ("flag", "rate", "rate_unit", "route", "location", "organism", "antibiotic", "interpretation")


@dataclass(frozen=True, slots=True)
class ValueCondition:
    """A validated value filter: SQL over the ``num``/``txt`` aliases, and its parameters."""

    sql: str
    params: tuple[Any, ...]
    text: str


@dataclass(frozen=True, slots=True)
class TableReader:
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

    def select_sql(self) -> str:
        cols = [f"{self.row_id} AS row_id", f"{self.time_expr or 'NULL'} AS t", f"{self.end_expr or 'NULL'} AS t_end",
                f"{self.item or 'NULL'} AS item", f"{self.txt_expr} AS txt", f"{self.num_expr} AS num",
                f"{self.unit_expr} AS unit"]
        cols += [f"{expr} AS x_{name}" for name, expr in self.extras]
        return ", ".join(cols)

    def query(self, con: Any, subject_id: int, hadm_id: int, window: TimeWindow | None, *,
              item_column: str | None = None, item_value: Any = None,
              condition: ValueCondition | None = None, numeric_only: bool = False) -> list[dict[str, Any]]:
        """Rows of this patient in the window (admission scope for time-less tables)."""
        where = [f"{self.subject} = ?"]
        params: list[Any] = [int(subject_id)]
        if self.time_kind == "none" or window is None:
            if self.admission is None:
                return []
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
        inner = f"SELECT {self.select_sql()} FROM {self.ref} WHERE {' AND '.join(where)}"  # noqa: S608
        outer = f"SELECT * FROM ({inner}) AS r"  # noqa: S608
        conds = []
        if numeric_only:
            conds.append("num IS NOT NULL")
        if condition is not None:
            conds.append(f"({condition.sql})")
            params += list(condition.params)
        if conds:
            outer += " WHERE " + " AND ".join(conds)
        outer += " ORDER BY t NULLS LAST, row_id"
        rows = con.execute(outer, params).fetchall()
        return [self._row(r) for r in rows]

    def _row(self, r: Sequence[Any]) -> dict[str, Any]:
        row_id, t, t_end, item, txt, num, unit, *extra = r
        out: dict[str, Any] = {"table": self.table, "row_id": jsonable(row_id), "time": jsonable(t)}
        if self.time_kind == "interval":
            out["end"] = jsonable(t_end)
        out["item"] = jsonable(item)
        out["value"] = jsonable(txt)
        out["valuenum"] = jsonable(num)
        out["unit"] = jsonable(unit)
        out["extra"] = {name: jsonable(v) for (name, _), v in zip(self.extras, extra) if v is not None}
        return out


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


