"""Benchmarks behind `ehrlib bench` / `make bench`.

Every module in this package (except the commands in :data:`COMMANDS` and ``_private``
ones) is one benchmark: it exposes ``run(out_dir: pathlib.Path) -> pathlib.Path``, writes its result file (a CSV
under ``figures/``, e.g. ``bench_build.csv``) and returns its path. A benchmark that
cannot run here (its data is absent) raises :class:`BenchSkipped` with the reason.
Add a benchmark by adding a module; `ehrlib bench --only NAME` runs just that one.
"""
from __future__ import annotations

import pkgutil
from collections.abc import Iterable, Sequence
from pathlib import Path

__all__ = ["BenchSkipped", "available", "write_csv", "repo_root"]


class BenchSkipped(Exception):
    """The benchmark cannot run in this environment (e.g. the demo data is absent)."""


#: modules of this package that are commands or helpers, not benchmarks (no ``run``)
COMMANDS = frozenset({"cli", "calibrate", "calibration_doc"})


def available() -> list[str]:
    """Names of the benchmark modules in this package, sorted."""
    return sorted(m.name for m in pkgutil.iter_modules(__path__)
                  if m.name not in COMMANDS and not m.name.startswith("_"))


def repo_root() -> Path:
    """The checkout this package lives in (benchmarks find ../shared/data from it)."""
    return Path(__file__).resolve().parents[2]


def write_csv(path: Path, header: Sequence[str], rows: Iterable[Sequence]) -> Path:
    """Write a CSV atomically (a crashed run never leaves half a table), text cells made
    safe for spreadsheets: benchmark tables carry note text (see ehrlib.result_tables).
    """
    from ehrlib.result_tables import write_csv as write_table_rows  # deferred: pandas, for the CSV-only benches

    return write_table_rows(path, header, rows)
