"""Benchmark: offline inspector time per note against note length (1 k .. 2 M characters).

A careless or hostile corpus holds notes no clinician wrote: a pasted log of 100 k blank
lines, a 1 MB line without a newline, a 2 MB dump. The cost of one note must grow
linearly with its length, so such a note slows its own run by seconds, not hours. Four
shapes are timed at each length: ``prose`` (clinical lines repeated), ``one_line`` (the
same words with no newline), ``blank_lines`` (one statement, then empty lines) and
``dense_line`` (drug names and values with no sentence break: every mention shares one
clause, the case where per-mention work over the whole clause turns quadratic). Each
note runs alone through the full offline inspector (``ehrlib run`` code path, size
limits lifted) after a warm-up note, so imports and index builds are not counted; the
time is the note's own ``wall_s`` from the run ledger.

``run(out_dir)`` writes ``bench_note_length.csv``: shape, characters, lines, seconds,
microseconds per character, entities found. Linear cost shows as a flat us/char column.
``EHRLIB_BENCH_NOTE_MAX`` caps the largest length (default 2,000,000). Dense prose costs
what its entities cost to verify (about 50 per 1,000 characters here), so by default it
stops at 200,000 characters to keep ``make bench`` short, as does ``dense_line``;
``EHRLIB_BENCH_PROSE_MAX`` raises that.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ehrlib.bench import write_csv
from ehrlib.corpus.io import write_jsonl
from ehrlib.corpus.records import Note

__all__ = ["LENGTHS", "SHAPES", "note_text", "run"]

LENGTHS = (1_000, 10_000, 100_000, 200_000, 500_000, 1_000_000, 2_000_000)
SHAPES = ("prose", "one_line", "blank_lines", "dense_line")
#: shapes whose cost is that of their many entities: capped at ``EHRLIB_BENCH_PROSE_MAX``
_DENSE = ("prose", "dense_line")
_PROSE = ("HR 88 this morning, BP 120/80, afebrile.\nWBC 12.3 on admission, creatinine 1.1.\n"
          "Lasix 40 mg IV given with good urine output.\nBlood cultures pending. Plan: continue antibiotics.\n")


def note_text(shape: str, n: int) -> str:
    """A note of ``n`` characters of one shape."""
    if shape == "prose":
        return (_PROSE * (n // len(_PROSE) + 1))[:n]
    if shape == "one_line":
        flat = _PROSE.replace("\n", " ")
        return (flat * (n // len(flat) + 1))[:n]
    if shape == "dense_line":
        unit = "Lasix 40 mg vanc/zosyn K 4.1 "
        return (unit * (n // len(unit) + 1))[:n]
    if shape == "blank_lines":
        head = "HR 88 this morning.\n"
        return head + "\n" * max(n - len(head), 0)
    raise ValueError(f"unknown shape {shape!r}")


def run(out_dir: Path) -> Path:
    """Time the offline inspector on notes of growing length; write ``bench_note_length.csv``."""
    # deferred: the pipeline and the generator load only when this benchmark runs
    import duckdb

    from ehrlib.pipeline.params import load_params
    from ehrlib.pipeline.rundir import read_ledger
    from ehrlib.pipeline.runner import run_experiment
    from ehrlib.synth import generate_hospital

    top = int(os.environ.get("EHRLIB_BENCH_NOTE_MAX", LENGTHS[-1]))
    prose_top = int(os.environ.get("EHRLIB_BENCH_PROSE_MAX", 200_000))
    lengths = [n for n in LENGTHS if n <= top]
    rows = []
    with tempfile.TemporaryDirectory(prefix="ehrlib-bench-notelen-") as tmp:
        work = Path(tmp)
        db = generate_hospital(work / "hospital.duckdb", patients=4, seed=0)
        con = duckdb.connect(str(db), read_only=True)
        sid, hadm, day = con.execute("SELECT SUBJECT_ID, HADM_ID, CAST(ADMITTIME AS DATE) FROM ADMISSIONS "
                                     "ORDER BY HADM_ID LIMIT 1").fetchall()[0]
        con.close()
        notes = [Note("warmup", sid, hadm, "nursing", str(day), note_text("prose", 500))]
        notes += [Note(f"{shape}-{n}", sid, hadm, "nursing", str(day), note_text(shape, n))
                  for n in lengths for shape in SHAPES if shape not in _DENSE or n <= prose_top]
        corpus = work / "corpus"
        write_jsonl(notes, corpus / "notes.jsonl")
        params = load_params(None, corpus=str(corpus), db=str(db), backend="offline", run_id="note-length",
                             runs_dir=str(work / "runs"), concurrency=1, progress=False,
                             max_note_chars=max(lengths) + 1, max_line_chars=max(lengths) + 1)
        run_dir = run_experiment(params)
        by_id = {n.note_id: n for n in notes}
        for entry in read_ledger(run_dir):
            if entry["note_id"] == "warmup":
                continue
            note = by_id[entry["note_id"]]
            shape = note.note_id.rsplit("-", 1)[0]
            wall = float(entry.get("wall_s", 0.0))
            rows.append([shape, len(note.text), note.text.count("\n") + 1, round(wall, 4),
                         round(wall * 1e6 / len(note.text), 3), entry.get("n_entities", 0), entry.get("status")])
    rows.sort(key=lambda r: (SHAPES.index(r[0]), r[1]))
    return write_csv(Path(out_dir) / "bench_note_length.csv",
                     ["shape", "chars", "lines", "wall_s", "us_per_char", "entities", "status"], rows)
