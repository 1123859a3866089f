r"""Offline stages 1-4: segmentation, temporal anchors, and two-step entity extraction.

Extraction follows the paper's two steps (§4.2) with rules instead of an LLM:

1. *Patient-specific* (L_P): a candidate mention (:mod:`.mentions`) is aligned to the
   patient's own items (``NoteContext.patient_items``) by the concept's label pattern and
   table (``offline_lexicon.yaml``), or, for drugs, by the generic name inside the
   patient's order/infusion labels ("zosyn" -> "Piperacillin/Tazobactam (Zosyn)").
2. *Ontology-guided* (L \ L_P): what found no patient item is aligned through
   ``Lexical_Search`` (n-grams + abbreviations + brand -> generic), the same tool the LLM
   uses, keeping items of the concept's tables; such an entity refers to an item the
   patient has no record of, which verification then reports as missing.

Alignment itself is :mod:`.align`; candidates that are no statements are dropped by the
rules of :mod:`.precision` and recorded, with their rule ids, in the stage output.
An entity's window is the time expression of its own clause when there is one, else the
segment's default window (Appendix B.4).
"""
from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import replace

from ehrlib.corpus.records import ItemRef, TimeSpan
from ehrlib.pipeline.claims import NumericClaim
from ehrlib.pipeline.offline.align import align, ontology_items
from ehrlib.pipeline.offline.checkable import not_checkable
from ehrlib.pipeline.offline.clauses import has_break, mask_parentheticals
from ehrlib.pipeline.offline.event_items import EventForm
from ehrlib.pipeline.offline.findings_data import data_findings, narrow_by_modality, superseded
from ehrlib.pipeline.offline.icd_match import (
    ICD_TABLES,
    NO_CONCEPT_RULE,
    names_icd_concept,
    names_icd_concept_strictly,
    one_title_states,
)
from ehrlib.pipeline.offline.lab_categories import categorical_results
from ehrlib.pipeline.offline.lab_results import (
    catalog_fluids,
    dictionary_results,
    prose_fluid,
    prose_specimen_items,
    record_specimen_items,
)
from ehrlib.pipeline.offline.lab_specimens import (
    default_specimen_items,
    names_specimen,
    specimen_items,
    statement_clause,
)
from ehrlib.pipeline.offline.lexicon import Lexicon, load_lexicon
from ehrlib.pipeline.offline.line_sites import with_site_items
from ehrlib.pipeline.offline.mention import Mention
from ehrlib.pipeline.offline.mentions import find_mentions
from ehrlib.pipeline.offline.note_patient import absent as _absent
from ehrlib.pipeline.offline.note_patient import patient_data as _patient_data
from ehrlib.pipeline.offline.paragraphs import Paragraph, paragraphs
from ehrlib.pipeline.offline.precision import (
    TABLE_ABSENT,
    DroppedMention,
    is_allergy_paragraph,
    is_drug_class,
    split_non_statements,
    uncheckable,
)
from ehrlib.pipeline.offline.procedures import (
    aside_procedures,
    merge_entry_fragments,
    procedure_mentions,
    prose_procedure_mentions,
)
from ehrlib.pipeline.offline.prose_diagnoses import reads_prose, split_listed, with_prose_diagnoses
from ehrlib.pipeline.offline.results_blocks import block_time
from ehrlib.pipeline.offline.routing import tables_for_section
from ehrlib.pipeline.offline.rule import Rule
from ehrlib.pipeline.offline.scope import presentation_cue, tells_presentation
from ehrlib.pipeline.offline.sections import note_time_context, segment_lines
from ehrlib.pipeline.offline.specimen_scope import default_fluid, scoped_fluid
from ehrlib.pipeline.offline.statement_time import (
    bounded,
    ends_change,
    in_aside,
    is_stamped,
    premodifies,
    reaches,
    stamp_ref,
)
from ehrlib.pipeline.offline.status_codes import billed_status_mention
from ehrlib.pipeline.offline.stay_problems import concept_key, concept_tests, stay_concept, with_stay_problems
from ehrlib.pipeline.offline.timex import TimeContext, day_window, find_anchors, resolve_line
from ehrlib.pipeline.records import Entity, Segment, TimeRef
from ehrlib.pipeline.stages import NoteContext, StageEnv, StageOutput, Timeline

__all__ = ["offline_segmenter", "offline_anchors", "patient_extractor", "ontology_extractor", "time_context",
           "diagnosis_mentions", "VALUE_NOT_DATE"]

