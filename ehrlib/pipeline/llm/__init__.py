"""The LLM backend of every EHR-Inspector stage, and the CheckEHR baseline.

Mirrors :mod:`ehrlib.pipeline.offline`: importing this package registers the backends
``gemini``, ``openai`` and ``scripted`` (see :mod:`.register`). Modules:

- :mod:`.caller` — the client wrapper every stage asks through (usage, cost, repair);
- :mod:`.prompts` — the prompt files the backend renders, and their ids;
- :mod:`.stages` — stages 1-5 (segmentation, anchors, extraction, scope) and Semantic_Search;
- :mod:`.verify` — stage 6, the tool loop with the evidence guard;
- :mod:`.checkehr` — the CheckEHR baseline's extractor and SQL verifier;
- :mod:`.register` — the bundles and their registration.
"""
from __future__ import annotations

from ehrlib.pipeline.llm.caller import BoundedClient, LLMCaller, json_asker, make_llm_client
from ehrlib.pipeline.llm.register import LLM_BACKENDS, build_llm_stages
from ehrlib.pipeline.llm.stages import LLMSemanticRanker, scope_status
from ehrlib.pipeline.llm.verify import LLMVerifier, retrieval_covers

__all__ = ["BoundedClient", "LLMCaller", "LLMSemanticRanker", "LLMVerifier", "LLM_BACKENDS", "build_llm_stages",
           "json_asker", "make_llm_client", "retrieval_covers", "scope_status"]
