"""LLM-backed stages 1-5 of EHR-Inspector and the LLM Semantic_Search ranker.

Each stage renders one of ``ehrlib/prompts/*.txt``, asks the model for JSON through
:class:`~ehrlib.pipeline.llm.caller.LLMCaller`, parses the reply into pipeline records,
and reports usage and the prompt ids it used. Verification (stage 6) is
:mod:`ehrlib.pipeline.llm.verify`; the bundles are built in :mod:`ehrlib.pipeline.llm.register`.
"""
from __future__ import annotations

import json
import re
from typing import Any, Callable, Mapping, Sequence

from ehrlib.corpus.records import ItemRef, TimeSpan, Usage
from ehrlib.llm.budget import is_context_overflow, pack_pages
from ehrlib.llm.matching import NameMatcher
from ehrlib.pipeline.inspector import SegmentationError, validate_segments
from ehrlib.pipeline.llm.caller import LLMCaller, numbered, object_schema, stage_output
from ehrlib.pipeline.llm.prompts import get_prompt
from ehrlib.pipeline.records import Anchor, Entity, ScopeDecision, Segment, TimeRef
from ehrlib.pipeline.stages import NoteContext, StageEnv, StageOutput, Timeline, split_item_key, whole_note_segment

__all__ = ["LLMSegmenter", "LLMAnchorResolver", "LLMPatientExtractor", "LLMOntologyExtractor", "LLMScopeFilter",
           "LLMSemanticRanker", "scope_status", "SECTIONS", "ENTITY_KINDS"]

SECTIONS: tuple[str, ...] = (
    "chief_complaint", "hpi", "past_history", "admission_medications", "hospital_course", "results",
    "discharge_medications", "discharge_diagnosis", "instructions", "followup", "events", "vitals", "exam",
    "labs", "assessment_plan", "nursing_system", "other",
)
ENTITY_KINDS: tuple[str, ...] = ("measurement", "range", "finding", "interpretation", "trend", "medication",
                                 "infusion", "output", "procedure", "microbiology", "diagnosis", "event")
#: record-retrieval tools: the evidence-sufficiency guard wants one of these before "inconsistent"
RETRIEVAL_TOOLS: frozenset[str] = frozenset({"Get_Item_Status_History", "Get_Item_Value_History",
                                             "Analyze_Value_Trend", "View_General_Timeline"})
#: items per extraction page at most (cost); `llm.context_window` bounds a page by tokens
MAX_PROMPT_ITEMS = 400
_TIME_CUE = re.compile(r"\d|\b(?:day|days|pod|hd|overnight|yesterday|today|tomorrow|morning|evening|night|"
                       r"admission|admitted|discharge|week|hours?|prior|after|before|since|following|next|"
                       r"previous|later|earlier|am|pm)\b", re.IGNORECASE)
_DATE = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})")


_STR_OR_NULL = {"type": ["string", "null"]}
SEGMENTS_SCHEMA = object_schema({"segments": {"type": "array", "items": object_schema(
    {"start_line": {"type": "integer"}, "end_line": {"type": "integer"}, "title": {"type": "string"},
     "section": {"type": "string"}}, ["start_line", "end_line"])}}, ["segments"])
ANCHORS_SCHEMA = object_schema({"anchors": {"type": "array", "items": object_schema(
    {"name": {"type": "string"}, "time": {"type": "string"}, "line": {"type": ["integer", "null"]},
     "source": {"type": "string"}}, ["name", "time"])}}, ["anchors"])
TIMEREFS_SCHEMA = object_schema({"time_refs": {"type": "array", "items": object_schema(
    {"line": {"type": "integer"}, "text": {"type": "string"}, "start": _STR_OR_NULL, "end": _STR_OR_NULL,
     "anchor": _STR_OR_NULL}, ["line", "text"])}}, ["time_refs"])
ENTITIES_SCHEMA = object_schema({"entities": {"type": "array", "items": object_schema(
    {"line": {"type": "integer"}, "text": {"type": "string"}, "value": {"type": ["string", "number", "null"]},
     "kind": {"type": "string"}, "item_keys": {"type": "array", "items": {"type": "string"}},
     "group": _STR_OR_NULL, "time_text": _STR_OR_NULL}, ["line", "text"])}}, ["entities"])