_WIDEN = 1.0


def _note_day(ctx: NoteContext) -> str | None:
    return (ctx.note.charttime or ctx.chartdate or ctx.note.chartdate or "")[:10] or None


def time_context(ctx: NoteContext) -> TimeContext:
    """The note's anchors and reference day for resolving time expressions."""
    extra: dict[str, str | None] = {}
    if ctx.icu_windows:
        extra["icu_admission"] = ctx.icu_windows[0].start
    if ctx.surgery_time:
        extra["surgery"] = ctx.surgery_time  # the first OR event: what "POD 2" counts from
    return note_time_context(ctx.note_type, ctx.admittime, ctx.dischtime, _note_day(ctx), extra, _WIDEN,
                             ctx.icu_windows)


def offline_segmenter(ctx: NoteContext, env: StageEnv) -> StageOutput[tuple[Segment, ...]]:
    """Stage 1: section headers, problem headers and day markers (:mod:`.sections`)."""
    return StageOutput(segment_lines(ctx.lines, ctx.note_type, ctx.admission, _note_day(ctx), time_context(ctx),
                                     _WIDEN))


def offline_anchors(ctx: NoteContext, env: StageEnv, segments: tuple[Segment, ...]) -> StageOutput[Timeline]:
    """Stage 2: table anchors + note anchors (surgery), then every line's expressions;
    "the following day" counts from the previous expression of the same segment.
    """
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


# --- entities -----------------------------------------------------------------------------------

#: the value of a susceptibility mention (.microbiology): its interpretation
_LEVELS = ("S", "R", "I")


def _governing_ref(m: Mention, refs: Sequence[TimeRef], text: str, others: Sequence[Mention]) -> TimeRef | None:
    """The time expression a mention's statement carries.

    A time right after the statement ("K 3.1 on [**10-23**]") governs it unless another
    statement, set off by a comma, stands between; a time before it ("On [**10-23**] he
    was intubated") governs what follows unless it is the post-modifier of an earlier
    statement ("WBC 21.3 on [**2-8**], blood cultures negative": the date is the WBC's).
    A time inside another statement's span is that statement's. Sentence ends (. ;)
    always break the link.
    """
    def same_sentence(a: int, b: int) -> bool:
        return not has_break(text[a:b], "sentence")

    if is_stamped(text):
        return stamp_ref(text, refs)  # a results record: its stamp times every value (.statement_time)
    if m.kind == "microbiology" and (m.value in _LEVELS or m.value == m.text):
        # a susceptibility (its value the level), a further organism or a "pan-sensitive" (its
        # value its own words) is its culture's fact: the culture's time ("MSSA bacteremia
        # [**4-2**] (oxa S)"; "Sputum [**5-5**] Pseudomonas; also Staph aureus"); a semicolon
        # inside the report does not end it ("S to cefepime; R to cipro", .microsens)
        fact = m.value in _LEVELS
        owner = max((o for o in others if o.kind == "microbiology" and o.end <= m.start and o.value not in _LEVELS
                     and (fact or o.value != o.text)
                     and not has_break(text[o.end:m.start].replace(";", ","), "sentence")),
                    key=lambda o: o.end, default=None)
        if owner is not None:
            return _governing_ref(owner, refs, text, others)
    spans = sorted((r for r in refs if r.span is not None), key=lambda r: r.span[0])  # type: ignore[index]
    for r in spans:
        if m.start <= r.span[0] < m.end:  # type: ignore[index]
            return r  # inside the statement: "AFib currently in AF with RVR"
    masked = mask_parentheticals(text)  # a time inside an aside dates the aside only (.statement_time)
    spans = [r for r in spans if not in_aside(text, r.span, m.start, masked)]  # type: ignore[arg-type]
    for r in spans:
        a = r.span[0]  # type: ignore[index]
        if a >= m.end and a - m.end <= 60 and same_sentence(m.end, a):
            if any(o is not m and o.start <= a < o.end for o in others):
                continue  # the time inside another statement's phrase is its own ("off by 1130", "(1.3 yesterday)")
            between = [o for o in others if o is not m and m.end <= o.start < a]
            if any("," in text[m.end:o.start] for o in between):
                continue
            if not reaches(text, m.end, r.span) or any(  # type: ignore[arg-type]
                    o.concept == m.concept and ends_change(text, m.value or "", o.value or "", m.end, o.start)
                    for o in between):
                break  # another clause's time, or the end value's of a change "from A to B <time>" (.statement_time)
            return r
    for r in reversed(spans):
        a, b = r.span  # type: ignore[misc]
        if masked[a] == " " != text[a] and ")" in text[b:m.start]:
            continue  # a time alone in parentheses annotates the words before it, never a later statement
        if b <= m.start and m.start - b <= 120 and same_sentence(b, m.start):
            # the post-modifier of an earlier statement, or a time inside another finding's own
            # words ("ST overnight -> SR this AM") or a culture's ("BCx from 3/2 grew E. coli,
            # started on cipro"): that statement's time, not this one's
            claimed = any(o is not m and ((o.end <= a and a - o.end <= 40 and same_sentence(o.end, a)
                                           and "," not in text[o.end:a])
                                          or (o.kind in ("finding", "microbiology") and o.start < a and b <= o.end)
                                          or (o.kind == "microbiology" and premodifies(text, (a, b), o.start)))
                          for o in others)
            if not claimed:
                return r
    return None


