"""The run directory ``runs/<run_id>/``: its files, the commit ledger, the manifest, resume.

- ``predictions.jsonl``, ``tool_calls.jsonl``, ``stages.jsonl``, ``failures.jsonl`` — one
  JSON object a line, each starting with ``schema_version, run_id``;
- ``progress.jsonl`` — the commit ledger: one line per finished note with the byte size
  of every data file after that note was appended;
- ``manifest.json`` (params, git sha, package versions, prompt ids, data source, cache
  hits, per-stage wall time and calls) and ``usage.json``, both rewritten atomically and
  both *derived from the ledger*, so they are right after any crash.

Crash safety (kill -9 at any instant): a finished note's records are appended to the data
files and fsynced, and only then is its ledger line appended and fsynced. On restart the
ledger's last complete line says how long each data file must be; anything beyond (a note
in flight, a half-written line) is truncated away, and the notes in the ledger are skipped.
So no note is lost and none is written twice. The loop that fills the directory is
:mod:`ehrlib.pipeline.runner`.
"""
from __future__ import annotations

import datetime as _dt
import json
import logging
import os
import subprocess
import threading
from collections.abc import Iterable, Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from ehrlib.corpus.io import dumps_record, write_json
from ehrlib.corpus.records import SCHEMA_VERSION, to_dict
from ehrlib.db.contracts import sha256_file
from ehrlib.errors import ConfigError, DataError
from ehrlib.pipeline.inspector import STAGE_NAMES, NoteResult
from ehrlib.pipeline.params import RunParams, params_to_dict
from ehrlib.pipeline.runlock import RunLock, committed_note_ids, prepare_run_dir, read_ledger_lines, run_dir_errors
from ehrlib.pipeline.stages import Stages

__all__ = [
    "DATA_FILES",
    "LEDGER_FILE",
    "MANIFEST",
    "USAGE",
    "RunWriter",
    "new_run_id",
    "read_ledger",
    "note_lines",
    "note_summary",
    "stage_failures",
    "FAILED_CALL_KINDS",
    "summarize_ledger",
    "provenance",
    "manifest",
    "write_manifest",
    "check_resume",
]

log = logging.getLogger(__name__)

#: version of the stages.jsonl lines (2: per-stage ``dropped`` candidates with their rule id;
#: 3: entities carry a typed ``claim`` instead of the flat ``attributes``)
STAGES_SCHEMA_VERSION = 3
DATA_FILES: tuple[str, ...] = ("predictions.jsonl", "tool_calls.jsonl", "stages.jsonl", "failures.jsonl")
LEDGER_FILE = "progress.jsonl"
MANIFEST = "manifest.json"
USAGE = "usage.json"
#: params that may differ between a run and its resumption (the executor only changes
#: where notes run, never what they yield)
RESUMABLE_CHANGES = frozenset({"limit", "progress", "concurrency", "note_ids", "run_id", "runs_dir",
                               "executor", "ray_address", "ray_workers", "ray_batch"})
_PACKAGES = ("ehrlib", "duckdb", "pandas", "numpy", "google-genai", "httpx", "pyyaml", "tqdm")


def new_run_id(params: RunParams) -> str:
    """A fresh run id, ``<method>-<backend>-<UTC timestamp>``."""
    stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%d-%H%M%S")
    return f"{params.method}-{params.backend}-{stamp}"


def _truncate_to_last_newline(path: Path) -> None:
    data = path.read_bytes()
    cut = data.rfind(b"\n") + 1
    if cut != len(data):
        with open(path, "r+b") as fh:
            fh.truncate(cut)
            fh.flush()
            os.fsync(fh.fileno())


def read_ledger(run_dir: Path) -> list[dict[str, Any]]:
    """Committed ledger lines (a half-written last line and damaged lines are skipped:
    see :mod:`ehrlib.pipeline.runlock`).
    """
    return read_ledger_lines(Path(run_dir) / LEDGER_FILE)[0]


