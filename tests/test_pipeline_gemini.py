"""The LLM verifier through the real google-genai client against a local Gemini wire server."""
from __future__ import annotations

import json

import pytest
from llm_wire_kit import hr_case

from ehrlib.corpus.records import RowRef
from ehrlib.db.connect import connect
from ehrlib.llm import make_client
from ehrlib.llm.fakes import FakeGeminiServer, gemini_function_calls, gemini_text
from ehrlib.pipeline.context import note_context
from ehrlib.pipeline.llm import LLMCaller, LLMVerifier
from ehrlib.pipeline.stages import StageEnv

_ENV = ("GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_CLOUD_PROJECT",
        "GOOGLE_CLOUD_LOCATION", "EHRLIB_PHI_SAFE_HOSTS")


@pytest.fixture
def clean_env(monkeypatch):
    for name in _ENV:
        monkeypatch.delenv(name, raising=False)


def test_verifier_tool_loop_over_gemini_wire(clean_env, synth_db):
    case = hr_case(synth_db, "g1")
    con, tools, note, entity, args, rows = case.con, case.tools, case.note, case.entity, case.args, case.rows
    ctx = note_context(con.cursor(), note)
    with FakeGeminiServer() as srv:
        srv.add(gemini_function_calls(("Get_Item_Status_History", args), input_tokens=900, output_tokens=20),
                gemini_text(json.dumps({"label": "consistent", "reason": "HR charted",
                                        "evidence_row_ids": [{"table": "chartevents", "row_id": rows[0]["row_id"]}]}),
                            input_tokens=1500, output_tokens=40))
        client = make_client("gemini", api_key="test-key", base_url=srv.url, timeout_s=5, max_retries=0)
        verdict = LLMVerifier(LLMCaller(client))(ctx, StageEnv(toolset=tools), entity, ())
        requests = [r.body for r in srv.requests]
    con.close()
    assert verdict.failure is None and verdict.label == "consistent"
    assert verdict.evidence_row_ids == (RowRef("chartevents", rows[0]["row_id"]),)
    assert [c.tool for c in verdict.tool_calls] == ["Get_Item_Status_History"] and verdict.tool_calls[0].n_rows > 0
    assert verdict.usage.calls == 2 and verdict.usage.input_tokens == 2400
    declared = {f["name"] for t in requests[0]["tools"] for f in t["functionDeclarations"]}
    assert {"Lexical_Search", "Get_Item_Value_History", "Get_Clinical_Criterion"} <= declared
    assert "You check whether a statement" in json.dumps(requests[0]["systemInstruction"])
    assert verdict.prompt_id.startswith("verify_entity@")


def test_llm_semantic_search_plugs_into_the_tools(synth_db):
    """The paper's LLM Semantic_Search: the model re-ranks the tools' candidates."""
    from ehrlib.llm import Client, GenerationConfig, LLMResponse
    from ehrlib.pipeline.llm import LLMSemanticRanker
    from ehrlib.tools import PatientContext, make_toolset

    class Picker:
        name, endpoint = "picker", "http://127.0.0.1:9/v1"
        seen: list[str] = []

        def describe(self):
            return {}

        async def send(self, messages, tools, config, timeout_s):
            text = messages[-1].text
            self.seen.append(text)
            keys = [line.split(" | ")[0] for line in text.splitlines() if "| Level of Consciousness |" in line]
            return LLMResponse(text=json.dumps({"ranked": [{"key": k, "score": 0.99} for k in keys]
                                                + [{"key": "chartevents:0", "score": 1.0}]}))

    con = connect(synth_db)
    try:
        s, h, a, d = con.execute("SELECT SUBJECT_ID, HADM_ID, ADMITTIME, DISCHTIME FROM ADMISSIONS LIMIT 1").fetchone()
        ranker = LLMSemanticRanker(LLMCaller(Client(Picker(), GenerationConfig(model="picker"))))
        result = make_toolset(con.cursor(), PatientContext(s, h, a, d), semantic_ranker=ranker).call(
            "Semantic_Search", {"query": "alert"})
    finally:
        con.close()
    assert 'Term: "alert"' in Picker.seen[0]
    top = result.rows[0]
    assert top["label"] == "Level of Consciousness" and top["matched"] == "llm"
    assert all(r["key"] != "chartevents:0" for r in result.rows)  # keys the tools never offered are ignored
