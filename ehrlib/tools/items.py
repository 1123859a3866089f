"""The item catalog: every searchable thing in a database, under one stable key.

A key is ``<logical table>:<item>``: ``labevents:51301``, ``chartevents:220045``,
``prescriptions:Vancomycin``, ``diagnoses_icd:5849``. Microbiology has three kinds of
item in one table, so its keys carry the column: ``microbiologyevents:org:ESCHERICHIA
COLI``, ``microbiologyevents:spec:BLOOD CULTURE``, ``microbiologyevents:ab:VANCOMYCIN``.
Keys are logical, so the same key names the same item on MIMIC-III, MIMIC-IV and the
perturbed layout. The catalog is read once per database.
"""
from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ehrlib.errors import EhrlibError
from ehrlib.schema import LOGICAL, SchemaMap

__all__ = ["CatalogItem", "Catalog", "build_catalog", "ItemKeyError", "split_key", "MICRO_KINDS",
           "SEARCHABLE_TABLES", "patient_item_keys", "patient_items_and_tables"]

#: microbiology key kind -> logical column
MICRO_KINDS = {"spec": "spec_type_desc", "org": "org_name", "ab": "ab_name"}
#: event tables a patient-scoped tool may read (emar_detail has neither admission nor time)
SEARCHABLE_TABLES = tuple(t for t in (
    "chartevents", "labevents", "prescriptions", "inputevents_mv", "inputevents_cv", "outputevents",
    "procedureevents_mv", "microbiologyevents", "diagnoses_icd", "procedures_icd", "emar"))
_INT_ITEM_TABLES = {"chartevents", "labevents", "inputevents_mv", "inputevents_cv", "outputevents",
                    "procedureevents_mv"}


class ItemKeyError(EhrlibError, ValueError):
    """An item key that names no table or item of this database."""


@dataclass(frozen=True, slots=True)
class CatalogItem:
    """One item a tool can name: a table, a column and a label."""
    key: str
    table: str
    column: str            # logical column the item value lives in
    value: Any             # the raw item value (int itemid, code or name)
    label: str
    category: str | None = None
    unit: str | None = None
    aliases: tuple[str, ...] = ()
    fluid: str | None = None   # d_labitems.fluid (criteria distinguish blood from urine)

    def as_dict(self) -> dict[str, Any]:
        """The item as shown to a model."""
        return {"key": self.key, "table": self.table, "label": self.label, "category": self.category,
                "unit": self.unit}


T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Catalog:
    """Every item of the database, by key."""
    items: tuple[CatalogItem, ...]
    by_key: dict[str, CatalogItem]
    _derived: dict[Hashable, Any] = field(default_factory=dict, compare=False, repr=False)

    def get(self, key: str) -> CatalogItem | None:
        """The item with this key, or None."""
        return self.by_key.get(key)

    def derived(self, key: Hashable, build: Callable[[], T]) -> T:
        """A value computed from the catalog alone (the items a criterion test covers), built
        on first use and kept with this catalog: the catalog never changes, so the value never
        goes stale, and a new database's catalog starts empty. ``build`` must be pure; two
        threads may both build it, and the first result is kept.
        """
        try:
            return self._derived[key]
        except KeyError:
            return self._derived.setdefault(key, build())


def split_key(key: str, schema: SchemaMap) -> tuple[str, str, str]:
    """(table, logical column, raw item text) of a key; raises ItemKeyError."""
    table, sep, rest = key.partition(":")
    table = table.strip().lower()
    if not sep or table not in SEARCHABLE_TABLES or not schema.has(table):
        raise ItemKeyError(f"{key!r} is not an item key of this database (keys look like 'labevents:51301')")
    if table == "microbiologyevents":
        kind, sep, rest = rest.partition(":")
        if not sep or kind not in MICRO_KINDS:
            raise ItemKeyError(f"microbiology keys look like 'microbiologyevents:org:<organism>', "
                               f"':spec:<specimen>' or ':ab:<antibiotic>'; got {key!r}")
        return table, MICRO_KINDS[kind], rest
    return table, LOGICAL[table].roles["item"], rest


def make_key(table: str, column: str, value: Any) -> str:
    if table == "microbiologyevents":
        kind = next(k for k, c in MICRO_KINDS.items() if c == column)
        return f"{table}:{kind}:{value}"
    return f"{table}:{value}"


def _linksto_map(schema: SchemaMap) -> dict[str, str]:
    """Physical or logical table name (lower case) -> logical table, for d_items.linksto."""
    out: dict[str, str] = {}
    for logical, phys in schema.tables.items():
        out[logical.lower()] = logical
        out[phys.name.lower()] = logical
    out.setdefault("inputevents", "inputevents_mv")
    out.setdefault("procedureevents", "procedureevents_mv")
    return out


def _clean(v: Any) -> str | None:
    if v is None:
        return None
    s = str(v).strip()
    return s or None


def _rows(con: Any, sql: str) -> Iterable[tuple]:
    return con.execute(sql).fetchall()


