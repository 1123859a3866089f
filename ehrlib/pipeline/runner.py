"""The resumable, concurrent batch runner behind ``ehrlib run`` and the notebooks.

``run_experiment(params) -> run_dir`` maps :func:`~ehrlib.pipeline.inspector.inspect_note`
over a corpus and commits each finished note to ``runs/<run_id>/`` through
:class:`~ehrlib.pipeline.rundir.RunWriter` (files, ledger, manifest and resume are
:mod:`ehrlib.pipeline.rundir`'s). A note that fails on bad input is recorded as failed; a
bug in one note is recorded and left for a rerun; neither stops the batch.

Concurrency: notes (and, inside a note, segments and cache lanes) run on one bounded
thread pool whose size is the backend's concurrency limit; each thread uses its own DuckDB
cursor. Records are written by the main thread only, in completion order.
"""
from __future__ import annotations

import datetime as _dt
import logging
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any, Callable

import duckdb
from tqdm import tqdm  # not tqdm.auto: its notebook bar needs ipywidgets, absent here

from ehrlib import schema
from ehrlib.corpus.io import MANIFEST_FILE, NOTES_FILE, corpus_file, dumps_record, read_notes
from ehrlib.corpus.io import read_manifest as read_manifest_file
from ehrlib.corpus.mimic_notes import corpus_source_kind
from ehrlib.corpus.records import Note
from ehrlib.db import read_manifest
from ehrlib.db.connect import check_tables, connect
from ehrlib.errors import ConfigError, DataError, EhrlibError
from ehrlib.inputs import prepare_inputs
from ehrlib.llm.phi import check_phi, effective_source_kind, manifest_source_kinds
from ehrlib.ontology import load_ontology
from ehrlib.pipeline.context import ItemProfiler, note_context
from ehrlib.pipeline.inspector import NoteResult, inspect_note
from ehrlib.pipeline.note_limits import check_note_size
from ehrlib.pipeline.params import RunParams
from ehrlib.pipeline.runlock import run_dir_errors
from ehrlib.pipeline.rundir import (
    RunWriter,
    check_resume,
    new_run_id,
    note_lines,
    note_summary,
    provenance,
    summarize_ledger,
    write_manifest,
)
from ehrlib.pipeline.stages import StageEnv, Stages, get_stages
from ehrlib.tools import make_toolset
from ehrlib.tools.context import PatientContext
from ehrlib.tools.toolset import Toolset

__all__ = ["run_experiment", "embedded_inputs", "EMBEDDED"]

log = logging.getLogger(__name__)


def _load_notes(params: RunParams) -> tuple[list[Note], Path]:
    if not params.corpus:
        raise ConfigError("no corpus: pass --corpus DIR (a folder with notes.jsonl) or set 'corpus' in the params")
    folder = Path(params.corpus)
    path = corpus_file(folder, NOTES_FILE) if folder.is_dir() else folder
    if not path.is_file():
        raise ConfigError(f"corpus {folder}: {NOTES_FILE} not found")
    notes = read_notes(path)
    if not notes:
        raise DataError(f"{path}: no notes in the file")
    ids = [n.note_id for n in notes]
    if len(set(ids)) != len(ids):
        raise DataError(f"{path}: duplicate note_id values")
    if params.note_ids:
        wanted = set(params.note_ids)
        unknown = wanted - set(ids)
        if unknown:
            raise ConfigError(f"note_ids not in the corpus: {sorted(unknown)[:5]}")
        notes = [n for n in notes if n.note_id in wanted]
    if params.limit is not None:
        notes = notes[: params.limit]
    return notes, path


def _corpus_kinds(params: RunParams) -> list[str]:
    """``source_kind`` values of the corpus manifest, if the corpus folder has one."""
    folder = Path(params.corpus or "")
    if not folder.is_dir() or not corpus_file(folder, MANIFEST_FILE).exists():
        return []
    return manifest_source_kinds(read_manifest_file(folder))


