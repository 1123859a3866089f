"""EHRCon's PhysioNet release as a folder layout: which files make one variant and split.

The release (``ehrcon-consistency-of-notes``) holds two variants of the same notes,
``original/`` (MIMIC-III's text) and ``processed/`` (text trimmed to what the tables can
confirm), each with ``test/`` and ``valid/`` splits (4:1 by notes), each split with
``discharge/``, ``nursing/`` and ``physician/`` folders holding a notes CSV
(``discharge_test.csv``) and a ``<type>_label/`` folder of label pickles keyed by the
note's ROW_ID. The variants share ROW_IDs, so reading both would give every note twice:
a layout is always one variant.

The folder a user names may be the release root (optionally with a ``dataset/`` level),
one variant folder, or one split folder. Every file is resolved and must lie inside that
folder (:func:`ehrlib.corpus.pickles.inside`): the label pickles are code as much as data.
"""
from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ehrlib.corpus.adapters import read_ehrcon_labels, read_ehrcon_notes
from ehrlib.corpus.pickles import inside
from ehrlib.corpus.records import NOTE_TYPES, GoldEntity, Note
from ehrlib.corpus.splits import SPLITS, canonical_split
from ehrlib.errors import ConfigError, DataError

__all__ = ["VARIANTS", "NOTE_FOLDERS", "Layout", "Part", "ReleaseData", "find_layout", "is_ehrcon_release",
           "read_ehrcon", "read_release"]

VARIANTS: tuple[str, ...] = ("original", "processed")
#: note-type folders of a split and the note type of their notes
NOTE_FOLDERS = {"discharge": "discharge_summary", "nursing": "nursing", "physician": "physician"}
_PICKLE_SUFFIXES = (".pkl", ".pickle")


@dataclass(frozen=True, slots=True)
class Part:
    """One note-type folder of one split: its notes CSV(s) and label pickles."""

    split: str | None
    folder: Path
    csvs: tuple[Path, ...]
    pickles: tuple[Path, ...]


@dataclass(frozen=True, slots=True)
class Layout:
    """The files of one variant of a release, inside the folder the user named (``root``)."""

    root: Path
    variant: str | None
    #: the variants the release holds (the one not chosen is never read)
    variants: tuple[str, ...]
    parts: tuple[Part, ...]

    @property
    def splits(self) -> tuple[str, ...]:
        """The splits read, in release order (empty when a split folder carried no name)."""
        return tuple(s for s in SPLITS if any(p.split == s for p in self.parts))

    @property
    def files(self) -> tuple[Path, ...]:
        """Every file the import reads, CSVs and pickles."""
        return tuple(f for p in self.parts for f in (*p.csvs, *p.pickles))


@dataclass(frozen=True, slots=True)
class ReleaseData:
    """Notes and raw gold (positions as written) of a layout, with each note's split."""

    notes: tuple[Note, ...]
    gold: tuple[GoldEntity, ...]
    split_of: dict[str, str | None]
    #: what was left out, by reason (``note_type:<type>``, ``labels_without_note``)
    left_out: Counter = field(default_factory=Counter)


def _note_dirs(folder: Path) -> list[Path]:
    return [folder / name for name in NOTE_FOLDERS if (folder / name).is_dir()]


def _variant_base(root: Path) -> Path | None:
    """The folder holding ``original/`` / ``processed/``: the root or its ``dataset/``."""
    for base in (root, root / "dataset"):
        if any((base / v).is_dir() for v in VARIANTS):
            return base
    return None


def is_ehrcon_release(path: Path) -> bool:
    """Whether a folder looks like an EHRCon release, variant or split folder."""
    if not path.is_dir():
        return False
    if _variant_base(path) is not None or _note_dirs(path):
        return True
    return any(_note_dirs(path / s) for s in ("test", "valid", "validation"))


def _split_folders(vdir: Path, root: Path, split: str | None) -> list[tuple[str | None, Path]]:
    named: list[tuple[str | None, Path]] = [(canonical_split(d.name), d) for d in sorted(vdir.iterdir())
             if d.is_dir() and canonical_split(d.name) is not None and _note_dirs(d)]
    if named:
        if split is None:
            return named
        chosen: list[tuple[str | None, Path]] = [(s, d) for s, d in named if s == split]
        if not chosen:
            raise ConfigError(f"{vdir}: no {split} split (it has {', '.join(str(s) for s, _ in named)})")
        return chosen
    if _note_dirs(vdir):
        own = canonical_split(vdir.name)
        if split is not None and own is not None and own != split:
            raise ConfigError(f"{vdir} is the {own} split, but --split {split} was asked for")
        return [(split or own, vdir)]
    raise ConfigError(f"{root} is not an EHRCon release: expected original/ and processed/ folders (or a variant "
                      "folder with test/ and valid/, or a split folder with discharge/, nursing/, physician/)")


