"""Where the notes of a run are verified: a thread pool in this process, or a Ray cluster.

The runner (:mod:`ehrlib.pipeline.runner`) hands an executor the notes still to do and
commits each outcome it yields; an executor only decides *where* a note runs.

- :mod:`.base` — the outcome record every executor yields, and :class:`ThreadExecutor`
  (``executor: thread``, the default): one bounded pool that also runs a note's inner
  tasks (segments, cache lanes);
- :mod:`.ray` — ``executor: ray`` (the ``ray`` extra): worker actors on a Ray cluster,
  each with its own read-only database connection and LLM client;
- :mod:`.limit` — the cluster-wide requests/tokens-per-minute limiter the Ray workers share.

Settings only the Ray executor understands are checked by :func:`make_executor` before
anything starts: ``llm.base_url`` may list several endpoints (spread over the workers),
and ``llm.requests_per_minute`` / ``llm.tokens_per_minute`` hold across the cluster.
"""
from __future__ import annotations

from typing import Any, Callable

from ehrlib.pipeline.executors.base import (
    LIMIT_KEYS,
    NoteExecutor,
    NoteOutcome,
    NoteWork,
    ThreadExecutor,
    Worker,
    endpoints,
    limits,
    lost_outcome,
    outcome_of,
    stage_params,
)
from ehrlib.pipeline.params import RunParams

__all__ = ["LIMIT_KEYS", "NoteExecutor", "NoteOutcome", "NoteWork", "ThreadExecutor", "Worker", "endpoints", "limits",
           "lost_outcome", "make_executor", "outcome_of", "stage_params"]


def make_executor(params: RunParams, run_id: str, *, threads: int, open_worker: Callable[..., Any]) -> NoteExecutor:
    """The executor ``params.executor`` names (settings checked now; workers start on enter).

    ``threads`` is the concurrency of one process (the driver's pool, or each Ray worker);
    ``open_worker(params, run_id, stages)`` builds one worker's resources in its own process.
    """
    if params.executor == "thread":
        stage_params(params)  # refuses settings only the Ray executor understands
        return ThreadExecutor(threads, run_id)
    # deferred: the Ray executor's module is loaded only for Ray runs (it imports the optional ray package)
    from ehrlib.pipeline.executors.ray import RayExecutor

    return RayExecutor(params, run_id, threads=threads, open_worker=open_worker, limits=limits(params))
