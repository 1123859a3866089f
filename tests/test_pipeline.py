"""EHR-Inspector with an LLM test double driving every stage, on the synthetic hospital.

The double (:class:`RuleBackend`) answers each prompt by reading it the way a model would
have to — the numbered note lines, the candidate item lists, the tool results — so the
test checks our prompts carry what a stage needs and our parsers turn replies into the
right records. It is never used outside tests.
"""
from __future__ import annotations

import datetime
import json
import re
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from ehrlib.corpus.records import Note, RowRef, TimeSpan, ToolCallRecord
from ehrlib.db.connect import connect
from ehrlib.llm import Client, GenerationConfig, LLMResponse, Message, ToolCall
from ehrlib.pipeline.context import ItemProfiler, note_context
from ehrlib.pipeline.inspector import inspect_note
from ehrlib.pipeline.llm import build_llm_stages, retrieval_covers, scope_status
from ehrlib.pipeline.llm.prompts import get_prompt
from ehrlib.pipeline.params import RunParams
from ehrlib.pipeline.stages import StageEnv, apply_switches

SUBJECT, HADM = 10040, 104852  # synthetic hospital seed 0: septic shock; dates are read from the DB

NOTE_TEXT = "\n".join([
    "Chief Complaint: hypotension",                      # 0
    "HPI: 29F admitted with septic shock.",               # 1
    "Past medical history: asthma, appendectomy 2150.",   # 2
    "24 Hour Events:",                                    # 3
    "Overnight HR 120.",                                  # 4
    "Abd: soft, distended",                               # 5
    "Creatinine 2.1",                                     # 6
    "Plan: consider CT abdomen tomorrow.",                # 7
])


def _lines(prompt: str) -> dict[int, str]:
    return {int(m.group(1)): m.group(2) for m in re.finditer(r"^(\d+): (.*)$", prompt, re.MULTILINE)}


def _reply(obj: Any) -> LLMResponse:
    return LLMResponse(text=json.dumps(obj))


