"""Hostile failures: malformed replies, failed stages, tools that all fail, corpora of unknown
provenance, dead or unauthenticated endpoints, a killed Ray driver.

Each case is either prevented (nothing bad cached, sent or left running) or reported in one
line and recorded in the run folder; never caught and hidden. The count of cases per
category is printed.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
import yaml
from test_llm_replies_hostile import server  # noqa: F401  (a fixture: the strict fake OpenAI server)
from test_pipeline import HADM, NOTE_TEXT, SUBJECT, RuleBackend, _note_day, _reply, _run, db  # noqa: F401

from ehrlib.cli import main
from ehrlib.errors import EndpointUnreachable, PHIError
from ehrlib.llm import Client, GenerationConfig, LLMCallError, LLMResponse, ToolCall, make_client, user
from ehrlib.llm.fakes import FakeOpenAIServer, openai_error, openai_text
from ehrlib.llm.replies import generate_json
from ehrlib.pipeline.attempts import current_lines, note_outcomes
from ehrlib.pipeline.llm import build_llm_stages
from ehrlib.pipeline.params import RunParams
from ehrlib.pipeline.rundir import read_ledger, summarize_ledger
from ehrlib.pipeline.runner import run_experiment

COUNTS: dict[str, Counter] = {}
SCHEMA = {"type": "object", "properties": {"label": {"type": "string"}}, "required": ["label"]}


def _count(category: str, kind: str) -> None:
    COUNTS.setdefault(category, Counter())[kind] += 1


def _report(capsys, category: str) -> None:
    with capsys.disabled():
        print(f"\n[hostile failures] {category}: {sum(COUNTS[category].values())} cases, {dict(COUNTS[category])}")


def _one_line(err: str) -> bool:
    lines = [x for x in err.strip().splitlines() if x.startswith("error:")]
    return "Traceback" not in err and len(lines) == 1


def _client(srv_url: str, **kw) -> Client:
    return make_client("openai", **{"model": "m", "base_url": srv_url + "/v1", "timeout_s": 5, "retry_initial_s": 0.01,
                                    "retry_jitter_s": 0.0, "max_retries": 1, **kw})


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]   # closed when the block ends: connections are refused


# --- 1. a malformed or failed reply is never cached ----------------------------------------

def test_malformed_reply_is_not_cached_and_a_rerun_asks_again(server, tmp_path, capsys):
    cache = str(tmp_path / "c.sqlite")
    server.add(openai_text("no json here"), openai_text("still none"))
    res = generate_json_sync(_client(server.url, cache=cache), SCHEMA)
    assert not res.ok and res.failure_kind == "malformed"
    _count("response cache", "malformed not cached")
    server.add(openai_text('{"label": "fixed"}'))           # the server is fixed
    res = generate_json_sync(_client(server.url, cache=cache), SCHEMA)
    assert res.ok and res.value == {"label": "fixed"} and server.request_count == 3
    again = _client(server.url, cache=cache)
    assert generate_json_sync(again, SCHEMA).value == {"label": "fixed"}
    assert server.request_count == 3 and again.cache.hits == 1   # the good reply is cached
    _count("response cache", "good reply cached")
    _report(capsys, "response cache")


def test_a_bad_reply_stored_by_an_older_version_is_not_replayed(server, tmp_path, capsys):
    cache = str(tmp_path / "c.sqlite")
    old = _client(server.url, cache=cache)
    server.add(openai_text("not json"))
    # what the old client did: store whatever came back
    old.generate_sync([user("q")], config=old.config.replace(response_schema=SCHEMA))
    assert len(old.cache) == 1
    server.add(openai_text('{"label": "ok"}'))
    new = _client(server.url, cache=cache)
    assert generate_json_sync(new, SCHEMA).value == {"label": "ok"}
    assert new.stale_cache_hits == 1 and server.request_count == 2
    _count("response cache", "poisoned entry ignored")
    _report(capsys, "response cache")


def test_truncated_and_unparsed_judge_replies_are_not_cached(server, tmp_path, capsys):
    from ehrlib.judge.llm_judge import _verdict_problem

    cache = str(tmp_path / "c.sqlite")
    server.add(openai_text("cut", finish_reason="length"), openai_text("cut", finish_reason="length"))
    with pytest.raises(LLMCallError, match="token limit"):
        _client(server.url, cache=cache, max_tokens=8).generate_sync([user("q")])
    assert len(_client(server.url, cache=cache).cache) == 0
    _count("response cache", "truncated not cached")
    assert _verdict_problem(LLMResponse(text="I think it matches")) is not None
    assert _verdict_problem(LLMResponse(text="Result: correct\nMatch: P1")) is None
    _count("response cache", "unparsed judge verdict not cached")
    _report(capsys, "response cache")


def generate_json_sync(client, schema):
    from ehrlib.llm import run_sync

    return run_sync(generate_json(client, [user("q")], schema=schema))


# --- 2. a verdict after tools that all failed is unverified ---------------------------------

def _tool_then(answer: dict, tool: str):
    def verify(messages):
        if not any(m.role == "tool" for m in messages):
            return LLMResponse(text="", tool_calls=(ToolCall("c1", tool, {"item": "x"}),))
        return _reply(answer)
    return verify


def test_consistent_after_all_tool_calls_failed_is_unverified(db, capsys):
    res = _run(db, RuleBackend({"verify": _tool_then({"label": "consistent", "reason": "fine"}, "No_Such_Tool")}))
    preds = list(res.predictions)
    assert preds and all(p.label == "unverified" for p in preds)
    assert all(p.failure.startswith("tools_failed: all 1 tool calls") for p in preds)
    assert all(p.tool_calls and p.tool_calls[0].error for p in preds)
    _count("tool failures", "all failed -> unverified")
    # control: the same answer after a tool call that worked stays a verdict
    base = RuleBackend()
    res = _run(db, RuleBackend({"verify": lambda m: base.verify(m)}))
    assert any(p.label == "consistent" for p in res.predictions)
    _count("tool failures", "a working call keeps the verdict")
    _report(capsys, "tool failures")


# --- 3. failed notes are recorded as failed; --retry-failed reruns only them -----------------

@pytest.fixture
def corpus(db, tmp_path):
    folder = tmp_path / "corpus"
    folder.mkdir()
    day = _note_day(db)
    notes = [{"note_id": "n-good", "subject_id": SUBJECT, "hadm_id": HADM, "note_type": "physician",
              "chartdate": day, "text": NOTE_TEXT},
             {"note_id": "n-broken", "subject_id": SUBJECT, "hadm_id": HADM, "note_type": "physician",
              "chartdate": day, "text": NOTE_TEXT.replace("hypotension", "hypotension BROKEN")}]
    (folder / "notes.jsonl").write_text("".join(json.dumps(n) + "\n" for n in notes), encoding="utf-8")
    (folder / "manifest.json").write_text(json.dumps({"source_kind": "synthetic"}), encoding="utf-8")
    return folder


def _stages(backend, params):
    return build_llm_stages("inspector", params, Client(backend, GenerationConfig(model="rules-test")),
                            backend="rules")


def test_a_failed_stage_makes_a_failed_note_and_retry_failed_reruns_only_it(corpus, synth_db, tmp_path, capsys,
                                                                           monkeypatch):
    broken = {"on": True}
    base = RuleBackend()

    def extract_patient(messages):
        if broken["on"] and "BROKEN" in messages[-1].text:
            raise LLMCallError("http://127.0.0.1:9/v1 HTTP 400: the server refused", status=400)
        return base.extract_patient(messages)

    backend = RuleBackend({"extract_patient": extract_patient})
    params = RunParams(corpus=str(corpus), db=str(synth_db), runs_dir=str(tmp_path / "runs"), run_id="r",
                       backend="scripted", progress=False)
    run_dir = run_experiment(params, stages=_stages(backend, params))
    outcomes = note_outcomes(run_dir)
    assert outcomes["n-good"]["status"] == "ok" and "failure" not in outcomes["n-good"]
    bad = outcomes["n-broken"]
    assert bad["status"] == "failed" and bad["failed_stages"] == ["patient_extraction"]
    assert bad["failure"].startswith("patient_extraction: call_error:") and "HTTP 400" in bad["failure"]
    _count("failed notes", "stage failure -> failed note with reason")
    # the report's per-note table says so too
    from ehrlib.judge.evaluate import load_run
    from ehrlib.report.build import notes_summary

    table = notes_summary(load_run(run_dir)).set_index("note_id")
    assert table.loc["n-broken", "status"] == "failed" and "HTTP 400" in table.loc["n-broken", "failure"]
    assert table.loc["n-good", "status"] == "ok"
    _count("failed notes", "findings table shows the failure")
    # the run's summary says so and exits 1, naming the way to rerun it
    from ehrlib.pipeline import cli as run_cli

    monkeypatch.setattr("ehrlib.pipeline.runner.run_experiment", lambda p, **_: run_dir)
    assert run_cli._run_one(params) == (1, run_dir)
    err = capsys.readouterr().err
    assert "1 note(s) failed" in err and "n-broken: patient_extraction: call_error" in err
    assert "--run-id r --retry-failed" in err
    monkeypatch.undo()
    _count("failed notes", "run summary names the failure and --retry-failed")
    n_good = sum(p.note_id == "n-good" for p in load_run(run_dir).predictions)

    # a plain resume keeps the failed note; --retry-failed reruns it alone once the server is fixed
    broken["on"] = False
    backend.calls.clear()
    run_experiment(params, stages=_stages(backend, params))
    assert backend.calls == [] and len(read_ledger(run_dir)) == 2
    run_experiment(params, stages=_stages(backend, params), retry_failed=True)
    ledger = read_ledger(run_dir)
    assert Counter(e["note_id"] for e in ledger) == {"n-good": 1, "n-broken": 2}
    assert ledger[-1]["note_id"] == "n-broken"
    assert note_outcomes(run_dir)["n-broken"]["status"] == "ok"
    assert backend.calls.count("segmentation") == 1     # one note was run again
    preds = load_run(run_dir).predictions
    assert sum(p.note_id == "n-good" for p in preds) == n_good   # kept, not rerun
    n_broken = sum(p.note_id == "n-broken" for p in preds)
    assert n_broken == n_good          # the same note text: the same findings, once each
    assert sum(current_lines(run_dir, "predictions.jsonl")) == len(preds)
    from ehrlib.analysis.traces import read_tool_calls

    calls = read_tool_calls(run_dir)
    assert (calls["note_id"] == "n-good").sum() == (calls["note_id"] == "n-broken").sum() > 0
    totals = summarize_ledger(ledger)["totals"]
    assert totals["notes_ok"] == 2 and totals["notes_failed"] == 0 and totals["predictions"] == len(preds)
    from ehrlib.viz.run_records import read_note_records

    rerun = read_note_records(run_dir)["n-broken"]   # the viewer: its first attempt's failure is history
    assert rerun.status == "ok" and not rerun.stage_failures, rerun
    _count("failed notes", "retry-failed reruns only the failed note")
    _report(capsys, "failed notes")


def test_retry_failed_needs_an_existing_run(corpus, synth_db, tmp_path, capsys):
    code = main(["run", "--corpus", str(corpus), "--db", str(synth_db), "--runs-dir", str(tmp_path / "runs"),
                 "--run-id", "nothing-here", "--retry-failed", "--no-progress"])
    assert code == 2 and _one_line(capsys.readouterr().err)
    code = main(["run", "--corpus", str(corpus), "--db", str(synth_db), "--retry-failed", "--no-progress"])
    assert code == 2 and _one_line(capsys.readouterr().err)
    _count("failed notes", "retry-failed without a run: one-line error")
    _report(capsys, "failed notes")


# --- 4. the PHI guard fails closed on a corpus of unknown provenance --------------------------

@pytest.mark.parametrize("manifest, allowed", [
    (None, False),                                       # no manifest (e.g. the EHRCon reader's output)
    ({"generator": "x"}, False),                         # a manifest that states no source_kind
    ({"source_kind": "credentialed"}, False),
    ({"source_kind": "open-demo"}, True),                # declared open: allowed
    ({"source_kind": "synthetic"}, True),
])
def test_corpus_without_provenance_is_credentialed(manifest, allowed, corpus, synth_db, tmp_path, capsys,
                                                   monkeypatch):
    import dataclasses

    monkeypatch.delenv("EHRLIB_I_ACCEPT_SENDING_CREDENTIALED_DATA_TO_PUBLIC_APIS", raising=False)
    monkeypatch.delenv("EHRLIB_PHI_SAFE_HOSTS", raising=False)
    (corpus / "manifest.json").unlink()
    if manifest is not None:
        (corpus / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    backend = RuleBackend()
    params = RunParams(corpus=str(corpus), db=str(synth_db), runs_dir=str(tmp_path / "runs"), run_id="phi",
                       backend="scripted", progress=False, limit=1)
    stages = dataclasses.replace(_stages(backend, params), endpoint="https://api.example.com/v1")
    if allowed:
        run_experiment(params, stages=stages)
        _count("PHI provenance", "declared open: sent")
    else:
        with pytest.raises(PHIError) as info:
            run_experiment(params, stages=stages)
        assert backend.calls == []
        hint = "declares no provenance" in str(info.value)
        assert hint == (manifest is None or "source_kind" not in manifest)
        assert "\n" not in str(info.value)
        _count("PHI provenance", "refused with how to declare it open" if hint else "refused (credentialed)")
    _report(capsys, "PHI provenance")


# --- 5. endpoints: credentials, ping, dead servers -------------------------------------------

@pytest.fixture
def no_google(monkeypatch, tmp_path):
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_CLOUD_PROJECT",
                 "GOOGLE_APPLICATION_CREDENTIALS", "GCE_METADATA_HOST"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "no-gcloud"))


@pytest.mark.parametrize("argv, needle", [
    (["--backend", "gemini"], "no API key"),
    (["--backend", "vertex"], "no Google Cloud project"),
    (["--backend", "vertex", "--model", "gemini-2.5-pro"], "no Google Cloud project"),
])
def test_gemini_without_credentials_fails_check_in_one_line(argv, needle, no_google, capsys):
    assert main(["llm", "check", *argv]) == 2
    err = capsys.readouterr().err
    assert _one_line(err) and needle in err
    _count("endpoints", "check: missing Google credentials")
    _report(capsys, "endpoints")


def test_vertex_without_credentials_fails_check_and_run_in_one_line(no_google, monkeypatch, corpus, synth_db,
                                                                    tmp_path, capsys):
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "p")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert main(["llm", "check", "--backend", "vertex"]) == 2
    err = capsys.readouterr().err
    assert _one_line(err) and "no Google credentials" in err
    code = main(["run", "--corpus", str(corpus), "--db", str(synth_db), "--backend", "vertex", "--runs-dir",
                 str(tmp_path / "runs"), "--no-progress"])
    err = capsys.readouterr().err
    # google-genai finds out at the first call: the run stops there, in one line, recorded
    assert code == 1 and _one_line(err) and "credentials were not found" in err
    manifest = json.loads(next((tmp_path / "runs").glob("*/manifest.json")).read_text())
    assert manifest["status"] == "failed" and "authentication failed" in manifest["error"]
    _count("endpoints", "run: missing Google credentials")
    _report(capsys, "endpoints")


def test_a_google_auth_failure_at_call_time_is_one_line_and_stops(monkeypatch, capsys):
    from google.auth.exceptions import RefreshError

    from ehrlib.llm.fakes import FakeGeminiServer

    with FakeGeminiServer() as srv:
        client = make_client("gemini", api_key="k", base_url=srv.url, timeout_s=5, max_retries=2,
                             retry_initial_s=0.01, retry_jitter_s=0.0)

        async def refuse(**_):
            raise RefreshError("invalid_grant: Token has been expired or revoked.")

        monkeypatch.setattr(client.backend_impl._client.aio.models, "generate_content", refuse)
        with pytest.raises(EndpointUnreachable, match="authentication failed.*expired or revoked"):
            client.generate_sync([user("q")])
        with pytest.raises(EndpointUnreachable):   # every later call: at once
            client.generate_sync([user("q2")])
        assert srv.request_count == 0
    _count("endpoints", "call-time auth failure stops")
    _report(capsys, "endpoints")


def test_ping_reports_reachability_authentication_and_model(server, capsys, monkeypatch):
    server.add(openai_text("OK"))
    assert main(["llm", "check", "--backend", "openai", "--model", "m", "--base-url", server.url + "/v1",
                 "--ping"]) == 0
    out = capsys.readouterr().out
    assert "reachable, authentication accepted" in out and "served:      fake (asked for m)" in out
    assert server.requests[0].body["messages"] == [{"role": "user", "content": "Reply with the single word OK."}]
    _count("endpoints", "ping: reachable")
    server.add(openai_error(401, "invalid api key"))
    assert main(["llm", "check", "--backend", "openai", "--model", "m", "--base-url", server.url + "/v1",
                 "--ping"]) == 1
    err = capsys.readouterr().err
    assert _one_line(err) and "authentication refused" in err and "401" in err
    _count("endpoints", "ping: authentication refused")
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    t0 = time.monotonic()
    assert main(["llm", "check", "--backend", "vllm", "--model", "m", "--base-url", url, "--ping"]) == 1
    err = capsys.readouterr().err
    assert _one_line(err) and "unreachable" in err and url in err and time.monotonic() - t0 < 10
    _count("endpoints", "ping: unreachable")
    _report(capsys, "endpoints")


def test_a_dead_endpoint_stops_the_run_within_seconds(corpus, synth_db, tmp_path, capsys):
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    params = tmp_path / "p.yaml"
    params.write_text(yaml.safe_dump({"method": "inspector", "backend": "openai", "corpus": str(corpus),
                                      "db": str(synth_db), "runs_dir": str(tmp_path / "runs"), "run_id": "dead",
                                      "llm": {"base_url": url, "model": "m"}}), encoding="utf-8")
    t0 = time.monotonic()
    code = main(["run", "--params", str(params), "--no-progress"])
    took = time.monotonic() - t0
    err = capsys.readouterr().err
    assert code == 1 and _one_line(err) and took < 10, (took, err)
    assert f"{url} is unreachable after 3 attempts" in err and "<url>" not in err and " N " not in err
    manifest = json.loads((tmp_path / "runs" / "dead" / "manifest.json").read_text())
    assert manifest["status"] == "failed" and "unreachable" in manifest["error"]
    assert read_ledger(tmp_path / "runs" / "dead") == []   # no note recorded as done: a rerun does them all
    _count("endpoints", f"dead endpoint: run stopped in {took:.0f} s")
    _report(capsys, "endpoints")


def test_a_refused_key_stops_the_run_and_a_server_that_answered_before_is_retried(server, capsys):
    server.add(openai_error(401, "invalid api key"))
    client = _client(server.url)
    with pytest.raises(EndpointUnreachable, match="authentication failed.*401"):
        client.generate_sync([user("q")])
    with pytest.raises(EndpointUnreachable):
        client.generate_sync([user("q")])
    assert server.request_count == 1
    _count("endpoints", "401 first: stop")
    # a server that answered before and then refuses connections is retried as a transient failure
    with FakeOpenAIServer([openai_text("one")]) as srv:
        ok = _client(srv.url, max_retries=2)
        assert ok.generate_sync([user("a")]).text == "one"
    with pytest.raises(LLMCallError) as info:
        ok.generate_sync([user("b")])
    assert info.value.kind == "unreachable" and info.value.attempts == 3 and ok.down is None
    _count("endpoints", "answered before: transient")
    _report(capsys, "endpoints")


def test_failure_reasons_show_the_real_url_and_attempts(server, capsys):
    server.add(openai_error(503, "busy"), openai_error(503, "busy"))
    client = _client(server.url)
    with pytest.raises(LLMCallError) as info:
        client.generate_sync([user("q")])
    assert "after 2 attempts" in str(info.value) and server.url in str(info.value)
    reason = client.ledger.failure_summary()["top_reasons"][0][0]
    assert server.url in reason and "2 attempts" in reason and "<url>" not in reason
    _count("endpoints", "failure reason keeps URL and attempts")
    _report(capsys, "endpoints")


# --- 6. a killed Ray driver leaves no Ray processes behind -----------------------------------

_DRIVER = """
import subprocess, sys, time
from ehrlib.pipeline.executors.reaper import Reaper
reaper = Reaper()
reaper.arm()
stubborn = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(120)"
kids = [subprocess.Popen([sys.executable, "-c", stubborn]),                          # ignores SIGTERM
        subprocess.Popen(["sh", "-c", "sleep 120 & sleep 120"], start_new_session=True)]  # own session + grandchild