def build_catalog(con: Any, schema: SchemaMap) -> Catalog:
    """Every item of every dictionary, plus name-keyed drugs and microbiology names."""
    items: list[CatalogItem] = []
    seen: set[str] = set()

    def add(table: str, column: str, value: Any, label: str | None, category: str | None = None,
            unit: str | None = None, aliases: Iterable[str | None] = (), fluid: str | None = None) -> None:
        if value is None or not label or not schema.has(table):
            return
        key = make_key(table, column, value)
        if key in seen:
            return
        seen.add(key)
        al = tuple(a for a in (_clean(x) for x in aliases) if a and a.lower() != label.lower())
        items.append(CatalogItem(key, table, column, value, label, category, unit, al, fluid))

    if schema.has("d_items"):
        links = _linksto_map(schema)
        cols: tuple[str, ...] = ("itemid", "label", "abbreviation", "category", "unitname", "linksto")
        sql = f"SELECT {schema.select_list('d_items', cols)} FROM {schema.table('d_items').ref}"  # noqa: S608
        for itemid, label, abbr, cat, unit, linksto in _rows(con, sql):
            table = links.get((linksto or "chartevents").strip().lower())
            if table in _INT_ITEM_TABLES:
                add(table, "itemid", int(itemid), _clean(label), _clean(cat), _clean(unit), [abbr])
    if schema.has("d_labitems"):
        cols = ("itemid", "label", "fluid", "category")
        sql = f"SELECT {schema.select_list('d_labitems', cols)} FROM {schema.table('d_labitems').ref}"  # noqa: S608
        for itemid, label, fluid, cat in _rows(con, sql):
            category = " / ".join(x for x in (_clean(cat), _clean(fluid)) if x) or None
            add("labevents", "itemid", int(itemid), _clean(label), category, fluid=_clean(fluid))
    for dictionary, events in (("d_icd_diagnoses", "diagnoses_icd"), ("d_icd_procedures", "procedures_icd")):
        if schema.has(dictionary):
            cols = ("icd9_code", "long_title", "short_title")
            sql = f"SELECT {schema.select_list(dictionary, cols)} FROM {schema.table(dictionary).ref}"  # noqa: S608
            for code, long_title, short_title in _rows(con, sql):
                code = _clean(code)
                add(events, "icd9_code", code, _clean(long_title) or _clean(short_title),
                    "diagnosis" if events == "diagnoses_icd" else "procedure", None, [short_title])
    if schema.has("prescriptions"):
        pt = schema.table("prescriptions")
        generic = pt.expr("drug_name_generic")
        sql = (f"SELECT {pt.col('drug')}, min({generic}), min({pt.expr('route')}), min({pt.expr('dose_unit_rx')}) "  # noqa: S608
               f"FROM {pt.ref} WHERE {pt.col('drug')} IS NOT NULL GROUP BY 1")
        for drug, gen, _route, unit in _rows(con, sql):
            add("prescriptions", "drug", drug, _clean(drug), "medication order", _clean(unit), [gen])
    if schema.has("emar"):
        pt = schema.table("emar")
        sql = f"SELECT DISTINCT {pt.col('medication')} FROM {pt.ref} WHERE {pt.col('medication')} IS NOT NULL"  # noqa: S608
        for (med,) in _rows(con, sql):
            add("emar", "medication", med, _clean(med), "medication administration")
    if schema.has("microbiologyevents"):
        pt = schema.table("microbiologyevents")
        for kind, column in MICRO_KINDS.items():
            category = {"spec": "microbiology specimen", "org": "organism", "ab": "antibiotic susceptibility"}[kind]
            sql = f"SELECT DISTINCT {pt.col(column)} FROM {pt.ref} WHERE {pt.col(column)} IS NOT NULL"  # noqa: S608
            for (name,) in _rows(con, sql):
                add("microbiologyevents", column, name, _clean(name), category)
    return Catalog(tuple(items), {i.key: i for i in items})


def patient_items_and_tables(con: Any, schema: SchemaMap, subject_id: int) -> tuple[frozenset[str], frozenset[str]]:
    """(keys of every item this patient has a record of, tables holding any of their rows); one query."""
    parts: list[str] = []
    params: list[Any] = []
    for table in SEARCHABLE_TABLES:
        if not schema.has(table):
            continue
        pt = schema.table(table)
        columns = list(MICRO_KINDS.values()) if table == "microbiologyevents" else [LOGICAL[table].roles["item"]]
        for column in columns:
            if not pt.has(column):
                continue
            prefix = make_key(table, column, "")
            # rows with a NULL item still count for the table (a timeline shows them)
            parts.append(f"SELECT DISTINCT ? AS t, ? || CAST({pt.col(column)} AS VARCHAR) AS k "  # noqa: S608
                         f"FROM {pt.ref} WHERE {pt.col('subject_id')} = ?")
            params += [table, prefix, int(subject_id)]
    if not parts:
        return frozenset(), frozenset()
    rows = con.execute(" UNION ALL ".join(parts), params).fetchall()
    return frozenset(k for _, k in rows if k is not None), frozenset(t for t, _ in rows)


def patient_item_keys(con: Any, schema: SchemaMap, subject_id: int) -> frozenset[str]:
    """Keys of every item this patient has at least one record of."""
    return patient_items_and_tables(con, schema, subject_id)[0]
