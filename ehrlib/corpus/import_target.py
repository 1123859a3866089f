"""Where ``ehrlib notes import`` may write, and how it stages, commits and cleans up.

An import handles credentialed note text, so it must never delete, leak or lose data:

- OUT_DIR must be new (or an empty folder) or, with ``--overwrite``, a corpus folder
  holding an ``import.json`` this importer wrote. In an existing folder only the
  importer's own files (``import.json``, ``notes.jsonl``, and ``gold.jsonl`` for a
  labelled release) are replaced, each by an atomic rename; the only file ever removed is
  a ``gold.jsonl`` the earlier import listed as its own and the new one does not write.
  An OUT_DIR that is or contains the source, or lies under it, is refused.
- Everything is written in one staging folder beside OUT_DIR, ``.<name>.import``. It
  comes into being by an atomic rename of a private folder that already holds the owner
  file (pid), so it is also the lock: a second import into the same OUT_DIR is refused
  while the first runs, and no staging folder ever lacks its owner.
- The staging folder is removed on success, on any error, and on SIGTERM, SIGINT and
  SIGHUP (the handlers raise :class:`Interrupted`, so cleanup runs; the CLI then exits
  with 128 + the signal number). A SIGKILL cannot be handled: the next import into the
  same parent folder removes every staging folder whose owner process is gone.
"""
from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import shutil
import signal
import tempfile
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any, TypeVar

from ehrlib.errors import ConfigError, DataError, os_reason

__all__ = ["IMPORT_FILE", "Interrupted", "Target", "commit", "corpus_source_kind", "is_import_folder", "make_parents",
           "resolve_target", "staged", "sweep", "write_import"]

IMPORT_FILE = "import.json"
#: the file inside a staging folder that names its owner; nothing without it is ever removed
OWNER_FILE = "owner.json"
#: the staged corpus inside a staging folder; renamed to OUT_DIR (new) or emptied into it
CORPUS_DIR = "corpus"
_TOOL = "ehrlib notes import"
#: files an import may write, and so the only ones it may remove again (see :func:`commit`)
_CORPUS_FILES = ("notes.jsonl", "gold.jsonl")
_LOCK_SUFFIX = ".import"
#: a private folder before it becomes the lock: ``.<name>.import-<pid>-<random>``
_PRIVATE = re.compile(r"^\..*\.import-(\d+)-[^/]*$")
_SIGNALS = tuple(s for s in (signal.SIGTERM, signal.SIGINT, getattr(signal, "SIGHUP", None)) if s is not None)


T = TypeVar("T")


class Interrupted(KeyboardInterrupt):
    """A stop signal arrived during an import; the staging folder was removed on the way out."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"stopped by {signal.Signals(signum).name}")
        self.signum = signum


@dataclass(frozen=True, slots=True)
class Target:
    """A checked OUT_DIR: the folder it names (resolved) and whether it exists already."""

    given: Path
    path: Path
    existing: bool

    @property
    def lock(self) -> Path:
        """The staging folder, which is also the lock on this OUT_DIR."""
        return self.path.parent / f".{self.path.name}{_LOCK_SUFFIX}"


def is_import_folder(path: Path) -> bool:
    """Whether ``path`` holds an ``import.json`` written by this importer (a JSON object
    with its source, sha256 and ``source_kind``), i.e. a corpus ``--overwrite`` may replace.
    """
    try:
        record = json.loads((path / IMPORT_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(record, dict) and all(k in record for k in ("source", "sha256", "source_kind"))


def resolve_target(src: Path, out: Path, overwrite: bool) -> Target:
    """The OUT_DIR an import may write, or ConfigError (one line) saying why not."""
    if out.is_symlink() and not out.exists():
        raise ConfigError(f"{out} is a symbolic link to nothing; give the folder itself")
    path, source = out.resolve(), src.resolve()
    if path == source or path in source.parents:
        raise ConfigError(f"{out} is or contains the source file {src}; choose an output folder outside it")
    if source in path.parents:
        raise ConfigError(f"{out} lies under the source file {src}; choose an output folder outside it")
    try:
        for parent in path.parents:
            if parent.exists():
                if not parent.is_dir():
                    raise ConfigError(f"cannot create {out}: {parent} is a file, not a folder")
                break
        if not path.exists():
            return Target(out, path, existing=False)
        if not path.is_dir():
            raise ConfigError(f"{out} is a file; the output must be a folder")
        if not any(path.iterdir()):
            return Target(out, path, existing=True)
    except OSError as exc:
        raise ConfigError(f"cannot use {out}: {os_reason(exc)} ({exc.filename or path})") from None
    if not is_import_folder(path):
        raise ConfigError(f"{out} exists and is not a corpus folder written by `ehrlib notes import` (no "
                          "import.json of its own); an import never writes there, even with --overwrite: "
                          "choose a new folder")
    if not overwrite:
        raise ConfigError(f"{out} exists; pass --overwrite to replace its notes.jsonl and import.json")
    return Target(out, path, existing=True)


def corpus_source_kind(corpus_dir: str | os.PathLike[str] | None) -> str | None:
    """``credentialed`` for a corpus this importer wrote (its import.json says so), else None.

    MIMIC notes exist only under PhysioNet's credentialed licence, so the PHI guard must
    treat such a corpus as credentialed even when it runs against the open demo database
    (the demo's admissions are real MIMIC-III admissions). An unreadable import.json
    counts as credentialed: the guard fails closed.
    """
    if corpus_dir is None:
        return None
    path = Path(corpus_dir) / IMPORT_FILE
    if not path.exists():
        return None
    try:
        return str(json.loads(path.read_text(encoding="utf-8")).get("source_kind") or "credentialed")
    except (OSError, ValueError, AttributeError):
        return "credentialed"


def make_parents(target: Target) -> list[Path]:
    """Create OUT_DIR's missing parent folders; returns those created, outermost first (the
    caller removes them again if the import fails).
    """
    parent = target.path.parent
    missing = [p for p in (parent, *parent.parents) if not p.exists()][::-1]
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot create {target.given}: {os_reason(exc)} ({exc.filename or parent})") from None
    return missing


def _alive(pid: int) -> bool:
    """Whether a process with this id exists (one of another user counts)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return True
    return True