def _entity(m: Mention, seg: Segment, items: list[tuple[ItemRef, str]], window: TimeSpan | None,
            time_text: str | None, source: str) -> Entity:
    value = m.value.replace("`", "").strip() if m.value else m.value
    return Entity(
        entity_id=f"L{m.line}:{m.start}", line=m.line, text=m.text.replace("`", "").strip(),
        kind=m.kind,  # type: ignore[arg-type]  # a mention's kind is one of ENTITY_KINDS
        segment=seg.index, value=value or None, claim=m.claim.placed(m.concept, seg.section),
        items=tuple(it for it, _ in items), item_keys=tuple(k for _, k in items),
        time_text=time_text, window=window,
        source=source,  # type: ignore[arg-type]  # "patient" or "ontology", the step
        span=(m.start, m.end), group=m.group)


_DX_LABEL = re.compile(r"^\s*(?:primary|secondary|discharge|final|other)(?:\s+diagnos[ie]s)?\s*:", re.I)
_DX_LINE = re.compile(r"^\s*(?:\d{1,2}[.)]\s*|[-*•]\s*|#\s*)?(?P<dx>[A-Za-z][^:]{2,90}?)\s*$")


def diagnosis_mentions(lines: Sequence[str], seg: Segment) -> list[Mention]:
    """Each listed diagnosis of a discharge-diagnosis section (insurance claims, Appendix B.3)."""
    out: list[Mention] = []
    for i in range(seg.start_line, seg.end_line + 1):
        text = lines[i]
        if i == seg.start_line:
            text = text.split(":", 1)[1] if ":" in text else ""
        # "Primary: Sepsis" / "Secondary diagnoses: ..." label the entries that follow
        text = _DX_LABEL.sub(lambda x: " " * len(x.group(0)), text)
        m = _DX_LINE.match(text)
        if not m or re.match(r"\s*(primary|secondary|discharge|final)\b", m.group("dx"), re.I):
            continue
        off = lines[i].find(m.group("dx"))
        out.append(Mention(i, off, off + len(m.group("dx")), m.group("dx").strip(), "diagnosis", "diagnosis",
                           m.group("dx").strip()))
    return out


def _found(text: str, line: int, lex: Lexicon, drug_names: Sequence[str], section: str,
           forms: Sequence[EventForm] = (), tests: tuple[tuple[re.Pattern[str], str], ...] = ()) -> list[Mention]:
    """:func:`.mentions.find_mentions`, each paragraph scanned once for both extraction steps."""
    if lex is not load_lexicon():
        return find_mentions(text, line, lex, drug_names, section, forms, tests)
    return list(_found_once(text, line, tuple(drug_names), section, tuple(forms), tests))


@functools.lru_cache(maxsize=16384)
def _found_once(text: str, line: int, drug_names: tuple[str, ...], section: str, forms: tuple[EventForm, ...],
                tests: tuple[tuple[re.Pattern[str], str], ...]) -> tuple[Mention, ...]:
    # the patient step and the ontology step read the same paragraphs with the same patient
    # words: a pure function of its arguments, so the second step takes the first's mentions
    return tuple(find_mentions(text, line, load_lexicon(), drug_names, section, forms, tests))


