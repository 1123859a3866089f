"""The state a toolset binds: connection, layout, patient, caches, and argument checks.

Tools report expected failures (unknown item, unreadable date, bad operator) by raising
:class:`ToolArgumentError`; the toolset turns it into a result whose error a model can
act on. Anything else is a bug and propagates.
"""
from __future__ import annotations

import math
import threading
from typing import Any

from ehrlib.errors import EhrlibError
from ehrlib.schema import LOGICAL, SchemaMap
from ehrlib.tools.access import TableReader, ValueCondition, query_tables
from ehrlib.tools.context import PatientContext
from ehrlib.tools.items import (
    SEARCHABLE_TABLES,
    Catalog,
    CatalogItem,
    ItemKeyError,
    make_key,
    patient_items_and_tables,
    split_key,
)
from ehrlib.tools.lexical import LexicalIndex, catalog_for, database_identity, lexical_index
from ehrlib.tools.profile import _PROFILE_PRESENT, PROFILE_TABLE
from ehrlib.tools.snapshot import snapshot_for
from ehrlib.tools.timespec import TimeSpecError, TimeWindow, parse_time_spec

__all__ = ["ToolEnv", "ToolArgumentError", "OPERATORS", "value_condition"]

#: Canonical value operators and the words a model may use for them.
OPERATORS = ("more", "less", "between", "at_least", "at_most", "equals", "contains")
_OPERATOR_ALIASES = {
    ">": "more", "gt": "more", "greater": "more", "greater than": "more", "more than": "more", "above": "more",
    "over": "more", "higher": "more", "higher than": "more", "exceeds": "more",
    "<": "less", "lt": "less", "less than": "less", "below": "less", "under": "less", "lower": "less",
    "lower than": "less", ">=": "at_least", "=>": "at_least", "ge": "at_least", "at least": "at_least",
    "<=": "at_most", "=<": "at_most", "le": "at_most", "at most": "at_most",
    "=": "equals", "==": "equals", "eq": "equals", "is": "equals", "equal": "equals", "equal to": "equals",
    "includes": "contains", "include": "contains", "like": "contains", "has": "contains",
    "range": "between", "in range": "between", "within": "between",
}
_MAX_TEXT = 200
#: Resolution accepts a lexical match only above this score.
MIN_RESOLVE_SCORE = 0.35


class ToolArgumentError(EhrlibError, ValueError):
    """An argument the tool cannot use; the message tells the model what would work."""


def _number(text: str, name: str) -> float:
    s = str(text).strip()
    if len(s) > 40:
        raise ToolArgumentError(f"{name} {s[:40]!r}... is not a number")
    try:
        x = float(s.replace(",", ""))
    except ValueError:
        raise ToolArgumentError(f"{name} must be a number for this operator, got {s!r}") from None
    if not math.isfinite(x) or abs(x) > 1e15:
        raise ToolArgumentError(f"{name} {s!r} is not a plausible finite number")
    return x


def value_condition(operator: str, value: str, value2: str = "") -> ValueCondition | None:
    """The SQL condition for an operator; None when no operator is given."""
    op = " ".join(str(operator or "").strip().lower().replace("_", " ").split())
    if not op:
        if str(value or "").strip():
            raise ToolArgumentError(f"a value was given without an operator; use one of {', '.join(OPERATORS)}")
        return None
    op = op.replace(" ", "_") if op.replace(" ", "_") in OPERATORS else _OPERATOR_ALIASES.get(op, op)
    if op not in OPERATORS:
        raise ToolArgumentError(f"unknown operator {str(operator)[:40]!r}; use one of {', '.join(OPERATORS)}")
    if op in ("equals", "contains"):
        text = str(value or "").strip()
        if not text:
            raise ToolArgumentError(f"operator {op} needs a value")
        if len(text) > _MAX_TEXT:
            raise ToolArgumentError("value is too long")
        if op == "equals":
            try:
                x = _number(text, "value")
            except ToolArgumentError:
                return ValueCondition("lower(trim(txt)) = lower(?)", (text,), f"value equals {text!r}",
                                      "equals_text")
            return ValueCondition("(num = ? OR lower(trim(txt)) = lower(?))", (x, text), f"value equals {text}",
                                  "equals_number")
        return ValueCondition("contains(lower(txt), lower(?))", (text,), f"value contains {text!r}", "contains")
    x = _number(value, "value")
    if op == "between":
        y = _number(value2, "value2")
        lo, hi = min(x, y), max(x, y)
        return ValueCondition("num BETWEEN ? AND ?", (lo, hi), f"value between {lo:g} and {hi:g}", "between")
    sql = {"more": "num > ?", "less": "num < ?", "at_least": "num >= ?", "at_most": "num <= ?"}[op]
    words = {"more": "more than", "less": "less than", "at_least": "at least", "at_most": "at most"}[op]
    return ValueCondition(sql, (x,), f"value {words} {x:g}", op)


