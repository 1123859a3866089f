"""What a run id may be: one safe folder name under ``--runs-dir``.

A run id becomes the folder ``<runs_dir>/<run_id>/`` and the prefix of figure files, so
an id with a separator, ``.``/``..``, a control character or a name longer than file
systems take would put files outside the runs folder, into it loose, or fail deep in a
write. Every command that takes or reads a run id checks it here, once, up front.
"""
from __future__ import annotations

from ehrlib.errors import ConfigError

__all__ = ["MAX_RUN_ID_CHARS", "check_run_id"]

#: long enough for ``<method>-<backend>-<timestamp>-<variant>-r<k>``, short enough that
#: ``<run_id>_<figure>.svg`` stays under the usual 255-byte file name limit
MAX_RUN_ID_CHARS = 100


def check_run_id(run_id: str, *, where: str | None = None) -> str:
    """``run_id`` if it is one safe path component; else ConfigError saying why (after
    ``where``, e.g. the manifest the id was read from).
    """
    at = f"{where}: " if where else ""
    if not isinstance(run_id, str):
        raise ConfigError(f"{at}a run id must be text, got {type(run_id).__name__}")
    if not run_id.strip():
        raise ConfigError(f"{at}the run id is empty")
    if len(run_id) > MAX_RUN_ID_CHARS:
        raise ConfigError(f"{at}run id {run_id[:40]!r}... is {len(run_id)} characters; "
                          f"at most {MAX_RUN_ID_CHARS} are allowed")
    if not run_id.isprintable():
        raise ConfigError(f"{at}run id {run_id!r} contains a control character or line break")
    if "/" in run_id or "\\" in run_id:
        raise ConfigError(f"{at}run id {run_id!r} contains a path separator; "
                          "it names one folder under --runs-dir")
    if run_id in (".", ".."):
        raise ConfigError(f"{at}run id {run_id!r} is not a folder name")
    if run_id != run_id.strip():
        raise ConfigError(f"{at}run id {run_id!r} starts or ends with a space")
    return run_id
