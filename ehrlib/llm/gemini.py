"""Gemini through the official google-genai client (Developer API or Vertex AI).

Facts checked in google-genai 3.6.1's source (`_api_client.py`, `models.py`):
- `HttpOptions.timeout` is in milliseconds (divided by 1000 for httpx); unset means
  no timeout at all, so we always set it.
- No retries unless `HttpOptions.retry_options` is given: we leave it unset and
  retry in `ehrlib.llm.client`, where retries are counted.
- Developer API requests go to `{base_url}/{version}/models/{model}:generateContent`;
  3.6 defaults `version` to "v1", ehrlib pins "v1beta" (see below) unless
  `api_version` or GOOGLE_GENAI_API_VERSION says otherwise; Vertex AI requests go to
  `{base_url}/v1beta1/projects/{p}/locations/{l}/publishers/google/models/{model}:generateContent`.
- HTTP errors raise `google.genai.errors.ClientError` (4xx) / `ServerError` (5xx),
  both `APIError` with `.code`; transport errors are `httpx2` exceptions
  (`httpx2.TimeoutException`, `httpx2.ConnectError`, ...) on the default httpx2
  transport, or aiohttp's when aiohttp is installed.
- We pass FunctionDeclarations, never Python callables, and also disable automatic
  function calling explicitly, so ehrlib runs (and traces) the tool loop.
"""
from __future__ import annotations

import base64
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ehrlib.errors import ConfigError
from ehrlib.llm import logprobs
from ehrlib.llm.errors import LLMCallError
from ehrlib.llm.records import CallUsage, GenerationConfig, LLMResponse, Message, ToolCall, ToolSpec

__all__ = ["GeminiBackend", "TRANSIENT_STATUS", "generation_config", "settings_problem"]

DEVELOPER_API_VERSION = "v1beta"
TRANSIENT_STATUS = frozenset({408, 429, 500, 502, 503, 504})


def _transport_error_types() -> tuple[type[BaseException], ...]:
    """Transport exceptions of every HTTP stack google-genai may use."""
    found: list[type[BaseException]] = []
    for module_name in ("httpx2", "httpx"):
        try:
            module = __import__(module_name)
        except ImportError:
            continue
        found += [module.TimeoutException, module.TransportError]
    try:
        # deferred: google-genai is a heavy import; only the Gemini backend needs it
        import aiohttp

        found.append(aiohttp.ClientError)
    except ImportError:
        pass
    return tuple(found)


def _enum_text(value: Any) -> str | None:
    """google-genai enums, or the raw string when the API sent a value the SDK does not know."""
    return None if value is None else str(getattr(value, "value", value))