def _mentions(ctx: NoteContext, seg: Segment, lex: Lexicon, drug_names: list[str],
              dropped: list[DroppedMention], forms: Sequence[EventForm] = (),
              env: StageEnv | None = None,
              tests: tuple[tuple[re.Pattern[str], str], ...] = (),
              listing_env: StageEnv | None = None) -> list[tuple[Paragraph, list[Mention]]]:
    """Mentions per paragraph, positions in paragraph text (line = first line); the
    non-statements filtered out are appended to ``dropped`` (line and column of the note).
    With ``env``, diagnoses named in a progress note's prose are added (.prose_diagnoses);
    with ``listing_env`` (both steps, so that they see the same statements), a listed
    procedure entry is read whole against the ICD dictionary (.procedures).
    """
    prose = procedure_prose = None
    if env is not None and reads_prose(ctx.note_type, seg.section):
        tools = env.toolset
        prose = functools.partial(names_icd_concept_strictly, tools)
        procedure_prose = functools.partial(names_icd_concept_strictly, tools, tables=("procedures_icd",))
        stay = functools.partial(stay_concept, *concept_tests(tools))
    if seg.section == "discharge_diagnosis":
        found = diagnosis_mentions(ctx.lines, seg)
        if env is not None:
            names = functools.partial(names_icd_concept, env.toolset, tables=("diagnoses_icd",))
            whole = functools.partial(one_title_states, env.toolset, tables=("diagnoses_icd",))
            found = [part for m in found for part in split_listed(m, names, whole)]
        return [(Paragraph((m.line,), (0,), ctx.lines[m.line]), [m]) for m in found]
    out: list[tuple[Paragraph, list[Mention]]] = []
    stated: set[frozenset[str]] = set()  # the diagnoses the segment stated so far
    if seg.section == "procedures":
        per_line: list[Mention] = []
        for i in range(seg.start_line, seg.end_line + 1):
            per_line += [m for m in _found(ctx.lines[i], i, lex, drug_names, seg.section)
                         if m.kind in ("procedure", "medication", "infusion")]
        per_line += procedure_mentions(ctx.lines, seg, per_line)
        for i in range(seg.start_line, seg.end_line + 1):
            line_ms = [m for m in per_line if m.line == i]
            if listing_env is not None:
                names = functools.partial(names_icd_concept, listing_env.toolset, tables=("procedures_icd",))
                # three in four of the entry's words stated by one title: one procedure
                whole = functools.partial(one_title_states, listing_env.toolset, tables=("procedures_icd",),
                                          share=0.75)
                line_ms = merge_entry_fragments(ctx.lines[i], line_ms, whole)
                line_ms = sorted(line_ms + aside_procedures(i, ctx.lines[i], line_ms, names),
                                 key=lambda m: (m.start, m.end))
            ms, gone = split_non_statements(ctx.lines[i], line_ms)
            dropped.extend(gone)
            if ms:
                out.append((Paragraph((i,), (0,), ctx.lines[i]), ms))
        return out
    for para in paragraphs(ctx.lines, seg):
        if not para.text.strip():
            continue  # a blank line holds no mention (and a note may hold 100,000 of them)
        if is_allergy_paragraph(ctx.lines, para.lines[0]):
            continue  # "Allergies: Penicillins (rash)": reactions, not this stay's drugs
        found = _found(para.text, para.lines[0], lex, drug_names, seg.section, forms, tests)
        ms, gone = split_non_statements(para.text, found)
        if prose is not None:
            ms = with_prose_diagnoses(para.text, para.lines[0], ms, found, prose)
            ms = with_stay_problems(para.text, para.lines[0], ms, found, stay, frozenset(stated))
            stated |= {concept_key(m.value or m.text) for m in ms if m.kind == "diagnosis"}
        if procedure_prose is not None:
            done = prose_procedure_mentions(para.text, para.lines[0], found, procedure_prose)
            ms = sorted([*ms, *done], key=lambda m: (m.start, m.end)) if done else ms
        for d in gone:
            line, col = para.locate(d.start)
            dropped.append(replace(d, line=line, start=col, end=col + (d.end - d.start)))
        if ms:
            out.append((para, ms))
    return out


