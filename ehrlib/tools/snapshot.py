"""One read of an admission: each event table's rows for the note's admission, in memory.

A note's verification asks the patient-scoped tools about the same admission hundreds of
times (an item here, a day there); each question as SQL scans the table again. The
snapshot reads a table's rows once, on the first tool call that touches the table, and
answers the later calls from memory with the rows, order and types the SQL gives
(:func:`ehrlib.tools.access.query_tables` stays the reference; the tools' results and
traces do not change).

What a table's snapshot holds: the patient's rows whose time falls in the admission's
span (admission to discharge, widened by :data:`MARGIN` each way; interval tables: rows
overlapping the span), or for the time-less billing tables the admission's rows. A call
is answered from memory only when every table it reads is held and its window lies in
the span; otherwise it runs as SQL, as do value conditions the snapshot cannot evaluate
exactly as DuckDB does (text conditions on non-ASCII text, whose lower-casing differs).

One snapshot (and the patient's item keys, :meth:`AdmissionSnapshot.memo`) serves every
toolset of the admission alive at the same time (a note's threads each bind their own
toolset to their own cursor): :func:`snapshot_for` shares it by database, layout,
admission and bound, and keeps the last :data:`KEEP_RECENT` admissions' snapshots after
their last toolset goes (the calibrator's read of a note's admission follows its
verification; :func:`release_recent` lets them go).

The bound: at most ``max_rows`` rows per admission over all its tables (default
:data:`DEFAULT_MAX_ROWS`, about 40-50 MB of Python rows; ``$EHRLIB_SNAPSHOT_ROWS``
overrides it, ``0`` turns the snapshot off). A table that does not fit is not held: its
calls fall back to SQL.
"""
from __future__ import annotations

import bisect
import collections
import datetime as _dt
import math
import operator
import os
import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import duckdb

from ehrlib.errors import ConfigError
from ehrlib.tools.access import TableReader, ValueCondition
from ehrlib.tools.context import PatientContext
from ehrlib.tools.timespec import TimeWindow

__all__ = ["AdmissionSnapshot", "snapshot_for", "release_recent", "KEEP_RECENT", "ROWS_ENV", "DEFAULT_MAX_ROWS",
           "MARGIN", "max_rows_setting", "predicate"]

ROWS_ENV = "EHRLIB_SNAPSHOT_ROWS"
#: rows per admission, all tables together (the MIMIC-III demo's largest admission has ~97 k)
DEFAULT_MAX_ROWS = 100_000
#: the span held around the stay: a week each way covers what notes look back to (the days
#: before admission, widened by a day) at the cost of the few rows a patient has there
MARGIN = _dt.timedelta(days=7)
_INT_TYPES = frozenset({"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT",
                        "UINTEGER", "UBIGINT"})
_N_BASE = 8        # tbl, row_id, t, t_end, item, txt, num, unit (TableReader.select_sql)
#: a held row leaves out the table name (the first of those): positions in what is held
_ROW_ID, _T, _END, _ITEM, _TXT, _NUM = 0, 1, 2, 3, 4, 5
_NO_EXTRAS: dict[str, Any] = {}
#: value operators that read the text column (ehrlib.tools.env.value_condition)
_TEXT_OPS = frozenset({"equals_text", "equals_number", "contains"})

Predicate = Callable[[Any, Any], bool]


def max_rows_setting(value: int | None = None) -> int:
    """The bound: ``value`` if given, else ``$EHRLIB_SNAPSHOT_ROWS``, else the default."""
    if value is None:
        raw = os.environ.get(ROWS_ENV, "").strip()
        if not raw:
            return DEFAULT_MAX_ROWS
        try:
            value = int(raw)
        except ValueError:
            raise ConfigError(f"{ROWS_ENV} must be a whole number of rows (0 turns the snapshot off), "
                              f"got {raw[:40]!r}") from None
    if value < 0:
        raise ConfigError(f"{ROWS_ENV} must be 0 or more rows, got {value}")
    return int(value)


def _ordered(num: Any) -> Any:
    """DuckDB orders NaN above every number; as +inf it compares so against finite bounds."""
    return math.inf if isinstance(num, float) and math.isnan(num) else num


def _fold(text: str) -> str:
    """DuckDB's ``lower`` on ASCII text (callers check the text is ASCII)."""
    return text.lower()


