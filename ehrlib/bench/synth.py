"""Synthetic hospital throughput: CHARTEVENTS rows/s of ``ehrlib synth tables --scale``.

One build of the default hospital grown to ``rows`` CHARTEVENTS rows (30 M by default,
the issue's target) in a temporary folder. Rows: the storyline patients (Python +
numpy, then the typed insert), the bulk rows generated in SQL, the shared
manifest/ordering/checksum step, and the whole build.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import duckdb

from ehrlib.bench import write_csv
from ehrlib.synth import build_hospital

__all__ = ["run"]

OUT_NAME = "bench_synth.csv"
HEADER = ("dataset", "phase", "chartevents_rows", "seconds", "rows_per_s", "target_rows", "threads", "duckdb")


def run(out_dir: Path, rows: int = 30_000_000, seed: int = 0) -> Path:
    """Time generating a synthetic hospital of ``rows`` chart rows; write ``bench_synth.csv``."""
    with tempfile.TemporaryDirectory(prefix="ehrlib-bench-synth-") as tmp:
        b = build_hospital(Path(tmp) / "synth.duckdb", seed=seed, scale=rows)
    threads = duckdb.connect().execute("SELECT current_setting('threads')").fetchall()[0][0]
    base = b.chartevents_rows - b.scale_rows_added
    sec = b.seconds
    phases = (("storyline_patients", base, sec["generate"] + sec["write"]),
              ("bulk_sql", b.scale_rows_added, sec["scale"]),
              ("manifest_order_checksum", b.chartevents_rows, sec["finalize"]),
              ("TOTAL", b.chartevents_rows, sec["total"]))
    out = [("synthetic", name, n, f"{s:.3f}", f"{n / s:.0f}" if s else "", rows, threads, duckdb.__version__)
           for name, n, s in phases]
    return write_csv(Path(out_dir) / OUT_NAME, HEADER, out)
