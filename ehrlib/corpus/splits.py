"""Which notes of a corpus belong to the test and the validation split.

The paper develops on a validation split and reports on a test split (4:1 by notes). A
corpus folder states its assignment in one of two places: the synthetic corpus in
``manifest.json`` (``"splits": {"validation": [...], "test": [...]}``), an imported
release (EHRCon, ReasonCon-style JSONL) in ``import.json`` (``"splits": {"test": [...],
"valid": [...]}``). ``valid`` and ``validation`` name the same split. A corpus without
either (imported MIMIC notes, a hand-made folder) has no split: asking for one is a
one-line error, never an empty or an unfiltered run.
"""
from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ehrlib.errors import ConfigError

__all__ = ["SPLITS", "canonical_split", "corpus_splits", "split_note_ids", "splits_record"]

#: the split names the command line takes
SPLITS: tuple[str, ...] = ("test", "valid")
_ALIASES = {"test": "test", "valid": "valid", "validation": "valid", "val": "valid", "dev": "valid"}
#: where each corpus kind keeps its assignment
_FILES = ("manifest.json", "import.json")


def canonical_split(name: str) -> str | None:
    """``test`` or ``valid`` for a split name or its spellings (``validation``), else None."""
    return _ALIASES.get(str(name).strip().lower())


def _read(path: Path) -> Mapping[str, Any]:
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: cannot read its split assignment ({type(exc).__name__})") from None
    return obj if isinstance(obj, dict) else {}


def corpus_splits(corpus_dir: str | os.PathLike[str]) -> dict[str, frozenset[str]] | None:
    """``{"test": ids, "valid": ids}`` as the corpus states it, or None when it states none."""
    folder = Path(corpus_dir)
    for name in _FILES:
        path = folder / name
        if not path.is_file():
            continue
        raw = _read(path).get("splits")
        if not isinstance(raw, Mapping) or not raw:
            continue
        out: dict[str, set[str]] = {}
        for key, ids in raw.items():
            split = canonical_split(key)
            if split is None or not isinstance(ids, list):
                raise ConfigError(f"{path}: field 'splits': expected test/valid lists of note ids, got {key!r}")
            out.setdefault(split, set()).update(str(i) for i in ids)
        return {k: frozenset(v) for k, v in out.items()}
    return None


def split_note_ids(corpus_dir: str | os.PathLike[str], split: str) -> frozenset[str]:
    """The note ids of one split; ConfigError (one line) when the corpus has no split
    assignment or does not name that split.
    """
    wanted = canonical_split(split)
    if wanted is None:
        raise ConfigError(f"unknown split {split!r}; choose one of {', '.join(SPLITS)}")
    splits = corpus_splits(corpus_dir)
    if splits is None:
        raise ConfigError(f"corpus {corpus_dir} has no split assignment (neither manifest.json nor import.json "
                          "lists 'splits'); drop --split, or import a release that has one")
    if wanted not in splits:
        raise ConfigError(f"corpus {corpus_dir} has no {wanted!r} split (it has {', '.join(sorted(splits))})")
    return splits[wanted]


def splits_record(assignment: Iterable[tuple[str, str | None]]) -> dict[str, list[str]] | None:
    """The ``splits`` field of an import.json from (note id, split or None) pairs; None when
    no note has a split.
    """
    out: dict[str, list[str]] = {}
    for note_id, split in assignment:
        if split is not None:
            out.setdefault(split, []).append(note_id)
    return {k: out[k] for k in SPLITS if k in out} or None
