"""Artefacts derived from a database (item catalog, n-gram index, ontology, item profile,
the tokenised ICD dictionary) or from package data files (ehrlib's own parsed and checked
data files, the drug-name dictionary, the ICD crosswalk), kept on disk so a fresh process
reads them instead of rebuilding them.

Where: ``<db>.ehrlib-cache/`` beside the database file; when that folder cannot be
created or written (a read-only data folder), ``$XDG_CACHE_HOME/ehrlib/<db name>-<hash of
its path>/`` (``~/.cache`` by default), and a read-only ``<db>.ehrlib-cache/`` that exists
(filled by the database's owner) is still read first. ``EHRLIB_CACHE_DIR=DIR`` puts every database's
cache under ``DIR`` instead; ``EHRLIB_CACHE_DIR=off`` turns the disk cache off.

Key: an entry is valid for one database content, one ehrlib version and one version of the
code that builds it. The database's content identity is its build manifest (both manifest
tables, whose per-table checksums ``build-db`` measured), plus the file's size and
modification time, so a database changed after its build without a manifest refresh is
still caught; a database without a manifest is identified by size, modification time and
the row count of every table. Any difference gives another file name, so a stale entry is
never read (it is removed when the new one is written).

Format: a value entry (``.pkl``) is a short header (the entry key and a SHA-256 of the
payload) and a pickle of plain data (str, bytes, numbers, None, and lists, tuples, dicts,
sets of them) at the highest protocol: one decode instead of JSON's two, and tuples and
sets come back as written, so a reader need not convert them. Numeric arrays are ``.npz``.

Safety: a value entry is unpickled by a reader that refuses every class and function
reference (it can only rebuild the plain types above, never call anything), after its
checksum matched; an ``.npz`` is read with ``allow_pickle=False``. So a cache file cannot run
code. Each is written to a temporary file in the same folder and renamed into place, so
concurrent writers are safe and nothing half-written is read. An entry that fails to read
or check (a damaged file, a wrong key inside, a reference to code) is rebuilt with a
one-line warning.
"""
from __future__ import annotations

import contextlib
import gc
import hashlib
import io
import logging
import os
import pickle
import re
import tempfile
import threading
import zipfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import ehrlib
from ehrlib.filemodes import as_umask_allows
from ehrlib.schema import MANIFEST_TABLE

if TYPE_CHECKING:
    import numpy as np

__all__ = ["CACHE_FORMAT", "DIR_ENV", "BucketedMap", "CacheDamaged", "cache_dir", "content_identity", "entry_key",
           "long_lived", "freeze_long_lived", "cached_value", "read_value_entry", "write_value_entry", "cached_arrays",
           "cached_package_value", "code_digest", "source_files", "package_location"]

log = logging.getLogger(__name__)

#: bumped when the layout of the cache files changes (2: value entries are data-only pickles, not JSON)
CACHE_FORMAT = 2
DIR_ENV = "EHRLIB_CACHE_DIR"
_SUFFIX = ".ehrlib-cache"
_OFF = ("off", "0", "none", "false")
_MANIFEST_TABLES = "ehrlib_manifest_tables"
T = TypeVar("T")
#: (folder written to, entry key, read-only folders read first)
Location = tuple[Path, str, tuple[Path, ...]]


class CacheDamaged(Exception):
    """A cache file that cannot be read back as written (rebuilt, never trusted)."""


def code_digest(*files: str | os.PathLike) -> str:
    """Hash of the source files that build an artefact: an edited builder invalidates its
    entries even when the version number stays the same (a development checkout).
    """
    h = hashlib.sha256()
    for f in files:
        h.update(Path(f).read_bytes())
    return h.hexdigest()[:16]


def _stat_part(path: str) -> str:
    parts = []
    for p in (path, path + ".wal"):
        if os.path.exists(p):
            st = os.stat(p)
            parts.append(f"{os.path.basename(p)}:{st.st_size}:{st.st_mtime_ns}")
    return ";".join(parts)


def content_identity(con: Any, path: str) -> str:
    """A cheap, sound identity of the database's content (see the module docstring)."""
    h = hashlib.sha256(_stat_part(path).encode())
    try:
        rows = con.execute(f"SELECT key, value FROM {MANIFEST_TABLE} ORDER BY key, value").fetchall()  # noqa: S608
        tables = con.execute(f"SELECT * FROM {_MANIFEST_TABLES} ORDER BY ALL").fetchall()  # noqa: S608
        h.update(b"manifest")
    except Exception:  # noqa: BLE001 - no manifest (a hand-built database): row counts stand in
        rows = []
        tables = con.execute("SELECT schema_name, table_name, estimated_size FROM duckdb_tables() "
                             "ORDER BY ALL").fetchall()
        h.update(b"tables")
    h.update(repr((rows, tables)).encode("utf-8"))
    return h.hexdigest()


