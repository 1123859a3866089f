"""``ehrlib.Verifier``: verify one note (or a few) from Python, with no run folder.

::

    from ehrlib import Verifier
    v = Verifier("hospital.duckdb")
    findings = v.verify("HR 130s, afebrile", hadm_id=176016, note_type="physician", chartdate="2199-02-01")
    findings.to_frame()

It runs exactly what ``ehrlib run`` runs for a note: the runner's note function
(:class:`~ehrlib.pipeline.runner.NoteVerifier`, the same stages, calibrator and
abstention threshold from the same params), opened once and kept warm, so the database
connection, the stage bundle, the ontology, the lexical index and the item-profile memo
built for the first note serve every later one. Nothing is written to disk unless
``runs_dir`` is given (where the embedded synthetic hospital is built, ``db="embedded"``, and
where an LLM backend keeps its response cache), except ehrlib's own artefact caches: beside
the database (or under ``$XDG_CACHE_HOME/ehrlib``) and, for data read from other packages
(the ICD crosswalk), under ``$XDG_CACHE_HOME/ehrlib/packages``; ``EHRLIB_CACHE_DIR`` moves
them, and ``EHRLIB_CACHE_DIR=off`` writes none.
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ehrlib import schema
from ehrlib.corpus.records import Note, from_dict, normalise_note_type
from ehrlib.errors import ConfigError, DataError, EhrlibError
from ehrlib.findings import Findings
from ehrlib.pipeline.inspector import NoteResult
from ehrlib.pipeline.params import RunParams, load_params, params_from_mapping, params_to_dict
from ehrlib.pipeline.runner import EMBEDDED, NoteVerifier, open_worker
from ehrlib.pipeline.stages import get_stages

__all__ = ["Verifier", "EMBEDDED_DB"]

#: the name that stands for the embedded synthetic hospital (``ehrlib run`` with no --db)
EMBEDDED_DB = "embedded"
#: the run id predictions made in memory carry
_RUN_ID = "verifier"


def _params(db: str | os.PathLike[str], method: str, backend: str,
            params: RunParams | Mapping[str, Any] | str | os.PathLike[str] | None,
            runs_dir: str | os.PathLike[str] | None) -> RunParams:
    """The run parameters: ``params`` (a RunParams, a mapping or a params YAML) with the
    database, method, backend and runs folder given here; an LLM keeps no response cache
    on disk without ``runs_dir``.
    """
    if isinstance(params, RunParams):
        base = params_to_dict(params)
    elif isinstance(params, Mapping):
        base = params_to_dict(params_from_mapping(params))
    else:
        base = params_to_dict(load_params(None if params is None else Path(params)))
    base.update(db=str(db), method=method, backend=backend, progress=False, corpus=None)
    if runs_dir is not None:
        base["runs_dir"] = str(runs_dir)
    elif backend != "offline":
        options = dict(base.get("backend_options") or {})
        options["llm"] = {"cache": None, **dict(options.get("llm") or {})}
        base["backend_options"] = options
    return params_from_mapping(base)


def _database(db: str | os.PathLike[str], runs_dir: str | os.PathLike[str] | None) -> str:
    """The database file: ``db`` itself, or the embedded hospital built under ``runs_dir``."""
    if str(db) != EMBEDDED_DB:
        return str(db)
    if runs_dir is None:
        raise ConfigError(f"db={EMBEDDED_DB!r} builds the synthetic hospital on disk: give runs_dir= "
                          "(it is built once under <runs_dir>/embedded and reused)")
    from ehrlib.inputs import prepare_inputs  # deferred: the generator is only needed here

    built, _ = prepare_inputs(Path(runs_dir) / "embedded", with_corpus=False, layout=EMBEDDED["layout"],
                              patients=EMBEDDED["patients"], seed=EMBEDDED["seed"])
    return str(built)


class Verifier:
    """Checks notes' statements against one database, keeping its state warm between calls.

    ``db``: a database built by ``ehrlib build-db`` (or ``"embedded"``, the synthetic
    hospital, which needs ``runs_dir``); ``method``/``backend`` as for ``ehrlib run``;
    ``params``: further run parameters (a mapping, a params YAML or a RunParams), among
    them ``calibrator`` and ``abstain_below``, applied as a run applies them.
    Use it as a context manager, or call :meth:`close`, to release the database.
    """

    def __init__(self, db: str | os.PathLike[str], method: str = "inspector", backend: str = "offline",
                 params: RunParams | Mapping[str, Any] | str | os.PathLike[str] | None = None,
                 runs_dir: str | os.PathLike[str] | None = None) -> None:
        self.params = _params(_database(db, runs_dir), method, backend, params, runs_dir)
        stages = get_stages(self.params.method, self.params.backend, self.params)
        self._worker = open_worker(self.params, _RUN_ID, stages)
        work = self._worker.work
        if not isinstance(work, NoteVerifier):  # the runner's note function is what makes results comparable
            raise TypeError(f"open_worker returned {type(work).__name__}, not a NoteVerifier")
        self._work: NoteVerifier | None = work
        self._smap = schema.schema_map(work.flavor)

    def verify(self, text: str, *, hadm_id: int, note_type: str, charttime: str | None = None,
               chartdate: str | None = None, subject_id: int | None = None, note_id: str | None = None) -> Findings:
        """The findings of one note's text written during admission ``hadm_id``.

        ``chartdate`` (or ``charttime``) dates the note; a discharge summary without one is
        dated at its admission's discharge. ``subject_id`` defaults to the admission's patient.
        """
        note = self.note(text, hadm_id=hadm_id, note_type=note_type, charttime=charttime, chartdate=chartdate,
                         subject_id=subject_id, note_id=note_id)
        return self._findings([note], [self._verifier()(note)])

    def verify_many(self, notes: Iterable[Note | Mapping[str, Any]]) -> Findings:
        """The findings of several notes: :class:`~ehrlib.corpus.records.Note` records, or
        mappings with :meth:`verify`'s keywords and ``text`` (a missing ``note_id`` is
        numbered ``note-<k>``). Notes run on the backend's concurrency, findings in note order.

        A note that cannot be verified (a bad mapping, an unknown admission, a note over the
        size limits) does not stop the others: it is listed in the result's ``failures`` as
        ``(note_id, one-line reason)``, as ``ehrlib run`` records a failed note and goes on.
        """
        batch: list[Note] = []
        failures: dict[str, str] = {}
        ids: list[str] = []   # every note's id, in input order
        for k, n in enumerate(notes, 1):
            name = n.note_id if isinstance(n, Note) else str(
                (n.get("note_id") if isinstance(n, Mapping) else None) or f"note-{k}")
            ids.append(name)
            try:
                batch.append(n if isinstance(n, Note) else self.note(**{"note_id": f"note-{k}", **_keywords(n)}))
            except EhrlibError as exc:
                failures[name] = str(exc)
        if len(set(ids)) != len(ids):
            raise DataError(f"duplicate note_id values: {sorted({i for i in ids if ids.count(i) > 1})[:5]}")
        work = self._verifier()

        def one(note: Note, pool: ThreadPoolExecutor | None = None) -> NoteResult | None:
            try:
                return work(note, pool)
            except EhrlibError as exc:   # recorded, like a failed note of a run
                failures[note.note_id] = str(exc)
                return None

        threads = self.params.concurrency or max(1, work.stages.concurrency)
        if threads == 1 or len(batch) <= 1:
            results = [one(n) for n in batch]
        else:
            with ThreadPoolExecutor(threads) as pool:
                results = list(pool.map(lambda n: one(n, pool), batch))
        kept = [(n, r) for n, r in zip(batch, results, strict=True) if r is not None]
        return self._findings([n for n, _ in kept], [r for _, r in kept],
                              failures=tuple((i, failures[i]) for i in ids if i in failures))

    def note(self, text: str, *, hadm_id: int, note_type: str, charttime: str | None = None,
             chartdate: str | None = None, subject_id: int | None = None, note_id: str | None = None) -> Note:
        """The :class:`~ehrlib.corpus.records.Note` :meth:`verify` checks (validated; one-line errors)."""
        if not isinstance(text, str) or not text.strip():
            raise DataError("note text is empty: there is nothing to verify")
        patient, discharge = self._admission(hadm_id)
        if subject_id is not None and subject_id != patient:
            raise DataError(f"admission hadm_id={hadm_id} belongs to subject {patient}, not {subject_id}")
        if chartdate is None:
            chartdate = charttime[:10] if isinstance(charttime, str) else None
        if chartdate is None and normalise_note_type(note_type) == "discharge_summary" and discharge:
            chartdate = discharge[:10]
        if chartdate is None:
            raise ConfigError("give chartdate= (or charttime=): the note's date sets the window of "
                              "statements without their own time")
        return from_dict(Note, {"note_id": note_id or "note", "subject_id": patient, "hadm_id": hadm_id,
                                "note_type": note_type, "chartdate": chartdate, "text": text,
                                "charttime": charttime})

    def close(self) -> None:
        """Release the database connection (a closed Verifier refuses further notes)."""
        if self._work is not None:
            self._work = None
            self._worker.close()

    def __enter__(self) -> Verifier:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._work is None else "open"
        return f"<Verifier {self.params.method}/{self.params.backend} on {self.params.db} ({state})>"

    def _verifier(self) -> NoteVerifier:
        if self._work is None:
            raise ConfigError("this Verifier is closed: make a new one")
        return self._work

    def _admission(self, hadm_id: int) -> tuple[int, str | None]:
        """(subject_id, discharge time) of an admission; DataError when the database lacks it."""
        if not isinstance(hadm_id, int) or isinstance(hadm_id, bool):
            raise DataError(f"hadm_id must be an integer, got {hadm_id!r}")
        adm = self._smap.table("admissions")
        cur = self._verifier().cursor()
        try:
            row = cur.execute(f"SELECT {adm.col('subject_id')}, {adm.col('dischtime')} FROM {adm.ref} "  # noqa: S608
                              f"WHERE {adm.col('hadm_id')} = ?", [hadm_id]).fetchone()
        finally:
            cur.close()
        if row is None:
            raise DataError(f"admission hadm_id={hadm_id} is not in the database {self.params.db}")
        return int(row[0]), None if row[1] is None else str(row[1])

    def _findings(self, notes: list[Note], results: list[NoteResult],
                  failures: tuple[tuple[str, str], ...] = ()) -> Findings:
        return Findings.of([p for r in results for p in r.predictions], notes, results=results, db=self.params.db,
                           failures=failures)


def _keywords(note: Mapping[str, Any]) -> dict[str, Any]:
    """A note mapping as :meth:`Verifier.note` keywords (unknown keys refused, one line)."""
    if not isinstance(note, Mapping):
        raise DataError(f"a note is a Note record or a mapping, got {type(note).__name__}")
    allowed = {"text", "hadm_id", "note_type", "charttime", "chartdate", "subject_id", "note_id"}
    unknown = sorted(set(note) - allowed)
    if unknown:
        raise DataError(f"note {note.get('note_id', '')!r}: unknown key(s) {unknown}; expected {sorted(allowed)}")
    missing = sorted({"text", "hadm_id", "note_type"} - set(note))
    if missing:
        raise DataError(f"note {note.get('note_id', '')!r}: missing key(s) {missing}")
    return dict(note)
