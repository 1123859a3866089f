"""Import a labelled release (EHRCon, ReasonCon-style JSONL) into a corpus folder.

``ehrlib notes import ROOT OUT_DIR --format ehrcon|reasoncon`` writes ``notes.jsonl``,
``gold.jsonl`` and ``import.json`` through the same import target as the MIMIC notes
import (:mod:`ehrlib.corpus.import_target`: staging folder, lock, overwrite rules,
cleanup on signals), so a labelled corpus gets the same never-half-written guarantees.

One import is one variant of a release (EHRCon's ``original`` or ``processed``; both hold
the same ROW_IDs) and one split or both. Each note's split is recorded in import.json
(``splits``), which is what ``ehrlib run --split`` and ``ehrlib judge --split`` filter by.
Line positions are converted to the project's 0-based lines (:mod:`ehrlib.corpus.line_base`)
and the offset applied is recorded. Label pickles are read only from inside ROOT and only
as plain data (:mod:`ehrlib.corpus.pickles`).
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from ehrlib.corpus.adapters import read_ehrcon_notes, read_reasoncon
from ehrlib.corpus.ehrcon_release import find_layout, is_ehrcon_release, read_release
from ehrlib.corpus.import_target import IMPORT_FILE, write_import
from ehrlib.corpus.io import GOLD_FILE, NOTES_FILE, write_jsonl
from ehrlib.corpus.line_base import LineBase, detect_line_base, shift_lines
from ehrlib.corpus.pickles import inside
from ehrlib.corpus.records import NOTE_TYPES, PAPER_NOTE_TYPES, SCHEMA_VERSION, GoldEntity, Note
from ehrlib.corpus.splits import SPLITS, canonical_split, splits_record
from ehrlib.errors import ConfigError, DataError

__all__ = ["FORMATS", "RELEASE_FORMATS", "ReleaseImport", "detect_format", "import_release"]

FORMATS: tuple[str, ...] = ("mimic", "ehrcon", "reasoncon")
RELEASE_FORMATS: tuple[str, ...] = ("ehrcon", "reasoncon")
_RELEASE_NAME = {"ehrcon": "EHRCon (PhysioNet ehrcon-consistency-of-notes)", "reasoncon": "ReasonCon-style JSONL"}
_SPLIT_TOKEN = re.compile(r"(?:^|[^a-z])(test|valid|validation)(?:[^a-z]|$)")


def detect_format(src: Path) -> str:
    """``ehrcon`` for a release folder, ``reasoncon`` for a JSONL file, ``mimic`` for any
    other file (its header decides mimic3 / mimic4). A folder of JSONL files is named with
    ``--format reasoncon``: a corpus folder of our own also holds JSONL.
    """
    if src.is_dir():
        if is_ehrcon_release(src):
            return "ehrcon"
        raise ConfigError(f"{src} is a folder but no EHRCon release (no original/ or processed/ folder, nor test/ "
                          "or valid/ with discharge/, nursing/, physician/); a MIMIC notes CSV or a ReasonCon JSONL "
                          "file is named itself, a folder of ReasonCon JSONL files needs --format reasoncon")
    if src.name.lower().endswith((".jsonl", ".jsonl.gz")):
        return "reasoncon"
    return "mimic"


@dataclass(frozen=True, slots=True)
class ReleaseImport:
    """What one release import wrote."""

    out_dir: Path
    fmt: str
    variant: str | None
    split: str | None
    notes: int
    gold: int
    by_type: Mapping[str, int]
    by_split: Mapping[str, int]
    line_base: LineBase
    left_out: Mapping[str, int] = field(default_factory=dict)
    other_variants: tuple[str, ...] = ()
    seconds: float = 0.0

    def lines(self) -> list[str]:
        """The summary the CLI prints."""
        what = f"{_RELEASE_NAME[self.fmt]}" + (f", variant {self.variant}" if self.variant else "")
        splits = ", ".join(f"{k} {v}" for k, v in self.by_split.items()) or "no split assignment"
        out = [f"{self.out_dir}: {self.notes} notes, {self.gold} labels from {what} ({splits})",
               "  kept: " + (", ".join(f"{k} {v}" for k, v in self.by_type.items()) or "none")]
        lb = self.line_base
        why = "as --line-base says" if lb.chosen_by == "given" else lb.chosen_by
        out.append(f"  line positions count from {lb.base} ({why}: {lb.hits[lb.base]} of {lb.entities} labelled "
                   f"entities lie on their line that way, {lb.hits[1 - lb.base]} the other way); stored 0-based, "
                   f"offset {lb.offset:+d}")
        if self.left_out:
            out.append("  left out: " + ", ".join(f"{k} {v}" for k, v in self.left_out.items()))
        for other in self.other_variants:
            out.append(f"  the release also holds {other}/: import it with --variant {other} into another folder")
        return out


def _hash(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _file_split(path: Path, root: Path) -> str | None:
    rel = path.relative_to(root) if root != path else Path(path.name)
    found = {canonical_split(m) for part in rel.parts for m in _SPLIT_TOKEN.findall(part.lower())}
    return found.pop() if len(found) == 1 else None


def _read_reasoncon(src: Path, split: str | None) -> tuple[list[Note], list[GoldEntity], dict[str, str | None],
                                                            list[Path]]:
    """Notes, gold and each note's split (from test/valid in the file's path) of a JSONL
    file or a folder of them (notes inline, or from EHRCon-style CSVs in the folder).
    """
    root = src if src.is_dir() else src.parent
    files = [inside(p, root) for p in sorted(src.rglob("*.jsonl"))] if src.is_dir() else [inside(src, root)]
    if not files:
        raise ConfigError(f"{src}: no .jsonl files in it")
    csvs = [inside(p, root) for p in sorted(src.rglob("*.csv"))] if src.is_dir() else []
    csv_notes = [n for p in csvs for n in read_ehrcon_notes(p)]
    notes: dict[str, Note] = {}
    gold: list[GoldEntity] = []
    split_of: dict[str, str | None] = {}
    for path in files:
        file_notes, file_gold = read_reasoncon(path, csv_notes or None, check_lines=False)
        fsplit = _file_split(path, root.resolve())
        inline = [] if csv_notes else file_notes  # with CSV notes, every file "has" them all
        for n in inline:
            if n.note_id in notes:
                raise DataError(f"{path}: note {n.note_id} appears in more than one file")
            notes[n.note_id] = n
        for note_id in [*(g.note_id for g in file_gold), *(n.note_id for n in inline)]:
            split_of.setdefault(note_id, fsplit)
        gold += file_gold
    if csv_notes:
        notes = {n.note_id: n for n in csv_notes if n.note_id in split_of}
    if split is not None and not any(split_of.values()):
        raise ConfigError(f"{src}: no split assignment (no test/valid in its file or folder names), so --split "
                          f"{split} cannot be applied")
    return list(notes.values()), gold, split_of, [*files, *csvs]


def _admitted(notes: list[Note], admissions: Mapping[int, int] | None, left_out: Counter) -> list[Note]:
    """Notes of admissions in the database, a missing subject id filled from it."""
    if admissions is None:
        return notes
    kept = []
    for n in notes:
        owner = admissions.get(n.hadm_id)
        if owner is None:
            left_out["not_in_db"] += 1
        elif n.subject_id not in (0, owner):
            left_out["subject_mismatch"] += 1
        else:
            kept.append(n if n.subject_id else dataclasses.replace(n, subject_id=owner))
    return kept


def _numbered(gold: list[GoldEntity]) -> list[GoldEntity]:
    """Entity ids unique per corpus: EHRCon's numbering restarts in every label file."""
    seen: Counter = Counter()
    out = []
    for g in gold:
        out.append(dataclasses.replace(g, entity_id=f"{g.note_id}-e{seen[g.note_id]:03d}"))
        seen[g.note_id] += 1
    return out


