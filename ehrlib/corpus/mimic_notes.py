"""Import credentialed MIMIC notes into a corpus folder (``notes.jsonl`` + ``import.json``).

Sources, told apart by their header row:

- ``mimic3``: MIMIC-III ``NOTEEVENTS.csv[.gz]`` (``ROW_ID, SUBJECT_ID, HADM_ID, CHARTDATE,
  CHARTTIME, STORETIME, CATEGORY, DESCRIPTION, CGID, ISERROR, TEXT``);
- ``mimic4``: MIMIC-IV-Note ``discharge.csv[.gz]`` / ``radiology.csv[.gz]`` (``note_id,
  subject_id, hadm_id, note_type, note_seq, charttime, storetime, text``).

The file is read as a stream (``csv`` over optionally gzip-compressed text; its sha256 is
computed by a second reader in a thread), so a 4 GB NOTEEVENTS never sits in memory: kept notes go
straight to the output file, or, with ``per_type``, into one fixed-size reservoir per
note type (Vitter's algorithm R, seeded per type, so a type's sample does not depend on
how many rows of other types the file has). Each row is counted once, under the first
check it fails, in this order: error rows (MIMIC-III ``ISERROR``), unsupported
category, note type not selected, unusable ids (missing or non-integer), id filters,
admission absent from the database, unparseable date, a date outside the contract's years
(:data:`ehrlib.corpus.records.YEAR_RANGE`, which ``ehrlib run`` enforces), a note id seen before,
empty text. Where the output may go and how it is staged, committed and cleaned up (also on
a stop signal) is :mod:`ehrlib.corpus.import_target`'s business.
"""
from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import os
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Generator, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import date, datetime
from json.encoder import encode_basestring
from pathlib import Path
from typing import Any, Literal

from ehrlib.corpus.id_files import read_id_file
from ehrlib.corpus.import_target import IMPORT_FILE, corpus_source_kind, write_import
from ehrlib.corpus.io import NOTES_FILE
from ehrlib.corpus.records import NOTE_TYPES, PAPER_NOTE_TYPES, SCHEMA_VERSION, YEAR_RANGE
from ehrlib.errors import ConfigError, DataError, os_reason

__all__ = [
    "IMPORT_FILE",
    "SOURCES",
    "ImportFilters",
    "ImportResult",
    "NoteFields",
    "corpus_source_kind",
    "detect_source",
    "import_notes",
    "note_json",
    "note_type_of",
    "read_id_file",
]

SOURCES = ("mimic3", "mimic4")
#: header columns that identify each source (lower-cased); a file may have more
_SIGNATURE = {
    "mimic3": ("row_id", "subject_id", "hadm_id", "chartdate", "category", "text"),
    "mimic4": ("note_id", "subject_id", "hadm_id", "note_type", "charttime", "text"),
}
#: MIMIC-III CATEGORY values (stripped, lower-cased) -> note type; others are unsupported
_MIMIC3_TYPES = {"discharge summary": "discharge_summary", "physician": "physician", "nursing": "nursing",
                 "nursing/other": "nursing", "radiology": "radiology"}
#: MIMIC-IV-Note note_type codes: discharge summary (+ addendum), radiology report (+ addendum)
_MIMIC4_TYPES = {"ds": "discharge_summary", "da": "discharge_summary", "rr": "radiology", "ar": "radiology"}
#: NOTEEVENTS holds texts of ~100 kB; csv's default field limit (128 kB) is too tight for a few
_FIELD_LIMIT = 64 * 1024 * 1024


def note_type_of(source: str, value: str) -> str | None:
    """The contract note type of a source's category / note_type value, or None."""
    key = (value or "").strip().lower()
    return (_MIMIC3_TYPES if source == "mimic3" else _MIMIC4_TYPES).get(key)


@dataclass(frozen=True, slots=True)
class ImportFilters:
    """Which rows become notes. ``None`` id sets mean no restriction."""

    note_types: tuple[str, ...] = PAPER_NOTE_TYPES
    hadm_ids: frozenset[int] | None = None
    subject_ids: frozenset[int] | None = None
    per_type: int | None = None
    seed: int = 0
    include_errors: bool = False

    def describe(self) -> dict[str, Any]:
        """The JSON form recorded in import.json (id sets as their size)."""
        return {"note_types": list(self.note_types),
                "hadm_ids": None if self.hadm_ids is None else len(self.hadm_ids),
                "subject_ids": None if self.subject_ids is None else len(self.subject_ids),
                "per_type": self.per_type, "seed": self.seed, "include_errors": self.include_errors}


