"""The resumable, concurrent batch runner behind ``ehrlib run`` and the notebooks.

``run_experiment(params) -> run_dir`` maps :func:`~ehrlib.pipeline.inspector.inspect_note`
over a corpus and commits each finished note to ``runs/<run_id>/`` through
:class:`~ehrlib.pipeline.rundir.RunWriter` (files, ledger, manifest and resume are
:mod:`ehrlib.pipeline.rundir`'s). A note that fails on bad input is recorded as failed; a
bug in one note is recorded and left for a rerun; neither stops the batch.

Concurrency: an executor (:mod:`ehrlib.pipeline.executors`) decides where notes run — by
default one bounded thread pool whose size is the backend's concurrency limit (inside a
note, segments and cache lanes use the same pool; each thread its own DuckDB cursor), or
worker actors on a Ray cluster (``executor: ray``), each built by :func:`open_worker`.
Records are written by the main thread only, in completion order.
"""
from __future__ import annotations

import contextlib
import dataclasses
import datetime as _dt
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Executor
from pathlib import Path
from typing import Any

import duckdb

from ehrlib import schema
from ehrlib.corpus.io import MANIFEST_FILE, NOTES_FILE, corpus_file, read_notes
from ehrlib.corpus.io import read_manifest as read_manifest_file
from ehrlib.corpus.mimic_notes import corpus_source_kind
from ehrlib.corpus.records import Note
from ehrlib.corpus.splits import canonical_split, split_note_ids
from ehrlib.db import read_manifest
from ehrlib.db.connect import check_tables, connect, damaged_database
from ehrlib.errors import ConfigError, DataError, EndpointUnreachable, PHIError
from ehrlib.inputs import prepare_inputs
from ehrlib.llm.phi import (
    UNDECLARED_CORPUS,
    check_phi,
    effective_source_kind,
    manifest_source_kinds,
    undeclared_corpus_hint,
)
from ehrlib.llm.usage import mostly_failed
from ehrlib.ontology import load_ontology
from ehrlib.pipeline.calibration.apply import Resolved, calibrate_note, resolve_calibrator
from ehrlib.pipeline.context import ItemProfiler, note_context
from ehrlib.pipeline.executors import NoteOutcome, Worker, make_executor, stage_params
from ehrlib.pipeline.inspector import NoteResult, inspect_note
from ehrlib.pipeline.note_limits import check_note_size
from ehrlib.pipeline.params import RunParams
from ehrlib.pipeline.rundir import (
    RunWriter,
    check_resume,
    new_run_id,
    provenance,
    summarize_ledger,
    write_manifest,
)
from ehrlib.pipeline.runid import check_run_id
from ehrlib.pipeline.runlock import run_dir_errors
from ehrlib.pipeline.stages import StageEnv, Stages, get_stages
from ehrlib.tools import make_toolset
from ehrlib.tools.context import PatientContext
from ehrlib.tools.toolset import Toolset

__all__ = ["run_experiment", "embedded_inputs", "open_worker", "open_db", "NoteVerifier", "EMBEDDED"]

log = logging.getLogger(__name__)


def _load_notes(params: RunParams) -> tuple[list[Note], Path]:
    if not params.corpus:
        raise ConfigError("no corpus: pass --corpus DIR (a folder with notes.jsonl) or set 'corpus' in the params")
    path = _notes_path(Path(params.corpus))
    notes = read_notes(path)
    if not notes:
        raise DataError(f"{path}: no notes in the file")
    ids = [n.note_id for n in notes]
    if len(set(ids)) != len(ids):
        raise DataError(f"{path}: duplicate note_id values")
    if params.split is not None:  # the corpus folder's assignment (manifest.json or import.json)
        corpus_dir = path.parent
        in_split = split_note_ids(corpus_dir, params.split)
        notes = [n for n in notes if n.note_id in in_split]
        if not notes:
            raise DataError(f"corpus {corpus_dir}: no notes in the {canonical_split(params.split)} split")
    if params.note_ids:
        wanted = set(params.note_ids)
        unknown = wanted - set(ids)
        if unknown:
            raise ConfigError(f"note_ids not in the corpus: {sorted(unknown)[:5]}")
        notes = [n for n in notes if n.note_id in wanted]
    if params.limit is not None:
        notes = notes[: params.limit]
    return notes, path