class RunWriter:
    """Append-only writer of one run directory with crash recovery (see module docs)."""

    def __init__(self, run_dir: Path, run_id: str) -> None:
        self.run_dir = prepare_run_dir(Path(run_dir))
        self.run_id = run_id
        self._run_lock = RunLock(self.run_dir)   # one writer per run directory
        self._lock = threading.Lock()
        self._recovered: set[str] = set()
        try:
            with run_dir_errors(self.run_dir):
                self.ledger = self._recover()
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Release the run directory for another writer."""
        self._run_lock.release()

    def _recover(self) -> list[dict[str, Any]]:
        ledger_path = self.run_dir / LEDGER_FILE
        if ledger_path.exists():
            _truncate_to_last_newline(ledger_path)
        ledger, damaged = read_ledger_lines(ledger_path)
        for no, why in damaged:
            log.warning("%s:%d: damaged ledger line (%s) skipped", ledger_path, no, why)
        sizes = ledger[-1]["offsets"] if ledger else {}
        if damaged:   # notes whose line was lost still have their records: not run twice
            self._recovered = committed_note_ids(self.run_dir, DATA_FILES, sizes) - {e["note_id"] for e in ledger}
        for name in DATA_FILES:
            path = self.run_dir / name
            keep = int(sizes.get(name, 0))
            if not path.exists():
                if keep:
                    raise DataError(f"{path} is missing but {LEDGER_FILE} says it had {keep} bytes; "
                                    "the run directory is damaged (start a new run id)")
                path.touch()
                continue
            size = path.stat().st_size
            if size < keep:
                raise DataError(f"{path} is shorter ({size} bytes) than {LEDGER_FILE} records ({keep}); "
                                "the run directory is damaged (start a new run id)")
            if size > keep:
                log.info("recovering %s: dropping %d uncommitted bytes", path.name, size - keep)
                with open(path, "r+b") as fh:
                    fh.truncate(keep)
                    fh.flush()
                    os.fsync(fh.fileno())
        return ledger

    @property
    def done(self) -> set[str]:
        """Notes the ledger records as finished (ok or failed): a rerun skips them."""
        return {e["note_id"] for e in self.ledger if e.get("status") in ("ok", "failed")} | self._recovered

    @property
    def failed(self) -> set[str]:
        """Notes whose last attempt failed or crashed: ``--retry-failed`` reruns them (a note's
        earlier attempt is superseded by the new one, see :mod:`ehrlib.pipeline.attempts`).
        """
        last = {e["note_id"]: e.get("status", "ok") for e in self.ledger}
        return {n for n, status in last.items() if status in ("failed", "error")}

    def commit(self, note_id: str, lines: Mapping[str, Sequence[str]], summary: Mapping[str, Any]) -> None:
        """Append one note's lines to the data files, fsync, then record it in the ledger."""
        with self._lock, run_dir_errors(self.run_dir):
            offsets: dict[str, int] = {}
            for name in DATA_FILES:
                path = self.run_dir / name
                with open(path, "ab") as fh:
                    chunk = "".join(line + "\n" for line in lines.get(name, ()))
                    if chunk:
                        fh.write(chunk.encode("utf-8"))
                        fh.flush()
                        os.fsync(fh.fileno())
                    offsets[name] = fh.tell()
            entry = {"note_id": note_id, **summary, "offsets": offsets}
            with open(self.run_dir / LEDGER_FILE, "ab") as fh:
                fh.write((json.dumps(entry, ensure_ascii=False) + "\n").encode("utf-8"))
                fh.flush()
                os.fsync(fh.fileno())
            self.ledger.append(entry)


