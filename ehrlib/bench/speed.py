"""Speed of a fresh process, this code against a baseline version, measured in one run.

Scenarios (each an ``ehrlib run`` of the offline inspector in a new Python process over
the MIMIC-III demo database, so imports, database checks and every per-process build
count):

- ``one_note``: the first note of ``tests/fixtures/realnotes``;
- ``real_corpus``: 14 hand-written notes on real MIMIC-III demo admissions (the 12 of
  ``realnotes``, then the first 2 of ``realnotes_holdout``).

Each runs twice per code version: ``cold`` (an empty cache folder: what a database's first
run pays) then ``warm`` (the same folder: every later run). Python's compiled bytecode is
kept between runs as an installed package's is (:func:`child_process`). The baseline is another
version of ehrlib extracted from git (``EHRLIB_BENCH_BASELINE``: a git ref; default the
newest ``v*`` tag), run the same way with the same interpreter; it has no disk cache, so
its rows are ``none``. Every current run's predictions are compared with the baseline's
for the same scenario, ignoring run ids and tool timings (``identical_predictions``).

``figures/bench_speed.csv`` gets one row per code version x scenario x cache, with wall
and CPU seconds (CPU is the steadier figure on a shared machine; the 1-minute load
average is recorded), the speed-up over the baseline's warm run, and for the corpus a
projection: hours for MIMIC-III's 59,652 discharge summaries on one core (CPU seconds per
note) and on 32 cores assuming linear scaling. A figure ``bench_speed.png`` shows the
wall times side by side.
"""
from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ehrlib.bench import BenchSkipped, repo_root, write_csv
from ehrlib.bench.build import demo_folder
from ehrlib.errors import ConfigError

__all__ = ["run", "HEADER", "BASELINE_ENV", "canonical_predictions", "baseline_ref", "MIMIC3_DISCHARGE_SUMMARIES"]

OUT_NAME = "bench_speed.csv"
BASELINE_ENV = "EHRLIB_BENCH_BASELINE"
#: discharge summaries in MIMIC-III's NOTEEVENTS (the issue's projection target)
MIMIC3_DISCHARGE_SUMMARIES = 59_652
HEADER = ("code", "ref", "commit", "scenario", "cache", "n_notes", "wall_s", "cpu_s", "wall_s_per_note",
          "speedup_vs_baseline", "identical_predictions", "projected_hours_1_core", "projected_hours_32_cores",
          "load_avg_1m")
_SCENARIOS = (("one_note", (("realnotes", 1),)), ("real_corpus", (("realnotes", 12), ("realnotes_holdout", 2))))


def canonical_predictions(run_dir: Path) -> list[str]:
    """The run's predictions as sorted JSON lines without what differs between identical runs:
    the run id, each tool call's milliseconds and its call id (numbered in the order the
    note's parallel lanes happen to call, so two runs of one code differ in it).
    """
    out = []
    with open(run_dir / "predictions.jsonl", encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            rec.pop("run_id", None)
            for call in rec.get("tool_calls") or ():
                call.pop("ms", None)
                call.pop("call_id", None)   # a counter shared by the note's parallel lanes: scheduling order
            out.append(json.dumps(rec, sort_keys=True))
    return sorted(out)


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(repo_root()), *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def baseline_ref() -> str | None:
    """The git ref to compare with: ``$EHRLIB_BENCH_BASELINE``, else the newest ``v*`` tag."""
    ref = os.environ.get(BASELINE_ENV, "").strip()
    if ref:
        return ref
    try:
        tags = _git("tag", "--list", "v*", "--sort=-creatordate").splitlines()
    except (OSError, subprocess.CalledProcessError):
        return None
    return tags[0] if tags else None


def _extract(ref: str, dest: Path) -> str:
    """Write the tree of ``ref`` into ``dest``; its commit id."""
    commit = _git("rev-parse", "--verify", f"{ref}^{{commit}}")
    dest.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(repo_root()), "archive", commit, "ehrlib"], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return commit


