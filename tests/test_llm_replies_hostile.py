"""Model replies as untrusted data: every shape the OpenAI format allows is read, the rest is
a recorded failure (LLMCallError kind "bad_reply"), and NaN/Infinity/over-deep JSON never
passes the boundary."""
from __future__ import annotations

import json

import pytest

from ehrlib.errors import EhrlibError
from ehrlib.llm import LLMCallError, make_client, run_tool_loop_sync, safejson, user
from ehrlib.llm.fakes import FakeOpenAIServer, FakeReply, openai_text
from ehrlib.llm.openai_compat import parse_chat_completion
from ehrlib.llm.replies import parse_json_reply


def body(message=None, *, finish="stop", usage=None, **extra):
    choice = {"index": 0, "message": message if message is not None else {"role": "assistant", "content": "x"},
              "finish_reason": finish}
    return {"choices": [choice], "usage": usage if usage is not None else {"prompt_tokens": 3,
                                                                          "completion_tokens": 2}, **extra}


@pytest.mark.parametrize("content, text", [
    ("plain", "plain"),
    (None, ""),
    ([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}], "ab"),
    (["a", {"type": "text", "text": "b"}], "ab"),
    ([{"type": "refusal", "refusal": "no"}, {"type": "text", "text": "ok"}], "ok"),
    ([], ""),
])
def test_content_shapes(content, text):
    assert parse_chat_completion(body({"role": "assistant", "content": content})).text == text


@pytest.mark.parametrize("tool_calls, expect", [
    # one call sent as an object instead of a list
    ({"id": "a", "type": "function", "function": {"name": "f", "arguments": "{\"x\": 1}"}}, ({"x": 1}, None)),
    # arguments already an object (Ollama, some proxies)
    ([{"id": "a", "function": {"name": "f", "arguments": {"x": 2}}}], ({"x": 2}, None)),
    # numeric arguments
    ([{"id": "a", "function": {"name": "f", "arguments": 5}}], ({}, "got int")),
    ([{"id": "a", "function": {"name": "f", "arguments": "5"}}], ({}, "got int")),
    ([{"id": "a", "function": {"name": "f", "arguments": "[1, 2]"}}], ({}, "got list")),
    ([{"id": "a", "function": {"name": "f", "arguments": "{\"x\": NaN}"}}], ({}, "NaN is not a JSON number")),
    ([{"id": "a", "function": {"name": "f", "arguments": "{\"x\": -Infinity}"}}], ({}, "not a JSON number")),
    ([{"id": "a", "function": {"name": "f", "arguments": "[" * 5000 + "]" * 5000}}], ({}, "deeper")),
    ([{"id": "a", "function": {"name": "f", "arguments": "{\"x\": "}}], ({}, "not valid JSON")),
    (["not a call"], ({}, "not an object")),
    ([{"id": 7, "function": {"name": None, "arguments": ""}}], ({}, None)),
])
def test_tool_call_shapes(tool_calls, expect):
    resp = parse_chat_completion(body({"role": "assistant", "content": None, "tool_calls": tool_calls}))
    call = resp.tool_calls[0]
    args, error = expect
    assert dict(call.args) == args
    assert (call.parse_error is None) if error is None else (error in call.parse_error)
    assert isinstance(call.id, str) and isinstance(call.name, str)


def test_legacy_function_call_field():
    resp = parse_chat_completion(body({"role": "assistant", "content": None,
                                       "function_call": {"name": "f", "arguments": "{}"}}))
    assert resp.tool_calls[0].name == "f"


@pytest.mark.parametrize("usage, tokens", [
    ({"prompt_tokens": "12", "completion_tokens": 3.0}, (12, 3)),
    ({"prompt_tokens": "many", "completion_tokens": None}, (0, 0)),
    ({"prompt_tokens": -4, "completion_tokens": True}, (0, 0)),
    ("usage", (0, 0)),
    ({"prompt_tokens": 5, "completion_tokens": 9, "completion_tokens_details": "x"}, (5, 9)),
])
def test_usage_shapes(usage, tokens):
    u = parse_chat_completion(body(usage=usage)).usage
    assert (u.input_tokens, u.output_tokens) == tokens


