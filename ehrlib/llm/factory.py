"""Build a Client from a backend name and settings (the `llm:` block of a params YAML).

    llm:
      backend: vllm              # see PRESETS: openai vllm ollama sglang llamacpp azure gemini vertex
      model: Qwen/Qwen3-32B
      temperature: 0.5           # absent -> preset default; null -> not sent at all
      cache: runs/llm_cache.sqlite

A backend name is a *preset*: the client it builds (OpenAI-compatible or Gemini) and
the defaults users of that server expect (base URL and port, where the key is read,
the auth header, which sampling settings the models accept). Defaults follow the
paper: open models use temperature 0.5, top-p 0.95 and 2048 max tokens; Gemini uses
the server's defaults; reasoning models behind OpenAI/Azure (GPT-5, o-series) get no
sampling settings and `max_completion_tokens`, which is all they accept.
"""
from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ehrlib.errors import ConfigError, unknown_name
from ehrlib.llm.cache import ResponseCache
from ehrlib.llm.client import Backend, Client, RetryPolicy
from ehrlib.llm.ratelimit import shared_limiter
from ehrlib.llm.records import GenerationConfig
from ehrlib.llm.scripted import ScriptedBackend
from ehrlib.llm.usage import PriceTable, UsageLedger

__all__ = ["make_client", "client_from_params", "resolve_backend", "Preset", "PRESETS",
           "PAPER_OPEN_MODEL_DEFAULTS", "BACKENDS"]