class RuleBackend:
    """An LLM test double: stage handlers chosen by the prompt's opening words."""

    name = "rules"
    endpoint = "http://127.0.0.1:9/v1"

    def __init__(self, overrides: dict[str, Callable[..., LLMResponse]] | None = None) -> None:
        self.calls: list[str] = []
        self.handlers: list[tuple[str, str, Callable[..., LLMResponse]]] = [
            ("You split a clinical note", "segmentation", self.segment),
            ("You read a whole clinical note", "anchors_global", self.anchors),
            ("You resolve relative time", "anchors_relative", self.relative),
            ("this patient's structured EHR tables can confirm", "extract_patient", self.extract_patient),
            ("choose every category below", "select", self.select),
            ("outside this patient's own records", "extract_ontology", self.extract_ontology),
            ("Decide, for each listed entity", "scope", self.scope),
            ("You check whether a statement", "verify", self.verify),
        ]
        for stage, fn in (overrides or {}).items():
            self.handlers = [(m, s, fn if s == stage else f) for m, s, f in self.handlers]

    def describe(self) -> dict[str, Any]:
        return {"endpoint": self.endpoint}

    async def send(self, messages: Sequence[Message], tools: Any, config: GenerationConfig,
                   timeout_s: float) -> LLMResponse:
        first = "\n".join(m.text for m in messages[:2])
        for marker, stage, fn in self.handlers:
            if marker in first:
                self.calls.append(stage)
                return fn(messages)
        raise AssertionError(f"no handler for prompt: {first[:200]}")

    # --- stage handlers -------------------------------------------------------------------
    def segment(self, messages: Sequence[Message]) -> LLMResponse:
        return _reply({"segments": [
            {"start_line": 0, "end_line": 0, "title": "Chief Complaint", "section": "chief_complaint"},
            {"start_line": 1, "end_line": 2, "title": "HPI", "section": "hpi"},
            {"start_line": 3, "end_line": 6, "title": "24 Hour Events", "section": "events"},
            {"start_line": 7, "end_line": 7, "title": "Plan", "section": "assessment_plan"}]})

    def anchors(self, messages: Sequence[Message]) -> LLMResponse:
        admitted = re.search(r"- admission: (\S+)", messages[-1].text).group(1)
        return _reply({"anchors": [{"name": "septic shock onset", "time": admitted, "line": 1}]})

    def relative(self, messages: Sequence[Message]) -> LLMResponse:
        prompt = messages[-1].text
        lines = _lines(prompt)
        admitted = re.search(r"^admission: (\S+)", prompt, re.MULTILINE).group(1)
        written = re.search(r"^note date: (\S+)", prompt, re.MULTILINE).group(1)
        refs = [{"line": n, "text": "Overnight", "start": admitted, "end": written, "anchor": "note date"}
                for n, t in lines.items() if t.startswith("Overnight")]
        return _reply({"time_refs": refs})

    def extract_patient(self, messages: Sequence[Message]) -> LLMResponse:
        prompt = messages[-1].text
        assert 'chartevents:220045 | chartevents | Heart Rate | ["' in prompt  # L_P with TopV(l)
        out = []
        for n, t in _lines(prompt).items():
            if "HR 120" in t:
                out.append({"line": n, "text": "HR", "value": "120", "kind": "measurement",
                            "item_keys": ["chartevents:220045"]})
            if "Creatinine" in t:
                out.append({"line": n, "text": "Creatinine", "value": "2.1", "kind": "measurement",
                            "item_keys": ["labevents:50912"]})
            if "CT abdomen" in t:
                out.append({"line": n, "text": "CT abdomen", "kind": "procedure", "item_keys": []})
        return _reply({"entities": out})

    def select(self, messages: Sequence[Message]) -> LLMResponse:
        prompt = messages[-1].text
        segment = prompt.split("Segment:")[1]
        if "Abd" not in segment:
            return _reply({"selected": []})
        wanted = [c[2:] for c in prompt.splitlines() if c.startswith("- ") and "SKIN / WOUNDS" in c]
        return _reply({"selected": wanted})

    def extract_ontology(self, messages: Sequence[Message]) -> LLMResponse:
        prompt = messages[-1].text
        key = next(line.split(" | ")[0] for line in prompt.splitlines() if "| Abdominal Assessment" in line)
        out = []
        for n, t in _lines(prompt).items():
            if t.startswith("Abd:"):
                out += [{"line": n, "text": "soft", "value": "soft", "kind": "finding", "item_keys": [key],
                         "group": "abd-exam"},
                        {"line": n, "text": "distended", "value": "distended", "kind": "finding", "item_keys": [key],
                         "group": "abd-exam"}]
        return _reply({"entities": out})

    def scope(self, messages: Sequence[Message]) -> LLMResponse:
        prompt = messages[-1].text
        rows = [line.split(" | ") for line in prompt.split("Entities (id | line | text | value):")[1].splitlines()
                if line.count(" | ") == 3]
        decisions = []
        for eid, _line, text, _value in rows:
            answers = {"plan": text == "CT abdomen"}
            decisions.append({"entity_id": eid, "answers": answers, "reason": "", "cues": ["consider"] if
                              answers["plan"] else []})
        return _reply({"decisions": decisions})

    def verify(self, messages: Sequence[Message]) -> LLMResponse:
        task = messages[1].text
        entity = re.search(r"- entity: (.*)", task).group(1)
        key = re.search(r"key ([a-z_]+:\d+)", task)
        tool_texts = [r.content for m in messages if m.role == "tool" for r in m.tool_results]
        rows = [f"{t}#{i}" for text in tool_texts for t, i in re.findall(r"\[(\w+)#(\d+)\]", text)]
        pushed = any("have not yet read" in m.text for m in messages if m.role == "user")
        written = re.search(r"note written (\S+)", task).group(1)
        cached = re.search(r'^\[(\d+)\] line \d+: "soft"', task, re.MULTILINE)
        if entity == "distended" and cached:  # the cached 'soft' entry read the same abdominal rows
            return _reply({"label": "inconsistent", "inconsistency_type": "missing",
                           "from_cache": int(cached.group(1)),
                           "reason": "same abdominal assessment rows as 'soft': none charted"})
        if entity == "Creatinine" and not pushed:  # a premature conclusion: no rows read yet
            return _reply({"label": "inconsistent", "inconsistency_type": "missing", "reason": "not found"})
        if not tool_texts and key is None:
            return LLMResponse(text="", tool_calls=(ToolCall("c0", "Lexical_Search", {"query": entity}),))
        if not tool_texts:
            return LLMResponse(text="", tool_calls=(ToolCall("c1", "Get_Item_Status_History",
                                                             {"item": key.group(1), "time": written}),))
        if entity == "HR":
            hit = [r for r in rows if r.startswith("chartevents")][:2]
            return _reply({"label": "consistent", "reason": "HR 120 charted overnight",
                           "evidence_row_ids": [{"table": t, "row_id": int(i)} for t, i in
                                                (r.split("#") for r in hit)]})
        if entity == "Creatinine":
            hit = [r for r in rows if r.startswith("labevents")][:1]
            return _reply({"label": "inconsistent", "inconsistency_type": "contradiction",
                           "reason": "creatinine that day differs",
                           "evidence_row_ids": [{"table": "labevents", "row_id": int(hit[0].split("#")[1])}]})
        return _reply({"label": "inconsistent", "inconsistency_type": "missing", "reason": "no abdominal rows"})