print("ready", flush=True)
try:
    time.sleep(120)
finally:
    reaper.reap(lambda: print("shutdown", flush=True))
"""


def test_sigterm_reaps_what_the_driver_started_even_when_it_resists(tmp_path, capsys):
    psutil = pytest.importorskip("psutil", reason="psutil comes with the ray extra (pip install 'ehrlib[ray]')")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    driver = subprocess.Popen([sys.executable, "-c", _DRIVER], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    assert driver.stdout.readline().strip() == "ready"
    time.sleep(0.5)   # the grandchild has started
    kids = {p.pid for p in psutil.Process(driver.pid).children(recursive=True)}
    assert len(kids) >= 3
    t0 = time.monotonic()
    driver.send_signal(signal.SIGTERM)
    out, err = driver.communicate(timeout=30)
    from ehrlib.pipeline.executors.reaper import wait_gone

    assert wait_gone(kids, 2.0) == set() and "shutdown" in out and "Traceback" not in err
    assert driver.returncode == 128 + signal.SIGTERM and time.monotonic() - t0 < 10
    _count("ray shutdown", "SIGTERM: spawned processes reaped (SIGKILL for the stubborn)")
    _report(capsys, "ray shutdown")


def test_sigterm_to_a_ray_driver_leaves_no_ray_processes(corpus, synth_db, tmp_path, capsys):
    if subprocess.run([sys.executable, "-c", "import ray, psutil"], capture_output=True).returncode != 0:
        pytest.skip("ray is not installed (pip install 'ehrlib[ray]')")
    import psutil

    notes = (corpus / "notes.jsonl").read_text().splitlines()
    many = [json.dumps({**json.loads(notes[i % 2]), "note_id": f"n{i}"}) for i in range(40)]
    (corpus / "notes.jsonl").write_text("\n".join(many) + "\n")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    driver = subprocess.Popen([sys.executable, "-m", "ehrlib", "run", "--corpus", str(corpus), "--db", str(synth_db),
                               "--method", "surface", "--executor", "ray", "--ray-workers", "1", "--runs-dir",
                               str(tmp_path / "runs"), "--no-progress"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    proc = psutil.Process(driver.pid)
    seen: dict[int, str] = {}
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and driver.poll() is None:
        try:
            for child in proc.children(recursive=True):
                try:
                    seen[child.pid] = " ".join(child.cmdline())[:100]
                except psutil.Error:
                    continue
        except psutil.Error:
            break
        if any("ray::NoteActor" in c or "default_worker" in c for c in seen.values()):
            break
        time.sleep(0.2)
    stopped_mid_run = driver.poll() is None
    if stopped_mid_run:
        driver.send_signal(signal.SIGTERM)
    try:
        _, err = driver.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        driver.kill()
        raise
    from ehrlib.pipeline.executors.reaper import wait_gone

    left = wait_gone(set(seen), 5.0)
    survivors = {pid: seen[pid] for pid in left}
    for pid in left:            # do not leave them to the machine
        try:
            psutil.Process(pid).kill()
        except psutil.Error:
            pass
    assert seen, err.decode()[-500:]
    assert not survivors, survivors
    assert b"Traceback" not in err
    # on a loaded machine a local Ray node may miss its fixed 30 s start: a one-line error, nothing left
    started = b"could not start a local Ray instance" not in err
    _count("ray shutdown", ("SIGTERM mid-run" if stopped_mid_run else "run ended") + ": nothing left"
           + ("" if started else " (Ray did not start in time)"))
    _report(capsys, "ray shutdown")