def _stage_line(run_id: str, note_id: str, rec: Any) -> str:
    body = {
        "note_id": note_id, "stage": rec.stage, "segment": rec.segment, "entity_id": rec.entity_id,
        "prompt_id": rec.prompt_ids[0] if rec.prompt_ids else None, "prompt_ids": list(rec.prompt_ids),
        "wall_s": round(rec.wall_s, 6), "usage": to_dict(rec.usage), "failures": list(rec.failures),
        "output": to_dict(rec.output), "raw": list(rec.raw), "dropped": to_dict(rec.dropped),
    }
    return dumps_record(body, schema_version=STAGES_SCHEMA_VERSION, run_id=run_id)


def note_lines(run_id: str, result: NoteResult) -> dict[str, list[str]]:
    """The JSONL lines of one finished note, per data file."""
    preds = [dumps_record(p, run_id=run_id) for p in result.predictions]
    calls = []
    for v in result.verdicts:
        for c in v.tool_calls:
            calls.append(dumps_record({"note_id": result.note_id, "entity_id": v.entity_id,
                                       "prompt_id": v.prompt_id, **to_dict(c)}, run_id=run_id))
    stages = [_stage_line(run_id, result.note_id, r) for r in result.stage_records]
    # the note-level summary line: what was extracted, filtered and why, for error analysis
    stages.append(dumps_record({
        "note_id": result.note_id, "stage": "note", "segment": None, "entity_id": None, "prompt_id": None,
        "wall_s": round(result.wall_s, 6), "usage": to_dict(result.usage), "failures": [],
        "output": {"segments": to_dict(result.segments), "timeline": to_dict(result.timeline),
                   "entities": to_dict(result.entities), "scope": to_dict(result.scope)},
    }, schema_version=STAGES_SCHEMA_VERSION, run_id=run_id))
    failures = [dumps_record({"note_id": result.note_id, "stage": st, "entity_id": eid, "error": msg},
                             run_id=run_id) for st, eid, msg in result.failures]
    return {"predictions.jsonl": preds, "tool_calls.jsonl": calls, "stages.jsonl": stages,
            "failures.jsonl": failures}


#: how a stage failure that lost the stage's model answer begins (``ehrlib.pipeline.llm.caller``
#: and the tool loop): such a note is ``failed``, not a clean note with fewer findings
FAILED_CALL_KINDS = ("call_error:", "malformed:", "truncated:", "max_steps:", "tools_failed:",
                     "rejected after repair:")


def stage_failures(result: NoteResult) -> list[str]:
    """``"<stage>: <reason>"`` of each stage of the note that failed outright: a model call
    or reply lost (see FAILED_CALL_KINDS) or a finding left unverified by a failure. Notes a
    stage records about what it dropped or degraded (e.g. a rejected segmentation that
    fell back to the whole note) do not count.
    """
    out = []
    for r in result.stage_records:
        for f in r.failures:
            if r.stage == "verification" or f.startswith(FAILED_CALL_KINDS):
                out.append(f"{r.stage}{f' {r.entity_id}' if r.entity_id else ''}: {f}")
    return out


