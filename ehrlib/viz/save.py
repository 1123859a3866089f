"""Saving figures: ``figures/<NN>_<name>.<fmt>``, atomically, with the notebook's number."""
from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Sequence
from pathlib import Path

from matplotlib.figure import Figure

from ehrlib.filemodes import as_umask_allows

__all__ = ["savefig", "FIGURES_DIR"]

FIGURES_DIR = "figures"


def savefig(fig: Figure, name: str, *, prefix: str | int | None = None,
            out_dir: str | os.PathLike[str] = FIGURES_DIR, formats: Sequence[str] = ("png", "svg"),
            dpi: int = 200) -> list[Path]:
    """Write ``fig`` as ``<out_dir>/<prefix>_<name>.<fmt>`` for each format; returns the paths.

    ``prefix`` is the notebook number (``4`` → ``04``) or any tag such as a run id, so a
    figure can be traced back to what made it. Each file is written to a temporary name
    and renamed, so an interrupted save never leaves a truncated PNG behind.
    """
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        raise ValueError(f"figure name {name!r}: use letters, digits, '_', '-', '.'")
    tag = f"{prefix:02d}" if isinstance(prefix, int) else prefix
    stem = f"{tag}_{name}" if tag else name
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for fmt in formats:
        target = out / f"{stem}.{fmt}"
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=f".{fmt}", dir=out)
        as_umask_allows(fd)     # mkstemp makes 0600; savefig rewrites the file, keeping the mode
        os.close(fd)
        try:
            fig.savefig(tmp, format=fmt, dpi=dpi, bbox_inches="tight",
                        metadata={"Date": None} if fmt == "svg" else None)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        paths.append(target)
    return paths
