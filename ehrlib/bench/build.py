"""Build throughput: rows/s per table and in total for the MIMIC-III demo build.

Runs `build_db` on the demo folder (``EHRLIB_MIMIC3_DEMO`` or ``../shared/data/mimic-iii-demo``
next to the checkout) ``repeats`` times into a temporary folder and reports the median.
Per-table time covers the typed load and its contract checks; the ``TOTAL`` row is the
whole build wall time (tables, ordering, manifest, checksums, atomic rename).
"""
from __future__ import annotations

import os
import statistics
import tempfile
from pathlib import Path

import duckdb

from ehrlib.bench import BenchSkipped, repo_root, write_csv
from ehrlib.db.build import build_db

__all__ = ["run", "demo_folder"]

OUT_NAME = "bench_build.csv"
HEADER = ("dataset", "table", "rows", "seconds", "rows_per_s", "source_mb", "repeats", "threads", "duckdb")


def _folder(env_var: str, name: str) -> Path | None:
    env = os.environ.get(env_var)
    for p in ([Path(env)] if env else []) + [repo_root().parent / "shared" / "data" / name]:
        if p.is_dir():
            return p
    return None


def demo_folder() -> Path | None:
    """The MIMIC-III demo CSV folder (``EHRLIB_MIMIC3_DEMO``, else ``../shared/data``)."""
    return _folder("EHRLIB_MIMIC3_DEMO", "mimic-iii-demo")


def demo4_folder() -> Path | None:
    """The MIMIC-IV demo CSV folder (``EHRLIB_MIMIC4_DEMO``, else ``../shared/data``)."""
    return _folder("EHRLIB_MIMIC4_DEMO", "mimic-iv-demo")


def run(out_dir: Path, repeats: int = 3) -> Path:
    """Time building the demo database ``repeats`` times; write ``bench_build.csv`` into ``out_dir``."""
    src = demo_folder()
    if src is None:
        raise BenchSkipped("MIMIC-III demo folder absent (set EHRLIB_MIMIC3_DEMO or run "
                           "`ehrlib download mimic-iii-demo DIR`)")
    results = []
    with tempfile.TemporaryDirectory(prefix="ehrlib-bench-") as tmp:
        for i in range(repeats):
            results.append(build_db(src, Path(tmp) / f"run{i}.duckdb", progress=False))
    threads = duckdb.connect().execute("SELECT current_setting('threads')").fetchall()[0][0]
    rows = []
    for j, t in enumerate(results[0].tables):
        if t.status != "loaded":
            continue
        sec = statistics.median(r.tables[j].seconds for r in results)
        rows.append(("mimic-iii-demo", t.name, t.rows, f"{sec:.6f}", f"{t.rows / sec:.0f}" if sec else "",
                     f"{t.source_bytes / 1e6:.2f}", repeats, threads, duckdb.__version__))
    total = statistics.median(r.seconds for r in results)
    n = results[0].rows
    rows.append(("mimic-iii-demo", "TOTAL", n, f"{total:.6f}", f"{n / total:.0f}",
                 f"{sum(t.source_bytes for t in results[0].tables) / 1e6:.2f}", repeats, threads, duckdb.__version__))
    return write_csv(Path(out_dir) / OUT_NAME, HEADER, rows)
