"""Tool latency: p50/p95 per tool on synthetic hospitals at two CHARTEVENTS scales.

The issue's targets, tool overhead (validation, rendering, tracing) included: p95 ≤ 10 ms
per patient-scoped call at the larger scale, p95(large)/p95(small) ≤ 2 (cost nearly flat
in table size), and Lexical_Search p95 ≤ 20 ms over all dictionaries of ≥ 30 k labels
(measured on the MIMIC-III demo's dictionaries when the demo folder is present: the
synthetic dictionaries are smaller).

Each patient-scoped tool is also set against a bare SQL lookup of one patient's item in a
three-day window (the ``(bare SQL reference query)`` row): the ``p95 vs bare SQL`` rows give
the tool's p95 over the lookup's at each scale (target ≤ 1.5: the event tables are stored in
patient order, so both read the same few row groups and the tool adds only its own work).
The lookup is timed on a patient nothing in the process has read yet, as a tool's first call
on a table reads its patient (the admission snapshot's one read); the same lookup repeated on
the patient the tools have just read, the reference of earlier runs, is the
``(bare SQL reference query, repeated)`` row.

Scales: ``EHRLIB_BENCH_TOOLS_SCALES=SMALL,LARGE`` (CHARTEVENTS rows; default 3 M and
30 M, written to ``bench_tools.csv``). Full MIMIC-III size is opt-in, never part of a
plain ``ehrlib bench``: ``EHRLIB_BENCH_TOOLS_SCALES=30000000,330000000 ehrlib bench --only
tools`` builds a 330 M-row hospital as ``runs/bench/tools_synth_330000000.duckdb`` (the 30 M
one is reused) and writes ``bench_tools_330m.csv`` beside the default file. Budget: the 30 M
file is 1.04 GB and took 218 s to build on two loaded cores (85 s generating rows, 127 s
ordering and checksums; peak disk the final size, the sort fitting in memory), so expect
about 11.5 GB and 40-60 minutes; at 330 M the sort no longer fits in memory on a ~24 GB
machine and DuckDB spills to ``<file>.tmp/`` beside the database, so keep a few tens of GB
free there for the build (not measured at full size).

What the patient-ordered layout buys (opt-in): ``EHRLIB_BENCH_TOOLS_SHUFFLED=1`` also times
a copy of the larger hospital whose CHARTEVENTS rows are stored in a seeded random order
(same rows; zone maps then prune nothing), as dataset ``synthetic-<rows>-shuffled``, and
writes ``bench_tools_shuffled.csv`` (``bench_tools_330m_shuffled.csv``) instead.

Databases are cached under ``runs/bench/`` (built once; reruns reuse them). Each patient
gets a fresh toolset, as in a pipeline run (one note = one toolset), and calls every
tool with arguments a verifier would send; the first patient is a warm-up (index build,
dictionary loading) and is not measured. Latency is the tracer's wall time of the call; ``load_avg_1m`` is the machine's
load average when a measured row was written (p95 on a shared machine follows it).
"""
from __future__ import annotations

import datetime as dt
import logging
import os
import random
import shutil
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
from tqdm import tqdm

from ehrlib.bench import BenchSkipped, repo_root, write_csv
from ehrlib.bench.build import demo_folder
from ehrlib.db.build import build_db
from ehrlib.errors import ConfigError
from ehrlib.schema import detect_flavor, schema_map
from ehrlib.synth import GENERATOR_VERSION, generate_hospital
from ehrlib.tools import PROFILE_TABLE, build_item_profile, load_patient_context, make_toolset

__all__ = ["run", "SCALES"]

log = logging.getLogger(__name__)
OUT_NAME = "bench_tools.csv"
HEADER = ("dataset", "chartevents_rows", "n_labels", "tool", "patient_scoped", "n_calls", "p50_ms", "p95_ms",
          "max_ms", "target_p95_ms", "meets_target", "load_avg_1m")
