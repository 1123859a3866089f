"""The batch runner: records, resumption after kill -9, ledger recovery, failures, PHI guard."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import duckdb
import pytest

from ehrlib.corpus.io import write_jsonl
from ehrlib.corpus.records import Note
from ehrlib.errors import ConfigError, PHIError
from ehrlib.pipeline.params import load_params
from ehrlib.pipeline.rundir import DATA_FILES, LEDGER_FILE, RunWriter, read_ledger
from ehrlib.pipeline.runner import run_experiment

REPO = Path(__file__).resolve().parents[1]

# A deterministic, slow backend: one entity per line with a number, a verdict from the
# text, a little sleep per entity so a batch is long enough to be killed in the middle.
BACKEND = textwrap.dedent('''
    import hashlib, time
    from ehrlib.pipeline.records import Entity, ScopeDecision, Segment, Verdict, RowRef
    from ehrlib.pipeline.stages import Stages, StageOutput, Timeline, register_backend

    def anchors(ctx, env, segments):
        return StageOutput(Timeline())

    def extract(ctx, env, segment, timeline, known):
        out = []
        for n in range(segment.start_line, segment.end_line + 1):
            line = ctx.lines[n]
            if any(ch.isdigit() for ch in line):
                out.append(Entity(f"x{n}", n, line.split()[0], "measurement", value=line.split()[-1]))
        return StageOutput(tuple(out))

    def verify(ctx, env, entity, cache):
        time.sleep(DELAY)
        h = int(hashlib.sha256((ctx.note_id + entity.text).encode()).hexdigest(), 16)
        label = "consistent" if h % 3 else "inconsistent"
        return Verdict(entity.entity_id, label, None if label == "consistent" else "missing", "rule",
                       (RowRef("chartevents", h % 1000),) if label == "consistent" else ())

    def factory(method, params):
        return Stages(method, "slowtest", anchors, verify, patient_extractor=extract, concurrency=2,
                      model="slowtest")

    register_backend("slowtest", factory)
''')


def _script(tmp_path: Path, corpus: Path, db: Path, run_id: str, delay: float) -> Path:
    path = tmp_path / f"run_{run_id}.py"
    path.write_text(f"DELAY = {delay}\n" + BACKEND + textwrap.dedent(f'''
        from ehrlib.pipeline.params import load_params
        from ehrlib.pipeline.runner import run_experiment
        run_experiment(load_params(None, corpus={str(corpus)!r}, db={str(db)!r}, backend="slowtest",
                                   run_id={run_id!r}, runs_dir={str(tmp_path / "runs")!r}, concurrency=2,
                                   progress=False))
    '''))
    return path


@pytest.fixture(scope="module")
def corpus(synth_db, tmp_path_factory) -> Path:
    con = duckdb.connect(str(synth_db), read_only=True)
    adm = con.execute("SELECT SUBJECT_ID, HADM_ID, ADMITTIME FROM ADMISSIONS ORDER BY HADM_ID LIMIT 12").fetchall()
    con.close()
    notes = [Note(f"n{k:02d}", s, h, "physician", str(t.date()),
                  "\n".join(["Events:", f"HR {90 + k}", f"Creatinine 1.{k}", "Abd soft", f"WBC {k + 5}",
                             f"Lactate 2.{k}", f"Temp 3{k % 10}.5", "Plan: follow up"]))
             for k, (s, h, t) in enumerate(adm)]
    out = tmp_path_factory.mktemp("runner_corpus")
    write_jsonl(notes, out / "notes.jsonl")
    return out


def _predictions(run_dir: Path) -> dict[str, list[tuple]]:
    out: dict[str, list[tuple]] = {}
    for line in (run_dir / "predictions.jsonl").read_text().splitlines():
        p = json.loads(line)
        out.setdefault(p["note_id"], []).append((p["line"], p["entity"], p["label"], p["inconsistency_type"],
                                                 json.dumps(p["evidence_row_ids"])))
    return {k: sorted(v) for k, v in out.items()}


def test_kill_9_mid_batch_then_resume_equals_uninterrupted(tmp_path, corpus, synth_db):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    script = _script(tmp_path, corpus, synth_db, "killed", delay=0.05)
    proc = subprocess.Popen([sys.executable, str(script)], env=env, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    ledger = tmp_path / "runs" / "killed" / LEDGER_FILE
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if ledger.exists() and len(ledger.read_text().splitlines()) >= 3:
            break
        time.sleep(0.01)
    assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done_before = len(read_ledger(ledger.parent))
    assert 3 <= done_before < 12  # killed in the middle of the batch
    # restart: completes the rest
    subprocess.run([sys.executable, str(script)], env=env, check=True, capture_output=True, timeout=120)
    full = _script(tmp_path, corpus, synth_db, "straight", delay=0.0)
    subprocess.run([sys.executable, str(full)], env=env, check=True, capture_output=True, timeout=120)
    killed, straight = tmp_path / "runs" / "killed", tmp_path / "runs" / "straight"
    entries = read_ledger(killed)
    assert sorted(e["note_id"] for e in entries) == [f"n{k:02d}" for k in range(12)]  # each note once
    assert _predictions(killed) == _predictions(straight)
    assert sum(len(v) for v in _predictions(killed).values()) == sum(e["n_predictions"] for e in entries)
    # every data line is whole JSON with schema_version and run_id first
    for name in DATA_FILES:
        for line in (killed / name).read_text().splitlines():
            rec = json.loads(line)
            assert list(rec)[:2] == ["schema_version", "run_id"] and rec["run_id"] == "killed"
    manifest = json.loads((killed / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["totals"]["notes_ok"] == 12


def test_recovery_truncates_uncommitted_bytes(tmp_path):
    run = tmp_path / "r"
    w = RunWriter(run, "r")
    w.commit("a", {"predictions.jsonl": ['{"x": 1}'], "stages.jsonl": ['{"s": 1}']}, {"status": "ok"})
    # a crash after writing note b's data but before its ledger line, plus a torn ledger line
    with open(run / "predictions.jsonl", "a") as fh:
        fh.write('{"x": 2}\n{"x": 3')
    with open(run / LEDGER_FILE, "a") as fh:
        fh.write('{"note_id": "b", "sta')
    w.close()   # the crashed writer's lock died with its process
    w2 = RunWriter(run, "r")
    assert w2.done == {"a"}
    assert (run / "predictions.jsonl").read_text() == '{"x": 1}\n'
    assert (run / LEDGER_FILE).read_text().count("\n") == 1


def test_resume_with_other_params_is_refused(tmp_path, corpus, synth_db):
    params = load_params(None, corpus=str(corpus), db=str(synth_db), backend="offline", run_id="p",
                         runs_dir=str(tmp_path), limit=1, progress=False)
    run_experiment(params)
    with pytest.raises(ConfigError, match="different parameters"):
        run_experiment(params.replace(validation_cache=2))
    # a larger limit is a resumable change: the first note is not redone
    run_dir = run_experiment(params.replace(limit=2))
    assert [e["note_id"] for e in read_ledger(run_dir)] == ["n00", "n01"]


def test_unknown_admission_is_a_recorded_failure(tmp_path, synth_db):
    corpus = tmp_path / "c"
    write_jsonl([Note("bad", 1, 999999999, "nursing", "2100-01-01", "HR 80")], corpus / "notes.jsonl")
    run_dir = run_experiment(load_params(None, corpus=str(corpus), db=str(synth_db), backend="offline",
                                         run_id="f", runs_dir=str(tmp_path / "runs"), progress=False))
    (entry,) = read_ledger(run_dir)
    assert entry["status"] == "failed"
    (failure,) = [json.loads(x) for x in (run_dir / "failures.jsonl").read_text().splitlines()]
    assert "999999999" in failure["error"] and failure["note_id"] == "bad"


def test_credentialed_db_refused_before_any_llm_call(tmp_path, corpus, synth_db):
    db = tmp_path / "cred.duckdb"
    shutil.copy(synth_db, db)
    con = duckdb.connect(str(db))
    con.execute("UPDATE ehrlib_manifest SET value = 'credentialed' WHERE key = 'source_kind'")
    con.close()
    params = load_params(None, corpus=str(corpus), db=str(db), backend="gemini", run_id="phi",
                         runs_dir=str(tmp_path / "runs"), progress=False,
                         backend_options={"llm": {"api_key": "not-a-real-key"}})
    with pytest.raises(PHIError, match="credentialed"):
        run_experiment(params)
    assert not (tmp_path / "runs" / "phi" / "predictions.jsonl").exists()


def test_scripted_llm_backend_through_the_runner(tmp_path, synth_db):
    """The LLM path of `run_experiment` (client from params, PHI check, manifest) with replayed replies."""
    corpus = tmp_path / "c"
    write_jsonl([Note("s1", 10040, 104852, "physician", "2155-01-03", "HR 88")], corpus / "notes.jsonl")
    replies = [json.dumps({"anchors": []}), json.dumps({"time_refs": []}),
               json.dumps({"entities": [{"line": 0, "text": "HR", "value": "88", "kind": "measurement",
                                         "item_keys": ["chartevents:220045"]}]}),
               json.dumps({"label": "consistent", "reason": "charted"})]
    params = load_params(None, corpus=str(corpus), db=str(synth_db), backend="scripted", run_id="s",
                         runs_dir=str(tmp_path / "runs"), segmentation=False, scope_filter=False,
                         extraction="patient_only", concurrency=1, progress=False,
                         backend_options={"replies": replies})
    run_dir = run_experiment(params)
    (pred,) = [json.loads(x) for x in (run_dir / "predictions.jsonl").read_text().splitlines()]
    assert (pred["entity"], pred["label"], pred["items"][0]["label"]) == ("HR", "consistent", "Heart Rate")
    assert pred["prompt_id"].startswith("verify_entity@")
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["usage"]["llm_calls"] == 4 and manifest["model"] == "scripted"
    assert {p.split("@")[0] for p in manifest["prompt_ids"]} == {"anchors_global", "anchors_relative",
                                                                 "extract_patient", "verify_entity"}
    assert manifest["cache"]["llm"]["response_cache"] == {"hits": 0, "misses": 4}
    usage = json.loads((run_dir / "usage.json").read_text())
    assert usage["by_stage"]["verification"]["llm_calls"] == 1


def test_embedded_default_when_no_inputs(tmp_path, monkeypatch, synth_db):
    import ehrlib.pipeline.runner as runner

    monkeypatch.setattr(runner, "EMBEDDED", {"patients": 6, "notes_per_type": 1, "seed": 0, "layout": "mimic3"})
    params = load_params(None, backend="offline", run_id="e", runs_dir=str(tmp_path), limit=1, progress=False)
    run_dir = run_experiment(params)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["data_source"]["source_kind"] == "synthetic"
    assert Path(manifest["params"]["db"]).parent == tmp_path / "embedded"
    assert [e["status"] for e in read_ledger(run_dir)] == ["ok"]
    with pytest.raises(ConfigError, match="give both"):
        run_experiment(load_params(None, db=str(synth_db), runs_dir=str(tmp_path)))