class ToolEnv:
    """Connection + layout + patient, with per-database and per-patient caches.

    ``snapshot_rows`` bounds the admission snapshot (``ehrlib.tools.snapshot``; None = the
    ``$EHRLIB_SNAPSHOT_ROWS`` setting or its default, 0 = every read as SQL).
    """

    def __init__(self, con: Any, schema: SchemaMap, patient: PatientContext, *,
                 snapshot_rows: int | None = None) -> None:
        self.con = con
        self.schema = schema
        self.patient = patient
        self.identity = database_identity(con)
        self.snapshot = snapshot_for(self.identity, schema.flavor, patient, snapshot_rows)
        self._lock = threading.Lock()
        self._index: LexicalIndex | None = None
        self._catalog: Catalog | None = None
        self._patient_keys: frozenset[str] | None = None
        self._patient_tables: frozenset[str] = frozenset()
        self._has_profile: bool | None = None

    def read(self, readers: list[TableReader], window: TimeWindow | None, *, item_column: str | None = None,
             item_value: Any = None, condition: ValueCondition | None = None, numeric_only: bool = False,
             mark: bool = False) -> list[dict[str, Any]]:
        """The patient's rows of these tables (``access.query_tables``), from the admission
        snapshot when it holds them, else as SQL; the same rows either way.
        """
        kw: dict[str, Any] = dict(item_column=item_column, item_value=item_value, condition=condition,
                                  numeric_only=numeric_only, mark=mark)
        rows = self.snapshot.rows(self.con, readers, window, **kw)
        if rows is None:
            rows = query_tables(self.con, readers, self.patient.subject_id, self.patient.hadm_id, window, **kw)
        return rows

    @property
    def catalog(self) -> Catalog:
        """Every item under its key (cheap; the n-gram index is built only for searches)."""
        if self._catalog is None:
            self._catalog = (self._index.catalog if self._index is not None
                             else catalog_for(self.con, self.schema, self.identity))
        return self._catalog

    @property
    def index(self) -> LexicalIndex:
        """The lexical index of the catalogue, built on first use."""
        if self._index is None:
            self._index = lexical_index(self.con, self.schema, self.identity)
            self._catalog = self._index.catalog
        return self._index

    @property
    def patient_keys(self) -> frozenset[str]:
        """Item keys this patient has records of (computed once per toolset)."""
        return self._patient_data()[0]

    @property
    def patient_tables(self) -> frozenset[str]:
        """Tables holding any row of this patient: the only ones a patient-scoped read needs."""
        return self._patient_data()[1]

    def _patient_data(self) -> tuple[frozenset[str], frozenset[str]]:
        with self._lock:
            if self._patient_keys is None:
                self._patient_keys, self._patient_tables = self.snapshot.memo(
                    "patient items", lambda: patient_items_and_tables(self.con, self.schema, self.patient.subject_id))
            return self._patient_keys, self._patient_tables

    @property
    def has_profile_table(self) -> bool:
        """Whether the database holds the precomputed item profile."""
        if self._has_profile is None:
            known = _PROFILE_PRESENT.get(self.identity)
            if known is None:
                row = self.con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = ?",
                                       [PROFILE_TABLE]).fetchone()
                known = _PROFILE_PRESENT[self.identity] = bool(row and row[0])
            self._has_profile = known
        return self._has_profile

    def window(self, spec: str | None) -> TimeWindow:
        """A time spec resolved against the patient's stay; ToolArgumentError when unreadable."""
        try:
            return parse_time_spec(spec, self.patient)
        except TimeSpecError as exc:
            raise ToolArgumentError(str(exc)) from None

    def table_arg(self, table: str, *, allow_all: bool = True) -> list[str]:
        """Logical tables named by a table argument ("all" = every searchable table present)."""
        t = str(table or "all").strip().lower()
        present = [x for x in SEARCHABLE_TABLES if self.schema.has(x)]
        if allow_all and t in ("all", "", "*", "any"):
            return present
        if t in present:
            return [t]
        raise ToolArgumentError(f"unknown table {str(table)[:60]!r}; use one of: {', '.join(present)}"
                                + (" or 'all'" if allow_all else ""))

    def resolve(self, item: str) -> tuple[CatalogItem, str | None]:
        """An item key or a label -> catalog item, and a note when a label was resolved."""
        text = " ".join(str(item or "").split())
        if not text:
            raise ToolArgumentError("item is empty; pass an item key from Lexical_Search or an item name")
        if len(text) > _MAX_TEXT:
            raise ToolArgumentError("item is too long; pass an item key such as 'labevents:50912'")
        head = text.partition(":")[0].strip().lower()
        if head in LOGICAL:
            try:
                table, column, raw = split_key(text, self.schema)
            except ItemKeyError as exc:
                raise ToolArgumentError(str(exc)) from None
            key = make_key(table, column, raw.strip())
            found = self.catalog.get(key)
            if found is None:
                raise ToolArgumentError(f"unknown item key {text[:80]!r}; find keys with Lexical_Search")
            return found, None
        matches = self.index.search(text, k=10)
        if not matches or matches[0].score < MIN_RESOLVE_SCORE:
            raise ToolArgumentError(f"no item matches {text[:80]!r}; try Lexical_Search or Semantic_Search "
                                    "with another wording")
        best = matches[0]
        keys = self.patient_keys
        for m in matches:  # prefer an item this patient has, among near-equal matches
            if m.score >= best.score - 0.1 and m.item.key in keys:
                best = m
                break
        return best.item, f"resolved {text!r} to {best.item.key} ({best.item.label}, score {best.score:.2f})"

    def label_of(self, table: str, row: dict[str, Any]) -> str:
        """The item label of a row."""
        if row.get("item") is None:
            return ""
        column = "spec_type_desc" if table == "microbiologyevents" else LOGICAL[table].roles["item"]
        item = self.catalog.get(make_key(table, column, row["item"]))
        return item.label if item else str(row["item"])