def _extract(ctx: NoteContext, env: StageEnv, seg: Segment, timeline: Timeline, known: tuple[Entity, ...],
             step: str) -> StageOutput[tuple[Entity, ...]]:
    lex = load_lexicon()
    pairs, drug_names, recorded, forms, tests = _patient_data(ctx, env)
    seen = {(e.line, e.span) for e in known}
    tctx = time_context(ctx)
    out: list[Entity] = []
    previous: TimeSpan | None = None
    dropped: list[DroppedMention] = []
    fluids = catalog_fluids(env.toolset)  # d_labitems fluid of a lab item (.lab_results)
    absent: frozenset[str] | None = None  # the manifest's missing tables, read when first needed
    for para, mentions in _mentions(ctx, seg, lex, drug_names, dropped, forms,
                                    env if step == "ontology" else None, tests, env):
        if tctx.narrative:
            previous = None  # a summary's paragraph tells its own days: a date does not carry into the next
        refs = bounded(para.text, resolve_line(para.text, para.lines[0], tctx, timeline.anchors, previous),
                       stay_start=tctx.get("admission"), reference=tctx.reference)
        refs = [r for r in refs if not _value_read_as_date(r, mentions)]
        if refs:
            previous = refs[-1].window
        counts: dict[tuple[str, str], int] = {}
        for m in mentions:
            counts[(m.text.lower(), m.concept)] = counts.get((m.text.lower(), m.concept), 0) + 1
        for m in mentions:
            line, col = para.locate(m.start)
            span = (col, col + (m.end - m.start))
            if (line, span) in seen:
                continue
            # a billed code has no time but its admission's: a diagnosis takes no date of its sentence
            ref = None if m.kind == "diagnosis" else _governing_ref(m, refs, para.text, mentions)
            if m.kind != "diagnosis":  # a results block's stamp dates its lines (.results_blocks)
                ref = block_time(ctx.lines, line, ref, para.locate(ref.span[0]) if ref and ref.span else None, tctx,
                                 timeline.anchors, text=para.text, pos=m.start)
            placed = Mention(line, span[0], span[1], m.text, m.kind, m.concept, m.value, m.claim, m.group)
            if counts.get((m.text.lower(), m.concept), 0) > 1 and m.value:
                # "AM Hct 19.3 ... repeat Hct 31.2": two statements, kept apart by their values
                placed = Mention(line, span[0], span[1], f"{m.text} {m.value}".replace("`", "")[:60], m.kind,
                                 m.concept, m.value, m.claim, m.group)
            # aligned by the words that name it: a value appended to tell two statements apart is no part of the name
            items = align(Mention(line, span[0], span[1], m.text, m.kind, m.concept, m.value, m.claim, m.group), lex,
                          pairs)
            if m.kind in ("measurement", "range", "output") and items:  # "art BP": arterial; "JP medial": that drain
                items = narrow_by_modality(f"{m.text} {m.value or ''}", items)
            if m.kind == "procedure":  # "L radial A-line": the side is charted in the line's site item
                items = with_site_items(para.text[max(0, m.start - 25):m.end], para.text[m.end:m.end + 20],
                                        getattr(m.claim, "side", None), items, pairs)
            if m.kind in ("measurement", "trend", "range"):  # "Temp 38.0 on that gas", "drain fluid: bili 7.2"
                items = specimen_items(statement_clause(para.text, m.start, m.end), lex.concepts.get(m.concept),
                                       pairs, items)
                concept = lex.concepts.get(m.concept)  # "urine Na 178", "UA: WBC 3": the urine item
                items = record_specimen_items(ctx.lines, line, m.text, items, pairs, env.item_profile, fluids,
                                              concept.items if concept else None)
                items = prose_specimen_items(para.text, m.start, m.text, concept.items if concept else None, items,
                                             pairs, env.item_profile, fluids)
                if not names_specimen(ctx.lines[line], para.text, m.start, m.end, m.text) and \
                        scoped_fluid(ctx.lines, line) == default_fluid():  # "WBC": the blood item
                    items = default_specimen_items(items, fluids)
            needs_items = m.kind not in ("interpretation", "diagnosis")
            if step == "patient":
                if not needs_items or not items:
                    continue  # criterion states, diagnoses and unmatched mentions: ontology step
            else:
                if needs_items and items:
                    continue  # the patient-specific step has it
                if is_drug_class(m):
                    continue  # "on abx" with no member drug in the patient's tables: nothing to check
                if needs_items:
                    items = ontology_items(env, placed, lex)
                elif m.kind == "diagnosis" and not names_icd_concept(
                        env.toolset, m.value or placed.text, tables_for_section(seg.section) or ICD_TABLES):
                    dropped.append(DroppedMention(line, span[0], span[1], placed.text, m.kind, m.concept,
                                                  NO_CONCEPT_RULE))
                    continue  # names no ICD concept: no diagnosis statement to check
                if absent is None:
                    absent = _absent(env)
                if uncheckable(m, [it for it, _ in items], absent, lex):
                    status = billed_status_mention(placed)  # "DNR": billed as V49.86 / Z66 (.status_codes)
                    if status is None:
                        dropped.append(DroppedMention(line, span[0], span[1], m.text, m.kind, m.concept,
                                                      TABLE_ABSENT.rule_id))
                        continue
                    m, placed, items = status, status, []
            if why := not_checkable(placed, (it for it, _ in items), recorded, para.text[m.end:], step,
                                   ctx.note_type, para.text[max(0, m.start - 30):m.start]):
                dropped.append(DroppedMention(line, span[0], span[1], m.text, m.kind, m.concept, why))
                continue
            window, ttext = (ref.window, ref.text) if ref is not None else (seg.default_window, None)
            if ref is None and tells_presentation(m.kind, seg.section, ctx.note_type) and \
                    (admit := tctx.get("admission")) is not None and presentation_cue(para.text, m.start):
                # "In the ED a lactate of 2.4 was drawn; BNP 900": the presentation's day (scope.py)
                window = day_window(admit, tctx.widen_days, tctx.widen_days)
            if (ref is not None and isinstance(m.claim, NumericClaim) and m.claim.trend is not None
                    and m.claim.trend.series and seg.default_window is not None):
                # "WBC 11.7, up from 9.2 yesterday": the series spans the stated day and the note's
                window = _union(ref.window, seg.default_window)
            out.append(_entity(placed, seg, items, window, ttext, step))
    if step == "ontology":  # categorical findings the vocabulary lacks, aligned through the patient's data
        out += data_findings(ctx.lines, seg, pairs, env.item_profile, [(e.line, e.span) for e in (*known, *out)])
        out += categorical_results(ctx.lines, seg, pairs, env.item_profile,  # "Nitrite-NEG Leuks-LG"
                                   [(e.line, e.span) for e in (*known, *out)],
                                   lambda text, at: (prose_fluid(text, at) or (None,))[0])  # "UA: nitrite neg"
        out += dictionary_results(ctx.lines, seg, pairs, env.item_profile, fluids, (*known, *out),  # "VitB12-1214*"
                                  env.toolset)
    out = superseded(ctx.lines, seg, pairs, out)  # "Lungs: crackles at R base": the site phrase is the statement
    return StageOutput(tuple(out), dropped=tuple(dropped))


