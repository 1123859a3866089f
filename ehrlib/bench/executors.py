"""Notes per second of the thread and Ray executors, and what Ray costs per note.

On the embedded corpus (the seeded synthetic hospital ``ehrlib run`` uses by default),
with two backends: ``offline`` (CPU-bound rules) and the orchestration oracle of
:mod:`ehrlib.bench.pipeline` at a fixed simulated latency per model call (a run that
mostly waits on a model; its answers are the gold, so no accuracy is reported).

Each configuration runs twice under one run id: first ``n_small`` notes, then — resumed
with a larger limit — the next ``n_large - n_small``. Both walls hold the same fixed cost
(worker start-up, database and stage set-up, manifest), so the difference gives the
steady per-note time and the fixed part separately. ``overhead_per_note_ms`` is a Ray
row's per-note time minus the thread row's at the same parallelism (1 worker x 1 thread
against 1 thread): what shipping a note to a worker and its records back costs. The
2-way rows show the throughput on two cores (threads share the GIL; Ray workers do not).

``ray.init`` (one local instance, ``num_cpus=2``) is timed apart (``ray_init_s``). The
note counts come from ``EHRLIB_BENCH_EXECUTOR_NOTES`` (``small,large``; default 2,10).
"""
from __future__ import annotations

import importlib.util
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

__all__ = ["run", "CONFIGS"]

#: (executor, ray workers, threads per process)
CONFIGS: tuple[tuple[str, int, int], ...] = (("thread", 1, 1), ("ray", 1, 1), ("thread", 1, 2), ("ray", 2, 1))
HEADER = ["backend", "executor", "workers", "threads", "latency_s", "n_notes", "fixed_s", "per_note_s",
          "notes_per_s", "overhead_per_note_ms", "ray_init_s"]


def _counts() -> tuple[int, int]:
    raw = os.environ.get("EHRLIB_BENCH_EXECUTOR_NOTES", "2,10")
    try:
        small, large = (int(x) for x in raw.split(","))
    except ValueError:
        raise ConfigError(f"EHRLIB_BENCH_EXECUTOR_NOTES must be 'small,large', got {raw!r}") from None
    if small < 1 or large <= 2 * small:
        raise ConfigError("EHRLIB_BENCH_EXECUTOR_NOTES needs 0 < small and large > 2 * small")
    return small, large


def _measure(base: Any, run_id: str, small: int, large: int) -> tuple[float, float]:
    """(fixed seconds, seconds per note) from a run of ``small`` notes resumed to ``large``."""
    walls = []
    for limit in (small, large):
        t0 = time.perf_counter()
        run_dir = run_experiment(base.replace(run_id=run_id, limit=limit))
        walls.append(time.perf_counter() - t0)
    ledger = read_ledger(run_dir)
    if len(ledger) != large or any(e.get("status") != "ok" for e in ledger):
        raise RuntimeError(f"bench run {run_id}: expected {large} ok notes, got {len(ledger)}")
    per_note = (walls[1] - walls[0]) / (large - 2 * small)
    return walls[0] - per_note * small, per_note


def run(out_dir: Path, *, latency: float | None = None) -> Path:
    if importlib.util.find_spec("ray") is None:
        raise BenchSkipped("ray is not installed (pip install 'ehrlib[ray]')")
    # deferred: optional dependency (ray, the `ray` extra); one local instance for all rows
    import ray

    latency = float(os.environ.get("EHRLIB_BENCH_LATENCY", DEFAULT_LATENCY_S)) if latency is None else latency
    small, large = _counts()
    rows: list[list[Any]] = []
    with tempfile.TemporaryDirectory(prefix="ehrlib-bench-executors-") as tmp:
        db, corpus = prepare_inputs(Path(tmp) / "embedded", **EMBEDDED)
        t0 = time.perf_counter()
        started = not ray.is_initialized()
        if started:
            ray.init(num_cpus=2, include_dashboard=False, logging_level="WARNING")
        ray_init_s = time.perf_counter() - t0
        try:
            for backend in ("offline", "oracle"):
                options = {"latency_s": latency} if backend == "oracle" else {}
                thread_per_note: dict[int, float] = {}
                for executor, workers, threads in CONFIGS:
                    base = load_params(None, corpus=str(corpus), db=str(db), backend=backend, progress=False,
                                       runs_dir=str(Path(tmp) / "runs"), executor=executor, concurrency=threads,
                                       ray_workers=workers if executor == "ray" else None, backend_options=options)
                    fixed, per_note = _measure(base, f"{backend}-{executor}-{workers}x{threads}", small, large)
                    parallel = workers * threads if executor == "ray" else threads
                    overhead = None
                    if executor == "thread":
                        thread_per_note[parallel] = per_note
                    elif parallel == 1:  # same parallelism, one process each: the difference is Ray's
                        overhead = round((per_note - thread_per_note[parallel]) * 1000, 1)
                    rows.append([backend, executor, workers, threads, latency if backend == "oracle" else "",
                                 large, round(fixed, 2), round(per_note, 4), round(1 / per_note, 2) if per_note > 0
                                 else "", overhead if overhead is not None else "",
                                 round(ray_init_s, 1) if executor == "ray" else ""])
        finally:
            if started:
                ray.shutdown()
    return write_csv(Path(out_dir) / "bench_executors.csv", HEADER, rows)