def _part(split: str | None, folder: Path, root: Path) -> Part:
    inside(folder, root)
    csvs = tuple(inside(p, root) for p in sorted(folder.glob("*.csv")) if p.is_file() or p.is_symlink())
    if not csvs:
        raise ConfigError(f"{folder}: no notes CSV (expected {folder.name}_<split>.csv)")
    label_dirs = [d for d in sorted(folder.iterdir()) if d.is_dir() and d.name.endswith("_label")]
    pickles = tuple(inside(p, root) for d in label_dirs for p in sorted(d.iterdir())
                    if p.suffix in _PICKLE_SUFFIXES)
    if not pickles:
        raise ConfigError(f"{folder}: no label file (expected {folder.name}_label/*.pkl beside {csvs[0].name})")
    return Part(split, folder, csvs, pickles)


def find_layout(root: str | os.PathLike[str], *, variant: str | None = None, split: str | None = None) -> Layout:
    """The files of one variant (``original`` unless given or only ``processed`` exists) and
    one split (or all) under ``root``; ConfigError (one line) for a folder that is not a
    release or lacks what was asked for.
    """
    root = Path(root)
    if not root.is_dir():
        raise ConfigError(f"{root}: not a folder; an EHRCon release is a folder with original/ and processed/")
    if variant is not None and variant not in VARIANTS:
        raise ConfigError(f"--variant must be one of {', '.join(VARIANTS)}, got {variant!r}")
    wanted_split = None if split is None else canonical_split(split)
    if split is not None and wanted_split is None:
        raise ConfigError(f"--split must be one of {', '.join(SPLITS)}, got {split!r}")
    base = _variant_base(root)
    chosen: str | None
    if base is not None:
        present = tuple(v for v in VARIANTS if (base / v).is_dir())
        chosen = variant or ("original" if "original" in present else present[0])
        if chosen not in present:
            raise ConfigError(f"{base}: no {chosen}/ variant (it has {', '.join(present)})")
        vdir = base / chosen
    else:
        own = root.name if root.name in VARIANTS else None
        if variant is not None and own not in (None, variant):
            raise ConfigError(f"{root} is the {own} variant, but --variant {variant} was asked for")
        chosen, present, vdir = variant or own, tuple(filter(None, [own])), root
    parts = tuple(_part(s, d, root) for s, sdir in _split_folders(vdir, root, wanted_split) for d in _note_dirs(sdir))
    return Layout(root.resolve(), chosen, present, parts)


def read_release(layout: Layout, note_types: tuple[str, ...], *, line_offset: int = 0) -> ReleaseData:
    """Notes of ``note_types`` and their gold, positions as written (plus ``line_offset``);
    a note id met twice within the variant is a DataError.
    """
    notes: list[Note] = []
    split_of: dict[str, str | None] = {}
    where: dict[str, Path] = {}
    left_out: Counter = Counter()
    wanted = set(note_types)
    for part in layout.parts:
        for csv_path in part.csvs:
            for note in read_ehrcon_notes(csv_path):
                if note.note_id in where:
                    raise DataError(f"note ROW_ID {note.note_id} appears twice in one variant: {where[note.note_id]} "
                                    f"and {csv_path}")
                where[note.note_id] = csv_path
                if note.note_type not in wanted:
                    left_out[f"note_type:{note.note_type}"] += 1
                    continue
                notes.append(note)
                split_of[note.note_id] = part.split
    gold: list[GoldEntity] = []
    for part in layout.parts:
        for pkl in part.pickles:
            for g in read_ehrcon_labels(pkl, root=layout.root, line_offset=line_offset):
                if g.note_id in split_of:
                    gold.append(g)
                else:  # a label of a note type not asked for, or of no note in the variant at all
                    left_out["labels_of_left_out_notes" if g.note_id in where else "labels_without_note"] += 1
    return ReleaseData(tuple(notes), tuple(gold), split_of, left_out)


def read_ehrcon(folder: str | Path, *, line_offset: int = 0, variant: str | None = None,
                split: str | None = None) -> tuple[list[Note], list[GoldEntity]]:
    """One variant of an EHRCon release (the release root, a variant folder or a split
    folder, as :func:`find_layout` takes it), gold restricted to notes present.

    ``variant`` defaults to ``original``: the variants share note ids, so reading both
    would give every note twice. ``ehrlib notes import`` also converts positions to
    0-based lines; here ``line_offset`` is applied as given.
    """
    data = read_release(find_layout(folder, variant=variant, split=split), NOTE_TYPES, line_offset=line_offset)
    return list(data.notes), list(data.gold)
