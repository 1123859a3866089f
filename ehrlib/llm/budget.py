"""Context budgets: how much of a list fits into one request, and pages that cover all of it.

A request must fit the endpoint's context window (`llm.context_window`, in tokens)
together with the reply budget (`max_tokens`). Lists offered to the model (a patient's
items, candidate items) are packed greedily, in the caller's order (most relevant first),
into pages that each fit; every row lands in exactly one page, so nothing is cut for
lack of room — it is offered in a later request instead. Token counts are estimated
from characters on the safe side (2 characters per token: item rows are mostly
numbers, codes and punctuation, which tokenize densely: SmolLM2's tokenizer needed 2.1
characters per token on item listings); the server's own count is
recorded afterwards in the usage fields.
"""
from __future__ import annotations

import re
from collections.abc import Sequence

from ehrlib.errors import ConfigError

__all__ = ["CHARS_PER_TOKEN", "estimate_text_tokens", "list_budget", "pack_pages", "is_context_overflow"]

_OVERFLOW = re.compile(r"context.length|maximum context|context window|too many tokens|prompt is too long|"
                       r"exceeds? the (?:model's )?(?:maximum|max)", re.IGNORECASE)


def is_context_overflow(message: str | None) -> bool:
    """A server's refusal of a request as longer than its context (vLLM, llama.cpp, OpenAI wording)."""
    return bool(message) and bool(_OVERFLOW.search(message or ""))

CHARS_PER_TOKEN = 2.0
#: share of the window kept free for the chat template, tool declarations and estimation error
SAFETY_MARGIN = 0.12


def estimate_text_tokens(text: str) -> int:
    return int(len(text) / CHARS_PER_TOKEN) + 1


def list_budget(context_window: int | None, max_tokens: int | None, fixed_text: str) -> int | None:
    """Tokens left for the list in a request whose other text is `fixed_text`; None = unbounded."""
    if not context_window:
        return None
    free = int(context_window * (1 - SAFETY_MARGIN)) - (max_tokens or 0) - estimate_text_tokens(fixed_text)
    if free < 64:
        raise ConfigError(f"llm.context_window={context_window} leaves no room for the list after the prompt "
                          f"(~{estimate_text_tokens(fixed_text)} tokens) and max_tokens={max_tokens}; raise "
                          "context_window (and the server's) or lower max_tokens")
    return free


def pack_pages(rows: Sequence[str], budget_tokens: int | None, max_rows: int | None = None) -> list[list[int]]:
    """Row indices per page, in order: each page within `budget_tokens` (a row larger than the
    budget gets a page of its own) and at most `max_rows` rows."""
    pages: list[list[int]] = []
    current: list[int] = []
    used = 0
    for i, row in enumerate(rows):
        cost = estimate_text_tokens(row) + 1
        full = (budget_tokens is not None and current and used + cost > budget_tokens) or (
            max_rows is not None and len(current) >= max_rows)
        if full:
            pages.append(current)
            current, used = [], 0
        current.append(i)
        used += cost
    if current:
        pages.append(current)
    return pages
