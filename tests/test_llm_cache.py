"""Response cache: a rerun makes zero backend calls and gives identical outputs."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from ehrlib.llm import ResponseCache, make_client, run_tool_loop_sync, tool_spec_from_function, user
from ehrlib.llm.cache import cache_key
from ehrlib.llm.fakes import FakeGeminiServer, FakeOpenAIServer, gemini_function_calls, gemini_text, openai_text


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_API_KEY", "GEMINI_API_KEY", "EHRLIB_OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def item_count(item: str) -> dict:
    """Count rows of an item.

    Args:
        item: Item label.
    """
    return {"n_rows": len(item)}


def _experiment(srv: FakeGeminiServer, cache: Path):
    """A small 'experiment': one tool-loop note, fresh client each run (as a rerun would be)."""
    client = make_client("gemini", api_key="k", base_url=srv.url, cache=cache, timeout_s=5,
                         temperature=0.5, seed=3)
    result = run_tool_loop_sync(client, [user("how many HR rows?")], {"item_count": item_count},
                                stage="verify", note_id="n1")
    return client, result


def test_second_run_makes_zero_requests_and_identical_output(tmp_path: Path) -> None:
    cache = tmp_path / "llm_cache.sqlite"
    with FakeGeminiServer([gemini_function_calls(("item_count", {"item": "Heart Rate"})),
                           gemini_text("10 rows", input_tokens=30, output_tokens=3)]) as srv:
        client1, first = _experiment(srv, cache)
        assert srv.request_count == 2
        client2, second = _experiment(srv, cache)
        assert srv.request_count == 2  # the rerun never reached the server
    assert (second.text, second.trace[0].args, second.trace[0].n_rows) == (first.text, first.trace[0].args, 10)
    assert dataclasses.replace(second.usage, latency_ms=0) == dataclasses.replace(first.usage, latency_ms=0)
    assert client1.cache.stats()["misses"] == 2 and client1.cache.stats()["hits"] == 0
    assert client2.cache.stats()["hits"] == 2 and client2.cache.stats()["misses"] == 0
    assert client2.network_calls == 0
    totals = client2.ledger.totals()
    assert totals["cached_calls"] == 2 and totals["cost_usd"] == 0.0 and totals["list_cost_usd"] > 0
    assert client2.manifest()["cache"]["hits"] == 2
    assert all(r.latency_ms == 0.0 and r.cached for r in client2.ledger.records())


def test_changed_settings_or_salt_miss(tmp_path: Path) -> None:
    cache = tmp_path / "c.sqlite"
    with FakeOpenAIServer([openai_text("a"), openai_text("b"), openai_text("c"), openai_text("d")]) as srv:
        def ask(**settings):
            client = make_client("openai", model="m", base_url=srv.url + "/v1", cache=cache, **settings)
            return client.generate_sync([user("same prompt")]).text

        assert ask() == "a"
        assert ask() == "a" and srv.request_count == 1
        assert ask(temperature=0.7) == "b"
        assert ask(cache_salt="repeat-2") == "c"
        assert srv.request_count == 3
        # A different port (a restarted server) still hits: the endpoint is not part of the key.
    with FakeOpenAIServer() as other:
        client = make_client("openai", model="m", base_url=other.url + "/v1", cache=cache)
        assert client.generate_sync([user("same prompt")]).text == "a" and other.request_count == 0


def test_key_covers_tool_declarations() -> None:
    from ehrlib.llm import GenerationConfig

    cfg = GenerationConfig(model="m")
    spec = tool_spec_from_function(item_count)
    changed = dataclasses.replace(spec, description="Count rows of an item, differently.")
    msgs = [user("x")]
    keys = {cache_key("gemini", msgs, None, cfg), cache_key("gemini", msgs, [spec], cfg),
            cache_key("gemini", msgs, [changed], cfg), cache_key("openai", msgs, [spec], cfg)}
    assert len(keys) == 4
    assert cache_key("gemini", msgs, [spec], cfg) == cache_key("gemini", list(msgs), [spec], cfg)


def test_cache_file_survives_reopen(tmp_path: Path) -> None:
    from ehrlib.llm import CallUsage, LLMResponse, ToolCall

    path = tmp_path / "x" / "cache.sqlite"
    resp = LLMResponse("t", (ToolCall("1", "f", {"a": [1, 2]}, signature="c2ln"),), CallUsage(1, 2, 3, 4.0),
                       raw={"k": "v"}, finish_reason="STOP")
    first = ResponseCache(path)
    first.put("key", "gemini", "m", resp)
    first.close()
    again = ResponseCache(path)
    got = again.get("key")
    assert got == dataclasses.replace(resp, cached=True)
    assert again.get("other") is None and again.stats() == {"path": str(path), "hits": 1, "misses": 1, "writes": 0}
    assert len(again) == 1
