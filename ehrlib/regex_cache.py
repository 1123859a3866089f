"""Compiled regular expressions kept on disk between processes (a process policy of the
command line, like :func:`ehrlib.disk_cache.freeze_long_lived`).

ehrlib compiles about 1,700 regular expressions in a one-note run (module constants, and
patterns built from its YAML vocabularies and from the database's item names), and
Python's ``re`` parses and assembles each from its text in pure Python: about 0.3 s of CPU
in every fresh process. What that work produces is plain data: the arguments
``re._compiler.compile`` hands to the C engine (``_sre.compile``: flags, the code as a list
of integers, the group count and names). :func:`install` records them and keeps them in a
cache file; a later process hands the recorded arguments to ``_sre.compile`` directly,
skipping the parser and the assembler, and gets the same pattern object (compiled patterns
compare equal when their flags and code are equal, and :func:`install` checks that once
per process on a probe pattern before trusting the file).

Where: ``packages/regex-<key>.pkl`` in the user cache folder of :mod:`ehrlib.disk_cache`
(``$EHRLIB_CACHE_DIR``, else ``$XDG_CACHE_HOME/ehrlib``; ``EHRLIB_CACHE_DIR=off`` turns it
off); the key is the Python version and the regular-expression engine's version, since
the code format is the engine's. The file is a value entry of :mod:`ehrlib.disk_cache`
(checksummed, plain data only: a cache file cannot run code; the engine validates the code
it is given). A process that compiled patterns the file lacked rewrites it at exit when
compiling them cost more than a rewrite (:data:`WORTH_WRITING_S`), atomically, with at most
:data:`MAX_ENTRIES` patterns: past that, the patterns this
process used. A damaged file is ignored with a warning and rewritten.
"""
from __future__ import annotations

import atexit
import importlib
import logging
import re
import sys
import threading
import time
from pathlib import Path
from typing import Any

__all__ = ["install", "installed", "MAX_ENTRIES", "WORTH_WRITING_S"]

log = logging.getLogger(__name__)

#: bumped when the layout of the file changes
_FORMAT = 1
#: patterns kept in the file: about 1,700 are compiled in every run (module constants and
#: vocabularies), patterns built from a patient's rows add some each note, and a file with
#: every development set's patterns (3,600) reads in 0.02-0.04 s, so the bound keeps reading
#: it far cheaper than compiling
MAX_ENTRIES = 4_000
#: CPU seconds of compiling that pay for rewriting the file (about what a rewrite costs)
WORTH_WRITING_S = 0.02
_PROBE = (r"(?P<word>[a-z]+)\s*(?:\d+(?:\.\d+)?|n/?a)\b", int(re.IGNORECASE))

_lock = threading.Lock()
_tls = threading.local()
_state: dict[str, Any] = {}


def installed() -> bool:
    """Whether this process compiles through the cache."""
    return bool(_state)


def _engine() -> tuple[Any, Any] | None:
    """(``re._compiler``, ``_sre``) when this Python compiles the way this module expects."""
    try:   # private modules of CPython's re (typed nowhere): by name
        sre, compiler = importlib.import_module("_sre"), importlib.import_module("re._compiler")
    except ImportError:
        return None
    if not callable(getattr(compiler, "compile", None)) or getattr(compiler, "_sre", None) is not sre:
        return None
    return compiler, sre


def _location() -> Path | None:
    from ehrlib import disk_cache  # deferred: the cache machinery is loaded by the process that installs

    loc = disk_cache.package_location("regex", Path(__file__), f"{_FORMAT}")
    if loc is None:
        return None
    folder, _key, _shared = loc
    sre = importlib.import_module("_sre")
    engine = f"{sys.version}|{sre.MAGIC}|{sre.CODESIZE}|{_FORMAT}"
    return folder / f"regex-{disk_cache.entry_key(engine, 'regex', str(_FORMAT))}.pkl"


