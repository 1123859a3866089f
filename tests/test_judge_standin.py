"""The offline stand-in judge: known answers of its word-overlap rule on rendered prompts."""
from __future__ import annotations

from ehrlib.corpus.records import GoldEntity, Judgement, Note, Prediction
from ehrlib.judge.llm_judge import judge_with_llm, parse_verdict, render_judge_prompt
from ehrlib.judge.standin import STANDIN_RULES, standin_client, standin_reply
from ehrlib.prompting import load_prompt

GOLD = GoldEntity("n1", "n1:e1", 10, "heart rate", "consistent", value="88")


def _prompt(mode: str, *preds: Prediction) -> str:
    return render_judge_prompt(load_prompt(f"judge_{mode}"), GOLD, preds, "nursing")


def _pred(line: int, entity: str, label: str = "consistent") -> Prediction:
    return Prediction("r", "n1", line, entity, label)


def test_same_statement_same_label_is_correct_and_names_the_prediction():
    reply = standin_reply(_prompt("harsh", _pred(3, "temp"), _pred(10, "Heart rate")), STANDIN_RULES["harsh"])
    assert parse_verdict(reply) == ("correct", 2)


def test_other_label_is_incorrect():
    reply = standin_reply(_prompt("lenient", _pred(10, "heart rate", "inconsistent")), STANDIN_RULES["lenient"])
    assert parse_verdict(reply) == ("incorrect", 1)


def test_harsh_asks_for_a_closer_line_and_more_overlap_than_lenient():
    far = _prompt("harsh", _pred(12, "heart rate"))
    assert parse_verdict(standin_reply(far, STANDIN_RULES["harsh"]))[0] == "incorrect"
    assert parse_verdict(standin_reply(far, STANDIN_RULES["lenient"]))[0] == "correct"
    loose = _prompt("harsh", _pred(10, "heart rate variability trend"))  # overlap 2/4
    assert parse_verdict(standin_reply(loose, STANDIN_RULES["harsh"]))[0] == "correct"
    looser = _prompt("harsh", _pred(10, "rate of infusion drip"))  # overlap 1/5
    assert parse_verdict(standin_reply(looser, STANDIN_RULES["harsh"]))[0] == "incorrect"
    assert parse_verdict(standin_reply(looser, STANDIN_RULES["lenient"]))[0] == "correct"


def test_stand_in_runs_through_the_real_judge_client_path():
    note = Note("n1", 1, 2, "nursing", "2150-01-01", "x\n" * 12)
    judgements, _ = judge_with_llm(standin_client("harsh"), [GOLD], [_pred(10, "HR heart rate")], [note],
                                   modes=("harsh",), progress=False)
    assert [(j.verdict, j.matched_prediction) for j in judgements] == [("correct", 0)]
    assert isinstance(judgements[0], Judgement) and judgements[0].judge == "standin-harsh"