def _owner_record(folder: Path) -> dict[str, Any] | None:
    """A staging folder's owner file (tool, pid, token), or None if it has none of ours."""
    try:
        record = json.loads((folder / OWNER_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("tool") != _TOOL or not isinstance(record.get("pid"), int):
        return None
    return record


def _owner(folder: Path) -> int | None:
    """The pid that owns a staging folder, or None if it has no owner file of ours."""
    record = _owner_record(folder)
    return None if record is None else int(record["pid"])


def _stale_pid(entry: Path) -> int | None:
    """The dead owner's pid if ``entry`` is a staging folder of an import that is gone, else None."""
    if entry.is_symlink() or not entry.is_dir():
        return None
    if entry.name.endswith(_LOCK_SUFFIX):
        pid = _owner(entry)
    elif m := _PRIVATE.match(entry.name):
        # killed before it became the lock: holds its owner file and an empty corpus folder at most
        try:
            if {p.name for p in entry.iterdir()} - {OWNER_FILE, CORPUS_DIR} or any((entry / CORPUS_DIR).glob("*")):
                return None
        except OSError:
            return None
        pid = int(m.group(1))
    else:
        return None
    return pid if pid is not None and not _alive(pid) else None


def sweep(parent: Path) -> list[Path]:
    """Remove the staging folders in ``parent`` left by imports whose process is gone
    (a SIGKILL, a power cut); returns what was removed. Best effort: an entry that cannot
    be read or removed is left alone.
    """
    removed: list[Path] = []
    try:
        entries = [e for e in parent.iterdir() if e.name.startswith(".") and ".import" in e.name]
    except OSError:
        return removed
    for entry in entries:
        if _stale_pid(entry) is not None:
            _remove(entry)
            if not entry.exists():
                removed.append(entry)
    return removed


def _remove(folder: Path) -> None:
    """Remove a staging folder, its owner file last: cut short, it can still be swept."""
    if folder.is_symlink():  # never follow a link planted where a staging folder goes
        return
    with contextlib.suppress(OSError):
        for child in folder.iterdir():
            if child.name != OWNER_FILE:
                shutil.rmtree(child, ignore_errors=True) if child.is_dir() and not child.is_symlink() \
                    else child.unlink(missing_ok=True)
        (folder / OWNER_FILE).unlink(missing_ok=True)
        folder.rmdir()


def _acquire(target: Target, token: str) -> Path:
    """Create the staging folder (the lock) with its owner file in it; ConfigError if another
    live import holds it.
    """
    lock = target.lock
    pid = os.getpid()
    try:
        private = Path(tempfile.mkdtemp(prefix=f".{target.path.name}.import-{pid}-", dir=lock.parent))
    except OSError as exc:
        raise ConfigError(f"cannot create {target.given}: {os_reason(exc)} ({lock.parent})") from None
    try:
        owner = {"tool": _TOOL, "pid": pid, "token": token, "out": str(target.path)}
        (private / OWNER_FILE).write_text(json.dumps(owner) + "\n", encoding="utf-8")
        (private / CORPUS_DIR).mkdir(mode=0o700)
        for attempt in (1, 2):
            try:
                os.rename(private, lock)
                return lock
            except OSError as exc:
                if exc.errno not in (errno.EEXIST, errno.ENOTEMPTY, errno.ENOTDIR) or attempt == 2:
                    raise
                holder = _owner(lock)
                if holder is None:
                    raise ConfigError(f"cannot import into {target.given}: {lock} is in the way and was not made "
                                      "by an import; remove it if it is not yours") from None
                if _alive(holder):
                    raise ConfigError(f"another import into {target.given} is running (pid {holder}); wait for it, "
                                      f"or remove {lock} if that process is not an import") from None
                _remove(lock)  # its owner is gone: a killed import's leftovers
        raise AssertionError("unreachable")
    except OSError as exc:
        raise ConfigError(f"cannot create {target.given}: {os_reason(exc)} ({exc.filename or lock})") from None
    finally:
        shutil.rmtree(private, ignore_errors=True)


class _Stop:
    """Signal state of the import in progress (Python runs handlers in the main thread only)."""

    deferring: bool = False
    pending: int | None = None


def _on_signal(signum: int, _frame: FrameType | None) -> None:
    for s in _SIGNALS:  # one stop is enough: let the cleanup finish
        signal.signal(s, signal.SIG_IGN)
    if _Stop.deferring:
        _Stop.pending = signum
        return
    raise Interrupted(signum)


@contextlib.contextmanager
def _uninterrupted() -> Iterator[None]:
    """Hold a stop signal until the block is done (the renames of a commit belong together)."""
    _Stop.deferring, _Stop.pending = True, None
    try:
        yield
    finally:
        _Stop.deferring = False
    if _Stop.pending is not None:
        raise Interrupted(_Stop.pending)


@contextlib.contextmanager
def staged(target: Target) -> Iterator[Path]:
    """The staged corpus folder (inside the lock); the whole staging folder is removed on the
    way out, whatever happens, and stop signals unwind through here.
    """
    sweep(target.path.parent)
    previous: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        previous = {s: signal.signal(s, _on_signal) for s in _SIGNALS}
    token = f"{os.getpid()}-{uuid.uuid4().hex}"
    try:
        yield _acquire(target, token) / CORPUS_DIR
    finally:
        if (_owner_record(target.lock) or {}).get("token") == token:  # ours, even if a signal cut _acquire short
            _remove(target.lock)
        for s, handler in previous.items():
            signal.signal(s, handler if handler is not None else signal.SIG_DFL)


def commit(staging: Path, target: Target, files: tuple[str, ...]) -> None:
    """Move the staged corpus into place: a new OUT_DIR appears whole by one rename; in an
    existing one each of ``files`` is replaced by its own rename, in the order given, and
    a corpus file the earlier import wrote that this one does not (its ``gold.jsonl``,
    when labelled notes are replaced by unlabelled ones) is removed: it would describe
    notes that are gone.
    """
    with _uninterrupted():
        _commit(staging, target, files)


def _stale(target: Target, files: tuple[str, ...]) -> list[str]:
    """The corpus files the earlier import in ``target`` listed as its own and this one does not write."""
    try:
        record = json.loads((target.path / IMPORT_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    listed = record.get("files") if isinstance(record, dict) else None
    return [f for f in listed or () if f in _CORPUS_FILES and f not in files]


def _commit(staging: Path, target: Target, files: tuple[str, ...]) -> None:
    try:
        if not target.existing:
            try:
                os.rename(staging, target.path)
            except OSError as exc:
                if exc.errno in (errno.EEXIST, errno.ENOTEMPTY):
                    raise ConfigError(f"{target.given} was created by someone else during the import; nothing "
                                      "was written") from None
                raise
        else:
            stale = _stale(target, files)
            for name in files:
                os.replace(staging / name, target.path / name)
            for name in stale:
                (target.path / name).unlink(missing_ok=True)
        with contextlib.suppress(OSError):  # make the renames durable
            fd = os.open(target.path.parent, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
    except OSError as exc:
        raise DataError(f"cannot write {target.given}: {os_reason(exc)} ({exc.filename or target.path})") from None


def write_import(src: Path, out: Path, overwrite: bool, files: tuple[str, ...], write: Callable[[Path], T]) -> T:
    """Check OUT_DIR, stage, let ``write`` fill the staged folder, and commit ``files``
    (import.json first: an existing corpus never holds notes without their record).

    An OSError from ``write`` becomes a one-line DataError; parent folders created for an
    OUT_DIR that never came to be are removed again.
    """
    target = resolve_target(src, out, overwrite)
    made = make_parents(target)
    try:
        with staged(target) as staging:
            try:
                result = write(staging)
            except OSError as exc:
                where = exc.filename or staging
                raise DataError(f"cannot write {out}: {os_reason(exc)} ({where}); nothing was written") from None
            commit(staging, target, files)
        made = []
        return result
    finally:
        for folder in reversed(made):
            with contextlib.suppress(OSError):
                folder.rmdir()
