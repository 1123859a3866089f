"""Notes per second of the thread and Ray executors, and what Ray costs per note.

On the embedded corpus (the seeded synthetic hospital ``ehrlib run`` uses by default),
with two backends: ``offline`` (CPU-bound rules) and the orchestration oracle of
:mod:`ehrlib.bench.pipeline` at a fixed simulated latency per model call (a run that
mostly waits on a model; its answers are the gold, so no accuracy is reported).

Each configuration runs twice under one run id: first ``n_small`` notes, then — resumed
with a larger limit — the rest up to ``n_large``. For the one-worker, one-thread rows the
notes run one after another, so a part's wall time minus the notes' own compute time
(``wall_s`` in the ledger, measured inside the worker) is the time spent outside the notes:
fixed cost (worker start-up, database and stage set-up, manifest) plus, per note, dispatch,
transfer of its records and the commit. The two parts share the fixed cost, so their
difference gives ``outside_per_note_ms`` and ``fixed_s`` apart, free of the notes' own
(noisy, warm-up-heavy) compute. ``overhead_per_note_ms`` is the Ray row's outside time per
note minus the thread row's: what shipping a note to a worker and its records back costs.
The two-way rows (two threads; two Ray workers) give throughput on two cores: threads
share Python's GIL, Ray workers do not. The ``transfer only`` row times the transport
alone: each note's committed records sent to an actor and back, nothing else running.

``ray.init`` (one local instance, ``num_cpus=2``; with ``RAY_ADDRESS`` set, joining that
running cluster instead) is timed apart (``ray_init_s``). The
note counts come from ``EHRLIB_BENCH_EXECUTOR_NOTES`` (``small,large``; default 2,8); above
the embedded corpus's 30 notes a larger synthetic hospital and corpus of the same generator
is built (``ceil(large / 3)`` notes per type). ``EHRLIB_BENCH_EXECUTOR_BACKENDS`` picks the
backends (default ``offline,oracle``); the rows of a backend not measured are kept from the
previous file, so a long offline scaling run leaves the oracle rows in place.

``speedup`` is a two-way row's notes per second over its one-way row's (same backend and
executor): what the second thread or worker adds. The ``cpu only`` row is the ceiling:
two Ray actors running a pure-Python loop against one (2 with a free core, 1 without).
``load_avg_1m`` is the machine's load average when the configuration finished: on a
machine shared with other work, read the throughput next to it.
"""
from __future__ import annotations

import csv
import importlib.util
import json
import logging
import math
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from ehrlib.bench import BenchSkipped, write_csv
from ehrlib.bench.pipeline import DEFAULT_LATENCY_S
from ehrlib.errors import ConfigError
from ehrlib.inputs import prepare_inputs
from ehrlib.pipeline.params import load_params
from ehrlib.pipeline.rundir import read_ledger
from ehrlib.pipeline.runner import EMBEDDED, run_experiment
from ehrlib.synth.notes import NOTE_TYPES

__all__ = ["run", "CONFIGS"]

#: (executor, ray workers, threads per process)
CONFIGS: tuple[tuple[str, int, int], ...] = (("thread", 1, 1), ("ray", 1, 1), ("thread", 1, 2), ("ray", 2, 1))
HEADER = ["backend", "executor", "workers", "threads", "latency_s", "n_notes", "wall_s", "notes_per_s",
          "compute_per_note_s", "fixed_s", "outside_per_note_ms", "overhead_per_note_ms", "ray_init_s", "speedup",
          "load_avg_1m"]
BACKENDS = ("offline", "oracle")
OUT_NAME = "bench_executors.csv"


def _counts() -> tuple[int, int]:
    raw = os.environ.get("EHRLIB_BENCH_EXECUTOR_NOTES", "2,8")
    try:
        small, large = (int(x) for x in raw.split(","))
    except ValueError:
        raise ConfigError(f"EHRLIB_BENCH_EXECUTOR_NOTES must be 'small,large', got {raw!r}") from None
    if small < 1 or large <= 2 * small:
        raise ConfigError("EHRLIB_BENCH_EXECUTOR_NOTES needs 0 < small and large > 2 * small")
    return small, large