def predicate(cond: ValueCondition) -> Predicate | None:
    """``cond`` as a Python test of (num, txt), true exactly where the SQL is true; None when
    it cannot be evaluated exactly (an unknown operator, a non-ASCII text operand).
    """
    p = cond.params
    op = cond.op
    if op in ("more", "less", "at_least", "at_most"):
        x = p[0]
        cmp: Callable[[Any, Any], bool] = {"more": operator.gt, "less": operator.lt, "at_least": operator.ge,
                                           "at_most": operator.le}[op]
        return lambda num, txt: num is not None and cmp(_ordered(num), x)
    if op == "between":
        lo, hi = p
        return lambda num, txt: num is not None and lo <= _ordered(num) <= hi
    if op in _TEXT_OPS:
        text = p[-1]
        if not text.isascii():
            return None
        needle = _fold(text)
        if op == "contains":
            return lambda num, txt: txt is not None and needle in _fold(txt)
        same_text: Predicate = lambda num, txt: txt is not None and _fold(txt.strip(" ")) == needle  # noqa: E731
        if op == "equals_text":
            return same_text
        x = p[0]
        return lambda num, txt: (num is not None and _ordered(num) == x) or same_text(num, txt)
    return None


@dataclass(frozen=True, slots=True)
class _Held:
    """One table's rows in the snapshot, ordered as SQL orders them (time NULLS LAST, row id)."""
    reader: TableReader
    recs: list[tuple[Any, ...]]    # the single-table select's columns but the table name, then item
                                   # columns, then extras as text
    by_item: dict[str, dict[Any, list[int]]]   # item column -> value -> row positions
    item_types: dict[str, type]                # the Python type an item filter must have
    times: list[Any] | None                    # point tables: each row's time, for bisection
    #: where the item's text comes from when the read left it NULL: the position of the raw
    #: item column (an integer or text column, whose VARCHAR cast ``str`` reproduces)
    item_from: int | None = None
    _ascii: list[bool] = field(default_factory=list)
    #: (position, packed) -> the row dict ``TableReader.row`` makes of it, built once: a note
    #: reads the same rows many times, and every caller gets its own copy (tools add keys)
    _dicts: dict[tuple[int, bool], dict[str, Any]] = field(default_factory=dict)

    @property
    def width(self) -> int:
        """Columns of the single-table select (query_tables with one table) a held row keeps."""
        return _N_BASE - 1 + len(self.reader.extras)

    def ascii_text(self) -> bool:
        """Whether every text value is ASCII (computed once, when a text condition first asks)."""
        if not self._ascii:
            self._ascii.append(all(rec[_TXT] is None or rec[_TXT].isascii() for rec in self.recs))
        return self._ascii[0]

    def positions(self, window: TimeWindow | None, item_column: str | None, item_value: Any) -> list[int]:
        """Row positions in ``window`` with the item, in order (the SQL WHERE of access.TableReader)."""
        r = self.reader
        if item_column is not None:
            cand: Sequence[int] = self.by_item[item_column].get(item_value, ())
        elif self.times is not None and window is not None:
            cand = range(bisect.bisect_left(self.times, window.start), bisect.bisect_left(self.times, window.end))
        else:
            cand = range(len(self.recs))
        if window is None or r.time_kind == "none":
            return list(cand)
        out = []
        if r.time_kind == "point":
            for i in cand:
                t = self.recs[i][_T]
                if t is not None and window.start <= t < window.end:
                    out.append(i)
        else:
            for i in cand:
                t, t_end = self.recs[i][_T], self.recs[i][_END]
                if t is not None and t < window.end and (t if t_end is None else t_end) >= window.start:
                    out.append(i)
        return out

    def rec(self, i: int, packed: bool) -> tuple[Any, ...]:
        """Row ``i`` as ``query_tables`` fetches it (extras as columns, or as one map)."""
        base = self.recs[i]
        if self.item_from is not None:
            raw = base[self.item_from]
            base = (*base[:_ITEM], None if raw is None else str(raw), *base[_ITEM + 1:])
        table = self.reader.table
        extras = self.reader.extras
        if not packed:
            return (table, *base[:self.width])
        if not extras:
            return (table, *base[:_N_BASE - 1], _NO_EXTRAS)
        texts = base[self.width + len(self.reader.item_columns):]
        return (table, *base[:_N_BASE - 1], dict(zip((n for n, _ in extras), texts, strict=True)))

    def row(self, i: int, packed: bool, hit: Any = None, marked: bool = False) -> dict[str, Any]:
        """Row ``i`` as the dict ``query_tables`` returns: a fresh copy of the one built on first use."""
        made = self._dicts.get((i, packed))
        if made is None:
            made = self._dicts.setdefault((i, packed), self.reader.row(self.rec(i, packed), packed))
        out = dict(made)
        out["extra"] = dict(made["extra"])
        if marked:
            out["matches"] = bool(hit)
        return out


def _sort_key(table: str, rec: tuple[Any, ...]) -> tuple[Any, ...]:
    """A held row's place in ``ORDER BY t NULLS LAST, tbl, row_id`` (DuckDB: NULLS LAST)."""
    t, row_id = rec[_T], rec[_ROW_ID]
    return (t is None, t if t is not None else _dt.datetime.min, table, row_id is None,
            row_id if row_id is not None else 0)


