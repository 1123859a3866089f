"""Compiled dataclass methods kept with ehrlib's own bytecode (a process policy of the
command line, like :mod:`ehrlib.regex_cache`).

``@dataclass`` writes the source of each class's ``__init__``, ``__repr__``, ``__eq__``,
``__hash__`` (and, frozen, ``__setattr__``/``__delattr__``) and compiles it when the class is
defined: a fresh ``ehrlib run`` defines about 160 dataclasses and compiles about 950 such
snippets, about 0.1 s of CPU that Python's bytecode cache does not cover (the source is
made at run time). :func:`install` has the ``dataclasses`` module compile through a cache:
the code object of each snippet, keyed by its exact source text, compiled as ``exec`` would
(file name ``<string>``, no inherited future flags), so the methods are the same.

Where: beside ehrlib's compiled modules, in the folder Python keeps them in
(``importlib.util.cache_from_source``: ``ehrlib/__pycache__/``, or under
``PYTHONPYCACHEPREFIX``): the file holds code, so it lives where code of the same trust
already is, never in the disk cache (whose files cannot run code). Like Python's bytecode it
is written only when Python may write bytecode (``PYTHONDONTWRITEBYTECODE`` unset) and the
folder is writable; it is keyed by Python's bytecode magic number and checksummed, and a
file that does not check out is ignored and rewritten.
"""
from __future__ import annotations

import atexit
import contextlib
import dataclasses
import hashlib
import importlib.util
import marshal
import os
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

import ehrlib

__all__ = ["install", "installed", "MAX_ENTRIES"]

#: snippets kept (about 950 in a run; the classes of other commands add a few hundred)
MAX_ENTRIES = 4_000
_TAG = b"ehrlib-dataclass-code\n"

_lock = threading.Lock()
_state: dict[str, Any] = {}


def installed() -> bool:
    """Whether this process compiles dataclass methods through the cache."""
    return bool(_state)


def _path() -> Path | None:
    try:
        pyc = importlib.util.cache_from_source(str(ehrlib.__file__))
    except (NotImplementedError, ValueError):   # no bytecode cache in this Python
        return None
    # like a .pyc's name: the interpreter, and the optimisation level compile() applies
    opt = f".opt-{sys.flags.optimize}" if sys.flags.optimize else ""
    return Path(pyc).parent / f"ehrlib-dataclass-code.{sys.implementation.cache_tag}{opt}.bin"


def _header() -> bytes:
    return _TAG + importlib.util.MAGIC_NUMBER + b"\n"


def _read(path: Path) -> dict[str, bytes]:
    try:
        data = path.read_bytes()
    except OSError:
        return {}
    head = _header()
    digest_end = len(head) + 64
    payload = data[digest_end:]
    if not data.startswith(head) or hashlib.sha256(payload).hexdigest().encode("ascii") != data[len(head):digest_end]:
        return {}
    try:
        known = marshal.loads(payload)
    except (EOFError, ValueError, TypeError):
        return {}
    if not isinstance(known, dict) or not all(isinstance(k, str) and isinstance(v, bytes) for k, v in known.items()):
        return {}
    return known


def install() -> bool:
    """Compile this process's dataclass methods through the cache (idempotent); False when
    it cannot (no bytecode cache, or ``dataclasses`` already compiles through someone else's).
    """
    with _lock:
        if _state:
            return True
        path = _path()
        if path is None or "exec" in vars(dataclasses):
            return False
        known = _read(path)
        used: set[str] = set()
        new: dict[str, bytes] = {}

        def exec_(source: Any, globals_: Any = None, locals_: Any = None, /, **kwargs: Any) -> None:
            if kwargs or not isinstance(source, str):   # not the call this cache knows: as asked
                exec(source, globals_, locals_, **kwargs)  # noqa: S102 - what dataclasses asked for, unchanged
                return
            code = None
            raw = known.get(source)
            if raw is not None:
                with contextlib.suppress(EOFError, ValueError, TypeError):
                    code = marshal.loads(raw)
                    used.add(source)
            if code is None:
                # as exec(source) compiles it from the dataclasses module (no future flags there)
                code = compile(source, "<string>", "exec", dont_inherit=True)
                if len(new) < MAX_ENTRIES:
                    new[source] = marshal.dumps(code)
            exec(code, globals_, locals_)  # noqa: S102 - the code dataclasses generated

        dataclasses.exec = exec_  # type: ignore[attr-defined]  # shadows the builtin in that module only
        _state.update(path=path, known=known, used=used, new=new)
        atexit.register(_save)
        return True


def _save() -> None:
    """Write the file when this process compiled snippets it lacked (at exit), as Python
    writes bytecode: not when bytecode writing is off, silently not when it cannot.
    """
    with _lock:
        if not _state or not _state["new"] or sys.dont_write_bytecode:
            return
        path: Path = _state["path"]
        known, used, new = _state["known"], _state["used"], _state["new"]
        keep = dict(known) if len(known) + len(new) <= MAX_ENTRIES else {k: known[k] for k in used}
        keep.update(new)
        new.clear()
    payload = marshal.dumps(keep)
    data = _header() + hashlib.sha256(payload).hexdigest().encode("ascii") + payload
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except OSError:
        pass   # a read-only install: compiled each time, as before
