"""The synthetic hospital's builder: seeded MIMIC-shaped tables with known storylines, in one DuckDB file."""
from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

import duckdb

from ehrlib import schema
from ehrlib.db import LAYOUTS, finalize, read_manifest, write_manifest
from ehrlib.errors import ConfigError, unknown_name
from ehrlib.synth.render import STORYLINES_TABLE, write_tables
from ehrlib.synth.scale import add_scale_rows
from ehrlib.synth.tables import build_tables

__all__ = ["GENERATOR_VERSION", "MAX_PATIENTS", "HospitalBuild", "build_hospital", "content_checksums",
           "generate_hospital"]

#: Storyline patients per build: their admissions take hadm_ids 100000-199999 as in MIMIC.
MAX_PATIENTS = 50_000

#: Bump when the same seed would produce different rows.
GENERATOR_VERSION = "synth-tables-1"

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class HospitalBuild:
    """What one build wrote and how long each phase took (seconds: ``generate`` = the
    storyline patients in Python, ``write``, ``scale`` = bulk SQL rows, ``finalize`` =
    manifest + ordering + checksums, ``total``).
    """

    path: Path
    layout: str
    seed: int
    patients: int
    chartevents_rows: int
    scale_rows_added: int
    seconds: Mapping[str, float]


def generate_hospital(out_path: str | os.PathLike, *, patients: int = 40, seed: int = 0, scale: int | None = None,
                      layout: str = "mimic3") -> Path:
    """Build the synthetic hospital into a new DuckDB file (replacing ``out_path``).

    Args:
        out_path: the DuckDB file to write; built under a temporary name, then renamed.
        patients: number of patients (about a quarter have two admissions).
        seed: the same seed gives identical table contents.
        scale: add CHARTEVENTS rows until the table has about this many (bulk ICU
            stays generated in SQL, for benchmarks); None for the storyline patients only.
        layout: ``mimic3`` | ``mimic4`` | ``perturbed``.

    Returns:
        The path written.
    """
    return build_hospital(out_path, patients=patients, seed=seed, scale=scale, layout=layout).path


def build_hospital(out_path: str | os.PathLike, *, patients: int = 40, seed: int = 0, scale: int | None = None,
                   layout: str = "mimic3") -> HospitalBuild:
    """:func:`generate_hospital`, returning row counts and phase timings (benchmarks)."""
    if layout not in LAYOUTS:
        raise ConfigError(unknown_name("layout", layout, LAYOUTS))
    if not 1 <= patients <= MAX_PATIENTS:
        raise ConfigError(f"--patients must be between 1 and {MAX_PATIENTS:,} (MIMIC's id ranges), not {patients}; "
                          "use --scale for benchmark-size CHARTEVENTS")
    if scale is not None and scale < 0:
        raise ConfigError(f"--scale must be a positive number of CHARTEVENTS rows, not {scale}")
    out = Path(out_path)
    if out.is_dir():
        raise ConfigError(f"{out} is a directory; give a .duckdb file path")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp{os.getpid()}")
    _remove(tmp)
    clock = [time.perf_counter()]
    seconds: dict[str, float] = {}

    def lap(name: str) -> None:
        clock.append(time.perf_counter())
        seconds[name] = clock[-1] - clock[-2]

    try:
        frames = build_tables(patients, seed)
        lap("generate")
        con = duckdb.connect(str(tmp))
        try:
            # DuckDB's own progress bar for the long, scaled builds; never fatal (inside a
            # Jupyter kernel DuckDB wants ipywidgets for it)
            if scale:
                try:
                    con.execute("SET enable_progress_bar = true")
                except duckdb.Error as exc:
                    log.debug("no DuckDB progress bar: %s", exc)
            write_tables(con, frames, layout)
            lap("write")
            added = add_scale_rows(con, layout, target_rows=scale, seed=seed) if scale else 0
            lap("scale")
            # ordering first: the manifest then measures each checksum once, not twice
            finalize(con, layout)
            write_manifest(
                con, source=f"ehrlib.synth seed={seed} patients={patients}", source_kind="synthetic",
                flavor="synthetic", layout=layout, version=GENERATOR_VERSION,
                extra={"seed": str(seed), "patients": str(patients), "scale": str(scale or 0),
                       "scale_rows_added": str(added)},
            )
            lap("finalize")
            chart = schema.schema_map(layout).table("chartevents")
            n_chart = con.execute(f"SELECT count(*) FROM {chart.ref}").fetchall()[0][0]  # noqa: S608
        finally:
            con.close()
        os.replace(tmp, out)
    except BaseException:
        _remove(tmp)
        raise
    seconds["total"] = time.perf_counter() - clock[0]
    log.debug("synthetic hospital (%s, seed %d, %d patients) written to %s in %.1f s", layout, seed, patients,
              out, seconds["total"])
    return HospitalBuild(out, layout, seed, patients, int(n_chart), int(added), MappingProxyType(seconds))


def _remove(path: Path) -> None:
    for p in (path, path.with_name(path.name + ".wal")):
        if p.exists():
            p.unlink()


def content_checksums(path: str | os.PathLike) -> dict[str, str]:
    """{physical table: content checksum} of a built hospital: the manifest's
    order-independent checksums plus the storyline table's. Equal for equal seeds.
    """
    con = duckdb.connect(str(path), read_only=True)
    try:
        out = {t["table_name"]: t["content_checksum"] for t in read_manifest(con)["tables"]
               if t["status"] == "loaded"}
        n, h = con.execute(
            f"SELECT count(*), coalesce(sum(hash(t)), 0) FROM {schema.quote_ident(STORYLINES_TABLE)} AS t"  # noqa: S608
        ).fetchall()[0]
        out[STORYLINES_TABLE] = f"{n}:{int(h) % (1 << 64):016x}"
        return out
    finally:
        con.close()