@dataclass(frozen=True, slots=True)
class ImportResult:
    """What one import wrote: the corpus folder and its row counts by type, reason and filter."""
    out_dir: Path
    source: str
    rows: int
    written: int
    by_type: Mapping[str, int] = field(default_factory=dict)
    #: rows that cannot become a note, by reason
    unusable: Mapping[str, int] = field(default_factory=dict)
    #: usable rows the filters (types, ids, database, sampling) left out, by filter
    filtered: Mapping[str, int] = field(default_factory=dict)
    #: unsupported categories / note_type values and their row counts
    unsupported: Mapping[str, int] = field(default_factory=dict)
    #: note types taken, and the rows of supported types that were not asked for, by type
    note_types: tuple[str, ...] = PAPER_NOTE_TYPES
    left_out_types: Mapping[str, int] = field(default_factory=dict)
    sha256: str = ""
    seconds: float = 0.0

    def lines(self) -> list[str]:
        """A short human summary (what the CLI prints)."""
        rate = f", {self.rows / self.seconds:,.0f} rows/s" if self.seconds else ""
        out = [f"{self.out_dir}: {self.written} notes from {self.rows} rows ({self.source}){rate}",
               "  kept: " + (", ".join(f"{k} {v}" for k, v in self.by_type.items()) or "none")]
        other = ", ".join(f"{v} {k}" for k, v in self.left_out_types.items())
        out.append(f"  note types taken: {', '.join(self.note_types)}" + (
            f"; left out {other} (take them with --note-types {','.join(self.note_types)},"
            f"{','.join(self.left_out_types)})" if other else ""))
        if self.unusable:
            out.append("  unusable rows: " + ", ".join(f"{k} {v}" for k, v in self.unusable.items()))
        if self.unsupported:
            top = sorted(self.unsupported.items(), key=lambda kv: -kv[1])[:8]
            out.append("  unsupported categories: " + ", ".join(f"{k!r} {v}" for k, v in top))
        if self.filtered:
            out.append("  left out by filters: " + ", ".join(f"{k} {v}" for k, v in self.filtered.items()))
        return out


def _sha256(path: Path, stop: threading.Event) -> str:
    """The file's sha256, read in 4 MB blocks (given up, returning "", once ``stop`` is set).

    Run in a thread next to the parser: hashlib and file reads release the GIL, so on a multi-GB file the
    hash costs no wall time.
    """
    h = hashlib.sha256()
    with path.open("rb") as fh:
        while not stop.is_set() and (block := fh.read(4 << 20)):
            h.update(block)
    return h.hexdigest()


def _open_text(path: Path) -> io.TextIOWrapper:
    """The file as text, gunzipped when it starts with gzip's magic bytes (whatever its name)."""
    with path.open("rb") as fh:
        gz = fh.read(2) == b"\x1f\x8b"
    if gz:
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", newline="")
    return path.open(encoding="utf-8", newline="", buffering=1 << 20)


def detect_source(header: Iterable[str]) -> str:
    """``mimic3`` or ``mimic4`` from a header row; DataError naming the columns otherwise."""
    cols = {c.strip().lower() for c in header}
    for source, need in _SIGNATURE.items():
        if set(need) <= cols:
            return source
    raise DataError(f"not a MIMIC notes file: header {sorted(cols)[:12]} matches neither NOTEEVENTS "
                    f"({', '.join(_SIGNATURE['mimic3'])}) nor MIMIC-IV-Note ({', '.join(_SIGNATURE['mimic4'])})")


#: a note as the importer carries it: the Note fields in contract order
NoteFields = tuple[str, int, int, str, str, str, "str | None"]


_LINE = ('{"schema_version": ' + str(SCHEMA_VERSION) + ', "note_id": %s, "subject_id": %d, "hadm_id": %d, '
         '"note_type": %s, "chartdate": %s, "text": %s, "charttime": %s}')
_quote = encode_basestring  # what json.dumps(ensure_ascii=False) uses for a str


def note_json(fields: NoteFields) -> str:
    """The JSONL line of a note, byte for byte ``ehrlib.corpus.io.dumps_record(Note(*fields))``
    (a test holds them equal), formatted directly: the generic encoder is most of the
    importer's time on a full conversion.
    """
    note_id, subject_id, hadm_id, note_type, chartdate, text, charttime = fields
    return _LINE % (_quote(note_id), subject_id, hadm_id, _quote(note_type), _quote(chartdate), _quote(text),
                    "null" if charttime is None else _quote(charttime))