def _in_sql_order(table: str, recs: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """``recs`` ordered by time (NULLS LAST), then row id, as the SQL of ``query_tables`` orders one
    table. Event tables are stored in patient, admission and time order (``ehrlib.db.finalize``)
    and DuckDB keeps that order in a plain scan, so the read comes back ordered nearly always:
    a check in C-level comparisons replaces an ORDER BY in the query, and anything else is sorted.
    """
    times = [rec[_T] for rec in recs]
    ids = [rec[_ROW_ID] for rec in recs]
    if None not in ids and (None not in times or times.count(None) == len(times)):
        keys = list(zip(times, ids, strict=True)) if None not in times else ids
        if all(map(operator.le, keys, keys[1:])):
            return recs
    return sorted(recs, key=lambda rec: _sort_key(table, rec))


class AdmissionSnapshot:
    """The event rows of one admission, loaded table by table on first use; see the module doc."""

    def __init__(self, patient: PatientContext, max_rows: int | None = None) -> None:
        self.patient = patient
        self.max_rows = max_rows_setting(max_rows)
        end = patient.dischtime or patient.admittime
        self.span = (patient.admittime - MARGIN, end + MARGIN)
        self._held: dict[str, _Held | None] = {}
        self._used = 0
        self._lock = threading.Lock()
        self._stats_lock = threading.Lock()
        self.stats: dict[str, int] = {}
        self._memo: dict[str, Any] = {}
        self._memo_lock = threading.Lock()

    def memo(self, name: str, build: Callable[[], Any]) -> Any:
        """A value about this admission built once for every toolset sharing the snapshot
        (the patient's item keys: one query per admission, not per thread).
        """
        with self._memo_lock:
            if name not in self._memo:
                self._memo[name] = build()
            return self._memo[name]

    def _count(self, what: str, n: int = 1) -> None:
        with self._stats_lock:
            self.stats[what] = self.stats.get(what, 0) + n

    def rows(self, con: Any, readers: Sequence[TableReader], window: TimeWindow | None, *,
             item_column: str | None = None,
             item_value: Any = None, condition: ValueCondition | None = None, numeric_only: bool = False,
             mark: bool = False) -> list[dict[str, Any]] | None:
        """What ``query_tables(con, ...)`` returns for these arguments, or None: ask SQL.

        ``con`` (the calling thread's cursor) reads a table the snapshot does not hold yet.
        """
        if self.max_rows <= 0:
            return None
        test = predicate(condition) if condition is not None else None
        if condition is not None and test is None:
            self._count("sql: condition")
            return None
        if item_column is not None and (isinstance(item_value, bool) or not isinstance(item_value, (int, str))):
            self._count("sql: item value type")
            return None
        packed = len(readers) > 1
        marked = condition is not None and mark
        picked: list[tuple[_Held, list[int]]] = []
        for r in readers:
            timeless = r.time_kind == "none" or window is None
            if timeless and r.admission is None:
                continue                                   # the SQL reads nothing of this table either
            if timeless and r.time_kind != "none":
                self._count("sql: no window")             # admission scope on a timed table: not held
                return None
            if not timeless and not (self.span[0] <= window.start and window.end <= self.span[1]):  # type: ignore[union-attr]
                self._count("sql: window outside span")
                return None
            held = self._table(con, r)
            if held is None:
                self._count("sql: table not held")
                return None
            if item_column is not None and held.item_types.get(item_column) is not type(item_value):
                self._count("sql: item value type")
                return None
            if condition is not None and condition.op in _TEXT_OPS and not held.ascii_text():
                self._count("sql: non-ASCII text")
                return None
            picked.append((held, held.positions(window, item_column, item_value)))
        out: list[tuple[_Held, int, Any]] = []
        for held, positions in picked:
            for i in positions:
                base = held.recs[i]
                num, txt = base[_NUM], base[_TXT]
                if numeric_only and num is None:
                    continue
                hit = test(num, txt) if test is not None else None
                if test is not None and not mark and not hit:
                    continue
                out.append((held, i, hit))
        if len(picked) > 1:
            out.sort(key=lambda sel: _sort_key(sel[0].reader.table, sel[0].recs[sel[1]]))
        self._count("answered")
        return [held.row(i, packed, hit, marked) for held, i, hit in out]

    def _table(self, con: Any, r: TableReader) -> _Held | None:
        with self._lock:
            if r.table not in self._held:
                self._held[r.table] = self._load(con, r)
            return self._held[r.table]

    def _load(self, con: Any, r: TableReader) -> _Held | None:
        """Read one table's rows for the admission, or None when they cannot be held."""
        if r.row_id == "NULL" or (r.time_kind == "interval" and r.end_expr is None):
            self._count("not held: no row order" if r.row_id == "NULL" else "not held: no interval end")
            return None
        room = self.max_rows - self._used
        if room <= 0:
            self._count("not held: over the bound")
            return None
        p = self.patient
        scope = None if r.time_kind == "none" else TimeWindow(self.span[0], self.span[1], "", "snapshot span")
        where = r.where_sql(p.subject_id, p.hadm_id, scope, None, None)
        if where is None:
            return None
        n_rec = _N_BASE - 1 + len(r.extras)
        # the item's text is made from the raw item column when that is among the columns read
        item_k = next((k for k, (_, phys) in enumerate(r.item_columns) if phys == r.item), None)
        try:
            types, got = self._read(con, r, where, room, item_k is None)
            if item_k is not None and types[n_rec + item_k] not in _INT_TYPES and types[n_rec + item_k] != "VARCHAR":
                types, got = self._read(con, r, where, room, True)   # str() might not be DuckDB's cast
                item_k = None
                self._count("read again: item text cast in SQL")
        except duckdb.Error:     # e.g. a value that does not convert: the calls meet it (or not) as SQL
            self._count("not held: read failed")
            return None
        if len(got) > room:
            self._count("not held: over the bound")
            return None
        self._used += len(got)
        self._count("tables loaded")
        self._count("rows loaded", len(got))
        got = _in_sql_order(r.table, got)
        by_item: dict[str, dict[Any, list[int]]] = {}
        item_types: dict[str, type] = {}
        for k, (logical, _) in enumerate(r.item_columns):
            index: dict[Any, list[int]] = {}
            for i, row in enumerate(got):
                v = row[n_rec + k]
                if v is not None:
                    index.setdefault(v, []).append(i)
            by_item[logical] = index
            kind = types[n_rec + k]
            item_types[logical] = int if kind in _INT_TYPES else str if kind == "VARCHAR" else type(None)
        times = [rec[_T] for rec in got] if r.time_kind == "point" else None
        return _Held(r, got, by_item, item_types, times, item_from=None if item_k is None else n_rec + item_k)

    @staticmethod
    def _read(con: Any, r: TableReader, where: tuple[str, list[Any]], room: int,
              item_text: bool) -> tuple[list[str], list[tuple[Any, ...]]]:
        """(column types, rows) of the admission's rows of one table, at most ``room + 1``.

        No ORDER BY: the rows come in storage order and are checked (:func:`_in_sql_order`).
        """
        items = [f"{phys} AS i_{k}" for k, (_, phys) in enumerate(r.item_columns)]
        texts = [f"CAST({expr} AS VARCHAR) AS v_{k}" for k, (_, expr) in enumerate(r.extras)]
        select = r.select_sql(False, with_table=False, item_text=item_text)
        sql = f"SELECT {', '.join([select, *items, *texts])} FROM {r.ref} WHERE {where[0]} LIMIT ?"  # noqa: S608 - schema identifiers
        cur = con.execute(sql, [*where[1], room + 1])
        types = [str(d[1]) for d in cur.description]
        return types, cur.fetchall()


_SHARED: weakref.WeakValueDictionary[tuple[Any, ...], AdmissionSnapshot] = weakref.WeakValueDictionary()
#: the last admissions' snapshots, kept alive after their toolsets go: the calibrator reads a
#: note's admission again right after its verification, and a corpus's next note is often
#: on the same admission (at most this many admissions' rows, each under its bound, stay
#: in memory; an in-memory database's snapshot is never kept, its identity names a connection)
KEEP_RECENT = 2
_RECENT: collections.deque[AdmissionSnapshot] = collections.deque(maxlen=KEEP_RECENT)
_SHARED_LOCK = threading.Lock()


def release_recent() -> None:
    """Let go of the kept snapshots (:data:`KEEP_RECENT`): the memory back, and the next
    toolset of an admission starts from a fresh read (tests that count a snapshot's loads).
    """
    with _SHARED_LOCK:
        _RECENT.clear()


def snapshot_for(identity: tuple[str, str], flavor: str, patient: PatientContext,
                 max_rows: int | None = None) -> AdmissionSnapshot:
    """The admission's snapshot, shared with the toolsets of the same admission alive now.

    ``identity`` is the database's (path, build stamp) (``ehrlib.tools.lexical.database_identity``);
    an in-memory database's stamp names its connection, so it shares nothing.
    """
    bound = max_rows_setting(max_rows)
    key = (identity, flavor, patient.subject_id, patient.hadm_id, patient.admittime, patient.dischtime, bound)
    with _SHARED_LOCK:
        snap = _SHARED.get(key)
        if snap is None:
            snap = AdmissionSnapshot(patient, bound)
            _SHARED[key] = snap
        if identity[0] and not any(s is snap for s in _RECENT):
            _RECENT.append(snap)
        return snap