def note_summary(result: NoteResult) -> dict[str, Any]:
    """The ledger entry of one note: counts, stage timings and usage.

    ``status`` is ``ok``, or ``failed`` when a stage failed outright (:func:`stage_failures`);
    a failed note also carries ``failure`` (its first stage failure, one line, with the
    count of others) and ``failed_stages``. Readers (``ehrlib report``, the viewer) show
    these fields; ``ehrlib run --retry-failed`` reruns such notes.
    """
    stages: dict[str, dict[str, float]] = {}
    for r in result.stage_records:
        s = stages.setdefault(r.stage, {"calls": 0, "wall_s": 0.0, "llm_calls": 0, "input_tokens": 0,
                                        "output_tokens": 0, "thinking_tokens": 0, "cost_usd": 0.0})
        s["calls"] += 1
        s["wall_s"] += r.wall_s
        s["llm_calls"] += r.usage.calls
        s["input_tokens"] += r.usage.input_tokens
        s["output_tokens"] += r.usage.output_tokens
        s["thinking_tokens"] += r.usage.thinking_tokens
        s["cost_usd"] += r.usage.cost_usd
    prompt_ids = sorted({p for r in result.stage_records for p in r.prompt_ids})
    failed = stage_failures(result)
    outcome: dict[str, Any] = {"status": "ok"}
    if failed:
        more = f" (+{len(failed) - 1} more)" if len(failed) > 1 else ""
        outcome = {"status": "failed", "failure": " ".join(failed[0].split())[:500] + more,
                   "failed_stages": sorted({f.split(":", 1)[0].split(" ", 1)[0] for f in failed})}
    return {
        **outcome, "n_predictions": len(result.predictions), "n_entities": len(result.entities),
        "n_verified": len(result.verdicts), "cache_hits": result.cache_hits,
        "n_unverified": sum(p.label == "unverified" for p in result.predictions),
        "n_failures": len(result.failures), "n_tool_calls": sum(len(v.tool_calls) for v in result.verdicts),
        "wall_s": round(result.wall_s, 6), "stages": stages, "prompt_ids": prompt_ids,
    }


