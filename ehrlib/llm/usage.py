"""Token usage and cost per call, aggregated per stage, note and run.

Prices come from a data file (`ehrlib/data/prices.yaml` by default). A model with
no price entry gets cost `None` — reported as unknown, never silently as zero.
Cached calls are recorded too: `cost_usd` counts only what this run paid, while
`list_cost_usd` is what the calls would cost uncached (the paper's cost per note).
"""
from __future__ import annotations

import collections
import dataclasses
import importlib.resources
import logging
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ehrlib.errors import ConfigError
from ehrlib.llm.records import CallUsage
from ehrlib.yamlfiles import parse_yaml, read_yaml

__all__ = ["Price", "PriceTable", "CallRecord", "UsageLedger", "normalize_model_name", "call_counts",
           "mostly_failed"]

log = logging.getLogger(__name__)


def _short_reason(message: str) -> str:
    """A failure message without the parts that differ per call (URLs, numbers), so equal
    reasons group together (the key of a group; the group is shown by its first message).
    """
    text = re.sub(r"https?://\S+", "<url>", message.splitlines()[0] if message else "")
    text = re.sub(r"\d+(?:\.\d+)?", "N", text)
    return text[:160]


def normalize_model_name(model: str) -> str:
    """'publishers/google/models/Gemini-2.5-Pro' -> 'gemini-2.5-pro'; 'qwen3:32b' -> 'qwen3-32b'."""
    return model.strip().rsplit("/", 1)[-1].lower().replace(":", "-")


@dataclass(frozen=True, slots=True)
class Price:
    """USD per 1M tokens; the `_long` rates apply when a call's input exceeds the threshold."""

    input: float
    output: float
    long_context_threshold: int | None = None
    input_long: float | None = None
    output_long: float | None = None

    def cost(self, usage: CallUsage) -> float:
        """Dollar cost of ``usage`` at this price (long-context rates above the threshold)."""
        long = self.long_context_threshold is not None and usage.input_tokens > self.long_context_threshold
        rate_in = self.input_long if long and self.input_long is not None else self.input
        rate_out = self.output_long if long and self.output_long is not None else self.output
        billed_out = usage.output_tokens + usage.thinking_tokens
        return (usage.input_tokens * rate_in + billed_out * rate_out) / 1_000_000


class PriceTable:
    """Model name -> Price, matched on the longest normalised prefix."""

    def __init__(self, prices: Mapping[str, Price], *, source: str = "") -> None:
        self.prices = {normalize_model_name(k): v for k, v in prices.items()}
        self.source = source

    @classmethod
    def load(cls, path: str | Path | None = None) -> PriceTable:
        """Load a price YAML; `None` loads the table shipped with ehrlib."""
        if path is None:
            ref = importlib.resources.files("ehrlib").joinpath("data/prices.yaml")
            doc = parse_yaml(ref.read_text(encoding="utf-8"), "ehrlib/data/prices.yaml")
        else:   # a user's file: the bounded reader (size, aliases, encoding: one-line errors)
            doc = read_yaml(path, what="price table")
        data, source = doc.data or {}, doc.source
        if not isinstance(data, Mapping):
            raise ConfigError(f"{source}: a price table is a mapping with 'models:', not {type(data).__name__}")
        if data.get("per_tokens", 1_000_000) != 1_000_000:
            raise ConfigError(f"{source}: prices must be per 1,000,000 tokens")
        prices: dict[str, Price] = {}
        fields = {f.name for f in dataclasses.fields(Price)}
        for name, entry in (data.get("models") or {}).items():
            if not isinstance(entry, Mapping) or not {"input", "output"} <= set(entry):
                raise ConfigError(f"{source}: model {name!r} needs 'input' and 'output' prices")
            unknown = set(entry) - fields
            if unknown:
                raise ConfigError(f"{source}: model {name!r} has unknown keys {sorted(unknown)}")
            prices[str(name)] = Price(**entry)
        return cls(prices, source=source)

    def price_for(self, model: str) -> Price | None:
        """The price of the longest model-name prefix that matches, or None."""
        name = normalize_model_name(model)
        best = max((k for k in self.prices if name.startswith(k)), key=len, default=None)
        return self.prices[best] if best is not None else None

    def cost(self, model: str, usage: CallUsage) -> float | None:
        """Dollar cost of ``usage`` on ``model``; None for a model without a price."""
        price = self.price_for(model)
        return None if price is None else price.cost(usage)


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One model call as the run's usage log stores it."""

    backend: str
    model: str
    stage: str | None
    note_id: str | None
    input_tokens: int
    output_tokens: int
    thinking_tokens: int
    latency_ms: float
    cached: bool
    attempts: int
    list_cost_usd: float | None

    @property
    def cost_usd(self) -> float | None:
        """What this run paid: nothing for a cache hit."""
        if self.cached:
            return 0.0
        return self.list_cost_usd

    def to_dict(self) -> dict[str, Any]:
        """One line of the run's usage JSONL."""
        return {**dataclasses.asdict(self), "cost_usd": self.cost_usd}