class GeminiBackend:
    """Translate ehrlib records to google-genai types and back."""

    name = "gemini"

    def __init__(
        self,
        *,
        api_key: str | None = None,
        vertexai: bool | None = None,
        project: str | None = None,
        location: str | None = None,
        base_url: str | None = None,
        api_version: str | None = None,
        credentials: Any = None,
        timeout_s: float = 300.0,
    ) -> None:
        # deferred: google-genai is a heavy import; only the Gemini backend needs it
        from google import genai
        from google.auth.exceptions import DefaultCredentialsError
        from google.genai import types

        self._types = types

        def build(version: str | None) -> Any:
            options = types.HttpOptions(timeout=int(timeout_s * 1000), base_url=base_url, api_version=version)
            try:
                return genai.Client(api_key=api_key, vertexai=vertexai, project=project, location=location,
                                    credentials=credentials, http_options=options)
            except (ValueError, DefaultCredentialsError) as exc:  # missing key / no ADC for Vertex
                raise ConfigError(
                    f"cannot configure Gemini: {exc} (set GEMINI_API_KEY for the Developer API, or "
                    "GOOGLE_GENAI_USE_VERTEXAI=true with GOOGLE_CLOUD_PROJECT/GOOGLE_CLOUD_LOCATION "
                    "and application-default credentials for Vertex AI)"
                ) from exc

        # google-genai 3.6 defaults the Developer API to "v1"; Google's API-version page
        # documents function calling, systemInstruction and JSON-schema output for
        # "v1beta", so ehrlib pins v1beta unless told otherwise. Guess the mode the way
        # the SDK decides it (argument, then env), and rebuild if the guess was wrong.
        pin = api_version is None and not os.environ.get("GOOGLE_GENAI_API_VERSION")
        env_flag = os.environ.get("GOOGLE_GENAI_USE_ENTERPRISE", os.environ.get("GOOGLE_GENAI_USE_VERTEXAI", ""))
        guess_vertex = vertexai if vertexai is not None else env_flag.lower() in ("1", "true")
        self._client = build(DEVELOPER_API_VERSION if pin and not guess_vertex else api_version)
        if pin and bool(self._client._api_client.vertexai) != guess_vertex:
            self._client = build(None if self._client._api_client.vertexai else DEVELOPER_API_VERSION)
        api = self._client._api_client  # read-only: where requests really go
        self.vertexai = bool(getattr(api, "vertexai", False))
        self.endpoint = str(getattr(api._http_options, "base_url", None) or "unknown")
        self._transport_errors = _transport_error_types()
        #: why log-probabilities are no longer asked for (the model refused them), else None
        self.logprobs_refused: str | None = None

    def describe(self) -> dict[str, Any]:
        """Endpoint facts for the run manifest."""
        return {"endpoint": self.endpoint, "vertexai": self.vertexai, "logprobs_refused": self.logprobs_refused}

    # --- requests -----------------------------------------------------------------

    def _contents(self, messages: Sequence[Message]) -> tuple[list[Any], str | None]:
        t = self._types
        system_parts = [m.text for m in messages if m.role == "system"]
        contents = []
        for m in messages:
            if m.role == "system":
                continue
            if m.role == "user":
                contents.append(t.Content(role="user", parts=[t.Part(text=m.text)]))
            elif m.role == "assistant":
                parts = [t.Part(text=m.text)] if m.text else []
                for call in m.tool_calls:
                    parts.append(t.Part(
                        function_call=t.FunctionCall(id=call.id or None, name=call.name, args=dict(call.args)),
                        thought_signature=base64.b64decode(call.signature) if call.signature else None,
                    ))
                contents.append(t.Content(role="model", parts=parts))
            else:  # tool results go back as functionResponse parts of a user turn
                parts = [
                    t.Part(function_response=t.FunctionResponse(
                        id=r.call_id or None, name=r.name,
                        response={"error": r.content} if r.is_error else {"output": r.content},
                    ))
                    for r in m.tool_results
                ]
                contents.append(t.Content(role="user", parts=parts))
        return contents, ("\n\n".join(system_parts) if system_parts else None)

    def _config(self, config: GenerationConfig, tools: Sequence[ToolSpec] | None, system: str | None) -> Any:
        if config.logprobs and self.logprobs_refused is not None:
            config = config.replace(logprobs=None)
        return generation_config(self._types, config, tools, system)

    async def send(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec] | None,
        config: GenerationConfig,
        timeout_s: float,
    ) -> LLMResponse:
        """Send one request through google-genai, with automatic function calling off."""
        # deferred: google-genai is a heavy import; only the Gemini backend needs it
        from google.auth.exceptions import GoogleAuthError
        from google.genai import errors

        contents, system = self._contents(messages)
        gen_config = self._config(config, tools, system)
        gen_config.http_options = self._types.HttpOptions(timeout=int(timeout_s * 1000))
        try:
            resp = await self._client.aio.models.generate_content(
                model=config.model, contents=contents, config=gen_config
            )
        except GoogleAuthError as exc:  # no token: expired/revoked credentials, or the token server unreachable
            first = (str(exc).splitlines() or [""])[0][:300]
            raise LLMCallError(f"Gemini {self.endpoint}: cannot authenticate ({type(exc).__name__}: {first}); "
                               "renew the credentials (gcloud auth application-default login, or "
                               "GOOGLE_APPLICATION_CREDENTIALS)", kind="auth") from exc
        except errors.APIError as exc:
            code = int(exc.code) if exc.code else None
            if config.logprobs and self.logprobs_refused is None and logprobs.is_refusal(code, str(exc.message)):
                self.logprobs_refused = f"HTTP {code} {exc.status or ''}".strip()
                return await self.send(messages, tools, config, timeout_s)  # again, without them
            raise LLMCallError(
                f"Gemini HTTP {code} {exc.status or ''}: {exc.message or ''}".strip(),
                status=code, transient=code in TRANSIENT_STATUS,
            ) from exc
        except self._transport_errors as exc:
            unreachable = "Connect" in type(exc).__name__ or "ConnectionRefused" in repr(exc)
            raise LLMCallError(f"Gemini {self.endpoint}: {'cannot connect' if unreachable else 'transport error'} "
                               f"({type(exc).__name__}: {exc})", transient=True,
                               kind="unreachable" if unreachable else "transport") from exc
        except TimeoutError as exc:
            raise LLMCallError("Gemini request timed out", transient=True, kind="timeout") from exc
        try:
            return self._parse(resp)
        except (AttributeError, TypeError, ValueError, RecursionError) as exc:  # a shape the SDK let through
            raise LLMCallError(f"Gemini returned an unusable reply: {type(exc).__name__}: {exc}",
                               kind="bad_reply") from exc

    # --- responses ----------------------------------------------------------------

    def _parse(self, resp: Any) -> LLMResponse:
        text_parts: list[str] = []
        calls: list[ToolCall] = []
        finish = None
        candidates = resp.candidates or []
        if candidates:
            cand = candidates[0]
            finish = _enum_text(cand.finish_reason)
            for part in (cand.content.parts if cand.content and cand.content.parts else []):
                if part.function_call is not None:
                    fc = part.function_call
                    sig = base64.b64encode(part.thought_signature).decode() if part.thought_signature else None
                    calls.append(ToolCall(id=fc.id or "", name=fc.name or "", args=dict(fc.args or {}),
                                          signature=sig))
                elif part.text and not part.thought:
                    text_parts.append(part.text)
        elif resp.prompt_feedback is not None and resp.prompt_feedback.block_reason is not None:
            finish = f"BLOCKED:{_enum_text(resp.prompt_feedback.block_reason)}"
        um = resp.usage_metadata
        usage = CallUsage(
            input_tokens=(um.prompt_token_count or 0) if um else 0,
            output_tokens=(um.candidates_token_count or 0) if um else 0,
            thinking_tokens=(um.thoughts_token_count or 0) if um else 0,
        )
        raw = json.loads(resp.model_dump_json(
            exclude_none=True, exclude={"sdk_http_response", "automatic_function_calling_history"}
        ))
        return LLMResponse(text="".join(text_parts), tool_calls=tuple(calls), usage=usage,
                           raw=raw, finish_reason=finish)