def install() -> bool:
    """Compile this process's regular expressions through the disk cache (idempotent);
    False when it cannot (the cache is off or unwritable, another Python's engine).
    """
    with _lock:
        if _state:
            return True
        engine = _engine()
        path = _location() if engine is not None else None
        if engine is None or path is None:
            return False
        compiler, sre = engine
        known = _read(path)
        original, real_sre_compile = compiler.compile, sre.compile

        def capture(pattern: Any, flags: int, code: list[int], groups: int, groupindex: dict[str, int],
                    indexgroup: tuple[str | None, ...]) -> Any:
            sink = getattr(_tls, "sink", None)
            if sink is not None:
                sink.append((flags, code, groups, groupindex, indexgroup))
            return real_sre_compile(pattern, flags, code, groups, groupindex, indexgroup)

        def compile_(p: Any, flags: int = 0) -> Any:
            if not isinstance(p, (str, bytes)) or flags & re.DEBUG:
                return original(p, flags)
            key = (p, flags)
            args = known.get(key)
            if args is not None:
                used.add(key)
                return real_sre_compile(p, *args)
            sink: list[tuple[Any, ...]] = []
            _tls.sink = sink
            t0 = time.thread_time()
            try:
                compiled = original(p, flags)
            finally:
                _tls.sink = None
                spent[0] += time.thread_time() - t0
            if len(sink) == 1 and len(new) < MAX_ENTRIES:
                # plain ints: the assembler's opcodes are int subclasses, not plain data
                final_flags, code, groups, groupindex, indexgroup = sink[0]
                new[key] = (int(final_flags), [int(c) for c in code], groups, dict(groupindex), indexgroup)
            return compiled

        used: set[tuple[Any, int]] = set()
        new: dict[tuple[Any, int], tuple[Any, ...]] = {}
        spent = [0.0]   # CPU seconds compiling patterns the file lacked
        if known and not _agrees(real_sre_compile, original, known):
            log.warning("regex cache %s does not match this Python's compiler: rebuilding it", path)
            known.clear()
        sre.compile = capture
        compiler.compile = compile_
        compile_(*_PROBE)   # used (or recorded): every file holds the probe the next process checks
        _state.update(path=path, known=known, used=used, new=new, spent=spent)
        atexit.register(_save)
        return True


def _agrees(sre_compile: Any, original: Any, known: dict[tuple[Any, int], tuple[Any, ...]]) -> bool:
    """Whether the file's recorded arguments give the pattern this Python compiles, on the
    probe (the file is this Python's by its name; this checks the way it is used).
    """
    args = known.get(_PROBE)
    try:
        return args is not None and bool(sre_compile(_PROBE[0], *args) == original(*_PROBE))
    except Exception:  # noqa: BLE001 - arguments this engine refuses: a file from elsewhere
        return False


def _read(path: Path) -> dict[tuple[Any, int], tuple[Any, ...]]:
    from ehrlib.disk_cache import CacheDamaged, read_value_entry  # deferred: see _location

    if not path.is_file():
        return {}
    try:
        entries = read_value_entry(path, path.stem.rsplit("-", 1)[-1])
        return {(p, f): tuple(args) for p, f, *args in entries}
    except (CacheDamaged, OSError, ValueError, TypeError, EOFError) as exc:
        log.warning("damaged regex cache %s (%s): rebuilding it", path, str(exc)[:120] or type(exc).__name__)
        return {}


def _save() -> None:
    """Write the file at exit when this process compiled patterns it lacked, and when that
    is worth a rewrite: no file yet, or compiling them cost more than writing it (a pattern
    or two new in each run, say one built from a set in its hash order, would otherwise
    rewrite the file every time).
    """
    from ehrlib.disk_cache import write_value_entry  # deferred: see _location

    with _lock:
        if not _state or not _state["new"] or (_state["known"] and _state["spent"][0] < WORTH_WRITING_S):
            return
        path: Path = _state["path"]
        known, used, new = _state["known"], _state["used"], _state["new"]
        keep = dict(known) if len(known) + len(new) <= MAX_ENTRIES else {k: known[k] for k in used}
        keep.update(new)
        if _PROBE in keep:
            keep[_PROBE] = keep.pop(_PROBE)   # last: kept by the bound below
        entries = [(p, f, *args) for (p, f), args in list(keep.items())[-MAX_ENTRIES:]]
        new.clear()
    try:
        write_value_entry(path, path.stem.rsplit("-", 1)[-1], entries)
    except (OSError, TypeError, ValueError) as exc:   # a read-only or full disk
        log.info("could not write regex cache %s: %s", path, exc)