def _corpus(parts: tuple[tuple[str, int], ...], dest: Path) -> int:
    dest.mkdir(parents=True)
    lines: list[str] = []
    for fixture, n in parts:
        with open(repo_root() / "tests" / "fixtures" / fixture / "notes.jsonl", encoding="utf-8") as fh:
            lines += [ln for ln in fh if ln.strip()][:n]
    (dest / "notes.jsonl").write_text("".join(lines), encoding="utf-8")
    return len(lines)


def child_process(code: Path, cache: Path, cwd: Path) -> tuple[dict[str, str], Path]:
    """Environment and working folder of a child that must import ehrlib from ``code``.

    ``python -m`` puts the working folder first on ``sys.path``, ahead of ``PYTHONPATH``: a
    child started in the checkout would import the checkout's ehrlib whatever ``code`` says
    (the baseline would be the current code), so the child runs in ``cwd``, a folder with no
    package of its own.

    Bytecode: the child may write and read compiled modules, in ``pycache/`` beside the cache
    folder (``PYTHONPYCACHEPREFIX``; ``PYTHONDONTWRITEBYTECODE`` is dropped), as any installed
    package does; otherwise an environment that forbids bytecode would have every run compile
    every module from source (about 0.3 s of CPU), a cost of that environment, not of the code.
    Both versions run alike: the first run of each compiles, later runs read.
    """
    cache = Path(cache).resolve()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPATH": str(Path(code).resolve()), "EHRLIB_CACHE_DIR": str(cache),
            "PYTHONPYCACHEPREFIX": str(cache.parent / "pycache")}, cwd


