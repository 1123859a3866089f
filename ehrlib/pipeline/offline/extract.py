"""Offline stages 1-4: segmentation, temporal anchors, and two-step entity extraction.

Extraction follows the paper's two steps (§4.2) with rules instead of an LLM:

1. *Patient-specific* (L_P): a candidate mention (:mod:`.mentions`) is aligned to the
   patient's own items (``NoteContext.patient_items``) by the concept's label pattern and
   table (``offline_lexicon.yaml``), or, for drugs, by the generic name inside the
   patient's order/infusion labels ("zosyn" -> "Piperacillin/Tazobactam (Zosyn)").
2. *Ontology-guided* (L \\ L_P): what found no patient item is aligned through
   ``Lexical_Search`` (n-grams + abbreviations + brand -> generic), the same tool the LLM
   uses, keeping items of the concept's tables; such an entity refers to an item the
   patient has no record of, which verification then reports as missing.

An entity's window is the time expression of its own clause when there is one, else the
segment's default window (Appendix B.4).
"""
from __future__ import annotations

import re
from typing import Any, Iterable, Sequence

from ehrlib.corpus.records import ItemRef, TimeSpan
from ehrlib.pipeline.offline.lexicon import Lexicon, load_lexicon
from ehrlib.pipeline.offline.mentions import Mention, find_mentions
from ehrlib.pipeline.offline.sections import note_time_context, segment_lines
from ehrlib.pipeline.offline.timex import TimeContext, find_anchors, resolve_line
from ehrlib.pipeline.records import Entity, Segment, TimeRef
from ehrlib.pipeline.stages import NoteContext, StageEnv, StageOutput, Timeline, item_key

__all__ = ["offline_segmenter", "offline_anchors", "patient_extractor", "ontology_extractor", "time_context",
           "drug_items", "concept_items", "diagnosis_mentions"]

_WIDEN = 1.0


def _note_day(ctx: NoteContext) -> str | None:
    return (ctx.note.charttime or ctx.chartdate or ctx.note.chartdate or "")[:10] or None


def time_context(ctx: NoteContext) -> TimeContext:
    extra: dict[str, str | None] = {}
    if ctx.icu_windows:
        extra["icu_admission"] = ctx.icu_windows[0].start
    return note_time_context(ctx.note_type, ctx.admittime, ctx.dischtime, _note_day(ctx), extra, _WIDEN)


def offline_segmenter(ctx: NoteContext, env: StageEnv) -> StageOutput[tuple[Segment, ...]]:
    """Stage 1: section headers, problem headers and day markers (:mod:`.sections`)."""
    return StageOutput(segment_lines(ctx.lines, ctx.note_type, ctx.admission, _note_day(ctx), time_context(ctx),
                                     _WIDEN))


def offline_anchors(ctx: NoteContext, env: StageEnv, segments: tuple[Segment, ...]) -> StageOutput[Timeline]:
    """Stage 2: table anchors + note anchors (surgery), then every line's expressions;
    "the following day" counts from the previous expression of the same segment."""
    tctx = time_context(ctx)
    lines = ctx.lines
    anchors = tuple(find_anchors(lines, tctx))
    refs: list[TimeRef] = []
    for seg in segments:
        previous: TimeSpan | None = None
        for i in range(seg.start_line, seg.end_line + 1):
            got = resolve_line(lines[i], i, tctx, anchors, previous)
            refs.extend(got)
            if got:
                previous = got[-1].window
    return StageOutput(Timeline(anchors, tuple(refs)))


# --- alignment ----------------------------------------------------------------------------------

def _patient_pairs(ctx: NoteContext) -> list[tuple[ItemRef, str]]:
    keys = ctx.patient_item_keys
    return [(it, keys[i] if i < len(keys) else item_key(it.table, it.itemid if it.itemid is not None else it.label))
            for i, it in enumerate(ctx.patient_items)]


def concept_items(concept_tables: Sequence[str], pattern: re.Pattern[str] | None,
                  pairs: Iterable[tuple[ItemRef, str]]) -> list[tuple[ItemRef, str]]:
    """The patient's items of a concept: in its tables, label matching its pattern."""
    if pattern is None:
        return []
    return [(it, k) for it, k in pairs if it.table in concept_tables and pattern.search(it.label or "")]


