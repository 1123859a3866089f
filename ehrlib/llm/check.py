"""What a configuration would send, without sending it (`ehrlib llm check`).

Resolves a backend name and settings exactly as a run or a judge does, then reports the
endpoint, model, PHI safety class, credentials source and a sample first request with
secrets masked. Nothing touches the network: the Gemini client is only built when
credentials are explicitly present (building it without them would probe the cloud
metadata server), otherwise the request is assembled from google-genai's types alone. A
Gemini/Vertex configuration that cannot work (no key, no project, no credentials) is a
one-line error here as in a run.

`ping_llm` (`ehrlib llm check --ping`) does touch the network: one minimal request with
a fixed text (no patient data), reporting reachability, authentication and the model
the server says it served.
"""
from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ehrlib.errors import ConfigError
from ehrlib.llm.factory import _generation_config, backend_options, check_settings
from ehrlib.llm.openai_compat import OpenAICompatBackend
from ehrlib.llm.phi import classify_endpoint
from ehrlib.llm.records import GenerationConfig, Message, ToolSpec

__all__ = ["CheckReport", "check_llm", "ping_llm", "SAMPLE_MESSAGES", "SAMPLE_TOOL", "SAMPLE_SCHEMA", "PING_MESSAGE"]

SAMPLE_MESSAGES = (Message("system", "You verify clinical notes against the patient's tables."),
                   Message("user", "ehrlib llm check: a sample first request (not sent)."))
SAMPLE_SCHEMA = {"type": "object", "properties": {"label": {"enum": ["consistent", "inconsistent"]}},
                 "required": ["label"]}
SAMPLE_TOOL = ToolSpec("Get_Item_Value_History", "Values of one item in a time window.",
                       {"type": "object", "properties": {"item_key": {"type": "string"}}, "required": ["item_key"]})
_GEMINI_DEV = "https://generativelanguage.googleapis.com"


@dataclass(frozen=True, slots=True)
class CheckReport:
    """What ``ehrlib llm check`` resolved for one backend configuration."""
    preset: str
    description: str
    client: str
    endpoint: str
    model: str
    safe_for_credentialed: bool
    safety_reason: str
    credentials: str
    generation: Mapping[str, Any]
    structured_output: str
    request: Mapping[str, Any]

    def render(self) -> str:
        """The report as text for the terminal."""
        safety = ("safe for credentialed data" if self.safe_for_credentialed
                  else "open-demo/synthetic data only") + f" ({self.safety_reason})"
        gen = ", ".join(f"{k}={v}" for k, v in self.generation.items() if v is not None) or "server defaults"
        return "\n".join([
            f"backend:     {self.preset} -> {self.client} client ({self.description})",
            f"endpoint:    {self.endpoint}",
            f"model:       {self.model}",
            f"safety:      {safety}",
            f"credentials: {self.credentials}",
            f"generation:  {gen}",
            f"structured:  {self.structured_output}",
            "first request (sample, redacted, not sent):",
            json.dumps(self.request, indent=2, sort_keys=False, default=str),
        ])


def _gemini_request(opts: Mapping[str, Any], config: GenerationConfig) -> tuple[str, str, dict[str, Any], str]:
    # deferred: google-genai is a heavy import; only a Gemini check needs it
    from google.genai import types

    from ehrlib.llm.gemini import DEVELOPER_API_VERSION, generation_config

    env_vertex = os.environ.get("GOOGLE_GENAI_USE_VERTEXAI", "").lower() in ("1", "true")
    vertex = bool(opts.get("vertexai", env_vertex))
    key = opts.get("api_key") or os.environ.get("GEMINI_API_KEY") or os.environ.get("GOOGLE_API_KEY")
    if vertex:
        project = opts.get("project") or os.environ.get("GOOGLE_CLOUD_PROJECT") or "<GOOGLE_CLOUD_PROJECT unset>"
        location = opts.get("location") or os.environ.get("GOOGLE_CLOUD_LOCATION") or "us-central1"
        host = "https://aiplatform.googleapis.com" if location == "global" else \
            f"https://{location}-aiplatform.googleapis.com"
        base = opts.get("base_url") or host
        url = (f"{base}/{opts.get('api_version') or 'v1beta1'}/projects/{project}/locations/{location}"
               f"/publishers/google/models/{config.model}:generateContent")
        creds = ("service account " + os.environ["GOOGLE_APPLICATION_CREDENTIALS"]
                 if os.environ.get("GOOGLE_APPLICATION_CREDENTIALS") else
                 "application-default credentials (gcloud auth application-default login)")
    else:
        base = opts.get("base_url") or _GEMINI_DEV
        url = f"{base}/{opts.get('api_version') or DEVELOPER_API_VERSION}/models/{config.model}:generateContent"
        creds = "API key from " + ("settings" if opts.get("api_key") else
                                   "GEMINI_API_KEY/GOOGLE_API_KEY") if key else "MISSING (set GEMINI_API_KEY)"
    cfg = generation_config(types, config.replace(response_schema=SAMPLE_SCHEMA), None, SAMPLE_MESSAGES[0].text)
    body = {"contents": [{"role": "user", "parts": [{"text": SAMPLE_MESSAGES[1].text}]}],
            "config": json.loads(cfg.model_dump_json(exclude_none=True))}
    headers = {"x-goog-api-key": "***"} if key and not vertex else {"Authorization": "Bearer ***"}
    return base, url, {"method": "POST", "url": url, "headers": headers, "body": body}, creds


