"""ehrlib.Verifier: one note in memory, the same findings ``ehrlib run`` gives, warm state reused,
nothing written, one-line errors for bad input."""
from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from ehrlib.corpus.io import read_notes, read_predictions
from ehrlib.errors import ConfigError, DataError, EhrlibError
from ehrlib.findings import COLUMNS, SCHEMA_VERSION, Findings, finding_row


@pytest.fixture(scope="module")
def notes(synth_db, tmp_path_factory):
    """One synthetic note of each type (discharge summary, physician, nursing) with gold labels."""
    from ehrlib.synth.notes import write_corpus

    corpus = write_corpus(synth_db, tmp_path_factory.mktemp("api_corpus"), notes_per_type=1, progress=False)
    return corpus, {n.note_type: n for n in read_notes(corpus / "notes.jsonl")}


@pytest.fixture(scope="module")
def verifier(synth_db):
    from ehrlib import Verifier

    with Verifier(synth_db) as v:
        yield v


def _verify(v, note):
    return v.verify(note.text, hadm_id=note.hadm_id, note_type=note.note_type, chartdate=note.chartdate,
                    charttime=note.charttime, note_id=note.note_id)


@pytest.mark.parametrize("abstain_below", [None, 0.9])
def test_one_note_gives_what_a_run_gives_calibrated_and_abstaining(notes, synth_db, tmp_path, abstain_below):
    from ehrlib import Verifier
    from ehrlib.pipeline.params import load_params
    from ehrlib.pipeline.runner import run_experiment

    corpus, by_type = notes
    note = by_type["physician"]
    extra = {} if abstain_below is None else {"abstain_below": abstain_below}
    run_dir = run_experiment(load_params(None, corpus=str(corpus), db=str(synth_db), runs_dir=str(tmp_path),
                                         run_id="r", note_ids=[note.note_id], progress=False, **extra))
    ran = [dataclasses.replace(p, run_id="verifier") for p in read_predictions(run_dir / "predictions.jsonl")]
    with Verifier(synth_db, params=extra or None) as v:
        got = _verify(v, note)
    assert ran and [r for r in got] == [finding_row(p, note) for p in ran]
    # the bundled calibrator, as in a run: every verdict has a confidence (an undecided one has none)
    decided = [r for r in got if r.verdict != "unverified" or r.withheld_verdict is not None]
    assert decided and all(r.confidence is not None for r in decided), [r for r in decided if r.confidence is None]
    if abstain_below:
        withheld = [r for r in got if r.withheld_verdict is not None]
        assert withheld and all(r.verdict == "unverified" and r.confidence < abstain_below for r in withheld)


def test_verifying_writes_no_file_anywhere(notes, synth_db, tmp_path, monkeypatch):
    from ehrlib import Verifier

    cwd, home = tmp_path / "cwd", tmp_path / "home"
    cwd.mkdir(), home.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("EHRLIB_CACHE_DIR", "off")   # the documented switch for ehrlib's own caches
    db_folder = sorted(Path(synth_db).parent.iterdir())
    _, by_type = notes
    with Verifier(synth_db) as v:
        one = _verify(v, by_type["nursing"])
        many = v.verify_many([by_type["discharge_summary"], {"text": "HR 80", "hadm_id": by_type["nursing"].hadm_id,
                                                             "note_type": "nursing", "chartdate": "2150-01-01"}])
    assert len(one) and {r.note_id for r in many} <= {by_type["discharge_summary"].note_id, "note-2"}
    assert list(cwd.iterdir()) == [] and list(home.iterdir()) == []
    assert sorted(Path(synth_db).parent.iterdir()) == db_folder


def test_the_only_files_a_verifier_writes_are_ehrlibs_caches(notes, synth_db, tmp_path, monkeypatch):
    from ehrlib import Verifier
    from ehrlib.pipeline.offline import icd_versions

    cwd, home, cache = tmp_path / "cwd", tmp_path / "home", tmp_path / "cache"
    cwd.mkdir(), home.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("EHRLIB_CACHE_DIR", str(cache))
    icd_versions._crosswalk.cache_clear()   # built in this process: its cache entry is written now
    _, by_type = notes
    try:
        with Verifier(synth_db) as v:
            assert len(_verify(v, by_type["nursing"]))
    finally:
        icd_versions._crosswalk.cache_clear()
    assert list(cwd.iterdir()) == [] and list(home.iterdir()) == []
    assert all(p.is_relative_to(cache) for p in cache.rglob("*"))


