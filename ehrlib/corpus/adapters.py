"""Adapters from the two published corpus formats to our Note / GoldEntity records.

EHRCon (Kwon et al. 2024, PhysioNet ``ehrcon-consistency-of-notes``), as its README
documents it: per note type a CSV of notes (``ROW_ID, HADM_ID, TEXT, ADMITTIME,
CHARTDATE, CATEGORY`` ...) and a label pickle keyed by the note's ROW_ID; each value is a
list of ``{entity: {"data": [{table: {column: value}, "label": "...", "errors": n}],
"position": "4", "source": "mimic", "entity_type": "1", "all_queries": [...]}}``. The
``label`` text names the inconsistent columns (``"'charttime' and 'valuenum' are
inconsistency"``); ``entity_type`` is 1 (numeric value), 2 (existence only), 3 (string).

EHR-ReasonCon-style JSONL: one entity a line with the fields of the paper's Appendix N
(``commonsense_medical_none``, ``medical_knowledge_source``, ``consistency_check_path``,
``evidence_row_ids``) next to the note id, entity, line and label. The release format is
shown only as a figure, so the reader accepts the spellings that figure and EHRCon use
(``row_id``/``note_id``, ``position``/``line``, c/m/n or words, a path as a list or an
``A -> B`` string) and fails with file:line:field on anything else.

Pickles can execute code when loaded: label files are read through
:mod:`ehrlib.corpus.pickles` (plain data only, and with a root, only files inside it).
"""
from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ehrlib.corpus.io import iter_jsonl, read_notes
from ehrlib.corpus.pickles import load_label_pickle
from ehrlib.corpus.records import (
    GoldEntity,
    Inconsistency,
    ItemRef,
    Note,
    NoteType,
    RecordError,
    RowRef,
    TimeSpan,
)

__all__ = [
    "read_ehrcon_notes",
    "read_ehrcon_labels",
    "read_reasoncon",
    "note_type_from_category",
    "parse_ehrcon_label",
]

_TIME_COLUMNS = ("charttime", "chartdate", "starttime", "endtime", "startdate", "enddate", "storetime")
_VALUE_COLUMNS = ("valuenum", "value", "amount", "rate", "dose_val_rx", "org_name", "interpretation")
_LABEL_COLUMNS = ("label", "drug", "spec_type_desc", "org_name", "ab_name", "long_title", "short_title")
_TYPE_OF = {c: "time" for c in _TIME_COLUMNS} | {c: "value" for c in (
    "valuenum", "value", "amount", "rate", "dose_val_rx", "dose_unit_rx", "valueuom", "amountuom", "rateuom")}


def note_type_from_category(category: str | None) -> NoteType:
    """MIMIC NOTEEVENTS.CATEGORY -> note type ('Physician ' has a trailing space in MIMIC)."""
    c = (category or "").strip().lower()
    if c.startswith("discharge"):
        return "discharge_summary"
    if c.startswith("physician"):
        return "physician"
    if c.startswith("nursing"):
        return "nursing"
    if c.startswith("radiology"):
        return "radiology"
    raise RecordError(f"field 'CATEGORY': unsupported note category {category!r}")


def _date(value: Any) -> str:
    return str(value).strip()[:10] if value not in (None, "") else ""


def read_ehrcon_notes(path: str | Path) -> list[Note]:
    """The notes CSV of one EHRCon split (any note type; CATEGORY decides)."""
    path = Path(path)
    if not path.exists():
        raise RecordError(f"{path}: file not found")
    try:
        return _ehrcon_notes(path)
    except csv.Error as exc:
        raise RecordError(f"{path}: CSV error ({exc})") from None
    except UnicodeDecodeError as exc:
        raise RecordError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _ehrcon_notes(path: Path) -> list[Note]:
    notes = []
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh, strict=True)  # a quote left open (a truncated file) is an error
        cols = {c.upper(): c for c in reader.fieldnames or ()}
        for need in ("ROW_ID", "HADM_ID", "TEXT", "CATEGORY"):
            if need not in cols:
                raise RecordError(f"{path}: missing column {need!r} (have {sorted(cols)})")
        for i, row in enumerate(reader, start=2):  # line 1 is the header
            get = lambda k: row.get(cols.get(k, k))  # noqa: E731, B023 - used within this row only
            try:
                chartdate = _date(get("CHARTDATE")) or _date(get("CHARTTIME")) or _date(get("ADMITTIME"))
                notes.append(Note(
                    # a missing id is float(None): TypeError, reported below with the line
                    note_id=str(int(float(get("ROW_ID")))),  # type: ignore[arg-type]
                    subject_id=int(float(get("SUBJECT_ID") or 0)),
                    hadm_id=int(float(get("HADM_ID"))),  # type: ignore[arg-type]
                    note_type=note_type_from_category(get("CATEGORY")),
                    chartdate=chartdate, text=get("TEXT") or "", charttime=(get("CHARTTIME") or None)))
            except (TypeError, ValueError) as exc:
                raise RecordError(f"{path}:{i}: bad ROW_ID/HADM_ID/SUBJECT_ID ({exc})") from None
            except RecordError as exc:
                raise RecordError(f"{path}:{i}: {exc}") from None
    return notes