def import_release(src: str | os.PathLike[str], out_dir: str | os.PathLike[str], *, fmt: str,
                   variant: str | None = None, split: str | None = None,
                   note_types: tuple[str, ...] = PAPER_NOTE_TYPES, admissions: Mapping[int, int] | None = None,
                   db: str | os.PathLike[str] | None = None, line_base: int | None = None,
                   overwrite: bool = False) -> ReleaseImport:
    """Convert one variant (and split) of a release into a corpus folder; see the module docs.

    ``line_base`` forces how the release counts lines (0 or 1); None detects it.
    """
    started = time.perf_counter()
    src, out = Path(src), Path(out_dir)
    if fmt not in RELEASE_FORMATS:
        raise ConfigError(f"--format must be one of {', '.join(RELEASE_FORMATS)} here, got {fmt!r}")
    bad = [t for t in note_types if t not in NOTE_TYPES]
    if bad or not note_types:
        raise ConfigError(f"note types must be among {', '.join(NOTE_TYPES)}, got {', '.join(bad) or 'none'}")
    if split is not None and canonical_split(split) is None:
        raise ConfigError(f"--split must be one of {', '.join(SPLITS)}, got {split!r}")
    split = canonical_split(split) if split is not None else None
    if variant is not None and fmt != "ehrcon":
        raise ConfigError("--variant applies to EHRCon releases (original | processed) only")
    if not src.exists():
        raise ConfigError(f"{src}: no such file or folder")
    left_out: Counter = Counter()
    others: tuple[str, ...] = ()
    if fmt == "ehrcon":
        layout = find_layout(src, variant=variant, split=split)
        data = read_release(layout, note_types)
        notes, gold, split_of, inputs = list(data.notes), list(data.gold), data.split_of, list(layout.files)
        left_out.update(data.left_out)
        variant, others = layout.variant, tuple(v for v in layout.variants if v != layout.variant)
        root = layout.root
    else:
        notes, gold, split_of, inputs = _read_reasoncon(src, split)
        root = (src if src.is_dir() else src.parent).resolve()
        for n in [n for n in notes if n.note_type not in note_types]:
            left_out[f"note_type:{n.note_type}"] += 1
        notes = [n for n in notes if n.note_type in note_types]
        if split is not None:
            left_out["other_split"] += sum(1 for n in notes if split_of.get(n.note_id) != split)
            notes = [n for n in notes if split_of.get(n.note_id) == split]
    notes = _admitted(notes, admissions, left_out)
    by_id = {n.note_id: n for n in notes}
    kept_gold = [g for g in gold if g.note_id in by_id]
    left_out["labels_of_left_out_notes"] += len(gold) - len(kept_gold)
    base = detect_line_base(by_id, kept_gold, line_base)
    kept_gold, outside = shift_lines(kept_gold, by_id, base)
    left_out["labels_past_note_end"] += outside
    if fmt == "ehrcon":
        kept_gold = _numbered(kept_gold)
    if not notes:
        raise DataError(f"{src}: no notes left to import ({', '.join(f'{k} {v}' for k, v in left_out.items() if v)})")
    assignment = [(n.note_id, split_of.get(n.note_id)) for n in notes]
    result = ReleaseImport(
        out_dir=out, fmt=fmt, variant=variant, split=split, notes=len(notes), gold=len(kept_gold),
        by_type={t: c for t in NOTE_TYPES if (c := sum(n.note_type == t for n in notes))},
        by_split={s: c for s in SPLITS if (c := sum(v == s for _, v in assignment))}, line_base=base,
        left_out={k: v for k, v in sorted(left_out.items()) if v}, other_variants=others,
        seconds=time.perf_counter() - started)
    checksums: list[dict[str, Any]] = [
        {"file": str(p.relative_to(root)) if root in p.parents else p.name, "bytes": p.stat().st_size,
         "sha256": _hash(p)} for p in inputs]
    record: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION, "source": fmt, "source_kind": "credentialed",
        "release": _RELEASE_NAME[fmt], "release_folder": src.name, "variant": variant,
        "variants_in_release": [variant, *others] if variant else [], "split": split,
        "splits": splits_record(assignment), "note_types": list(note_types), "by_type": dict(result.by_type),
        "written": len(notes), "gold": len(kept_gold), "left_out": dict(result.left_out),
        "positions": base.describe(), "db": str(db) if db is not None else None,
        "inputs": checksums, "sha256": hashlib.sha256("".join(c["sha256"] for c in checksums).encode()).hexdigest(),
        "files": [NOTES_FILE, GOLD_FILE], "imported_at": datetime.now().astimezone().isoformat(timespec="seconds")}
    _write(src, out, overwrite, notes, kept_gold, record)
    return result


def _write(src: Path, out: Path, overwrite: bool, notes: list[Note], gold: list[GoldEntity],
           record: Mapping[str, Any]) -> None:
    """The three files, staged and committed by the import target."""
    def write(staging: Path) -> None:
        write_jsonl(notes, staging / NOTES_FILE)
        write_jsonl(gold, staging / GOLD_FILE)
        (staging / IMPORT_FILE).write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")

    write_import(src, out, overwrite, (IMPORT_FILE, GOLD_FILE, NOTES_FILE), write)
