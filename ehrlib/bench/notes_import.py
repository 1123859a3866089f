"""Note import throughput and memory: `ehrlib notes import` on a generated NOTEEVENTS file.

Writes a NOTEEVENTS-shaped CSV of ``rows`` rows (2 M by default, as many as MIMIC-III's
2.08 M) into a temporary folder: MIMIC-III's category mix (nursing/other, radiology,
ECG, physician, discharge summaries, and the small categories the contract does not
take), quoted multi-line TEXT with commas and quotes, ~0.5 % ISERROR rows, radiology and
ECG rows without HADM_ID as in MIMIC, and a few bad dates. Texts are shorter than real
notes (about a quarter of MIMIC's 1.9 kB mean, so the file is ~1 GB, not 4 GB); the CSV
reports MB/s too, from which the time on the real file follows.

Each scenario runs the importer in a child process and reads that child's peak resident
memory from ``wait4``. Wall-clock rows/s depend on what else the machine runs, so the
CPU time of the import (both threads: parser and hash) and the load average are
recorded beside it (the parent's own memory, which holds nothing of the file, is not
counted). Scenarios: a per-type sample (the common use) and the full conversion of
every supported row. Targets (issue: ≥ 50 k rows/s, ≤ 500 MB peak RSS) are columns of
the CSV (``meets_target``), not assertions.
"""
from __future__ import annotations

import csv
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

from ehrlib.bench import write_csv

__all__ = ["HEADER", "run", "write_noteevents"]

OUT_NAME = "bench_import.csv"
HEADER = ("scenario", "rows", "written", "source_mb", "seconds", "rows_per_s", "mb_per_s", "cpu_seconds",
          "rows_per_cpu_s", "peak_rss_mb", "load_avg_1m", "target_rows_per_s", "target_rss_mb", "meets_target",
          "python")
TARGET_ROWS_PER_S = 50_000
TARGET_RSS_MB = 500
#: MIMIC-III NOTEEVENTS category counts (of 2,083,180 rows) and a typical text length here
_CATEGORIES = (("Nursing/other", 822_497, 350), ("Radiology", 522_279, 225), ("Nursing", 223_556, 500),
               ("ECG", 209_051, 30), ("Physician ", 141_624, 1250), ("Discharge summary", 59_652, 1250),
               ("Echo", 45_794, 250), ("Respiratory ", 31_739, 200), ("Nutrition", 9_418, 300),
               ("General", 8_301, 200), ("Rehab Services", 5_431, 350), ("Social Work", 2_670, 250),
               ("Case Management ", 967, 150), ("Pharmacy", 103, 200), ("Consult", 98, 750))
_COLUMNS = ("ROW_ID", "SUBJECT_ID", "HADM_ID", "CHARTDATE", "CHARTTIME", "STORETIME", "CATEGORY", "DESCRIPTION",
            "CGID", "ISERROR", "TEXT")
_LINES = ("Pt is a 67 yo M w/ h/o CHF, \"EF 35%\", admitted with dyspnea.",
          "HR 88, BP 132/70, RR 18, SpO2 96% on 2L NC.",
          "Labs: Na 138, K 4.1, Cr 1.2, WBC 11.3, Hgb 9.8, Plt 210.", "Lasix 40 mg IV given, UOP 1200 cc.",
          "Neuro: A&Ox3, follows commands, MAE.", "Plan: continue abx, f/u cultures, wean O2 as tolerated.",
          "CXR: small bilateral effusions, no pneumothorax.", "", "Assessment and Plan:", "Skin: intact, no breakdown.")


def _text(rng: random.Random, length: int) -> str:
    out, size = [], 0
    target = max(20, int(rng.expovariate(1 / length)))
    while size < target:
        line = _LINES[rng.randrange(len(_LINES))]
        out.append(line)
        size += len(line) + 1
    return "\n".join(out)


