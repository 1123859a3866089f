"""`ehrlib build-db`: a MIMIC CSV folder -> one typed, ordered DuckDB file with a manifest.

Steps (mimic-code's recipe, plus what ehrlib needs): detect the flavor from the file
layout; create typed tables; load each CSV with DuckDB's reader, auto-detection off
(header names checked against the DDL, ``QUOTE '"' ESCAPE '"'``, empty field = NULL,
text kept byte for byte: no trimming, no case changes); data-contract checks; sort the
event tables (:func:`ehrlib.db.finalize`); write the manifest. The file is built next to
the target under a temporary name and renamed into place only when everything passed,
so an error or an interrupt never leaves a (half-)built file at the target path.
"""
from __future__ import annotations

import gzip
import logging
import os
import re
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

import duckdb
from tqdm import tqdm

from ehrlib import schema
from ehrlib.db import contracts
from ehrlib.db.connect import NO_EXTENSIONS
from ehrlib.db.ddl import TableDef, create_tables, table_defs
from ehrlib.db.finalize import finalize
from ehrlib.db.manifest import TableInfo, write_manifest
from ehrlib.db.perturb import assert_no_original_names
from ehrlib.db.skipped import MANIFEST_KEY, SkippedFile, manifest_value, skipped_files
from ehrlib.errors import ConfigError, DataError, suggestion

__all__ = ["TableLoad", "BuildResult", "build_db", "detect_source_flavor", "find_source_file"]

log = logging.getLogger(__name__)

FLAVOR_CHOICES = ("auto", "mimic3", "mimic4")
_SUFFIXES = (".csv.gz", ".csv")


@dataclass(frozen=True, slots=True)
class TableLoad:
    """How one table was loaded."""

    logical: str
    name: str
    status: str  # loaded | missing
    rows: int
    seconds: float
    source_file: str | None
    source_bytes: int


@dataclass(frozen=True, slots=True)
class BuildResult:
    """What `build_db` produced (also the input of the build benchmark)."""

    path: Path
    flavor: str
    layout: str
    version: str
    source_kind: str
    tables: tuple[TableLoad, ...]
    seconds: float
    #: CSV files in the source folder no table was loaded from, with the reason
    skipped: tuple[SkippedFile, ...] = ()

    @property
    def rows(self) -> int:
        """Rows loaded over all tables."""
        return sum(t.rows for t in self.tables)

    @property
    def missing(self) -> tuple[str, ...]:
        """Logical tables whose CSV was not found."""
        return tuple(t.name for t in self.tables if t.status == "missing")


def _one_line(exc: BaseException) -> str:
    """DuckDB's message on one line, without the offending row's text (which may be
    credentialed data) and without reader hints that do not apply (types are explicit).
    """
    text = " ".join(str(exc).split())
    text = re.sub(r"Original Line: .*?(?=Error when|$)", "", text)
    text = re.split(r" (?:This type was auto-detected|Possible solutions|Column \S+ is being converted)", text)[0]
    return text[:300] + ("…" if len(text) > 300 else "")


def _files_by_lower_name(folder: Path) -> dict[str, Path]:
    if not folder.is_dir():
        return {}
    return {p.name.lower(): p for p in folder.iterdir() if p.is_file()}


def find_source_file(src: Path, stem: str) -> Path | None:
    """The CSV for ``stem`` (e.g. ``CHARTEVENTS`` or ``icu/chartevents``): ``.csv.gz``
    preferred over ``.csv``; the file name is matched case-insensitively because
    distributions differ (PhysioNet ships MIMIC-III upper-case, MIMIC-IV lower-case).
    """
    folder, _, name = stem.rpartition("/")
    files = _files_by_lower_name(src / folder if folder else src)
    for suffix in _SUFFIXES:
        hit = files.get(name.lower() + suffix)
        if hit:
            return hit
    return None


