"""Hostile targets for ``ehrlib notes import``: it never deletes, leaks or loses data.

Every case is built in tmp_path from a small generated NOTEEVENTS-shaped file and checks
the exit code, a single stderr line without a traceback, the source's checksum, and that
nothing beside OUT_DIR changed. The signal cases run the CLI in a real process. The count
per category is printed.
"""
from __future__ import annotations

import csv
import errno
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ehrlib.cli import main
from ehrlib.corpus.import_target import IMPORT_FILE, Target, staged
from ehrlib.corpus.io import NOTES_FILE, corpus_file, read_notes

REPO = Path(__file__).resolve().parents[1]
HEADER = ("ROW_ID", "SUBJECT_ID", "HADM_ID", "CHARTDATE", "CHARTTIME", "STORETIME", "CATEGORY", "DESCRIPTION",
          "CGID", "ISERROR", "TEXT")
COUNTS: dict[str, dict[str, int]] = {}


def _noteevents(path: Path, rows: list[tuple] | None = None) -> Path:
    rows = rows if rows is not None else [
        (1, 10006, 142345, "2164-10-23", "", "", "Discharge summary", "", "", "", "Admitted with fever."),
        (2, 10011, 105331, "2126-08-15", "2126-08-15 04:00:00", "", "Nursing", "", "", "", "UOP 30 cc/hr"),
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(HEADER)
        w.writerows(rows)
    return path


def _big_noteevents(path: Path, rows: int = 40_000) -> Path:
    """~40 MB of rows: long enough an import that a signal lands while it writes."""
    text = '"' + "Pt resting comfortably, HR 80s, BP 120/70, UOP adequate. " * 18 + '"'
    body = "".join(f"{i},{100 + i % 50},{1000 + i % 50},2150-01-01,2150-01-01 10:00:00,,Nursing,,,,{text}\n"
                   for i in range(1, rows + 1))
    path.write_text(",".join(HEADER) + "\n" + body, encoding="utf-8")
    return path


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _tree(root: Path, skip: Path | None = None) -> dict[str, str]:
    """Every path under ``root`` (outside ``skip``) with its content hash, or 'dir'/'link'."""
    out = {}
    for p in sorted(root.rglob("*")):
        if skip is not None and (p == skip or skip in p.parents):
            continue
        rel = str(p.relative_to(root))
        out[rel] = "link" if p.is_symlink() else "dir" if p.is_dir() else _sha(p)
    return out


def _count(category: str, kind: str, n: int = 1) -> None:
    COUNTS.setdefault(category, {}).setdefault(kind, 0)
    COUNTS[category][kind] += n


def _cli(category: str, argv: list[str], capsys) -> tuple[int, str]:
    """Run the CLI in-process: exit 0 or 2, at most one stderr line, never a traceback."""
    code = main(["notes", "import", *argv, "--no-progress"])
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err, err
    assert code in (0, 2), (argv, code, err)
    if code == 2:
        assert len(err.splitlines()) == 1 and err.startswith("error: ") and len(err) < 600, err
    else:
        assert not err, err
    _count(category, "one-line error" if code else "ok")
    return code, err


def _report(capsys, *categories: str) -> None:
    with capsys.disabled():
        for c in categories:
            kinds = COUNTS.get(c, {})
            print(f"\n[hostile notes import] {c}: {sum(kinds.values())} cases, {kinds}")


def _refused(category: str, case: Path, argv: list[str], capsys, out: Path, expect: str) -> str:
    """The import is refused; the source and every file in the case folder are unchanged."""
    src = case / "NOTEEVENTS.csv"
    before, digest = _tree(case), _sha(src)
    code, err = _cli(category, argv, capsys)
    assert code == 2 and expect in err, (argv, err)
    assert _sha(src) == digest and _tree(case) == before, (argv, err)
    assert not [p for p in case.rglob(".*import*")], list(case.rglob(".*import*"))
    return err


def test_overwrite_never_deletes_what_it_does_not_own(tmp_path, capsys, monkeypatch):
    cat = "destructive targets"
    cases = {}

    def case(name: str) -> Path:
        folder = tmp_path / name
        _noteevents(folder / "NOTEEVENTS.csv")
        cases[name] = folder
        return folder

    c = case("out-is-source")
    _refused(cat, c, [str(c / "NOTEEVENTS.csv"), str(c / "NOTEEVENTS.csv"), "--overwrite"], capsys, c, "source")
    c = case("out-contains-source")
    _refused(cat, c, [str(c / "NOTEEVENTS.csv"), str(c), "--overwrite"], capsys, c, "contains the source")
    _refused(cat, c, [str(c / "NOTEEVENTS.csv"), str(c.parent), "--overwrite"], capsys, c, "contains the source")
    _refused(cat, c, [str(c / "NOTEEVENTS.csv"), str(c / "NOTEEVENTS.csv" / "sub")], capsys, c, "under the source")
    (c / "link").symlink_to(c, target_is_directory=True)
    _refused(cat, c, [str(c / "NOTEEVENTS.csv"), str(c / "link"), "--overwrite"], capsys, c, "contains the source")
    monkeypatch.chdir(c)
    _refused(cat, c, ["NOTEEVENTS.csv", ".", "--overwrite"], capsys, c, "contains the source")
    c = case("unrelated-tree")
    tree = c / "photos"
    (tree / "2024" / "deep").mkdir(parents=True)
    (tree / "2024" / "deep" / "keep.txt").write_text("mine")
    (tree / "notes.jsonl").write_text("not a corpus of ours\n")
    _refused(cat, c, [str(c / "NOTEEVENTS.csv"), str(tree), "--overwrite"], capsys, c, "not a corpus folder")
    _refused(cat, c, [str(c / "NOTEEVENTS.csv"), str(tree)], capsys, c, "not a corpus folder")
    monkeypatch.chdir(tree)
    _refused(cat, c, [str(c / "NOTEEVENTS.csv"), ".", "--overwrite"], capsys, c, "not a corpus folder")
    for content in ("[1]", '{"source": "x"}', "\x00\x01"):  # an import.json that is not ours
        (tree / IMPORT_FILE).write_text(content)
        _refused(cat, c, [str(c / "NOTEEVENTS.csv"), str(tree), "--overwrite"], capsys, c, "not a corpus folder")
    c = case("out-is-a-file")
    (c / "out.txt").write_text("a file")
    _refused(cat, c, [str(c / "NOTEEVENTS.csv"), str(c / "out.txt"), "--overwrite"], capsys, c, "is a file")
    (c / "dangling").symlink_to(c / "nowhere")
    _refused(cat, c, [str(c / "NOTEEVENTS.csv"), str(c / "dangling")], capsys, c, "symbolic link")

    # an existing corpus of ours: only notes.jsonl and import.json are replaced
    c = case("own-corpus")
    out = c / "corpus"
    assert _cli(cat, [str(c / "NOTEEVENTS.csv"), str(out)], capsys)[0] == 0
    (out / "gold.jsonl").write_text("labels\n")
    (out / "analysis").mkdir()
    (out / "analysis" / "notes.txt").write_text("my notes")
    extras = {k: v for k, v in _tree(out).items() if k not in ("notes.jsonl", IMPORT_FILE)}
    digest = _sha(out / IMPORT_FILE)
    assert _refused(cat, c, [str(c / "NOTEEVENTS.csv"), str(out)], capsys, out, "--overwrite")
    assert _cli(cat, [str(c / "NOTEEVENTS.csv"), str(out), "--overwrite", "--note-types", "nursing"], capsys)[0] == 0
    assert [n.note_id for n in read_notes(out / "notes.jsonl")] == ["2"]
    assert {k: v for k, v in _tree(out).items() if k not in ("notes.jsonl", IMPORT_FILE)} == extras
    assert _sha(out / IMPORT_FILE) != digest and json.loads((out / IMPORT_FILE).read_text())["written"] == 1
    monkeypatch.chdir(out)  # `.` naming a corpus of ours is that corpus
    assert _cli(cat, [str(c / "NOTEEVENTS.csv"), ".", "--overwrite"], capsys)[0] == 0
    assert len(read_notes(out / "notes.jsonl")) == 2
    assert sorted(p.name for p in c.iterdir()) == ["NOTEEVENTS.csv", "corpus"]
    # an empty folder counts as new
    (c / "empty").mkdir()
    assert _cli(cat, [str(c / "NOTEEVENTS.csv"), str(c / "empty")], capsys)[0] == 0
    assert len(read_notes(c / "empty" / "notes.jsonl")) == 2
    _report(capsys, cat)


def test_os_errors_are_one_line_naming_the_path(tmp_path, capsys, monkeypatch):
    cat = "OS errors"
    src = _noteevents(tmp_path / "src" / "NOTEEVENTS.csv")
    work = tmp_path / "work"
    work.mkdir()

    def refused(argv: list[str], expect: str) -> str:
        before = _tree(tmp_path)
        digest = _sha(src)
        code, err = _cli(cat, argv, capsys)
        assert code == 2 and expect in err, (argv, err)
        assert _sha(src) == digest and _tree(tmp_path) == before, (argv, err)
        return err

    (work / "afile").write_text("x")
    refused([str(src), str(work / "afile" / "out")], "afile is a file")
    refused([str(src), str(work / "afile" / "deeper" / "out")], "afile is a file")
    readonly = work / "readonly"
    readonly.mkdir()
    with monkeypatch.context() as m:
        if os.geteuid() == 0:  # root ignores permissions: fail mkdir under that folder as the kernel would
            real_mkdir = os.mkdir

            def mkdir(path, mode=0o777, *a, **k):
                if readonly in Path(path).parents:
                    raise PermissionError(errno.EACCES, "Permission denied", str(path))
                return real_mkdir(path, mode, *a, **k)

            m.setattr(os, "mkdir", mkdir)
        else:
            readonly.chmod(0o555)
        for out in (readonly / "out", readonly / "a" / "b"):
            err = refused([str(src), str(out)], "permission denied")
            assert str(readonly) in err, err
        readonly.chmod(0o755)

    import ehrlib.corpus.mimic_notes as mod

    for where in ("first", "later"):
        calls = {"n": 0}
        real_json = mod.note_json

        def full(fields, where=where, calls=calls, real_json=real_json):
            calls["n"] += 1
            if where == "first" or calls["n"] > 1:
                raise OSError(errno.ENOSPC, "No space left on device")
            return real_json(fields)

        monkeypatch.setattr(mod, "note_json", full)
        err = refused([str(src), str(work / "full")], "no space left")
        assert "full" in err and "nothing was written" in err
        monkeypatch.setattr(mod, "note_json", real_json)
    # ENOSPC while an existing corpus is being replaced: the old one stays whole
    assert _cli(cat, [str(src), str(work / "kept")], capsys)[0] == 0
    monkeypatch.setattr(mod, "note_json", lambda fields: (_ for _ in ()).throw(OSError(errno.ENOSPC, "full")))
    refused([str(src), str(work / "kept"), "--overwrite"], "no space left")
    monkeypatch.undo()
    assert len(read_notes(work / "kept" / "notes.jsonl")) == 2

    latin = work / "hadm-latin1.txt"
    latin.write_bytes("HADM_ID\n142345 # caf\xe9\n".encode("latin-1"))
    refused([str(src), str(work / "o"), "--hadm-ids", str(latin)], "not UTF-8")
    binary = work / "hadm.bin"
    binary.write_bytes(bytes(range(256)))
    refused([str(src), str(work / "o"), "--subject-ids", str(binary)], "hadm.bin")
    refused([str(src), str(work / "o"), "--hadm-ids", str(work)], "not found")
    refused([str(work), str(work / "o")], "is a folder but no EHRCon release")
    _report(capsys, cat)


def test_impossible_dates_are_skipped_and_counted(tmp_path, capsys):
    cat = "impossible dates"
    rows = [(1, 10006, 142345, "2164-10-23", "", "", "Nursing", "", "", "", "kept")]
    bad = {"9999-12-31": "", "0999-01-01": "", "1699-12-31": "", "2301-01-01": "",
           "2164-10-23": "9999-12-31 10:00:00", "2164-10-24": "0999-01-01T10:00:00"}
    for i, (day, clock) in enumerate(bad.items(), start=2):
        rows.append((i, 10006, 142345, day, clock, "", "Nursing", "", "", "", "impossible"))
    rows.append((20, 10006, 142345, "1700-01-01", "", "", "Nursing", "", "", "", "edge, kept"))
    rows.append((21, 10006, 142345, "2300-12-31", "2300-12-31 23:59:59", "", "Nursing", "", "", "", "edge, kept"))
    rows.append((22, 10006, 142345, "2164-13-40", "", "", "Nursing", "", "", "", "unparseable"))
    src = _noteevents(tmp_path / "NOTEEVENTS.csv", rows)
    out = tmp_path / "corpus"
    code = main(["notes", "import", str(src), str(out), "--no-progress"])
    printed = capsys.readouterr().out
    assert code == 0
    record = json.loads((out / IMPORT_FILE).read_text())
    assert record["unusable"] == {"bad_date": 1, "date_out_of_range": len(bad)}, record["unusable"]
    assert record["notes_bytes"] == (out / "notes.jsonl").stat().st_size
    assert f"date_out_of_range {len(bad)}" in printed and "bad_date 1" in printed
    notes = read_notes(corpus_file(out, NOTES_FILE))  # as `ehrlib run` loads them: all pass the contract
    assert [n.note_id for n in notes] == ["1", "20", "21"]
    _count(cat, "rows skipped as date_out_of_range", len(bad))
    _count(cat, "rows skipped as bad_date")
    _count(cat, "rows kept (incl. years 1700 and 2300), all loaded by the run's loader", len(notes))
    _report(capsys, cat)


def test_concurrent_imports_into_one_folder(tmp_path, capsys, monkeypatch):
    cat = "concurrent imports"
    src = _noteevents(tmp_path / "NOTEEVENTS.csv")
    out = tmp_path / "corpus"
    # another import holds the folder: refused at once, and its staging folder is left to it
    with staged(Target(out, out.resolve(), existing=False)) as staging:
        (staging / "notes.jsonl").write_text("the other import's notes\n")
        code, err = _cli(cat, [str(src), str(out)], capsys)
        assert code == 2 and "another import" in err and str(os.getpid()) in err, err
        assert (staging / "notes.jsonl").read_text() == "the other import's notes\n" and not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["NOTEEVENTS.csv"]
    # two imports one after the other: the second is refused, the first kept
    assert _cli(cat, [str(src), str(out), "--note-types", "nursing"], capsys)[0] == 0
    code, err = _cli(cat, [str(src), str(out)], capsys)
    assert code == 2 and "--overwrite" in err
    assert [n.note_id for n in read_notes(out / "notes.jsonl")] == ["2"]
    # OUT_DIR made by someone else while the import ran: refused at the commit, theirs untouched
    import ehrlib.corpus.mimic_notes as mod

    real = mod._write_corpus
    other = tmp_path / "theirs"

    def racing(*args, **kwargs):
        other.mkdir()
        (other / "their.txt").write_text("theirs")
        return real(*args, **kwargs)

    monkeypatch.setattr(mod, "_write_corpus", racing)
    code, err = _cli(cat, [str(src), str(other)], capsys)
    assert code == 2 and "created by someone else" in err, err
    assert _tree(other) == {"their.txt": hashlib.sha256(b"theirs").hexdigest()}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["NOTEEVENTS.csv", "corpus", "theirs"]
    _report(capsys, cat)


def _start(src: Path, out: Path, *extra: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, "-m", "ehrlib", "notes", "import", str(src), str(out), "--no-progress",
                             *extra], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _when_writing(proc: subprocess.Popen, out: Path) -> None:
    """Wait until the import has its staging folder and has begun writing notes."""
    notes = out.parent / f".{out.name}.import" / "corpus" / "notes.jsonl"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if notes.stat().st_size > 0:
                return
        except OSError:
            pass
        time.sleep(0.005)
    raise AssertionError(f"the import never started writing (exit {proc.poll()}): {proc.communicate()}")


def test_signals_leave_no_staging_folder(tmp_path, capsys):
    cat = "signals (real process)"
    src = _big_noteevents(tmp_path / "NOTEEVENTS.csv")
    digest = _sha(src)
    for sig, code in ((signal.SIGTERM, 143), (signal.SIGINT, 130)):
        out = tmp_path / f"out-{sig.name}"
        proc = _start(src, out)
        _when_writing(proc, out)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == code, (sig, proc.returncode, err)
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1 and "interrupted" in err, err
        assert sorted(p.name for p in tmp_path.iterdir()) == ["NOTEEVENTS.csv"], list(tmp_path.iterdir())
        _count(cat, f"{sig.name}: cleaned, exit {code}")
    # SIGTERM while replacing an existing corpus: the old one stays whole
    out = tmp_path / "corpus"
    small = _noteevents(tmp_path / "small" / "NOTEEVENTS.csv")
    assert main(["notes", "import", str(small), str(out), "--no-progress"]) == 0
    capsys.readouterr()
    before = _tree(out)
    proc = _start(src, out, "--overwrite")
    _when_writing(proc, out)
    proc.terminate()
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143 and _tree(out) == before, err
    assert not list(tmp_path.glob(".*")), list(tmp_path.glob(".*"))
    _count(cat, "SIGTERM during --overwrite: old corpus whole")
    # SIGKILL cannot be handled: its staging folder stays until the next import sweeps it
    killed = tmp_path / "killed"
    proc = _start(src, killed)
    _when_writing(proc, killed)
    # meanwhile a second import into the same new folder is refused, naming the first
    code, err = _cli("concurrent imports (real process)", [str(small), str(killed)], capsys)
    assert code == 2 and f"another import into {killed} is running (pid {proc.pid})" in err, err
    assert proc.poll() is None and not killed.exists()
    proc.kill()
    proc.communicate(timeout=60)
    leftover = tmp_path / ".killed.import"
    assert (leftover / "corpus" / "notes.jsonl").stat().st_size > 0
    private = tmp_path / f".other.import-{proc.pid}-abc123"   # killed before it became the lock
    private.mkdir()
    foreign = tmp_path / ".mine.import"                       # not an import's: never removed
    foreign.mkdir()
    (foreign / "keep.txt").write_text("mine")
    code, err = _cli(cat, [str(small), str(killed)], capsys)
    assert code == 0 and not leftover.exists() and not private.exists() and (foreign / "keep.txt").exists(), err
    assert len(read_notes(killed / "notes.jsonl")) == 2
    assert _sha(src) == digest
    _count(cat, "SIGKILL: swept by the next import")
    _report(capsys, cat, "concurrent imports (real process)")


def test_a_stop_during_the_commit_waits_for_it(tmp_path, capsys, monkeypatch):
    """SIGTERM between the renames of an --overwrite: both files are replaced, then the import stops."""
    import ehrlib.corpus.import_target as target_mod

    src = _noteevents(tmp_path / "NOTEEVENTS.csv")
    out = tmp_path / "corpus"
    assert main(["notes", "import", str(src), str(out), "--no-progress", "--note-types", "nursing"]) == 0
    real = target_mod._commit

    def signalled(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGTERM)
        return real(*args, **kwargs)

    monkeypatch.setattr(target_mod, "_commit", signalled)
    code = main(["notes", "import", str(src), str(out), "--no-progress", "--overwrite"])
    err = capsys.readouterr().err.strip()
    assert code == 143 and err == "interrupted (stopped by SIGTERM)", (code, err)
    assert len(read_notes(out / "notes.jsonl")) == 2 and json.loads((out / IMPORT_FILE).read_text())["written"] == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["NOTEEVENTS.csv", "corpus"]
    _count("signals (in process)", "SIGTERM during the commit: commit completed, exit 143")
    _report(capsys, "signals (in process)")


@pytest.fixture(autouse=True)
def _no_stray_handlers():
    """An import restores the signal handlers it replaced."""
    before = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    yield
    assert {s: signal.getsignal(s) for s in before} == before
