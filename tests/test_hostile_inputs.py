"""Hostile and careless inputs through the command line: every case ends in a one-line
error (exit 2, or 1 for a failed run) or a recorded per-note failure, never a traceback.

Cases are generated per category (malformed corpora and records, bad dates and times,
damaged databases, build-db data contracts); the count per category is printed.
"""
from __future__ import annotations

import gzip
import json
import os
import shutil
import sys
from pathlib import Path

import duckdb
import pytest

from ehrlib.cli import main
from ehrlib.pipeline.rundir import read_ledger

COUNTS: dict[str, dict[str, int]] = {}


def _outcome(category: str, argv: list[str], capsys, caplog) -> tuple[int, str]:
    """Run the CLI; the result must be a clean exit with at most one error line, and no
    traceback logged (the CLI's log handler prints to stderr)."""
    caplog.clear()
    code = main(argv)
    assert not [r for r in caplog.records if r.exc_info], [r.getMessage() for r in caplog.records]
    err = capsys.readouterr().err.strip()
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert "Traceback" not in err, err
    assert code in (0, 1, 2), (argv, code, err)
    kind = "one-line error" if code == 2 and len(errors) == 1 else "per-note failure" if code == 1 else "ok"
    if code == 2:
        assert len(errors) == 1 and len(errors[0]) < 600, err
    if os.environ.get("EHRLIB_HOSTILE_SHOW"):
        print(f"{category} | {argv[2] if len(argv) > 2 else ''} | {argv[4] if len(argv) > 4 else ''} | {code} | {err[:300]}",
              file=sys.__stderr__)
    COUNTS.setdefault(category, {}).setdefault(kind, 0)
    COUNTS[category][kind] += 1
    return code, err


@pytest.fixture(scope="module")
def base(synth_db):
    con = duckdb.connect(str(synth_db), read_only=True)
    sid, hadm, admit = con.execute("SELECT SUBJECT_ID, HADM_ID, CAST(ADMITTIME AS DATE) FROM ADMISSIONS "
                                   "ORDER BY HADM_ID LIMIT 1").fetchone()
    con.close()
    return {"note_id": "n1", "subject_id": sid, "hadm_id": hadm, "note_type": "nursing",
            "chartdate": str(admit), "text": "HR 80 this morning.\nWBC 12."}


def _run_argv(corpus: Path, db: Path, tmp: Path, run_id: str) -> list[str]:
    return ["run", "--corpus", str(corpus), "--db", str(db), "--method", "surface", "--backend", "offline",
            "--run-id", run_id, "--runs-dir", str(tmp / "runs"), "--no-progress"]


def _corpus_cases(base: dict) -> dict[str, list[tuple[str, bytes, str]]]:
    """(case id, notes.jsonl bytes, file name) per category."""
    good = (json.dumps(base) + "\n").encode()
    enc = []
    enc.append(("utf16", json.dumps(base).encode("utf-16") + b"\n", "notes.jsonl"))
    enc.append(("utf16be", b"\xfe\xff" + json.dumps(base).encode("utf-16-be"), "notes.jsonl"))
    enc.append(("latin1", json.dumps({**base, "text": "fi\u00e8vre"}, ensure_ascii=False).encode("latin-1") + b"\n",
                "notes.jsonl"))
    enc.append(("cp1252", json.dumps({**base, "text": "\u201cquoted\u201d"}, ensure_ascii=False).encode("cp1252"),
                "notes.jsonl"))
    enc.append(("binary", bytes(range(256)) * 4, "notes.jsonl"))
    enc.append(("truncated-gzip", gzip.compress(good * 50)[:40], "notes.jsonl.gz"))
    enc.append(("gzip-named-plain", gzip.compress(good)[:10] + b"xx", "notes.jsonl"))
    enc.append(("empty", b"", "notes.jsonl"))
    enc.append(("not-json", b"hello\n", "notes.jsonl"))
    enc.append(("array", b"[1, 2]\n", "notes.jsonl"))
    enc.append(("nan", good.replace(b'"text"', b'"x": NaN, "text"'), "notes.jsonl"))
    enc.append(("deep", b"[" * 100000 + b"]" * 100000 + b"\n", "notes.jsonl"))
    ok_enc = [("bom", b"\xef\xbb\xbf" + good, "notes.jsonl"), ("gzip", gzip.compress(good), "notes.jsonl.gz")]
    fields = []
    bad_values = {
        "note_id": [None, "", "  ", 7, 1.5, [], {}], "subject_id": [None, 1.0, "10006", True, [], -0.5],
        "hadm_id": [None, 2.5, "x", False], "note_type": [None, "", "banana", 3, ["nursing"]],
        "chartdate": [None, "", "yesterday", 20100101, "2101-13-01", "2101-02-30", "99999-01-01", "0001-01-01",
                      "2101-00-10", "2101-04-31"],
        "charttime": ["2101-01-01 25:00:00", "2101-01-01 10:61", "13/01/2101", "2101-02-29 10:00", 5],
        "text": [None, 12, ["a"], {"a": 1}],
    }
    for name, values in bad_values.items():
        for i, v in enumerate(values):
            fields.append((f"{name}-{i}", (json.dumps({**base, name: v}) + "\n").encode(), "notes.jsonl"))
    missing = [(f"missing-{k}", (json.dumps({x: y for x, y in base.items() if x != k}) + "\n").encode(),
                "notes.jsonl") for k in base]
    extra = [("unknown-field", (json.dumps({**base, "colour": "red"}) + "\n").encode(), "notes.jsonl"),
             ("duplicate-id", good + good, "notes.jsonl")]
    return {"corpus encodings": enc, "corpus accepted encodings": ok_enc, "record fields": fields + missing + extra}