def detect_source_flavor(src: Path) -> str:
    """``mimic4`` for a hosp/ + icu/ layout, ``mimic3`` for top-level MIMIC-III files."""
    if any(find_source_file(src, d.source_stem) for d in table_defs("mimic4").values()):
        return "mimic4"
    if any(find_source_file(src, d.source_stem) for d in table_defs("mimic3").values()):
        return "mimic3"
    raise DataError(f"no MIMIC-III or MIMIC-IV CSV files in {src} (expected e.g. PATIENTS.csv.gz "
                    "or hosp/patients.csv.gz)")


def _detect_version(src: Path, flavor: str) -> str:
    """Dataset version from the folder name (PhysioNet folders end in it, e.g.
    ``mimic-iv-clinical-database-demo-2.2`` or ``files/mimiciv/3.1``).
    """
    for part in (src.name, src.parent.name):
        m = re.search(r"(?<![\d.])(\d+\.\d+)$", part)
        if m:
            return m.group(1)
    if flavor == "mimic3":
        return "1.4"  # the only MIMIC-III release ehrlib reads
    return "2.2" if contracts.sums_file_is_demo(src, "mimic4") else "unknown"


def _read_header(path: Path) -> list[str]:
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8", newline="") as fh:
            line = fh.readline()
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as exc:
        raise DataError(f"{path.name}: cannot read ({_one_line(exc)})") from None
    if not line.strip():
        raise DataError(f"{path.name}: empty file, no CSV header")
    return [h.strip().strip('"') for h in line.rstrip("\r\n").split(",")]


_READ_CSV = (
    "read_csv(?, header = true, auto_detect = false, delim = ',', quote = '\"', escape = '\"', "
    "nullstr = '', allow_quoted_nulls = false, columns = ?)"
)


def _load(con, d: TableDef, path: Path) -> None:
    """Typed load of one CSV into the (empty) table ``d``."""
    header = _read_header(path)
    by_lower: dict[str, str] = {}
    for h in header:
        if h.lower() in by_lower:
            raise DataError(f"{path.name}: duplicate column {h!r} in the header")
        by_lower[h.lower()] = h
    sourced = [(c.source, c) for c in d.columns if c.source is not None]
    missing = [src for src, _ in sourced if src.lower() not in by_lower]
    if missing:
        raise DataError(f"{path.name}: missing column(s) {', '.join(missing)} (expected by the {d.name} DDL)")
    extra = [h for h in header if h.lower() not in {src.lower() for src, _ in sourced}]
    if extra:
        log.warning("%s: ignoring column(s) not in the DDL: %s", path.name, ", ".join(extra))
    types = {src.lower(): c.type for src, c in sourced}
    columns = {h: types.get(h.lower(), "VARCHAR") for h in header}
    select = ", ".join(schema.quote_ident(by_lower[src.lower()]) for src, _ in sourced)
    targets = ", ".join(schema.quote_ident(c.name) for _, c in sourced)
    row_id = d.generated_row_id
    try:
        if row_id is None:
            con.execute(f"INSERT INTO {d.ref} ({targets}) SELECT {select} FROM {_READ_CSV}", [str(path), columns])
        else:
            # 1-based file order: stage first (insertion order = file order), then number.
            con.execute(f"CREATE OR REPLACE TEMP TABLE ehrlib_stage AS SELECT {select} FROM {_READ_CSV}",
                        [str(path), columns])
            con.execute(f"INSERT INTO {d.ref} ({schema.quote_ident(row_id.name)}, {targets}) "
                        "SELECT rowid + 1, * FROM ehrlib_stage ORDER BY rowid")
            con.execute("DROP TABLE ehrlib_stage")
    except duckdb.Error as exc:
        raise DataError(f"{path.name}: {_one_line(exc)}") from None


def _temp_path(out: Path) -> Path:
    return out.with_name(f".{out.name}.tmp{os.getpid()}")  # matches .gitignore *.duckdb.tmp*


def _remove(path: Path) -> None:
    for p in (path, path.with_name(path.name + ".wal")):
        try:
            p.unlink()
        except FileNotFoundError:
            pass