class UsageLedger:
    """Thread-safe log of calls with grouped totals (per stage, note, model, or the run)."""

    def __init__(self, prices: PriceTable | None = None) -> None:
        self.prices = prices or PriceTable.load()
        self._records: list[CallRecord] = []
        self._failures = 0
        self._failure_kinds: collections.Counter[str] = collections.Counter()
        self._failure_stages: collections.Counter[str] = collections.Counter()
        self._failure_reasons: collections.Counter[str] = collections.Counter()
        self._failure_examples: dict[str, str] = {}
        self._lock = threading.Lock()
        self._warned: set[str] = set()

    def record(
        self,
        *,
        backend: str,
        model: str,
        usage: CallUsage,
        cached: bool,
        attempts: int = 1,
        stage: str | None = None,
        note_id: str | None = None,
    ) -> CallRecord:
        """Record one call and return its record (a model without a price is warned about once)."""
        cost = self.prices.cost(model, usage)
        if cost is None and model not in self._warned:
            self._warned.add(model)
            log.warning("no price for model %r in %s: its cost is reported as unknown", model, self.prices.source)
        rec = CallRecord(
            backend, model, stage, note_id, usage.input_tokens, usage.output_tokens,
            usage.thinking_tokens, usage.latency_ms, cached, attempts, cost,
        )
        with self._lock:
            self._records.append(rec)
        return rec

    def record_failure(self, kind: str = "other", message: str = "", stage: str | None = None) -> None:
        """Count a call that failed for good, by kind and by (shortened) reason."""
        with self._lock:
            self._failures += 1
            self._failure_kinds[kind] += 1
            key = f"{kind}: {_short_reason(message)}"
            self._failure_reasons[key] += 1
            # shown with the first real message of its group (its URL and attempt count)
            self._failure_examples.setdefault(key, f"{kind}: {(message.splitlines() or [''])[0][:300]}")
            if stage:
                self._failure_stages[stage] += 1

    def failure_summary(self, top: int = 3) -> dict[str, Any]:
        """Failure counts by kind and stage, and the most common reasons (for the manifest/CLI)."""
        with self._lock:
            return {"failed_calls": self._failures, "by_kind": dict(self._failure_kinds),
                    "by_stage": dict(self._failure_stages),
                    "top_reasons": [[self._failure_examples.get(r, r), n]
                                    for r, n in self._failure_reasons.most_common(top)]}

    def records(self) -> list[CallRecord]:
        """The calls recorded so far."""
        with self._lock:
            return list(self._records)

    def summary(self, by: Iterable[str] = ()) -> list[dict[str, Any]]:
        """Totals grouped by record fields, e.g. `by=("stage",)` or `("note_id",)`; `()` = the run."""
        keys = tuple(by)
        allowed = {f.name for f in dataclasses.fields(CallRecord)}
        if not set(keys) <= allowed:
            raise ConfigError(f"cannot group usage by {sorted(set(keys) - allowed)}")
        groups: dict[tuple[Any, ...], dict[str, Any]] = {}
        for rec in self.records():
            gk = tuple(getattr(rec, k) for k in keys)
            g = groups.setdefault(gk, {
                **dict(zip(keys, gk, strict=False)), "calls": 0, "cached_calls": 0, "input_tokens": 0,
                "output_tokens": 0, "thinking_tokens": 0, "latency_ms": 0.0,
                "cost_usd": 0.0, "list_cost_usd": 0.0,
            })
            g["calls"] += 1
            g["cached_calls"] += int(rec.cached)
            g["input_tokens"] += rec.input_tokens
            g["output_tokens"] += rec.output_tokens
            g["thinking_tokens"] += rec.thinking_tokens
            g["latency_ms"] += rec.latency_ms
            for name, value in (("cost_usd", rec.cost_usd), ("list_cost_usd", rec.list_cost_usd)):
                g[name] = None if value is None or g[name] is None else g[name] + value
        return list(groups.values())

    def cost_per_note(self) -> dict[str, Any]:
        """Mean cost per note over the notes seen (the paper's Table 16 figure)."""
        rows = [r for r in self.summary(by=("note_id",)) if r["note_id"] is not None]

        def mean(key: str) -> float | None:
            values = [r[key] for r in rows]
            return None if not values or None in values else sum(values) / len(values)

        return {"notes": len(rows), "mean_cost_usd": mean("cost_usd"),
                "mean_list_cost_usd": mean("list_cost_usd"),
                "mean_input_tokens": mean("input_tokens"), "mean_output_tokens": mean("output_tokens")}

    def totals(self) -> dict[str, Any]:
        """Run totals plus the failure count, for the run manifest."""
        rows = self.summary()
        base = rows[0] if rows else {
            "calls": 0, "cached_calls": 0, "input_tokens": 0, "output_tokens": 0,
            "thinking_tokens": 0, "latency_ms": 0.0, "cost_usd": 0.0, "list_cost_usd": 0.0,
        }
        with self._lock:
            return {**base, "failed_calls": self._failures, "failures_by_kind": dict(self._failure_kinds),
                    "price_table": self.prices.source}