def _backends() -> tuple[str, ...]:
    raw = os.environ.get("EHRLIB_BENCH_EXECUTOR_BACKENDS", ",".join(BACKENDS))
    names = tuple(b.strip() for b in raw.split(",") if b.strip())
    if not names or any(b not in BACKENDS for b in names):
        raise ConfigError(f"EHRLIB_BENCH_EXECUTOR_BACKENDS must list some of {', '.join(BACKENDS)}, got {raw!r}")
    return names


def _inputs(work: Path, large: int) -> tuple[Path, Path]:
    """The embedded hospital and corpus, or one of the same generator with ``large`` notes or more."""
    per_type = math.ceil(large / len(NOTE_TYPES))
    if per_type <= EMBEDDED["notes_per_type"]:
        db, corpus = prepare_inputs(work, **EMBEDDED)
    else:
        db, corpus = prepare_inputs(work, **{**EMBEDDED, "notes_per_type": per_type,
                                             "patients": max(EMBEDDED["patients"], per_type + per_type // 7)})
    assert corpus is not None  # with_corpus: always built
    with (corpus / "notes.jsonl").open(encoding="utf-8") as fh:
        n = sum(1 for line in fh if line.strip())
    if n < large:
        raise ConfigError(f"the synthetic corpus holds {n} notes, fewer than the {large} asked for")
    return db, corpus


def _kept_rows(path: Path, measured: tuple[str, ...]) -> list[list[str]]:
    """Rows of the previous file for backends this run does not measure (same columns only)."""
    try:
        with path.open(encoding="utf-8", newline="") as fh:
            rows = list(csv.reader(fh))
    except FileNotFoundError:
        return []
    if not rows or rows[0] != HEADER[:len(rows[0])]:
        return []
    skip = set(measured) | ({"transfer only", "cpu only"} if "offline" in measured else set())
    # a file from before a column was added: its rows get that column empty
    return [r + [""] * (len(HEADER) - len(r)) for r in rows[1:] if r and r[0] not in skip]


def _measure(base: Any, run_id: str, small: int, large: int) -> dict[str, float]:
    """Wall time, fixed cost, compute and outside time per note of a run of ``small``
    notes resumed to ``large``.
    """
    walls, computes, counts = [], [], []
    seen = 0
    for limit in (small, large):
        t0 = time.perf_counter()
        run_dir = run_experiment(base.replace(run_id=run_id, limit=limit))
        walls.append(time.perf_counter() - t0)
        part = read_ledger(run_dir)[seen:]
        seen += len(part)
        if any(e.get("status") != "ok" for e in part):
            raise RuntimeError(f"bench run {run_id}: a note did not finish ok")
        computes.append(sum(e.get("wall_s", 0.0) for e in part))
        counts.append(len(part))
    if counts != [small, large - small]:
        raise RuntimeError(f"bench run {run_id}: expected {small} then {large - small} notes, got {counts}")
    outside = [w - c for w, c in zip(walls, computes, strict=False)]
    per_note = (outside[1] - outside[0]) / (counts[1] - counts[0])
    return {"wall_s": sum(walls), "fixed_s": outside[0] - per_note * counts[0], "outside_per_note_s": per_note,
            "compute_per_note_s": sum(computes) / large}


def _transfer_ms(ray: Any, run_dir: Path, repeats: int = 3) -> tuple[float, int]:
    """(ms per note, bytes per note) to send one note to a Ray actor and its records back:
    the committed lines of ``run_dir`` grouped by note, echoed by an actor that does nothing
    else — the transport part of the overhead, without the rest of the run.
    """
    by_note: dict[str, list[str]] = {}
    for name in ("predictions.jsonl", "tool_calls.jsonl", "stages.jsonl"):
        for line in (run_dir / name).read_text(encoding="utf-8").splitlines():
            by_note.setdefault(json.loads(line)["note_id"], []).append(line)
    echo = ray.remote(num_cpus=0)(_Echo).remote()
    ray.get(echo.back.remote([]))
    t0 = time.perf_counter()
    for _ in range(repeats):
        for lines in by_note.values():
            ray.get(echo.back.remote(lines))
    ms = (time.perf_counter() - t0) * 1000 / (repeats * len(by_note))
    ray.kill(echo)
    return ms, sum(len(x) for v in by_note.values() for x in v) // len(by_note)


class _Echo:
    def back(self, lines: list[str]) -> list[str]:
        return lines

    def spin(self, n: int) -> float:
        """Seconds of a pure-Python loop of ``n`` steps (CPU only: no I/O, no GIL sharing)."""
        t0 = time.perf_counter()
        x = 0
        for i in range(n):
            x += i * i
        return time.perf_counter() - t0


def _cpu_speedup(ray: Any, steps: int = 10_000_000) -> float:
    """Two actors' CPU-bound loop against one's: the most a second worker can add here.

    Near 2 with a free core; near 1 when the machine gives this job one core's worth
    (busy cores, or a scheduler that shares CPU per login session among its processes).
    """
    actors = [ray.remote(num_cpus=0)(_Echo).remote() for _ in range(2)]
    ray.get([a.spin.remote(1000) for a in actors])
    one = ray.get(actors[0].spin.remote(steps))
    t0 = time.perf_counter()
    ray.get([a.spin.remote(steps) for a in actors])
    two = time.perf_counter() - t0
    for a in actors:
        ray.kill(a)
    return 2 * one / two


def run(out_dir: Path, *, latency: float | None = None) -> Path:
    """Notes per second of the thread and Ray executors; write ``bench_executors.csv``."""
    if importlib.util.find_spec("ray") is None:
        raise BenchSkipped("ray is not installed (pip install 'ehrlib[ray]')")
    # deferred: optional dependency (ray, the `ray` extra); one local instance for all rows
    import ray

    latency = float(os.environ.get("EHRLIB_BENCH_LATENCY", DEFAULT_LATENCY_S)) if latency is None else latency
    small, large = _counts()
    backends = _backends()
    rows: list[list[Any]] = []
    with tempfile.TemporaryDirectory(prefix="ehrlib-bench-executors-") as tmp:
        db, corpus = _inputs(Path(tmp) / "embedded", large)
        t0 = time.perf_counter()
        started = not ray.is_initialized()
        if started:
            # a running cluster (RAY_ADDRESS) sets its own CPUs; a local instance gets two
            ray.init(num_cpus=None if os.environ.get("RAY_ADDRESS") else 2, include_dashboard=False,
                     logging_level=logging.WARNING)
        ray_init_s = time.perf_counter() - t0
        try:
            for backend in backends:
                options = {"latency_s": latency} if backend == "oracle" else {}
                serial_outside: float | None = None
                one_way: dict[str, float] = {}
                for executor, workers, threads in CONFIGS:
                    base = load_params(None, corpus=str(corpus), db=str(db), backend=backend, progress=False,
                                       runs_dir=str(Path(tmp) / "runs"), executor=executor, concurrency=threads,
                                       ray_workers=workers if executor == "ray" else None, backend_options=options)
                    m = _measure(base, f"{backend}-{executor}-{workers}x{threads}", small, large)
                    serial = workers * threads == 1
                    overhead: float | str = ""
                    if serial and executor == "thread":
                        serial_outside = m["outside_per_note_s"]
                    elif serial and serial_outside is not None:
                        overhead = round((m["outside_per_note_s"] - serial_outside) * 1000, 1)
                    rate = large / m["wall_s"]
                    if serial:
                        one_way[executor] = rate
                    speedup = round(rate / one_way[executor], 2) if not serial and executor in one_way else ""
                    rows.append([backend, executor, workers, threads, latency if backend == "oracle" else "", large,
                                 round(m["wall_s"], 2), round(rate, 3),
                                 round(m["compute_per_note_s"], 4),
                                 round(m["fixed_s"], 2) if serial else "",
                                 round(m["outside_per_note_s"] * 1000, 1) if serial else "", overhead,
                                 round(ray_init_s, 1) if executor == "ray" else "", speedup,
                                 round(os.getloadavg()[0], 2)])
            if "offline" in backends:
                ms, size = _transfer_ms(ray, Path(tmp) / "runs" / "offline-ray-1x1")
                rows.append(["transfer only", "ray", 1, 1, "", large, "", "", "", "", round(ms, 1),
                             f"{size} bytes a note", round(ray_init_s, 1), "", round(os.getloadavg()[0], 2)])
                rows.append(["cpu only", "ray", 2, 1, "", "", "", "", "", "", "", "", round(ray_init_s, 1),
                             round(_cpu_speedup(ray), 2), round(os.getloadavg()[0], 2)])
        finally:
            if started:
                ray.shutdown()
    out = Path(out_dir) / OUT_NAME
    return write_csv(out, HEADER, [*rows, *_kept_rows(out, backends)])