def summarize_ledger(ledger: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Run totals (counts, cache, per-stage wall time and calls, usage) from ledger lines."""
    tot: dict[str, Any] = {"notes_ok": 0, "notes_failed": 0, "notes_error": 0, "predictions": 0, "entities": 0,
                           "verified": 0, "unverified": 0, "cache_hits": 0, "failures": 0, "tool_calls": 0,
                           "wall_s": 0.0}
    stages: dict[str, dict[str, float]] = {}
    prompt_ids: set[str] = set()
    ledger = list(ledger)
    # a note retried after an error or a failure has several lines: its status and counts
    # are the last one's, while work and cost add up over every attempt
    # (the records a note holds are its last attempt's: see ehrlib.pipeline.attempts)
    last = {e["note_id"]: e for e in ledger}
    for e in last.values():
        status = e.get("status", "ok")
        tot[f"notes_{status}"] = tot.get(f"notes_{status}", 0) + 1
        tot["predictions"] += e.get("n_predictions", 0)
        tot["entities"] += e.get("n_entities", 0)
        tot["verified"] += e.get("n_verified", 0)
        tot["unverified"] += e.get("n_unverified", 0)
        tot["cache_hits"] += e.get("cache_hits", 0)
        tot["failures"] += e.get("n_failures", 0)
        tot["tool_calls"] += e.get("n_tool_calls", 0)
    for e in ledger:
        tot["wall_s"] += e.get("wall_s", 0.0)
        prompt_ids.update(e.get("prompt_ids", ()))
        for name, s in (e.get("stages") or {}).items():
            acc = stages.setdefault(name, {k: 0 for k in s})
            for k, v in s.items():
                acc[k] = acc.get(k, 0) + v
    usage = {k: sum(s.get(k, 0) for s in stages.values())
             for k in ("llm_calls", "input_tokens", "output_tokens", "thinking_tokens", "cost_usd")}
    tot["validation_cache"] = {"hits": tot["cache_hits"], "misses": tot["verified"] - tot["cache_hits"]}
    order = {n: i for i, n in enumerate(STAGE_NAMES)}
    return {"totals": tot, "stages": dict(sorted(stages.items(), key=lambda kv: order.get(kv[0], 99))),
            "usage": usage, "prompt_ids": sorted(prompt_ids)}


def _git_sha() -> str | None:
    root = Path(__file__).resolve().parents[2]
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def _versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in _PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def provenance(params: RunParams, db_info: Mapping[str, Any], notes_path: Path, n_notes: int) -> dict[str, Any]:
    """The parts of the manifest that do not change during a run (computed once)."""
    # resolved paths: `report` / `judge` run from another folder still find the inputs
    db = str(Path(params.db).resolve()) if params.db else None
    return {"git_sha": _git_sha(), "packages": _versions(),
            "data_source": {"db": db, "corpus": str(Path(notes_path).resolve()),
                            "notes_sha256": sha256_file(notes_path), "n_notes": n_notes,
                            **{k: db_info.get(k) for k in sorted(db_info)}}}


def manifest(params: RunParams, run_id: str, stages: Stages, provenance: Mapping[str, Any],
              summary: Mapping[str, Any], status: str, started: str,
              ontology_info: Mapping[str, Any] | None, error: str | None = None,
              calibration: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The run manifest: parameters, stages, provenance and progress (``error``: why a run
    that stopped early stopped, e.g. an unreachable endpoint; ``calibration``: the
    confidence calibrator used (path, sha256, versions) or ``{"status": "uncalibrated", ...}``).
    """
    return {
        "schema_version": SCHEMA_VERSION, "run_id": run_id, "status": status, "started": started,
        **({"error": error} if error else {}),
        "updated": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "method": params.method, "backend": params.backend, "model": stages.model,
        "params": params_to_dict(params), "git_sha": provenance["git_sha"], "packages": provenance["packages"],
        "prompt_ids": summary["prompt_ids"], "data_source": provenance["data_source"],
        "ontology": dict(ontology_info or {}),
        "calibration": dict(calibration or {"status": "uncalibrated", "reason": "not recorded"}),
        "cache": {"validation": summary["totals"]["validation_cache"],
                  "llm": dict(stages.stats()) if stages.stats else {}},
        # model calls made, answered from the response cache, failed (by kind), retried
        "llm_calls": dict((stages.stats() if stages.stats else {}).get("counts") or {}),
        "totals": summary["totals"], "stages": summary["stages"], "usage": summary["usage"],
    }


def check_resume(run_dir: Path, params: RunParams) -> str | None:
    """The start time of the run already in ``run_dir`` (None for a new run).

    Raises ConfigError when that run used different parameters (other than those a
    resumption may change); warns when it was started by other code.
    """
    path = run_dir / MANIFEST
    if not path.exists():
        return None
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError:
        return None  # manifest writes are atomic; an unreadable one is not ours to trust
    mine = {k: v for k, v in params_to_dict(params).items() if k not in RESUMABLE_CHANGES}
    theirs = {k: v for k, v in (old.get("params") or {}).items() if k not in RESUMABLE_CHANGES}
    diff = sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))
    if diff:
        raise ConfigError(f"run {run_dir.name} exists with different parameters ({', '.join(diff)}); "
                          "use a new --run-id")
    sha = _git_sha()
    if old.get("git_sha") and sha and old["git_sha"] != sha:
        log.warning("run %s was started by code at %s, now at %s: resuming mixes predictions of two code "
                    "versions; use a new --run-id for a clean run", run_dir.name, old["git_sha"][:8], sha[:8])
    return old.get("started")


def write_manifest(run_dir: Path, params: RunParams, run_id: str, stages: Stages, provenance: Mapping[str, Any],
                   ledger: Iterable[Mapping[str, Any]], status: str, started: str,
                   ontology_info: Mapping[str, Any] | None, error: str | None = None, *,
                   calibration: Mapping[str, Any] | None = None) -> None:
    """Rewrite ``manifest.json`` and ``usage.json`` from the ledger (atomic writes)."""
    summary = summarize_ledger(ledger)
    write_json(manifest(params, run_id, stages, provenance, summary, status, started, ontology_info, error,
                        calibration),
               run_dir / MANIFEST)
    write_json({"run_id": run_id, "model": stages.model, **summary["usage"],
                "by_stage": {k: {m: v[m] for m in ("llm_calls", "input_tokens", "output_tokens",
                                                   "thinking_tokens", "cost_usd") if m in v}
                             for k, v in summary["stages"].items()},
                "notes": summary["totals"]["notes_ok"]}, run_dir / USAGE)
