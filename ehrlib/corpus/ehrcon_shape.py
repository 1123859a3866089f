"""Write a labelled corpus in the shape of EHRCon's PhysioNet release.

The EHRCon release is credentialed, so tests, notebooks and benchmarks cannot ship it.
This writer produces a folder of the same shape from notes and gold labels we may use
(hand-written notes about real MIMIC-III demo admissions): ``original/`` and
``processed/``, each with ``test/`` and ``valid/`` (4:1 by notes), each with
``discharge/``, ``nursing/``, ``physician/`` holding ``<type>_<split>.csv`` (NOTEEVENTS
columns plus ADMITTIME, as CheckEHR reads them) and ``<type>_label/<ROW_ID>.pkl`` (the
label dict of EHRCon's README: entity -> data, position, source, entity_type,
all_queries). ``processed/`` keeps only the lines that carry a label, as the release's
processed notes drop text the tables cannot confirm, so its positions differ.

What EHRCon's label format cannot hold is lost on the way: inconsistency types beyond the
inconsistent column names, evidence row ids, reasoning annotations.
"""
from __future__ import annotations

import csv
import hashlib
import os
import pickle
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ehrlib.corpus.records import GoldEntity, Note

__all__ = ["FOLDER_OF", "assign_splits", "write_ehrcon_release"]

#: note type -> the release's folder name
FOLDER_OF = {"discharge_summary": "discharge", "nursing": "nursing", "physician": "physician"}
_CATEGORY = {"discharge_summary": "Discharge summary", "nursing": "Nursing", "physician": "Physician "}
_LABEL_COLUMN = {"prescriptions": "drug", "diagnoses_icd": "long_title", "procedures_icd": "long_title",
                 "microbiologyevents": "org_name"}
_COLUMNS = ["ROW_ID", "SUBJECT_ID", "HADM_ID", "CHARTDATE", "CHARTTIME", "STORETIME", "CATEGORY", "DESCRIPTION",
            "CGID", "ISERROR", "TEXT", "ADMITTIME"]


def assign_splits(note_ids: Sequence[str], seed: int = 0) -> dict[str, str]:
    """Each note's split, 4 test : 1 valid, by a seeded hash order (stable under reordering)."""
    order = sorted(note_ids, key=lambda n: hashlib.sha256(f"{seed}:{n}".encode()).hexdigest())
    n_valid = max(1, round(len(order) / 5)) if len(order) > 1 else 0
    return {n: ("valid" if i < n_valid else "test") for i, n in enumerate(order)}


def _numeric(value: str | None) -> bool:
    try:
        float(str(value))
    except ValueError:
        return False
    return True


def _label_text(g: GoldEntity) -> tuple[str, int]:
    if g.label == "consistent" or g.inconsistency is None:
        return "consistent", 0
    if g.inconsistency.kind == "missing":
        return "the entity does not exist in the table", 1
    cols = g.inconsistency.columns or ("value",)
    return " and ".join(f"'{c}'" for c in cols) + (" are inconsistency" if len(cols) > 1 else " is inconsistency"), \
        len(cols)


def _entity(g: GoldEntity, position: int) -> dict[str, Any]:
    """One gold entity as an EHRCon label entry."""
    label, errors = _label_text(g)
    data = []
    for item in g.items or ():
        cols: dict[str, Any] = {_LABEL_COLUMN.get(item.table, "label"): item.label}
        if item.itemid is not None:
            cols["itemid"] = item.itemid
        if g.value is not None:
            cols["valuenum" if _numeric(g.value) else "value"] = float(g.value) if _numeric(g.value) else g.value
        if g.time is not None and g.time.start:
            if g.time.end and g.time.end != g.time.start:
                cols.update(starttime=g.time.start, endtime=g.time.end)
            else:
                cols["charttime"] = g.time.start
        data.append({item.table: cols, "label": label, "errors": errors})
    if not data:
        data.append({"label": label, "errors": errors})
    kind = "2" if g.value is None else "1" if _numeric(g.value) else "3"
    return {g.entity: {"data": data, "position": str(position), "source": "mimic", "entity_type": kind,
                       "all_queries": []}}


def _processed(note: Note, gold: Sequence[GoldEntity]) -> tuple[str, dict[int, int]]:
    """The note with only its labelled lines, and old line -> new line."""
    keep = sorted({g.line for g in gold})
    lines = note.lines
    return "\n".join(lines[i] for i in keep), {old: new for new, old in enumerate(keep)}


def write_ehrcon_release(notes: Sequence[Note], gold: Sequence[GoldEntity], root: str | os.PathLike[str], *,
                         admit_times: Mapping[int, str] | None = None, line_base: int = 0, seed: int = 0,
                         first_row_id: int = 1000) -> dict[str, int]:
    """Write the release under ``root``; returns note_id -> the ROW_ID it was given.

    ``line_base`` is the number the files give a note's first line (the release does
    not say; 0 and 1 both occur in such files), ``admit_times`` the ADMITTIME per hadm_id.
    """
    root = Path(root)
    notes = [n for n in notes if n.note_type in FOLDER_OF]
    row_id = {n.note_id: first_row_id + i for i, n in enumerate(notes)}
    split = assign_splits([n.note_id for n in notes], seed)
    by_note: dict[str, list[GoldEntity]] = {}
    for g in gold:
        by_note.setdefault(g.note_id, []).append(g)
    for variant in ("original", "processed"):
        rows: dict[Path, list[dict[str, Any]]] = {}
        for n in notes:
            folder = root / variant / split[n.note_id] / FOLDER_OF[n.note_type]
            labels = by_note.get(n.note_id, [])
            text, where = (n.text, {g.line: g.line for g in labels}) if variant == "original" else \
                _processed(n, labels)
            rid = row_id[n.note_id]
            rows.setdefault(folder / f"{folder.name}_{split[n.note_id]}.csv", []).append({
                "ROW_ID": rid, "SUBJECT_ID": n.subject_id, "HADM_ID": n.hadm_id, "CHARTDATE": n.chartdate,
                "CHARTTIME": n.charttime or "", "STORETIME": "", "CATEGORY": _CATEGORY[n.note_type],
                "DESCRIPTION": "Report", "CGID": "", "ISERROR": "", "TEXT": text,
                "ADMITTIME": (admit_times or {}).get(n.hadm_id, f"{n.chartdate} 00:00:00")})
            label_dir = folder / f"{folder.name}_label"
            label_dir.mkdir(parents=True, exist_ok=True)
            entries = [_entity(g, where[g.line] + line_base) for g in labels]
            with (label_dir / f"{rid}.pkl").open("wb") as fh:
                pickle.dump({rid: entries}, fh, protocol=4)
        for path, file_rows in rows.items():
            with path.open("w", newline="", encoding="utf-8") as fh:
                writer = csv.DictWriter(fh, _COLUMNS)
                writer.writeheader()
                writer.writerows(file_rows)
    return row_id
