"""The OpenAI-compatible backend end to end against a local /v1/chat/completions server."""
from __future__ import annotations

import json
import os

import pytest

from ehrlib.errors import ConfigError
from ehrlib.llm import LLMCallError, make_client, run_tool_loop_sync, system, user
from ehrlib.llm.fakes import FakeOpenAIServer, openai_error, openai_text, openai_tool_calls

_ENV = ("EHRLIB_OPENAI_BASE_URL", "EHRLIB_OPENAI_API_KEY", "EHRLIB_OPENAI_MODEL", "EHRLIB_PHI_SAFE_HOSTS")


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch):
    for name in _ENV:
        monkeypatch.delenv(name, raising=False)
    with FakeOpenAIServer() as srv:
        yield srv


def fast_client(srv: FakeOpenAIServer, **settings):
    base = dict(model="Qwen/Qwen3-32B", base_url=srv.url + "/v1", api_key="sk-local", timeout_s=5,
                retry_initial_s=0.01, retry_jitter_s=0.0, max_retries=2)
    return make_client("openai", **{**base, **settings})


def lexical_search(query: str, top_k: int = 3) -> dict:
    """Find table items whose label is lexically close to the query.

    Args:
        query: Entity text from the note.
        top_k: How many items to return.
    """
    return {"rows": [{"itemid": 211, "label": "Heart Rate"}][:top_k]}


def test_tool_calls_then_text_with_paper_defaults(server: FakeOpenAIServer) -> None:
    server.add(openai_tool_calls(("lexical_search", {"query": "HR"})),
               openai_text("Heart Rate is item 211.", prompt_tokens=40, completion_tokens=12))
    client = fast_client(server)
    result = run_tool_loop_sync(client, [system("sys"), user("find HR")], {"lexical_search": lexical_search})
    assert result.ok and result.text == "Heart Rate is item 211."
    assert result.trace[0].args == {"query": "HR"} and result.trace[0].n_rows == 1

    first, second = server.requests
    assert first.path == "/v1/chat/completions"
    assert first.headers["Authorization"] == "Bearer sk-local"
    body = first.body
    # Paper settings for open models: temperature 0.5, top-p 0.95, 2048 max tokens.
    assert (body["temperature"], body["top_p"], body["max_tokens"]) == (0.5, 0.95, 2048)
    assert body["model"] == "Qwen/Qwen3-32B" and body["tool_choice"] == "auto"
    assert body["tools"][0]["function"]["name"] == "lexical_search"
    assert body["tools"][0]["function"]["parameters"]["required"] == ["query"]
    assert body["messages"] == [{"role": "system", "content": "sys"}, {"role": "user", "content": "find HR"}]
    assistant, tool = second.body["messages"][2:]
    assert assistant["tool_calls"][0]["id"] == "call_0"
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {"query": "HR"}
    assert tool["role"] == "tool" and tool["tool_call_id"] == "call_0" and "Heart Rate" in tool["content"]
    # Local models cost 0 but their tokens are counted.
    totals = client.ledger.totals()
    assert totals["calls"] == 2 and totals["input_tokens"] == 50 and totals["cost_usd"] == 0.0


def test_malformed_arguments_get_one_repair(server: FakeOpenAIServer) -> None:
    server.add(openai_tool_calls(("lexical_search", '{"query": "HR"')),  # truncated JSON
               openai_tool_calls(("lexical_search", {"query": "HR"})),
               openai_text("done"))
    result = run_tool_loop_sync(fast_client(server), [user("x")], {"lexical_search": lexical_search})
    assert result.ok and result.text == "done"
    assert "not valid JSON" in result.trace[0].error and result.trace[1].error is None
    assert "not valid JSON" in server.requests[1].body["messages"][-1]["content"]


def test_second_malformed_turn_is_a_recorded_failure(server: FakeOpenAIServer) -> None:
    server.add(openai_tool_calls(("lexical_search", {"top_k": "three"})),
               openai_tool_calls(("nope", {})))
    result = run_tool_loop_sync(fast_client(server), [user("x")], {"lexical_search": lexical_search})
    assert not result.ok and result.failure.kind == "malformed"
    assert "unknown tool 'nope'" in result.failure.message
    assert "'query' is a required property" in result.trace[0].error
    assert server.request_count == 2


def test_429_with_retry_after_then_success(server: FakeOpenAIServer) -> None:
    server.add(openai_error(429, "slow down", headers={"Retry-After": "0.05"}), openai_text("ok"))
    client = fast_client(server)
    assert client.generate_sync([user("hi")]).text == "ok"
    assert server.request_count == 2 and client.retries == 1


