"""The probability a model gave to one field of its JSON answer, from the reply's token log-probabilities.

A verdict's own probability is the most direct confidence an LLM backbone offers: with
``llm.logprobs`` on, the chat-completions servers (vLLM, llama.cpp, SGLang, Ollama) return
``choices[0].logprobs.content`` and Gemini returns ``logprobsResult.chosenCandidates``, one
entry per generated token. :func:`field_probability` finds the value of a top-level key
("label") in the generated text and multiplies the probabilities of the tokens that spell
it: P(the model writes that value | everything before it). Everything here is pure.
"""
from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["TokenLogprob", "token_logprobs", "field_probability", "verdict_probability", "is_refusal"]


_REFUSAL = re.compile(r"logprob|log_prob|log-prob", re.IGNORECASE)


def is_refusal(status: int | None, message: str) -> bool:
    """Whether an error reply refuses the log-probabilities request itself (a model or server
    without them): the backend then asks again without, and says so in its manifest.
    """
    return status is not None and 400 <= status < 600 and status != 429 and bool(_REFUSAL.search(message))


@dataclass(frozen=True, slots=True)
class TokenLogprob:
    """One generated token and its natural-log probability."""

    token: str
    logprob: float


def _entry(token: Any, logprob: Any) -> TokenLogprob | None:
    if not isinstance(token, str) or isinstance(logprob, bool) or not isinstance(logprob, (int, float)):
        return None
    if not math.isfinite(float(logprob)) or logprob > 0:
        return None
    return TokenLogprob(token, float(logprob))


def _openai_tokens(raw: Mapping[str, Any]) -> list[Any] | None:
    choices = raw.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        return None
    lp = choices[0].get("logprobs")
    content = lp.get("content") if isinstance(lp, Mapping) else None
    return content if isinstance(content, list) else None


def _gemini_tokens(raw: Mapping[str, Any]) -> list[Any] | None:
    cands = raw.get("candidates")
    if not isinstance(cands, list) or not cands or not isinstance(cands[0], Mapping):
        return None
    # REST JSON is camelCase; the SDK's model_dump_json (what a response records) is snake_case
    res = cands[0].get("logprobsResult", cands[0].get("logprobs_result"))
    if not isinstance(res, Mapping):
        return None
    chosen = res.get("chosenCandidates", res.get("chosen_candidates"))
    return chosen if isinstance(chosen, list) else None


def token_logprobs(raw: Mapping[str, Any] | None) -> tuple[TokenLogprob, ...]:
    """The generated tokens with their log-probabilities, from a provider's raw reply (an
    OpenAI-style chat completion or a Gemini response); () when the reply carries none or
    any entry is unusable (a partial list would misplace every later token).
    """
    if not isinstance(raw, Mapping):
        return ()
    entries = _openai_tokens(raw)
    keys = ("token", "logprob")
    if entries is None:
        entries = _gemini_tokens(raw)
        keys = ("token", "logProbability")
    out = []
    for e in entries or ():
        if not isinstance(e, Mapping):
            return ()
        tok = _entry(e.get(keys[0]), e.get(keys[1], e.get("log_probability")))
        if tok is None:
            return ()
        out.append(tok)
    return tuple(out)


def _top_level_string(text: str, key: str, start: int) -> tuple[int, int] | None:
    """Character span of the string value of ``key`` in the first JSON object at or after
    ``start`` (top level only: a nested object's ``key`` is not it); None if absent.
    """
    depth, i, n = 0, start, len(text)
    last_string: tuple[int, int] | None = None
    expect_value = False
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            if j >= n:
                return None
            if depth == 1 and expect_value:
                return (i + 1, j)
            last_string = (i + 1, j) if depth == 1 else None
            i = j + 1
            continue
        if c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
            if depth <= 0:
                return None
        elif c == ":" and depth == 1 and last_string is not None:
            expect_value = text[last_string[0]:last_string[1]] == key
            last_string = None
            i += 1
            continue
        elif c == "," and depth == 1:
            expect_value = False
        elif not c.isspace() and depth == 1 and expect_value:
            expect_value = False  # a non-string value (null, a number): no span
        i += 1
    return None


def field_probability(tokens: Sequence[TokenLogprob], key: str, *, answer: str | None = None) -> float | None:
    """P(the generated value of top-level ``key``): the product of the probabilities of the
    tokens that overlap the value's characters. ``answer``, the reply's text as parsed (a
    thinking block removed), says where the JSON starts when the tokens hold more than it.
    None when there are no tokens or the key has no string value.
    """
    if not tokens:
        return None
    joined = "".join(t.token for t in tokens)
    start = 0
    head = (answer or "").strip()[:40]
    if head:
        found = joined.rfind(head)
        if found >= 0:
            start = found
    brace = joined.find("{", start)
    if brace < 0:
        return None
    span = _top_level_string(joined, key, brace)
    if span is None or span[0] == span[1]:
        return None
    lo, hi = span
    total, pos = 0.0, 0
    for t in tokens:
        end = pos + len(t.token)
        if end > lo and pos < hi:
            total += t.logprob
        pos = end
        if pos >= hi:
            break
    return math.exp(total)


def verdict_probability(raw: Mapping[str, Any] | None, answer: str | None) -> float | None:
    """The probability of the ``label`` a reply's JSON answer gives (None: no log-probabilities)."""
    return field_probability(token_logprobs(raw), "label", answer=answer)
