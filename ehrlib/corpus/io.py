"""Reading and writing corpus records as JSONL, one object a line.

Every written line starts with ``schema_version`` so a reader can refuse records from a
future contract. Writes are atomic (temp file in the same folder, then ``os.replace``):
an interrupted run never leaves a half-written ``gold.jsonl`` that a later run would
trust. Readers validate each line through :func:`ehrlib.corpus.records.from_dict` and
report ``file:line: field ...`` so a researcher can fix a hand-edited record.
"""
from __future__ import annotations

import gzip
import json
import os
import tempfile
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeVar, cast

from ehrlib.corpus.records import (
    SCHEMA_VERSION,
    GoldEntity,
    Note,
    Prediction,
    RecordError,
    from_dict,
    to_dict,
)
from ehrlib.corpus.splits import split_note_ids
from ehrlib.filemodes import as_umask_allows

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

__all__ = [
    "Corpus",
    "dumps_record",
    "write_jsonl",
    "write_json",
    "write_text",
    "iter_jsonl",
    "iter_text_lines",
    "corpus_file",
    "read_records",
    "read_notes",
    "read_gold",
    "read_predictions",
    "read_manifest",
    "load_corpus",
    "NOTES_FILE",
    "GOLD_FILE",
    "MANIFEST_FILE",
]

NOTES_FILE = "notes.jsonl"
GOLD_FILE = "gold.jsonl"
MANIFEST_FILE = "manifest.json"

R = TypeVar("R", bound="DataclassInstance")


def dumps_record(record: Any, **extra: Any) -> str:
    """One JSON line: ``schema_version`` first, then ``extra`` (e.g. run_id), then fields.

    Key order is fixed by the dataclass, so equal records give byte-identical lines.
    """
    body = to_dict(record) if not isinstance(record, Mapping) else dict(record)
    head: dict[str, Any] = {"schema_version": SCHEMA_VERSION}
    head.update(extra)
    head.update({k: v for k, v in body.items() if k not in head})
    return json.dumps(head, ensure_ascii=False, allow_nan=False)


def _atomic_write_text(path: Path, text: str) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    as_umask_allows(fd)     # mkstemp makes 0600; collaborators should read results
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_jsonl(records: Iterable[Any], path: str | os.PathLike[str], **extra: Any) -> Path:
    """Write records (dataclasses or dicts) to ``path`` atomically; returns the path."""
    lines = [dumps_record(r, **extra) for r in records]
    return _atomic_write_text(Path(path), "".join(line + "\n" for line in lines))


def write_json(obj: Mapping[str, Any], path: str | os.PathLike[str]) -> Path:
    """Pretty JSON (manifests), atomically, keys in insertion order."""
    return _atomic_write_text(Path(path), json.dumps(obj, indent=2, ensure_ascii=False) + "\n")


def write_text(text: str, path: str | os.PathLike[str]) -> Path:
    """Any text file (CSV, Markdown, HTML) atomically, so readers never see half a table."""
    return _atomic_write_text(Path(path), text)


