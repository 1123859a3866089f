"""Requests- and tokens-per-minute limits, shared by every client of one endpoint and model."""
from __future__ import annotations

import pytest

from ehrlib.errors import ConfigError
from ehrlib.llm import make_client, run_sync, user
from ehrlib.llm.ratelimit import RateLimiter, shared_limiter


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_requests_per_minute_window():
    clock = Clock()
    lim = RateLimiter(requests_per_minute=2, clock=clock)
    assert lim.try_acquire(1)[1] is not None and lim.try_acquire(1)[1] is not None
    wait, entry = lim.try_acquire(1)
    assert entry is None and wait == pytest.approx(60.0)
    clock.t = 60.0
    assert lim.try_acquire(1)[1] is not None


def test_tokens_per_minute_uses_reported_usage():
    clock = Clock()
    lim = RateLimiter(tokens_per_minute=1000, clock=clock)
    first = lim.try_acquire(900)[1]
    clock.t = 10.0
    wait, _ = lim.try_acquire(200)
    assert wait == pytest.approx(50.0)  # the first call's tokens expire at t=60
    lim.settle(first, 300)  # the server reported fewer tokens than estimated
    assert lim.try_acquire(200)[1] is not None
    # a request larger than the whole budget waits for an empty window, never forever
    clock.t = 200.0
    assert lim.try_acquire(5000)[1] is not None


def test_acquire_sleeps_until_the_window_frees():
    clock = Clock()
    lim = RateLimiter(requests_per_minute=1, clock=clock)
    slept = []

    async def sleep(s):
        slept.append(s)
        clock.t += s

    async def two():
        await lim.acquire(1, sleep)
        await lim.acquire(1, sleep)

    run_sync(two())
    assert slept == [pytest.approx(60.0)] and lim.describe()["waited_s"] == pytest.approx(60.0)


def test_limits_must_be_positive():
    with pytest.raises(ConfigError):
        RateLimiter(requests_per_minute=0)


def test_clients_of_one_endpoint_share_a_limiter(monkeypatch):
    monkeypatch.delenv("EHRLIB_OPENAI_BASE_URL", raising=False)
    a = make_client("vllm", model="shared-m", requests_per_minute=30)
    b = make_client("vllm", model="shared-m", requests_per_minute=10, tokens_per_minute=5000)
    assert a.limiter is b.limiter and (a.limiter.rpm, a.limiter.tpm) == (10, 5000)
    assert make_client("vllm", model="other-m", requests_per_minute=5).limiter is not a.limiter
    assert shared_limiter(a.backend_impl.endpoint, "shared-m", None, None) is a.limiter
    assert a.manifest()["rate_limit"]["requests_per_minute"] == 10


def test_limiter_gates_real_calls(monkeypatch):
    from ehrlib.llm.fakes import FakeOpenAIServer, openai_text

    with FakeOpenAIServer() as srv:
        srv.add(openai_text("a", prompt_tokens=100, completion_tokens=20), openai_text("b"))
        client = make_client("openai", model="gated", base_url=srv.url + "/v1", requests_per_minute=1,
                             timeout_s=5)
        slept = []

        async def fake_sleep(s):
            slept.append(s)
            client.limiter._events.clear()  # as if a minute passed

        client._sleep = fake_sleep
        assert client.generate_sync([user("x")]).text == "a"
        assert client.limiter._events[0][1] == 120  # settled to the reported usage
        assert client.generate_sync([user("y")]).text == "b"
        assert len(slept) == 1 and slept[0] > 50
