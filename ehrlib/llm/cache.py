"""On-disk response cache: a rerun of the same experiment makes zero network calls.

The key is a SHA-256 over (backend, model, generation settings, the full request
including tool declarations, and an optional salt), serialised as canonical JSON.
The endpoint URL is deliberately not part of the key, so a local server that moves
to another port, or a switch between the Gemini Developer API and Vertex AI for the
same model, still hits. Only successful replies are stored. sqlite in WAL mode lets
several processes of one batch share the file.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ehrlib.errors import ConfigError
from ehrlib.llm.records import (
    CallUsage,
    GenerationConfig,
    LLMResponse,
    Message,
    ToolCall,
    ToolSpec,
)

__all__ = ["ResponseCache", "cache_key", "response_to_dict", "response_from_dict"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    backend TEXT NOT NULL,
    model TEXT NOT NULL,
    created_unix REAL NOT NULL,
    response_json TEXT NOT NULL
)
"""


def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def cache_key(
    backend: str,
    messages: Sequence[Message],
    tools: Sequence[ToolSpec] | None,
    config: GenerationConfig,
    *,
    salt: str = "",
) -> str:
    """Stable key of one request; any change to prompt, tools or settings changes it."""
    payload = {
        "v": 1,
        "backend": backend,
        # asking for log-probabilities changes no generated text: a reply cached without them
        # still answers (its verdict then gets the calibrator's confidence)
        "config": {k: v for k, v in config.to_dict().items() if k != "logprobs"},
        "messages": [dataclasses.asdict(m) for m in messages],
        "tools": [dataclasses.asdict(t) for t in tools or ()],
        "salt": salt,
    }
    return hashlib.sha256(_canonical(payload).encode("utf-8")).hexdigest()


def response_to_dict(response: LLMResponse) -> dict[str, Any]:
    """The JSON form of a response, as the cache stores it."""
    return {
        "text": response.text,
        "tool_calls": [dataclasses.asdict(c) for c in response.tool_calls],
        "usage": dataclasses.asdict(response.usage),
        "raw": response.raw,
        "finish_reason": response.finish_reason,
    }


def response_from_dict(data: Mapping[str, Any], *, cached: bool) -> LLMResponse:
    """Rebuild a cached response; ``cached`` marks it as served from the cache."""
    return LLMResponse(
        text=data["text"],
        tool_calls=tuple(ToolCall(**c) for c in data["tool_calls"]),
        usage=CallUsage(**data["usage"]),
        raw=data.get("raw") or {},
        cached=cached,
        finish_reason=data.get("finish_reason"),
    )


class ResponseCache:
    """sqlite-backed map from request key to reply, with hit/miss counters for the manifest."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute(_SCHEMA)
            self._conn.commit()
        except sqlite3.Error as exc:
            raise ConfigError(f"cannot open LLM response cache {self.path}: {exc}") from exc
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        self.writes = 0

    def get(self, key: str) -> LLMResponse | None:
        """The stored response for ``key``, or None."""
        with self._lock:
            row = self._conn.execute(
                "SELECT response_json FROM responses WHERE key = ?", (key,)
            ).fetchone()
            if row is None:
                self.misses += 1
                return None
            self.hits += 1
        return response_from_dict(json.loads(row[0]), cached=True)

    def put(self, key: str, backend: str, model: str, response: LLMResponse) -> None:
        """Store a response under ``key`` (replacing an older one)."""
        blob = _canonical(response_to_dict(response))
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO responses (key, backend, model, created_unix, response_json)"
                " VALUES (?, ?, ?, ?, ?)",
                (key, backend, model, time.time(), blob),
            )
            self._conn.commit()
            self.writes += 1

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def stats(self) -> dict[str, Any]:
        """Counters for the run manifest."""
        return {"path": str(self.path), "hits": self.hits, "misses": self.misses, "writes": self.writes}

    def close(self) -> None:
        """Close the cache database."""
        with self._lock:
            self._conn.close()