def _timed_run(code: Path, corpus: Path, db: Path, runs: Path, run_id: str, cache: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of one ``ehrlib run`` in a fresh process of this interpreter."""
    runs = Path(runs).resolve()
    runs.mkdir(parents=True, exist_ok=True)
    env, cwd = child_process(code, cache, runs)
    argv = [sys.executable, "-m", "ehrlib", "run", "--corpus", str(Path(corpus).resolve()), "--db",
            str(Path(db).resolve()), "--runs-dir", str(runs), "--run-id", run_id, "--no-progress"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, cwd=cwd)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise RuntimeError(f"ehrlib run {run_id} with {code} failed: {tail}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _measure(label: str, ref: str, commit: str, code: Path, corpora: dict[str, tuple[Path, int]], db: Path,
             work: Path) -> list[dict[str, Any]]:
    rows = []
    cache = work / f"cache-{label}"
    for scenario, (corpus, n) in corpora.items():
        for mode in ("cold", "warm"):
            if mode == "cold":
                shutil.rmtree(cache, ignore_errors=True)
            run_id = f"{label}-{scenario}-{mode}"
            wall, cpu = _timed_run(code, corpus, db, work / "runs", run_id, cache)
            rows.append({"code": label, "ref": ref, "commit": commit[:12], "scenario": scenario,
                         "cache": mode if label == "current" else f"none ({'1st' if mode == 'cold' else '2nd'} run)",
                         "n_notes": n, "wall_s": round(wall, 2),
                         "cpu_s": round(cpu, 2), "wall_s_per_note": round(wall / n, 3),
                         "load_avg_1m": round(os.getloadavg()[0], 1), "_run": work / "runs" / run_id, "_mode": mode})
    return rows


def _finish(rows: list[dict[str, Any]]) -> None:
    """Speed-ups, prediction identity and projections, in place."""
    base = {r["scenario"]: r for r in rows if r["code"] == "baseline" and r["_mode"] == "warm"}
    for r in rows:
        b = base.get(r["scenario"])
        r["speedup_vs_baseline"] = round(b["wall_s"] / r["wall_s"], 2) if b and r["wall_s"] else ""
        r["identical_predictions"] = ("" if b is None or r is b else
                                      "yes" if canonical_predictions(r["_run"]) == canonical_predictions(b["_run"])
                                      else "no")
        if r["scenario"] == "real_corpus":
            per_note_cpu = r["cpu_s"] / r["n_notes"]
            r["projected_hours_1_core"] = round(MIMIC3_DISCHARGE_SUMMARIES * per_note_cpu / 3600, 1)
            r["projected_hours_32_cores"] = round(MIMIC3_DISCHARGE_SUMMARIES * per_note_cpu / 3600 / 32, 2)


def run(out_dir: Path, *, work_dir: Path | None = None) -> Path:
    """Measure this code (and the baseline, when there is one) and write ``bench_speed.csv``."""
    from ehrlib.db.build import build_db  # deferred: the CSV-only path of the package needs no builder

    src = demo_folder()
    if src is None:
        raise BenchSkipped("MIMIC-III demo not found (set EHRLIB_MIMIC3_DEMO)")
    with tempfile.TemporaryDirectory(prefix="ehrlib-speed-") as tmp:
        work = Path(work_dir) if work_dir is not None else Path(tmp)
        db = work / "mimic3demo.duckdb"
        if not db.exists():
            build_db(src, db, progress=False)
        corpora = {name: (work / f"corpus-{name}", _corpus(parts, work / f"corpus-{name}"))
                   for name, parts in _SCENARIOS}
        versions: list[tuple[str, str, str, Path]] = []
        ref = baseline_ref()
        if ref is not None:
            try:
                versions.append(("baseline", ref, _extract(ref, work / "baseline"), work / "baseline"))
            except (OSError, subprocess.CalledProcessError) as exc:
                why = (getattr(exc, "stderr", None) or str(exc) or type(exc).__name__)
                why = why.decode("utf-8", "replace") if isinstance(why, bytes) else why
                raise ConfigError(f"{BASELINE_ENV}={ref!r}: cannot extract it from git "
                                  f"({(why.strip().splitlines() or ['?'])[-1][:200]})") from None
        try:
            head = _git("rev-parse", "HEAD") + ("+changes" if _git("status", "--porcelain", "ehrlib") else "")
        except (OSError, subprocess.CalledProcessError):
            head = "unknown"
        versions.append(("current", "working tree", head, repo_root()))
        rows: list[dict[str, Any]] = []
        for label, vref, commit, code in versions:
            rows += _measure(label, vref, commit, code, corpora, db, work)
        _finish(rows)
        path = write_csv(Path(out_dir) / OUT_NAME, HEADER, [[r.get(h, "") for h in HEADER] for r in rows])
        _figure(rows, Path(out_dir))
        for r in rows:
            if r["scenario"] == "real_corpus" and r["code"] == "current" and r["cache"] == "warm":
                print(f"projection: MIMIC-III's {MIMIC3_DISCHARGE_SUMMARIES:,} discharge summaries take "
                      f"{r['projected_hours_1_core']} h on one core, {r['projected_hours_32_cores']} h on 32 cores")
        return path


def _figure(rows: list[dict[str, Any]], out_dir: Path) -> None:
    import matplotlib.pyplot as plt  # deferred: plotting only when the benchmark ran

    from ehrlib.viz import savefig

    scenarios = list(dict.fromkeys(r["scenario"] for r in rows))
    bars = list(dict.fromkeys(f"{r['code']}: {r['cache']}" for r in rows))
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.4))
    width = 0.8 / max(1, len(bars))
    for ax, column, title in zip(axes, ("wall_s", "cpu_s"), ("wall seconds", "CPU seconds"), strict=True):
        for k, bar in enumerate(bars):
            values = [next((r[column] for r in rows if r["scenario"] == s and f"{r['code']}: {r['cache']}" == bar),
                           0) for s in scenarios]
            xs = [i + (k - (len(bars) - 1) / 2) * width for i in range(len(scenarios))]
            ax.bar(xs, values, width, label=bar)
            for x, v in zip(xs, values, strict=True):
                ax.annotate(f"{v:.1f}", (x, v), ha="center", va="bottom", fontsize=6)
        ax.set_xticks(range(len(scenarios)), [f"{s} ({next(r['n_notes'] for r in rows if r['scenario'] == s)})"
                                              for s in scenarios])
        ax.set_ylabel(f"{title}, fresh process")
    load = max(r["load_avg_1m"] for r in rows)
    fig.suptitle(f"ehrlib run, offline inspector, MIMIC-III demo (notes in brackets; load average up to {load})",
                 fontsize=9)
    axes[0].legend(fontsize=7, frameon=False)
    savefig(fig, OUT_NAME.removesuffix(".csv"), out_dir=out_dir, formats=("png",))
    plt.close(fig)
