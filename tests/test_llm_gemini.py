"""The gemini backend end to end: the real google-genai client against a local server.

The fake server speaks the Gemini REST wire format on 127.0.0.1 and answers only
the paths the real API serves, so these tests prove our request building, the tool
loop, retries, timeouts and response parsing on real client code.
"""
from __future__ import annotations

import os

import pytest

from ehrlib.errors import EhrlibError
from ehrlib.llm import (
    LLMCallError,
    Message,
    make_client,
    run_tool_loop_sync,
    system,
    tool_spec_from_function,
    user,
)
from ehrlib.llm.fakes import FakeGeminiServer, gemini_error, gemini_function_calls, gemini_text

_ENV = ("GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_ENTERPRISE", "GOOGLE_API_KEY", "GEMINI_API_KEY",
        "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION", "GOOGLE_GENAI_API_VERSION",
        "EHRLIB_PHI_SAFE_HOSTS", "EHRLIB_I_ACCEPT_SENDING_CREDENTIALED_DATA_TO_PUBLIC_APIS")


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def server(clean_env: None):
    with FakeGeminiServer() as srv:
        yield srv


def fast_client(srv: FakeGeminiServer, **settings):
    base = dict(api_key="test-key", base_url=srv.url, timeout_s=5, retry_initial_s=0.01,
                retry_jitter_s=0.0, max_retries=2)
    return make_client("gemini", **{**base, **settings})


def get_item_history(item: str, window: str = "admission") -> dict:
    """Return the charted values of one item.

    Args:
        item: Item label, e.g. "Heart Rate".
        window: Narrative time anchor.
    """
    values = {"Heart Rate": [88, 92]}.get(item)
    if values is None:
        raise EhrlibError(f"no item named {item!r}")
    return {"rows": [{"row_id": i, "value": v} for i, v in enumerate(values)]}


def test_function_call_then_text_runs_tool_loop_through_real_client(server: FakeGeminiServer) -> None:
    server.add(
        gemini_function_calls(("get_item_history", {"item": "Heart Rate"}), signature="c2lnLTE=",
                              input_tokens=100, output_tokens=7, thinking_tokens=40),
        gemini_text('{"label": "consistent"}', input_tokens=150, output_tokens=9),
    )
    client = fast_client(server, temperature=0.5, top_p=0.95, max_tokens=512, seed=7, thinking_budget=1024)
    traced = []
    result = run_tool_loop_sync(
        client, [system("You verify notes."), user("HR 88-92 on admission?")],
        {"get_item_history": get_item_history}, tracer=traced.append,
        final_schema={"type": "object", "required": ["label"]}, stage="verify", note_id="n1",
    )
    assert result.ok and result.value == {"label": "consistent"}
    assert [r.tool for r in result.trace] == ["get_item_history"] and traced == list(result.trace)
    assert result.trace[0].n_rows == 2 and result.trace[0].error is None
    assert result.usage.input_tokens == 250 and result.usage.thinking_tokens == 40

    assert server.request_count == 2
    first, second = server.requests
    assert first.path == "/v1beta/models/gemini-2.5-flash:generateContent"
    assert first.headers["x-goog-api-key"] == "test-key"
    body = first.body
    assert body["systemInstruction"]["parts"][0]["text"] == "You verify notes."
    assert body["contents"] == [{"role": "user", "parts": [{"text": "HR 88-92 on admission?"}]}]
    gen = body["generationConfig"]
    assert gen["temperature"] == 0.5 and gen["topP"] == 0.95 and gen["maxOutputTokens"] == 512
    assert gen["seed"] == 7
    # google-genai 3.6 sends thinkingConfig's inner key in snake case; proto JSON accepts both.
    assert gen["thinkingConfig"] in ({"thinking_budget": 1024}, {"thinkingBudget": 1024})
    decl = body["tools"][0]["functionDeclarations"][0]
    assert decl["name"] == "get_item_history"
    assert decl["description"].startswith("Return the charted values")
    schema = decl.get("parametersJsonSchema", decl.get("parameters_json_schema"))
    assert schema == tool_spec_from_function(get_item_history).parameters_json_schema
    # Second turn: the model's call (with its thought signature) and our function response.
    model_turn, tool_turn = second.body["contents"][1:]
    assert model_turn["role"] == "model"
    assert model_turn["parts"][0]["functionCall"] == {"name": "get_item_history", "args": {"item": "Heart Rate"}}
    assert model_turn["parts"][0]["thoughtSignature"] == "c2lnLTE="
    response = tool_turn["parts"][0]["functionResponse"]
    assert response["name"] == "get_item_history" and '"value": 92' in response["response"]["output"]

    by_stage = client.ledger.summary(by=("stage", "note_id"))
    assert by_stage[0]["stage"] == "verify" and by_stage[0]["calls"] == 2
    # gemini-2.5-flash: 0.30 in / 2.50 out per 1M; thinking billed as output.
    assert by_stage[0]["cost_usd"] == pytest.approx((250 * 0.30 + (16 + 40) * 2.50) / 1e6)


