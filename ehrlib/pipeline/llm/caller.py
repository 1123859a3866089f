"""The LLM backend's caller: one client plus the conventions every LLM stage shares.

:class:`LLMCaller` asks for JSON through :mod:`ehrlib.llm` (response cache, retries,
usage ledger, one JSON repair) and adds one content repair when a stage's own check
rejects the reply; a reply still malformed after that is a recorded failure of the unit
of work, never an exception. :class:`BoundedClient` caps concurrent calls across all
runner threads. :func:`make_llm_client` builds the client from the run params.
"""
from __future__ import annotations

import asyncio
import collections
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ehrlib.corpus.records import Usage
from ehrlib.llm import Message, make_client, run_sync
from ehrlib.llm.budget import list_budget
from ehrlib.llm.records import CallUsage as LLMUsage
from ehrlib.llm.replies import generate_json
from ehrlib.pipeline.stages import StageOutput, add_usage

__all__ = ["LLMCaller", "BoundedClient", "to_usage", "make_llm_client", "json_asker", "numbered", "object_schema",
           "stage_output"]


def numbered(lines: Sequence[str], start: int = 0) -> str:
    """Lines prefixed with their note line number (the unit every record refers to)."""
    return "\n".join(f"{start + i}: {line}" for i, line in enumerate(lines))


def object_schema(properties: Mapping[str, Any], required: Sequence[str]) -> dict[str, Any]:
    """A JSON Schema object (the shape a stage's reply must have)."""
    return {"type": "object", "properties": dict(properties), "required": list(required)}


def to_usage(llm_usage: Any, calls: int, cost: float | None) -> Usage:
    """A record ``Usage`` from an LLM client's usage, call count and cost."""
    return Usage(calls=calls, input_tokens=int(llm_usage.input_tokens), output_tokens=int(llm_usage.output_tokens),
                 thinking_tokens=int(llm_usage.thinking_tokens), cost_usd=float(cost or 0.0))


class BoundedClient:
    """A client whose calls, from any thread, never exceed ``limit`` at once.

    Each runner thread drives its own event loop, so the LLM layer's per-loop semaphore
    cannot bound calls across threads; this one can, whatever ``--concurrency`` says.
    Everything else is delegated to the wrapped client.
    """

    def __init__(self, client: Any, limit: int) -> None:
        self._client = client
        self._slots = threading.BoundedSemaphore(max(1, int(limit)))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    async def generate(self, *args: Any, **kwargs: Any) -> Any:
        """``generate`` once a concurrency slot is free."""
        await asyncio.to_thread(self._slots.acquire)
        try:
            return await self._client.generate(*args, **kwargs)
        finally:
            self._slots.release()


class LLMCaller:
    """One client plus the conventions every stage shares (usage, cost, repair, failures)."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self._counts: collections.Counter[str] = collections.Counter()
        self._count_lock = threading.Lock()

    def count(self, key: str, n: int = 1) -> None:
        """Tally an extraction event (pages sent, names matched fuzzily or dropped) for the manifest."""
        if n:
            with self._count_lock:
                self._counts[key] += n

    def counts(self) -> dict[str, int]:
        """The extraction events tallied so far, by name."""
        with self._count_lock:
            return dict(sorted(self._counts.items()))

    def list_budget(self, fixed_text: str) -> int | None:
        """Tokens left for an item list next to `fixed_text` under the endpoint's context window."""
        return list_budget(getattr(self.client, "context_window", None), self.client.config.max_tokens, fixed_text)

    @property
    def model(self) -> str:
        """The model name."""
        return str(self.client.config.model)

    def cost(self, llm_usage: Any) -> float:
        """Dollar cost of a usage on this model (0 without a price)."""
        ledger = getattr(self.client, "ledger", None)
        prices = getattr(ledger, "prices", None)
        value = prices.cost(self.model, llm_usage) if prices is not None else None
        return float(value or 0.0)

    def ask(self, prompt: str, schema: Mapping[str, Any], *, stage: str, note_id: str | None,
            validate: Callable[[Any], str | None] | None = None,
            system_text: str | None = None) -> tuple[Any, Usage, tuple[str, ...], str | None]:
        """(value | None, usage, raw replies, failure).

        JSON problems get the LLM layer's one repair; a content problem found by ``validate`` gets one
        repair here.
        """
        history = ([Message("system", system_text)] if system_text else []) + [Message("user", prompt)]
        total, calls, raws = LLMUsage(), 0, []
        for attempt in (1, 2):
            res = run_sync(generate_json(self.client, history, schema=schema, stage=stage, note_id=note_id,
                                         check=validate))
            total, calls = total + res.usage, calls + res.attempts
            raws.append(res.text)
            usage = to_usage(total, calls, self.cost(total))
            if not res.ok:
                return None, usage, tuple(raws), f"{res.failure_kind}: {res.error}"
            problem = validate(res.value) if validate else None
            if problem is None:
                return res.value, usage, tuple(raws), None
            if attempt == 2:
                return None, usage, tuple(raws), f"rejected after repair: {problem}"
            history += [Message("assistant", res.text),
                        Message("user", f"Your answer cannot be used: {problem}. Correct it and reply with "
                                        "the full JSON again.")]
        raise AssertionError("unreachable")


def stage_output(value: Any, usages: Sequence[Usage], prompt_ids: Sequence[str], failures: Sequence[str | None],
                 raws: Sequence[str]) -> StageOutput[Any]:
    """A StageOutput summing the usages of a stage's calls (failures None are dropped)."""
    return StageOutput(value, add_usage(*usages), tuple(dict.fromkeys(prompt_ids)),
                       tuple(f for f in failures if f), tuple(raws))


def make_llm_client(backend: str, params: Any) -> Any:
    """An ehrlib.llm Client from the run params (``backend_options.llm`` holds client
    settings; the response cache defaults to ``<runs_dir>/llm_cache.sqlite``).
    """
    settings = dict(params.backend_options.get("llm") or {})
    settings.pop("backend", None)  # the run's backend decides (params.backend)
    if backend == "scripted":
        settings.setdefault("replies", list(params.backend_options.get("replies") or ()))
    else:
        settings.setdefault("cache", str(Path(params.runs_dir) / "llm_cache.sqlite"))
        if params.temperature is not None:  # else the backend's (paper) defaults apply
            settings.setdefault("temperature", params.temperature)
        settings.setdefault("seed", params.seed)
    if params.model:
        settings["model"] = params.model
    return make_client(backend, **settings)


def json_asker(client: Any, *, stage: str = "ontology") -> Callable[[str, str], Mapping[str, Any]]:
    """``ask(prompt_id, text) -> JSON`` for :func:`ehrlib.ontology.build_ontology_llm`."""
    llm = LLMCaller(client)
    schema = object_schema({"assignments": {"type": "object"}}, ["assignments"])

    def ask(prompt_id: str, text: str) -> Mapping[str, Any]:
        value, _, _, _ = llm.ask(text, schema, stage=stage, note_id=None)
        return value or {}

    return ask
