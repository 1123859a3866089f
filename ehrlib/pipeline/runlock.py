"""One writer per run directory, a ledger read line by line, run-folder OS errors as one line.

Two processes resuming the same run id would each skip the notes the other had not yet
committed and both write the rest: every such note twice in ``predictions.jsonl``. So
the writer holds an exclusive ``flock`` on ``<run_dir>/.lock`` for its whole life and a
second writer is refused at once (the lock dies with its process, so a kill -9 never
leaves a stale lock behind).

The ledger (``progress.jsonl``) is read line by line: a damaged complete line (a disk
error, a hand edit) is reported with its number and skipped, and the lines after it
still count. The notes whose ledger line was lost are found from the records they left
in the committed part of the data files, so they are not run (and written) again.
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from ehrlib.errors import ConfigError, DataError, os_reason

__all__ = ["RunLock", "RunInUseError", "prepare_run_dir", "read_ledger_lines", "committed_note_ids",
           "run_dir_errors"]

LOCK_FILE = ".lock"


class RunInUseError(ConfigError):
    """Another process is writing this run directory."""


def _os_message(path: Path, exc: OSError, action: str) -> str:
    why = os_reason(exc)
    return f"cannot {action} run folder {path}: {why}"


def prepare_run_dir(run_dir: Path) -> Path:
    """Create ``run_dir`` (and parents); DataError, one line, when the OS refuses."""
    run_dir = Path(run_dir)
    if run_dir.exists() and not run_dir.is_dir():
        raise DataError(f"run folder {run_dir} is a file; remove it or choose another --run-id/--runs-dir")
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataError(_os_message(run_dir, exc, "create")) from None
    return run_dir


@contextlib.contextmanager
def run_dir_errors(run_dir: Path) -> Iterator[None]:
    """Turn an OSError while writing the run folder (full disk, read-only) into one DataError
    line; the run resumes from its ledger once the cause is fixed.
    """
    try:
        yield
    except OSError as exc:
        name = exc.filename and str(Path(exc.filename).resolve())
        if name and not name.startswith(str(Path(run_dir).resolve())):
            raise
        raise DataError(_os_message(Path(run_dir), exc, "write") + "; fix that and rerun the same "
                        "--run-id to resume") from None


class RunLock:
    """An exclusive, non-blocking lock on a run directory, held until :meth:`release`."""

    def __init__(self, run_dir: Path) -> None:
        self.path = Path(run_dir) / LOCK_FILE
        try:
            self._fh = open(self.path, "a+", encoding="utf-8")
        except OSError as exc:
            raise DataError(_os_message(Path(run_dir), exc, "lock")) from None
        try:
            fcntl.flock(self._fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._fh.seek(0)
            holder = self._fh.read().strip() or "another process"
            self._fh.close()
            raise RunInUseError(f"run {Path(run_dir).name} is being written by {holder}; wait for it to finish "
                                "or use a new --run-id") from None
        except OSError as exc:      # a file system without locks: refuse rather than risk two writers
            self._fh.close()
            raise DataError(_os_message(Path(run_dir), exc, "lock")) from None
        self._fh.seek(0)
        self._fh.truncate()
        self._fh.write(f"pid {os.getpid()}\n")
        self._fh.flush()

    def release(self) -> None:
        """Release the lock and close its file (idempotent)."""
        if not self._fh.closed:
            fcntl.flock(self._fh.fileno(), fcntl.LOCK_UN)
            self._fh.close()


def read_ledger_lines(path: Path) -> tuple[list[dict[str, Any]], list[tuple[int, str]]]:
    """(entries, damaged) of a ledger file: every complete line that is a ledger entry, and
    ``(line number, why)`` for each that is not. A last line without its newline is a
    commit in flight, neither an entry nor damage.
    """
    path = Path(path)
    if not path.exists():
        return [], []
    data = path.read_bytes()
    lines = data.split(b"\n")
    if lines and lines[-1] != b"":
        lines = lines[:-1]          # half-written last line
    entries, damaged = [], []
    for no, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            entry = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
            damaged.append((no, "not JSON"))
            continue
        if not (isinstance(entry, dict) and isinstance(entry.get("note_id"), str)
                and isinstance(entry.get("offsets"), dict)):
            damaged.append((no, "not a ledger entry"))
            continue
        entries.append(entry)
    return entries, damaged


def committed_note_ids(run_dir: Path, files: Iterable[str], offsets: Mapping[str, int]) -> set[str]:
    """Note ids with at least one record in the committed part (``offsets``) of the data
    files: a note's records are appended only when it commits.
    """
    out: set[str] = set()
    for name in files:
        path = Path(run_dir) / name
        keep = int(offsets.get(name, 0))
        if not keep or not path.exists():
            continue
        with open(path, "rb") as fh:
            for raw in fh.read(keep).split(b"\n"):
                try:
                    note_id = json.loads(raw).get("note_id") if raw.strip() else None
                except (json.JSONDecodeError, AttributeError, UnicodeDecodeError):
                    continue
                if isinstance(note_id, str):
                    out.add(note_id)
    return out