def _client(backend: RuleBackend) -> Client:
    return Client(backend, GenerationConfig(model="rules-test"), max_concurrency=4)


@pytest.fixture(scope="module")
def db(synth_db):
    con = connect(synth_db)
    yield con
    con.close()


def _admit(db):
    return db.execute("SELECT ADMITTIME FROM ADMISSIONS WHERE HADM_ID = ?", [HADM]).fetchone()[0]


def _note_day(db) -> str:
    """The day after admission: the physician note's date."""
    return str((_admit(db) + datetime.timedelta(days=1)).date())


def _run(db, backend: RuleBackend, params: RunParams | None = None, cache_scope: str = "note", pool=None):
    from ehrlib.ontology import load_ontology
    from ehrlib.tools import PatientContext, make_toolset

    params = params or RunParams(backend="scripted")
    note = Note("n-test", SUBJECT, HADM, "physician", _note_day(db), NOTE_TEXT)
    ctx = note_context(db.cursor(), note, source_kind="synthetic")
    patient = PatientContext(SUBJECT, HADM, ctx.admittime, ctx.dischtime, note.chartdate, ctx.sex)
    env = StageEnv(connect=db.cursor, make_tools=lambda cur: make_toolset(cur, patient),
                   ontology=load_ontology(db), item_profile=ItemProfiler(db.cursor, ctx.flavor), params=params)
    stages = apply_switches(build_llm_stages("inspector", params, _client(backend), backend="rules"), params)
    try:
        return inspect_note(ctx, stages, env, run_id="t", cache_size=params.validation_cache, cache_scope=cache_scope,
                            pool=pool)
    finally:
        env.close()


def test_full_pipeline_records(db):
    backend = RuleBackend()
    res = _run(db, backend)
    # 1. segmentation
    assert [(s.start_line, s.end_line, s.section) for s in res.segments] == [
        (0, 0, "chief_complaint"), (1, 2, "hpi"), (3, 6, "events"), (7, 7, "assessment_plan")]
    # 2. anchors: the table's admission first, the note's own anchor, the relative "Overnight"
    names = [a.name for a in res.timeline.anchors]
    assert names[:2] == ["admission", "discharge"] and "septic shock onset" in names
    icu = db.execute("SELECT min(INTIME) FROM ICUSTAYS WHERE HADM_ID = ?", [HADM]).fetchone()[0]
    assert res.timeline.anchor("icu admission").time == icu.isoformat(sep=" ", timespec="seconds")
    admitted, day = _admit(db), _note_day(db)
    assert res.timeline.anchors[0].time == admitted.isoformat(sep=" ", timespec="seconds")
    overnight = TimeSpan(str(admitted.date()), day)
    assert [(r.line, r.window) for r in res.timeline.time_refs] == [(4, overnight)]
    # 3+4. entities from both extraction steps, with windows and sources
    ents = {e.text: e for e in res.entities}
    assert set(ents) == {"HR", "Creatinine", "CT abdomen", "soft", "distended"}
    assert ents["HR"].source == "patient" and ents["HR"].item_keys == ("chartevents:220045",)
    assert ents["HR"].window == TimeSpan(overnight.start, f"{day} 23:59:59")  # the expression's, to the note's end
    assert ents["Creatinine"].window == TimeSpan(day, f"{day} 23:59:59")  # physician note: the note date
    assert ents["Creatinine"].time_basis == "note_day"
    assert ents["soft"].source == "ontology" and ents["soft"].group == "abd-exam"
    assert ents["soft"].items[0].label == "Abdominal Assessment"
    # 5. scope: the plan is filtered out, everything else goes on
    status = {e.text: d.status for e, d in zip(res.entities, res.scope, strict=False)}
    assert status == {"HR": "active", "Creatinine": "active", "CT abdomen": "plan", "soft": "active",
                      "distended": "active"}
    # 6. verdicts with evidence rows, the guard's push, the cache hit
    preds = {p.entity: p for p in res.predictions}
    assert set(preds) == {"HR", "Creatinine", "soft", "distended"}
    hr = preds["HR"]
    assert hr.label == "consistent" and len(hr.evidence_row_ids) == 2
    assert all(r.table == "chartevents" for r in hr.evidence_row_ids)
    assert [c.tool for c in hr.tool_calls] == ["Get_Item_Status_History"]
    cr = preds["Creatinine"]
    assert (cr.label, cr.inconsistency_type) == ("inconsistent", "contradiction")
    assert cr.evidence_row_ids[0].table == "labevents"
    assert cr.prompt_id == get_prompt("verify_push").prompt_id  # the guard pushed the loop on once
    assert (preds["soft"].label, preds["soft"].inconsistency_type, preds["soft"].from_cache) == \
        ("inconsistent", "missing", False)
    dist = preds["distended"]
    assert dist.from_cache and dist.tool_calls == () and dist.usage.calls == 1
    assert res.cache_hits == 1
    # every prediction and stage record carries a prompt id; usage is counted per stage
    assert all(p.prompt_id and "@" in p.prompt_id for p in res.predictions)
    assert all(r.prompt_ids for r in res.stage_records if r.usage.calls)
    assert res.usage.calls == len(backend.calls)
    assert not res.failures