def _decode_line(path: Path, lineno: int, raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = raw[exc.start]
        hint = ("the file looks Latin-1/Windows-1252 encoded" if bad >= 0x80 else "the file is not UTF-8 text")
        raise RecordError(f"{path}:{lineno}: byte 0x{bad:02x} at column {exc.start + 1} is not UTF-8 ({hint}); "
                          "re-save it as UTF-8, e.g. `iconv -f latin1 -t utf-8 IN > OUT`") from None


def _open_bytes(path: Path) -> IO[bytes]:
    """The file's bytes, gunzipped if it is gzip (by content, whatever its name)."""
    if path.is_dir():
        raise RecordError(f"{path}: is a folder, expected a file")
    try:
        fh = path.open("rb")
    except OSError as exc:
        raise RecordError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if fh.read(2) == b"\x1f\x8b":
        fh.close()
        return cast(IO[bytes], gzip.open(path, "rb"))  # a GzipFile reads like any binary file
    fh.seek(0)
    return fh


def iter_text_lines(path: str | os.PathLike[str]) -> Iterator[tuple[int, str]]:
    """(1-based line number, text) of a UTF-8 text file, plain or gzipped, a UTF-8 BOM
    dropped; RecordError (file:line and what to do) for UTF-16, Latin-1 or damaged gzip.
    """
    path = Path(path)
    if not path.exists():
        raise RecordError(f"{path}: file not found")
    with _open_bytes(path) as fh:
        lineno = 0
        try:
            for lineno, raw in enumerate(fh, start=1):
                if lineno == 1:
                    if raw.startswith((b"\xff\xfe", b"\xfe\xff")) or raw[1:4:2] == b"\x00\x00" or \
                            raw[0:3:2] == b"\x00\x00":
                        raise RecordError(f"{path}: the file is UTF-16 encoded; re-save it as UTF-8, "
                                          "e.g. `iconv -f utf-16 -t utf-8 IN > OUT`")
                    if b"\x00" in raw:
                        raise RecordError(f"{path}: binary data (NUL bytes), not a UTF-8 text file")
                    raw = raw.removeprefix(b"\xef\xbb\xbf")
                yield lineno, _decode_line(path, lineno, raw)
        except (OSError, EOFError, zlib.error) as exc:   # a truncated or corrupt gzip stream
            raise RecordError(f"{path}:{lineno + 1}: damaged gzip data ({exc}); re-create the file") from None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _loads(text: str) -> Any:
    """Strict JSON: no NaN/Infinity; nesting too deep to parse is an error, not a crash."""
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def iter_jsonl(path: str | os.PathLike[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """(1-based line number, object) for each non-blank line; RecordError on bad JSON."""
    path = Path(path)
    for lineno, raw in iter_text_lines(path):
        if not raw.strip():
            continue
        try:
            obj = _loads(raw)
        except json.JSONDecodeError as exc:
            raise RecordError(f"{path}:{lineno}: invalid JSON ({exc.msg} at column {exc.colno})") from None
        except ValueError as exc:
            raise RecordError(f"{path}:{lineno}: invalid JSON ({exc})") from None
        if not isinstance(obj, dict):
            raise RecordError(f"{path}:{lineno}: expected a JSON object, got {type(obj).__name__}")
        yield lineno, obj


def read_records(cls: type[R], path: str | os.PathLike[str], *, strip: tuple[str, ...] = ()) -> list[R]:
    """Validated records of ``cls``; ``strip`` names envelope keys to drop (e.g. run_id)."""
    out: list[R] = []
    for lineno, obj in iter_jsonl(path):
        version = obj.get("schema_version", SCHEMA_VERSION)
        if not isinstance(version, int) or version > SCHEMA_VERSION:
            raise RecordError(
                f"{path}:{lineno}: field 'schema_version': {version!r} is newer than this "
                f"ehrlib understands ({SCHEMA_VERSION})")
        for key in strip:
            obj.pop(key, None)
        try:
            out.append(from_dict(cls, obj))
        except RecordError as exc:
            raise RecordError(f"{path}:{lineno}: {exc}") from None
        except TypeError as exc:  # a value of the wrong shape reached the dataclass
            raise RecordError(f"{path}:{lineno}: {cls.__name__}: {exc}") from None
    return out


def read_notes(path: str | os.PathLike[str]) -> list[Note]:
    """Read and validate a ``notes.jsonl`` file."""
    return read_records(Note, path)


def read_gold(path: str | os.PathLike[str]) -> list[GoldEntity]:
    """Read and validate a ``gold.jsonl`` file."""
    return read_records(GoldEntity, path)


def read_predictions(path: str | os.PathLike[str]) -> list[Prediction]:
    """Read and validate a ``predictions.jsonl`` file."""
    return read_records(Prediction, path)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for k, v in pairs:
        if k in seen:
            raise ValueError(f"key {k!r} appears twice")
        seen[k] = v
    return seen


def read_manifest(corpus_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """The corpus manifest.

    A key given twice is an error, not "the last one wins": a manifest saying ``credentialed`` and then
    ``synthetic`` must not pass as synthetic.
    """
    path = corpus_file(corpus_dir, MANIFEST_FILE)
    text = "".join(line for _, line in iter_text_lines(path))
    try:
        obj = json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise RecordError(f"{path}:{exc.lineno}: invalid JSON ({exc.msg})") from None
    except (ValueError, RecursionError) as exc:
        raise RecordError(f"{path}: invalid manifest ({exc})") from None
    if not isinstance(obj, dict):
        raise RecordError(f"{path}: expected a JSON object, got {type(obj).__name__}")
    return obj


def corpus_file(corpus_dir: str | os.PathLike[str], name: str) -> Path:
    """``corpus_dir/name``, or its gzipped twin ``name.gz`` if only that exists."""
    path = Path(corpus_dir) / name
    gz = path.with_name(path.name + ".gz")
    return gz if not path.exists() and gz.exists() else path


@dataclass(frozen=True, slots=True)
class Corpus:
    """A loaded corpus folder (optionally one split of it)."""

    notes: tuple[Note, ...]
    gold: tuple[GoldEntity, ...]
    manifest: Mapping[str, Any]

    def gold_for(self, note_id: str) -> list[GoldEntity]:
        """The gold entities of one note, in file order."""
        return [g for g in self.gold if g.note_id == note_id]


def load_corpus(corpus_dir: str | os.PathLike[str], split: str | None = None) -> Corpus:
    """Notes + gold (+ manifest) of a corpus folder; ``split`` = test | valid (or validation) | None (all).

    Gold records must point at notes of the corpus and at existing lines: a label on a
    line that does not exist is a corrupt corpus, not something to score.
    """
    corpus_dir = Path(corpus_dir)
    manifest = read_manifest(corpus_dir) if corpus_file(corpus_dir, MANIFEST_FILE).exists() else {}
    notes = read_notes(corpus_file(corpus_dir, NOTES_FILE))
    gold = read_gold(corpus_file(corpus_dir, GOLD_FILE))
    by_id = {n.note_id: n for n in notes}
    n_lines = {n.note_id: len(n.lines) for n in notes}
    for i, g in enumerate(gold, start=1):
        if g.note_id not in by_id:
            raise RecordError(f"{corpus_dir / GOLD_FILE}:{i}: field 'note_id': unknown note {g.note_id!r}")
        if g.line >= n_lines[g.note_id]:
            raise RecordError(f"{corpus_dir / GOLD_FILE}:{i}: field 'line': {g.line} is past the end of "
                              f"note {g.note_id!r} ({n_lines[g.note_id]} lines)")
    if split is not None:
        keep = split_note_ids(corpus_dir, split)
        notes = [n for n in notes if n.note_id in keep]
        gold = [g for g in gold if g.note_id in keep]
    return Corpus(tuple(notes), tuple(gold), manifest)
