"""Hostile run folders: a second writer, damaged ledger lines, OS errors in the run folder.

Every case ends in a one-line error (exit 2) or a resumed run that commits each note
exactly once; the count of cases per category is printed.
"""
from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import duckdb
import pytest

from ehrlib.cli import main
from ehrlib.pipeline.rundir import LEDGER_FILE, read_ledger
from ehrlib.pipeline.runlock import RunLock, read_ledger_lines

COUNTS: dict[str, Counter] = {}


@pytest.fixture(scope="module")
def corpus(synth_db, tmp_path_factory):
    con = duckdb.connect(str(synth_db), read_only=True)
    rows = con.execute("SELECT SUBJECT_ID, HADM_ID, CAST(ADMITTIME AS DATE) FROM ADMISSIONS ORDER BY HADM_ID "
                       "LIMIT 4").fetchall()
    con.close()
    folder = tmp_path_factory.mktemp("runs_corpus")
    with (folder / "notes.jsonl").open("w") as fh:
        for i, (sid, hadm, day) in enumerate(rows):
            fh.write(json.dumps({"note_id": f"n{i}", "subject_id": sid, "hadm_id": hadm, "note_type": "nursing",
                                 "chartdate": str(day), "text": f"HR {80 + i} this morning.\nWBC {10 + i}."}) + "\n")
    return folder


def _argv(corpus: Path, db: Path, runs: Path, run_id: str) -> list[str]:
    return ["run", "--corpus", str(corpus), "--db", str(db), "--method", "surface", "--backend", "offline",
            "--run-id", run_id, "--runs-dir", str(runs), "--no-progress"]


def _cli(category: str, argv: list[str], capsys) -> tuple[int, str]:
    code = main(argv)
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err
    lines = [x for x in err.splitlines() if x.startswith("error:")]
    kind = "one-line error" if code == 2 and len(lines) == 1 else "ok" if code == 0 else f"exit {code}"
    COUNTS.setdefault(category, Counter())[kind] += 1
    return code, err


def _report(capsys, category: str) -> None:
    with capsys.disabled():
        print(f"\n[hostile runs] {category}: {sum(COUNTS[category].values())} cases, {dict(COUNTS[category])}")


def test_second_writer_is_refused(corpus, synth_db, tmp_path, capsys):
    runs = tmp_path / "runs"
    (runs / "same").mkdir(parents=True)
    # another process holds the run folder
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from ehrlib.pipeline.runlock import RunLock; "
                               f"lock = RunLock({str(runs / 'same')!r}); print('locked', flush=True); time.sleep(60)"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        for _ in range(3):
            code, err = _cli("concurrent writers", _argv(corpus, synth_db, runs, "same"), capsys)
            assert code == 2 and "being written by pid" in err, err
        assert not (runs / "same" / "predictions.jsonl").exists()
    finally:
        holder.kill()
        holder.wait()
    # in this process too (a notebook starting the same run twice)
    lock = RunLock(runs / "same")
    try:
        code, err = _cli("concurrent writers", _argv(corpus, synth_db, runs, "same"), capsys)
        assert code == 2 and "being written" in err
    finally:
        lock.release()
    code, _ = _cli("concurrent writers", _argv(corpus, synth_db, runs, "same"), capsys)   # free again
    assert code == 0
    _report(capsys, "concurrent writers")


_DAMAGE = {
    "garbage": b"@@@ not json @@@",
    "array": b"[1, 2, 3]",
    "torn-middle": b'{"note_id": "n1", "status": "o',
    "no-offsets": b'{"note_id": "n1", "status": "ok"}',
    "binary": bytes(x for x in range(1, 200) if x != 10),
    "empty-object": b"{}",
    "id-not-string": b'{"note_id": 3, "offsets": {}}',
}


@pytest.mark.parametrize("where", ["middle", "last"])
def test_damaged_ledger_line_is_skipped_never_double_committed(corpus, synth_db, tmp_path, capsys, caplog, where):
    for case, junk in _DAMAGE.items():
        runs = tmp_path / f"{where}-{case}"
        code, _ = _cli("damaged ledger lines", _argv(corpus, synth_db, runs, "r"), capsys)
        assert code == 0
        run = runs / "r"
        before = Counter(json.loads(x)["note_id"] for x in (run / "predictions.jsonl").read_text().splitlines())
        lines = (run / LEDGER_FILE).read_bytes().split(b"\n")[:-1]
        k = 1 if where == "middle" else len(lines) - 1
        lines[k] = junk                         # a complete line replaced by junk
        (run / LEDGER_FILE).write_bytes(b"\n".join(lines) + b"\n")
        entries, damaged = read_ledger_lines(run / LEDGER_FILE)
        assert [no for no, _ in damaged] == [k + 1] and len(entries) == len(lines) - 1
        caplog.clear()
        code, err = _cli("damaged ledger lines", _argv(corpus, synth_db, runs, "r"), capsys)
        assert code == 0, err
        assert any(f"{LEDGER_FILE}:{k + 1}: damaged ledger line" in r.getMessage() for r in caplog.records)
        after = Counter(json.loads(x)["note_id"] for x in (run / "predictions.jsonl").read_text().splitlines())
        assert after == before, (case, where)   # every note once: none lost, none twice
        # a lost middle line's note keeps its records; a lost last line's note had its records
        # truncated with it and ran again: either way once
        assert len(read_ledger(run)) == (len(lines) - 1 if where == "middle" else len(lines))
    _report(capsys, "damaged ledger lines")


def test_os_errors_in_the_run_folder(corpus, synth_db, tmp_path, capsys, monkeypatch):
    # the run folder is a file
    (tmp_path / "runs-file").mkdir()
    (tmp_path / "runs-file" / "r").write_text("x")
    code, err = _cli("run-folder OS errors", _argv(corpus, synth_db, tmp_path / "runs-file", "r"), capsys)
    assert code == 2 and "is a file" in err
    # the runs folder's parent is a file
    (tmp_path / "plain").write_text("x")
    code, err = _cli("run-folder OS errors", _argv(corpus, synth_db, tmp_path / "plain" / "runs", "r"), capsys)
    assert code == 2 and "run folder" in err, err

    # read-only file system and full disk (simulated: tests may run as root, who ignores modes)
    def refuse(code_):
        def fail(*a, **k):
            raise OSError(code_, os.strerror(code_))
        return fail

    for label, target, err_no in (("read-only mkdir", "pathlib.Path.mkdir", errno.EROFS),
                                  ("full disk at fsync", "os.fsync", errno.ENOSPC),
                                  ("quota at fsync", "os.fsync", errno.EDQUOT),
                                  ("read-only at fsync", "os.fsync", errno.EROFS)):
        with monkeypatch.context() as m:
            m.setattr(target, refuse(err_no))
            code, err = _cli("run-folder OS errors", _argv(corpus, synth_db, tmp_path / label.replace(" ", "-"), "r"),
                             capsys)
        assert code == 2 and "run folder" in err and len(err.splitlines()) == 1, (label, err)
        if "fsync" in label:     # fixed, the same run id resumes and finishes
            code, err = _cli("run-folder OS errors", _argv(corpus, synth_db, tmp_path / label.replace(" ", "-"), "r"),
                             capsys)
            assert code == 0, err
            run = tmp_path / label.replace(" ", "-") / "r"
            ids = [json.loads(x)["note_id"] for x in (run / "predictions.jsonl").read_text().splitlines()]
            assert sorted(set(ids)) == ["n0", "n1", "n2", "n3"]
    _report(capsys, "run-folder OS errors")
