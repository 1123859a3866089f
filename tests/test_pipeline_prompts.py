"""Rendered-prompt snapshots: what each LLM stage sends for a fixed, hand-built note.

A change to a prompt file or to the code that fills it shows up here as a diff to review.
Regenerate deliberately with ``EHRLIB_UPDATE_SNAPSHOTS=1 pytest tests/test_pipeline_prompts.py``.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Sequence

import pytest

from ehrlib.corpus.records import ItemRef, Note, RowRef, TimeSpan
from ehrlib.llm import Client, GenerationConfig, LLMResponse, Message
from ehrlib.ontology import Ontology, OntologyItem
from ehrlib.pipeline.claims import claim_for
from ehrlib.pipeline.llm.prompts import CHECKEHR_PROMPTS, PIPELINE_PROMPTS, get_prompt
from ehrlib.pipeline.llm.caller import LLMCaller
from ehrlib.pipeline.llm.stages import (
    LLMAnchorResolver,
    LLMOntologyExtractor,
    LLMPatientExtractor,
    LLMScopeFilter,
    LLMSegmenter,
)
from ehrlib.pipeline.llm.verify import LLMVerifier
from ehrlib.pipeline.records import CacheEntry, Entity, Segment, Verdict
from ehrlib.pipeline.stages import NoteContext, StageEnv, Timeline

SNAPSHOT = Path(__file__).parent / "snapshots" / "pipeline_prompts.json"

TEXT = "24 Hour Events:\nPOD 1 HR 110s.\nAbd: soft, distended\nPlan: consider CT."
CTX = NoteContext(
    note=Note("snap", 1, 2, "physician", "2150-01-03", TEXT), subject_id=1, hadm_id=2,
    admittime="2150-01-01 10:00:00", dischtime="2150-01-05 12:00:00", sex="F", chartdate="2150-01-03",
    patient_items=(ItemRef("chartevents", "Heart Rate", 220045),), patient_item_keys=("chartevents:220045",))
ONTO = Ontology({"SKIN / WOUNDS & DEVICES / SAFETY": ("SKIN / WOUNDS & DEVICES / SAFETY",),
                 "HEMODYNAMICS & VITALS": ("HEMODYNAMICS & VITALS",)},
                (OntologyItem("chartevents:224003", "chartevents", "Abdominal Assessment",
                              "SKIN / WOUNDS & DEVICES / SAFETY", "SKIN / WOUNDS & DEVICES / SAFETY"),
                 OntologyItem("chartevents:220045", "chartevents", "Heart Rate", "HEMODYNAMICS & VITALS",
                              "HEMODYNAMICS & VITALS")))
SEG = Segment(0, 0, 3, "24 Hour Events", "events", TimeSpan("2150-01-03", "2150-01-03"))


class Capture:
    name = "capture"
    endpoint = "http://127.0.0.1:9/v1"

    def __init__(self) -> None:
        self.sent: list[str] = []

    def describe(self) -> dict[str, Any]:
        return {}

    async def send(self, messages: Sequence[Message], tools: Any, config: GenerationConfig,
                   timeout_s: float) -> LLMResponse:
        self.sent.append("\n---\n".join(f"[{m.role}] {m.text}" for m in messages))
        text = messages[-1].text
        if "choose every category" in text:
            pick = "SKIN / WOUNDS & DEVICES / SAFETY"
            choice = next(line[2:] for line in text.splitlines() if line.startswith("- ") and pick in line)
            return LLMResponse(text=json.dumps({"selected": [choice]}))
        for key, value in (("segments", [{"start_line": 0, "end_line": 3}]), ("anchors", []), ("time_refs", []),
                           ("entities", []), ("decisions", [])):
            if f'{{"{key}":' in text:
                return LLMResponse(text=json.dumps({key: value}))
        return LLMResponse(text=json.dumps({"label": "consistent", "reason": "ok"}))


def _render_all() -> tuple[dict[str, str], list[tuple[str, ...]]]:
    cap = Capture()
    llm = LLMCaller(Client(cap, GenerationConfig(model="capture")))
    env = StageEnv(ontology=ONTO, item_profile=lambda key: ("110", "95", "80"))
    timeline = Timeline()
    soft = Entity("snap:e1", 2, "soft", "finding", 0, "soft", items=(ItemRef("chartevents", "Abdominal Assessment",
                                                                              224003),),
                  item_keys=("chartevents:224003",), window=TimeSpan("2150-01-03", "2150-01-03"), group="abd")
    dist = Entity("snap:e2", 2, "distended", "finding", 0, "distended", items=soft.items, item_keys=soft.item_keys,
                  window=soft.window, group="abd")
    hr = Entity("snap:e0", 1, "HR", "range", 0, "110s", claim_for("range", min=110, max=119), items=CTX.patient_items,
                item_keys=CTX.patient_item_keys, window=TimeSpan("2150-01-02", "2150-01-02"))
    cache = (CacheEntry(hr, Verdict(hr.entity_id, "consistent", None, "HR 110-118 charted",
                                    (RowRef("chartevents", 7),)), hr.items, hr.window),)
    outputs = [
        LLMSegmenter(llm)(CTX, env),
        LLMAnchorResolver(llm)(CTX, env, (SEG,)),
        LLMPatientExtractor(llm)(CTX, env, SEG, timeline, ()),
        LLMOntologyExtractor(llm)(CTX, env, SEG, timeline, (hr,)),
        LLMScopeFilter(llm)(CTX, env, SEG, timeline, (hr, soft, dist)),
    ]
    verdict = LLMVerifier(llm)(CTX, env, soft, cache, group=(dist,))
    ids = [o.prompt_ids for o in outputs] + [(verdict.prompt_id,)]
    return {f"{i:02d}": text for i, text in enumerate(cap.sent)}, ids


def test_rendered_prompts_match_snapshot():
    got, _ = _render_all()
    body = json.dumps({"prompt_ids": {s: get_prompt(s).prompt_id for s in PIPELINE_PROMPTS},
                       "rendered": got}, indent=2, ensure_ascii=False) + "\n"
    if os.environ.get("EHRLIB_UPDATE_SNAPSHOTS") == "1" or not SNAPSHOT.exists():
        SNAPSHOT.parent.mkdir(parents=True, exist_ok=True)
        SNAPSHOT.write_text(body, encoding="utf-8")
        if os.environ.get("EHRLIB_UPDATE_SNAPSHOTS") != "1":
            pytest.fail(f"snapshot {SNAPSHOT.name} did not exist; written now, review and commit it")
    assert body == SNAPSHOT.read_text(encoding="utf-8")


def test_rendered_prompts_carry_their_inputs_and_ids():
    got, ids = _render_all()
    texts = list(got.values())
    assert len(texts) == 9  # segmentation, 2 anchors, patient, 3 ontology, scope, verification
    assert "1: POD 1 HR 110s." in texts[0] and "ends at line 3" in texts[0]
    assert 'chartevents:220045 | chartevents | Heart Rate | ["110", "95", "80"]' in texts[3]
    assert "chartevents:224003 | chartevents | Abdominal Assessment" in texts[6]
    assert "line 1: HR = 110s -> chartevents:220045" in texts[6]  # known entities are listed to skip
    assert "snap:e2 | 2 | distended | distended" in texts[7]
    assert '[0] line 1: "HR"' in texts[8] and "snap:e2 | line 2 | distended" in texts[8]
    assert all("$" not in t.replace("$ ", "") for t in texts)
    flat = [p for group in ids for p in group]
    assert flat and all("@" in p and len(p.split("@")[1]) == 8 for p in flat)


@pytest.mark.parametrize("stem", PIPELINE_PROMPTS + CHECKEHR_PROMPTS)
def test_every_prompt_file_loads_with_an_id(stem):
    prompt = get_prompt(stem)
    assert prompt.prompt_id.startswith(f"{stem}@")
