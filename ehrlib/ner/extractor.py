"""``--extraction ner``: the trained tagger decides which statements a segment holds.

The tagger only finds spans; verification needs each statement read (its kind, value,
parsed claim, aligned items and time window). On the offline backend a span is read by
the framework's own extraction of the same segment: the span takes the reading of the
framework entity it overlaps most, keeping the tagger's text and position. A span that
overlaps no framework entity has no reading the rule verifier could check; it is left
out and recorded in the stage's ``dropped`` list (rule ``ner.unread``), so the count is
visible. Framework entities no span overlaps are not extracted: recall and precision of
*which* statements are checked are the tagger's. On an LLM backend a span goes to the
verifier bare (text, line, segment window), as the paper's NER baselines do, and the
verifier aligns it with its tools.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from ehrlib.ner.bio import Span, tags_to_spans, tokenize
from ehrlib.ner.tagger import DEFAULT_MODEL, Tagger, load_tagger
from ehrlib.pipeline.offline.precision import DroppedMention
from ehrlib.pipeline.records import Entity, Segment
from ehrlib.pipeline.stages import Extractor, NoteContext, StageEnv, StageOutput, Timeline

__all__ = ["NerExtractor", "UNREAD_RULE", "segment_spans", "ner_extractor"]

UNREAD_RULE = "ner.unread"


def segment_spans(tagger: Tagger, lines: list[str], segment: Segment) -> list[Span]:
    """The tagger's spans on the lines of one segment."""
    out: list[Span] = []
    for i in range(segment.start_line, min(segment.end_line, len(lines) - 1) + 1):
        tokens = tokenize(lines[i])
        if tokens:
            out += tags_to_spans(i, lines[i], tokens, tagger.tag(lines[i], tokens))
    return out


def _overlap(span: Span, e: Entity) -> int:
    if e.line != span.line or e.span is None:
        return 0
    return max(0, min(span.end, e.span[1]) - max(span.start, e.span[0]))


@dataclass(frozen=True, eq=False)
class NerExtractor:
    """Stage 3 in place of the framework's two extraction steps (stage 4 is switched off)."""

    tagger: Tagger
    #: the framework's extraction steps that read a span (offline); empty = bare spans
    readers: tuple[Extractor, ...] = ()

    def __call__(self, ctx: NoteContext, env: StageEnv, segment: Segment, timeline: Timeline,
                 known: tuple[Entity, ...]) -> StageOutput[tuple[Entity, ...]]:
        """Entities of the tagger's spans in ``segment``."""
        spans = segment_spans(self.tagger, ctx.lines, segment)
        if not self.readers:
            return StageOutput(tuple(
                Entity(entity_id=f"N{s.line}:{s.start}", line=s.line, text=s.text, kind="event",
                       segment=segment.index, window=segment.default_window, source="baseline",
                       span=(s.start, s.end)) for s in spans))
        framework: list[Entity] = []
        failures: list[str] = []
        for read in self.readers:
            got = read(ctx, env, segment, timeline, tuple(framework))
            framework += got.value
            failures += got.failures
        out: list[Entity] = []
        unread: list[DroppedMention] = []
        for s in spans:
            best = max(framework, key=lambda e: _overlap(s, e), default=None)
            if best is None or _overlap(s, best) == 0:
                unread.append(DroppedMention(s.line, s.start, s.end, s.text, "", "", UNREAD_RULE))
                continue
            out.append(dataclasses.replace(best, entity_id=f"N{s.line}:{s.start}", text=s.text,
                                           span=(s.start, s.end), segment=segment.index))
        return StageOutput(tuple(out), failures=tuple(failures), dropped=tuple(unread))


def ner_extractor(model: str | None, readers: tuple[Extractor, ...]) -> NerExtractor:
    """The stage for a run: the model folder named (or the bundled one) and its readers."""
    tagger, _ = load_tagger(Path(model) if model else DEFAULT_MODEL)
    return NerExtractor(tagger, readers)