def write_noteevents(path: Path, rows: int, seed: int = 0) -> Path:
    """A NOTEEVENTS-shaped CSV of ``rows`` rows (see the module docs)."""
    rng = random.Random(seed)
    total = sum(n for _, n, _ in _CATEGORIES)
    cats = [c for c, _, _ in _CATEGORIES]
    weights = [n / total for _, n, _ in _CATEGORIES]
    length = {c: ln for c, _, ln in _CATEGORIES}
    pool = {c: [_text(rng, length[c]) for _ in range(64)] for c in cats}
    picks = rng.choices(cats, weights=weights, k=rows)
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, quoting=csv.QUOTE_MINIMAL)
        w.writerow(_COLUMNS)
        for i, cat in enumerate(picks, start=1):
            subject = 10_000 + i % 46_000
            no_hadm = cat in ("Radiology", "ECG", "Echo") and i % 7 == 0
            day = f"21{i % 90 + 10:02d}-{i % 12 + 1:02d}-{i % 28 + 1:02d}" if i % 5000 != 3 else "2101-13-45"
            charttime = "" if cat == "Discharge summary" else f"{day} {i % 24:02d}:{i % 60:02d}:00"
            w.writerow((i, subject, "" if no_hadm else 100_000 + i % 58_000, day, charttime, "",
                        cat, "Report", 17_000 + i % 300, "1" if i % 200 == 0 else "",
                        pool[cat][i % 64]))
    return path


_CHILD = """
import json, sys, time
from ehrlib.corpus.mimic_notes import ImportFilters, import_notes
from ehrlib.corpus.records import NOTE_TYPES
src, out, per_type = sys.argv[1], sys.argv[2], sys.argv[3]
# every note type, radiology included, as the figures measured before the default became the paper's three
filters = ImportFilters(note_types=NOTE_TYPES, per_type=int(per_type) if per_type != "all" else None, seed=0)
cpu = time.process_time()
r = import_notes(src, out, filters=filters, overwrite=True)
print(json.dumps({"rows": r.rows, "written": r.written, "seconds": r.seconds, "cpu": time.process_time() - cpu}))
"""


def _measure(src: Path, out: Path, per_type: str) -> tuple[dict, float]:
    """Run one import in a child; (its result, its peak RSS in MB).

    Output goes to files, not pipes: ``wait4`` reaps the child, so nobody would drain a full pipe.
    """
    log = out.with_suffix(".log")
    with log.open("w+", encoding="utf-8") as fh:
        proc = subprocess.Popen([sys.executable, "-c", _CHILD, str(src), str(out), per_type],
                                stdout=fh, stderr=subprocess.STDOUT, text=True)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        fh.seek(0)
        text = fh.read()
    if proc.returncode != 0:
        raise RuntimeError(f"import child failed: {text.strip()[-500:]}")
    return json.loads(text.strip().splitlines()[-1]), usage.ru_maxrss / 1024  # Linux: kB


def run(out_dir: Path, rows: int = 2_000_000) -> Path:
    """Time importing a generated NOTEEVENTS file of ``rows`` rows; write ``bench_import.csv``."""
    results = []
    with tempfile.TemporaryDirectory(prefix="ehrlib-bench-import-") as tmp:
        src = write_noteevents(Path(tmp) / "NOTEEVENTS.csv", rows)
        mb = src.stat().st_size / 1e6
        for scenario, per_type in (("sample_100_per_type", "100"), ("all_supported_rows", "all")):
            load = os.getloadavg()[0]
            res, rss = _measure(src, Path(tmp) / f"corpus-{per_type}", per_type)
            seconds, cpu = res["seconds"], res["cpu"]
            rate = res["rows"] / seconds
            ok = rate >= TARGET_ROWS_PER_S and rss <= TARGET_RSS_MB
            results.append((scenario, res["rows"], res["written"], f"{mb:.1f}", f"{seconds:.2f}", f"{rate:.0f}",
                            f"{mb / seconds:.1f}", f"{cpu:.2f}", f"{res['rows'] / cpu:.0f}", f"{rss:.0f}",
                            f"{load:.1f}", TARGET_ROWS_PER_S, TARGET_RSS_MB, ok, sys.version.split()[0]))
    return write_csv(Path(out_dir) / OUT_NAME, HEADER, results)