def _default_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ehrlib"


def _writable_dir(d: Path) -> bool:
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return os.access(d, os.W_OK | os.X_OK)


def cache_dir(db_path: str) -> Path | None:
    """The cache folder of a database file (created), or None when caching is off or impossible."""
    env = os.environ.get(DIR_ENV, "").strip()
    if env.lower() in _OFF:
        return None
    p = Path(db_path).resolve()
    tag = f"{p.name}-{hashlib.sha256(str(p).encode()).hexdigest()[:12]}"
    if env:
        candidates = [Path(env) / tag]
    else:
        candidates = [p.with_name(p.name + _SUFFIX), _default_root() / tag]
    return next((d for d in candidates if _writable_dir(d)), None)


def entry_key(identity: str, artefact: str, digest: str) -> str:
    """The file-name key of one artefact of one database content, version and builder."""
    text = "|".join((identity, ehrlib.__version__, str(CACHE_FORMAT), artefact, digest))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


_LOCK = threading.Lock()


def _write_atomic(target: Path, write: Callable[[Any], None]) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        as_umask_allows(fd)   # readable like the database beside it, not mkstemp's 0600
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


#: the file names of one artefact's entries: ``<artefact>-<24 hex digits>.<ext>`` (so the entries of
#: "icd-crosswalk" are not those of "icd-crosswalk-parts"); ``.json`` is the value format before 2
_ENTRY_EXTS = (".pkl", ".npz", ".json")


def _prune(folder: Path, artefact: str, keep: Path) -> None:
    """Remove this artefact's entries for another content, version or format (stale: never read again)."""
    own = re.compile(re.escape(artefact) + r"-[0-9a-f]{24}(?:" + "|".join(map(re.escape, _ENTRY_EXTS)) + r")")
    for old in folder.glob(f"{artefact}-*"):
        if old != keep and own.fullmatch(old.name):
            try:
                old.unlink()
            except OSError:
                pass


_GC_LOCK = threading.Lock()
_gc_pauses = 0
_gc_was_enabled = True
_freeze_long_lived = False


def freeze_long_lived(on: bool = True) -> None:
    """Process policy, for a process ehrlib owns (the command line): build :func:`long_lived`
    data with the cyclic collector paused, then freeze it out of later collections.

    Off by default: a freeze also makes immortal whatever cyclic garbage exists at that
    moment, harmless in a batch process that ends, not something a library may do to its
    host (a notebook, a test session) unasked.
    """
    global _freeze_long_lived
    _freeze_long_lived = on


@contextlib.contextmanager
def long_lived() -> Iterator[None]:
    """Build data that lives as long as the process (a catalog, an index, an ontology);
    under :func:`freeze_long_lived`, with the cyclic garbage collector paused, then
    everything alive moved to its permanent generation (``gc.freeze``).

    Such data is hundreds of thousands of tuples, lists, sets and strings without reference
    cycles, so the collector finds nothing in it; yet building it triggers collections that
    traverse everything alive, and every later full collection traverses it again: about
    0.5 s of CPU in a one-note run. Reference counting still frees what the building drops.
    Nested and concurrent uses (threads) pause once; the outermost exit freezes and resumes.
    """
    global _gc_pauses, _gc_was_enabled
    if not _freeze_long_lived:
        yield
        return
    with _GC_LOCK:
        if _gc_pauses == 0:
            _gc_was_enabled = gc.isenabled()   # a caller's own gc.disable() is kept
            gc.disable()
        _gc_pauses += 1
    try:
        yield
    finally:
        with _GC_LOCK:
            _gc_pauses -= 1
            if _gc_pauses == 0:
                gc.freeze()
                if _gc_was_enabled:
                    gc.enable()


def _cached(location: Location | None, artefact: str, ext: str, read: Callable[[Path, str], T],
            build: Callable[[], T], write: Callable[[T, str, Any], None]) -> T:
    """The artefact from its cache entry, else built and stored (a damaged entry: warned,
    rebuilt); built or read as :func:`long_lived` data.
    """
    with long_lived():
        return _cached_now(location, artefact, ext, read, build, write)


def _cached_now(location: Location | None, artefact: str, ext: str, read: Callable[[Path, str], T],
                build: Callable[[], T], write: Callable[[T, str, Any], None]) -> T:
    if location is None:
        return build()
    folder, key, shared = location
    target = folder / f"{artefact}-{key}{ext}"
    for entry in (*(d / target.name for d in shared), target):
        if entry.is_file():
            try:
                return read(entry, key)
            except (CacheDamaged, OSError, ValueError, KeyError, TypeError, zipfile.BadZipFile, EOFError,
                    pickle.UnpicklingError) as exc:
                log.warning("damaged cache entry %s (%s): rebuilding it", entry, str(exc).splitlines()[0][:120]
                            if str(exc) else type(exc).__name__)
    value = build()
    try:
        _write_atomic(target, lambda fh: write(value, key, fh))
        _prune(folder, artefact, target)
    except (OSError, TypeError, ValueError, pickle.PicklingError) as exc:   # a read-only or full disk, not plain data
        log.info("could not write cache entry %s: %s", target, exc)
    return value


