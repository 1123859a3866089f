"""Harsh and lenient LLM-as-a-judge evaluators (paper Section 5.2, Appendix F).

One model call per gold entity, with all of the note's predictions as candidates, the
cache-skipped ones listed apart ("already checked"), as in the paper's evaluator
prompts. The prompts (``ehrlib/prompts/judge_harsh.txt``, ``judge_lenient.txt``) are
our own wording of the paper's structure.

Parsing follows inspect_ai's model-graded scorers: the verdict is read from the *last*
``Result:`` (or ``GRADE:``) line, because models often restate the question or draft a
verdict before the final one. A reply without a readable verdict, or a call that failed
for good, is recorded as ``unparsed`` with the raw reply kept; the metrics count it
apart instead of scoring it wrong, so a flaky endpoint cannot masquerade as a weak method.
"""
from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Sequence
from typing import Any, Literal

from tqdm.auto import tqdm

from ehrlib.corpus.records import GoldEntity, Judgement, Note, Prediction
from ehrlib.errors import EhrlibError, EndpointUnreachable
from ehrlib.llm.client import run_sync
from ehrlib.llm.records import user
from ehrlib.prompting import PromptTemplate, load_prompt

__all__ = ["parse_verdict", "render_gold", "render_prediction",
           "render_judge_prompt", "judge_with_llm"]

log = logging.getLogger(__name__)
Mode = Literal["harsh", "lenient"]

_REASON_CHARS = 400


_VERDICT_LINE = re.compile(r"^[\s>*_#-]*(result|grade)[\s*_]*:[\s*_]*(.*?)[\s*_.]*$", re.IGNORECASE)
_MATCH_LINE = re.compile(r"^[\s>*_#-]*match[\s*_]*:[\s*_]*P?(\d+)\b", re.IGNORECASE)


def parse_verdict(reply: str) -> tuple[Literal["correct", "incorrect"] | None, int | None]:
    """(verdict, matched P-number) from a judge reply; verdict None when unreadable.

    Accepts ``Result: Correct|Incorrect`` and inspect_ai's ``GRADE: C|I``; the last
    such line wins. Anything else on that line (``Result: maybe``) is unreadable.
    """
    verdict: Literal["correct", "incorrect"] | None = None
    match_no = None
    for line in reply.splitlines():
        m = _VERDICT_LINE.match(line)
        if m:
            word = m.group(2).strip().strip("()[]'\"").lower()
            verdict = ("incorrect" if word in ("incorrect", "i") else
                       "correct" if word in ("correct", "c") else None)
        mm = _MATCH_LINE.match(line)
        if mm:
            match_no = int(mm.group(1))
    return verdict, match_no


def render_gold(g: GoldEntity) -> str:
    """A gold entity as the judge (and a human reviewer) reads it."""
    items = "; ".join(f"{i.table}:{i.itemid} {i.label}" if i.itemid is not None else f"{i.table} {i.label}"
                      for i in g.items) or "none"
    lines = [f"line: {g.line}", f"entity: {g.entity}"]
    if g.value:
        lines.append(f"value: {g.value}")
    if g.time and (g.time.start or g.time.end):
        lines.append(f"time: {g.time.start} to {g.time.end}")
    lines.append(f"table items: {items}")
    if g.columns:
        lines.append(f"columns checked: {', '.join(g.columns)}")
    lines.append(f"label: {g.label}")
    if g.inconsistency:
        inc = g.inconsistency
        detail = "no matching record" if inc.kind == "missing" else (
            f"{inc.type or 'other'} mismatch in {', '.join(inc.columns) or 'a column'}")
        lines.append(f"why inconsistent: {detail}")
    if g.evidence_row_ids:
        lines.append("evidence rows: " + ", ".join(f"{r.table}#{r.row_id}" for r in g.evidence_row_ids[:10]))
    return "\n".join(lines)


def render_prediction(p: Prediction, number: int | None = None) -> str:
    """One prediction on one line (``P<number> | ...`` when numbered for a judge prompt)."""
    items = "; ".join(i.label for i in p.items) or "none"
    reason = " ".join(p.reason.split())
    if len(reason) > _REASON_CHARS:
        reason = reason[:_REASON_CHARS] + "..."
    label = p.label + (f" ({p.inconsistency_type})" if p.inconsistency_type else "")
    value = f" | value: {p.value}" if p.value else ""
    head = f"P{number} | " if number is not None else ""
    return f"{head}line {p.line} | entity: {p.entity}{value} | items: {items} | label: {label} | reason: {reason}"