SCALES = (3_000_000, 30_000_000)
SCALES_ENV = "EHRLIB_BENCH_TOOLS_SCALES"
SHUFFLED_ENV = "EHRLIB_BENCH_TOOLS_SHUFFLED"
PATIENT_TARGET_MS = 10.0
LEXICAL_TARGET_MS = 20.0
RATIO_TARGET = 2.0
#: patient-scoped tool p95 over the bare SQL lookup's p95, at every scale
BARE_SQL_TARGET = 1.5
BARE_SQL = "(bare SQL reference query)"
#: the same lookup repeated on the patient the tools have just read (warm; the reference of earlier runs)
BARE_SQL_REPEATED = "(bare SQL reference query, repeated)"
#: entity strings as notes write them (abbreviations, brands, typos)
QUERIES = ("heart rate", "HR", "WBC", "BP", "SBP", "lasix", "levophed", "zosyn", "vanco", "Cr", "creatinine",
           "potassium", "K", "Hgb", "hematocrit", "plt", "lactate", "SpO2", "temp", "RR", "UOP", "urine output",
           "blood culture", "E. coli", "NRB", "nasal cannula", "abd pain", "LLE edema", "insulin gtt", "propofol",
           "coumadin", "heparin", "INR", "troponin", "BUN", "sodium", "glucose", "fingerstick", "acute kidney failure",
           "pneumonia", "sepsis", "intubation", "CXR", "foley", "magnesium", "phosphate", "albumin", "bilirubin")


def scales_from_env() -> tuple[int, int]:
    """The two CHARTEVENTS scales ``EHRLIB_BENCH_TOOLS_SCALES`` asks for (default :data:`SCALES`)."""
    raw = os.environ.get(SCALES_ENV, "")
    if not raw.strip():
        return SCALES
    try:
        small, large = (int(float(x)) for x in raw.split(","))
    except ValueError:
        raise ConfigError(f"{SCALES_ENV} must be two row counts 'SMALL,LARGE', got {raw!r}") from None
    if not 0 < small < large:
        raise ConfigError(f"{SCALES_ENV}: need 0 < SMALL < LARGE, got {small:,} and {large:,}")
    return small, large


def out_name(scales: Sequence[int], shuffled: bool = False) -> str:
    """``bench_tools.csv`` for the default scales, else named by the larger scale (``bench_tools_330m.csv``);
    ``_shuffled`` added when the shuffled layout is timed too.
    """
    large = max(scales)
    stem = ("bench_tools" if tuple(scales) == SCALES else
            f"bench_tools_{large // 1_000_000}m" if large >= 1_000_000 else f"bench_tools_{large}")
    return f"{stem}_shuffled.csv" if shuffled else f"{stem}.csv"


def _shuffled_copy(path: Path) -> Path:
    """A copy of ``path`` with CHARTEVENTS stored in a seeded random order (rebuilt when older)."""
    out = path.with_name(path.stem + "_shuffled.duckdb")
    if out.exists() and out.stat().st_mtime >= path.stat().st_mtime:
        return out
    tmp = out.with_name(f".{out.name}.tmp{os.getpid()}")
    shutil.copyfile(path, tmp)
    with duckdb.connect(str(tmp)) as con:
        ce = schema_map(detect_flavor(con)).table("chartevents")
        store_shuffled(con, ce.ref, ce.col("row_id"))
        con.execute("CHECKPOINT")
    os.replace(tmp, out)
    return out


def store_shuffled(con: Any, ref: str, row_id: str) -> None:
    """Rewrite table ``ref`` with its rows in a seeded pseudo-random order (same rows, same DDL)."""
    con.execute(f"CREATE TEMP TABLE ehrlib_shuffled AS SELECT * FROM {ref} ORDER BY hash({row_id}, 7)")  # noqa: S608
    con.execute(f"DELETE FROM {ref}")  # noqa: S608
    con.execute(f"INSERT INTO {ref} SELECT * FROM ehrlib_shuffled")  # noqa: S608
    con.execute("DROP TABLE ehrlib_shuffled")


