"""What every executor shares: the note outcome record, the thread executor, endpoint settings.

Every executor yields :class:`NoteOutcome` records — a note's JSONL lines and ledger
summary, already serialised, or its error — made by :func:`outcome_of` wherever the note
ran, so a note is classified the same way on every executor and the driver stays the one
writer of the run directory.
"""
from __future__ import annotations

import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any, Protocol

from ehrlib.corpus.io import dumps_record
from ehrlib.corpus.records import Note
from ehrlib.errors import ConfigError, DataError, EhrlibError, EndpointUnreachable
from ehrlib.pipeline.inspector import NoteResult
from ehrlib.pipeline.params import RunParams
from ehrlib.pipeline.rundir import note_lines, note_summary

__all__ = [
    "NoteOutcome",
    "NoteWork",
    "NoteExecutor",
    "Worker",
    "ThreadExecutor",
    "outcome_of",
    "lost_outcome",
    "endpoints",
    "stage_params",
    "LIMIT_KEYS",
    "limits",
]

#: ``work(note, pool) -> NoteResult``: verify one note; ``pool`` runs its inner tasks
NoteWork = Callable[[Note, "Executor | None"], NoteResult]
#: the llm settings the Ray executor enforces across the cluster (h-llm's per-process names)
LIMIT_KEYS: tuple[str, ...] = ("requests_per_minute", "tokens_per_minute")


@dataclass(frozen=True, slots=True)
class NoteOutcome:
    """One note's result as the driver commits it: ``status`` is ``ok``, ``failed`` (bad
    input, or a stage that lost its model answer: recorded with its reason, rerun only by
    ``--retry-failed``) or ``error`` (a bug or a lost worker; a rerun retries).
    """

    note_id: str
    status: str
    lines: Mapping[str, Sequence[str]] = field(default_factory=dict)
    summary: Mapping[str, Any] = field(default_factory=dict)
    #: ``"<ExceptionType>: message"`` of a failed note
    error: str | None = None
    #: the traceback of a bug, for the driver's log
    trace: str | None = None


def _failed(note_id: str, run_id: str, status: str, error: str, trace: str | None = None) -> NoteOutcome:
    line = dumps_record({"note_id": note_id, "stage": "note", "entity_id": None, "error": error}, run_id=run_id)
    return NoteOutcome(note_id, status, {"failures.jsonl": [line]}, {"status": status, "n_failures": 1},
                       error, trace)


def outcome_of(note: Note, work: NoteWork, pool: Executor | None, run_id: str) -> NoteOutcome:
    """Run ``work`` on one note and serialise what it gave (never raises for the note's
    own problems: those are its outcome).
    """
    try:
        result = work(note, pool)
    except EndpointUnreachable:
        raise  # not this note's outcome: the endpoint is down and the run stops
    except EhrlibError as exc:  # bad input for this note (e.g. admission missing)
        status = "failed" if isinstance(exc, DataError) else "error"
        return _failed(note.note_id, run_id, status, f"{type(exc).__name__}: {exc}")
    except Exception as exc:  # a bug: recorded, the note left for a rerun
        return _failed(note.note_id, run_id, "error", f"{type(exc).__name__}: {exc}", traceback.format_exc())
    summary = note_summary(result)  # "failed" when a stage lost its model answer
    return NoteOutcome(note.note_id, summary["status"], note_lines(run_id, result), summary, summary.get("failure"))


def lost_outcome(note: Note, run_id: str, reason: str) -> NoteOutcome:
    """The outcome of a note whose worker died before answering (retried on a rerun)."""
    return _failed(note.note_id, run_id, "error", f"WorkerLost: {reason}")


@dataclass(frozen=True, slots=True)
class Worker:
    """One process's means to verify notes (built by the runner's ``open_worker``): the
    note function, the stage bundle behind it (for its LLM counters) and how to release it.
    """

    work: NoteWork
    stages: Any
    close: Callable[[], None]


