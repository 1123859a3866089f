"""Tool loop, JSON replies, tool specs, usage/cost and the factory, on the scripted backend."""
from __future__ import annotations

import asyncio
from typing import Literal

import pytest

from ehrlib.errors import ConfigError, DataError
from ehrlib.llm import (
    CallUsage,
    Client,
    GenerationConfig,
    LLMCallError,
    LLMClient,
    LLMResponse,
    MalformedReply,
    Message,
    PriceTable,
    RetryPolicy,
    ToolCall,
    UsageLedger,
    client_from_params,
    generate_json,
    make_client,
    parse_json_reply,
    run_sync,
    run_tool_loop,
    run_tool_loop_sync,
    tool_spec_from_function,
    user,
)
from ehrlib.llm.loop import BUDGET_MESSAGE
from ehrlib.llm.scripted import REPORTED_RESULT_ENV, ScriptedBackend


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(REPORTED_RESULT_ENV, raising=False)


def get_item_value_history(item: str, comparison: Literal["more", "less", "between"] = "more",
                           threshold: float | None = None, tags: list[str] | None = None) -> dict:
    """Values of one item over time, optionally filtered.

    Use it after the item label is known.

    Args:
        item: Item label as in the tables.
        comparison: How to compare with the threshold.
        threshold: The value to compare with; null for no filter.
        tags: Extra labels,
            continued on a second line.

    Returns:
        Rows with row ids.
    """
    if item == "missing":
        raise DataError("no such item: missing")
    if item == "bug":
        raise ZeroDivisionError("a bug in the tool")
    return {"rows": [{"row_id": 1, "value": 120.0}]}


def scripted(*replies, **settings) -> Client:
    return make_client("scripted", replies=list(replies), **settings)


TOOLS = {"get_item_value_history": get_item_value_history}


def test_tool_spec_from_function() -> None:
    spec = tool_spec_from_function(get_item_value_history)
    assert spec.name == "get_item_value_history"
    assert spec.description.startswith("Values of one item over time")
    assert "Returns:" in spec.description and "Args" not in spec.description
    props = spec.parameters_json_schema["properties"]
    assert props["item"] == {"type": "string", "description": "Item label as in the tables."}
    assert props["comparison"]["enum"] == ["more", "less", "between"] and props["comparison"]["default"] == "more"
    assert props["threshold"]["type"] == ["number", "null"]
    assert props["tags"]["type"] == ["array", "null"] and props["tags"]["items"] == {"type": "string"}
    assert props["tags"]["description"] == "Extra labels, continued on a second line."
    assert spec.parameters_json_schema["required"] == ["item"]


def test_tool_spec_rejects_untyped_and_undocumented() -> None:
    def untyped(x):  # noqa: ANN001
        """Doc."""

    def nodoc(x: int) -> int:
        return x

    def weird(x: dict) -> None:
        """Doc."""

    for fn, msg in ((untyped, "no type annotation"), (nodoc, "docstring is required"), (weird, "unsupported")):
        with pytest.raises(ConfigError, match=msg):
            tool_spec_from_function(fn)


def test_loop_traces_calls_and_sends_expected_tool_errors_back() -> None:
    client = scripted(
        [ToolCall("a", "get_item_value_history", {"item": "missing"}),
         ToolCall("b", "get_item_value_history", {"item": "HR", "comparison": "more", "threshold": 100})],
        "final answer",
    )
    result = run_tool_loop_sync(client, [user("q")], TOOLS, note_id="n7")
    assert result.ok and result.text == "final answer" and result.model_calls == 2
    missing, found = result.trace
    assert (missing.call_id, missing.error, missing.n_rows) == ("1.0", "DataError: no such item: missing", None)
    assert (found.call_id, found.error, found.n_rows) == ("1.1", None, 1)
    tool_msg = client.backend_impl.requests[1][0][-1]
    assert tool_msg.role == "tool" and tool_msg.tool_results[0].is_error
    assert tool_msg.tool_results[0].call_id == "a" and '"row_id": 1' in tool_msg.tool_results[1].content