def bare_sql_rows(dataset: str, p95: dict[str, float]) -> list[tuple]:
    """One row per patient-scoped tool: its p95 over the bare SQL lookup's, against the target."""
    floor = p95.get(BARE_SQL)
    rows = []
    for tool in sorted(t for t in p95 if t in _PATIENT_SCOPED):
        ratio = p95[tool] / floor if floor else float("nan")
        rows.append((f"p95 vs bare SQL {dataset}", "", "", tool, "true", "", "", f"{ratio:.2f}", "",
                     BARE_SQL_TARGET, str(ratio <= BARE_SQL_TARGET).lower(), ""))
    return rows


def _bench_dir() -> Path:
    d = repo_root() / "runs" / "bench"
    d.mkdir(parents=True, exist_ok=True)
    return d


def _synthetic_db(rows: int) -> Path:
    """The synthetic hospital grown to ``rows`` CHARTEVENTS rows, built once and cached."""
    path = _bench_dir() / f"tools_synth_{rows}.duckdb"
    if path.exists() and not _current(path, rows):
        path.unlink()       # built by an older generator or at another scale: rebuild
    if not path.exists():
        log.info("building the synthetic hospital with %d CHARTEVENTS rows into %s", rows, path)
        generate_hospital(path, scale=rows)
    _ensure_profile(path)
    return path


def _current(path: Path, rows: int) -> bool:
    try:
        with duckdb.connect(str(path), read_only=True) as con:
            manifest = dict(con.execute("SELECT key, value FROM ehrlib_manifest").fetchall())
    except duckdb.Error:
        return False
    return manifest.get("version") == GENERATOR_VERSION and manifest.get("scale") == str(rows)


def _ensure_profile(path: Path) -> None:
    with duckdb.connect(str(path), read_only=True) as con:
        present = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ?",
                              [PROFILE_TABLE]).fetchall()[0][0]
    if not present:
        with duckdb.connect(str(path)) as con:
            build_item_profile(con)


def _demo_db() -> Path | None:
    """The MIMIC-III demo built once under runs/bench (its dictionaries hold ~32 k items)."""
    src = demo_folder()
    if src is None:
        return None
    path = _bench_dir() / "tools_mimic3_demo.duckdb"
    if not path.exists():
        build_db(src, path, progress=False)
    return path


def _patients(con: Any, n: int, seed: int) -> list[tuple[int, int]]:
    """Random admissions that have CHARTEVENTS rows."""
    return _admission_samples(con, n, seed)[0]