@pytest.mark.parametrize("data", [
    [1, 2], "text", None, {"choices": [5]}, {"choices": [{"message": "hi"}]},
    {"choices": [{"message": {"content": 42}}]}, {"choices": [{"message": {"tool_calls": "f()"}}]},
    {"error": {"message": "boom"}}, {"choices": []}, {"choices": {"message": {"content": 1.5}}},
])
def test_unusable_bodies_are_bad_reply(data):
    with pytest.raises(LLMCallError) as info:
        parse_chat_completion(data)
    assert info.value.kind == "bad_reply"


def test_safejson_rejects_constants_and_depth():
    for text in ("NaN", "{\"a\": Infinity}", "[-Infinity]", "[" * 100 + "]" * 100):
        with pytest.raises(safejson.UnsafeJSON):
            safejson.loads(text)
    assert safejson.loads('{"s": "[[[[ NaN"}') == {"s": "[[[[ NaN"}
    assert safejson.value_problem({"a": [1.0, float("nan")]}) is not None
    assert safejson.value_problem({"a": [1.0, "NaN"]}) is None


def test_json_reply_with_nan_or_deep_nesting_is_malformed():
    schema = {"type": "object"}
    for text in ('{"label": NaN}', '{"a": ' * 60 + "1" + "}" * 60, '```json\n{"x": Infinity}\n```'):
        with pytest.raises(EhrlibError, match="no JSON value"):
            parse_json_reply(text, schema)


@pytest.fixture
def server(monkeypatch):
    for name in ("EHRLIB_OPENAI_BASE_URL", "EHRLIB_OPENAI_API_KEY", "EHRLIB_OPENAI_MODEL"):
        monkeypatch.delenv(name, raising=False)
    with FakeOpenAIServer() as srv:
        yield srv


def client_for(srv, **kw):
    return make_client("openai", model="m", base_url=srv.url + "/v1", timeout_s=5, retry_initial_s=0.01,
                       retry_jitter_s=0.0, max_retries=3, **kw)


def test_gzip_header_on_plain_body_is_a_failure_not_a_crash(server):
    server.add(FakeReply(200, body(), headers={"Content-Encoding": "gzip"}))
    with pytest.raises(LLMCallError) as info:
        client_for(server).generate_sync([user("hi")])
    assert info.value.kind == "bad_reply" and server.request_count == 1


def test_very_deep_or_nan_body_is_a_failure_not_a_crash(server):
    deep = b'{"choices": [{"message": {"content": "x"}}], "junk": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    nan = b'{"choices": [{"message": {"content": "x"}}], "usage": {"prompt_tokens": NaN}}'
    for raw in (deep, nan):
        server.add(FakeReply(200, {}, raw=raw), FakeReply(200, {}, raw=raw))
        with pytest.raises(LLMCallError) as info:
            client_for(server).generate_sync([user("hi")])
        assert info.value.kind == "bad_reply"
    assert server.request_count == 4  # the same bad body twice is not retried further


def test_nan_tool_arguments_go_back_as_malformed_and_never_into_the_trace(server, tmp_path):
    bad = body({"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "tool", "arguments": '{"x": NaN}'}}]},
        finish="tool_calls")
    server.add(FakeReply(200, bad), openai_text("done"))

    def tool(x: float) -> str:
        """A tool.

        Args:
            x: a number.
        """
        return "ok"

    cache = tmp_path / "c.sqlite"
    for _ in range(2):  # a resume: the bad turn was never cached, so the server is asked again
        result = run_tool_loop_sync(client_for(server, cache=str(cache)), [user("go")], {"tool": tool})
        assert result.ok and result.text == "done"
        rec = result.trace[0]
        assert rec.error and "NaN" in rec.error
        json.dumps([dict(rec.args)], allow_nan=False)  # what the record writer does
        server.add(FakeReply(200, bad))
    # the malformed turn went to the server twice; the good final answer came from the cache
    assert server.request_count == 3
    # the repair turn carried the call back with safe arguments and string content
    second = server.requests[1].body["messages"]
    assert all(isinstance(m["content"], str) for m in second)