def test_tool_bug_propagates() -> None:
    client = scripted(ToolCall("a", "get_item_value_history", {"item": "bug"}))
    with pytest.raises(ZeroDivisionError):
        run_tool_loop_sync(client, [user("q")], TOOLS)


@pytest.mark.parametrize("args,fragment", [
    ({"item": "HR", "comparison": "above"}, "is not one of"),
    ({"item": 5}, "is not of type 'string'"),
    ({"itme": "HR"}, "required property"),
])
def test_bad_arguments_repair_then_fail(args: dict, fragment: str) -> None:
    client = scripted(ToolCall("a", "get_item_value_history", args), ToolCall("b", "Get_Everything", {}))
    result = run_tool_loop_sync(client, [user("q")], TOOLS)
    assert not result.ok and result.failure.kind == "malformed"
    assert fragment in result.trace[0].error
    assert "unknown tool 'Get_Everything'" in result.failure.message


def test_extra_argument_is_caught_by_signature_binding() -> None:
    client = scripted(ToolCall("a", "get_item_value_history", {"item": "HR", "limit": 3}), "ok")
    result = run_tool_loop_sync(client, [user("q")], TOOLS)
    assert result.ok and "unexpected keyword argument 'limit'" in result.trace[0].error


def test_budget_forces_a_final_answer_without_tools() -> None:
    call = ToolCall("a", "get_item_value_history", {"item": "HR"})
    client = scripted(call, call, "answer from what I have")
    result = run_tool_loop_sync(client, [user("q")], TOOLS, max_steps=2)
    assert result.ok and result.text == "answer from what I have" and len(result.trace) == 2
    last_messages, last_tools, _ = client.backend_impl.requests[-1]
    assert last_tools == () and last_messages[-1].text == BUDGET_MESSAGE

    stubborn = scripted(call, call)
    failed = run_tool_loop_sync(stubborn, [user("q")], TOOLS, max_steps=1)
    assert failed.failure.kind == "max_steps"
    off = run_tool_loop_sync(scripted(call), [user("q")], TOOLS, max_steps=1, finalize_on_budget=False)
    assert off.failure.kind == "max_steps"


def test_final_schema_repair() -> None:
    schema = {"type": "object", "properties": {"label": {"enum": ["consistent", "inconsistent"]}},
              "required": ["label"]}
    ok = run_tool_loop_sync(scripted('label: "consistent"', '{"label": "consistent"}'),
                            [user("q")], TOOLS, final_schema=schema)
    assert ok.ok and ok.value == {"label": "consistent"} and ok.model_calls == 2
    bad = run_tool_loop_sync(scripted('{"label": "maybe"}', '{"label": "perhaps"}'),
                             [user("q")], TOOLS, final_schema=schema)
    assert not bad.ok and bad.failure.kind == "malformed" and "is not one of" in bad.failure.message


def test_call_error_is_recorded_not_raised() -> None:
    client = scripted(LLMCallError("HTTP 400 bad request", status=400))
    result = run_tool_loop_sync(client, [user("q")], TOOLS)
    assert result.failure.kind == "call_error" and "400" in result.failure.message
    assert client.ledger.totals()["failed_calls"] == 1


def test_retry_policy_uses_backoff_and_retry_after() -> None:
    delays: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        delays.append(seconds)

    backend = ScriptedBackend([LLMCallError("429", status=429, transient=True),
                               LLMCallError("503", status=503, transient=True, retry_after=7.0),
                               "ok"])
    client = Client(backend, GenerationConfig(model="m"), sleep=fake_sleep, seed=0,
                    retry=RetryPolicy(max_attempts=3, initial_s=1.0, exp_base=2.0, jitter_s=0.5))
    assert client.generate_sync([user("q")]).text == "ok"
    assert 1.0 <= delays[0] <= 1.5 and delays[1] == 7.0 and client.retries == 2