_BARE_NUMBERS = re.compile(r"[\d\s./-]+")


def _value_read_as_date(ref: TimeRef, mentions: Sequence[Mention]) -> bool:
    """A bare number pair inside a measurement's own value ("RR 5-23", "HR 11-25") is the
    value's range, not a month-day: it dates nothing, so it may not govern the line.
    """
    if ref.span is None or not _BARE_NUMBERS.fullmatch(ref.text):
        return False
    a, b = ref.span
    return any(m.kind in ("measurement", "range") and isinstance(m.claim, NumericClaim) and m.start <= a and b <= m.end
               for m in mentions)


VALUE_NOT_DATE = Rule("extract.value_not_date", "A bare number pair inside a measurement's own value (RR 5-23) is "
                      "the value's range, not a month and day, so it dates no statement.", _value_read_as_date)


def _union(a: TimeSpan, b: TimeSpan) -> TimeSpan:
    starts = [x for x in (a.start, b.start) if x]
    ends = [x for x in (a.end, b.end) if x]
    return TimeSpan(min(starts) if starts else None, max(ends) if ends else None)


def patient_extractor(ctx: NoteContext, env: StageEnv, segment: Segment, timeline: Timeline,
                      known: tuple[Entity, ...]) -> StageOutput[tuple[Entity, ...]]:
    """Stage 3: mentions aligned to the patient's own items (L_P)."""
    return _extract(ctx, env, segment, timeline, known, "patient")


def ontology_extractor(ctx: NoteContext, env: StageEnv, segment: Segment, timeline: Timeline,
                       known: tuple[Entity, ...]) -> StageOutput[tuple[Entity, ...]]:
    """Stage 4: the rest (criteria states, diagnoses, items the patient lacks) via Lexical_Search."""
    return _extract(ctx, env, segment, timeline, known, "ontology")