def test_hostile_corpora(base, synth_db, tmp_path, capsys, caplog):
    for category, cases in _corpus_cases(base).items():
        for case, data, name in cases:
            corpus = tmp_path / f"c-{case}"
            corpus.mkdir()
            (corpus / name).write_bytes(data)
            code, err = _outcome(category, _run_argv(corpus, synth_db, tmp_path, f"r-{case}"), capsys, caplog)
            if category == "corpus accepted encodings":
                assert code == 0, (case, err)
            else:
                assert code == 2, (case, code, err)
                if category == "record fields" and case != "duplicate-id":
                    assert "notes.jsonl:1:" in err and "field" in err, (case, err)
    _report(capsys, ("corpus encodings", "corpus accepted encodings", "record fields"))


def _db_variants(synth_db: Path, tmp: Path) -> list[tuple[str, Path]]:
    raw = synth_db.read_bytes()
    out = []

    def put(name: str, data: bytes) -> None:
        p = tmp / f"{name}.duckdb"
        p.write_bytes(data)
        out.append((name, p))

    for frac in (0.0, 0.001, 0.1, 0.5, 0.9, 0.99):
        put(f"truncated-{frac}", raw[: int(len(raw) * frac)])
    for at in (0, 9, 4096, 8192, len(raw) // 3, len(raw) // 2):
        data = bytearray(raw)
        data[at:at + 4096] = b"\xde\xad\xbe\xef" * 1024
        put(f"corrupt-{at}", bytes(data[: len(raw)]))
    sqlite = tmp / "sqlite.db"
    import sqlite3

    with sqlite3.connect(sqlite) as s:
        s.execute("CREATE TABLE t (x)")
    out.append(("sqlite", sqlite))
    put("text", b"subject_id,hadm_id\n1,2\n")
    put("parquet-magic", b"PAR1" + b"\x00" * 100)
    folder = tmp / "folder.duckdb"
    folder.mkdir()
    out.append(("folder", folder))
    out.append(("missing-file", tmp / "nope.duckdb"))
    for table in ("ADMISSIONS", "CHARTEVENTS", "D_ITEMS", "ehrlib_manifest", "PATIENTS", "LABEVENTS"):
        p = tmp / f"drop-{table}.duckdb"
        shutil.copy(synth_db, p)
        with duckdb.connect(str(p)) as con:
            con.execute(f'DROP TABLE "{table}"')
        out.append((f"drop-{table}", p))
    for label, expr in (("null", "NULL"), ("garbage", "'not a time'"), ("year-99999", "'99999-01-01'"),
                        ("after-discharge", "DISCHTIME + INTERVAL 30 DAY")):
        p = tmp / f"admit-{label}.duckdb"
        shutil.copy(synth_db, p)
        with duckdb.connect(str(p)) as con:
            con.execute("ALTER TABLE ADMISSIONS ALTER ADMITTIME DROP NOT NULL")
            if label == "garbage":
                con.execute("ALTER TABLE ADMISSIONS ALTER ADMITTIME TYPE VARCHAR")
            con.execute(f"UPDATE ADMISSIONS SET ADMITTIME = {expr}")
        out.append((f"admit-{label}", p))
    return out


def test_hostile_databases(base, synth_db, tmp_path, capsys, caplog):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "notes.jsonl").write_text(json.dumps(base) + "\n")
    for case, db in _db_variants(synth_db, tmp_path):
        code, err = _outcome("damaged databases", _run_argv(corpus, db, tmp_path, f"db-{case}"), capsys, caplog)
        if code == 1:  # the run went on: the note's failure is on record
            ledger = read_ledger(tmp_path / "runs" / f"db-{case}")
            assert ledger and ledger[-1]["status"] == "failed", case
            failure = json.loads((tmp_path / "runs" / f"db-{case}" / "failures.jsonl").read_text().splitlines()[0])
            assert "DataError" in failure["error"] and "\n" not in failure["error"], failure
        elif code == 0:     # a damaged block the run never reads changes nothing
            assert case.startswith("corrupt-") or case == "admit-after-discharge", case
        else:
            assert code == 2, (case, err)
    _report(capsys, ("damaged databases",))