def test_concurrency_limit_is_enforced() -> None:
    active = peak = 0

    class SlowBackend(ScriptedBackend):
        async def send(self, messages, tools, config, timeout_s):  # noqa: ANN001
            nonlocal active, peak
            active += 1
            peak = max(peak, active)
            await asyncio.sleep(0.02)
            active -= 1
            return LLMResponse(text=messages[0].text)

    client = Client(SlowBackend([]), GenerationConfig(model="m"), max_concurrency=2)

    async def many() -> list[str]:
        replies = await asyncio.gather(*(client.generate([user(str(i))]) for i in range(8)))
        return [r.text for r in replies]

    assert run_sync(many()) == [str(i) for i in range(8)] and peak == 2


def test_sync_wrapper_works_inside_a_running_loop() -> None:
    client = scripted("inside")

    async def notebook_cell() -> str:
        return client.generate_sync([user("q")]).text  # as a Jupyter cell would call it

    assert asyncio.run(notebook_cell()) == "inside"


def test_parse_json_reply_variants() -> None:
    schema = {"type": "object", "required": ["a"]}
    assert parse_json_reply('```json\n{"a": 1}\n```') == {"a": 1}
    assert parse_json_reply('<think>{"a": "thought"}</think> Result: {"a": 2} done', schema) == {"a": 2}
    assert parse_json_reply('first {"b": 0} then {"a": 3}', schema) == {"a": 3}
    assert parse_json_reply("[1, 2]") == [1, 2]
    with pytest.raises(MalformedReply, match="no JSON value"):
        parse_json_reply("Reason: fine. Result: Correct")
    with pytest.raises(MalformedReply, match="'a' is a required property"):
        parse_json_reply('{"b": 1}', schema)


def test_generate_json_records_failure_after_one_repair() -> None:
    client = scripted("nope", "still nope")
    result = run_sync(generate_json(client, [user("q")], schema={"type": "object"}))
    assert not result.ok and result.failure_kind == "malformed" and result.attempts == 2
    repair = client.backend_impl.requests[1][0][-1]
    assert repair.role == "user" and "could not be used" in repair.text and '"type": "object"' in repair.text
    assert client.backend_impl.requests[0][2].response_schema == {"type": "object"}


@pytest.mark.parametrize(("text", "why"), [
    ("a: &a [1,1,1,1,1,1,1,1,1,1]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
     "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\nmodels: [*d,*d]\n", "refused"),
    ("- just\n- a list\n", "a mapping"),
    ("models: {x: {input: 1}}\n", "needs 'input' and 'output'"),
    ("models: [unclosed\n", "not valid YAML"),
])
def test_a_users_price_table_is_read_bounded(tmp_path, text, why) -> None:
    path = tmp_path / "prices.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=why):
        PriceTable.load(path)


def test_price_table_and_ledger_grouping() -> None:
    prices = PriceTable.load()
    assert prices.price_for("publishers/google/models/gemini-2.5-flash-001").output == 2.50
    assert prices.price_for("gpt-5-mini").input == 0.25 and prices.price_for("gpt-5").input == 1.25
    assert prices.cost("qwen3:32b", CallUsage(10**6, 10**6)) == 0.0
    assert prices.cost("unknown-model", CallUsage(1, 1)) is None
    pro = prices.price_for("gemini-2.5-pro")
    assert pro.cost(CallUsage(100_000, 1_000)) == pytest.approx((100_000 * 1.25 + 1_000 * 10) / 1e6)
    assert pro.cost(CallUsage(300_000, 1_000)) == pytest.approx((300_000 * 2.50 + 1_000 * 15) / 1e6)

    ledger = UsageLedger(prices)
    for note, stage in (("n1", "extract"), ("n1", "verify"), ("n2", "verify")):
        ledger.record(backend="gemini", model="gemini-2.5-flash", usage=CallUsage(1000, 100, 50), cached=False,
                      stage=stage, note_id=note)
    ledger.record(backend="gemini", model="gemini-2.5-flash", usage=CallUsage(1000, 100, 50), cached=True,
                  stage="verify", note_id="n2")
    per_note = {r["note_id"]: r for r in ledger.summary(by=("note_id",))}
    one_call = (1000 * 0.30 + 150 * 2.50) / 1e6
    assert per_note["n1"]["calls"] == 2 and per_note["n1"]["cost_usd"] == pytest.approx(2 * one_call)
    assert per_note["n2"]["cost_usd"] == pytest.approx(one_call)
    assert per_note["n2"]["list_cost_usd"] == pytest.approx(2 * one_call)
    assert ledger.totals()["calls"] == 4 and ledger.totals()["cached_calls"] == 1
    per = ledger.cost_per_note()
    assert per["notes"] == 2 and per["mean_cost_usd"] == pytest.approx(1.5 * one_call)
    assert per["mean_list_cost_usd"] == pytest.approx(2 * one_call)
    last = ledger.records()[-1].to_dict()
    assert last["cached"] and last["cost_usd"] == 0.0 and last["list_cost_usd"] == pytest.approx(one_call)
    with pytest.raises(ConfigError):
        ledger.summary(by=("colour",))