class NoteExecutor(Protocol):
    """Runs notes somewhere and yields their outcomes in completion order.

    Used as a context manager (workers start on enter, stop on exit, also when the
    driver is interrupted); ``stats`` returns the LLM counters of the stage bundles that
    did the work, for the manifest (None when the driver's own bundle did it).
    """

    def __enter__(self) -> NoteExecutor: ...

    def __exit__(self, *exc: Any) -> None: ...

    def run(self, todo: Sequence[Note], work: NoteWork) -> Iterator[NoteOutcome]:
        """Run ``work`` on every note of ``todo``, yielding outcomes as they finish."""

    def stats(self) -> Mapping[str, Any] | None:
        """Executor statistics for the run manifest (None when it keeps none)."""


class ThreadExecutor:
    """Notes on one bounded thread pool of this process (the default executor)."""

    def __init__(self, workers: int, run_id: str) -> None:
        self.workers = max(1, int(workers))
        self.run_id = run_id
        self._pool: ThreadPoolExecutor | None = None

    def __enter__(self) -> ThreadExecutor:
        self._pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="ehrlib-run")
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def run(self, todo: Sequence[Note], work: NoteWork) -> Iterator[NoteOutcome]:
        """Run ``work`` on every note of ``todo`` in the thread pool, yielding outcomes as they finish."""
        pool = self._pool
        if pool is None:
            raise RuntimeError("ThreadExecutor.run outside its with-block")
        pending: dict[Future[NoteOutcome], Note] = {}
        queue = list(reversed(todo))
        try:
            while queue or pending:
                # keep at most `workers` notes in flight so a note's inner tasks find free threads
                while queue and len(pending) < self.workers:
                    note = queue.pop()
                    pending[pool.submit(outcome_of, note, work, pool, self.run_id)] = note
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in finished:
                    pending.pop(fut)
                    yield fut.result()
        finally:
            for fut in pending:
                fut.cancel()

    def stats(self) -> Mapping[str, Any] | None:
        """None: threads keep no statistics of their own."""
        return None


def endpoints(params: RunParams) -> tuple[str, ...]:
    """The LLM endpoints ``llm.base_url`` lists (one string or a list; empty when unset)."""
    url = (params.backend_options.get("llm") or {}).get("base_url")
    if url is None:
        return ()
    urls = (url,) if isinstance(url, str) else tuple(url) if isinstance(url, (list, tuple)) else None
    if not urls or not all(isinstance(u, str) and u for u in urls):
        raise ConfigError(f"llm.base_url must be a URL or a list of URLs, got {url!r}")
    return urls


def limits(params: RunParams) -> dict[str, float]:
    """The cluster-wide rate limits of ``llm:`` (requests and tokens per minute), validated."""
    llm = params.backend_options.get("llm") or {}
    out = {}
    for key in LIMIT_KEYS:
        if llm.get(key) is None:
            continue
        try:
            value = float(llm[key])
        except (TypeError, ValueError):
            raise ConfigError(f"llm.{key} must be a number, got {llm[key]!r}") from None
        if value <= 0:
            raise ConfigError(f"llm.{key} must be positive")
        out[key] = value
    return out


def stage_params(params: RunParams, index: int = 0) -> RunParams:
    """The params one Ray worker builds its stage bundle from: the ``index``-th endpoint of
    the list (round robin) and no per-process rate limits (the cluster's limiter applies).
    """
    if params.executor != "ray":
        if len(endpoints(params)) > 1:
            raise ConfigError("llm.base_url lists several endpoints: spreading them over workers needs "
                              "--executor ray (or run once per endpoint)")
        return params
    llm = dict(params.backend_options.get("llm") or {})
    if not llm:
        return params
    urls = endpoints(params)
    if urls:
        llm["base_url"] = urls[index % len(urls)]
    for key in LIMIT_KEYS:
        llm.pop(key, None)
    return params.replace(backend_options={**params.backend_options, "llm": llm})
