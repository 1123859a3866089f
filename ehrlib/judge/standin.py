"""An offline stand-in for the LLM judges: a backend that reads the judge prompt and answers
it by a stated word-overlap rule. It is not a language model and its numbers are not
judge results; it exists so the LLM-judge path (prompt rendering, client, reply parsing,
``unparsed`` accounting, agreement with the matcher) runs end to end without an endpoint.

Rule (both modes): a prediction is about the gold statement when it sits within
``line_slack`` lines of the gold line and its entity shares content words with the gold
entity (Jaccard overlap of the word sets at least ``min_overlap``); among those the one
with the highest overlap is compared, and the verdict is Correct when its label equals
the gold label. The harsh setting asks for a closer line and more overlap than the
lenient one, so the two modes can disagree, as real harsh/lenient judges do.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ehrlib.llm.client import Client
from ehrlib.llm.records import CallUsage, GenerationConfig, LLMResponse, Message, ToolSpec

__all__ = ["StandInRule", "STANDIN_RULES", "StandInJudgeBackend", "standin_client", "standin_reply"]

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset("a an and the of on in at to for with no not per".split())
_PRED = re.compile(r"^P(\d+) \| line (-?\d+) \| entity: (.*?)(?: \| value: .*?)? \| items: .*? \| label: (\w+)")


@dataclass(frozen=True, slots=True)
class StandInRule:
    """How loosely the stand-in judge matches: line distance and word overlap."""
    line_slack: int
    min_overlap: float


STANDIN_RULES = {"harsh": StandInRule(line_slack=1, min_overlap=0.5),
                 "lenient": StandInRule(line_slack=2, min_overlap=0.2)}


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def _field(block: str, name: str) -> str:
    m = re.search(rf"^{name}: (.*)$", block, flags=re.M)
    return m.group(1).strip() if m else ""


def standin_reply(prompt: str, rule: StandInRule) -> str:
    """The stand-in's reply to one rendered judge prompt (``Reason/Match/Result`` lines)."""
    gold_block = prompt.split("GOLD item", 1)[-1]
    line_text, entity, label = _field(gold_block, "line"), _field(gold_block, "entity"), _field(gold_block, "label")
    gold_line = int(line_text) if line_text.lstrip("-").isdigit() else None
    gold_words = _words(entity)
    best: tuple[float, int, str] | None = None
    for m in (_PRED.match(ln.strip()) for ln in prompt.splitlines()):
        if m is None:
            continue
        number, line, pred_entity, pred_label = int(m.group(1)), int(m.group(2)), m.group(3), m.group(4)
        if gold_line is not None and abs(line - gold_line) > rule.line_slack:
            continue
        words = _words(pred_entity)
        overlap = len(words & gold_words) / len(words | gold_words) if words | gold_words else 0.0
        if overlap >= rule.min_overlap and (best is None or overlap > best[0]):
            best = (overlap, number, pred_label)
    if best is None:
        return "Reason: no prediction near the gold line names the same thing.\nMatch: none\nResult: Incorrect"
    overlap, number, pred_label = best
    verdict = "Correct" if pred_label.lower() == label.lower() else "Incorrect"
    return (f"Reason: P{number} names the gold entity (word overlap {overlap:.2f}); labels "
            f"{pred_label} vs {label}.\nMatch: P{number}\nResult: {verdict}")


class StandInJudgeBackend:
    """A Backend (``ehrlib.llm.client``) answering judge prompts with :func:`standin_reply`."""

    name = "standin"
    endpoint = "standin://local"

    def __init__(self, rule: StandInRule) -> None:
        self.rule = rule

    def describe(self) -> dict[str, Any]:
        """Endpoint facts for the run manifest."""
        return {"endpoint": self.endpoint, "line_slack": self.rule.line_slack, "min_overlap": self.rule.min_overlap}

    async def send(self, messages: Sequence[Message], tools: Sequence[ToolSpec] | None, config: GenerationConfig,
                   timeout_s: float) -> LLMResponse:
        """Answer one judge prompt with the stand-in rule."""
        text = "\n".join(m.text for m in messages)
        reply = standin_reply(text, self.rule)
        return LLMResponse(text=reply, usage=CallUsage(len(text) // 4, len(reply) // 4, 0))


def standin_client(mode: str) -> Client:
    """A Client whose backend is the stand-in with the ``mode``'s rule."""
    return Client(StandInJudgeBackend(STANDIN_RULES[mode]), GenerationConfig(model=f"standin-{mode}"),
                  max_concurrency=4)