def render_judge_prompt(prompt: PromptTemplate, gold: GoldEntity, preds: Sequence[Prediction],
                        note_type: str) -> str:
    """The judge prompt for one gold entity; predictions are numbered P1..Pn in order."""
    fresh = [render_prediction(p, i) for i, p in enumerate(preds, 1) if not p.from_cache and not p.failure]
    cached = [render_prediction(p, i) for i, p in enumerate(preds, 1) if p.from_cache and not p.failure]
    return prompt.render(note_type=note_type.replace("_", " "), gold=render_gold(gold),
                         predictions="\n".join(fresh) or "(none)", cached="\n".join(cached) or "(none)")


def _verdict_problem(response: Any) -> str | None:
    """Why a judge reply cannot be used (no Result: line), for the response cache."""
    return None if parse_verdict(response.text)[0] else "no Result: line in the reply"


async def _judge_one(client: Any, prompt: PromptTemplate, mode: Mode, judge_name: str, g: GoldEntity,
                     preds: Sequence[Prediction], idxs: Sequence[int], note_type: str) -> Judgement:
    if not any(not p.failure for p in preds):
        # Nothing to compare with: the paper's rule (an unmatched gold item is incorrect)
        # decides without paying for a call.
        return Judgement(g.note_id, g.entity_id, mode, judge_name, "incorrect", "no predictions for this note")
    text = render_judge_prompt(prompt, g, preds, note_type)
    try:
        # an unparsable verdict is never cached: a rerun asks again
        reply = (await client.generate([user(text)], stage=f"judge_{mode}", note_id=g.note_id,
                                       accept=_verdict_problem)).text
    except EndpointUnreachable:
        raise  # the judge's endpoint is down: stop, do not mark every entity unparsed
    except EhrlibError as exc:  # LLMCallError after retries: not a verdict, count apart
        log.warning("judge call failed for %s/%s: %s", g.note_id, g.entity_id, exc)
        return Judgement(g.note_id, g.entity_id, mode, judge_name, "unparsed", f"call failed: {exc}")
    verdict, match_no = parse_verdict(reply)
    matched = idxs[match_no - 1] if match_no is not None and 1 <= match_no <= len(idxs) else None
    reason = next((ln.split(":", 1)[1].strip() for ln in reply.splitlines()
                   if ln.strip().lower().startswith("reason:")), "")
    return Judgement(g.note_id, g.entity_id, mode, judge_name, verdict or "unparsed",
                     reason if verdict else f"no Result: line in reply; {reason}".strip("; "),
                     matched, reply)


def judge_with_llm(
    client: Any,
    gold: Sequence[GoldEntity],
    predictions: Sequence[Prediction],
    notes: Sequence[Note],
    modes: Sequence[Mode] = ("harsh", "lenient"),
    *,
    judge_name: str | None = None,
    progress: bool = True,
) -> tuple[list[Judgement], list[str]]:
    """Judge every gold entity with an ``ehrlib.llm`` client; returns (judgements, prompt ids).

    Calls run concurrently up to the client's ``max_concurrency``; results keep the
    order modes x gold. ``matched_prediction`` indexes ``predictions``.
    """
    name = judge_name or getattr(getattr(client, "config", None), "model", None) or "llm"
    note_types = {n.note_id: n.note_type for n in notes}
    by_note: dict[str, list[int]] = {}
    for idx, p in enumerate(predictions):
        by_note.setdefault(p.note_id, []).append(idx)
    prompts = {m: load_prompt(f"judge_{m}") for m in modes}

    async def run_all() -> list[Judgement]:
        jobs = []
        for mode in modes:
            for g in gold:
                idxs = by_note.get(g.note_id, [])
                jobs.append(_judge_one(client, prompts[mode], mode, name, g, [predictions[i] for i in idxs],
                                       idxs, note_types.get(g.note_id, "clinical note")))
        tasks = [asyncio.ensure_future(j) for j in jobs]
        bar = tqdm(total=len(tasks), desc=f"judge {name}", disable=not progress, unit="entity")
        for fut in asyncio.as_completed(tasks):
            await fut
            bar.update(1)
        bar.close()
        return [t.result() for t in tasks]

    return run_sync(run_all()), [p.prompt_id for p in prompts.values()]
