"""LLM judges: verdict parsing, prompt rendering, scripted-backend runs (no network)."""
from __future__ import annotations

import os

import pytest

from ehrlib.corpus.records import GoldEntity, ItemRef, Note, Prediction
from ehrlib.judge.llm_judge import judge_with_llm, parse_verdict, render_judge_prompt
from ehrlib.prompting import load_prompt

llm_factory = pytest.importorskip("ehrlib.llm.factory", reason="ehrlib.llm not installed yet")


@pytest.mark.parametrize("reply, verdict, match", [
    ("Reason: same WBC value.\nMatch: P2\nResult: Correct", "correct", 2),
    ("Reason: x\nResult: Incorrect", "incorrect", None),
    ("Result: Correct\nOn reflection the time differs.\nResult: Incorrect", "incorrect", None),  # last wins
    ("**Result:** Correct.", "correct", None),
    ("GRADE: I", "incorrect", None),
    ("grade: c", "correct", None),
    ("Reason: unsure\nResult: maybe", None, None),
    ("The prediction is correct.", None, None),  # no verdict line: unparsed, not wrong
    ("", None, None),
])
def test_parse_verdict(reply, verdict, match):
    assert parse_verdict(reply) == (verdict, match)


def test_prompt_ids_are_stem_and_hash():
    # Snapshot: editing a judge prompt changes every judged number, so it must be deliberate
    # (update these ids, and say in the commit why the judge changed).
    assert load_prompt("judge_harsh").prompt_id == "judge_harsh@e3f10a42"
    assert load_prompt("judge_lenient").prompt_id == "judge_lenient@4f534072"


def test_render_lists_cached_predictions_apart():
    g = GoldEntity("n1", "g1", 3, "HR", "inconsistent", (ItemRef("chartevents", "Heart Rate", 220045),))
    preds = [Prediction("r", "n1", 3, "HR 130", "consistent", reason="charted 131 at 10:00"),
             Prediction("r", "n1", 4, "BP", "consistent", from_cache=True)]
    text = render_judge_prompt(load_prompt("judge_harsh"), g, preds, "physician")
    fresh, cached = text.split("ALREADY CHECKED")
    assert "P1 | line 3 | entity: HR 130" in fresh and "P2" not in fresh
    assert "P2 | line 4 | entity: BP" in cached
    assert "chartevents:220045 Heart Rate" in text and "label: inconsistent" in text
    assert "$" not in text  # every placeholder filled


def test_judge_with_scripted_backend_keeps_raw_and_counts_unparsed():
    notes = [Note("n1", 1, 1, "nursing", "2150-01-01", "HR 80\nBP 120/80")]
    gold = [GoldEntity("n1", "g1", 0, "HR", "consistent"), GoldEntity("n1", "g2", 1, "BP", "consistent")]
    preds = [Prediction("r", "n1", 0, "HR", "consistent"), Prediction("r", "n1", 1, "BP", "inconsistent")]
    replies = ["Reason: same\nMatch: P1\nResult: Correct", "I cannot decide."]
    client = llm_factory.make_client("scripted", replies=replies, max_concurrency=1)
    js, prompt_ids = judge_with_llm(client, gold, preds, notes, modes=("harsh",), judge_name="fake",
                                    progress=False)
    assert [j.verdict for j in js] == ["correct", "unparsed"]
    assert js[0].matched_prediction == 0 and js[0].reason == "same"
    assert js[1].raw == "I cannot decide." and js[1].judge == "fake"
    assert prompt_ids == [load_prompt("judge_harsh").prompt_id]
    sent = client.backend_impl.requests[0][0][0].text
    assert "entity: HR" in sent and "P2 | line 1 | entity: BP" in sent


def test_failed_call_is_unparsed_not_wrong():
    from ehrlib.llm.errors import LLMCallError

    notes = [Note("n1", 1, 1, "nursing", "2150-01-01", "HR 80")]
    gold = [GoldEntity("n1", "g1", 0, "HR", "consistent")]
    client = llm_factory.make_client("scripted", replies=[LLMCallError("HTTP 400", status=400)], max_retries=0)
    preds = [Prediction("r", "n1", 0, "HR", "consistent")]
    js, _ = judge_with_llm(client, gold, preds, notes, modes=("lenient",), progress=False)
    assert js[0].verdict == "unparsed" and "call failed" in js[0].reason


def test_note_without_predictions_is_incorrect_without_a_call():
    notes = [Note("n1", 1, 1, "nursing", "2150-01-01", "HR 80")]
    gold = [GoldEntity("n1", "g1", 0, "HR", "consistent")]
    client = llm_factory.make_client("scripted", replies=[])
    js, _ = judge_with_llm(client, gold, [], notes, modes=("harsh",), progress=False)
    assert js[0].verdict == "incorrect" and client.backend_impl.requests == []


@pytest.mark.live
@pytest.mark.skipif(not (os.environ.get("GEMINI_API_KEY") or os.environ.get("GOOGLE_API_KEY")
                         or os.environ.get("GOOGLE_GENAI_USE_VERTEXAI")),
                    reason="no Gemini credentials (GEMINI_API_KEY / GOOGLE_API_KEY / GOOGLE_GENAI_USE_VERTEXAI)")
def test_live_gemini_judges_an_obvious_pair():
    """A real judge must read its own format: an exact match is Correct, a missing one Incorrect."""
    model = os.environ.get("EHRLIB_LIVE_GEMINI_JUDGE", "gemini-2.5-flash")
    client = llm_factory.make_client("gemini", model=model, timeout_s=120, source_kind="synthetic")
    notes = [Note("n1", 1, 1, "nursing", "2150-01-01", "HR 80\nlasix 40 mg IV")]
    gold = [GoldEntity("n1", "g1", 0, "HR", "consistent", (ItemRef("chartevents", "Heart Rate", 220045),)),
            GoldEntity("n1", "g2", 1, "lasix", "inconsistent")]
    preds = [Prediction("r", "n1", 0, "HR 80", "consistent", (ItemRef("chartevents", "Heart Rate", 220045),),
                        reason="heart rate 80 charted at 08:00")]
    js, _ = judge_with_llm(client, gold, preds, notes, modes=("harsh",), progress=False)
    assert [j.verdict for j in js] == ["correct", "incorrect"], [j.raw for j in js]