def test_second_call_reuses_the_warm_state(notes, verifier):
    from ehrlib import schema
    from ehrlib.tools.lexical import lexical_index

    _, by_type = notes
    work = verifier._work
    first = _verify(verifier, by_type["physician"])
    ontology, profiler, stages, con = work.ontology, work.profiler, work.stages, work.con
    index = lexical_index(con, schema.schema_map(work.flavor))
    second = _verify(verifier, by_type["physician"])
    assert second.rows == first.rows
    assert verifier._work is work and work.con is con and work.ontology is ontology and ontology is not None
    assert work.profiler is profiler and work.stages is stages
    assert lexical_index(con, schema.schema_map(work.flavor)) is index


def test_frame_columns_jsonl_round_trip_and_html(notes, verifier, tmp_path):
    _, by_type = notes
    found = _verify(verifier, by_type["discharge_summary"])
    frame = found.to_frame()
    assert list(frame.columns) == list(COLUMNS) and len(frame) == len(found) > 0
    assert {"note_id", "line", "statement", "verdict", "confidence", "reason", "window", "evidence",
            "rule_id"} <= set(frame.columns)
    assert not {"label", "finding"} & set(frame.columns)       # one verdict column, no look-alikes
    assert set(frame["verdict"]) <= {"contradiction", "missing", "unverified", "consistent"}
    assert (frame["schema_version"] == SCHEMA_VERSION).all() and (frame["note_id"] == "note").sum() == 0
    assert isinstance(found[0], type(found.rows[0])) and list(found) == list(found.rows)
    with pytest.raises(dataclasses.FrozenInstanceError):
        found.rows = ()  # type: ignore[misc]
    path = found.to_jsonl(tmp_path / "f.jsonl")
    back = Findings.read_jsonl(path)
    assert back.rows == found.rows and back.to_frame().equals(frame)
    html = found._repr_html_()
    assert html.startswith('<div class="ehrlib-viewer"') and "<script" not in html
    for r in found.rows[:10]:
        assert r.statement.split()[0].replace("&", "&amp;").replace("<", "&lt;") in html
    for verdict in set(frame["verdict"]):
        assert f'data-verdict="{verdict}"' in html
    if (frame["deciding"] != "").any():                           # evidence rows read from the database
        assert 'class="ev deciding"' in html


def test_read_jsonl_refuses_another_schema_version(tmp_path):
    path = tmp_path / "f.jsonl"
    path.write_text('{"schema_version": "0", "note_id": "n"}\n')
    with pytest.raises(DataError, match="schema version '0'") as exc:
        Findings.read_jsonl(path)
    assert "\n" not in str(exc.value)


def _one_line(exc_type, fn, match):
    with pytest.raises(exc_type, match=match) as exc:
        fn()
    assert "\n" not in str(exc.value) and isinstance(exc.value, EhrlibError)


def test_bad_input_is_a_one_line_error(notes, verifier, synth_db, tmp_path):
    from ehrlib import Verifier

    _, by_type = notes
    n = by_type["physician"]
    good = {"hadm_id": n.hadm_id, "note_type": "physician", "chartdate": n.chartdate}
    _one_line(DataError, lambda: verifier.verify("HR 80", **{**good, "hadm_id": 1}), "hadm_id=1 is not in")
    _one_line(DataError, lambda: verifier.verify("  \n", **good), "note text is empty")
    _one_line(EhrlibError, lambda: verifier.verify("HR 80", **{**good, "note_type": "memo"}), "note_type")
    _one_line(EhrlibError, lambda: verifier.verify("HR 80", **{**good, "chartdate": "yesterday"}), "chartdate")
    _one_line(DataError, lambda: verifier.verify("HR 80", **good, subject_id=n.subject_id + 1), "belongs to subject")
    _one_line(ConfigError, lambda: verifier.verify("HR 80", hadm_id=n.hadm_id, note_type="nursing"), "chartdate")
    _one_line(DataError, lambda: Verifier(tmp_path / "none.duckdb"), "does not exist")
    damaged = tmp_path / "damaged.duckdb"
    damaged.write_bytes(Path(synth_db).read_bytes()[:4096] + b"\0" * 8192)
    _one_line(DataError, lambda: Verifier(damaged), "damaged database")
    _one_line(ConfigError, lambda: Verifier("embedded"), "runs_dir")
    _one_line(ConfigError, lambda: Verifier(synth_db, backend="ofline"), "did you mean 'offline'")
    closed = Verifier(synth_db)
    closed.close()
    _one_line(ConfigError, lambda: closed.verify("HR 80", **good), "closed")


