"""The LLM pipeline's honest outcomes: unverified entities, context-budget paging of the
patient's items, nearest-name matching of model-written keys, and run-level call counts."""
from __future__ import annotations

import json
import re

import pytest
from test_pipeline import NOTE_TEXT, RuleBackend, _lines, _run, db  # noqa: F401  (db is a fixture)

from ehrlib.corpus.records import GoldEntity, ItemRef, Prediction
from ehrlib.judge.matcher import judge_with_matcher
from ehrlib.judge.metrics import note_scores
from ehrlib.llm import Client, GenerationConfig, LLMResponse
from ehrlib.llm.budget import estimate_text_tokens, list_budget, pack_pages
from ehrlib.llm.usage import UsageLedger, call_counts, mostly_failed
from ehrlib.pipeline.params import RunParams


def test_failed_verification_is_unverified_and_never_correct(db):
    base = RuleBackend()

    def verify(messages):
        if "- entity: HR" in messages[1].text:
            return LLMResponse(text="no idea")  # no JSON, twice
        return base.verify(messages)

    res = _run(db, RuleBackend({"verify": verify}))
    preds = {p.entity: p for p in res.predictions}
    assert preds["HR"].label == "unverified" and "malformed" in preds["HR"].failure
    assert preds["Creatinine"].label == "inconsistent"
    gold = [GoldEntity("n-test", "g1", 4, "HR", "consistent", (ItemRef("chartevents", "Heart Rate", 220045),),
                       value="120")]
    for mode in ("harsh", "lenient"):
        (j,) = judge_with_matcher(gold, list(res.predictions), modes=(mode,))
        assert j.verdict == "incorrect"
    scores = note_scores(judge_with_matcher(gold, list(res.predictions)), gold, list(res.predictions))
    assert set(scores["n_unverified"]) == {1}


def test_unverified_predictions_round_trip_and_gold_cannot_claim_it(tmp_path):
    from ehrlib.corpus.records import RecordError, from_dict, to_dict

    p = Prediction("r", "n", 1, "HR", "unverified", failure="call_error: HTTP 500")
    assert from_dict(Prediction, json.loads(json.dumps(to_dict(p)))) == p
    with pytest.raises(RecordError, match="label"):
        from_dict(GoldEntity, {"note_id": "n", "entity_id": "g", "line": 1, "entity": "HR", "label": "unverified"})


def test_patient_items_are_paged_under_the_context_window(db):
    seen_pages: list[list[str]] = []
    prompts: list[str] = []
    base = RuleBackend()

    def extract_patient(messages):
        prompt = messages[-1].text
        prompts.append(prompt)
        seen_pages.append([line.split(" | ")[0] for line in prompt.splitlines()
                           if re.match(r"^[a-z_]+:[^ ]+ \| ", line)])
        return base.extract_patient(messages) if 'chartevents:220045 | chartevents' in prompt else \
            LLMResponse(text=json.dumps({"entities": []}))

    backend = RuleBackend({"extract_patient": extract_patient})
    client = Client(backend, GenerationConfig(model="rules-test", max_tokens=256), context_window=4000)
    res = _run_with_client(db, backend, client)
    by_segment: dict[int, list[str]] = {}
    for keys, prompt in zip(seen_pages, prompts, strict=False):
        first_line = min(_lines(prompt))
        by_segment.setdefault(first_line, []).extend(keys)
    assert len(by_segment) == 4 and len(seen_pages) >= 8  # several pages per segment
    full = set(next(iter(by_segment.values())))
    for keys in by_segment.values():
        assert len(keys) == len(set(keys)) and set(keys) == full  # every item once per segment
    assert all(estimate_text_tokens(p) + 256 <= 4000 for p in prompts)  # no request over the window
    assert {"HR", "Creatinine"} <= {p.entity for p in res.predictions}
    stats_pages = client.ledger.summary(by=("stage",))
    assert any(r["stage"] == "patient_extraction" and r["calls"] == len(prompts) for r in stats_pages)


def _run_with_client(db, backend, client):
    import test_pipeline

    orig = test_pipeline._client
    test_pipeline._client = lambda _backend: client
    try:
        return _run(db, backend)
    finally:
        test_pipeline._client = orig


def test_model_written_keys_are_matched_to_the_nearest_offered_key(db):
    base = RuleBackend()

    def extract_patient(messages):
        out = json.loads(base.extract_patient(messages).text)
        for e in out["entities"]:
            if e["text"] == "HR":
                e["item_keys"] = ["chartevent:220045"]  # table misspelt, id right
            if e["text"] == "Creatinine":
                e["item_keys"] = ["creatinine"]  # the label, not the key
        out["entities"].append({"line": 4, "text": "Overnight", "kind": "event", "item_keys": ["nonsense:1"]})
        return LLMResponse(text=json.dumps(out))

    backend = RuleBackend({"extract_patient": extract_patient})
    client = Client(backend, GenerationConfig(model="rules-test"), max_concurrency=4)
    res = _run_with_client(db, backend, client)
    items = {p.entity: [i.itemid for i in p.items] for p in res.predictions}
    assert items["HR"] == [220045] and items["Creatinine"] == [50912]
    assert "Overnight" not in items


def test_extraction_counts_reach_the_stage_stats(db):
    from ehrlib.pipeline.llm import build_llm_stages

    backend = RuleBackend()
    stages = build_llm_stages("inspector", RunParams(backend="scripted"),
                              Client(backend, GenerationConfig(model="rules-test")), backend="rules")
    stats = stages.stats()
    assert stats["counts"]["calls"] == 0 and stats["extraction"] == {}


def test_pack_pages_covers_every_row_within_budget():
    rows = [f"labevents:{i} | labevents | Item {i} | [\"{i}.0\"]" for i in range(500)]
    budget = 300
    pages = pack_pages(rows, budget, max_rows=400)
    assert sorted(i for p in pages for i in p) == list(range(500))
    assert all(sum(estimate_text_tokens(rows[i]) + 1 for i in p) <= budget for p in pages)
    assert pack_pages(rows, None, max_rows=400) == [list(range(400)), list(range(400, 500))]
    assert pack_pages(["x" * 3000], 10) == [[0]]  # an oversize row still gets a page


def test_list_budget_refuses_a_window_too_small():
    from ehrlib.errors import ConfigError

    assert list_budget(None, 2048, "x") is None
    assert list_budget(8192, 512, "x" * 3000) == int(8192 * 0.88) - 512 - 1501
    with pytest.raises(ConfigError, match="context_window"):
        list_budget(2048, 2048, "prompt")


def test_call_counts_and_mostly_failed_summary():
    ledger = UsageLedger()
    from ehrlib.llm.records import CallUsage

    ledger.record(backend="openai", model="m", usage=CallUsage(5, 1), cached=True)
    for _ in range(3):
        ledger.record_failure("rejected", "http://x/v1 HTTP 400: context length 9594 > 8192", "patient_extraction")
    counts = call_counts(ledger, network_calls=3, retries=0)
    assert counts["calls"] == 4 and counts["response_cache_hits"] == 1 and counts["failed_calls"] == 3
    assert counts["failures_by_stage"] == {"patient_extraction": 3}
    line = mostly_failed(counts)
    # the group is shown by its first real message: the URL and numbers a user can act on
    assert line == ("3 of 4 model calls failed; top reasons: 3x rejected: http://x/v1 HTTP 400: "
                    "context length 9594 > 8192")
    assert mostly_failed({**counts, "failed_calls": 1}) is None