def _notes_path(folder: Path) -> Path:
    """The notes file of ``--corpus``: a corpus folder's notes.jsonl, or a notes.jsonl-shaped file.

    A raw notes CSV (what MIMIC ships) is the most likely wrong input: say how to import it
    rather than fail on its first line as bad JSON.
    """
    if not folder.exists():
        raise ConfigError(f"corpus {folder}: no such file or folder")
    name = folder.name.lower()
    if folder.is_file() and (name.endswith(".csv") or name.endswith(".csv.gz")):
        raise ConfigError(f"corpus {folder} is a notes CSV, not a corpus folder: import it with "
                          f"`ehrlib notes import {folder} OUT_DIR` and pass --corpus OUT_DIR")
    path = corpus_file(folder, NOTES_FILE) if folder.is_dir() else folder
    if folder.is_dir() and not path.is_file():
        raise ConfigError(f"corpus {folder}: no {NOTES_FILE}; a corpus folder holds {NOTES_FILE} (one note per "
                          "line, gold.jsonl optional): make one with `ehrlib notes import FILE OUT_DIR` "
                          "or `ehrlib synth notes DB OUT_DIR`")
    if not path.is_file():
        raise ConfigError(f"corpus {folder}: {NOTES_FILE} not found")
    return path


def _corpus_kinds(params: RunParams) -> list[str]:
    """``source_kind`` values of the corpus manifest, if the corpus folder has one."""
    if not params.corpus:   # notes given from Python: no corpus folder (and never the working directory)
        return []
    folder = Path(params.corpus)
    if not folder.is_dir() or not corpus_file(folder, MANIFEST_FILE).exists():
        return []
    return manifest_source_kinds(read_manifest_file(folder))


def open_db(params: RunParams) -> tuple[Any, dict[str, Any]]:
    """The run's database, read-only and checked (flavor, tables), and what its manifest says."""
    if not params.db:
        raise ConfigError("no database: pass --db DB.duckdb or set 'db' in the params")
    con = connect(params.db)
    try:
        manifest = read_manifest(con)
        flavor = schema.detect_flavor(con)
        check_tables(con, flavor)
    except LookupError as exc:
        con.close()
        raise DataError(f"{params.db}: {exc}") from None
    except duckdb.Error as exc:   # a damaged file fails on its first real read
        con.close()
        raise damaged_database(params.db, exc) from None
    except DataError as exc:
        con.close()
        raise DataError(f"{params.db}: {exc}") from None
    info = {k: v for k, v in manifest.items() if k != "tables"}
    info["flavor"] = flavor
    info.setdefault("source_kind", "credentialed")  # unknown provenance: treat as credentialed (fail closed)
    return con, info


class _NoBar:
    """The progress bar of a run that shows none (tqdm is not even imported)."""

    def update(self, n: int = 1) -> None:
        pass

    def set_postfix(self, **values: Any) -> None:
        pass

    def close(self) -> None:
        pass


def _progress_bar(show: bool, *, total: int, initial: int, desc: str) -> Any:
    if not show:
        return _NoBar()
    from tqdm import tqdm  # deferred: a bar's only use; not tqdm.auto: its notebook bar needs ipywidgets

    return tqdm(total=total, initial=initial, desc=desc, unit="note")


def _toolset_factory(params: RunParams, semantic_ranker: Any = None) -> Callable[[Any, Any], Toolset]:
    """``(cursor, NoteContext) -> toolset`` bound to the note's patient."""

    def make(cur: Any, ctx: Any) -> Toolset:
        patient = PatientContext(ctx.subject_id, ctx.hadm_id, ctx.admittime, ctx.dischtime,
                                 ctx.note.charttime or ctx.chartdate, ctx.sex)
        kwargs: dict[str, Any] = {"categories": tuple(params.tools)} if params.tools is not None else {}
        if semantic_ranker is not None:
            kwargs["semantic_ranker"] = semantic_ranker
        # the run's layout (note_context read it from this database): not probed again per note
        return make_toolset(cur, patient, flavor=getattr(ctx, "flavor", None), **kwargs)

    return make


#: the embedded default (DESIGN.md): the seeded synthetic hospital and its full corpus
EMBEDDED: dict[str, Any] = {"patients": 40, "notes_per_type": 10, "seed": 0, "layout": "mimic3"}


def embedded_inputs(params: RunParams) -> RunParams:
    """With neither corpus nor db given, the embedded synthetic hospital and corpus, built
    once under ``<runs_dir>/embedded`` (reused while the generator is unchanged).
    """
    if params.corpus is None and params.db is None:
        log.info("no corpus/db given: using the embedded synthetic hospital and corpus")
        db, corpus = prepare_inputs(Path(params.runs_dir) / "embedded", **EMBEDDED)
        return params.replace(db=str(db), corpus=str(corpus))
    if params.corpus is None or params.db is None:
        missing = ("corpus (a folder with notes.jsonl)" if params.corpus is None
                   else "db (the database the notes refer to)")
        raise ConfigError(f"no {missing}: give both --corpus and --db, or neither for the embedded synthetic data")
    return params