_DRUG_TABLES = ("prescriptions", "inputevents_mv", "inputevents_cv", "emar")


def drug_items(generic_names: Sequence[str], pairs: Iterable[tuple[ItemRef, str]]) -> list[tuple[ItemRef, str]]:
    """Order/infusion items whose label contains one of the generic names (word start)."""
    pats = [re.compile(r"(?<![a-z])" + re.escape(g.split()[0][:12]), re.I) for g in generic_names if g]
    return [(it, k) for it, k in pairs if it.table in _DRUG_TABLES and any(p.search(it.label or "") for p in pats)]


def _micro_items(pairs: Iterable[tuple[ItemRef, str]]) -> list[tuple[ItemRef, str]]:
    return [(it, k) for it, k in pairs if it.table == "microbiologyevents" and ":spec:" in k]


def _align(m: Mention, lex: Lexicon, pairs: list[tuple[ItemRef, str]]) -> list[tuple[ItemRef, str]]:
    if m.concept == "drug" or m.kind in ("medication", "infusion"):
        names = list(m.attributes.get("drugs", ()))
        concept = lex.concepts.get(m.concept)
        if concept is not None and concept.items is not None:  # blood products
            return concept_items(concept.tables, concept.items, pairs)
        return drug_items(names, pairs)
    if m.kind == "microbiology":
        spec = re.compile(str(m.attributes.get("specimen", "")), re.I)
        return [(it, k) for it, k in _micro_items(pairs) if spec.search(it.label or k)]
    if m.kind == "interpretation":
        return []  # the criterion names its items at verification (Get_Clinical_Criterion)
    concept = lex.concepts.get(m.concept)
    if concept is None:
        return []
    return concept_items(concept.tables, concept.items, pairs)


# --- entities -----------------------------------------------------------------------------------

def _clause_window(m: Mention, refs: Sequence[TimeRef], line_text: str, default: TimeSpan | None) -> tuple[TimeSpan | None, str | None]:
    """The time expression governing a mention: same clause, nearest (before preferred)."""
    best: tuple[int, TimeRef] | None = None
    for r in refs:
        if r.span is None:
            continue
        a, b = sorted((r.span[0], m.start)) if r.span[0] < m.start else (m.end, r.span[0])
        between = line_text[min(a, b):max(a, b)]
        if re.search(r"[.;]\s", between) or len(between) > 80:
            continue
        dist = abs(r.span[0] - m.start) + (0 if r.span[0] <= m.start else 5)
        if best is None or dist < best[0]:
            best = (dist, r)
    if best is None:
        return default, None
    return best[1].window, best[1].text


def _entity(m: Mention, seg: Segment, items: list[tuple[ItemRef, str]], window: TimeSpan | None,
            time_text: str | None, source: str) -> Entity:
    attrs: dict[str, Any] = dict(m.attributes)
    attrs["concept"] = m.concept
    attrs["section"] = seg.section
    return Entity(
        entity_id=f"L{m.line}:{m.start}", line=m.line, text=m.text, kind=m.kind, segment=seg.index,
        value=m.value, attributes=attrs, items=tuple(it for it, _ in items), item_keys=tuple(k for _, k in items),
        time_text=time_text, window=window, source=source, span=(m.start, m.end), group=m.group)  # type: ignore[arg-type]


_DX_LINE = re.compile(r"^\s*(?:\d{1,2}[.)]\s*|[-*•]\s*|#\s*)?(?P<dx>[A-Za-z][^:]{2,90}?)\s*$")