PAPER_OPEN_MODEL_DEFAULTS = {"temperature": 0.5, "top_p": 0.95, "max_tokens": 2048}
#: reasoning models count their thinking in the completion budget; 2048 is too little
REASONING_MODEL_DEFAULTS = {"temperature": None, "top_p": None, "max_tokens": 16000}
_REASONING_MODEL = re.compile(r"^(?:.*/)?(?:gpt-5|o[1-9])(?:\b|[-_.]|$)", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Preset:
    """What a backend name means: the client kind and the defaults it fills in."""

    client: str  # "openai" | "gemini" | "scripted"
    description: str
    base_url: str | None = None
    base_url_env: tuple[str, ...] = ()
    key_env: tuple[str, ...] = ()
    model_env: tuple[str, ...] = ()
    options: Mapping[str, Any] = field(default_factory=dict)
    generation: Mapping[str, Any] = field(default_factory=dict)


_OPENAI_ENV: dict[str, Any] = dict(base_url_env=("EHRLIB_OPENAI_BASE_URL",), key_env=("EHRLIB_OPENAI_API_KEY",),
                                   model_env=("EHRLIB_OPENAI_MODEL",), generation=PAPER_OPEN_MODEL_DEFAULTS)


def _local(port: int, what: str, **options: Any) -> Preset:
    return Preset("openai", f"{what} (OpenAI-compatible, http://localhost:{port}/v1)",
                  base_url=f"http://localhost:{port}/v1", options=options, **_OPENAI_ENV)


PRESETS: dict[str, Preset] = {
    "openai": Preset("openai", "any OpenAI-compatible chat-completions server (base_url required)",
                     **_OPENAI_ENV),
    "vllm": _local(8000, "vLLM"),
    "ollama": _local(11434, "Ollama"),
    "sglang": _local(30000, "SGLang"),
    # llama-cpp-python 0.3.36 refuses json_schema (HTTP 500) but constrains json_object by a schema
    "llamacpp": _local(8080, "llama.cpp llama-server / llama-cpp-python", structured_output="json_object",
                       json_object_schema=True),
    "azure": Preset("openai", "Azure OpenAI / AI Foundry (v1 API, api-key header)",
                    base_url_env=("AZURE_OPENAI_ENDPOINT",), key_env=("AZURE_OPENAI_API_KEY",),
                    model_env=("AZURE_OPENAI_DEPLOYMENT",),
                    options={"auth_header": "api-key", "max_tokens_param": "max_completion_tokens"},
                    generation=PAPER_OPEN_MODEL_DEFAULTS),
    "gemini": Preset("gemini", "Gemini via google-genai (Developer API, or Vertex AI from the environment)",
                     generation={"model": "gemini-2.5-flash"}),
    "vertex": Preset("gemini", "Gemini on Vertex AI (project/location from settings or GOOGLE_CLOUD_*)",
                     options={"vertexai": True}, generation={"model": "gemini-2.5-flash"}),
    "scripted": Preset("scripted", "replays scripted replies (tests only)", generation={"model": "scripted"}),
}
_ALIASES = {"llama.cpp": "llamacpp", "llama-cpp": "llamacpp", "llama_cpp": "llamacpp", "vertexai": "vertex",
            "azure-openai": "azure", "azure_openai": "azure", "openai-compatible": "openai"}
BACKENDS = tuple(PRESETS)
#: presets for tests: accepted, never offered in a listing or a suggestion
TEST_PRESETS = frozenset({"scripted"})

_GEN_KEYS = ("model", "temperature", "top_p", "max_tokens", "seed", "thinking_budget", "response_schema",
             "logprobs")
_CLIENT_KEYS = ("timeout_s", "max_retries", "retry_initial_s", "retry_max_s", "retry_jitter_s",
                "max_concurrency", "requests_per_minute", "tokens_per_minute", "context_window",
                "max_tokens_retry",
                "cache", "cache_salt", "source_kind", "safe_hosts", "price_table", "ledger")
_BACKEND_KEYS = {
    "gemini": ("api_key", "vertexai", "project", "location", "base_url", "api_version", "credentials"),
    "openai": ("base_url", "api_key", "api_key_env", "auth_header", "api_version", "max_tokens_param",
               "structured_output", "tool_choice", "json_object_schema", "extra_body", "headers", "transport"),
    "scripted": ("replies", "reported_result"),
}


def resolve_backend(backend: str) -> tuple[str, Preset]:
    """(preset name, Preset) for a name users type; ConfigError names the choices."""
    name = str(backend).strip().lower()
    name = _ALIASES.get(name, name)
    if name not in PRESETS:
        raise ConfigError(unknown_name("LLM backend", backend, [b for b in BACKENDS if b not in TEST_PRESETS],
                                       listing="backends"))
    return name, PRESETS[name]


def _env(names: tuple[str, ...]) -> str | None:
    return next((os.environ[n] for n in names if os.environ.get(n)), None)


def is_reasoning_model(model: str | None) -> bool:
    """GPT-5 and the o-series refuse temperature/top_p and `max_tokens`."""
    return bool(model) and bool(_REASONING_MODEL.match(str(model)))


def _azure_base_url(url: str) -> str:
    """A bare resource URL (what the portal shows) gets the v1 API path."""
    stripped = url.rstrip("/")
    return stripped + "/openai/v1" if re.fullmatch(r"https?://[^/]+", stripped) else stripped


def _generation_config(name: str, preset: Preset, settings: Mapping[str, Any]) -> GenerationConfig:
    defaults: dict[str, Any] = dict(preset.generation)
    model = settings.get("model") or _env(preset.model_env) or defaults.get("model")
    if not model:
        envs = " or ".join(preset.model_env) or "llm.model"
        raise ConfigError(f"llm.model is required for backend {name} (or set {envs})")
    if preset.client == "openai" and is_reasoning_model(model):
        defaults.update(REASONING_MODEL_DEFAULTS)
    # the verdict's own probability is the confidence of an LLM verdict (ehrlib.llm.logprobs);
    # reasoning models do not return log-probabilities
    if preset.client in ("openai", "gemini") and not is_reasoning_model(model):
        defaults.setdefault("logprobs", True)
    values = {k: settings.get(k, defaults.get(k)) for k in _GEN_KEYS}
    if not isinstance(values["logprobs"], (bool, type(None))):
        raise ConfigError(f"llm.logprobs must be true or false, got {values['logprobs']!r}")
    values["model"] = str(model)
    return GenerationConfig(**values)


def backend_options(name: str, preset: Preset, settings: Mapping[str, Any]) -> dict[str, Any]:
    """The backend constructor's keyword arguments after the preset's defaults (no secrets resolved
    for display: `api_key` is looked up here but callers redact it).
    """
    opts = {k: settings[k] for k in _BACKEND_KEYS[preset.client] if k in settings}
    for key, value in preset.options.items():
        opts.setdefault(key, value)
    if preset.client != "openai":
        return opts
    url = opts.get("base_url") or _env(preset.base_url_env) or preset.base_url or ""
    opts["base_url"] = _azure_base_url(url) if name == "azure" and url else url
    host = re.sub(r"^https?://([^/:]+).*$", r"\1", str(opts.get("base_url") or "")).lower()
    key_env = opts.pop("api_key_env", None)
    key_names = (key_env,) if key_env else (
        ("AZURE_OPENAI_API_KEY", *preset.key_env) if host.endswith(".azure.com") else preset.key_env)
    if not opts.get("api_key"):
        opts["api_key"] = _env(tuple(key_names))
    opts["key_source"] = "settings" if settings.get("api_key") else (
        next((n for n in key_names if os.environ.get(n)), None))
    model = settings.get("model") or _env(preset.model_env) or ""
    if is_reasoning_model(model):
        opts.setdefault("max_tokens_param", "max_completion_tokens")
    return opts


def _make_backend(client_kind: str, opts: dict[str, Any], timeout_s: float) -> Backend:
    if client_kind == "gemini":
        # deferred: google-genai is a heavy import; only the Gemini backend needs it
        from ehrlib.llm.gemini import GeminiBackend

        return GeminiBackend(timeout_s=timeout_s, **opts)
    if client_kind == "openai":
        # deferred: only the OpenAI-compatible backend needs its client
        from ehrlib.llm.openai_compat import OpenAICompatBackend

        return OpenAICompatBackend(**opts)
    return ScriptedBackend(opts.get("replies", ()), reported_result=bool(opts.get("reported_result")))


def check_settings(backend: str, settings: Mapping[str, Any]) -> tuple[str, Preset]:
    """Resolve the preset and refuse unknown setting names (a typo must not fall back to a default)."""
    name, preset = resolve_backend(backend)
    allowed = set(_GEN_KEYS) | set(_CLIENT_KEYS) | set(_BACKEND_KEYS[preset.client])
    unknown = set(settings) - allowed
    if unknown:
        raise ConfigError(f"unknown llm settings for backend {name}: {sorted(unknown)}; "
                          f"allowed: {sorted(allowed)}")
    return name, preset


def make_client(backend: str, **settings: Any) -> Client:
    """A Client for `backend` (a name in `PRESETS`, e.g. "vllm", "azure", "vertex").

    `source_kind` (from the database build manifest) turns the PHI guard on; the
    runner must pass it whenever real data is involved.
    """
    name, preset = check_settings(backend, settings)
    config = _generation_config(name, preset, settings)
    timeout_s = float(settings.get("timeout_s", 300.0))
    retry = RetryPolicy(
        max_attempts=int(settings.get("max_retries", 4)) + 1,
        initial_s=float(settings.get("retry_initial_s", 1.0)),
        max_s=float(settings.get("retry_max_s", 60.0)),
        jitter_s=float(settings.get("retry_jitter_s", 1.0)),
    )
    opts = backend_options(name, preset, settings)
    opts.pop("key_source", None)
    impl = _make_backend(preset.client, opts, timeout_s)
    cache_path = settings.get("cache")
    ledger = settings.get("ledger") or UsageLedger(PriceTable.load(settings.get("price_table")))
    rpm, tpm = settings.get("requests_per_minute"), settings.get("tokens_per_minute")
    context_window = settings.get("context_window")
    return Client(
        impl,
        config,
        cache=ResponseCache(cache_path) if cache_path else None,
        cache_salt=str(settings.get("cache_salt", "")),
        retry=retry,
        timeout_s=timeout_s,
        max_concurrency=int(settings.get("max_concurrency", 4)),
        ledger=ledger,
        source_kind=settings.get("source_kind"),
        safe_hosts=tuple(settings.get("safe_hosts") or ()),
        limiter=shared_limiter(impl.endpoint, config.model, rpm, tpm) if (rpm or tpm) else None,
        context_window=int(context_window) if context_window else None,
        max_tokens_retry=settings.get("max_tokens_retry", "double"),
        preset=name,
    )


def client_from_params(params: Mapping[str, Any], **overrides: Any) -> Client:
    """A Client from a params dict holding an `llm:` block (or being that block)."""
    block = dict(params.get("llm", params))
    block.update(overrides)
    backend = block.pop("backend", None)
    if not backend:
        raise ConfigError("llm.backend is required")
    return make_client(str(backend), **block)
