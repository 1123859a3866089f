"""Stop what a Ray run started: the local instance and every process it spawned.

``ray.shutdown()`` stops the GCS and the raylet of a local instance, but the agents the
raylet started (dashboard agent, runtime-env agent, idle workers) only notice their parent
is gone after a poll interval, 30 s or more; and a driver killed by SIGTERM runs no
``finally`` at all, so nothing is stopped. :class:`Reaper` notes which child processes
existed before the instance started, turns SIGTERM (and SIGINT) into an exception while
the run is on, so the executor's ``__exit__`` runs, and after ``ray.shutdown()`` ends the
processes that appeared under this one since: SIGTERM, then SIGKILL after a grace period.
"""
from __future__ import annotations

import logging
import signal
import threading
import time
from collections.abc import Callable
from types import FrameType
from typing import Any

__all__ = ["Reaper", "DriverSignal"]

log = logging.getLogger(__name__)
GRACE_S = 3.0


class DriverSignal(SystemExit):
    """SIGTERM reached the driver during a Ray run: unwinds the run (exit status 128 + signal)."""


def _descendants() -> dict[int, Any]:
    """This process's descendants, pid -> psutil.Process ({} without psutil, which Ray needs)."""
    try:
        # deferred: psutil is installed with the `ray` extra; threads-only runs never need it
        import psutil
    except ImportError:
        return {}
    try:
        return {p.pid: p for p in psutil.Process().children(recursive=True)}
    except psutil.Error:
        return {}


class Reaper:
    """Remembers the processes before a Ray start; ends the new ones after the shutdown."""

    def __init__(self) -> None:
        self._before: set[int] = set()
        self._handlers: dict[int, Any] = {}

    def arm(self) -> None:
        """Call before ``ray.init``: note existing children, and make SIGTERM unwind the run."""
        self._before = set(_descendants())
        if threading.current_thread() is not threading.main_thread():
            return  # signals reach the main thread only; its own handlers stay
        for sig in (signal.SIGTERM,):
            self._handlers[sig] = signal.signal(sig, _raise_exit)

    def disarm(self) -> None:
        """Restore the signal handlers ``arm`` replaced."""
        for sig, old in self._handlers.items():
            signal.signal(sig, old)
        self._handlers.clear()

    def reap(self, shutdown: Callable[[], None]) -> list[int]:
        """Run ``shutdown`` (``ray.shutdown``), then end every process started since ``arm``;
        returns the pids that had to be ended.
        """
        started = {pid: p for pid, p in _descendants().items() if pid not in self._before}
        try:
            shutdown()
        finally:
            ended = _end(started)
            self.disarm()
        return ended


def _raise_exit(signum: int, frame: FrameType | None) -> None:
    raise DriverSignal(128 + signum)


def _end(procs: dict[int, Any]) -> list[int]:
    """SIGTERM to each live process of ``procs``, SIGKILL to those alive after GRACE_S."""
    if not procs:
        return []
    # deferred: only reached with processes found by psutil
    import psutil

    alive = []
    for p in procs.values():
        try:
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                p.terminate()
                alive.append(p)
        except psutil.Error:
            continue
    _, left = psutil.wait_procs(alive, timeout=GRACE_S)
    for p in left:
        try:
            p.kill()
        except psutil.Error:
            continue
    if left:
        psutil.wait_procs(left, timeout=GRACE_S)
    if alive:
        log.info("ray executor: ended %d process(es) the local Ray instance left (%d killed)", len(alive), len(left))
    return [p.pid for p in alive]


def wait_gone(pids: set[int], timeout_s: float) -> set[int]:
    """The pids of ``pids`` still alive after ``timeout_s`` (for tests and diagnostics)."""
    import psutil  # deferred: as above

    deadline = time.monotonic() + timeout_s
    while True:
        left = {p for p in pids if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE}
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.2)
