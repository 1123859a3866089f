"""A whole traced run on the perturbed MIMIC-III demo must not reveal original names."""
from __future__ import annotations

import functools
import json

import pytest

from ehrlib.analysis.leaks import leaked_in, leaked_names, original_names
from ehrlib.experiments.realdata import REAL_DATASETS, data_folder
from ehrlib.inputs import project_path


def test_original_names_hold_tables_and_renamed_columns_only():
    names = original_names()
    assert {"CHARTEVENTS", "LABEVENTS", "D_ITEMS"} <= names
    assert "SUBJECT_ID" not in names  # the perturbed schema keeps it: no leak


def test_leaked_names_reads_the_trace(tmp_path):
    rows = [{"tool": "Get_Item_Status_History", "args": {"item": "labevents:51301"}, "error": None},
            {"tool": "Search_Items", "args": {"query": "heart rate"}, "error": None}]
    (tmp_path / "tool_calls.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert leaked_names(tmp_path) == {"labevents": 1}


@pytest.mark.slow
def test_traced_run_on_the_perturbed_demo_reveals_no_original_name(tmp_path, monkeypatch):
    """Every tool output text (what a model reads), every tool description and every trace
    record of a whole offline run."""
    from ehrlib.db.build import build_db
    from ehrlib.pipeline.params import RunParams
    from ehrlib.pipeline.runner import run_experiment
    from ehrlib.tools import toolset

    outputs: list[str] = []
    wrap = toolset._wrap

    def capturing(fn, tracer, names=None, memo=None):
        call = wrap(fn, tracer, names, memo)

        @functools.wraps(call)
        def run(*args, **kwargs):
            result = call(*args, **kwargs)
            outputs.append(result.text)  # what a model reads; rows/summary are internal evidence
            return result
        return run

    monkeypatch.setattr(toolset, "_wrap", capturing)

    ds = REAL_DATASETS["mimic3_perturbed"]
    src = data_folder(ds)
    if src is None:
        pytest.skip("MIMIC-III demo data absent")
    db = tmp_path / "perturbed.duckdb"
    build_db(src, db, perturb=True, progress=False)
    params = RunParams(corpus=str(project_path("tests/fixtures") / ds.notes), db=str(db), method="inspector",
                       backend="offline", run_id="leak", runs_dir=str(tmp_path / "runs"), progress=False)
    run_dir = run_experiment(params)
    from ehrlib.tools.context import PatientContext
    with toolset.make_toolset(str(db), PatientContext(subject_id=10006, hadm_id=142345,
                                                      admittime="2164-10-23")) as tools:
        specs = tools.specs()
    assert outputs and (run_dir / "tool_calls.jsonl").stat().st_size > 0
    assert leaked_names(run_dir) == {}
    assert leaked_in(outputs) == {}
    assert leaked_in(spec.description + json.dumps(spec.parameters_json_schema) for spec in specs) == {}