def test_validation_cache_off_costs_more_calls(db):
    with_cache = _run(db, RuleBackend())
    backend = RuleBackend()
    without = _run(db, backend, RunParams(backend="scripted", validation_cache=0))
    assert without.cache_hits == 0 and with_cache.cache_hits == 1
    v_with = sum(p.usage.calls for p in with_cache.predictions)
    v_without = sum(p.usage.calls for p in without.predictions)
    assert v_without > v_with


def test_malformed_reply_is_a_recorded_failure_and_the_note_goes_on(db):
    base = RuleBackend()

    def verify(messages):
        if "- entity: HR" in messages[1].text:
            return LLMResponse(text="I think it is fine, probably.")  # no JSON, twice
        return base.verify(messages)

    res = _run(db, RuleBackend({"verify": verify}))
    preds = {p.entity: p for p in res.predictions}
    assert preds["HR"].failure and "malformed" in preds["HR"].failure
    assert preds["Creatinine"].failure is None and preds["Creatinine"].label == "inconsistent"
    assert any(st == "verification" and "malformed" in msg for st, _, msg in res.failures)


def test_segmentation_gap_gets_one_repair_then_falls_back(db):
    attempts = []

    def bad_segments(messages):
        attempts.append(len(messages))
        return _reply({"segments": [{"start_line": 0, "end_line": 2}, {"start_line": 4, "end_line": 7}]})

    res = _run(db, RuleBackend({"segmentation": bad_segments}))
    assert len(attempts) == 2 and attempts[1] > attempts[0]  # the repair re-asks with the history
    assert [(s.start_line, s.end_line) for s in res.segments] == [(0, 7)]
    assert any("line" in msg and "segment" in msg for st, _, msg in res.failures if st == "segmentation")
    assert res.predictions  # the note went on


def test_switches_remove_stages(db):
    backend = RuleBackend()
    res = _run(db, backend, RunParams(backend="scripted", segmentation=False, scope_filter=False,
                                      extraction="patient_only"))
    assert "segmentation" not in backend.calls and "scope" not in backend.calls and "select" not in backend.calls
    assert len(res.segments) == 1
    assert {p.entity for p in res.predictions} == {"HR", "Creatinine", "CT abdomen"}  # plan kept: no filter


def test_evidence_guard_off_keeps_premature_conclusion(db):
    res = _run(db, RuleBackend(), RunParams(backend="scripted", evidence_guard=False))
    cr = next(p for p in res.predictions if p.entity == "Creatinine")
    assert (cr.inconsistency_type, cr.tool_calls) == ("missing", ())


def test_retrieval_covers_window():
    def call(tool, **args):
        return ToolCallRecord(tool=tool, args=args, n_rows=1)
    w = TimeSpan("2155-01-03", "2155-01-03")
    assert retrieval_covers([call("Get_Item_Status_History", item="x", time="2155-01-04")], w)  # ±1 day
    assert not retrieval_covers([call("Get_Item_Status_History", item="x", time="2155-01-06")], w)
    assert not retrieval_covers([call("Lexical_Search", query="x")], w)
    assert retrieval_covers([call("Analyze_Value_Trend", item="x", time="")], w)
    assert retrieval_covers([call("View_General_Timeline", time="2155-01-01 to 2155-01-08")], w)


def test_scope_status_rules():
    assert scope_status({"ed": True, "plan": True})[0] == "past"
    assert scope_status({"plan": "yes"})[0] == "plan"
    assert scope_status({"total": True})[0] == "past"
    assert scope_status({"plan": False, "refusal": False})[0] == "active"


