"""Shared pytest fixtures.

Fixtures that build databases are session-scoped: the MIMIC demo and the synthetic
hospital are built once per test session into a temporary directory. Each section
below belongs to the module it serves; append new fixtures in their own section.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


def shared_data_dir(name: str, env_var: str) -> Path | None:
    """The real MIMIC demo folder `name`, from `env_var` or ../shared/data next to the repo."""
    env = os.environ.get(env_var)
    candidates = [Path(env)] if env else []
    candidates.append(REPO_ROOT.parent / "shared" / "data" / name)
    for path in candidates:
        if path.is_dir():
            return path
    return None


@pytest.fixture(scope="session")
def mimic3_demo_dir() -> Path:
    path = shared_data_dir("mimic-iii-demo", "EHRLIB_MIMIC3_DEMO")
    if path is None:
        pytest.skip("MIMIC-III demo not found (set EHRLIB_MIMIC3_DEMO or run `ehrlib download mimic-iii-demo`)")
    return path


@pytest.fixture(scope="session")
def mimic4_demo_dir() -> Path:
    path = shared_data_dir("mimic-iv-demo", "EHRLIB_MIMIC4_DEMO")
    if path is None:
        pytest.skip("MIMIC-IV demo not found (set EHRLIB_MIMIC4_DEMO or run `ehrlib download mimic-iv-demo`)")
    return path


# --- ehrlib.db: the real demos built once per session --------------------------------


@pytest.fixture(scope="session")
def mimic3_demo_db(mimic3_demo_dir, tmp_path_factory) -> Path:
    """Path of the MIMIC-III demo built with `ehrlib build-db` (read it via ehrlib.db.connect)."""
    from ehrlib.db.build import build_db

    return build_db(mimic3_demo_dir, tmp_path_factory.mktemp("mimic3_demo") / "mimic3_demo.duckdb",
                    progress=False).path


@pytest.fixture(scope="session")
def mimic4_demo_db(mimic4_demo_dir, tmp_path_factory) -> Path:
    """Path of the MIMIC-IV demo built with `ehrlib build-db` (icu/chartevents is missing)."""
    from ehrlib.db.build import build_db

    return build_db(mimic4_demo_dir, tmp_path_factory.mktemp("mimic4_demo") / "mimic4_demo.duckdb",
                    progress=False).path


@pytest.fixture
def offline_note(mimic3_demo_db):
    """Run one physician note of demo admission 41976/176016 through the offline inspector;
    returns the NoteResult (``note_lines(run_id, result)`` gives what the run writes)."""
    import duckdb

    from ehrlib.corpus.records import Note
    from ehrlib.pipeline.context import note_context
    from ehrlib.pipeline.inspector import inspect_note
    from ehrlib.pipeline.params import RunParams
    from ehrlib.pipeline.stages import StageEnv, get_stages
    from ehrlib.tools import make_toolset
    from ehrlib.tools.context import PatientContext

    def run(note_id: str, text: str, chartdate: str = "2199-02-01"):
        with duckdb.connect(str(mimic3_demo_db), read_only=True) as con:
            note = Note(note_id, 41976, 176016, "physician", chartdate, text)
            ctx = note_context(con, note, flavor="mimic3")
            tools = make_toolset(con, PatientContext(41976, 176016, ctx.admittime, ctx.dischtime, chartdate, ctx.sex))
            stages = get_stages("inspector", "offline", RunParams(method="inspector"))
            return inspect_note(ctx, stages, StageEnv(con=con, toolset=tools), cache_size=5)

    return run


# --- ehrlib.judge / analysis / viz / report: a tiny hand-built run --------------------


@pytest.fixture
def tiny_run(tmp_path) -> tuple[Path, Path]:
    """(run_dir, corpus_dir): 2 notes, 5 gold entities, 5 predictions with tool calls.

    Hand-built so judge/analysis/viz tests know every right answer without a pipeline.
    """
    from ehrlib.corpus.io import write_json, write_jsonl
    from ehrlib.corpus.records import (GoldEntity, Inconsistency, ItemRef, Note, Prediction, RowRef,
                                       ToolCallRecord, to_dict)

    wbc, hr = ItemRef("labevents", "White Blood Cells", 51301), ItemRef("chartevents", "Heart Rate", 220045)
    notes = [Note("n1", 1, 11, "discharge_summary", "2150-01-05", "WBC 20 on admission\nHR 130s\nafebrile"),
             Note("n2", 2, 22, "nursing", "2150-02-01", "HR 80\nlasix 40 mg IV")]
    gold = [GoldEntity("n1", "g1", 0, "WBC", "consistent", (wbc,), check_path=("Lexical_Search",
                       "Get_Item_Value_History")),
            GoldEntity("n1", "g2", 1, "HR", "inconsistent", (hr,), inconsistency=Inconsistency(
                "column", ("valuenum",), "value"), reasoning="commonsense",
                check_path=("Lexical_Search", "Get_Item_Value_History")),
            GoldEntity("n1", "g3", 2, "afebrile", "consistent", reasoning="medical",
                       check_path=("Semantic_Search", "Get_Item_Value_History")),
            GoldEntity("n2", "g4", 0, "HR", "consistent", (hr,), check_path=("Get_Item_Value_History",)),
            GoldEntity("n2", "g5", 1, "lasix", "inconsistent", inconsistency=Inconsistency("missing"),
                       check_path=("Lexical_Search", "Get_Item_Status_History"))]

    def calls(*tools):
        return tuple(ToolCallRecord(t, {"q": i}, n_rows=i, ms=1.0, step=i) for i, t in enumerate(tools))

    preds = [Prediction("r1", "n1", 0, "WBC 20", "consistent", (wbc,), evidence_row_ids=(RowRef("labevents", 1),),
                        tool_calls=calls("Lexical_Search", "Get_Item_Value_History")),
             Prediction("r1", "n1", 1, "HR", "consistent", (hr,), reason="HR 130 charted",
                        tool_calls=calls("Semantic_Search")),
             Prediction("r1", "n1", 2, "temperature", "consistent",
                        tool_calls=calls("Semantic_Search", "Lexical_Search", "Get_Item_Value_History")),
             Prediction("r1", "n2", 0, "HR", "consistent", (hr,), from_cache=True),
             Prediction("r1", "n2", 1, "furosemide", "inconsistent", inconsistency_type="missing",
                        tool_calls=calls("Lexical_Search", "Get_Item_Status_History"))]
    corpus = tmp_path / "corpus"
    write_jsonl(notes, corpus / "notes.jsonl")
    write_jsonl(gold, corpus / "gold.jsonl")
    run = tmp_path / "runs" / "r1"
    write_jsonl(preds, run / "predictions.jsonl")
    tool_lines = [{"note_id": p.note_id, "entity_id": f"e{i}", **to_dict(c)}
                  for i, p in enumerate(preds) for c in p.tool_calls]
    write_jsonl(tool_lines, run / "tool_calls.jsonl", run_id="r1")
    write_json({"run_id": "r1", "method": "inspector", "backend": "offline", "model": None,
                "params": {"corpus": str(corpus)}, "data_source": {"source_kind": "synthetic"}},
               run / "manifest.json")
    write_jsonl([{"note_id": "n1", "status": "ok"}, {"note_id": "n2", "status": "ok"}], run / "progress.jsonl")
    return run, corpus


# --- synthetic hospital (ehrlib.synth) -------------------------------------------------
# Default-size hospitals (40 patients, seed 0), built once per session; tests open them
# read-only. Names are relied on by the tools, notes and pipeline tests.


def _synth(tmp_path_factory, layout: str) -> Path:
    from ehrlib.synth import generate_hospital

    return generate_hospital(tmp_path_factory.mktemp(f"synth_{layout}") / f"synth_{layout}.duckdb", layout=layout)


@pytest.fixture(scope="session")
def synth_db(tmp_path_factory) -> Path:
    """The default synthetic hospital in the MIMIC-III layout."""
    return _synth(tmp_path_factory, "mimic3")


@pytest.fixture(scope="session")
def synth_db_mimic4(tmp_path_factory) -> Path:
    """The same hospital (seed 0) in the MIMIC-IV layout (hosp/icu schemas, emar)."""
    return _synth(tmp_path_factory, "mimic4")


@pytest.fixture(scope="session")
def synth_db_perturbed(tmp_path_factory) -> Path:
    """The same hospital (seed 0) in the perturbed schema of the paper's Table 15."""
    return _synth(tmp_path_factory, "perturbed")


# --- ehrlib.db.sandbox: a patient, a second patient and a canary file on disk -------

SANDBOX_CANARY = "EHRLIB-CANARY-7f3a9c"


@pytest.fixture(scope="module")
def sandbox_env(synth_db, tmp_path_factory):
    """(hardened connection, CheckEHR sandbox policy, patient, another patient, canary file)."""
    from ehrlib import schema
    from ehrlib.db.connect import connect
    from ehrlib.db.sandbox import policy_for

    tables = ("admissions", "icustays", *schema.EVENT_TABLES, *schema.DICTIONARY_TABLES)
    canary = tmp_path_factory.mktemp("canary") / "canary.csv"
    canary.write_text(f"secret\n{SANDBOX_CANARY}\n")
    con = connect(synth_db)
    subjects = [r[0] for r in con.execute(
        "SELECT SUBJECT_ID FROM CHARTEVENTS GROUP BY 1 ORDER BY count(*) DESC LIMIT 2").fetchall()]
    policy = policy_for(con, schema.MIMIC3, tables)
    yield con, policy, subjects[0], subjects[1], str(canary)
    con.close()
