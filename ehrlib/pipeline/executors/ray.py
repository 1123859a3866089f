"""``executor: ray`` — the notes of a run spread over worker actors on a Ray cluster.

Each worker actor opens the database read-only in its own process, builds its own stage
bundle (its LLM client talks to one endpoint of ``llm.base_url``, round robin over the
workers) and verifies the notes it is sent, one Ray task per batch of ``ray_batch``
notes. It returns the notes' serialised outcomes; the driver alone writes the run
directory and commits each note once, in completion order — so the ledger, resume and
manifest are the thread executor's. A worker that dies takes only its in-flight notes
with it: they are recorded as errors, which a rerun retries.

Why actors and not bare tasks: a worker keeps its database connection, ontology, item
catalog and n-gram index, item profile and LLM response cache across notes, which a task
would rebuild per note. It loads them once, on its first note, from the database's disk
cache (:mod:`ehrlib.disk_cache`; the driver's ``EHRLIB_CACHE_DIR`` is passed on)
when an earlier process filled it. Each worker has one batch queued beyond those it
runs, so it starts its next note while the driver commits the last one.
Rate limits (``llm.requests_per_minute``/``tokens_per_minute``) are one actor per
endpoint that every worker books with (:mod:`.limit`). ``ray`` itself is imported only
when a Ray run starts.
"""
from __future__ import annotations

import importlib.util
import logging
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ehrlib import errors
from ehrlib.corpus.records import Note
from ehrlib.disk_cache import DIR_ENV
from ehrlib.errors import ConfigError, EhrlibError, EndpointUnreachable, RunError
from ehrlib.pipeline.executors.base import (
    NoteOutcome,
    NoteWork,
    Worker,
    endpoints,
    lost_outcome,
    outcome_of,
    stage_params,
)
from ehrlib.pipeline.executors.limit import LimitedBackend, RayLimiter, SlidingWindow
from ehrlib.pipeline.executors.reaper import Reaper
from ehrlib.pipeline.params import RunParams
from ehrlib.pipeline.stages import BACKENDS, BackendFactory, Stages, apply_switches, backend_factory, register_backend

__all__ = ["RayExecutor", "WorkerSpec", "NoteActor", "sum_stats"]

log = logging.getLogger(__name__)
MISSING_RAY = "--executor ray needs the ray package: pip install 'ehrlib[ray]'"
#: batches queued on a worker beyond the ones it runs (hides the driver's round trip)
PREFETCH = 1


@dataclass(frozen=True, slots=True)
class WorkerSpec:
    """What one worker actor is built from (pickled to its process)."""

    params: RunParams
    run_id: str
    threads: int
    #: ``open_worker(params, run_id, stages) -> Worker`` (the runner's; pickled by reference)
    open_worker: Callable[..., Worker]
    #: the backend's factory when it is not a core backend (a worker imports those itself)
    factory: BackendFactory | None = None
    #: actor handle of the endpoint's rate-limit window, or None
    limiter: Any = None
    #: the driver's ``EHRLIB_CACHE_DIR`` (a node's Ray worker has the environment of its
    #: ``ray start``, not the driver's), or None to leave the worker's own setting
    cache_dir: str | None = None


def _limited_stages(params: RunParams, limiter: Any) -> Stages:
    """The LLM stage bundle with the client's backend booking every request with ``limiter``."""
    # deferred: the LLM backend's modules load only for runs that use it
    from ehrlib.pipeline.llm import build_llm_stages, make_llm_client

    client = make_llm_client(params.backend, params)
    client.backend_impl = LimitedBackend(client.backend_impl, RayLimiter(limiter))
    stages = build_llm_stages(params.method, params, client, backend=params.backend)
    return apply_switches(stages, params, lambda: build_llm_stages("checkehr", params, client, backend=params.backend))