def location(con: Any, db_path: str, artefact: str, digest: str) -> Location | None:
    """(folder, key, read-only folders to try first) of an artefact's cache entry for this
    database; None without a file. A ``<db>.ehrlib-cache/`` this process cannot write (filled
    by whoever owns a shared database) is still read.
    """
    if not db_path or not os.path.isfile(db_path):
        return None
    folder = cache_dir(db_path)
    if folder is None:
        return None
    beside = Path(db_path).resolve()
    beside = beside.with_name(beside.name + _SUFFIX)
    shared = (beside,) if beside != folder and beside.is_dir() and not os.environ.get(DIR_ENV) else ()
    return folder, entry_key(content_identity(con, db_path), artefact, digest), shared


_MAGIC = b"ehrlib-cache-value\n"


class _PlainData(pickle.Unpickler):
    """An unpickler of plain data only: any class or function reference is refused, so a
    cache file can rebuild str, bytes, numbers, None, lists, tuples, dicts and sets, and call
    nothing.
    """

    def find_class(self, module: str, name: str) -> Any:
        raise CacheDamaged(f"refers to {module}.{name}")

    def persistent_load(self, pid: Any) -> Any:
        raise CacheDamaged("holds a persistent reference")


def _value_io(read_value: Callable[[Any], T]) -> tuple[Callable[[Path, str], T], Callable[[Any, str, Any], None]]:
    """Reader and writer of a value entry: magic line, key line, SHA-256 line of the payload,
    then the payload (a plain-data pickle); key and checksum are checked before unpickling.
    """

    def read(path: Path, key: str) -> T:
        data = path.read_bytes()
        if not data.startswith(_MAGIC):
            raise CacheDamaged("not a value entry")
        head_end = data.find(b"\n", len(_MAGIC))
        sum_end = data.find(b"\n", head_end + 1)
        if head_end < 0 or sum_end < 0 or data[len(_MAGIC):head_end] != key.encode("ascii"):
            raise CacheDamaged("wrong key or layout")
        payload = memoryview(data)[sum_end + 1:]
        if hashlib.sha256(payload).hexdigest().encode("ascii") != data[head_end + 1:sum_end]:
            raise CacheDamaged("checksum mismatch")
        value = _PlainData(io.BytesIO(payload)).load()
        try:
            return read_value(value)
        except Exception as exc:  # noqa: BLE001 - plain data of another shape (a stale layout): rebuilt
            raise CacheDamaged(f"unexpected content ({type(exc).__name__}: {exc})") from None

    def write(value: Any, key: str, fh: Any) -> None:
        payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        check = _PlainData(io.BytesIO(payload))   # what the reader would refuse is never written
        try:
            check.load()
        except CacheDamaged as exc:
            raise TypeError(f"not plain data: {exc}") from None
        fh.write(_MAGIC + key.encode("ascii") + b"\n" + hashlib.sha256(payload).hexdigest().encode("ascii") + b"\n")
        fh.write(payload)

    return read, write


def read_value_entry(path: Path, key: str) -> Any:
    """The plain data of one value entry written by :func:`write_value_entry` (CacheDamaged
    when its key, checksum or content is not as written).
    """
    read, _ = _value_io(lambda value: value)
    return read(path, key)


def write_value_entry(path: Path, key: str, value: Any) -> None:
    """Write plain data as a value entry (atomically; TypeError when it is not plain data)."""
    _, write = _value_io(lambda v: v)
    _write_atomic(path, lambda fh: write(value, key, fh))