def _open_db(params: RunParams) -> tuple[Any, dict[str, Any]]:
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
    except (duckdb.Error, DataError) as exc:   # a damaged file fails on its first real read
        con.close()
        if isinstance(exc, DataError):
            raise DataError(f"{params.db}: {exc}") from None
        raise DataError(f"{params.db} is damaged ({' '.join(str(exc).split())[:200]})") from None
    info = {k: v for k, v in manifest.items() if k != "tables"}
    info["flavor"] = flavor
    info.setdefault("source_kind", "credentialed")  # unknown provenance: treat as credentialed (fail closed)
    return con, info


def _toolset_factory(params: RunParams, semantic_ranker: Any = None) -> Callable[[Any, Any], Toolset]:
    """``(cursor, NoteContext) -> toolset`` bound to the note's patient."""

    def make(cur: Any, ctx: Any) -> Toolset:
        patient = PatientContext(ctx.subject_id, ctx.hadm_id, ctx.admittime, ctx.dischtime,
                                 ctx.note.charttime or ctx.chartdate, ctx.sex)
        kwargs: dict[str, Any] = {"categories": tuple(params.tools)} if params.tools is not None else {}
        if semantic_ranker is not None:
            kwargs["semantic_ranker"] = semantic_ranker
        return make_toolset(cur, patient, **kwargs)

    return make


#: the embedded default (DESIGN.md): the seeded synthetic hospital and its full corpus
EMBEDDED = {"patients": 40, "notes_per_type": 10, "seed": 0, "layout": "mimic3"}


def embedded_inputs(params: RunParams) -> RunParams:
    """With neither corpus nor db given, the embedded synthetic hospital and corpus, built
    once under ``<runs_dir>/embedded`` (reused while the generator is unchanged)."""
    if params.corpus is None and params.db is None:
        log.info("no corpus/db given: using the embedded synthetic hospital and corpus")
        db, corpus = prepare_inputs(Path(params.runs_dir) / "embedded", **EMBEDDED)
        return params.replace(db=str(db), corpus=str(corpus))
    if params.corpus is None or params.db is None:
        missing = "corpus (a folder with notes.jsonl)" if params.corpus is None else "db (the database the notes refer to)"
        raise ConfigError(f"no {missing}: give both --corpus and --db, or neither for the embedded synthetic data")
    return params


