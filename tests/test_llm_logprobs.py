"""An LLM verdict's confidence from its own token log-probabilities (known answers, both wires)."""
from __future__ import annotations

import json
import math

import pytest
from llm_wire_kit import hr_case

from ehrlib.corpus.records import Prediction
from ehrlib.llm import GenerationConfig, make_client
from ehrlib.llm.cache import cache_key
from ehrlib.llm.fakes import (
    FakeGeminiServer,
    FakeOpenAIServer,
    gemini_function_calls,
    gemini_text,
    openai_text,
    openai_tool_calls,
)
from ehrlib.llm.logprobs import TokenLogprob, field_probability, is_refusal, token_logprobs, verdict_probability
from ehrlib.llm.records import user
from ehrlib.pipeline.calibration.apply import apply_confidence
from ehrlib.pipeline.context import note_context
from ehrlib.pipeline.llm import LLMCaller, LLMVerifier
from ehrlib.pipeline.stages import StageEnv


def _toks(*pairs: tuple[str, float]) -> tuple[TokenLogprob, ...]:
    return tuple(TokenLogprob(t, lp) for t, lp in pairs)


# an answer split into tokens the way a BPE tokenizer might: the label value is two tokens
_ANSWER = (('{"', -0.001), ("label", 0.0), ('":', 0.0), (' "', -0.01), ("incons", -0.3), ("istent", -0.05),
           ('",', 0.0), (' "reason": "', 0.0), ("HR 120", -1.0), ('"}', 0.0))


def test_the_label_probability_multiplies_the_tokens_of_its_value():
    p = field_probability(_toks(*_ANSWER), "label")
    assert p == pytest.approx(math.exp(-0.35))   # the quotes and the other fields do not count


def test_a_nested_label_and_a_thinking_block_are_not_the_answer():
    think = (("<think>", 0.0), ('{"label": "', -0.2), ("consistent", -2.0), ('"}', 0.0), ("</think>", 0.0))
    answer = (('{"siblings": [{"label": "', -0.1), ("consistent", -3.0), ('"}], "label": "', 0.0),
              ("inconsistent", -0.2), ('"}', 0.0))
    tokens = _toks(*think, *answer)
    text = "".join(t for t, _ in answer)
    assert field_probability(tokens, "label", answer=text) == pytest.approx(math.exp(-0.2))


@pytest.mark.parametrize("text", ['{"label": null}', '{"reason": "x"}', "no json here", '{"label": ""}',
                                  '{"label": "unterminated'])
def test_no_string_value_gives_no_probability(text):
    assert field_probability(_toks((text, -0.1)), "label") is None
    assert field_probability((), "label") is None


def test_tokens_from_both_wires_and_unusable_entries():
    openai = {"choices": [{"logprobs": {"content": [{"token": "a", "logprob": -0.5}, {"token": "b", "logprob": 0}]}}]}
    assert token_logprobs(openai) == _toks(("a", -0.5), ("b", 0.0))
    rest = {"candidates": [{"logprobsResult": {"chosenCandidates": [{"token": "a", "logProbability": -0.5}]}}]}
    sdk = {"candidates": [{"logprobs_result": {"chosen_candidates": [{"token": "a", "log_probability": -0.5}]}}]}
    assert token_logprobs(rest) == token_logprobs(sdk) == _toks(("a", -0.5))
    for bad in ({"token": "a", "logprob": 0.7}, {"token": "a", "logprob": float("nan")}, {"token": 3, "logprob": -1},
                {"token": "a", "logprob": True}, "a"):
        assert token_logprobs({"choices": [{"logprobs": {"content": [{"token": "x", "logprob": -1}, bad]}}]}) == ()
    assert token_logprobs({"choices": [{"logprobs": None}]}) == () == token_logprobs(None)
    assert verdict_probability({"choices": [{"message": {}}]}, '{"label": "consistent"}') is None


def test_what_counts_as_a_refusal_of_logprobs():
    assert is_refusal(400, "Logprobs is not supported for this model")
    assert is_refusal(500, "logprobs is not supported for models created with logits_all=False")
    assert not is_refusal(429, "logprobs quota")          # rate limits are retried, not stepped down
    assert not is_refusal(400, "bad request") and not is_refusal(None, "logprobs")


def _pred(label: str, confidence: float | None, source: str | None) -> Prediction:
    return Prediction("r", "n", 0, "HR", label, reason="why", confidence=confidence,  # type: ignore[arg-type]
                      confidence_source=source)  # type: ignore[arg-type]


def test_a_model_probability_stands_and_is_withheld_below_the_threshold():
    preds = (_pred("inconsistent", 0.55, "logprobs"), _pred("inconsistent", 0.9, "logprobs"),
             _pred("inconsistent", None, None), _pred("consistent", None, None))
    out = apply_confidence(preds, (0.99, 0.1, 0.3, 0.8), 0.6)
    assert [(p.label, p.confidence, p.confidence_source) for p in out] == [
        ("unverified", 0.55, "logprobs"), ("inconsistent", 0.9, "logprobs"),
        ("unverified", 0.3, "calibrator"), ("consistent", 0.8, "calibrator")]
    assert out[0].abstained_from == "inconsistent" and out[0].reason.startswith("low confidence (p=0.55)")


def test_a_reply_cached_without_logprobs_answers_a_request_for_them():
    msgs = (user("hi"),)
    assert cache_key("openai", msgs, None, GenerationConfig(model="m")) == \
        cache_key("openai", msgs, None, GenerationConfig(model="m", logprobs=True))