SELECT_SCHEMA = object_schema({"selected": {"type": "array", "items": {"type": "string"}}}, ["selected"])
SCOPE_SCHEMA = object_schema({"decisions": {"type": "array", "items": object_schema(
    {"entity_id": {"type": "string"}, "answers": {"type": "object"}, "status": {"type": "string"},
     "reason": {"type": "string"}, "cues": {"type": "array", "items": {"type": "string"}}},
    ["entity_id"])}}, ["decisions"])
_PAST_QUESTIONS = ("ed", "past_history", "previous_admission")
_UNCHECKABLE_QUESTIONS = ("opinion", "discontinued_unclear", "diagnosis_outside_diagnosis_section", "total",
                          "refusal", "imaging_interpretation")


# --- 1. segmentation ------------------------------------------------------------------------

class LLMSegmenter:
    def __init__(self, llm: LLMCaller) -> None:
        self.llm = llm

    def __call__(self, ctx: NoteContext, env: StageEnv) -> StageOutput[tuple[Segment, ...]]:
        prompt = get_prompt("segmentation")
        lines = ctx.lines
        text = prompt.render(last_line=str(len(lines) - 1), sections=", ".join(SECTIONS),
                             note_type=ctx.note_type, note=numbered(lines))

        def check(value: Any) -> str | None:
            try:
                validate_segments(self._parse(value), len(lines))
            except SegmentationError as exc:
                return str(exc)
            return None

        value, usage, raws, failure = self.llm.ask(text, SEGMENTS_SCHEMA, stage="segmentation", note_id=ctx.note_id,
                                                   validate=check)
        segments = validate_segments(self._parse(value), len(lines)) if value is not None \
            else (whole_note_segment(ctx),)
        return stage_output(segments, [usage], [prompt.prompt_id], [failure], raws)

    @staticmethod
    def _parse(value: Any) -> tuple[Segment, ...]:
        out = []
        for i, s in enumerate(value["segments"]):
            section = str(s.get("section") or "other").strip().lower()
            out.append(Segment(i, int(s["start_line"]), int(s["end_line"]), str(s.get("title") or section),
                               section if section in SECTIONS else "other"))
        return tuple(out)


# --- 2. temporal anchors --------------------------------------------------------------------