def _admission_samples(con: Any, n: int, seed: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """``n + 1`` random admissions with CHARTEVENTS rows for the tools, and up to ``n + 1`` others
    (none of their patients among the first) for the reference lookup.
    """
    sm = schema_map(detect_flavor(con))
    ce = sm.table("chartevents")
    adm = sm.table("admissions")
    rows = con.execute(
        f"SELECT {adm.col('subject_id')}, {adm.col('hadm_id')} FROM {adm.ref} WHERE {adm.col('hadm_id')} IN "  # noqa: S608
        f"(SELECT DISTINCT {ce.col('hadm_id')} FROM {ce.ref}) ORDER BY 1, 2").fetchall()
    chosen = random.Random(seed).sample(rows, min(n + 1, len(rows)))
    taken = {subject for subject, _ in chosen}
    others = [r for r in rows if r[0] not in taken]
    return chosen, random.Random(seed + 1).sample(others, min(n + 1, len(others)))


def _calls(ts: Any) -> list[tuple[str, dict[str, Any]]]:
    """One verification's worth of calls for this patient (their most charted item)."""
    keys = sorted(k for k in ts.env.patient_keys if k.startswith("chartevents:"))
    item = next((k for k in keys if k == "chartevents:220045"), keys[0] if keys else "heart rate")
    lab = next((k for k in sorted(ts.env.patient_keys) if k.startswith("labevents:")), "creatinine")
    return [
        ("Lexical_Search", {"query": random.choice(QUERIES)}),
        ("Semantic_Search", {"query": random.choice(("alert", "afebrile", "pressors", "diuresed", "oliguric"))}),
        ("Get_Item_Value_Distribution", {"item": item}),
        ("Analyze_Category_Trend", {"table": "chartevents", "patient_only": True}),
        ("Get_Item_Status_History", {"item": item, "time": "HD 2"}),
        ("Get_Item_Status_History", {"item": lab, "time": "admission"}),
        ("Get_Item_Value_History", {"item": item, "operator": "more", "value": "100", "time": "HD 1 to HD 3"}),
        ("Analyze_Value_Trend", {"item": lab, "time": ""}),
        ("Analyze_Value_Trend", {"item": item, "time": "HD 2"}),
        ("View_General_Timeline", {"time": "HD 2", "table": "chartevents"}),
        ("View_General_Timeline", {"time": "discharge", "table": "all"}),
        ("Get_Clinical_Criterion", {"state": random.choice(("tachycardic", "febrile", "AKI", "hypoxic"))}),
    ]


def _bare_sql_ms(con: Any, sm: Any, subject: int, admittime: Any, itemid: int) -> float:
    """The floor: one patient's item in a 3-day window, a plain query (the issue's reference).

    Timed on a patient nothing has read yet in this process (:data:`BARE_SQL`), as the tools
    meet each patient: the first read of a patient's rows costs more than a repeat (DuckDB
    brings their blocks into its buffer pool; ~0.4-0.9 ms more at 30 M rows), and a tool's
    first call on a table pays it. The repeat on the patient the tools just read is listed too
    (:data:`BARE_SQL_REPEATED`, the reference of earlier runs).
    """
    ce = sm.table("chartevents")
    sql = (f"SELECT * FROM {ce.ref} WHERE {ce.col('subject_id')} = ? AND {ce.col('itemid')} = ? "  # noqa: S608
           f"AND {ce.col('charttime')} >= ? AND {ce.col('charttime')} < ?")
    t0 = time.perf_counter()
    con.execute(sql, [subject, itemid, admittime, admittime + dt.timedelta(days=3)]).fetchall()
    return (time.perf_counter() - t0) * 1000.0


def _measure(path: Path, n_patients: int, seed: int, label: str) -> tuple[dict[str, list[float]], int, int]:
    random.seed(seed)
    con = duckdb.connect(str(path), read_only=True)
    try:
        sm = schema_map(detect_flavor(con))
        ce = sm.table("chartevents")
        n_chart = con.execute(f"SELECT count(*) FROM {ce.ref}").fetchall()[0][0]  # noqa: S608
        times: dict[str, list[float]] = {}
        n_labels = 0
        patients, references = _admission_samples(con, n_patients, seed)
        for i, (subject, hadm) in enumerate(tqdm(patients, desc=f"tools on {label}", unit="patient")):
            ctx = load_patient_context(con, sm, subject, hadm)
            ts = make_toolset(con, ctx)
            for name, args in _calls(ts):
                ts.call(name, args)
            if i == 0:
                n_labels = len(ts.env.catalog.items)
                continue  # warm-up
            for rec in ts.tracer.records:
                times.setdefault(rec.tool, []).append(rec.ms)
            if i < len(references):
                ref_subject, ref_hadm = references[i]
                ref_admit = load_patient_context(con, sm, ref_subject, ref_hadm).admittime
                times.setdefault(BARE_SQL, []).append(_bare_sql_ms(con, sm, ref_subject, ref_admit, 220045))
            times.setdefault(BARE_SQL_REPEATED, []).append(_bare_sql_ms(con, sm, subject, ctx.admittime, 220045))
        return times, int(n_chart), n_labels
    finally:
        con.close()


def _lexical_only(path: Path, seed: int) -> tuple[list[float], int, int]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        sm = schema_map(detect_flavor(con))
        (subject, hadm), = _patients(con, 0, seed)[:1]
        ctx = load_patient_context(con, sm, subject, hadm)
        ts = make_toolset(con, ctx, categories=("alignment",))
        for q in QUERIES:     # warm-up: index build, dictionaries, patient item set
            ts.call("Lexical_Search", {"query": q})
        times: list[float] = []
        for _ in range(5):
            # each repeat searches again: a fresh toolset (its result memo empty) and the index's
            # search memo cleared, or a repeat would be answered in microseconds
            rep = make_toolset(con, ctx, categories=("alignment",))
            rep.env.index._searched.clear()
            for q in QUERIES:
                rep.call("Lexical_Search", {"query": q})
            times += [r.ms for r in rep.tracer.records]
        ce = sm.table("chartevents")
        n_chart = con.execute(f"SELECT count(*) FROM {ce.ref}").fetchall()[0][0]  # noqa: S608
        return times, int(n_chart), len(ts.env.catalog.items)
    finally:
        con.close()


_PATIENT_SCOPED = {"Get_Item_Status_History", "Get_Item_Value_History", "Analyze_Value_Trend",
                   "View_General_Timeline"}


def _row(dataset: str, n_chart: int, n_labels: int, tool: str, ms: Sequence[float]) -> tuple:
    p50, p95 = float(np.percentile(ms, 50)), float(np.percentile(ms, 95))
    scoped = tool in _PATIENT_SCOPED
    target = LEXICAL_TARGET_MS if tool == "Lexical_Search" else PATIENT_TARGET_MS if scoped else None
    meets = "" if target is None else str(p95 <= target).lower()
    return (dataset, n_chart, n_labels, tool, str(scoped).lower(), len(ms), f"{p50:.2f}", f"{p95:.2f}",
            f"{max(ms):.2f}", "" if target is None else target, meets, round(os.getloadavg()[0], 2))


def run(out_dir: Path, scales: Sequence[int] | None = None, n_patients: int = 200, seed: int = 0) -> Path:
    """Time every tool at two database scales against its latency target; write ``bench_tools.csv``
    (or, for scales other than the default, the file :func:`out_name` gives).
    """
    scales = scales_from_env() if scales is None else tuple(scales)
    if len(scales) != 2:
        raise BenchSkipped("the tool benchmark compares exactly two scales")
    rows: list[tuple] = []
    p95: dict[int, dict[str, float]] = {}
    for scale in scales:
        path = _synthetic_db(scale)
        times, n_chart, n_labels = _measure(path, n_patients, seed, f"{scale:,} rows")
        p95[scale] = {tool: float(np.percentile(ms, 95)) for tool, ms in times.items()}
        rows += [_row(f"synthetic-{scale}", n_chart, n_labels, tool, ms) for tool, ms in times.items()]
        rows += bare_sql_rows(f"synthetic-{scale}", p95[scale])
    small, large = scales
    shuffled = os.environ.get(SHUFFLED_ENV, "").strip() not in ("", "0")
    if shuffled:
        times, n_chart, n_labels = _measure(_shuffled_copy(_synthetic_db(large)), n_patients, seed,
                                            f"{large:,} rows, shuffled")
        rows += [_row(f"synthetic-{large}-shuffled", n_chart, n_labels, tool, ms) for tool, ms in times.items()]
        rows += bare_sql_rows(f"synthetic-{large}-shuffled",
                              {tool: float(np.percentile(ms, 95)) for tool, ms in times.items()})
    for tool in p95[large]:
        ratio = p95[large][tool] / p95[small][tool] if p95[small].get(tool) else float("nan")
        # the flatness target is about reading patient rows from a growing table; the
        # catalog-only tools (sub-millisecond, in memory) are listed without a target
        scoped = tool in _PATIENT_SCOPED
        rows.append((f"ratio {large}/{small}", "", "", tool, str(scoped).lower(), "", "", f"{ratio:.2f}", "",
                     RATIO_TARGET if scoped else "", str(ratio <= RATIO_TARGET).lower() if scoped else "", ""))
    demo = _demo_db()
    if demo is not None:
        ms, n_chart, n_labels = _lexical_only(demo, seed)
        rows.append(_row("mimic3-demo dictionaries", n_chart, n_labels, "Lexical_Search", ms))
    return write_csv(Path(out_dir) / out_name(scales, shuffled), HEADER, rows)