def parse_ehrcon_label(text: Any, errors: Any = None) -> tuple[str, Inconsistency | None]:
    """EHRCon's label text -> (label, inconsistency)."""
    s = str(text or "").strip().lower()
    n_err = int(errors) if str(errors or "").strip().lstrip("-").isdigit() else None
    if not s or (s.startswith("consisten") and "inconsisten" not in s) or (n_err == 0 and "inconsisten" not in s):
        return "consistent", None
    if re.search(r"not exist|no record|missing|no data|not in the (table|database)", s):
        return "inconsistent", Inconsistency("missing")
    columns = tuple(dict.fromkeys(c.lower() for c in re.findall(r"'([A-Za-z_0-9]+)'", s)))
    types = {_TYPE_OF.get(c, "other") for c in columns}
    kind = "time" if types == {"time"} else "value" if types == {"value"} else \
        ("time" if "time" in types else "value" if "value" in types else "other")
    return "inconsistent", Inconsistency("column", columns, kind)  # type: ignore[arg-type]


def _flatten_data(data: Any, where: str) -> tuple[list[tuple[str, dict]], list[tuple[Any, Any]]]:
    """(table, {column: value}) pairs and (label, errors) pairs of one entity's ``data``."""
    if not isinstance(data, list):
        raise RecordError(f"{where}: field 'data' must be a list")
    tables, labels = [], []
    for part in data:
        if not isinstance(part, Mapping):
            raise RecordError(f"{where}: field 'data' entries must be objects")
        for key, value in part.items():
            if key in ("label", "errors"):
                continue
            if not isinstance(value, Mapping):
                raise RecordError(f"{where}: field 'data.{key}' must map columns to values")
            tables.append((str(key).lower(), {str(c).lower(): v for c, v in value.items()}))
        if "label" in part or "errors" in part:
            labels.append((part.get("label"), part.get("errors")))
    return tables, labels


def _ehrcon_entity(row_id: str, k: int, name: str, body: Mapping[str, Any], where: str,
                   line_offset: int) -> GoldEntity:
    if not isinstance(body, Mapping):
        raise RecordError(f"{where}: entity {name!r} must be an object")
    tables, labels = _flatten_data(body.get("data", []), where)
    if "label" in body or "errors" in body:
        labels.append((body.get("label"), body.get("errors")))
    verdicts = [parse_ehrcon_label(t, e) for t, e in labels] or [("consistent", None)]
    bad = [inc for lab, inc in verdicts if lab == "inconsistent" and inc is not None]  # (always has one)
    label, inconsistency = ("inconsistent", bad[0]) if bad else ("consistent", None)
    if len(bad) > 1 and all(b.kind == "column" for b in bad):
        merged = tuple(dict.fromkeys(c for b in bad for c in b.columns))
        inconsistency = Inconsistency("column", merged, bad[0].type)
    try:
        line = int(str(body.get("position", "")).strip()) + line_offset
    except ValueError:
        raise RecordError(f"{where}: field 'position' must be a line number, got {body.get('position')!r}") from None
    items: list[ItemRef] = []
    columns: list[str] = []
    claim: dict[str, Any] = {}
    value: str | None = None
    times: list[str] = []
    for table, cols in tables:
        label_text = next((str(cols[c]) for c in _LABEL_COLUMNS if cols.get(c) not in (None, "")), name)
        items.append(ItemRef(table, label_text, cols.get("itemid")))
        columns += [c for c in cols if c not in columns]
        claim.update(cols)
        if value is None:
            value = next((str(cols[c]) for c in _VALUE_COLUMNS if cols.get(c) not in (None, "")), None)
        times += [str(cols[c]) for c in _TIME_COLUMNS if cols.get(c) not in (None, "")]
    claim["entity_type"] = str(body.get("entity_type", ""))
    if body.get("all_queries"):
        claim["all_queries"] = body["all_queries"]
    return GoldEntity(
        note_id=row_id, entity_id=f"{row_id}-e{k:03d}", line=max(line, 0), entity=str(name), label=label,  # type: ignore[arg-type]
        items=tuple(dict.fromkeys(items)), columns=tuple(columns), value=value,
        time=TimeSpan(min(times), max(times)) if times else None, inconsistency=inconsistency,
        claim=json.loads(json.dumps(claim, default=str)))