class BucketedMap(Mapping[str, Any]):
    """A large str-keyed map read from a value entry bucket by bucket: the entry holds each
    bucket (the keys sharing their first two characters) as its own plain-data pickle, and a
    bucket is unpickled on its first lookup. A process that looks up a few dozen keys of a
    100,000-key map then decodes a few dozen small buckets, not the whole map. Read-only;
    equal to the dict it was made from (key order aside).
    """

    def __init__(self, buckets: Mapping[str, bytes], size: int) -> None:
        self._raw = dict(buckets)
        self._open: dict[str, dict[str, Any]] = {}
        self._size = size

    @staticmethod
    def encode(mapping: Mapping[str, Any]) -> dict[str, Any]:
        """The plain data of a map's entry (its buckets pickled separately)."""
        buckets: dict[str, dict[str, Any]] = {}
        for key, value in mapping.items():
            buckets.setdefault(key[:2], {})[key] = value
        return {"size": len(mapping), "buckets": {b: pickle.dumps(part, protocol=pickle.HIGHEST_PROTOCOL)
                                                  for b, part in buckets.items()}}

    @classmethod
    def decode(cls, value: Any) -> BucketedMap:
        """The map of :meth:`encode`'s plain data (TypeError for another shape)."""
        if not (isinstance(value, dict) and isinstance(value.get("buckets"), dict)
                and isinstance(value.get("size"), int)
                and all(isinstance(k, str) and isinstance(v, bytes) for k, v in value["buckets"].items())):
            raise TypeError("not a bucketed map")
        return cls(value["buckets"], value["size"])

    def _bucket(self, name: str) -> dict[str, Any]:
        part = self._open.get(name)
        if part is None:
            raw = self._raw.get(name)
            part = {} if raw is None else _PlainData(io.BytesIO(raw)).load()   # plain data only, like the entry
            if not isinstance(part, dict):
                raise CacheDamaged("a bucket is not a map")
            self._open[name] = part   # (two threads decoding one bucket store equal dicts)
        return part

    def __getitem__(self, key: str) -> Any:
        if not isinstance(key, str):
            raise KeyError(key)
        return self._bucket(key[:2])[key]

    def __iter__(self) -> Iterator[str]:
        for name in self._raw:
            yield from self._bucket(name)

    def __len__(self) -> int:
        return self._size


def cached_value(con: Any, db_path: str, artefact: str, digest: str, build: Callable[[], T],
                 encode: Callable[[T], Any], decode: Callable[[Any], T]) -> T:
    """An artefact of a database: ``decode(payload)`` of its entry, else ``build()`` stored as
    ``encode(value)`` (plain data: see the module docstring).
    """
    with _LOCK:
        where = location(con, db_path, artefact, digest)
    read, write = _value_io(decode)
    return _cached(where, artefact, ".pkl", read, build, lambda v, k, fh: write(encode(v), k, fh))


def package_location(artefact: str, source: Path, digest: str) -> Location | None:
    """Where an artefact derived from another package's data file ``source`` (identified by
    path, size and modification time) is kept: the user cache folder (``$EHRLIB_CACHE_DIR``
    or ``$XDG_CACHE_HOME/ehrlib``) under ``packages/``; None when caching is off or impossible.
    """
    env = os.environ.get(DIR_ENV, "").strip()
    folder = None if env.lower() in _OFF else (Path(env) if env else _default_root()) / "packages"
    if folder is None or not source.is_file() or not _writable_dir(folder):
        return None
    st = source.stat()
    return folder, entry_key(f"{source.resolve()}:{st.st_size}:{st.st_mtime_ns}", artefact, digest), ()


def cached_package_value(artefact: str, source: Path, digest: str, build: Callable[[], T],
                         encode: Callable[[T], Any], decode: Callable[[Any], T]) -> T:
    """Like :func:`cached_value` for an artefact derived from another package's data file
    (:func:`package_location`).
    """
    read, write = _value_io(decode)
    return _cached(package_location(artefact, source, digest), artefact, ".pkl", read, build,
                   lambda v, k, fh: write(encode(v), k, fh))


def cached_arrays(con: Any, db_path: str, artefact: str, digest: str, build: Callable[[], T],
                  encode: Callable[[T], dict[str, np.ndarray]], decode: Callable[[dict[str, np.ndarray]], T]) -> T:
    """A numeric artefact as an ``.npz`` of plain arrays (read with ``allow_pickle=False``;
    zip CRCs catch a damaged member); the key is stored as the array ``__key__``.
    """
    import numpy as np  # deferred: the value entries (and the data files read through them) need no numpy

    def read(path: Path, key: str) -> T:
        with np.load(path, allow_pickle=False) as data:
            arrays = {name: data[name] for name in data.files}
        if str(arrays.pop("__key__", "")) != key:
            raise CacheDamaged("wrong key")
        return decode(arrays)

    def write(value: T, key: str, fh: Any) -> None:
        np.savez(fh, **{"__key__": np.array(key), **encode(value)})  # type: ignore[arg-type]  # arrays by name

    with _LOCK:
        where = location(con, db_path, artefact, digest)
    return _cached(where, artefact, ".npz", read, build, write)


def source_files(*modules: Any, data: Iterable[str] = ()) -> tuple[Path, ...]:
    """The source files of modules (and ``ehrlib/data`` files) for :func:`code_digest`."""
    root = Path(ehrlib.__file__).parent
    return (*(Path(m.__file__) for m in modules), *(root / "data" / d for d in data))