def test_discharge_summary_is_dated_at_discharge_by_default(notes, verifier):
    _, by_type = notes
    ds = by_type["discharge_summary"]
    note = verifier.note("HR 80", hadm_id=ds.hadm_id, note_type="Discharge summary")
    assert note.note_type == "discharge_summary" and note.subject_id == ds.subject_id and note.chartdate


def test_import_ehrlib_stays_light_and_exports_the_api():
    code = ("import sys, ehrlib; heavy = [m for m in ('ehrlib.verifier', 'pandas', 'duckdb') if m in sys.modules]; "
            "print(heavy); from ehrlib import Verifier, Findings; import ehrlib.verifier as v; "
            "print(Verifier is v.Verifier and Findings.__module__ == 'ehrlib.findings')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[:2] == ["[]", "True"]


def test_readme_example_shows_what_it_prints(mimic3_demo_db):
    """The README's five lines, run on the MIMIC-III demo, print the table the README shows."""
    import re

    text = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## From Python"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1).strip()
    shown = re.search(r"```text\n(.*?)```", section, re.S).group(1).rstrip("\n")
    assert len(code.splitlines()) == 5
    *body, last = code.replace('"data/mimic3-demo.duckdb"', repr(str(mimic3_demo_db))).splitlines()
    namespace: dict = {}
    exec("\n".join(body), namespace)  # noqa: S102 - the README's own example
    try:
        assert eval(last, namespace).to_string(max_colwidth=58) == shown  # noqa: S307
    finally:
        namespace["v"].close()


def test_embedded_hospital_is_built_under_runs_dir_once(tmp_path, monkeypatch):
    from ehrlib import Verifier, verifier

    monkeypatch.setattr(verifier, "EMBEDDED", {**verifier.EMBEDDED, "patients": 3})
    with Verifier("embedded", runs_dir=tmp_path) as v:
        built = Path(v.params.db)
        assert built.parent == tmp_path / "embedded" and built.is_file()
        hadm = v._work.con.execute("SELECT min(HADM_ID) FROM ADMISSIONS").fetchone()[0]
        assert v.note("HR 80", hadm_id=hadm, note_type="discharge_summary").chartdate
    stamp = built.stat().st_mtime_ns
    with Verifier("embedded", runs_dir=tmp_path) as again:
        assert again.params.db == str(built) and built.stat().st_mtime_ns == stamp


def test_llm_backends_keep_no_response_cache_without_runs_dir(tmp_path):
    from ehrlib.verifier import _params

    assert _params("x.duckdb", "inspector", "openai", None, None).backend_options["llm"]["cache"] is None
    mine = _params("x.duckdb", "inspector", "openai", {"llm": {"cache": str(tmp_path / "c.sqlite")}}, None)
    assert mine.backend_options["llm"]["cache"] == str(tmp_path / "c.sqlite")   # a cache the caller asked for
    assert "cache" not in _params("x.duckdb", "inspector", "openai", None, tmp_path).backend_options.get("llm", {})
    assert _params("x.duckdb", "inspector", "offline", {"abstain_below": 0.7}, None).abstain_below == 0.7


def test_verify_many_keeps_note_order_and_names_unnamed_notes(notes, verifier):
    _, by_type = notes
    ordered = [by_type["nursing"], by_type["physician"]]
    found = verifier.verify_many([*ordered, {"text": "HR 80", "hadm_id": ordered[0].hadm_id, "note_type": "nursing",
                                             "chartdate": ordered[0].chartdate}])
    seen = list(dict.fromkeys(r.note_id for r in found))
    assert seen[:2] == [n.note_id for n in ordered] and set(seen) <= {*seen[:2], "note-3"}
    with pytest.raises(DataError, match="duplicate note_id"):
        verifier.verify_many([ordered[0], ordered[0]])


def test_verify_many_records_a_bad_note_and_goes_on(notes, verifier):
    _, by_type = notes
    n = by_type["physician"]
    good = {"hadm_id": n.hadm_id, "note_type": "physician", "chartdate": n.chartdate}
    found = verifier.verify_many([{"text": "HR 80", "hadm_id": n.hadm_id}, {**good, "text": "x", "when": 1},
                                  {**good, "text": "HR 80", "hadm_id": 1, "note_id": "lost"}, n])
    assert [i for i, _ in found.failures] == ["note-1", "note-2", "lost"]
    reasons = dict(found.failures)
    assert "missing key" in reasons["note-1"] and "unknown key" in reasons["note-2"]
    assert "hadm_id=1 is not in" in reasons["lost"] and all("\n" not in r for r in reasons.values())
    assert {r.note_id for r in found} == {n.note_id} and "3 note(s) failed" in repr(found)
    assert "not verified" in found._repr_html_() and "lost" in found._repr_html_()