def build_db(src: str | os.PathLike, out: str | os.PathLike, *, flavor: str = "auto", perturb: bool = False,
             progress: bool = True) -> BuildResult:
    """Build one DuckDB file from a MIMIC-III or MIMIC-IV CSV folder.

    Args:
        src: the data folder (MIMIC-III: ``PATIENTS.csv[.gz]``...; MIMIC-IV: ``hosp/``, ``icu/``).
        out: the DuckDB file to write (replaced atomically if it exists).
        flavor: ``auto`` (from the file layout), ``mimic3`` or ``mimic4``.
        perturb: write MIMIC-III in the perturbed schema (paper Table 15).
        progress: show a progress bar per table.

    Returns:
        A :class:`BuildResult`. Raises DataError/ConfigError on bad input, leaving no file.
    """
    t0 = time.perf_counter()
    src, out = Path(src), Path(out)
    if flavor not in FLAVOR_CHOICES:
        raise ConfigError(f"--flavor must be one of {', '.join(FLAVOR_CHOICES)}, not {flavor!r}"
                          + suggestion(flavor, FLAVOR_CHOICES))
    if not src.is_dir():
        raise DataError(f"source folder {src} does not exist or is not a folder")
    if not out.parent.is_dir():
        raise ConfigError(f"output folder {out.parent} does not exist")
    if out.is_dir():
        raise ConfigError(f"output {out} is a folder; give a file name such as {out / 'mimic.duckdb'}")
    detected = detect_source_flavor(src)
    if flavor != "auto" and flavor != detected:
        raise DataError(f"--flavor {flavor} does not match {src}: its files have the {detected} layout")
    flavor = detected
    if perturb and flavor != "mimic3":
        raise ConfigError("--perturb applies to MIMIC-III only (the paper's Table 15 renames MIMIC-III)")
    layout = "perturbed" if perturb else flavor
    defs = table_defs(layout)
    sources = {logical: find_source_file(src, d.source_stem) for logical, d in defs.items()}
    if not any(sources.values()):
        raise DataError(f"no {flavor} table files in {src}")
    skipped = skipped_files(src, [p for p in sources.values() if p is not None], flavor)
    for s in skipped:
        log.debug("%s: not read (%s)", s.file, s.reason)

    tmp = _temp_path(out)
    _remove(tmp)
    con = duckdb.connect(str(tmp))
    for statement in NO_EXTENSIONS:     # a build reads CSV and gzip (built in); never download
        con.execute(statement)
    try:
        create_tables(con, layout)
        loads, infos, counts = [], {}, {}
        bar = tqdm(defs.items(), desc="build-db", unit="table", disable=not progress, leave=False)
        for logical, d in bar:
            path = sources[logical]
            if path is None:
                log.warning("%s: no file for table %s; reported as missing in the manifest", src, d.name)
                infos[logical] = TableInfo(logical, "missing")
                loads.append(TableLoad(logical, d.name, "missing", 0, 0.0, None, 0))
                continue
            bar.set_postfix_str(d.name)
            t = time.perf_counter()
            _load(con, d, path)
            contracts.check_not_null_ids(con, layout, d)
            contracts.check_unique_row_ids(con, layout, d)
            contracts.check_timestamps(con, layout, d)
            n = con.execute(f"SELECT count(*) FROM {d.ref}").fetchall()[0][0]  # noqa: S608
            rel = path.relative_to(src).as_posix()
            counts[logical] = n
            infos[logical] = TableInfo(logical, "loaded", rel, contracts.sha256_file(path))
            loads.append(TableLoad(logical, d.name, "loaded", n, time.perf_counter() - t, rel, path.stat().st_size))
        source_kind = contracts.classify_source(src, flavor, counts)
        version = _detect_version(src, flavor)
        write_manifest(con, source=str(src.resolve()), source_kind=source_kind, flavor=flavor, layout=layout,
                       version=version, tables_info=infos,
                       extra={MANIFEST_KEY: manifest_value(skipped, hide_names=perturb)})
        finalize(con, layout)
        if perturb:
            assert_no_original_names(con)
        con.close()
        os.replace(tmp, out)
    except BaseException:
        con.close()
        _remove(tmp)
        raise
    finally:
        _remove(tmp.with_name(tmp.name + ".wal"))
    return BuildResult(out, flavor, layout, version, source_kind, tuple(loads), time.perf_counter() - t0, skipped)