def test_unknown_function_goes_back_to_model_not_keyerror(server: FakeGeminiServer) -> None:
    server.add(gemini_function_calls(("Drop_Tables", {})), gemini_text("done"))
    result = run_tool_loop_sync(fast_client(server), [user("x")], {"get_item_history": get_item_history})
    assert result.ok and result.text == "done"
    assert result.trace[0].error.startswith("unknown tool 'Drop_Tables'")
    sent = server.requests[1].body["contents"][2]["parts"][0]["functionResponse"]
    assert "unknown tool" in sent["response"]["error"]


def test_429_then_success_is_retried(server: FakeGeminiServer) -> None:
    server.add(gemini_error(429, "RESOURCE_EXHAUSTED", "quota"), gemini_text("ok"))
    client = fast_client(server)
    reply = client.generate_sync([user("hi")])
    assert reply.text == "ok" and not reply.cached
    assert server.request_count == 2 and client.retries == 1
    assert client.ledger.records()[0].attempts == 2


def test_persistent_503_fails_after_max_attempts(server: FakeGeminiServer) -> None:
    server.add(*[gemini_error(503, "UNAVAILABLE", "overloaded")] * 3)
    client = fast_client(server, max_retries=2)
    with pytest.raises(LLMCallError, match="after 3 attempts") as info:
        client.generate_sync([user("hi")])
    assert info.value.status == 503 and info.value.transient
    assert server.request_count == 3 and client.ledger.totals()["failed_calls"] == 1


def test_identical_500_is_not_retried_to_the_limit(server: FakeGeminiServer) -> None:
    server.add(*[gemini_error(500, "INTERNAL")] * 5)
    client = fast_client(server, max_retries=4)
    with pytest.raises(LLMCallError, match="the same error twice") as info:
        client.generate_sync([user("hi")])
    assert info.value.kind == "server_error" and server.request_count == 2
    assert client.ledger.failure_summary()["by_kind"] == {"server_error": 1}


def test_400_is_not_retried(server: FakeGeminiServer) -> None:
    server.add(gemini_error(400, "INVALID_ARGUMENT", "bad schema"))
    client = fast_client(server)
    with pytest.raises(LLMCallError, match="400") as info:
        client.generate_sync([user("hi")])
    assert not info.value.transient and server.request_count == 1


def test_timeout_is_retried_then_succeeds(server: FakeGeminiServer) -> None:
    server.add(gemini_text("late", delay_s=2.0), gemini_text("fast"))
    client = fast_client(server, timeout_s=0.5)
    assert client.generate_sync([user("hi")]).text == "fast"
    assert server.request_count == 2 and client.retries == 1