def run_experiment(params: RunParams, *, stages: Stages | None = None, retry_failed: bool = False) -> Path:
    """Run (or resume) one experiment; returns ``runs/<run_id>/``.

    With ``retry_failed`` the run must exist: the notes whose last attempt failed (a stage
    lost its model answer, bad input) or crashed are run again, the rest are kept. Replies
    the response cache holds are replayed, so only the failed calls reach the server.
    """
    params = embedded_inputs(params)
    notes, notes_path = _load_notes(params)
    if stages is not None and params.executor != "thread":
        raise ConfigError("a stage bundle passed in runs on the thread executor only: "
                          "Ray workers build theirs from the params")
    stages = stages or get_stages(params.method, params.backend, stage_params(params))
    run_id = check_run_id(params.run_id or new_run_id(params))
    run_dir = Path(params.runs_dir) / run_id
    started = check_resume(run_dir, params)
    if retry_failed and started is None:
        raise ConfigError(f"--retry-failed: no run {run_id} in {params.runs_dir} (give the --run-id of an "
                          "existing run folder)")
    started = started or _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    workers = params.concurrency or max(1, stages.concurrency)
    executor = make_executor(params, run_id, threads=workers, open_worker=open_worker)
    if executor.stats() is not None:  # the workers' own bundles make the model calls: count theirs
        stages = dataclasses.replace(stages, stats=executor.stats)  # type: ignore[arg-type]  # not None: checked
    resolved = resolve_calibrator(params.calibrator, params.abstain_below)
    con, db_info = open_db(params)
    writer: RunWriter | None = None
    try:
        worker, ontology_info = _worker(params, run_id, con, db_info, stages, resolved)
        writer = RunWriter(run_dir, run_id)
        done = writer.done - writer.failed if retry_failed else writer.done
        todo = [n for n in notes if n.note_id not in done]
        if retry_failed:
            log.info("--retry-failed: %d failed note(s) to rerun", len(todo))

        prov = provenance(params, db_info, notes_path, len(notes))
        last_save = [0.0]

        def save_manifest(status: str, *, every_s: float = 0.0, error: str | None = None) -> None:
            """Rewrite manifest and usage from the ledger (at most every ``every_s`` while
            running: the summary walks the whole ledger).
            """
            if time.monotonic() - last_save[0] < every_s:
                return
            last_save[0] = time.monotonic()
            write_manifest(run_dir, params, run_id, stages, prov, writer.ledger, status, started, ontology_info,
                           error, calibration=resolved.record)

        save_manifest("running")
        bar = _progress_bar(params.progress, total=len(notes), initial=len(notes) - len(todo), desc=run_id)
        # findings = predictions, as the closing summary line counts them (entities the scope
        # filter set aside are not findings)
        totals = {"findings": 0, "calls": 0, "cost": 0.0}
        try:
            # (run returns a generator: closing it stops the workers' remaining notes)
            with executor, contextlib.closing(executor.run(todo, worker.work)) as outcomes:  # type: ignore[type-var]
                for outcome in outcomes:
                    _commit_note(writer, outcome, totals)
                    bar.update(1)
                    bar.set_postfix(findings=totals["findings"], calls=totals["calls"],
                                    cost=f"${totals['cost']:.2f}", refresh=False)
                    save_manifest("running", every_s=2.0)
        except EndpointUnreachable as exc:
            # every remaining note would fail the same way: stop, say why in the manifest;
            # the notes not committed stay to do, so the same --run-id resumes once it is up
            save_manifest("failed", error=str(exc))
            raise
        finally:
            bar.close()
        summary = summarize_ledger(writer.ledger)["totals"]
        status = "complete" if summary.get("notes_error", 0) == 0 else "incomplete"
        if stages.stats:
            if mostly_failed(stages.stats().get("counts") or {}):
                status = "failed"  # most model calls failed: the outcomes say little about the method
        save_manifest(status)
        return run_dir
    except OSError as exc:
        with run_dir_errors(run_dir):   # full disk, read-only folder: one line, and resumable
            raise exc
    finally:
        if writer is not None:
            writer.close()
        con.close()


