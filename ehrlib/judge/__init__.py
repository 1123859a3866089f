"""Judging predictions against gold labels: the deterministic matcher, harsh/lenient LLM
judges (paper Appendix F) and the per-note recall/precision/F1 of Section 5.2.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ehrlib.lazy import lazy_package

if TYPE_CHECKING:  # exports, imported on first use (lazy_package): importing the package stays cheap
    from ehrlib.judge.evaluate import (
        JUDGEMENTS_FILE,
        RunData,
        evaluate_run,
        judge_run,
        load_run,
        metric_tables,
        read_judgements,
        write_metric_tables,
    )
    from ehrlib.judge.llm_judge import judge_with_llm, parse_verdict, render_judge_prompt
    from ehrlib.judge.matcher import MatcherConfig, concept_families, judge_with_matcher, match_note, normalise
    from ehrlib.judge.metrics import (
        INCONSISTENCY_GROUPS,
        by_gold_group,
        by_note_type,
        inconsistency_group,
        judge_agreement,
        judgement_frame,
        note_scores,
        summarize,
    )
    from ehrlib.judge.review import review_agreement, review_sample, write_review_sheet

__all__ = [
    "JUDGEMENTS_FILE", "RunData", "evaluate_run", "judge_run", "load_run", "metric_tables", "read_judgements",
    "write_metric_tables", "judge_with_llm", "parse_verdict", "render_judge_prompt",
    "MatcherConfig", "concept_families", "judge_with_matcher", "match_note", "normalise",
    "INCONSISTENCY_GROUPS", "by_gold_group", "by_note_type", "inconsistency_group", "judge_agreement",
    "judgement_frame",
    "note_scores", "summarize", "review_agreement", "review_sample", "write_review_sheet",
]

lazy_package(__name__)