def _clean_time(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    m = _DATE.search(text)
    if not m:
        return None
    day = f"{int(m.group(1)):04d}-{int(m.group(2)):02d}-{int(m.group(3)):02d}"
    rest = text[m.end():].strip().lstrip("T").strip()
    hm = re.match(r"(\d{1,2}):(\d{2})(?::(\d{2}))?", rest)
    return f"{day} {int(hm.group(1)):02d}:{hm.group(2)}:{hm.group(3) or '00'}" if hm else day


class LLMAnchorResolver:
    def __init__(self, llm: LLMCaller) -> None:
        self.llm = llm

    def __call__(self, ctx: NoteContext, env: StageEnv, segments: tuple[Segment, ...]) -> StageOutput[Timeline]:
        p_global, p_rel = get_prompt("anchors_global"), get_prompt("anchors_relative")
        lines = ctx.lines
        note_date = (ctx.note.charttime or ctx.chartdate or "")
        text = p_global.render(admittime=ctx.admittime or "unknown", dischtime=ctx.dischtime or "unknown",
                               note_date=note_date or "unknown", note=numbered(lines))
        value, usage, raws, failure = self.llm.ask(text, ANCHORS_SCHEMA, stage="anchors", note_id=ctx.note_id)
        anchors: dict[str, Anchor] = {}
        # the record's own times first: they are facts, the note's are claims
        for name, t in (("admission", ctx.admittime), ("discharge", ctx.dischtime), ("note date", note_date)):
            if t:
                anchors[name] = Anchor(name, t, None, "table" if name != "note date" else "context")
        for k, icu in enumerate(ctx.icu_windows, start=1):
            suffix = f" {k}" if len(ctx.icu_windows) > 1 else ""
            for name, t in ((f"icu admission{suffix}", icu.start), (f"icu discharge{suffix}", icu.end)):
                if t:
                    anchors[name] = Anchor(name, t, None, "table")
        for a in (value or {}).get("anchors", ()):
            t = _clean_time(a.get("time"))
            name = str(a.get("name") or "").strip().lower()
            if t and name and name not in anchors:
                line = a.get("line")
                line = line if isinstance(line, int) and 0 <= line < len(lines) else None
                anchors[name] = Anchor(name, t, line, "note")
        usages, pids, failures, all_raw = [usage], [p_global.prompt_id], [failure], list(raws)
        refs: list[TimeRef] = []
        listing = "\n".join(f"{a.name}: {a.time}" for a in anchors.values())
        for seg in segments:
            seg_lines = lines[seg.start_line:seg.end_line + 1]
            if not any(_TIME_CUE.search(line) for line in seg_lines):
                continue  # nothing that could be a time expression: no call
            window = seg.default_window or ctx.default_window()
            text = p_rel.render(anchors=listing, default_window=f"{window.start} .. {window.end}",
                                segment=numbered(seg_lines, seg.start_line))
            v, u, r, f = self.llm.ask(text, TIMEREFS_SCHEMA, stage="anchors", note_id=ctx.note_id)
            usages.append(u)
            pids.append(p_rel.prompt_id)
            failures.append(f)
            all_raw.extend(r)
            for t in (v or {}).get("time_refs", ()):
                line, start, end = t.get("line"), _clean_time(t.get("start")), _clean_time(t.get("end"))
                if not isinstance(line, int) or not seg.start_line <= line <= seg.end_line or not (start or end):
                    continue
                refs.append(TimeRef(line, str(t.get("text") or ""), TimeSpan(start or end, end or start),
                                    (str(t["anchor"]).lower() if t.get("anchor") else None)))
        refs.sort(key=lambda r: r.line)
        return stage_output(Timeline(tuple(anchors.values()), tuple(refs)), usages, pids, failures, all_raw)


# --- 3/4. extraction ------------------------------------------------------------------------

def _key_matcher(allowed: Mapping[str, ItemRef]) -> Any:
    """Item keys as the model may write them: the key, its item id, or the item's label."""
    labels = {item.label: key for key, item in allowed.items() if item.label}
    ids = {key.rsplit(":", 1)[-1]: key for key in allowed}
    return NameMatcher(allowed, {**ids, **labels}, fuzzy_pool=labels)


def _entities_from(value: Any, ctx: NoteContext, segment: Segment, allowed: Mapping[str, ItemRef],
                   known: Sequence[Entity], source: str, prefix: str,
                   llm: LLMCaller | None = None) -> tuple[tuple[Entity, ...], list[str]]:
    """Parse extracted entities; drop ones outside the segment, with unknown items, or known.
    Item keys are matched to the offered ones (`_key_matcher`) before an entity is dropped."""
    seen = {(e.line, e.text.strip().lower()) for e in known}
    out, notes = [], []
    matcher = _key_matcher(allowed)
    for k, raw in enumerate((value or {}).get("entities", ())):
        line, text = raw.get("line"), str(raw.get("text") or "").strip()
        if not isinstance(line, int) or not segment.start_line <= line <= segment.end_line or not text:
            notes.append(f"entity {text!r} at line {line} is outside segment {segment.index}; dropped")
            continue
        if (line, text.lower()) in seen:
            continue
        keys = [str(x) for x in raw.get("item_keys") or ()]
        matched = [matcher.match(x) for x in keys]
        good = list(dict.fromkeys(m for m, _ in matched if m is not None))
        if llm is not None:
            llm.count("item_keys_fuzzy_matched", sum(how in ("folded", "fuzzy") for _, how in matched))
            llm.count("item_keys_dropped", sum(how == "none" for _, how in matched))
        if keys and not good:
            notes.append(f"entity {text!r}: item keys {keys[:3]} are not candidates; dropped")
            if llm is not None:
                llm.count("entities_dropped_unknown_items")
            continue
        kind = str(raw.get("kind") or "event").lower()
        value_text = raw.get("value")
        seen.add((line, text.lower()))
        out.append(Entity(
            entity_id=f"{prefix}{segment.index}.{k}", line=line, text=text,
            kind=kind if kind in ENTITY_KINDS else "event", segment=segment.index,
            value=None if value_text in (None, "") else str(value_text),
            items=tuple(allowed[x] for x in good), item_keys=tuple(good),
            time_text=raw.get("time_text") or None, source=source, group=raw.get("group") or None,
        ))
    return tuple(out), notes


class LLMPatientExtractor:
    """Stage 3: entities aligned to L_P, shown with TopV(l) (paper §4.2, Figure 20)."""

    def __init__(self, llm: LLMCaller, top_k: int = 10) -> None:
        self.llm = llm
        self.top_k = top_k

    def __call__(self, ctx: NoteContext, env: StageEnv, segment: Segment, timeline: Timeline,
                 known: tuple[Entity, ...]) -> StageOutput[tuple[Entity, ...]]:
        prompt = get_prompt("extract_patient")
        allowed = dict(zip(ctx.patient_item_keys, ctx.patient_items))
        if not allowed:
            return StageOutput(())
        seg_text = numbered(ctx.lines[segment.start_line:segment.end_line + 1], segment.start_line)
        # most related to the segment first, then by table: every item is offered in some page
        score = _overlap_scorer(seg_text)
        keys = sorted(allowed, key=lambda k: (-score(allowed[k]), allowed[k].table, k))
        rows = [f"{k} | {allowed[k].table} | {allowed[k].label} | "
                f"{json.dumps(list(env.item_profile(k))[: self.top_k], ensure_ascii=False)}" for k in keys]
        kinds = ", ".join(ENTITY_KINDS)
        budget = self.llm.list_budget(prompt.render(items="", kinds=kinds, segment=seg_text))
        pages = pack_pages(rows, budget, MAX_PROMPT_ITEMS)
        self.llm.count("patient_extraction_pages", len(pages))
        found: list[Entity] = []
        usages, raws, failures = [], [], []
        n = 0
        while pages:
            page = pages.pop(0)
            text = prompt.render(items="\n".join(rows[i] for i in page), kinds=kinds, segment=seg_text)
            value, usage, r, failure = self.llm.ask(text, ENTITIES_SCHEMA, stage="patient_extraction",
                                                    note_id=ctx.note_id)
            usages.append(usage)
            if len(page) > 1 and is_context_overflow(failure):  # denser tokenizer than estimated
                self.llm.count("patient_extraction_pages_split")
                pages[:0] = [page[:len(page) // 2], page[len(page) // 2:]]
                continue
            n += 1
            page_allowed = {keys[i]: allowed[keys[i]] for i in page}
            entities, notes = _entities_from(value, ctx, segment, page_allowed, [*known, *found], "patient",
                                             f"p{n}_" if n > 1 else "p", self.llm)
            found.extend(entities)
            raws.extend(r)
            failures.extend([failure, *notes])
        return stage_output(tuple(found), usages, [prompt.prompt_id], failures, raws)


class LLMOntologyExtractor:
    """Stage 4: group -> subgroup -> item narrowing over L \\ L_P (paper §4.2, Figures 22-23)."""

    def __init__(self, llm: LLMCaller) -> None:
        self.llm = llm

    def _select(self, choices: Sequence[str], seg_text: str, note_id: str) -> tuple[list[str], Usage, tuple[str, ...],
                                                                                     str | None]:
        prompt = get_prompt("ontology_select_groups")
        listing = "\n".join(f"- {c}" for c in choices)
        value, usage, raws, failure = self.llm.ask(prompt.render(choices=listing, segment=seg_text), SELECT_SCHEMA,
                                                   stage="ontology_extraction", note_id=note_id)
        matcher = NameMatcher(choices)
        matched = [matcher.match(x) for x in (value or {}).get("selected", ())]
        self.llm.count("group_names_fuzzy_matched", sum(how in ("folded", "fuzzy") for _, how in matched))
        self.llm.count("group_names_dropped", sum(how == "none" for _, how in matched))
        picked = [m for m, _ in matched if m is not None]
        return list(dict.fromkeys(picked)), usage, raws, failure

    def __call__(self, ctx: NoteContext, env: StageEnv, segment: Segment, timeline: Timeline,
                 known: tuple[Entity, ...]) -> StageOutput[tuple[Entity, ...]]:
        onto = env.ontology
        if onto is None:
            return StageOutput((), failures=("no ontology loaded; ontology-guided extraction skipped",))
        seg_text = numbered(ctx.lines[segment.start_line:segment.end_line + 1], segment.start_line)
        p_sel, p_ext = get_prompt("ontology_select_groups"), get_prompt("extract_ontology")
        groups, u1, r1, f1 = self._select(onto.group_names, seg_text, ctx.note_id)
        usages, raws, failures, pids = [u1], list(r1), [f1], [p_sel.prompt_id]
        if not groups:
            return stage_output((), usages, pids, failures, raws)
        # group names contain "/" themselves, so the pair is written with an arrow
        sub_choices = {f"{g} -> {s}": (g, s) for g in groups for s in onto.subgroups(g)}
        subs, u2, r2, f2 = self._select(list(sub_choices), seg_text, ctx.note_id)
        usages.append(u2)
        raws.extend(r2)
        failures.append(f2)
        pids.append(p_sel.prompt_id)
        patient_keys = set(ctx.patient_item_keys)
        cands = []
        for choice in subs:
            g, s = sub_choices[choice]
            cands.extend(i for i in onto.items_in(g, s) if i.key not in patient_keys)
        if not cands:
            return stage_output((), usages, pids, failures, raws)
        known_text = "\n".join(f"line {e.line}: {e.text} = {e.value or ''} -> {', '.join(e.item_keys)}"
                               for e in known) or "(none)"
        kinds = ", ".join(ENTITY_KINDS)
        # the selected subgroups bound the candidates; past one prompt's room, the most related
        cands = _rank_by_overlap(cands, seg_text)
        rows = [f"{i.key} | {i.table} | {i.label}" for i in cands]
        first = pack_pages(rows, self.llm.list_budget(p_ext.render(items="", known=known_text, kinds=kinds,
                                                                   segment=seg_text)), MAX_PROMPT_ITEMS)[0]
        if len(first) < len(cands):
            failures.append(f"{len(cands) - len(first)} less related candidate items left out of the prompt")
            cands, rows = cands[:len(first)], rows[:len(first)]
        allowed = {i.key: ItemRef(i.table, i.label, _itemid(i.key)) for i in cands}
        text = p_ext.render(items="\n".join(rows), known=known_text, kinds=kinds, segment=seg_text)
        value, u3, r3, f3 = self.llm.ask(text, ENTITIES_SCHEMA, stage="ontology_extraction", note_id=ctx.note_id)
        entities, notes = _entities_from(value, ctx, segment, allowed, known, "ontology", "o", self.llm)
        return stage_output(entities, [*usages, u3], [*pids, p_ext.prompt_id], [*failures, f3, *notes], [*raws, *r3])


_WORD = re.compile(r"[a-z][a-z0-9]+")


def _overlap_scorer(text: str) -> Callable[[Any], int]:
    """Score of an item (anything with a ``label``): label words shared with `text`, twice,
    plus shared 4-letter prefixes."""
    words = set(_WORD.findall(text.lower()))
    prefixes = {w[:4] for w in words if len(w) >= 4}

    def score(item: Any) -> int:
        label = set(_WORD.findall(item.label.lower()))
        return 2 * len(label & words) + len({w[:4] for w in label if len(w) >= 4} & prefixes)

    return score


def _rank_by_overlap(cands: Sequence[Any], text: str) -> list[Any]:
    """Candidates whose label shares words (or a 4-letter prefix) with the segment first:
    a subgroup of real MIMIC can hold thousands of items (ICD titles), more than a prompt."""
    score = _overlap_scorer(text)
    return sorted(cands, key=lambda i: -score(i))


def _itemid(key: str) -> int | str:
    try:
        _, item = split_item_key(key)
    except ValueError:
        return key
    return int(item) if item.isdigit() else item


# --- 5. scope filter ------------------------------------------------------------------------

def scope_status(answers: Mapping[str, Any]) -> tuple[str, list[str]]:
    """Status from the question answers: past (ED, history, earlier stay), plan, or active;
    statements the tables cannot hold (opinions, totals, refusals, ...) are set aside as past."""
    yes = [q for q, a in answers.items() if a is True or str(a).strip().lower() in ("yes", "true")]
    if any(q in yes for q in _PAST_QUESTIONS):
        return "past", yes
    if "plan" in yes:
        return "plan", yes
    if any(q in yes for q in _UNCHECKABLE_QUESTIONS):
        return "past", yes
    return "active", yes


class LLMScopeFilter:
    def __init__(self, llm: LLMCaller) -> None:
        self.llm = llm

    def __call__(self, ctx: NoteContext, env: StageEnv, segment: Segment, timeline: Timeline,
                 entities: tuple[Entity, ...]) -> StageOutput[tuple[ScopeDecision, ...]]:
        if not entities:
            return StageOutput(())
        prompt = get_prompt("scope_filter")
        listing = "\n".join(f"{e.entity_id} | {e.line} | {e.text} | {e.value or ''}" for e in entities)
        anchors = "\n".join(f"{a.name}: {a.time}" for a in timeline.anchors) or "(none)"
        text = prompt.render(anchors=anchors, section=segment.section, entities=listing,
                             segment=numbered(ctx.lines[segment.start_line:segment.end_line + 1], segment.start_line))
        value, usage, raws, failure = self.llm.ask(text, SCOPE_SCHEMA, stage="scope", note_id=ctx.note_id)
        ids = {e.entity_id for e in entities}
        out = []
        for d in (value or {}).get("decisions", ()):
            eid = str(d.get("entity_id"))
            if eid not in ids:
                continue
            answers = d.get("answers") if isinstance(d.get("answers"), Mapping) else None
            if answers:
                status, yes = scope_status(answers)
                reason = str(d.get("reason") or "") or (f"yes to: {', '.join(yes)}" if yes else "current stay")
            else:
                status = str(d.get("status") or "active").lower()
                status = status if status in ("past", "active", "plan") else "active"
                reason = str(d.get("reason") or "")
            out.append(ScopeDecision(eid, status, reason, tuple(str(c) for c in d.get("cues") or ())))
        return stage_output(tuple(out), [usage], [prompt.prompt_id], [failure], raws)


# --- Semantic_Search, LLM-backed (paper Appendix C.1) -------------------------------------------

RANKED_SCHEMA = object_schema({"ranked": {"type": "array", "items": object_schema(
    {"key": {"type": "string"}, "score": {"type": "number"}}, ["key"])}}, ["ranked"])


class LLMSemanticRanker:
    """The paper's Semantic_Search: the model picks, from the tools' candidate items, those
    that record a note term's concept. Plugged into ``ehrlib.tools.make_toolset`` as its
    ``semantic_ranker``; its calls are logged under stage ``semantic_search``."""

    def __init__(self, llm: LLMCaller) -> None:
        self.llm = llm

    def __call__(self, query: str, candidates: Sequence[Any], k: int) -> list[tuple[str, float]]:
        if not candidates:
            return []
        prompt = get_prompt("semantic_search")
        listing = "\n".join(f"{c.key} | {c.table} | {c.label} | {c.category or ''}" for c in candidates)
        value, _, _, _ = self.llm.ask(prompt.render(query=query, items=listing, k=str(k)), RANKED_SCHEMA,
                                      stage="semantic_search", note_id=None)
        keys = {c.key for c in candidates}
        out = []
        for r in (value or {}).get("ranked", ())[:k]:
            key = str(r.get("key"))
            if key in keys:
                out.append((key, min(1.0, max(0.0, float(r.get("score", 0.5))))))
        return out