def diagnosis_mentions(lines: Sequence[str], seg: Segment) -> list[Mention]:
    """Each listed diagnosis of a discharge-diagnosis section (insurance claims, Appendix B.3)."""
    out: list[Mention] = []
    for i in range(seg.start_line, seg.end_line + 1):
        text = lines[i]
        if i == seg.start_line:
            text = text.split(":", 1)[1] if ":" in text else ""
        m = _DX_LINE.match(text)
        if not m or re.match(r"\s*(primary|secondary|discharge|final)\b", m.group("dx"), re.I):
            continue
        off = lines[i].find(m.group("dx"))
        out.append(Mention(i, off, off + len(m.group("dx")), m.group("dx").strip(), "diagnosis", "diagnosis",
                           m.group("dx").strip(), {}))
    return out


def _mentions(ctx: NoteContext, seg: Segment, lex: Lexicon, drug_names: list[str]) -> list[Mention]:
    if seg.section == "discharge_diagnosis":
        return diagnosis_mentions(ctx.lines, seg)
    out: list[Mention] = []
    for i in range(seg.start_line, seg.end_line + 1):
        out.extend(find_mentions(ctx.lines[i], i, lex, drug_names, seg.section))
    return out


def _extract(ctx: NoteContext, env: StageEnv, seg: Segment, timeline: Timeline, known: tuple[Entity, ...],
             step: str) -> StageOutput[tuple[Entity, ...]]:
    lex = load_lexicon()
    pairs = _patient_pairs(ctx)
    drug_names = [it.label for it, _ in pairs if it.table in _DRUG_TABLES]
    seen = {(e.line, e.span) for e in known}
    out: list[Entity] = []
    for m in _mentions(ctx, seg, lex, drug_names):
        if (m.line, (m.start, m.end)) in seen:
            continue
        items = _align(m, lex, pairs)
        needs_items = m.kind not in ("interpretation", "diagnosis")
        if step == "patient":
            if not needs_items or not items:
                continue  # criterion states, diagnoses and unmatched mentions: ontology step
        else:
            if needs_items and items:
                continue  # the patient-specific step has it
            if needs_items:
                items = _ontology_items(env, m, lex)
        line_text = ctx.lines[m.line]
        window, ttext = _clause_window(m, timeline.refs_on_line(m.line), line_text, seg.default_window)
        out.append(_entity(m, seg, items, window, ttext, step))
    return StageOutput(tuple(out))


def _ontology_items(env: StageEnv, m: Mention, lex: Lexicon) -> list[tuple[ItemRef, str]]:
    """Lexical_Search over the whole catalogue (L \\ L_P) for a mention the patient lacks."""
    tools = env.toolset
    if tools is None or "Lexical_Search" not in getattr(tools, "names", ()):
        return []
    concept = lex.concepts.get(m.concept)
    if m.kind in ("medication", "infusion"):
        queries = list(m.attributes.get("drugs", ()))[:2]
        tables = _DRUG_TABLES
        pattern = None
    elif concept is not None:
        queries = list(concept.search[:1]) or [m.text]
        tables = concept.tables
        pattern = concept.items
    else:
        return []
    found: list[tuple[ItemRef, str]] = []
    for q in queries:
        res = tools.call("Lexical_Search", {"query": q, "k": 10})
        for row in res.rows:
            table, label, key = row.get("table"), row.get("label") or "", row.get("key")
            if table not in tables or not key:
                continue
            if pattern is not None and not pattern.search(label):
                continue
            if pattern is None and not re.search(r"(?<![a-z])" + re.escape(q.split()[0][:12]), label, re.I):
                continue
            found.append((ItemRef(table, label, key.split(":", 1)[1]), key))
        if found:
            break
    return found[:3]


def patient_extractor(ctx: NoteContext, env: StageEnv, segment: Segment, timeline: Timeline,
                      known: tuple[Entity, ...]) -> StageOutput[tuple[Entity, ...]]:
    """Stage 3: mentions aligned to the patient's own items (L_P)."""
    return _extract(ctx, env, segment, timeline, known, "patient")


def ontology_extractor(ctx: NoteContext, env: StageEnv, segment: Segment, timeline: Timeline,
                       known: tuple[Entity, ...]) -> StageOutput[tuple[Entity, ...]]:
    """Stage 4: the rest (criteria states, diagnoses, items the patient lacks) via Lexical_Search."""
    return _extract(ctx, env, segment, timeline, known, "ontology")