def call_counts(ledger: UsageLedger, *, network_calls: int | None = None, retries: int | None = None,
                truncation_retries: int | None = None) -> dict[str, Any]:
    """The counts a run manifest keeps about model calls: made, answered by the server
    (`answered`, truncated replies included) and of those usable (`succeeded`), answered
    from the response cache, failed (by kind, with the most common reasons), retried.
    """
    recs = ledger.records()
    hits = sum(1 for r in recs if r.cached)
    fails = ledger.failure_summary()
    paid = [r for r in recs if not r.cached]
    # a reply cut at the token limit was answered (and recorded) and then counted as failed
    answered_failures = fails["by_kind"].get("truncated", 0)
    return {"calls": len(recs) + fails["failed_calls"] - answered_failures,
            "answered": len(paid), "succeeded": len(paid) - answered_failures,
            # tokens of the calls answered by the server this run (what its usage fields said)
            "input_tokens": sum(r.input_tokens for r in paid), "output_tokens": sum(r.output_tokens for r in paid),
            "thinking_tokens": sum(r.thinking_tokens for r in paid),
            "response_cache_hits": hits, "failed_calls": fails["failed_calls"],
            "failures_by_kind": fails["by_kind"], "failures_by_stage": fails["by_stage"],
            "top_failure_reasons": fails["top_reasons"], "network_requests": network_calls,
            "retries": retries, "truncation_retries": truncation_retries}


def mostly_failed(counts: Mapping[str, Any], threshold: float = 0.5) -> str | None:
    """A one-line summary when more than `threshold` of the model calls failed, else None."""
    calls, failed = int(counts.get("calls") or 0), int(counts.get("failed_calls") or 0)
    if calls == 0 or failed / calls <= threshold:
        return None
    reasons = "; ".join(f"{n}x {r}" for r, n in counts.get("top_failure_reasons") or ())
    return f"{failed} of {calls} model calls failed; top reasons: {reasons or 'unknown'}"