def check_llm(backend: str, settings: Mapping[str, Any]) -> CheckReport:
    """Resolve `backend` + `settings` like `make_client` and describe the first request."""
    settings = dict(settings)
    name, preset = check_settings(backend, settings)
    config = _generation_config(name, preset, settings)
    safe_hosts = tuple(settings.get("safe_hosts") or ())
    generation = {k: getattr(config, k) for k in ("temperature", "top_p", "max_tokens", "seed", "thinking_budget")}
    if preset.client == "openai":
        opts = backend_options(name, preset, settings)
        key_source = opts.pop("key_source", None)
        impl = OpenAICompatBackend(**opts)
        endpoint = impl.endpoint
        structured = impl.structured_mode + (" (auto: steps down to json_object, then JSON asked in the prompt, "
                                             "on the server's first refusal)" if impl.structured_auto else "")
        request = {"method": "POST", "url": impl.url, "params": dict(impl._params), "headers": impl.redacted_headers(),
                   "body": impl.build_request(SAMPLE_MESSAGES, [SAMPLE_TOOL], config.replace(
                       response_schema=SAMPLE_SCHEMA))}
        local = classify_endpoint(endpoint).reason in ("a server on this machine",
                                                       "a loopback or private network address")
        credentials = f"API key from {key_source}" if key_source else (
            "none (fine for a local server)" if local else
            f"MISSING: set {' or '.join(preset.key_env) or 'llm.api_key'} (or llm.api_key_env)")
        generation[impl.max_tokens_param] = generation.pop("max_tokens")
    elif preset.client == "gemini":
        opts = backend_options(name, preset, settings)
        # deferred: google-genai is a heavy import; only a Gemini check needs it
        from ehrlib.llm.gemini import settings_problem

        problem = settings_problem(opts)
        if problem:  # the run would stop on it: so does the check
            raise ConfigError(f"{name}: {problem}")
        endpoint, _url, request, credentials = _gemini_request(opts, config)
        structured = "response_json_schema"
    else:
        endpoint, request, credentials, structured = "scripted (in-process)", {}, "none", "n/a"
    verdict = classify_endpoint(endpoint, safe_hosts=safe_hosts)
    return CheckReport(name, preset.description, preset.client, endpoint, config.model, verdict.safe,
                       verdict.reason, credentials, generation, structured, request)


def check_run_params(params: Any) -> CheckReport | None:
    """The report for a run's params (a `RunParams` or a params mapping as in a YAML file):
    its `llm:` block and the run-level backend/model/temperature; None when the run uses no
    LLM (the offline backend).
    """
    if isinstance(params, Mapping):
        block = dict(params.get("llm") or {})
        backend = params.get("backend") if params.get("backend") not in (None, "offline") else block.get("backend")
        backend = backend or params.get("backend") or "offline"
        model, temperature = params.get("model"), params.get("temperature")
    else:
        block = dict(params.backend_options.get("llm") or {})
        backend, model, temperature = params.backend, params.model, params.temperature
    if backend in ("offline", "oracle"):
        return None
    block.pop("backend", None)
    if model:
        block["model"] = model
    if temperature is not None:
        block.setdefault("temperature", temperature)
    if backend == "scripted":
        raise ConfigError("the scripted backend replays canned replies (tests only); nothing to check")
    urls = block.get("base_url")
    if isinstance(urls, (list, tuple)):  # several endpoints (spread over Ray workers): check each, report the first
        if not urls:
            raise ConfigError("llm.base_url is an empty list")
        reports = [check_llm(str(backend), {**block, "base_url": u}) for u in urls]
        return reports[0]
    return check_llm(str(backend), block)


#: the one request ``--ping`` sends (fixed text: never data)
PING_MESSAGE = Message("user", "Reply with the single word OK.")


@dataclass(frozen=True, slots=True)
class PingReport:
    """What one minimal request to an endpoint showed."""
    endpoint: str
    model_asked: str
    model_served: str | None
    latency_ms: float
    reply: str

    def render(self) -> str:
        """The ping result as text for the terminal."""
        served = self.model_served or "(the reply names no model)"
        return "\n".join([f"ping:        {self.endpoint} reachable, authentication accepted "
                          f"({self.latency_ms:.0f} ms)",
                          f"served:      {served} (asked for {self.model_asked})",
                          f"reply:       {self.reply[:80]!r}"])


def ping_llm(backend: str, settings: Mapping[str, Any], *, timeout_s: float = 20.0) -> PingReport:
    """Send PING_MESSAGE once (no cache, no retries); raise a one-line error saying whether
    the endpoint was unreachable, refused the credentials, or refused the request.
    """
    # deferred: the client stack is needed only when a ping is asked for
    import time

    from ehrlib.errors import RunError
    from ehrlib.llm.client import run_sync
    from ehrlib.llm.errors import LLMCallError
    from ehrlib.llm.factory import make_client

    block = {k: v for k, v in settings.items() if k not in ("cache", "requests_per_minute", "tokens_per_minute")}
    client = make_client(backend, **block, timeout_s=timeout_s)
    impl = client.backend_impl
    config = client.config.replace(max_tokens=max(16, min(client.config.max_tokens or 64, 64)), response_schema=None)
    start = time.perf_counter()
    try:
        reply = run_sync(impl.send((PING_MESSAGE,), None, config, timeout_s))
    except LLMCallError as exc:
        what = ("unreachable" if exc.kind == "unreachable" else
                "authentication refused" if exc.kind == "auth" or exc.status in (401, 403) else
                "reachable, but the request was refused")
        raise RunError(f"ping {impl.endpoint}: {what}: {exc}") from None
    raw = reply.raw or {}
    served = raw.get("model") or raw.get("model_version") or raw.get("modelVersion")
    return PingReport(impl.endpoint, config.model, str(served) if served else None,
                      (time.perf_counter() - start) * 1000.0, reply.text.strip())