def _valid_date(text: str) -> str | None:
    """``YYYY-MM-DD`` of a date or timestamp string, or None if it does not parse."""
    try:
        day = date.fromisoformat(text[:10]) if len(text) >= 10 else None
    except ValueError:
        return None
    return None if day is None else text[:10] if text[4] == "-" and text[7] == "-" else day.isoformat()


def _valid_time(text: str) -> str | None | Literal[False]:
    """A timestamp normalised to ``YYYY-MM-DD HH:MM:SS``; None if empty; False if unparseable."""
    if not text:
        return None
    try:
        parsed = datetime.fromisoformat(text.strip())
    except ValueError:
        return False
    # MIMIC writes exactly this form: keep the string (strftime would cost ~3 us a row)
    return text if len(text) == 19 and text[10] == " " else f"{parsed.year:04d}-{parsed:%m-%d %H:%M:%S}"


def _in_years(stamp: str | None) -> bool:
    """Whether a normalised date or timestamp (four-digit year first) lies in the contract's years."""
    return stamp is None or YEAR_RANGE[0] <= int(stamp[:4]) <= YEAR_RANGE[1]


@dataclass(slots=True)
class _Reservoir:
    """A fixed-size uniform sample of one note type's rows (algorithm R)."""

    size: int
    rng: random.Random
    seen: int = 0
    items: list[tuple[int, NoteFields]] = field(default_factory=list)

    def offer(self, seq: int, note: NoteFields) -> None:
        """Offer one eligible row: the k-th replaces a random kept one with chance size/k."""
        self.seen += 1
        if len(self.items) < self.size:
            self.items.append((seq, note))
            return
        j = self.rng.randrange(self.seen)
        if j < self.size:
            self.items[j] = (seq, note)


def _columns(header: list[str], source: str) -> dict[str, int]:
    idx = {c.strip().lower(): i for i, c in enumerate(header)}
    names = ("row_id", "subject_id", "hadm_id", "chartdate", "charttime", "category", "iserror", "text") \
        if source == "mimic3" else ("note_id", "subject_id", "hadm_id", "note_type", "charttime", "text")
    missing = [n for n in names if n not in idx and n != "iserror"]
    if missing:
        raise DataError(f"not a {source} notes file: missing column(s) {missing}")
    return {n: idx.get(n, -1) for n in names}


