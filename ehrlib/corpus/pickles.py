"""Loading EHRCon's label pickles without trusting them more than necessary.

A pickle can run any code while it loads, and EHRCon ships its labels only as pickles.
Two limits keep that contained:

- **Place**: only files inside the release folder the user named are unpickled. Every
  path is resolved (symbolic links followed) and refused if it lands outside that
  folder, so a link planted in a release cannot make the importer load a file from
  elsewhere.
- **Content**: the unpickler rebuilds plain data only (dicts, lists, strings, numbers,
  dates and numpy scalars, which a label file made with pandas may hold). A pickle that
  names any other class or function is refused before anything of it runs.

Neither makes a hostile file safe to open in general; they make the importer refuse
what an EHRCon label file never contains.
"""
from __future__ import annotations

import io
import os
import pickle
from pathlib import Path
from typing import Any

from ehrlib.errors import ConfigError, DataError

__all__ = ["inside", "load_label_pickle"]

#: (module, name) pairs a label file may rebuild: containers, numbers, dates, numpy scalars
_ALLOWED = frozenset({
    ("builtins", "dict"), ("builtins", "list"), ("builtins", "tuple"), ("builtins", "set"),
    ("builtins", "frozenset"), ("builtins", "str"), ("builtins", "int"), ("builtins", "float"),
    ("builtins", "bool"), ("builtins", "bytes"), ("builtins", "complex"),
    ("collections", "OrderedDict"), ("collections", "defaultdict"),
    ("datetime", "datetime"), ("datetime", "date"), ("datetime", "time"), ("datetime", "timedelta"),
    ("numpy", "dtype"), ("numpy.core.multiarray", "scalar"), ("numpy._core.multiarray", "scalar"),
})
#: a label pickle is a small dict; a file much larger than any release's is not one
MAX_BYTES = 256 * 1024 * 1024


class _PlainData(pickle.Unpickler):
    """An unpickler that rebuilds only :data:`_ALLOWED` types."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in _ALLOWED:
            raise pickle.UnpicklingError(f"it refers to {module}.{name}, which a label file never holds")
        return super().find_class(module, name)


def inside(path: Path, root: Path) -> Path:
    """``path`` resolved (links followed); ConfigError if that lies outside ``root`` (resolved)."""
    real, base = path.resolve(), root.resolve()
    if real != base and base not in real.parents:
        raise ConfigError(f"refusing {path}: it resolves to {real}, outside the release folder {base}; only files "
                          "inside the folder you name are read (label pickles can run code)")
    return real


def load_label_pickle(path: str | os.PathLike[str], root: str | os.PathLike[str] | None = None) -> Any:
    """The plain data in one label pickle; with ``root``, the file must lie inside it.

    ConfigError for a file outside ``root``; DataError (one line) for a file that is not a
    readable pickle of plain data.
    """
    path = Path(path)
    real = inside(path, Path(root)) if root is not None else path
    try:
        if real.stat().st_size > MAX_BYTES:
            raise DataError(f"{path}: {real.stat().st_size} bytes, larger than any EHRCon label file")
        data = real.read_bytes()
    except FileNotFoundError:
        raise DataError(f"{path}: file not found") from None
    except OSError as exc:
        raise DataError(f"{path}: cannot be read ({exc.strerror or type(exc).__name__})") from None
    try:
        return _PlainData(io.BytesIO(data)).load()
    except pickle.UnpicklingError as exc:
        raise DataError(f"{path}: not an EHRCon label pickle ({exc})") from None
    except Exception as exc:  # noqa: BLE001 - any damage in a foreign file is one error line
        raise DataError(f"{path}: not an EHRCon label pickle ({type(exc).__name__}: {exc})") from None