def _setup(synth_db):
    case = hr_case(synth_db, "w1")
    con, tools, note, entity, args, rows = case.con, case.tools, case.note, case.entity, case.args, case.rows
    answer = json.dumps({"label": "consistent", "reason": "HR charted",
                         "evidence_row_ids": [{"table": "chartevents", "row_id": rows[0]["row_id"]}]})
    head, tail = answer.split("consistent", 1)
    tokens = [(head, -0.01), ("consistent", -0.105), (tail, -0.2)]
    return con, tools, note, entity, args, answer, tokens


def test_openai_wire_verdict_carries_the_model_probability(synth_db):
    con, tools, note, entity, args, answer, tokens = _setup(synth_db)
    try:
        ctx = note_context(con.cursor(), note)
        with FakeOpenAIServer() as srv:
            srv.add(openai_tool_calls(("Get_Item_Status_History", args)), openai_text(answer, logprobs=tokens))
            client = make_client("vllm", base_url=srv.url + "/v1", model="m", timeout_s=5, max_retries=0)
            verdict = LLMVerifier(LLMCaller(client))(ctx, StageEnv(toolset=tools), entity, ())
            bodies = [r.body for r in srv.requests]
    finally:
        con.close()
    assert verdict.label == "consistent" and verdict.confidence == pytest.approx(math.exp(-0.105))
    assert all(b["logprobs"] is True for b in bodies)


def test_a_server_refusing_logprobs_is_asked_again_without_once(synth_db):
    con, tools, note, entity, args, answer, _ = _setup(synth_db)
    try:
        ctx = note_context(con.cursor(), note)
        with FakeOpenAIServer(reject_logprobs=True) as srv:
            srv.add(openai_tool_calls(("Get_Item_Status_History", args)), openai_text(answer))
            client = make_client("llamacpp", base_url=srv.url + "/v1", model="m", timeout_s=5, max_retries=0)
            verdict = LLMVerifier(LLMCaller(client))(ctx, StageEnv(toolset=tools), entity, ())
            accepted = [r.body for r in srv.requests if r not in srv.refused]
            refused = len(srv.refused)
    finally:
        con.close()
    assert verdict.failure is None and verdict.label == "consistent" and verdict.confidence is None
    assert refused == 1 and all("logprobs" not in b for b in accepted) and len(accepted) == 2
    assert client.manifest()["logprobs_refused"] == "HTTP 500"


def test_gemini_wire_asks_for_and_reads_logprobs_and_steps_down(monkeypatch, synth_db):
    from ehrlib.llm.fakes import gemini_error

    for name in ("GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_CLOUD_PROJECT",
                 "GOOGLE_CLOUD_LOCATION", "EHRLIB_PHI_SAFE_HOSTS"):
        monkeypatch.delenv(name, raising=False)
    con, tools, note, entity, args, answer, tokens = _setup(synth_db)
    try:
        ctx = note_context(con.cursor(), note)
        with FakeGeminiServer() as srv:
            srv.add(gemini_function_calls(("Get_Item_Status_History", args)), gemini_text(answer, logprobs=tokens))
            client = make_client("gemini", api_key="k", base_url=srv.url, timeout_s=5, max_retries=0)
            verdict = LLMVerifier(LLMCaller(client))(ctx, StageEnv(toolset=tools), entity, ())
            asked = [r.body["generationConfig"].get("responseLogprobs") for r in srv.requests]
        with FakeGeminiServer() as srv:
            srv.add(gemini_error(400, "INVALID_ARGUMENT", "Logprobs is not supported for the current model."),
                    gemini_function_calls(("Get_Item_Status_History", args)), gemini_text(answer))
            client2 = make_client("gemini", api_key="k", base_url=srv.url, timeout_s=5, max_retries=0)
            plain = LLMVerifier(LLMCaller(client2))(ctx, StageEnv(toolset=tools), entity, ())
            asked2 = [r.body["generationConfig"].get("responseLogprobs") for r in srv.requests]
    finally:
        con.close()
    assert verdict.confidence == pytest.approx(math.exp(-0.105)) and asked == [True, True]
    assert plain.label == "consistent" and plain.confidence is None and asked2 == [True, None, None]
    assert client2.manifest()["logprobs_refused"].startswith("HTTP 400")


def test_findings_carry_the_source_and_read_files_written_before_it(tmp_path):
    from ehrlib.findings import Findings, finding_row
    from ehrlib.viz.finding_panel import _confidence

    rows = (finding_row(_pred("consistent", 0.8, "logprobs")), finding_row(_pred("consistent", 0.7, "calibrator")))
    assert [r.confidence_source for r in rows] == ["logprobs", "calibrator"]
    path = Findings(rows).to_jsonl(tmp_path / "f.jsonl")
    assert [r.confidence_source for r in Findings.read_jsonl(path).rows] == ["logprobs", "calibrator"]
    old = tmp_path / "old.jsonl"  # a findings/1 file from before the column
    old.write_text("".join(json.dumps({k: v for k, v in json.loads(line).items() if k != "confidence_source"}) + "\n"
                           for line in path.read_text().splitlines()))
    assert [r.confidence_source for r in Findings.read_jsonl(old).rows] == [None, None]
    assert "conf 0.80 (model)" in _confidence(_pred("consistent", 0.8, "logprobs"))
    assert "(model)" not in _confidence(_pred("consistent", 0.7, "calibrator"))