class NoteActor:
    """The body of one worker actor (``ray.remote`` is applied when a run starts)."""

    def __init__(self, spec: WorkerSpec) -> None:
        self.spec = spec
        self.worker: Worker | None = None
        self.pool: ThreadPoolExecutor | None = None

    def setup(self) -> tuple[str, str] | None:
        """Open the database and build the stages; ``(error type, message)`` on bad settings."""
        spec = self.spec
        if spec.cache_dir is not None:  # before anything reads the disk cache
            os.environ[DIR_ENV] = spec.cache_dir
        try:
            if spec.factory is not None:
                register_backend(spec.params.backend, spec.factory)
            stages = _limited_stages(spec.params, spec.limiter) if spec.limiter is not None else None
            self.worker = spec.open_worker(spec.params, spec.run_id, stages)
        except EhrlibError as exc:
            return type(exc).__name__, str(exc)
        self.pool = ThreadPoolExecutor(max_workers=spec.threads, thread_name_prefix="ehrlib-ray")
        return None

    def run(self, notes: Sequence[Note]) -> tuple[list[NoteOutcome], dict[str, Any]]:
        """The outcomes of a batch, and this worker's LLM counters so far."""
        if self.worker is None:
            raise RuntimeError("NoteActor.run before setup")
        work: NoteWork = self.worker.work
        outcomes = [outcome_of(note, work, self.pool, self.spec.run_id) for note in notes]
        stats = self.worker.stages.stats
        return outcomes, dict(stats()) if stats else {}

    def close(self) -> None:
        """Close the worker's connections."""
        if self.worker is not None:
            self.worker.close()
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)