def _worker(params: RunParams, run_id: str, con: Any, db_info: dict[str, Any],
            stages: Stages, resolved: Resolved | None = None) -> tuple[Worker, dict[str, Any] | None]:
    """The note function of one process over its connection ``con`` (and the ontology it loaded).

    After verification every prediction gets its confidence from the run's calibrator
    (``resolved``, else resolved here from the params), low-confidence alarms withheld.
    """
    calibrator = (resolved or resolve_calibrator(params.calibrator, params.abstain_below)).calibrator
    # credentialed on either side (database manifest or corpus manifest) is credentialed;
    # imported MIMIC notes are credentialed text whatever database they run against; a
    # corpus that states no provenance at all is credentialed too (fail closed)
    corpus_kinds = [*_corpus_kinds(params), *filter(None, [corpus_source_kind(params.corpus)])]
    db_info["source_kind"] = effective_source_kind(str(db_info["source_kind"]),
                                                   *(corpus_kinds or [UNDECLARED_CORPUS]))
    if stages.endpoint:
        try:
            check_phi(str(db_info["source_kind"]), stages.endpoint)
        except PHIError as exc:
            if corpus_kinds:
                raise
            hint = (undeclared_corpus_hint(params.corpus) if params.corpus else
                    "Notes given from Python declare no provenance, so they are treated as credentialed.")
            raise PHIError(f"{exc} {hint}") from None
    ontology, ontology_info = None, None
    if stages.ontology_extractor is not None:
        ontology = load_ontology(con, path=params.ontology)
        ontology_info = {"version": ontology.version, "method": ontology.method, "sha8": ontology.sha8,
                         "n_items": len(ontology.items)}
    lock = threading.Lock()
    work = NoteVerifier(params, run_id, con, lock, str(db_info["flavor"]), str(db_info["source_kind"]), stages,
                        ontology, ItemProfiler(lambda: _cursor(con, lock), db_info["flavor"], params.top_k),
                        _toolset_factory(params, stages.semantic_ranker), calibrator)
    return Worker(work, stages, lambda: None), ontology_info


@dataclasses.dataclass(frozen=True, slots=True)
class NoteVerifier:
    """The note function of one process (``ehrlib run``'s workers and :class:`ehrlib.Verifier`
    alike): one note in, its :class:`NoteResult` out, calibrated. It holds the warm state a
    note reuses from the last (the connection, the stage bundle, the ontology, the TopV
    memo), so only the first note pays for building them.
    """

    params: RunParams
    run_id: str
    con: Any
    lock: threading.Lock
    flavor: str
    source_kind: str
    stages: Stages
    ontology: Any
    profiler: ItemProfiler
    make_tools: Callable[[Any, Any], Toolset]
    calibrator: Any = None

    def cursor(self) -> Any:
        """A new cursor on the shared connection (one per thread)."""
        return _cursor(self.con, self.lock)

    def __call__(self, note: Note, pool: Executor | None = None) -> NoteResult:
        """Verify one note (its inner tasks on ``pool``) and calibrate its predictions."""
        params = self.params
        check_note_size(note, params.max_note_chars, params.max_line_chars)
        cur = self.cursor()
        try:
            ctx = note_context(cur, note, flavor=self.flavor, source_kind=self.source_kind, db_path=str(params.db))
        finally:
            cur.close()
        env = StageEnv(connect=self.cursor, make_tools=lambda c: self.make_tools(c, ctx),
                       ontology=self.ontology, item_profile=self.profiler, params=params)
        try:
            result = inspect_note(ctx, self.stages, env, run_id=self.run_id, cache_size=params.validation_cache,
                                  cache_scope=params.cache_scope, pool=pool)
        finally:
            env.close()
        if self.calibrator is None or not result.predictions:
            return result
        t0 = time.perf_counter()
        cur = self.cursor()
        try:
            preds = calibrate_note(result.predictions, self.calibrator, con=cur, ctx=ctx,
                                   abstain_below=params.abstain_below)
        finally:
            cur.close()
        return dataclasses.replace(result, predictions=preds, wall_s=result.wall_s + time.perf_counter() - t0)


def open_worker(params: RunParams, run_id: str, stages: Stages | None = None) -> Worker:
    """A worker process's own means to verify notes (a Ray worker): the database opened
    read-only here, the stage bundle (``stages``, or built from ``params``), the ontology.
    """
    con, db_info = open_db(params)
    try:
        worker, _ = _worker(params, run_id, con, db_info, stages or get_stages(params.method, params.backend, params))
    except BaseException:
        con.close()
        raise
    return dataclasses.replace(worker, close=con.close)


def _cursor(con: Any, lock: threading.Lock) -> Any:
    with lock:  # creating cursors on one connection from many threads is serialised
        return con.cursor()


def _commit_note(writer: RunWriter, outcome: NoteOutcome, totals: dict[str, Any]) -> None:
    writer.commit(outcome.note_id, outcome.lines, outcome.summary)
    if outcome.status != "ok":
        if outcome.trace:  # a bug: recorded, the note left for a rerun, the batch goes on
            log.error("note %s failed: %s\n%s", outcome.note_id, outcome.error, outcome.trace)
        else:
            log.warning("note %s: %s", outcome.note_id, outcome.error)
    summary = outcome.summary
    if "stages" not in summary:  # no result at all (bad input, a bug)
        return
    totals["findings"] += summary["n_predictions"]
    totals["calls"] += sum(s["llm_calls"] for s in summary["stages"].values())
    totals["cost"] += sum(s["cost_usd"] for s in summary["stages"].values())