def read_ehrcon_labels(path: str | Path | Mapping[Any, Any], *, line_offset: int = 0,
                       root: str | Path | None = None) -> list[GoldEntity]:
    """One EHRCon label pickle (or the dict it holds) -> gold entities.

    ``line_offset`` shifts ``position`` to our 0-based line numbers when a release counts
    from 1 (pass -1); the default keeps the number as written. With ``root``, the pickle
    must lie inside that folder (links resolved).
    """
    if isinstance(path, Mapping):
        labels, where = path, "labels"
    else:
        where = str(path)
        if not Path(path).exists():
            raise RecordError(f"{path}: file not found")
        labels = load_label_pickle(path, root)  # plain data only; see ehrlib.corpus.pickles
    if not isinstance(labels, Mapping):
        raise RecordError(f"{where}: not EHRCon's label shape: expected a dict keyed by note ROW_ID, "
                          f"got {type(labels).__name__}")
    out: list[GoldEntity] = []
    for row_id, entities in labels.items():
        rid = str(int(float(row_id))) if str(row_id).replace(".", "", 1).isdigit() else str(row_id)
        if isinstance(entities, Mapping):
            entities = [{k: v} for k, v in entities.items()]
        if not isinstance(entities, list):
            raise RecordError(f"{where}: note {rid}: expected a list of entities")
        k = 0
        for entry in entities:
            if not isinstance(entry, Mapping):
                raise RecordError(f"{where}: note {rid}: entity entries must be objects")
            for name, body in entry.items():
                out.append(_ehrcon_entity(rid, k, name, body, f"{where}: note {rid} entity {k}", line_offset))
                k += 1
    return out


# --- EHR-ReasonCon-style JSONL ------------------------------------------------------------

_REASONING = {"c": "commonsense", "m": "medical", "n": "none", "commonsense": "commonsense",
              "medical": "medical", "none": "none", "": "none"}


def _first(obj: Mapping[str, Any], *keys: str) -> Any:
    for k in keys:
        if k in obj and obj[k] not in (None, ""):
            return obj[k]
    return None


def _row_refs(value: Any, default_table: str | None, where: str) -> tuple[RowRef, ...]:
    if value in (None, ""):
        return ()
    if isinstance(value, Mapping):  # {table: [row ids]}
        return tuple(RowRef(str(t).lower(), r) for t, rows in value.items()
                     for r in (rows if isinstance(rows, list) else [rows]))
    if isinstance(value, (str, int)):
        value = [v.strip() for v in str(value).split(",") if v.strip()]
    refs = []
    for v in value:
        if isinstance(v, Mapping):
            refs.append(RowRef(str(v.get("table", default_table or "")).lower(),
                               v.get("row_id")))  # type: ignore[arg-type]  # kept as the file gives it
        elif isinstance(v, str) and ":" in v:
            t, r = v.split(":", 1)
            refs.append(RowRef(t.strip().lower(), int(r) if r.strip().isdigit() else r.strip()))
        else:
            if not default_table:
                raise RecordError(f"{where}: field 'evidence_row_ids': bare row id {v!r} needs a 'table' field")
            refs.append(RowRef(default_table, int(v) if str(v).isdigit() else v))
    return tuple(refs)


def _path(value: Any) -> tuple[str, ...]:
    if value in (None, ""):
        return ()
    if isinstance(value, str):
        return tuple(p.strip() for p in re.split(r"->|→|,|>", value) if p.strip())
    return tuple(str(v).strip() for v in value)


