"""Known-answer tests of the validation cache rule."""
from __future__ import annotations

from verification_kit import WINDOW, FakeTools, assert_decided, entity, row, verify

from ehrlib.pipeline.records import CacheEntry, Verdict


def test_restated_claim_reuses_the_cached_verdict():
    first = entity("HR", "measurement", concept="heart_rate", value=75.0)
    cached = CacheEntry(first, Verdict("e0", "inconsistent", "contradiction", "HR: stated value 75 not found"),
                        window=WINDOW)
    tools = FakeTools({"chartevents:1": [row("2199-02-03", 75.0)]})
    v = verify(first, tools, cache=[cached])
    assert_decided(v, "cache.same_claim", "inconsistent", "contradiction")
    assert v.from_cache and v.reason.startswith("from the validation cache") and not tools.tracer.records


def test_a_different_claim_is_verified_afresh():
    first = entity("HR", "measurement", concept="heart_rate", value=75.0)
    other = entity("HR", "measurement", concept="heart_rate", value=90.0)
    cached = CacheEntry(first, Verdict("e0", "consistent", None, "HR 75 matches"), window=WINDOW)
    v = verify(other, FakeTools({"chartevents:1": [row("2199-02-03", 90.0)]}), cache=[cached])
    assert_decided(v, "numbers.value_in_window", "consistent")
