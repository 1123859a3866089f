"""`ehrlib probe-schema` (Appendix L) against the fake OpenAI-compatible server: what is sent,
how answers are scored against the schema, and the PHI guard for corpus-drawn names."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from ehrlib.cli import main
from ehrlib.corpus.io import write_jsonl
from ehrlib.corpus.records import GoldEntity, ItemRef
from ehrlib.llm.fakes import FakeOpenAIServer, openai_text
from ehrlib.probe.schema_knowledge import (
    BUILTIN_ENTITIES,
    ProbeEntity,
    corpus_entities,
    corpus_provenance,
    probe_prompt,
    score_answer,
)

_ENV = ("EHRLIB_OPENAI_BASE_URL", "EHRLIB_OPENAI_API_KEY", "EHRLIB_OPENAI_MODEL", "EHRLIB_PHI_SAFE_HOSTS",
        "EHRLIB_I_ACCEPT_SENDING_CREDENTIALED_DATA_TO_PUBLIC_APIS")


@pytest.fixture
def server(monkeypatch):
    for name in _ENV:
        monkeypatch.delenv(name, raising=False)
    with FakeOpenAIServer() as srv:
        yield srv


def _ids(names):
    return {e.name: i for i, e in enumerate(BUILTIN_ENTITIES, 1) if e.name in names}


def test_scoring_against_the_schema():
    hr = ProbeEntity("heart rate", ("chartevents",))
    assert score_answer(hr, "CHARTEVENTS", ["ITEMID", "VALUENUM"]).column_correct
    # MIMIC-IV physical names, schema-qualified and quoted, map to the logical table
    a = score_answer(hr, '"mimiciv_icu"."chartevents"', ["stay_id", "chartevents.valuenum"])
    assert a.table_correct and a.column_valid == 1.0 and a.column_correct
    a = score_answer(hr, "labevents", ["itemid", "valuenum"])
    assert not a.table_correct and not a.column_correct and a.column_valid == 1.0
    a = score_answer(hr, "chartevents", ["itemid", "heart_rate"])
    assert a.table_correct and a.column_valid == 0.5 and not a.column_correct
    a = score_answer(hr, "chartevents", ["charttime"])  # exists, but identifies nothing and holds no value
    assert a.column_valid == 1.0 and not a.column_correct
    a = score_answer(ProbeEntity("furosemide", ("prescriptions",)), "PRESCRIPTIONS", ["drug", "dose_val_rx"])
    assert a.column_correct
    a = score_answer(hr, "vitals", ["hr"])
    assert not a.table_correct and a.column_valid == 0.0


def test_probe_sends_names_only_and_scores_known_answers(server, tmp_path, capsys):
    ids = _ids({"heart rate", "blood pressure", "serum potassium", "creatinine", "furosemide", "blood culture"})
    answers = [{"id": ids["heart rate"], "table": "CHARTEVENTS", "columns": ["ITEMID", "VALUENUM"]},
               {"id": ids["blood pressure"], "table": "mimiciv_icu.chartevents", "columns": ["stay_id", "valuenum"]},
               {"id": ids["serum potassium"], "table": "labevents", "columns": ["itemid", "bogus"]},
               {"id": ids["creatinine"], "table": "chartevents", "columns": ["itemid", "valuenum"]},
               {"id": ids["furosemide"], "table": "prescriptions", "columns": ["drug", "dose_val_rx"]},
               {"id": ids["blood culture"], "table": "microbiologyevents", "columns": ["charttime"]}]
    server.add(openai_text(json.dumps({"answers": answers})))
    out = tmp_path / "probe"
    argv = ["probe-schema", "--backend", "llamacpp", "--model", "tiny", "--base-url", server.url + "/v1",
            "--out", str(out)]
    assert main(argv) == 0
    assert server.request_count == 1
    body = server.requests[0].body
    assert "tools" not in body and body["response_format"]["type"] in ("json_schema", "json_object")
    prompt = body["messages"][-1]["content"]
    assert all(f"{i}: {e.name}" in prompt for i, e in enumerate(BUILTIN_ENTITIES, 1))
    summary = pd.read_csv(out / "summary.csv").iloc[0]
    n = len(BUILTIN_ENTITIES)
    assert summary["n_entities"] == n and summary["n_unanswered"] == n - 6
    assert summary["table_accuracy"] == pytest.approx(5 / n)    # all but creatinine
    assert summary["column_accuracy"] == pytest.approx(3 / n)   # heart rate, blood pressure, furosemide
    assert summary["column_validity"] == pytest.approx(5.5 / n)
    rows = pd.read_csv(out / "answers.csv", keep_default_na=False).set_index("entity")
    assert rows.loc["lactate", "problem"] == "no answer for this entity"
    by_table = pd.read_csv(out / "by_table.csv").set_index("gold_table")
    assert by_table.loc["labevents", "n"] == 5 and by_table.loc["labevents", "table_accuracy"] == pytest.approx(0.2)
    meta = json.loads((out / "probe.json").read_text())
    assert meta["source_kind"] == "synthetic" and meta["prompt_id"].startswith("schema_probe@")
    assert "table_accuracy" in capsys.readouterr().out
    assert main(argv) == 0 and server.request_count == 1   # the rerun is answered from the cache


def test_a_malformed_reply_is_asked_again_once_then_recorded(server, tmp_path):
    server.add(openai_text("I think chartevents."), openai_text("still no JSON"))
    out = tmp_path / "p"
    assert main(["probe-schema", "--backend", "llamacpp", "--model", "tiny", "--base-url", server.url + "/v1",
                 "--out", str(out), "--batch", "100"]) == 0
    assert server.request_count == 2
    rows = pd.read_csv(out / "answers.csv", keep_default_na=False)
    assert rows["problem"].str.startswith("no usable reply").all() and not rows["table_correct"].any()


def _corpus(tmp_path, manifest=None):
    corpus = tmp_path / "corpus"
    gold = [GoldEntity("n1", "n1:e0", 0, "K", "inconsistent", value="5.9 secret-value",
                       items=(ItemRef("labevents", "Potassium", 50971),)),
            GoldEntity("n2", "n2:e0", 3, "k", "consistent", items=(ItemRef("chartevents", "Potassium", 227442),)),
            GoldEntity("n1", "n1:e1", 1, "HR", "consistent", items=(ItemRef("chartevents", "Heart Rate", 220045),)),
            GoldEntity("n1", "n1:e2", 2, "sepsis", "consistent", items=(ItemRef("d_icd_diagnoses", "Sepsis"),)),
            GoldEntity("n1", "n1:e3", 4, "x" * 200, "consistent", items=(ItemRef("chartevents", "X"),))]
    write_jsonl(gold, corpus / "gold.jsonl")
    if manifest is not None:
        (corpus / "manifest.json").write_text(json.dumps(manifest))
    return corpus


def test_corpus_entities_merge_spellings_and_keep_event_tables(tmp_path):
    corpus = _corpus(tmp_path)
    entities = corpus_entities(corpus)
    assert entities == [ProbeEntity("HR", ("chartevents",)), ProbeEntity("K", ("chartevents", "labevents"))]
    assert "secret-value" not in probe_prompt(entities)
    assert corpus_entities(corpus, limit=1, seed=3) == corpus_entities(corpus, limit=1, seed=3)
    assert len(corpus_entities(corpus, limit=1)) == 1
    assert corpus_provenance(corpus) == "credentialed"            # declares nothing: fail closed
    assert corpus_provenance(_corpus(tmp_path / "o", {"source_kind": "synthetic"})) == "synthetic"


def test_credentialed_names_never_reach_a_public_endpoint(server, tmp_path, capsys):
    corpus, out = _corpus(tmp_path), tmp_path / "probe"
    assert main(["probe-schema", "--backend", "vllm", "--model", "m", "--base-url", "http://203.0.113.5:8000/v1",
                 "--corpus", str(corpus), "--out", str(out)]) == 2
    assert "refusing to send" in capsys.readouterr().err and not out.exists()
    # the local server is a machine-local endpoint: the same names may go there
    server.add(openai_text(json.dumps({"answers": [{"id": 1, "table": "chartevents", "columns": ["valuenum"]},
                                                   {"id": 2, "table": "labevents", "columns": ["value"]}]})))
    assert main(["probe-schema", "--backend", "llamacpp", "--model", "m", "--base-url", server.url + "/v1",
                 "--corpus", str(corpus), "--out", str(out)]) == 0
    prompt = server.requests[0].body["messages"][-1]["content"]
    assert "1: HR" in prompt and "2: K" in prompt and "5.9" not in prompt
    assert pd.read_csv(out / "summary.csv")["table_accuracy"].iloc[0] == 1.0


def test_bad_invocations_are_one_line_errors(tmp_path, capsys):
    assert main(["probe-schema", "--backend", "llamacpp"]) == 2
    assert "needs a backend and a model" in capsys.readouterr().err
    assert main(["probe-schema", "--backend", "llamacpp", "--model", "m", "--corpus", str(tmp_path)]) == 2
    assert "no gold.jsonl" in capsys.readouterr().err


@pytest.mark.slow
def test_notebook_09_skips_the_probe_without_a_backbone_and_runs_it_with_one(server, tmp_path):
    from test_experiments_ehrcon import _execute  # the same papermill run of notebook 09 (tests/ is on the path)

    assert "Schema probe skipped: no LLM backbone configured" in _execute(tmp_path / "skip")
    params = tmp_path / "backbone.yaml"
    params.write_text(f"llm:\n  backend: llamacpp\n  model: tiny\n  base_url: {server.url}/v1\n")
    server.add(openai_text(json.dumps({"answers": [{"id": 1, "table": "chartevents", "columns": ["valuenum"]}]})))
    shown = _execute(tmp_path / "run", probe_params=str(params))
    assert "Schema probe skipped" not in shown and "'table_accuracy': 0.0555" in shown   # 1 of 18
    assert server.request_count == 1
    assert (tmp_path / "run" / "runs" / "nb09-schema-probe" / "by_table.csv").exists()