def _reasoncon_entity(obj: dict[str, Any], k: int, where: str) -> GoldEntity:
    note_id = _first(obj, "note_id", "row_id", "ROW_ID", "Row_id")
    if note_id is None:
        raise RecordError(f"{where}: missing field 'note_id' (or 'row_id')")
    note_id = str(note_id)
    entity = _first(obj, "entity", "entity_text")
    if entity is None:
        raise RecordError(f"{where}: missing field 'entity'")
    try:
        line = int(str(_first(obj, "line", "position")).strip())
    except (TypeError, ValueError):
        raise RecordError(f"{where}: field 'line'/'position' must be a line number") from None
    raw_label = str(_first(obj, "label", "consistency") or "").strip().lower()
    if raw_label in ("consistent", "0", "true", "c"):
        label = "consistent"
    elif raw_label in ("inconsistent", "1", "false", "i"):
        label = "inconsistent"
    else:
        raise RecordError(f"{where}: field 'label' must be consistent|inconsistent, got {raw_label!r}")
    reasoning_raw = str(_first(obj, "commonsense_medical_none", "reasoning") or "").strip().lower()
    if reasoning_raw not in _REASONING:
        raise RecordError(f"{where}: field 'commonsense_medical_none' must be c|m|n, got {reasoning_raw!r}")
    table = _first(obj, "table", "table_name")
    table = str(table).lower() if table else None
    columns = obj.get("columns") or obj.get("column") or ()
    columns = tuple(str(c).lower() for c in ([columns] if isinstance(columns, str) else columns))
    inconsistency = None
    if label == "inconsistent":
        kind = str(_first(obj, "inconsistency_kind", "inconsistency_type", "error_kind") or "").lower()
        bad_cols = obj.get("inconsistent_columns") or ()
        bad_cols = tuple(str(c).lower() for c in ([bad_cols] if isinstance(bad_cols, str) else bad_cols))
        if kind in ("missing", "omission", "no_evidence") or (not kind and not bad_cols):
            inconsistency = Inconsistency("missing")
        else:
            etype = str(_first(obj, "error_type", "column_type") or "").lower() or None
            if etype not in (None, "time", "value", "interpretation", "trend", "other"):
                raise RecordError(f"{where}: field 'error_type': unknown type {etype!r}")
            if etype is None and bad_cols:
                parsed = parse_ehrcon_label(" ".join(f"'{c}'" for c in bad_cols) + " inconsistency")[1]
                etype = parsed.type if parsed is not None else None
            inconsistency = Inconsistency("column", bad_cols, etype)  # type: ignore[arg-type]
    items = obj.get("items")
    if items:
        item_refs = tuple(ItemRef(str(i.get("table", table or "")).lower(), str(i.get("label", entity)),
                                  i.get("itemid")) for i in items)
    elif table:
        item_refs = (ItemRef(table, str(_first(obj, "item_label", "label_name") or entity), obj.get("itemid")),)
    else:
        item_refs = ()
    time = obj.get("time")
    span = TimeSpan(time.get("start"), time.get("end")) if isinstance(time, Mapping) else None
    return GoldEntity(
        note_id=note_id, entity_id=str(_first(obj, "entity_id", "id") or f"{note_id}-e{k:03d}"), line=line,
        entity=str(entity), label=label, items=item_refs, columns=columns,  # type: ignore[arg-type]
        value=None if obj.get("value") is None else str(obj["value"]), time=span, inconsistency=inconsistency,
        evidence_row_ids=_row_refs(obj.get("evidence_row_ids"), table, where),
        reasoning=_REASONING[reasoning_raw],  # type: ignore[arg-type]
        medical_knowledge_source=_first(obj, "medical_knowledge_source"),
        check_path=_path(_first(obj, "consistency_check_path", "check_path")))


def read_reasoncon(path: str | Path, notes: str | Path | Iterable[Note] | None = None, *, check_lines: bool = True
                   ) -> tuple[list[Note], list[GoldEntity]]:
    """EHR-ReasonCon-style entity JSONL (+ notes from an EHRCon-style CSV, our notes.jsonl,
    or records) -> (notes, gold). Lines carrying a ``text`` field are read as notes.
    ``check_lines=False`` leaves line numbers unchecked, for a caller that first decides
    whether the file counts lines from 0 or 1 (:mod:`ehrlib.corpus.line_base`).
    """
    gold: list[GoldEntity] = []
    inline: dict[str, Note] = {}
    counters: dict[str, int] = {}
    for lineno, obj in iter_jsonl(path):
        where = f"{path}:{lineno}"
        if "text" in obj and "entity" not in obj:
            try:
                nid = str(_first(obj, "note_id", "row_id", "ROW_ID"))
                inline[nid] = Note(nid, int(obj.get("subject_id") or 0), int(_first(obj, "hadm_id", "HADM_ID")),
                                   note_type_from_category(str(_first(obj, "note_type", "category", "CATEGORY")
                                                               ).replace("_summary", "")),
                                   _date(_first(obj, "chartdate", "CHARTDATE")), obj["text"],
                                   obj.get("charttime"))
            except (TypeError, ValueError) as exc:
                raise RecordError(f"{where}: bad note record ({exc})") from None
            except RecordError as exc:
                raise RecordError(f"{where}: {exc}") from None
            continue
        nid = str(_first(obj, "note_id", "row_id", "ROW_ID", "Row_id"))
        k = counters.get(nid, 0)
        counters[nid] = k + 1
        gold.append(_reasoncon_entity(obj, k, where))
    if notes is None:
        note_list = list(inline.values())
    elif isinstance(notes, (str, Path)):
        p = Path(notes)
        if p.suffix == ".csv":
            note_list = read_ehrcon_notes(p)
        else:
            note_list = read_notes(p)
    else:
        note_list = list(notes)
    by_id = {n.note_id: n for n in note_list}
    for g in gold:
        if by_id and g.note_id not in by_id:
            raise RecordError(f"{path}: entity {g.entity_id}: field 'note_id': unknown note {g.note_id!r}")
        if check_lines and g.note_id in by_id and g.line >= len(by_id[g.note_id].lines):
            raise RecordError(f"{path}: entity {g.entity_id}: field 'line': {g.line} is past the end of the note")
    return note_list, gold