def test_unknown_model_cost_is_none_not_zero() -> None:
    ledger = UsageLedger()
    ledger.record(backend="openai", model="mystery-70b", usage=CallUsage(10, 10), cached=False)
    assert ledger.totals()["cost_usd"] is None


def test_factory_settings() -> None:
    client = client_from_params({"llm": {"backend": "scripted", "model": "x", "temperature": 0.2,
                                         "replies": ["r"]}})
    assert isinstance(client, LLMClient)
    assert client.config == GenerationConfig(model="x", temperature=0.2)
    with pytest.raises(ConfigError, match="unknown llm settings.*temprature"):
        make_client("scripted", temprature=0.2)
    with pytest.raises(ConfigError, match="unknown LLM backend"):
        make_client("offline")
    with pytest.raises(ConfigError, match="llm.backend is required"):
        client_from_params({"llm": {"model": "x"}})
    gem = make_client("gemini", api_key="k")
    # Gemini server defaults; the verdict's token log-probabilities asked for
    assert gem.config == GenerationConfig(model="gemini-2.5-flash", logprobs=True)
    assert make_client("gemini", api_key="k", logprobs=False).config.logprobs is False
    assert make_client("azure", base_url="https://x.openai.azure.com", api_key="k",
                       model="gpt-5-mini").config.logprobs is None  # reasoning models return none
    with pytest.raises(ConfigError, match="llm.logprobs must be true or false"):
        make_client("vllm", model="m", logprobs="yes")
    vllm = make_client("vllm", model="openai/gpt-oss-20b", temperature=None)
    assert (vllm.config.temperature, vllm.config.top_p, vllm.config.max_tokens) == (None, 0.95, 2048)
    with pytest.raises(ConfigError, match="llm.model is required"):
        make_client("openai", base_url="http://localhost:1/v1")


def test_scripted_refuses_reported_results(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="reported result"):
        make_client("scripted", replies=["x"], reported_result=True)
    monkeypatch.setenv(REPORTED_RESULT_ENV, "1")
    with pytest.raises(ConfigError, match="reported result"):
        make_client("scripted", replies=["x"])


def test_message_validation() -> None:
    with pytest.raises(ConfigError):
        Message("user", tool_calls=(ToolCall("a", "f"),))
    with pytest.raises(ConfigError):
        Message("robot", "x")  # type: ignore[arg-type]


def test_async_tool_is_awaited() -> None:
    async def async_lookup(item: str) -> str:
        """Async lookup.

        Args:
            item: Item label.
        """
        await asyncio.sleep(0)
        return f"found {item}"

    client = scripted(ToolCall("a", "async_lookup", {"item": "HR"}), "ok")
    result = run_sync(run_tool_loop(client, [user("q")], {"async_lookup": async_lookup}))
    assert result.ok and client.backend_impl.requests[1][0][-1].tool_results[0].content == "found HR"


def test_loop_refuses_response_schema_with_tools() -> None:
    cfg = GenerationConfig(model="scripted", response_schema={"type": "object"})
    with pytest.raises(ConfigError, match="final_schema"):
        run_tool_loop_sync(scripted("x"), [user("q")], TOOLS, config=cfg)
