"""Build a Client from a backend name and settings (the `llm:` block of a params YAML).

    llm:
      backend: openai            # gemini | openai | vllm | ollama | sglang | scripted
      model: Qwen/Qwen3-32B
      temperature: 0.5           # absent -> backend default; null -> not sent at all
      base_url: http://localhost:8000/v1
      cache: runs/llm_cache.sqlite

Defaults follow the paper: open models (the OpenAI-compatible path) use
temperature 0.5, top-p 0.95 and 2048 max tokens; Gemini uses the server's defaults.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ehrlib.errors import ConfigError
from ehrlib.llm.cache import ResponseCache
from ehrlib.llm.client import Backend, Client, RetryPolicy
from ehrlib.llm.records import GenerationConfig
from ehrlib.llm.scripted import ScriptedBackend
from ehrlib.llm.usage import PriceTable, UsageLedger

__all__ = ["make_client", "client_from_params", "PAPER_OPEN_MODEL_DEFAULTS", "BACKENDS"]

PAPER_OPEN_MODEL_DEFAULTS = {"temperature": 0.5, "top_p": 0.95, "max_tokens": 2048}

# Local servers are the OpenAI-compatible backend with their usual default port.
_LOCAL_ALIASES = {
    "vllm": "http://localhost:8000/v1",
    "ollama": "http://localhost:11434/v1",
    "sglang": "http://localhost:30000/v1",
}
BACKENDS = ("gemini", "openai", *_LOCAL_ALIASES, "scripted")

_GEN_KEYS = ("model", "temperature", "top_p", "max_tokens", "seed", "thinking_budget", "response_schema")
_CLIENT_KEYS = ("timeout_s", "max_retries", "retry_initial_s", "retry_max_s", "retry_jitter_s",
                "max_concurrency",
                "cache", "cache_salt", "source_kind", "safe_hosts", "price_table", "ledger")
_BACKEND_KEYS = {
    "gemini": ("api_key", "vertexai", "project", "location", "base_url", "api_version", "credentials"),
    "openai": ("base_url", "api_key", "api_key_env", "auth_header", "api_version", "max_tokens_param",
               "structured_output", "extra_body", "headers", "transport"),
    "scripted": ("replies", "reported_result"),
}
_UNSET = object()


def _generation_config(backend: str, settings: Mapping[str, Any]) -> GenerationConfig:
    defaults: dict[str, Any] = dict(PAPER_OPEN_MODEL_DEFAULTS) if backend == "openai" else {}
    if backend == "gemini":
        defaults["model"] = "gemini-2.5-flash"
    elif backend == "openai":
        defaults["model"] = os.environ.get("EHRLIB_OPENAI_MODEL")
    else:
        defaults["model"] = "scripted"
    values = {k: settings.get(k, defaults.get(k)) for k in _GEN_KEYS}
    if not values["model"]:
        raise ConfigError(f"llm.model is required for backend {backend} (or set EHRLIB_OPENAI_MODEL)")
    return GenerationConfig(**values)


def _make_backend(backend: str, settings: Mapping[str, Any], timeout_s: float) -> Backend:
    opts = {k: settings[k] for k in _BACKEND_KEYS[backend] if k in settings}
    if backend == "gemini":
        # deferred: google-genai is a heavy import; only the Gemini backend needs it
        from ehrlib.llm.gemini import GeminiBackend

        return GeminiBackend(timeout_s=timeout_s, **opts)
    if backend == "openai":
        # deferred: only the OpenAI-compatible backend needs its client
        from ehrlib.llm.openai_compat import OpenAICompatBackend

        key_env = opts.pop("api_key_env", None) or "EHRLIB_OPENAI_API_KEY"
        opts.setdefault("api_key", os.environ.get(key_env))
        opts.setdefault("base_url", os.environ.get("EHRLIB_OPENAI_BASE_URL", ""))
        return OpenAICompatBackend(**opts)
    return ScriptedBackend(opts.get("replies", ()), reported_result=bool(opts.get("reported_result")))


def make_client(backend: str, **settings: Any) -> Client:
    """A Client for `backend` ("gemini", "openai", "vllm", "ollama", "sglang", "scripted").

    Unknown setting names are an error, so a typo in a params file cannot silently
    fall back to a default. `source_kind` (from the database build manifest) turns
    the PHI guard on; the runner must pass it whenever real data is involved.
    """
    name = backend.lower().replace("-compatible", "")
    if name in _LOCAL_ALIASES:
        settings.setdefault("base_url", os.environ.get("EHRLIB_OPENAI_BASE_URL", _LOCAL_ALIASES[name]))
        name = "openai"
    if name not in _BACKEND_KEYS:
        raise ConfigError(f"unknown LLM backend {backend!r}; choose one of {', '.join(BACKENDS)}")
    allowed = set(_GEN_KEYS) | set(_CLIENT_KEYS) | set(_BACKEND_KEYS[name])
    unknown = set(settings) - allowed
    if unknown:
        raise ConfigError(f"unknown llm settings for backend {name}: {sorted(unknown)}; "
                          f"allowed: {sorted(allowed)}")
    config = _generation_config(name, settings)
    timeout_s = float(settings.get("timeout_s", 300.0))
    retry = RetryPolicy(
        max_attempts=int(settings.get("max_retries", 4)) + 1,
        initial_s=float(settings.get("retry_initial_s", 1.0)),
        max_s=float(settings.get("retry_max_s", 60.0)),
        jitter_s=float(settings.get("retry_jitter_s", 1.0)),
    )
    cache_path = settings.get("cache")
    ledger = settings.get("ledger") or UsageLedger(PriceTable.load(settings.get("price_table")))
    return Client(
        _make_backend(name, settings, timeout_s),
        config,
        cache=ResponseCache(cache_path) if cache_path else None,
        cache_salt=str(settings.get("cache_salt", "")),
        retry=retry,
        timeout_s=timeout_s,
        max_concurrency=int(settings.get("max_concurrency", 4)),
        ledger=ledger,
        source_kind=settings.get("source_kind"),
        safe_hosts=tuple(settings.get("safe_hosts") or ()),
    )


def client_from_params(params: Mapping[str, Any], **overrides: Any) -> Client:
    """A Client from a params dict holding an `llm:` block (or being that block)."""
    block = dict(params.get("llm", params))
    block.update(overrides)
    backend = block.pop("backend", None)
    if not backend:
        raise ConfigError("llm.backend is required")
    return make_client(str(backend), **block)