def test_500_exhausts_retries(server: FakeOpenAIServer) -> None:
    server.add(*[openai_error(503, "overloaded")] * 2)
    client = fast_client(server, max_retries=1)
    with pytest.raises(LLMCallError, match="after 2 attempts"):
        client.generate_sync([user("hi")])
    assert server.request_count == 2


def test_timeout_then_success(server: FakeOpenAIServer) -> None:
    server.add(openai_text("late", delay_s=2.0), openai_text("fast"))
    client = fast_client(server, timeout_s=0.5)
    assert client.generate_sync([user("hi")]).text == "fast"
    assert server.request_count == 2


def test_azure_style_gpt5_settings(server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "azure-secret")
    server.add(openai_text("Result: Correct", prompt_tokens=1000, completion_tokens=300))
    server.requests.clear()
    client = make_client(
        "openai", model="gpt-5", base_url=server.url + "/v1", api_key_env="AZURE_OPENAI_API_KEY",
        auth_header="api-key", max_tokens_param="max_completion_tokens", temperature=None, top_p=None,
        max_tokens=4096, extra_body={"reasoning_effort": "medium"}, timeout_s=5,
    )
    reply = client.generate_sync([user("judge")])
    req = server.requests[0]
    assert req.headers["api-key"] == "azure-secret" and "Authorization" not in req.headers
    assert "temperature" not in req.body and "top_p" not in req.body and "max_tokens" not in req.body
    assert req.body["max_completion_tokens"] == 4096 and req.body["reasoning_effort"] == "medium"
    assert reply.text == "Result: Correct"
    assert client.ledger.totals()["cost_usd"] == pytest.approx((1000 * 1.25 + 300 * 10.0) / 1e6)