def run_experiment(params: RunParams, *, stages: Stages | None = None) -> Path:
    """Run (or resume) one experiment; returns ``runs/<run_id>/``."""
    params = embedded_inputs(params)
    notes, notes_path = _load_notes(params)
    stages = stages or get_stages(params.method, params.backend, params)
    run_id = params.run_id or new_run_id(params)
    run_dir = Path(params.runs_dir) / run_id
    started = check_resume(run_dir, params) or _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    con, db_info = _open_db(params)
    writer: RunWriter | None = None
    try:
        # credentialed on either side (database manifest or corpus manifest) is credentialed
        # imported MIMIC notes are credentialed text whatever database they run against
        db_info["source_kind"] = effective_source_kind(str(db_info["source_kind"]), *_corpus_kinds(params),
                                                       corpus_source_kind(params.corpus))
        if stages.endpoint:
            check_phi(str(db_info["source_kind"]), stages.endpoint)
        ontology, ontology_info = None, None
        if stages.ontology_extractor is not None:
            ontology = load_ontology(con, path=params.ontology)
            ontology_info = {"version": ontology.version, "method": ontology.method, "sha8": ontology.sha8,
                             "n_items": len(ontology.items)}
        writer = RunWriter(run_dir, run_id)
        done = writer.done
        todo = [n for n in notes if n.note_id not in done]
        workers = params.concurrency or max(1, stages.concurrency)

        prov = provenance(params, db_info, notes_path, len(notes))
        last_save = [0.0]

        def save_manifest(status: str, *, every_s: float = 0.0) -> None:
            """Rewrite manifest and usage from the ledger (at most every ``every_s`` while
            running: the summary walks the whole ledger)."""
            if time.monotonic() - last_save[0] < every_s:
                return
            last_save[0] = time.monotonic()
            write_manifest(run_dir, params, run_id, stages, prov, writer.ledger, status, started, ontology_info)

        save_manifest("running")
        lock = threading.Lock()
        profiler = ItemProfiler(lambda: _cursor(con, lock), db_info["flavor"], params.top_k)
        make_tools = _toolset_factory(params, stages.semantic_ranker)

        def work(note: Note) -> NoteResult:
            check_note_size(note, params.max_note_chars, params.max_line_chars)
            cur = _cursor(con, lock)
            try:
                ctx = note_context(cur, note, flavor=db_info["flavor"], source_kind=str(db_info["source_kind"]),
                                   db_path=str(params.db))
            finally:
                cur.close()
            env = StageEnv(connect=lambda: _cursor(con, lock),
                           make_tools=lambda c: make_tools(c, ctx),
                           ontology=ontology, item_profile=profiler, params=params)
            try:
                return inspect_note(ctx, stages, env, run_id=run_id, cache_size=params.validation_cache,
                                    cache_scope=params.cache_scope,
                                    pool=pool)
            finally:
                env.close()

        bar = tqdm(total=len(notes), initial=len(notes) - len(todo), desc=run_id, unit="note",
                   disable=not params.progress)
        totals = {"entities": 0, "calls": 0, "cost": 0.0}
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ehrlib-run") as pool:
            pending: dict[Future[NoteResult], Note] = {}
            queue = list(reversed(todo))
            try:
                while queue or pending:
                    # keep at most `workers` notes in flight so a note's inner tasks find free threads
                    while queue and len(pending) < workers:
                        note = queue.pop()
                        pending[pool.submit(work, note)] = note
                    finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                    for fut in finished:
                        note = pending.pop(fut)
                        _commit_note(writer, run_id, note, fut, totals)
                        bar.update(1)
                        bar.set_postfix(entities=totals["entities"], calls=totals["calls"],
                                        cost=f"${totals['cost']:.2f}", refresh=False)
                        save_manifest("running", every_s=2.0)
            finally:
                for fut in pending:
                    fut.cancel()
                bar.close()
        summary = summarize_ledger(writer.ledger)["totals"]
        save_manifest("complete" if summary.get("notes_error", 0) == 0 else "incomplete")
        return run_dir
    except OSError as exc:
        with run_dir_errors(run_dir):   # full disk, read-only folder: one line, and resumable
            raise exc
    finally:
        if writer is not None:
            writer.close()
        con.close()


def _cursor(con: Any, lock: threading.Lock) -> Any:
    with lock:  # creating cursors on one connection from many threads is serialised
        return con.cursor()


def _commit_note(writer: RunWriter, run_id: str, note: Note, fut: Future[NoteResult],
                 totals: dict[str, Any]) -> None:
    try:
        result = fut.result()
    except EhrlibError as exc:  # bad input for this note (e.g. admission missing): recorded, not retried
        line = dumps_record({"note_id": note.note_id, "stage": "note", "entity_id": None,
                             "error": f"{type(exc).__name__}: {exc}"}, run_id=run_id)
        status = "failed" if isinstance(exc, DataError) else "error"
        writer.commit(note.note_id, {"failures.jsonl": [line]}, {"status": status, "n_failures": 1})
        log.warning("note %s: %s", note.note_id, exc)
        return
    except Exception as exc:  # a bug: record it, leave the note for a rerun, keep the batch going
        line = dumps_record({"note_id": note.note_id, "stage": "note", "entity_id": None,
                             "error": f"{type(exc).__name__}: {exc}"}, run_id=run_id)
        writer.commit(note.note_id, {"failures.jsonl": [line]}, {"status": "error", "n_failures": 1})
        log.exception("note %s failed", note.note_id)
        return
    summary = note_summary(result)
    writer.commit(note.note_id, note_lines(run_id, result), summary)
    totals["entities"] += summary["n_entities"]
    totals["calls"] += sum(s["llm_calls"] for s in summary["stages"].values())
    totals["cost"] += sum(s["cost_usd"] for s in summary["stages"].values())