def generation_config(t: Any, config: GenerationConfig, tools: Sequence[ToolSpec] | None, system: str | None) -> Any:
    """google-genai `GenerateContentConfig` for one call (`t` is `google.genai.types`)."""
    kwargs: dict[str, Any] = {
        "temperature": config.temperature,
        "top_p": config.top_p,
        "max_output_tokens": config.max_tokens,
        "seed": config.seed,
        "system_instruction": system,
        "automatic_function_calling": t.AutomaticFunctionCallingConfig(disable=True),
    }
    if config.logprobs:
        kwargs["response_logprobs"] = True
    if config.thinking_budget is not None:
        kwargs["thinking_config"] = t.ThinkingConfig(thinking_budget=config.thinking_budget)
    if config.response_schema is not None:
        kwargs["response_mime_type"] = "application/json"
        kwargs["response_json_schema"] = dict(config.response_schema)
    if tools:
        kwargs["tools"] = [t.Tool(function_declarations=[
            t.FunctionDeclaration(name=s.name, description=s.description,
                                  parameters_json_schema=dict(s.parameters_json_schema))
            for s in tools
        ])]
    return t.GenerateContentConfig(**kwargs)


def settings_problem(opts: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> str | None:
    """Why a Gemini configuration cannot work, found without the network (None when it may):
    the Developer API without a key; Vertex AI without a project, or without credentials
    (settings, GOOGLE_APPLICATION_CREDENTIALS, the gcloud application-default file, or a
    Google Cloud VM's metadata server named by GCE_METADATA_HOST).
    """
    env = os.environ if environ is None else environ
    vertex = opts.get("vertexai")
    if vertex is None:
        vertex = env.get("GOOGLE_GENAI_USE_VERTEXAI", "").lower() in ("1", "true")
    key = opts.get("api_key") or env.get("GEMINI_API_KEY") or env.get("GOOGLE_API_KEY")
    if not vertex:
        return None if key else ("Gemini Developer API: no API key (set GEMINI_API_KEY or llm.api_key; for "
                                 "Vertex AI use backend vertex)")
    if key:  # Vertex AI express mode: the key is the credential and names the project
        return None
    if not (opts.get("project") or env.get("GOOGLE_CLOUD_PROJECT")):
        return "Vertex AI: no Google Cloud project (set GOOGLE_CLOUD_PROJECT or llm.project)"
    adc = Path(env.get("CLOUDSDK_CONFIG") or Path(env.get("HOME") or Path.home()) / ".config" / "gcloud")
    sa = env.get("GOOGLE_APPLICATION_CREDENTIALS")
    if sa and not Path(sa).is_file():
        return f"Vertex AI: GOOGLE_APPLICATION_CREDENTIALS names {sa}, which is not a file"
    if opts.get("credentials") or sa or (adc / "application_default_credentials.json").is_file() \
            or env.get("GCE_METADATA_HOST"):
        return None
    return ("Vertex AI: no Google credentials (run `gcloud auth application-default login`, or set "
            "GOOGLE_APPLICATION_CREDENTIALS to a service-account key file)")


def gemini_env_summary() -> dict[str, bool]:
    """Which Gemini credentials the environment offers (for live-test skips and docs)."""
    return {
        "api_key": bool(os.environ.get("GEMINI_API_KEY") or os.environ.get("GOOGLE_API_KEY")),
        "vertexai": os.environ.get("GOOGLE_GENAI_USE_VERTEXAI", "").lower() in ("1", "true"),
    }