def test_cached_verdict_rows_must_come_from_tools(db):
    base = RuleBackend()

    def verify(messages):
        if "- entity: HR" in messages[1].text and any(m.role == "tool" for m in messages):
            return _reply({"label": "consistent", "reason": "ok",
                           "evidence_row_ids": [{"table": "chartevents", "row_id": 999999999}]})
        return base.verify(messages)

    res = _run(db, RuleBackend({"verify": verify}))
    hr = next(p for p in res.predictions if p.entity == "HR")
    assert hr.evidence_row_ids == () and "never returned by a tool" in hr.reason
    assert RowRef("chartevents", 999999999) not in hr.evidence_row_ids


def test_group_siblings_answered_in_the_same_call(db):
    base = RuleBackend()
    seen_sibling_lists = []

    def verify(messages):
        task = messages[1].text
        sib = re.search(r"^(\S+) \| line \d+ \| distended \|", task, re.MULTILINE)
        if "- entity: soft" in task and any(m.role == "tool" for m in messages) and sib is not None:
            seen_sibling_lists.append(sib.group(1))
            return _reply({"label": "inconsistent", "inconsistency_type": "missing", "reason": "no abdominal rows",
                           "siblings": [{"entity_id": sib.group(1), "label": "inconsistent",
                                         "inconsistency_type": "missing", "reason": "same rows: none"}]})
        return base.verify(messages)

    backend = RuleBackend({"verify": verify})
    res = _run(db, backend)
    preds = {p.entity: p for p in res.predictions}
    assert seen_sibling_lists == [preds["distended"].entity_id]
    dist = preds["distended"]
    assert dist.from_cache and dist.usage.calls == 0 and (dist.label, dist.inconsistency_type) == \
        ("inconsistent", "missing")
    assert res.cache_hits == 1
    # without a cache there is no reuse: distended gets its own loop
    backend0 = RuleBackend({"verify": verify})
    res0 = _run(db, backend0, RunParams(backend="scripted", validation_cache=0))
    assert len(seen_sibling_lists) == 1  # no sibling list offered without a cache
    assert not any(p.from_cache for p in res0.predictions)
    assert backend0.calls.count("verify") > backend.calls.count("verify")


def test_too_many_ontology_candidates_keep_the_related_ones():
    from ehrlib.ontology import OntologyItem
    from ehrlib.pipeline.llm.stages import _rank_by_overlap

    items = [OntologyItem(f"diagnoses_icd:{k}", "diagnoses_icd", label, "DIAGNOSIS", "X")
             for k, label in enumerate(["Cholera", "Acute kidney failure", "Essential hypertension", "Gout"])]
    ranked = _rank_by_overlap(items, "4: Renal: acute kidney injury; hypertensive overnight")
    assert [i.label for i in ranked[:2]] == ["Acute kidney failure", "Essential hypertension"]


def test_thread_pool_gives_the_same_records(db):
    """Segments and cache lanes on a pool: same predictions, same cache hits as sequential."""
    from concurrent.futures import ThreadPoolExecutor

    def stable(res):
        return [(p.entity, p.label, p.inconsistency_type, p.from_cache, p.evidence_row_ids,
                 tuple(c.tool for c in p.tool_calls)) for p in res.predictions]

    sequential = _run(db, RuleBackend(), cache_scope="segment")
    with ThreadPoolExecutor(max_workers=4) as pool:
        parallel = _run(db, RuleBackend(), cache_scope="segment", pool=pool)
    assert stable(parallel) == stable(sequential) and parallel.cache_hits == sequential.cache_hits == 1


def test_bounded_client_caps_calls_across_threads():
    import asyncio
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from ehrlib.llm import run_sync
    from ehrlib.pipeline.llm.caller import BoundedClient

    state = {"now": 0, "peak": 0}
    lock = threading.Lock()

    class Slow:
        config = GenerationConfig(model="slow")

        async def generate(self, *args, **kwargs):
            with lock:
                state["now"] += 1
                state["peak"] = max(state["peak"], state["now"])
            await asyncio.sleep(0.02)
            with lock:
                state["now"] -= 1
            return "ok"

    bounded = BoundedClient(Slow(), 3)
    assert bounded.config.model == "slow"  # everything else is delegated
    with ThreadPoolExecutor(max_workers=12) as pool:
        results = list(pool.map(lambda _: run_sync(bounded.generate([])), range(24)))
    assert results == ["ok"] * 24 and state["peak"] == 3