def _int(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        try:  # pandas-written CSVs give ids as 123.0
            f = float(text)
        except ValueError:
            return None
        return int(f) if f.is_integer() else None


def _rows(src: Path, source: str | None, filters: ImportFilters, admissions: Mapping[int, int] | None,
          counts: Counter, unsupported: Counter, tick: Callable[[int], None] | None,
          meta: dict[str, Any]) -> Generator[tuple[int, NoteFields], None, None]:
    """(row number, note) of every usable row that passes the filters, in file order; fills
    ``counts`` ('rows', 'unusable:<reason>', 'filtered:<filter>') and ``meta``.
    """
    if not src.is_file():
        raise DataError(f"{src}: file not found")
    try:
        text = _open_text(src)
    except OSError as exc:
        raise DataError(f"{src}: cannot be read ({os_reason(exc)})") from None
    previous_limit = csv.field_size_limit(_FIELD_LIMIT)
    stop = threading.Event()
    with ThreadPoolExecutor(1) as pool, text:
        digest = pool.submit(_sha256, src, stop)
        reader = csv.reader(text, strict=True)  # a quote left open (a truncated file) is an error
        try:
            try:
                header = next(reader)
            except StopIteration:
                raise DataError(f"{src}: empty file") from None
            detected = detect_source(header)
            if source is not None and source != detected:
                raise DataError(f"{src}: --source {source} given but the header is that of {detected}")
            source = detected
            meta["source"] = source
            col = _columns(header, source)
            n_cols = len(header)
            wanted = set(filters.note_types)
            hadm_ok, subject_ok = filters.hadm_ids, filters.subject_ids
            type_of: dict[str, str | None] = {}
            mimic3 = source == "mimic3"
            c_id = col["row_id" if mimic3 else "note_id"]
            c_subject, c_hadm, c_text = col["subject_id"], col["hadm_id"], col["text"]
            c_type = col["category" if mimic3 else "note_type"]
            c_err = col.get("iserror", -1)
            c_date = col["chartdate"] if mimic3 else col["charttime"]
            c_time = col["charttime"]
            seq = 0
            seen_ids: set[int | str] = set()
            for row in reader:
                seq += 1
                if tick is not None and seq % 10000 == 0:
                    tick(10000)
                if len(row) != n_cols:
                    counts["unusable:malformed_row"] += 1
                    continue
                if not filters.include_errors and c_err >= 0 and row[c_err].strip() not in ("", "0"):
                    counts["unusable:error_row"] += 1
                    continue
                category = row[c_type]
                if category in type_of:
                    note_type = type_of[category]
                else:
                    note_type = type_of[category] = note_type_of(source, category)
                if note_type is None:
                    counts["unusable:unsupported_category"] += 1
                    unsupported[category.strip()] += 1
                    continue
                if note_type not in wanted:
                    counts["filtered:note_type"] += 1
                    counts[f"type:{note_type}"] += 1
                    continue
                hadm_text = row[c_hadm]
                if not hadm_text:
                    counts["unusable:missing_hadm_id"] += 1
                    continue
                hadm_id, subject_id = _int(hadm_text), _int(row[c_subject])
                note_id = row[c_id].strip()
                if hadm_id is None or subject_id is None or not note_id:
                    counts["unusable:bad_id"] += 1
                    continue
                if hadm_ok is not None and hadm_id not in hadm_ok:
                    counts["filtered:hadm_ids"] += 1
                    continue
                if subject_ok is not None and subject_id not in subject_ok:
                    counts["filtered:subject_ids"] += 1
                    continue
                if admissions is not None:
                    owner = admissions.get(hadm_id)
                    if owner is None:
                        counts["filtered:not_in_db"] += 1
                        continue
                    if owner != subject_id:
                        counts["unusable:subject_mismatch"] += 1
                        continue
                chartdate = _valid_date(row[c_date].strip())
                charttime = _valid_time(row[c_time]) if c_time >= 0 else None
                if chartdate is None or charttime is False:
                    counts["unusable:bad_date"] += 1
                    continue
                if not (_in_years(chartdate) and _in_years(charttime or None)):
                    counts["unusable:date_out_of_range"] += 1
                    continue
                # ints take less memory than strings
                key: int | str = int(note_id) if note_id.isdigit() and note_id[0] != "0" else note_id
                if key in seen_ids:
                    counts["unusable:duplicate_note_id"] += 1
                    continue
                body = row[c_text]
                if "\r" in body:  # CRLF files: line numbers index text.split("\n")
                    body = body.replace("\r\n", "\n").replace("\r", "\n")
                if not body.strip():
                    counts["unusable:empty_text"] += 1
                    continue
                seen_ids.add(key)
                yield seq, (note_id, subject_id, hadm_id, note_type, chartdate, body, charttime or None)
            counts["rows"] = seq
            meta["sha256"] = digest.result()
            meta["bytes"] = src.stat().st_size
        except csv.Error as exc:
            raise DataError(f"{src}: CSV error near data row {reader.line_num}: {exc}") from None
        except UnicodeDecodeError as exc:
            raise DataError(f"{src}: not UTF-8 text ({exc.reason} at byte {exc.start} of a block)") from None
        except (OSError, EOFError) as exc:  # a truncated .gz
            raise DataError(f"{src}: cannot read ({exc})") from None
        finally:
            stop.set()  # a failed, closed or stopped read does not wait for the whole file's hash
            csv.field_size_limit(previous_limit)
        if tick is not None:
            tick(seq % 10000)


def import_notes(src: str | os.PathLike[str], out_dir: str | os.PathLike[str], *, source: str | None = None,
                 filters: ImportFilters = ImportFilters(), admissions: Mapping[int, int] | None = None,
                 db: str | os.PathLike[str] | None = None, overwrite: bool = False,
                 progress: bool = False) -> ImportResult:
    """Convert a MIMIC notes CSV into a corpus folder; see the module docs for the rules.

    ``admissions`` (hadm_id -> subject_id, as ``ehrlib.db.notes_cli.db_admissions`` reads them)
    keeps only notes of those admissions and patients; ``db`` names that database in
    import.json.

    Raises DataError for an unreadable or unrecognised file or a failed write, ConfigError
    for bad options or an ``out_dir`` the import may not write (see
    :func:`ehrlib.corpus.import_target.resolve_target`), :class:`~ehrlib.corpus.import_target.Interrupted`
    on SIGTERM, SIGINT or SIGHUP; in every case nothing is left behind.
    """
    started = time.perf_counter()
    src, out = Path(src), Path(out_dir)
    if source is not None and source not in SOURCES:
        raise ConfigError(f"--source must be one of {', '.join(SOURCES)}, got {source!r}")
    bad_types = [t for t in filters.note_types if t not in NOTE_TYPES]
    if bad_types or not filters.note_types:
        raise ConfigError(f"note types must be among {', '.join(NOTE_TYPES)}, got {', '.join(bad_types) or 'none'}")
    if filters.per_type is not None and filters.per_type < 1:
        raise ConfigError(f"--per-type must be at least 1, got {filters.per_type}")
    if not src.is_file():
        raise DataError(f"{src}: file not found")
    bar = None

    def write(staging: Path) -> ImportResult:
        nonlocal bar
        if progress:
            from tqdm.auto import tqdm  # deferred: tqdm.auto imports asyncio, which only an import's bar needs

            bar = tqdm(desc=f"import {src.name}", unit=" rows", unit_scale=True, mininterval=1.0)
        return _write_corpus(src, staging, source, filters, admissions, db, bar, started, out)

    try:
        return write_import(src, out, overwrite, (IMPORT_FILE, NOTES_FILE), write)
    finally:
        if bar is not None:
            bar.close()


def _write_corpus(src: Path, staging: Path, source: str | None, filters: ImportFilters,
                  admissions: Mapping[int, int] | None, db: str | os.PathLike[str] | None, bar: Any,
                  started: float, out: Path) -> ImportResult:
    """Write notes.jsonl and import.json into ``staging``."""
    counts: Counter = Counter()
    unsupported: Counter = Counter()
    meta: dict[str, Any] = {}
    rows = _rows(src, source, filters, admissions, counts, unsupported, bar.update if bar is not None else None,
                 meta)
    by_type: Counter = Counter()
    try:
        with (staging / NOTES_FILE).open("w", encoding="utf-8", newline="\n", buffering=1 << 20) as fh:
            if filters.per_type is None:
                for _, note in rows:
                    fh.write(note_json(note) + "\n")
                    by_type[note[3]] += 1
            else:
                pools = {t: _Reservoir(filters.per_type, random.Random(f"{filters.seed}:{t}"))
                         for t in filters.note_types}
                for seq, note in rows:
                    pools[note[3]].offer(seq, note)
                kept = sorted((item for pool in pools.values() for item in pool.items), key=lambda x: x[0])
                counts["filtered:sampling"] = sum(p.seen - len(p.items) for p in pools.values())
                for _, note in kept:
                    fh.write(note_json(note) + "\n")
                    by_type[note[3]] += 1
            fh.flush()
            os.fsync(fh.fileno())
    finally:
        rows.close()  # a write that failed: stop the reader (and its hash thread) now
    written = sum(by_type.values())
    result = ImportResult(
        out_dir=out, source=meta["source"], rows=counts["rows"], written=written,
        by_type={t: by_type[t] for t in NOTE_TYPES if by_type[t]},
        unusable={k.split(":", 1)[1]: v for k, v in sorted(counts.items()) if k.startswith("unusable:") and v},
        filtered={k.split(":", 1)[1]: v for k, v in sorted(counts.items()) if k.startswith("filtered:") and v},
        unsupported=dict(sorted(unsupported.items())), sha256=meta["sha256"], note_types=filters.note_types,
        left_out_types={t: counts[f"type:{t}"] for t in NOTE_TYPES if counts[f"type:{t}"]},
        seconds=time.perf_counter() - started)
    record = {"schema_version": SCHEMA_VERSION, "source": result.source, "source_kind": "credentialed",
              "source_file": src.name,
              "source_bytes": meta["bytes"], "sha256": result.sha256, "filters": filters.describe(),
              "db": str(db) if db is not None else None, "rows": result.rows, "written": written,
              "notes_bytes": (staging / NOTES_FILE).stat().st_size,
              "by_type": dict(result.by_type), "unusable": dict(result.unusable),
              "filtered": dict(result.filtered), "unsupported_categories": dict(result.unsupported),
              "note_types": list(filters.note_types), "left_out_types": dict(result.left_out_types),
              "files": [NOTES_FILE],
              "imported_at": datetime.now().astimezone().isoformat(timespec="seconds")}
    (staging / IMPORT_FILE).write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return result