def sum_stats(parts: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Counters of several workers added key by key (nested mappings too; other values: the first)."""
    out: dict[str, Any] = {}
    for part in parts:
        for key, value in part.items():
            have = out.get(key)
            if isinstance(value, Mapping):
                out[key] = sum_stats([have, value]) if isinstance(have, Mapping) else dict(value)
            elif isinstance(value, (int, float)) and not isinstance(value, bool) and isinstance(have, (int, float)):
                out[key] = have + value
            elif key not in out:
                out[key] = value
    return out


def _absolute(params: RunParams) -> RunParams:
    """Paths made absolute: a worker's working directory is not the driver's."""
    def absolute(p: str | None) -> str | None:
        return str(Path(p).resolve()) if p else p

    llm = dict(params.backend_options.get("llm") or {})
    if isinstance(llm.get("cache"), str):
        llm["cache"] = absolute(llm["cache"])
    options = {**params.backend_options, **({"llm": llm} if llm else {})}
    return params.replace(corpus=absolute(params.corpus), db=absolute(params.db), ontology=absolute(params.ontology),
                          runs_dir=absolute(params.runs_dir), backend_options=options)


def _reason(exc: BaseException) -> str:
    first = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {first[0][:200]}" if first else type(exc).__name__


class RayExecutor:
    """Worker actors on a Ray cluster (``ray_address``; None starts a local instance)."""

    def __init__(self, params: RunParams, run_id: str, *, threads: int, open_worker: Callable[..., Worker],
                 limits: Mapping[str, float]) -> None:
        # deferred: the LLM backend's names, looked up only to check the limits apply
        from ehrlib.pipeline.llm import LLM_BACKENDS

        if importlib.util.find_spec("ray") is None:  # before the run directory is touched
            raise ConfigError(MISSING_RAY)
        if limits and params.backend not in LLM_BACKENDS:
            raise ConfigError(f"llm.requests_per_minute/tokens_per_minute limit model calls; backend "
                              f"{params.backend!r} makes none (LLM backends: {', '.join(LLM_BACKENDS)})")
        self.params = _absolute(params)
        self.run_id = run_id
        self.threads = max(1, int(threads))
        self.open_worker = open_worker
        self.limits = dict(limits)
        self._ray: Any = None
        self._started = False
        self._actors: list[Any] = []
        self._limiters: list[Any] = []
        self._stats: dict[int, dict[str, Any]] = {}
        self._reaper = Reaper()

    def __enter__(self) -> RayExecutor:
        return self

    def _start(self) -> None:
        """Join (or start) the cluster and start the workers: on the first note, so a run
        with nothing left to do never waits for a cluster.
        """
        try:
            # deferred: optional dependency (the `ray` extra), imported only for Ray runs
            import ray
        except ImportError:
            raise ConfigError(MISSING_RAY) from None
        self._ray = ray
        if not ray.is_initialized():
            self._reaper.arm()  # what ray.init starts is ended on exit, also after SIGTERM
            self._started = True
            try:
                ray.init(address=self.params.ray_address, include_dashboard=False, logging_level=logging.WARNING)
            except Exception as exc:  # noqa: BLE001 - ray raises bare Exceptions for a node that did not start
                self._reaper.reap(ray.shutdown)
                self._started = False
                if self.params.ray_address:
                    raise ConfigError(f"cannot reach the Ray cluster at {self.params.ray_address}: "
                                      f"{_reason(exc)}") from None
                raise RunError(f"could not start a local Ray instance: {_reason(exc)}") from None
        self._start_workers()

    def _start_workers(self) -> None:
        ray = self._ray
        cpus = float(ray.cluster_resources().get("CPU", 1.0))
        n = self.params.ray_workers or max(1, int(cpus))
        urls = endpoints(self.params) or ("",)
        if self.limits:
            window = ray.remote(num_cpus=0)(SlidingWindow)
            self._limiters = [window.remote(self.limits.get("requests_per_minute"),
                                            self.limits.get("tokens_per_minute")) for _ in urls]
        factory = backend_factory(self.params.backend) if self.params.backend not in BACKENDS else None
        actor = ray.remote(NoteActor).options(num_cpus=min(1.0, cpus / n), max_concurrency=self.threads)
        for i in range(n):
            spec = WorkerSpec(stage_params(self.params, i), self.run_id, self.threads, self.open_worker, factory,
                              self._limiters[i % len(urls)] if self._limiters else None, os.environ.get(DIR_ENV))
            self._actors.append(actor.remote(spec))
        for problem in ray.get([a.setup.remote() for a in self._actors]):
            if problem is not None:
                name, message = problem
                cls = getattr(errors, name, None)
                raise (cls if isinstance(cls, type) and issubclass(cls, EhrlibError) else RunError)(
                    f"Ray worker: {message}")
        log.info("ray executor: %d workers x %d threads, %d endpoint(s)%s", n, self.threads, len(urls),
                 f", cluster limits {self.limits}" if self.limits else "")

    def __exit__(self, *exc: Any) -> None:
        ray = self._ray
        if ray is None:
            return
        for a in self._actors:
            try:
                ray.get(a.close.remote(), timeout=10)
            except Exception:  # noqa: BLE001 - a dead worker has nothing left to close
                pass
            ray.kill(a)
        for lim in self._limiters:
            ray.kill(lim)
        self._actors, self._limiters = [], []
        if self._started:
            # ray.shutdown, then the agents and workers it leaves behind (see .reaper)
            self._reaper.reap(ray.shutdown)
            self._started = False

    def run(self, todo: Sequence[Note], work: NoteWork) -> Iterator[NoteOutcome]:
        """Outcomes in completion order; ``work`` (the driver's) is unused: workers hold their own."""
        if not todo:
            return
        self._start()
        ray = self._ray
        size = self.params.ray_batch
        batches = [list(todo[i:i + size]) for i in range(0, len(todo), size)]
        batches.reverse()
        load = {i: 0 for i in range(len(self._actors))}
        inflight: dict[Any, tuple[int, list[Note]]] = {}
        try:
            while batches or inflight:
                # `threads` batches running per worker and PREFETCH more waiting in its queue,
                # so it starts the next note while the driver commits the last; the rest stay
                # with the driver, so a worker that dies takes few notes with it
                for i in sorted(load, key=load.__getitem__):
                    while batches and load[i] < self.threads + PREFETCH:
                        batch = batches.pop()
                        inflight[self._actors[i].run.remote(batch)] = (i, batch)
                        load[i] += 1
                if not inflight:
                    raise RunError("every Ray worker died; rerun the same --run-id to resume")
                ready, _ = ray.wait(list(inflight), num_returns=1)
                for ref in ready:
                    i, batch = inflight.pop(ref)
                    try:
                        outcomes, stats = ray.get(ref)
                    except ray.exceptions.RayError as exc:
                        if isinstance(getattr(exc, "cause", None), EndpointUnreachable):
                            raise EndpointUnreachable(str(exc.cause)) from None  # the run stops
                        if isinstance(exc, ray.exceptions.RayActorError):
                            load.pop(i, None)  # a dead worker gets no more notes
                        elif i in load:
                            load[i] -= 1
                        log.error("ray worker %d lost %d note(s): %s", i, len(batch), _reason(exc))
                        outcomes = [lost_outcome(n, self.run_id, _reason(exc)) for n in batch]
                    else:
                        if i in load:
                            load[i] -= 1
                        self._stats[i] = stats
                    yield from outcomes
        finally:
            for ref in inflight:
                ray.cancel(ref)

    def stats(self) -> Mapping[str, Any] | None:
        """Statistics summed over the worker actors."""
        return sum_stats([self._stats[i] for i in sorted(self._stats)])