def test_inline_think_block_and_reasoning_tokens(server: FakeOpenAIServer) -> None:
    from ehrlib.llm.fakes import FakeReply

    body = {"choices": [{"message": {"role": "assistant", "content": "<think>hmm</think>\n{\"a\": 1}"},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 30,
                      "completion_tokens_details": {"reasoning_tokens": 20}}}
    server.add(FakeReply(200, body))
    reply = fast_client(server).generate_sync([user("x")])
    assert reply.text == '{"a": 1}'
    assert (reply.usage.output_tokens, reply.usage.thinking_tokens) == (10, 20)


def test_structured_output_request(server: FakeOpenAIServer) -> None:
    from ehrlib.llm import generate_json, run_sync

    schema = {"type": "object", "properties": {"answer": {"enum": ["Yes", "No"]}}, "required": ["answer"]}
    server.add(openai_text("Answer: maybe"), openai_text('```json\n{"answer": "No"}\n```'))
    result = run_sync(generate_json(fast_client(server), [user("ED?")], schema=schema))
    assert result.ok and result.value == {"answer": "No"} and result.attempts == 2
    assert server.requests[0].body["response_format"]["json_schema"]["schema"] == schema
    assert "no JSON value found" in server.requests[1].body["messages"][-1]["content"]


def test_missing_base_url_is_config_error(server: FakeOpenAIServer) -> None:
    with pytest.raises(ConfigError, match="EHRLIB_OPENAI_BASE_URL"):
        make_client("openai", model="m")


def test_local_alias_presets_port(server: FakeOpenAIServer) -> None:
    client = make_client("ollama", model="qwen3:32b")
    assert client.manifest()["endpoint"] == "http://localhost:11434/v1"
    assert client.backend == "openai"


@pytest.mark.live
@pytest.mark.skipif(not (os.environ.get("EHRLIB_OPENAI_BASE_URL") and os.environ.get("EHRLIB_OPENAI_MODEL")),
                    reason="EHRLIB_OPENAI_BASE_URL / EHRLIB_OPENAI_MODEL not set")
def test_live_openai_compatible_tool_loop() -> None:
    client = make_client("openai", timeout_s=300, source_kind="synthetic")
    result = run_tool_loop_sync(
        client, [user("Call lexical_search with query 'HR', then reply with the itemid you found.")],
        {"lexical_search": lexical_search}, max_steps=3,
    )
    assert result.ok, result.failure
    assert any(r.tool == "lexical_search" for r in result.trace) and "211" in result.text


def test_assistant_turns_never_send_null_content(server: FakeOpenAIServer) -> None:
    # the strict fake refuses null content like llama-cpp-python (HTTP 500, validation message)
    server.add(openai_tool_calls(("lexical_search", {"query": "HR"})), openai_text("done"))
    result = run_tool_loop_sync(fast_client(server), [user("find HR")], {"lexical_search": lexical_search})
    assert result.ok and not server.refused
    assistant = server.requests[1].body["messages"][1]
    assert assistant["content"] == "" and assistant["tool_calls"]


def test_strict_fake_refuses_null_content_like_the_real_server(server: FakeOpenAIServer) -> None:
    import httpx

    resp = httpx.post(server.url + "/v1/chat/completions", json={
        "model": "m", "messages": [{"role": "user", "content": "x"}, {"role": "assistant", "content": None}]})
    assert resp.status_code == 500 and "Input should be a valid string" in resp.json()["error"]["message"]


def test_structured_output_steps_down_once_per_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    from ehrlib.llm import generate_json, run_sync

    for name in _ENV:
        monkeypatch.delenv(name, raising=False)
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    with FakeOpenAIServer(reject_json_schema=True) as srv:
        srv.add(openai_text('{"a": 1}'), openai_text('{"a": 2}'))
        client = fast_client(srv)
        first = run_sync(generate_json(client, [user("give a")], schema=schema))
        second = run_sync(generate_json(client, [user("give a again")], schema=schema))
        assert first.ok and second.ok and (first.value, second.value) == ({"a": 1}, {"a": 2})
        # one refused json_schema request, then json_object for this call and every later one
        assert len(srv.refused) == 1 and srv.request_count == 3
        assert [r.body["response_format"]["type"] for r in srv.requests] == ["json_schema", "json_object",
                                                                             "json_object"]
        assert "JSON Schema" in srv.requests[1].body["messages"][-1]["content"]
        manifest = client.manifest()
        assert manifest["structured_output"] == "json_object" and client.retries == 0
        assert manifest["structured_output_fallbacks"] == ["json_schema -> json_object: HTTP 500"]
    with FakeOpenAIServer(reject_json_schema=True, reject_json_object=True) as srv:
        srv.add(openai_text('{"a": 3}'))
        client = fast_client(srv)
        assert run_sync(generate_json(client, [user("a?")], schema=schema)).value == {"a": 3}
        assert "response_format" not in srv.requests[-1].body and client.manifest()["structured_output"] == "text"


def test_json_schema_refusal_without_auto_says_what_to_do(monkeypatch: pytest.MonkeyPatch) -> None:
    from ehrlib.llm import generate_json, run_sync

    for name in _ENV:
        monkeypatch.delenv(name, raising=False)
    with FakeOpenAIServer(reject_json_schema=True) as srv:
        client = fast_client(srv, structured_output="json_schema", max_retries=4)
        res = run_sync(generate_json(client, [user("a?")], schema={"type": "object"}))
        assert not res.ok and "structured_output: false" in res.error
        assert srv.request_count == 2  # the identical 500 is not retried five times


def test_length_finish_is_truncation_with_one_larger_retry(server: FakeOpenAIServer) -> None:
    from ehrlib.llm import generate_json, run_sync

    server.add(openai_text('{"anch', finish_reason="length"), openai_text('{"a": 1}'))
    client = fast_client(server)
    res = run_sync(generate_json(client, [user("x")], schema={"type": "object"}))
    assert res.ok and [r.body["max_tokens"] for r in server.requests] == [2048, 4096]
    assert client.manifest()["truncation_retries"] == 1

    server.add(openai_text('{"a', finish_reason="length"), openai_text('{"a": [', finish_reason="length"))
    res = run_sync(generate_json(client, [user("y")], schema={"type": "object"}))
    assert not res.ok and res.failure_kind == "truncated" and res.attempts == 1
    assert "cut off at the token limit (max_tokens=4096" in res.error and "required property" not in res.error
    assert client.ledger.failure_summary()["by_kind"] == {"truncated": 1}


def test_4xx_is_not_retried(server: FakeOpenAIServer) -> None:
    server.add(openai_error(400, "context length exceeded"), openai_text("never"))
    client = fast_client(server, max_retries=4)
    with pytest.raises(LLMCallError) as info:
        client.generate_sync([user("hi")])
    assert info.value.kind == "rejected" and server.request_count == 1


def test_tool_choice_setting_and_a_server_refusing_required(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _ENV:
        monkeypatch.delenv(name, raising=False)
    with FakeOpenAIServer(reject_required_tool_choice=True) as srv:
        srv.add(openai_text("done"))
        client = fast_client(srv, tool_choice="required", max_retries=3)
        result = run_tool_loop_sync(client, [user("find HR")], {"lexical_search": lexical_search})
        # llama-cpp-python's chatml-function-calling answers an empty 500: not retried to the limit
        assert not result.ok and result.failure.kind == "call_error" and srv.request_count == 2
        client = fast_client(srv, tool_choice=None)
        result = run_tool_loop_sync(client, [user("find HR")], {"lexical_search": lexical_search})
        assert result.ok and "tool_choice" not in srv.requests[-1].body
    with pytest.raises(ConfigError, match="tool_choice"):
        fast_client(srv, tool_choice="sometimes")
