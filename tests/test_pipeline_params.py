"""Run parameters (params files, switches, overrides) and the `ehrlib run` command."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from ehrlib.cli import main
from ehrlib.corpus.io import write_jsonl
from ehrlib.corpus.records import Note
from ehrlib.errors import ConfigError
from ehrlib.pipeline import RunParams, load_params
from ehrlib.pipeline.offline.register import offline_stages
from ehrlib.pipeline.params import params_to_dict
from ehrlib.pipeline.stages import Stages, apply_switches, get_stages

REPO = Path(__file__).resolve().parents[1]


def test_file_values_and_overrides(tmp_path):
    f = tmp_path / "p.yaml"
    f.write_text("method: inspector\nsegmentation: off\ntools: [alignment, temporal]\nvalidation_cache: 3\n"
                 "work_dir: runs/x\nnote_id: n1\n")
    p = load_params(f, validation_cache=0, backend=None)
    assert (p.segmentation, p.tools, p.validation_cache, p.note_ids) == (False, ("alignment", "temporal"), 0,
                                                                         ("n1",))
    assert load_params(None, tools="profiling,criterion").tools == ("profiling", "criterion")
    assert params_to_dict(p)["tools"] == ["alignment", "temporal"]


@pytest.mark.parametrize("bad,match", [
    ({"segmentaton": "off"}, "did you mean 'segmentation'"),
    ({"validation_cache": 6}, "0..5"),
    ({"extraction": "everything"}, "extraction must be one of"),
    ({"tools": ["alignment", "magic"]}, "unknown tool categories"),
    ({"scope_filter": "maybe"}, "on|off"),
    ({"method": "oracle"}, "method must be one of"),
])
def test_bad_params_are_clear_errors(bad, match):
    with pytest.raises(ConfigError, match=match):
        load_params(None, **bad)


def test_notebook_params_files_load():
    for path in sorted((REPO / "params").glob("*.yaml")):
        load_params(path)  # notebook keys are ignored, run keys validated


def test_switches_apply_to_any_backend():
    def stage(*a, **k):
        raise AssertionError("not called")

    full = Stages("inspector", "x", stage, stage, stage, stage, stage, stage)
    off = apply_switches(full, RunParams(segmentation=False, scope_filter=False, extraction="patient_only"))
    assert off.segmenter is None and off.scope_filter is None and off.ontology_extractor is None
    assert off.patient_extractor is stage
    with pytest.raises(ConfigError, match="at least one extractor"):
        Stages("inspector", "x", stage, stage)
    with pytest.raises(ConfigError, match="unknown backend"):
        get_stages("inspector", "nonesuch", RunParams())


def test_ehrlib_run_command(tmp_path, synth_db, capsys):
    import duckdb

    con = duckdb.connect(str(synth_db), read_only=True)
    s, h, t = con.execute("SELECT SUBJECT_ID, HADM_ID, ADMITTIME FROM ADMISSIONS ORDER BY HADM_ID LIMIT 1").fetchone()
    con.close()
    write_jsonl([Note("cli1", s, h, "physician", str(t.date()), "Vitals: HR 88, BP 120/70\nWBC 9.1")],
                tmp_path / "c" / "notes.jsonl")
    code = main(["run", "--corpus", str(tmp_path / "c"), "--db", str(synth_db), "--backend", "offline",
                 "--run-id", "cli", "--runs-dir", str(tmp_path / "runs"), "--scope-filter", "off",
                 "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0 and "1 notes" in out
    manifest = json.loads((tmp_path / "runs" / "cli" / "manifest.json").read_text())
    assert manifest["params"]["scope_filter"] is False and manifest["status"] == "complete"
    # a synthetic database, but a corpus that declares no provenance: treated as credentialed
    assert manifest["data_source"]["source_kind"] == "credentialed" and manifest["git_sha"]
    assert set(manifest["stages"]) >= {"anchors", "patient_extraction", "verification"}
    assert main(["run", "--corpus", str(tmp_path / "missing"), "--db", str(synth_db)]) == 2


def test_offline_bundle_is_full_and_get_stages_applies_the_switches():
    params = RunParams(segmentation=False, scope_filter=False, extraction="ontology_only")
    full = offline_stages("inspector", params)  # the backend ignores the switches ...
    assert full.segmenter and full.scope_filter and full.patient_extractor and full.ontology_extractor
    got = get_stages("inspector", "offline", params)  # ... get_stages applies them, once
    assert got.segmenter is None and got.scope_filter is None and got.patient_extractor is None
    assert got.ontology_extractor is full.ontology_extractor
