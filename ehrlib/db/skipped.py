"""Source files a database build does not read, and why.

A MIMIC folder holds more CSV files than the table contracts use (TRANSFERS, SERVICES,
DATETIMEEVENTS, CALLOUT, the notes, ...). ``ehrlib build-db`` names each one with its
reason, in its summary and in the build manifest, rather than passing over them in
silence: a user then knows the tools never looked at them.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["SkippedFile", "MANIFEST_KEY", "skipped_files", "manifest_value", "summary_lines"]

#: the build manifest's key holding the skipped files (a JSON list of {file, reason})
MANIFEST_KEY = "skipped_files"
_SUFFIXES = (".csv.gz", ".csv")
#: note files of MIMIC-III (NOTEEVENTS) and MIMIC-IV-Note: they go into a corpus, not a table
_NOTE_STEMS = frozenset({"noteevents", "discharge", "discharge_detail", "radiology", "radiology_detail"})
_NOTES = "clinical notes, not a table: make a corpus of them with `ehrlib notes import`"
#: reasons name no file: a perturbed database's manifest keeps them
_TWIN = "another file of the same table was read (.csv.gz before .csv)"


@dataclass(frozen=True, slots=True)
class SkippedFile:
    """One CSV in the source folder that no table was loaded from."""

    file: str    # relative to the source folder, POSIX separators
    reason: str


def _stem(name: str) -> str | None:
    """The lower-case table stem of a CSV file name, None for any other file."""
    lower = name.lower()
    return next((lower[: -len(s)] for s in _SUFFIXES if lower.endswith(s)), None)


def skipped_files(src: Path, read: Iterable[Path], flavor: str) -> tuple[SkippedFile, ...]:
    """Every CSV in ``src`` and its first-level folders (MIMIC-IV's hosp/, icu/) that is not
    among the files ``read``, each with its reason.
    """
    read_files = {p.resolve() for p in read}
    read_stems = {(p.parent, _stem(p.name)) for p in read_files}
    folders = [src, *sorted(p for p in src.iterdir() if p.is_dir() and not p.name.startswith("."))]
    out = []
    for folder in folders:
        for path in sorted(folder.iterdir()):
            stem = _stem(path.name)
            if stem is None or not path.is_file() or path.resolve() in read_files:
                continue
            if (path.resolve().parent, stem) in read_stems:
                reason = _TWIN
            elif stem in _NOTE_STEMS:
                reason = _NOTES
            else:
                reason = f"no {flavor} table contract uses it, so the tools never query it"
            out.append(SkippedFile(path.relative_to(src).as_posix(), reason))
    return tuple(out)


def manifest_value(skipped: Sequence[SkippedFile], *, hide_names: bool = False) -> str:
    """The manifest's JSON for ``skipped``; ``hide_names`` leaves file names out (a
    perturbed database names no original MIMIC table, not even a file it skipped).
    """
    return json.dumps([{"file": None if hide_names else s.file, "reason": s.reason} for s in skipped])


def summary_lines(skipped: Sequence[SkippedFile]) -> list[str]:
    """One line per reason, naming its files (what ``ehrlib build-db`` prints)."""
    by_reason: dict[str, list[str]] = {}
    for s in skipped:
        by_reason.setdefault(s.reason, []).append(s.file)
    return [f"{', '.join(files)}: {reason}" for reason, files in by_reason.items()]