def _report(capsys, categories) -> None:
    with capsys.disabled():
        for c in categories:
            kinds = COUNTS.get(c, {})
            print(f"\n[hostile inputs] {c}: {sum(kinds.values())} cases, {kinds}")


def _build_cases() -> list[tuple[str, str, str, str]]:
    """(case, file, column, replacement value) for one row of a demo CSV."""
    out = []
    for col in ("admittime", "dischtime", "edregtime"):
        for label, value in (("year-99999", "99999-10-23 21:09:00"), ("year-0999", "0999-10-23 21:09:00"),
                             ("month-13", "2164-13-23 21:09:00"), ("feb-30", "2164-02-30 21:09:00"),
                             ("hour-25", "2164-10-23 25:09:00"), ("text", "yesterday"), ("year-3000", "3000-01-01 00:00:00")):
            out.append((f"ADMISSIONS-{col}-{label}", "ADMISSIONS.csv", col, value))
    for label, value in (("year-99999", "99999-03-05 00:00:00"), ("year-1066", "1066-03-05 00:00:00")):
        out.append((f"PATIENTS-dob-{label}", "PATIENTS.csv", "dob", value))
    return out


def test_hostile_build_contracts(mimic3_demo_dir, tmp_path, capsys, caplog):
    import csv

    for case, name, col, value in _build_cases():
        src = tmp_path / case
        src.mkdir()
        for f in ("PATIENTS.csv", "ADMISSIONS.csv"):
            rows = list(csv.reader((mimic3_demo_dir / f).open(newline="")))
            if f == name:
                rows[3][rows[0].index(col)] = value
            with (src / f).open("w", newline="") as fh:
                csv.writer(fh).writerows(rows)
        out = tmp_path / f"{case}.duckdb"
        code, err = _outcome("build-db data contracts", ["build-db", str(src), str(out), "--no-progress"],
                             capsys, caplog)
        assert code == 2 and not out.exists(), (case, err)
        assert name.split(".")[0] in err and col.upper() in err.upper(), (case, err)
    _report(capsys, ("build-db data contracts",))


def test_hostile_note_sizes(base, synth_db, tmp_path, capsys, caplog):
    """Past the size limits a note fails on its own, recorded; the others still run."""
    params = tmp_path / "limits.yaml"
    params.write_text("max_note_chars: 50000\nmax_line_chars: 5000\n")
    cases = {"blank-lines": "HR 80\n" + "\n" * 100_000, "one-line": "HR 80 " * 2_000,
             "big": ("HR 80 this morning.\n" * 3_000), "binary-ish": "\x00\x01" * 40_000,
             "long-line-in-middle": "HR 80\n" + "x" * 6_000 + "\nWBC 12"}
    for case, text in cases.items():
        corpus = tmp_path / f"size-{case}"
        corpus.mkdir()
        (corpus / "notes.jsonl").write_text(json.dumps({**base, "note_id": "big", "text": text}) + "\n"
                                            + json.dumps({**base, "note_id": "small"}) + "\n")
        code, err = _outcome("overlong notes", _run_argv(corpus, synth_db, tmp_path, f"s-{case}")
                             + ["--params", str(params)], capsys, caplog)
        assert code == 1, (case, err)
        ledger = {e["note_id"]: e["status"] for e in read_ledger(tmp_path / "runs" / f"s-{case}")}
        assert ledger == {"big": "failed", "small": "ok"}, (case, ledger)
        failure = (tmp_path / "runs" / f"s-{case}" / "failures.jsonl").read_text()
        assert "max_note_chars" in failure or "max_line_chars" in failure
    _report(capsys, ("overlong notes",))