def test_timeout_exhaustion_is_a_recorded_loop_failure(server: FakeGeminiServer) -> None:
    server.add(gemini_text("late", delay_s=1.5), gemini_text("late", delay_s=1.5))
    client = fast_client(server, timeout_s=0.4, max_retries=1)
    result = run_tool_loop_sync(client, [user("x")], {"get_item_history": get_item_history})
    assert not result.ok and result.failure.kind == "call_error"
    assert "timed out" in result.failure.message or "Timeout" in result.failure.message


def test_response_schema_is_sent_as_json_mode(server: FakeGeminiServer) -> None:
    from ehrlib.llm import generate_json

    schema = {"type": "object", "properties": {"label": {"enum": ["consistent", "inconsistent"]}},
              "required": ["label"]}
    server.add(gemini_text('{"label": "inconsistent"}'))
    client = fast_client(server)
    from ehrlib.llm import run_sync

    result = run_sync(generate_json(client, [user("label?")], schema=schema))
    assert result.ok and result.value == {"label": "inconsistent"}
    gen = server.requests[0].body["generationConfig"]
    assert gen["responseMimeType"] == "application/json"
    assert gen.get("responseJsonSchema", gen.get("response_json_schema")) == schema


def test_api_version_setting_is_honoured(server: FakeGeminiServer) -> None:
    server.add(gemini_text("v1 reply"))
    assert fast_client(server, api_version="v1").generate_sync([user("hi")]).text == "v1 reply"
    assert server.requests[0].path == "/v1/models/gemini-2.5-flash:generateContent"


def test_vertex_ai_path_and_bearer_token(server: FakeGeminiServer) -> None:
    from google.oauth2.credentials import Credentials

    server.add(gemini_text("from vertex"))
    client = make_client("gemini", vertexai=True, project="my-proj", location="europe-west4",
                         credentials=Credentials(token="tok"), base_url=server.url, timeout_s=5)
    assert client.generate_sync([user("hi")]).text == "from vertex"
    req = server.requests[0]
    assert req.path == ("/v1beta1/projects/my-proj/locations/europe-west4/publishers/google/"
                        "models/gemini-2.5-flash:generateContent")
    assert req.headers["Authorization"] == "Bearer tok"
    assert client.manifest()["vertexai"] is True


def test_blocked_prompt_gives_empty_text_and_reason(server: FakeGeminiServer) -> None:
    from ehrlib.llm.fakes import FakeReply

    server.add(FakeReply(200, {"promptFeedback": {"blockReason": "SAFETY"},
                               "usageMetadata": {"promptTokenCount": 3}}))
    reply = fast_client(server).generate_sync([Message("user", "x")])
    assert reply.text == "" and reply.finish_reason == "BLOCKED:SAFETY" and reply.usage.input_tokens == 3


def test_missing_credentials_is_a_clear_config_error(clean_env: None) -> None:
    with pytest.raises(EhrlibError, match="GEMINI_API_KEY"):
        make_client("gemini")


@pytest.mark.live
@pytest.mark.skipif(not (os.environ.get("GEMINI_API_KEY") or os.environ.get("GOOGLE_API_KEY")
                         or os.environ.get("GOOGLE_GENAI_USE_VERTEXAI")),
                    reason="no Gemini credentials (GEMINI_API_KEY / GOOGLE_API_KEY / GOOGLE_GENAI_USE_VERTEXAI)")
def test_live_gemini_tool_loop() -> None:
    model = os.environ.get("EHRLIB_LIVE_GEMINI_MODEL", "gemini-2.5-flash")
    client = make_client("gemini", model=model, timeout_s=120, source_kind="synthetic")
    result = run_tool_loop_sync(
        client,
        [user("Use get_item_history to look up 'Heart Rate', then reply with the largest value only.")],
        {"get_item_history": get_item_history}, max_steps=3,
    )
    assert result.ok, result.failure
    assert any(r.tool == "get_item_history" for r in result.trace)
    assert "92" in result.text
